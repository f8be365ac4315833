//! Output sizes and border padding with exactly TensorFlow's semantics.
//!
//! SAME: `out = ceil(in / s)`, `pad_total = max((out - 1) * s + f - in, 0)`,
//! `pad_before = pad_total / 2`, the extra row/column (odd total) goes
//! after (bottom/right). VALID: `out = (in - f) / s + 1`, no padding.
//! Explicit (a TFLite PAD folded into the convolution that reads it, or a
//! padding step of its own): the given rows and columns on each side,
//! `out = (in + before + after - f) / s + 1`.
//! Padded positions are never stored: kernels skip them (a sum treats
//! them as 0, a max ignores them, an average does not count them).

use crate::Error;

/// Border handling of a sliding-window layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Padding {
    /// Output size `ceil(in / s)`; the window may hang over the border.
    Same,
    /// Output size `(in - f) / s + 1`; the window stays inside the input.
    Valid,
    /// These many rows above and below and columns left and right; output
    /// size `(in + before + after - f) / s + 1`. `#[layer(padding = (top,
    /// bottom, left, right))]`, the order of a TFLite PAD's amounts.
    Explicit {
        /// Rows above the input.
        top: usize,
        /// Rows below it.
        bottom: usize,
        /// Columns left of it.
        left: usize,
        /// Columns right of it.
        right: usize,
    },
}

/// Geometry of one spatial dimension of a sliding window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim {
    /// Output size.
    pub out: usize,
    /// Padding before the first input element (top / left).
    pub before: usize,
    /// Padding after the last input element (bottom / right).
    pub after: usize,
}

impl Padding {
    /// Output size and padding of the height `input` for a filter of
    /// `f` rows and stride `s` (both ≥ 1).
    ///
    /// ```
    /// use small_ir::{Dim, Padding};
    /// // KWS DS-CNN first layer: height 49, filter 10, stride 2 -> 25, pads 4 + 5.
    /// assert_eq!(Padding::Same.height(49, 10, 2), Ok(Dim { out: 25, before: 4, after: 5 }));
    /// let pad = Padding::Explicit { top: 1, bottom: 2, left: 0, right: 0 };
    /// assert_eq!(pad.height(5, 3, 1), Ok(Dim { out: 6, before: 1, after: 2 }));
    /// ```
    #[inline]
    pub const fn height(self, input: usize, f: usize, s: usize) -> Result<Dim, Error> {
        let given = match self {
            Padding::Explicit { top, bottom, .. } => Some((top, bottom)),
            _ => None,
        };
        self.along("height", given, input, f, s)
    }

    /// As [`Padding::height`], for the width `input` and a filter of `f`
    /// columns.
    ///
    /// ```
    /// use small_ir::{Dim, Padding};
    /// assert_eq!(Padding::Valid.width(7, 3, 2), Ok(Dim { out: 3, before: 0, after: 0 }));
    /// ```
    #[inline]
    pub const fn width(self, input: usize, f: usize, s: usize) -> Result<Dim, Error> {
        let given = match self {
            Padding::Explicit { left, right, .. } => Some((left, right)),
            _ => None,
        };
        self.along("width", given, input, f, s)
    }

    /// The most columns of padding left of the input for a filter `fw`
    /// columns wide, at any input width and stride: SAME pads at most
    /// `(fw - 1) / 2` before (its total is at most `fw - 1`, the odd one
    /// after), an explicit padding its `left`, VALID none. So an edge
    /// tile's first valid window column (`Tile::lo`) is at most this, and
    /// its emitted guards test `lo` only on the columns before it.
    ///
    /// ```
    /// use small_ir::Padding;
    /// assert_eq!(Padding::Same.max_left(3), 1);
    /// assert_eq!(Padding::Same.max_left(4), 1);
    /// assert_eq!(Padding::Valid.max_left(3), 0);
    /// ```
    pub const fn max_left(self, fw: usize) -> usize {
        match self {
            Padding::Same => fw.saturating_sub(1) / 2,
            Padding::Valid => 0,
            Padding::Explicit { left, .. } => left,
        }
    }

    /// True if no window of a `fh x fw` filter hangs over the border:
    /// every output is a window inside the input.
    pub const fn is_none(self, fh: usize, fw: usize) -> bool {
        match self {
            Padding::Valid => true,
            Padding::Same => fh == 1 && fw == 1,
            Padding::Explicit {
                top,
                bottom,
                left,
                right,
            } => top == 0 && bottom == 0 && left == 0 && right == 0,
        }
    }

    /// One dimension; `given` is an explicit padding's `(before, after)`.
    #[inline]
    const fn along(
        self,
        what: &'static str,
        given: Option<(usize, usize)>,
        input: usize,
        f: usize,
        s: usize,
    ) -> Result<Dim, Error> {
        if s == 0 || f == 0 {
            return Err(Error::Unsupported {
                what: "filter size or stride",
                detail: "must be at least 1",
            });
        }
        if input == 0 {
            return Err(Error::InputTooSmall {
                what,
                minimum: 1,
                actual: 0,
            });
        }
        let (before, after) = match (self, given) {
            (Padding::Same, _) => {
                let out = input.div_ceil(s);
                // `(out - 1) * s + f - input`, without the overflow of
                // `+ f` near `usize::MAX`: `(out - 1) * s < input`.
                let total = f.saturating_sub(input - (out - 1) * s);
                return Ok(Dim {
                    out,
                    before: total / 2,
                    after: total - total / 2,
                });
            }
            (_, Some(g)) => g,
            _ => (0, 0),
        };
        let padded = input.saturating_add(before).saturating_add(after);
        if padded < f {
            return Err(Error::InputTooSmall {
                what,
                // Least input with this padding: `f - before - after`.
                minimum: f - before - after,
                actual: input,
            });
        }
        Ok(Dim {
            out: (padded - f) / s + 1,
            before,
            after,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(i: usize, f: usize, s: usize) -> (usize, usize, usize) {
        let d = Padding::Same.height(i, f, s).unwrap();
        (d.out, d.before, d.after)
    }

    #[test]
    fn same_matches_tensorflow_formula() {
        // 7x7 input, 3x3 filter, stride 2: out 4, total (4-1)*2+3-7 = 2 -> 1 + 1.
        assert_eq!(same(7, 3, 2), (4, 1, 1));
        // 8 input, 3 filter, stride 2: out 4, total (3*2+3-8)=1 -> 0 before, 1 after.
        assert_eq!(same(8, 3, 2), (4, 0, 1));
        // 10 wide, 4 filter, stride 2 (KWS): out 5, total 4*2+4-10 = 2 -> 1 + 1.
        assert_eq!(same(10, 4, 2), (5, 1, 1));
        // Stride larger than the filter: never negative padding.
        assert_eq!(same(6, 1, 2), (3, 0, 0));
        // 1x1 stride 1: no padding.
        assert_eq!(same(5, 1, 1), (5, 0, 0));
        // Filter larger than the input.
        assert_eq!(same(2, 5, 1), (2, 2, 2));
        assert_eq!(same(1, 3, 3), (1, 1, 1));
    }

    #[test]
    fn left_padding_never_exceeds_max_left() {
        for i in 1..40 {
            for f in 1..12 {
                for st in 1..6 {
                    let d = Padding::Same.width(i, f, st).unwrap();
                    assert!(d.before <= Padding::Same.max_left(f), "{i} {f} {st}");
                    if let Ok(d) = Padding::Valid.width(i, f, st) {
                        assert_eq!(d.before, Padding::Valid.max_left(f));
                    }
                }
            }
        }
    }

    #[test]
    fn valid_sizes_and_errors() {
        let d = Padding::Valid.width(7, 3, 2).unwrap();
        assert_eq!((d.out, d.before, d.after), (3, 0, 0));
        assert_eq!(Padding::Valid.width(8, 8, 8).unwrap().out, 1);
        assert_eq!(
            Padding::Valid.width(2, 3, 1),
            Err(Error::InputTooSmall {
                what: "width",
                minimum: 3,
                actual: 2
            })
        );
        // Near usize::MAX: no overflow (`(out - 1) * s + f` wrapped).
        let max = usize::MAX;
        assert_eq!(same(max, 3, 1), (max, 1, 1));
        assert_eq!(same(max, 5, 2), (max / 2 + 1, 2, 2));
        assert_eq!(Padding::Valid.width(max, 1, 1).unwrap().out, max);
        for (f, s) in [(0, 1), (3, 0)] {
            assert_eq!(
                Padding::Same.width(4, f, s),
                Err(Error::Unsupported {
                    what: "filter size or stride",
                    detail: "must be at least 1"
                })
            );
        }
        assert_eq!(
            Padding::Same.height(0, 3, 1),
            Err(Error::InputTooSmall {
                what: "height",
                minimum: 1,
                actual: 0
            })
        );
    }

    #[test]
    fn explicit_sizes_and_errors() {
        let p = Padding::Explicit {
            top: 1,
            bottom: 2,
            left: 3,
            right: 0,
        };
        // 5 + 1 + 2 = 8 rows, 3 filter, stride 2: (8 - 3) / 2 + 1 = 3.
        assert_eq!(
            p.height(5, 3, 2),
            Ok(Dim {
                out: 3,
                before: 1,
                after: 2
            })
        );
        // A 1x1 filter: the padded plane itself (a padding step).
        assert_eq!(p.width(4, 1, 1).unwrap().out, 7);
        // Too small even with the padding: 1 + 1 + 2 < 5.
        assert_eq!(
            p.height(1, 5, 1),
            Err(Error::InputTooSmall {
                what: "height",
                minimum: 2,
                actual: 1
            })
        );
        assert!(!p.is_none(1, 1));
        assert!(Padding::Same.is_none(1, 1) && !Padding::Same.is_none(3, 1));
        let zero = Padding::Explicit {
            top: 0,
            bottom: 0,
            left: 0,
            right: 0,
        };
        assert!(zero.is_none(3, 3));
        // Near usize::MAX the padded size saturates instead of wrapping.
        let huge = Padding::Explicit {
            top: usize::MAX,
            bottom: 1,
            left: 0,
            right: 0,
        };
        assert_eq!(huge.height(1, 1, 1).unwrap().out, usize::MAX);
    }
}
