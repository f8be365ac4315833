//! TFLite's double rounding as one rounding of a 64-bit product: the form
//! the vector output stages compute, and the rows that hold it.
//!
//! [`multiply_by_quantized_multiplier`] rounds twice: the doubling high
//! multiply rounds `x * m / 2^31` to an `i32` (half up), then
//! `rounding_divide_by_pot` rounds that by `2^e` (half away from zero).
//! With `p = x * m` exact in `i64`, both roundings together are one floor:
//!
//! ```text
//! y = floor((p + 2^30) / 2^31)                     the high multiply
//! f = floor((y + 2^(e-1) - [y < 0]) / 2^e)         the division, e >= 1
//!   = floor((p + 2^30 + 2^(30+e) - [p < -2^30] * 2^31) / 2^(31+e))
//! ```
//!
//! (nested floors of integer sums merge, and `y < 0` exactly when
//! `p < -2^30`). A vector unit computes that with one 32x32->64 multiply,
//! an add, a compare and masked subtract, and an arithmetic shift of the
//! high word: [`Step::apply`]. The vector code needs `31 + e >= 32`, so a
//! [`Step`] exists only for `e >= 1`, or for an ADD input, whose `x` is
//! small enough to be doubled instead (`e = 0`: one more left shift).
//!
//! [`multiply_by_quantized_multiplier`]: crate::quant::multiply_by_quantized_multiplier

use crate::quant::{Multiplier, Rescale, row};

/// One double rounding as one step: `x` shifted left by `left`
/// (wrapping), times `multiplier` in `i64`, plus `round`, minus `2^31`
/// where the product is below `limit`, arithmetic shift right by
/// `32 + shift`, truncated to `i32` ([`Step::apply`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Step {
    /// The left shift of `x`, `0..=31`.
    pub left: i32,
    /// The Q31 multiplier.
    pub multiplier: i32,
    /// `2^30 + 2^(30 + e)` (`2^31` for a doubled ADD input).
    pub round: i64,
    /// `-2^30`, or `i64::MIN` where there is no division (nothing to
    /// round away from zero).
    pub limit: i64,
    /// The shift of the product's high word, `e - 1` (`0..=30`).
    pub shift: i32,
}

impl Step {
    /// [`multiply_by_quantized_multiplier`](crate::quant::multiply_by_quantized_multiplier)`(x, m.multiplier, m.shift)`
    /// for every `x`, if `m.shift <= -1` and the multiplier is not
    /// `i32::MIN` (whose square saturates); else `None`.
    ///
    /// ```
    /// use small_ir::quant::{Multiplier, multiply_by_quantized_multiplier as mbqm};
    /// use small_ir::step::Step;
    /// let m = Multiplier::from_real(0.0123);
    /// let s = Step::double_rounding(m).unwrap();
    /// for x in [-100_000, -81, 0, 81, 123_456, i32::MIN, i32::MAX] {
    ///     assert_eq!(s.apply(x), mbqm(x, m.multiplier, m.shift));
    /// }
    /// ```
    pub const fn double_rounding(m: Multiplier) -> Option<Step> {
        if m.shift > -1 {
            return None;
        }
        Step::divided(0, m.multiplier, m.shift.unsigned_abs())
    }

    /// [`multiply_by_quantized_multiplier_smaller_than_one_exp`](crate::quant::multiply_by_quantized_multiplier_smaller_than_one_exp)`(x, m.multiplier, m.shift)`
    /// for every `x`, if its division is by 2 or more (`m.shift <= -1`)
    /// and the multiplier is not `i32::MIN`; else `None`. The ADD's
    /// output rescale.
    pub const fn smaller_than_one(m: Multiplier) -> Option<Step> {
        Step::double_rounding(m)
    }

    /// The same of `x.wrapping_shl(left as u32)` for `x` in `-255..=255`
    /// (an ADD's input minus its zero point), if the multiplier is not
    /// `i32::MIN` and, where there is no division (`m.shift >= 0`), `x <<
    /// left` is below `2^29` in magnitude, so that it can be doubled
    /// (`left & 31 <= 20`: TFLite's int8 ADD shifts by 20); else `None`.
    pub const fn add_input(left: i32, m: Multiplier) -> Option<Step> {
        let left = left & 31;
        if m.shift <= -1 {
            return Step::divided(left, m.multiplier, m.shift.unsigned_abs());
        }
        if m.multiplier == i32::MIN || left > 20 {
            return None;
        }
        // floor((x m + 2^30) / 2^31) = floor((2x m + 2^31) / 2^32).
        Some(Step {
            left: left + 1,
            multiplier: m.multiplier,
            round: 1 << 31,
            limit: i64::MIN,
            shift: 0,
        })
    }

    /// A step with a division by `2^min(e, 31)`, `e >= 1`.
    const fn divided(left: i32, multiplier: i32, e: u32) -> Option<Step> {
        if multiplier == i32::MIN {
            return None;
        }
        let e = if e > 31 { 31 } else { e };
        Some(Step {
            left,
            multiplier,
            round: (1 << 30) + (1 << (30 + e)),
            limit: -(1 << 30),
            shift: e as i32 - 1,
        })
    }

    /// The step, as the vector code computes it. `p + round` cannot
    /// overflow: `|p| <= 2^62 - 2^31` (no `i32::MIN` multiplier) and
    /// `round <= 2^30 + 2^61`.
    pub const fn apply(self, x: i32) -> i32 {
        let p = x.wrapping_shl(self.left as u32) as i64 * self.multiplier as i64;
        let r = p + self.round - if p < self.limit { 1 << 31 } else { 0 };
        ((r >> 32) as i32) >> self.shift
    }
}

/// A [`Step`]'s three 64-bit words in three row pairs from row `first`:
/// the word of channel `o` is in row `first + 2k + o % 2`, in the two
/// `i32`s at `o - o % 2` (low word first: every supported arch is
/// little-endian). So a vector of `2 * n` channels from an even one reads
/// the even channels' words from one row and the odd channels' from the
/// next, `n` 64-bit lanes each.
///
/// The words: `round`; `limit`; the shift, as two counts: `shift` in the
/// high half (the high word's arithmetic shift, x86's `vpsravd` on 32-bit
/// lanes) and `-(32 + shift)` in the low half (the whole word's, as
/// NEON's `sshl` takes it: a negative low byte shifts right).
fn write_step(rows: &mut [i32], stride: usize, first: usize, o: usize, s: Step) {
    let at = o - o % 2;
    let counts = (i64::from(s.shift) << 32) | i64::from(-(32 + s.shift) as u32);
    for (k, v) in [s.round, s.limit, counts].into_iter().enumerate() {
        let r = (first + 2 * k + o % 2) * stride + at;
        rows[r] = v as u32 as i32;
        rows[r + 1] = (v >> 32) as u32 as i32;
    }
}

/// Adds the [`Step`] rows to the per-channel rows of channels
/// `0..channels` (`stride` values a row; `channels` and `stride` even):
/// for each channel whose double rounding has a step (and, in a
/// `residual` layer, whose ADD's three rescales have, with zero points
/// in `-128..=127`), the convolution's at [`row::STEP`] and the ADD's at
/// [`row::ADD_STEP`] (`ADD_LEFT1`, `ADD_LEFT2`, then three steps), and
/// its variant word set to [`row::STEPPED`], which the vector output
/// stages take as the sign that these rows are there. Other channels are
/// left as they are (their stages fall back to the scalar code).
pub fn derive_steps(rows: &mut [i32], stride: usize, channels: usize, residual: bool) {
    for o in 0..channels {
        let at = |r: usize| rows[r * stride + o];
        let words = [at(row::RESCALE), at(row::RESCALE + 1), at(row::RESCALE + 2)];
        let Rescale::DoubleRounding(m) = Rescale::from_words(words) else {
            continue;
        };
        if words[0] != 0 {
            continue;
        }
        let Some(conv) = Step::double_rounding(m) else {
            continue;
        };
        if residual {
            let a = row::add_rescale(core::array::from_fn(|k| at(row::ADD_RESCALE + k)));
            let i8_range = |r: usize| (-128..=127).contains(&at(r));
            let steps = (
                Step::add_input(a.left_shift, a.input1),
                Step::add_input(a.left_shift, a.input2),
                Step::smaller_than_one(a.output),
            );
            let (Some(s1), Some(s2), Some(s3)) = steps else {
                continue;
            };
            if !(i8_range(row::CONV_ZERO_POINT) && i8_range(row::SKIP_ZERO_POINT)) {
                continue;
            }
            rows[row::ADD_LEFT1 * stride + o] = s1.left;
            rows[row::ADD_LEFT2 * stride + o] = s2.left;
            for (k, s) in [s1, s2, s3].into_iter().enumerate() {
                write_step(rows, stride, row::ADD_STEP + 6 * k, o, s);
            }
        }
        write_step(rows, stride, row::STEP, o, conv);
        rows[row::RESCALE * stride + o] = row::STEPPED;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::{
        AddRescale, multiply_by_quantized_multiplier as mbqm,
        multiply_by_quantized_multiplier_smaller_than_one_exp as exp,
    };

    /// A small xorshift generator.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn i32(&mut self) -> i32 {
            self.next() as i32
        }
    }

    const EDGES: [i32; 9] = [
        i32::MIN,
        i32::MIN + 1,
        -(1 << 30),
        -3,
        -1,
        0,
        1,
        1 << 30,
        i32::MAX,
    ];

    #[test]
    fn double_rounding_is_one_step() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for shift in -40..=3 {
            for case in 0..4000 {
                let multiplier = match case % 4 {
                    0 => EDGES[(rng.next() % 9) as usize],
                    1 => (1 << 30) + (rng.next() % (1 << 30)) as i32,
                    _ => rng.i32(),
                };
                let m = Multiplier { multiplier, shift };
                let x = if case % 3 == 0 {
                    EDGES[(rng.next() % 9) as usize]
                } else {
                    rng.i32() >> (rng.next() % 32)
                };
                match Step::double_rounding(m) {
                    Some(s) => assert_eq!(s.apply(x), mbqm(x, multiplier, shift), "{x} {m:?}"),
                    None => assert!(shift > -1 || multiplier == i32::MIN),
                }
            }
        }
    }

    #[test]
    fn ties_round_as_tflite() {
        // 0.5 * 5 / 2 = 1.25 -> 3 / 2 after the first rounding -> 2.
        let half = Multiplier {
            multiplier: 1 << 30,
            shift: -1,
        };
        let s = Step::double_rounding(half).unwrap();
        assert_eq!([s.apply(5), s.apply(-5)], [2, -1]);
        assert_eq!([s.apply(6), s.apply(-6)], [2, -2]); // 1.5, -1.5: away from zero
        assert_eq!([s.apply(2), s.apply(-2)], [1, -1]); // 0.5, -0.5
    }

    #[test]
    fn add_inputs_and_outputs_are_one_step() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for case in 0..20_000 {
            let left = if case % 4 == 0 { rng.i32() } else { 20 };
            let m = Multiplier {
                multiplier: match case % 3 {
                    0 => EDGES[(rng.next() % 9) as usize],
                    1 => 1 << 30,
                    _ => rng.i32(),
                },
                shift: (rng.next() % 40) as i32 - 34,
            };
            let x = (rng.next() % 511) as i32 - 255;
            if let Some(s) = Step::add_input(left, m) {
                let want = exp(x.wrapping_shl(left as u32), m.multiplier, m.shift);
                assert_eq!(s.apply(x), want, "{x} {left} {m:?}");
            }
            let y = rng.i32() >> (rng.next() % 32);
            if let Some(s) = Step::smaller_than_one(m) {
                assert_eq!(s.apply(y), exp(y, m.multiplier, m.shift), "{y} {m:?}");
            }
        }
        // TFLite's multipliers: the larger input's is 0.5 (no division):
        // doubled.
        let a = AddRescale::new(0.02, 0.05, 0.04);
        let s2 = Step::add_input(a.left_shift, a.input2).unwrap();
        assert_eq!((s2.left, s2.limit), (21, i64::MIN));
        for x in -255..=255 {
            let want = exp(x << 20, a.input2.multiplier, a.input2.shift);
            assert_eq!(s2.apply(x), want);
        }
    }

    #[test]
    fn derive_writes_pairs_and_marks_the_variant() {
        const STRIDE: usize = 4;
        let mut rows = [0i32; (row::CORRECTION) * STRIDE];
        let m = Multiplier::from_real(0.01);
        for o in 0..3 {
            for (k, w) in Rescale::DoubleRounding(m)
                .to_words()
                .into_iter()
                .enumerate()
            {
                rows[(row::RESCALE + k) * STRIDE + o] = w;
            }
        }
        // Channel 2 has no step (no division), channel 3 is FC's `f64`.
        rows[(row::RESCALE + 2) * STRIDE + 2] = 0;
        for (k, w) in Rescale::Real(0.5).to_words().into_iter().enumerate() {
            rows[(row::RESCALE + k) * STRIDE + 3] = w;
        }
        derive_steps(&mut rows, STRIDE, STRIDE, false);
        let variants: [i32; 4] = core::array::from_fn(|o| rows[row::RESCALE * STRIDE + o]);
        assert_eq!(variants, [row::STEPPED, row::STEPPED, 0, 2]);
        let s = Step::double_rounding(m).unwrap();
        let word = |r: usize, at: usize| {
            (rows[r * STRIDE + at] as u32 as i64) | (i64::from(rows[r * STRIDE + at + 1]) << 32)
        };
        // Channel 1's round: the odd row of the pair, at word 0.
        assert_eq!(word(row::STEP + 1, 0), s.round);
        assert_eq!(word(row::STEP, 0), s.round);
        assert_eq!(word(row::STEP + 2, 0), s.limit);
        assert_eq!(word(row::STEP + 5, 0) >> 32, i64::from(s.shift));
        assert_eq!(word(row::STEP + 5, 0) as i8, -32 - s.shift as i8);
        assert_eq!(word(row::STEP, 2), 0);
    }
}
