//! Int8 `SOFTMAX`: TFLite's fixed-point reference algorithm
//! (`reference_ops::Softmax` for int8 input and output, on gemmlowp's
//! `FixedPoint`), to an output of scale 1/256 and zero point -128.
//!
//! Per row: the differences `x - max` (all `<= 0`) are scaled by
//! `beta * input_scale` into Q5.26 (5 integer bits), `exp` of each is
//! evaluated in Q0.31 (a Taylor polynomial on `[-1/4, 0)` times the
//! constants `exp(-1/4)`, `exp(-1/2)`, ... `exp(-16)` of the set bits),
//! summed in Q12.19, the reciprocal of the sum taken by Newton-Raphson,
//! and each `exp` times the reciprocal rounded to 8 bits. A difference
//! below `diff_min` (one whose scaled value would not fit Q5.26) gives
//! the smallest output, -128.

use crate::Error;
use crate::reference::at_least_one;
use small_ir::quant::{
    multiply_by_quantized_multiplier_greater_than_one, quantize_multiplier, rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul as mul,
};

/// Integer bits of the scaled differences (Q5.26).
const SCALED_DIFF_INTEGER_BITS: i32 = 5;
/// Integer bits of the sum of the exponentials (Q12.19).
const ACCUMULATION_INTEGER_BITS: i32 = 12;

/// The parameters of an int8 [`softmax`], as TFLite's `SoftmaxPrepare`
/// computes them for its reference kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SoftmaxParams {
    /// Q31 mantissa of `beta * input_scale * 2^26` (capped at `2^31 - 1`).
    pub input_multiplier: i32,
    /// Its exponent, `>= 0` (`QuantizeMultiplierGreaterThanOne`).
    pub input_left_shift: i32,
    /// The most negative difference `x - max` that is not simply -128:
    /// `-floor(31 * 2^26 / 2^input_left_shift)` (`CalculateInputRadius`).
    pub diff_min: i32,
}

impl SoftmaxParams {
    /// TFLite's `PreprocessSoftmaxScaling(beta, input_scale, 5)` and
    /// `-CalculateInputRadius(5, input_left_shift)`, in `f64` from the
    /// `f32` parameters.
    ///
    /// Errors: `beta * input_scale * 2^26` not above 1 (or not a number),
    /// where TFLite's `QuantizeMultiplierGreaterThanOne` aborts →
    /// [`Error::Unsupported`].
    pub fn new(beta: f32, input_scale: f32) -> Result<Self, Error> {
        let max_real = ((1i64 << 31) - 1) as f64;
        let real = f64::from(beta)
            * f64::from(input_scale)
            * (1i64 << (31 - SCALED_DIFF_INTEGER_BITS)) as f64;
        if real.is_nan() || real <= 1.0 {
            return Err(Error::Unsupported {
                what: "softmax beta * input scale",
                detail: "must be above 2^-26 (TFLite's QuantizeMultiplierGreaterThanOne)",
            });
        }
        let real = if real < max_real { real } else { max_real };
        let (input_multiplier, input_left_shift) = quantize_multiplier(real);
        // floor(((1 << 5) - 1) * 2^(31 - 5) / 2^shift); shift is 1..=31.
        let radius = (31i64 << (31 - SCALED_DIFF_INTEGER_BITS)) >> input_left_shift.clamp(0, 62);
        Ok(SoftmaxParams {
            input_multiplier,
            input_left_shift,
            diff_min: -(radius as i32),
        })
    }
}

/// `x << EXP` saturated to `i32` (gemmlowp's
/// `SaturatingRoundingMultiplyByPOT` with a positive exponent).
fn saturating_shl<const EXP: u32>(x: i32) -> i32 {
    let threshold = (1i32 << (31 - EXP)) - 1;
    if x > threshold {
        i32::MAX
    } else if x < -threshold {
        i32::MIN
    } else {
        x << EXP
    }
}

/// gemmlowp's `exp_on_interval_between_negative_one_quarter_and_0_excl`:
/// `exp(a)` for `a` in `[-1/4, 0)`, both Q0.31, by the Taylor series
/// around -1/8 to the 4th power.
fn exp_on_interval_between_negative_one_quarter_and_0_excl(a: i32) -> i32 {
    const EXP_MINUS_ONE_EIGHTH: i32 = 1_895_147_668; // exp(-1/8)
    const ONE_THIRD: i32 = 715_827_883;
    let x = a.wrapping_add(1 << 28); // a + 1/8
    let x2 = mul(x, x);
    let x3 = mul(x2, x);
    let x4 = mul(x2, x2);
    let x4_over_4 = rounding_divide_by_pot(x4, 2);
    let x4_over_24_plus_x3_over_6_plus_x2_over_2 = rounding_divide_by_pot(
        mul(x4_over_4.wrapping_add(x3), ONE_THIRD).wrapping_add(x2),
        1,
    );
    EXP_MINUS_ONE_EIGHTH.wrapping_add(mul(
        EXP_MINUS_ONE_EIGHTH,
        x.wrapping_add(x4_over_24_plus_x3_over_6_plus_x2_over_2),
    ))
}

/// gemmlowp's `exp_on_negative_values` for a Q5.26 input `a <= 0`:
/// `exp(a)` in Q0.31 (`exp(0)` = `i32::MAX`, gemmlowp's `One()` of Q0.31).
fn exp_on_negative_values(a: i32) -> i32 {
    const FRACTIONAL_BITS: i32 = 31 - SCALED_DIFF_INTEGER_BITS;
    const ONE_QUARTER: i32 = 1 << (FRACTIONAL_BITS - 2);
    /// `(exponent, exp(-2^exponent) in Q0.31)`, gemmlowp's barrel shifter.
    const BARREL: [(i32, i32); 7] = [
        (-2, 1_672_461_947),
        (-1, 1_302_514_674),
        (0, 790_015_084),
        (1, 290_630_308),
        (2, 39_332_535),
        (3, 720_401),
        (4, 242),
    ];
    let mask = ONE_QUARTER - 1;
    let a_mod_quarter_minus_one_quarter = (a & mask) - ONE_QUARTER;
    // Rescale<0>: Q5.26 -> Q0.31, a shift by the 5 integer bits.
    let mut result = exp_on_interval_between_negative_one_quarter_and_0_excl(saturating_shl::<5>(
        a_mod_quarter_minus_one_quarter,
    ));
    let remainder = a_mod_quarter_minus_one_quarter.wrapping_sub(a);
    for (exponent, multiplier) in BARREL {
        // All seven exponents are below the 5 integer bits.
        if remainder & (1 << (FRACTIONAL_BITS + exponent)) != 0 {
            result = mul(result, multiplier);
        }
    }
    if a == 0 { i32::MAX } else { result }
}

/// gemmlowp's `RoundingHalfSum` of two `i32`: `(a + b) / 2` rounded half
/// away from zero.
fn rounding_half_sum(a: i32, b: i32) -> i32 {
    let sum = i64::from(a) + i64::from(b);
    let sign = if sum >= 0 { 1 } else { -1 };
    ((sum + sign) / 2) as i32
}

/// gemmlowp's `one_over_one_plus_x_for_x_in_0_1`: `1 / (1 + a)` for `a` in
/// `[0, 1)` Q0.31, by three Newton-Raphson steps on Q2.29, as Q0.31.
fn one_over_one_plus_x_for_x_in_0_1(a: i32) -> i32 {
    const FORTY_EIGHT_OVER_SEVENTEEN: i32 = 1_515_870_810; // Q2.29
    const MINUS_THIRTY_TWO_OVER_SEVENTEEN: i32 = -1_010_580_540; // Q2.29
    const ONE_Q2: i32 = 1 << 29;
    let half_denominator = rounding_half_sum(a, i32::MAX);
    let mut x = FORTY_EIGHT_OVER_SEVENTEEN
        .wrapping_add(mul(half_denominator, MINUS_THIRTY_TWO_OVER_SEVENTEEN));
    for _ in 0..3 {
        let half_denominator_times_x = mul(half_denominator, x);
        let one_minus_half_denominator_times_x = ONE_Q2.wrapping_sub(half_denominator_times_x);
        // Q2 * Q2 = Q4, rescaled to Q2.
        x = x.wrapping_add(saturating_shl::<2>(mul(
            x,
            one_minus_half_denominator_times_x,
        )));
    }
    // x / 2 as Q1.30 is the same bits; rescaled to Q0.31.
    saturating_shl::<1>(x)
}

/// TFLite's `GetReciprocal(x, 12)`: `(1 / x` scaled into Q0.31, the number
/// of bits `x` (Q12.19, `> 0`) has above 1)`.
fn reciprocal(sum: i32) -> (i32, i32) {
    let headroom_plus_one = (sum as u32).leading_zeros();
    let num_bits_over_unit = ACCUMULATION_INTEGER_BITS - headroom_plus_one as i32;
    let shifted_sum_minus_one = (sum as u32)
        .checked_shl(headroom_plus_one)
        .unwrap_or(0)
        .wrapping_sub(1 << 31) as i32;
    (
        one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one),
        num_bits_over_unit,
    )
}

/// `exp(x - max)` in Q0.31 of one input, `None` below `diff_min`.
fn exp_of(x: i8, max: i8, p: &SoftmaxParams) -> Option<i32> {
    let diff = i32::from(x) - i32::from(max);
    (diff >= p.diff_min).then(|| {
        exp_on_negative_values(multiply_by_quantized_multiplier_greater_than_one(
            diff,
            p.input_multiplier,
            p.input_left_shift,
        ))
    })
}

/// The reciprocal of one row's sum of exponentials and the final shift,
/// or `None` where TFLite's `TFLITE_CHECK(0 <= exponent <= 31)` fails.
fn row_scale(row: &[i8], p: &SoftmaxParams) -> Option<(i32, u32)> {
    let max = row.iter().copied().fold(i8::MIN, i8::max);
    let mut sum = 0i32; // Q12.19
    for &x in row {
        if let Some(e) = exp_of(x, max, p) {
            // Rescale<12>: Q0.31 -> Q12.19.
            sum = sum.wrapping_add(rounding_divide_by_pot(e, ACCUMULATION_INTEGER_BITS as u32));
        }
    }
    // exp(0) of the maximum alone is 2^19: sum > 0 unless it wrapped.
    if sum <= 0 {
        return None;
    }
    let (scale, num_bits_over_unit) = reciprocal(sum);
    let exponent = u32::try_from(num_bits_over_unit + 31 - 8).ok()?;
    (exponent <= 31).then_some((scale, exponent))
}

/// TFLite int8 `SOFTMAX` over rows of `depth` values (the innermost
/// dimension): `out` has scale 1/256 and zero point -128, the only output
/// quantization TFLite's int8 softmax accepts.
///
/// Errors (in this order): `depth = 0` → [`Error::Unsupported`];
/// `input.len()` not a multiple of `depth` → [`Error::BufferLength`]
/// (`"input"`, expected = `input.len()` rounded down to a multiple of
/// `depth`); `out.len() != input.len()` → [`Error::BufferLength`]
/// (`"output"`); a row whose sum of exponentials has more than 8 bits
/// above 1 (more than about 256 maximal values), where TFLite aborts →
/// [`Error::Unsupported`], before any output is written.
pub fn softmax(input: &[i8], depth: usize, p: &SoftmaxParams, out: &mut [i8]) -> Result<(), Error> {
    at_least_one("depth", depth)?;
    crate::check_len("input", input.len() - input.len() % depth, input.len())?;
    crate::check_len("output", input.len(), out.len())?;
    let mut scales = input.chunks_exact(depth).map(|row| row_scale(row, p));
    if scales.any(|s| s.is_none()) {
        return Err(Error::Unsupported {
            what: "softmax row",
            detail: "the sum of exponentials needs more than 8 integer bits (TFLite aborts)",
        });
    }
    for (row, y) in input.chunks_exact(depth).zip(out.chunks_exact_mut(depth)) {
        let max = row.iter().copied().fold(i8::MIN, i8::max);
        let Some((scale, exponent)) = row_scale(row, p) else {
            continue; // never: every row was checked above
        };
        for (y, &x) in y.iter_mut().zip(row) {
            *y = match exp_of(x, max, p) {
                Some(e) => {
                    let unsat = rounding_divide_by_pot(mul(scale, e), exponent);
                    (unsat - 128).clamp(-128, 127) as i8
                }
                None => i8::MIN,
            };
        }
    }
    Ok(())
}
