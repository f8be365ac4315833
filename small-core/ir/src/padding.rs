//! Output sizes and border padding with exactly TensorFlow's semantics.
//!
//! SAME: `out = ceil(in / s)`, `pad_total = max((out - 1) * s + f - in, 0)`,
//! `pad_before = pad_total / 2`, the extra row/column (odd total) goes
//! after (bottom/right). VALID: `out = (in - f) / s + 1`, no padding.
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
    /// Output size and padding of one dimension of size `input` for a
    /// filter of size `f` and stride `s` (both ≥ 1).
    ///
    /// ```
    /// use small_ir::{Dim, Padding};
    /// // KWS DS-CNN first layer: height 49, filter 10, stride 2 -> 25, pads 4 + 5.
    /// assert_eq!(Padding::Same.dim("height", 49, 10, 2), Ok(Dim { out: 25, before: 4, after: 5 }));
    /// assert_eq!(Padding::Valid.dim("width", 7, 3, 2), Ok(Dim { out: 3, before: 0, after: 0 }));
    /// ```
    pub const fn dim(
        self,
        what: &'static str,
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
        match self {
            Padding::Same => {
                let out = input.div_ceil(s);
                // `(out - 1) * s + f - input`, without the overflow of
                // `+ f` near `usize::MAX`: `(out - 1) * s < input`.
                let total = f.saturating_sub(input - (out - 1) * s);
                Ok(Dim {
                    out,
                    before: total / 2,
                    after: total - total / 2,
                })
            }
            Padding::Valid => {
                if input < f {
                    return Err(Error::InputTooSmall {
                        what,
                        minimum: f,
                        actual: input,
                    });
                }
                Ok(Dim {
                    out: (input - f) / s + 1,
                    before: 0,
                    after: 0,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(i: usize, f: usize, s: usize) -> (usize, usize, usize) {
        let d = Padding::Same.dim("h", i, f, s).unwrap();
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
    fn valid_sizes_and_errors() {
        let d = Padding::Valid.dim("w", 7, 3, 2).unwrap();
        assert_eq!((d.out, d.before, d.after), (3, 0, 0));
        assert_eq!(Padding::Valid.dim("w", 8, 8, 8).unwrap().out, 1);
        assert_eq!(
            Padding::Valid.dim("width", 2, 3, 1),
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
        assert_eq!(Padding::Valid.dim("w", max, 1, 1).unwrap().out, max);
        for (f, s) in [(0, 1), (3, 0)] {
            assert_eq!(
                Padding::Same.dim("w", 4, f, s),
                Err(Error::Unsupported {
                    what: "filter size or stride",
                    detail: "must be at least 1"
                })
            );
        }
        assert_eq!(
            Padding::Same.dim("height", 0, 3, 1),
            Err(Error::InputTooSmall {
                what: "height",
                minimum: 1,
                actual: 0
            })
        );
    }
}
