//! Int8 requantization arithmetic, bit for bit as TensorFlow Lite's
//! reference kernels compute it.
//!
//! An int8 tensor stores `q` for the real value `scale * (q - zero_point)`.
//! A multiply-and-sum operator accumulates `w * (x - input_zero_point)` in
//! an `i32`, and its output stage brings that sum to the output's scale:
//! `out = clamp(rescale(acc) + output_zero_point, min, max)`. TFLite has
//! several ways to do `rescale`, and they round differently, so an int8
//! result is only reproducible with the very arithmetic of the operator
//! that produced it. This module has each of them, scalar and `const fn`,
//! named after the TFLite (and gemmlowp) function it mirrors:
//!
//! | here | TFLite / gemmlowp | used by (LiteRT reference kernels) |
//! | --- | --- | --- |
//! | [`saturating_rounding_doubling_high_mul`] | `gemmlowp::SaturatingRoundingDoublingHighMul` | the double-rounding forms |
//! | [`rounding_divide_by_pot`] | `gemmlowp::RoundingDivideByPOT` | the double-rounding forms, SOFTMAX |
//! | [`multiply_by_quantized_multiplier`] | `MultiplyByQuantizedMultiplier` (default build: double rounding) | per-channel CONV_2D, DEPTHWISE_CONV_2D |
//! | [`multiply_by_quantized_multiplier_single_rounding`] | the same under `TFLITE_SINGLE_ROUNDING` | TFLite Micro builds with single rounding |
//! | [`multiply_by_quantized_multiplier_smaller_than_one_exp`] | `MultiplyByQuantizedMultiplierSmallerThanOneExp` | ADD |
//! | [`multiply_by_quantized_multiplier_greater_than_one`] | `MultiplyByQuantizedMultiplierGreaterThanOne` | SOFTMAX |
//! | [`quantize_multiplier`] | `QuantizeMultiplier` (`frexp`, in double) | every multiplier above |
//! | [`Rescale::Real`] | `round((double)acc * scale)` of `reference_integer_ops::FullyConnected` | int8 FULLY_CONNECTED |
//! | [`rounding_average`] | the rounding division of `reference_integer_ops::AveragePool` | AVERAGE_POOL_2D |
//! | [`Rescale::mean`] | `QuantizedMeanOrSum`'s multiplier with `1 / count` folded in (`reference/reduce.h`) | int8 MEAN |
//! | [`AddRescale`] | `add.cc`'s `Prepare` and `reference_integer_ops::AddFunc` | ADD |
//! | [`activation_range`] | `CalculateActivationRangeQuantized` | every fused activation |
//!
//! Which operator uses which form was read in LiteRT's source (the golden
//! data of `../shared/models` comes from LiteRT 2.3's reference kernels,
//! `BUILTIN_REF`) and is confirmed bit for bit by small-core's
//! `int8_reference` test on all four MLPerf Tiny int8 networks. In
//! particular LiteRT's reference FULLY_CONNECTED does not use a fixed-point
//! multiplier at all: it rounds `acc * scale` in double, half away from
//! zero ([`Rescale::Real`]). TFLite Micro's FULLY_CONNECTED uses
//! [`multiply_by_quantized_multiplier`] (double rounding) instead: this is
//! the operator whose rounding differs from TFLite Micro's default build.
//! On the golden data it changes 9 elements of 5 of the AD autoencoder's
//! 10 layers (input 0) by one step, the output of all 9 AD inputs and of
//! 1 of 8 ResNet-8 inputs. The single-rounding fixed-point form
//! ([`Rescale::SingleRounding`]) reproduces every golden FULLY_CONNECTED
//! tensor too; it differs from [`Rescale::Real`] only where `acc * scale`
//! lies within about `2^-31` of a tie (4 of the 6.8 million accumulators
//! `-2^18..2^18` of the 13 FULLY_CONNECTED layers of the four networks).
//! The convolutions use double rounding: single rounding there changes
//! up to 0.4 % of a convolution's output elements by one step (35 of the
//! 45 convolutions of KWS, ResNet-8 and VWW differ somewhere).
//!
//! Everything here is `core` only: `f64::frexp` and `f64::round` are not
//! in `core`, so [`quantize_multiplier`] reads the exponent from the bits
//! and the rounding is written out ([`round_f64`], [`round_f32`]). The
//! integer functions never panic and never branch on data except where
//! TFLite does; overflow wraps where TFLite's C++ would overflow (which it
//! documents as impossible for valid parameters).

use crate::Activation;

/// gemmlowp's `SaturatingRoundingDoublingHighMul`: `round(a * b / 2^31)`,
/// the high 32 bits of the doubled 64-bit product, rounded to nearest with
/// ties toward +∞ (`-0.5` becomes `0`, `0.5` becomes `1`), saturated: the
/// one product that does not fit, `i32::MIN * i32::MIN` (`2^31`), gives
/// `i32::MAX`. This is the scalar form of Arm's `SQRDMULH`.
///
/// ```
/// use small_ir::quant::saturating_rounding_doubling_high_mul as srdhm;
/// assert_eq!(srdhm(1 << 30, 1 << 30), 1 << 29); // 0.5 * 0.5 in Q31
/// assert_eq!(srdhm(i32::MIN, i32::MIN), i32::MAX);
/// ```
#[inline(always)]
pub const fn saturating_rounding_doubling_high_mul(a: i32, b: i32) -> i32 {
    if a == i32::MIN && b == i32::MIN {
        return i32::MAX;
    }
    // gemmlowp: `(ab + nudge) / 2^31`, C++'s truncating division, with
    // `nudge = 2^30` for `ab >= 0` and `1 - 2^30` below. That is
    // `floor((ab + 2^30) / 2^31)` for every `ab`. For `ab >= 0` both
    // floor. For `ab = -n < 0` the numerator is negative, so gemmlowp
    // gives `-floor((n + 2^30 - 1) / 2^31)`, and `floor((2^30 - n) / 2^31)
    // = -ceil((n - 2^30) / 2^31) = -floor((n - 2^30 + 2^31 - 1) / 2^31)`,
    // the same. One arithmetic shift is a few instructions on a 32-bit
    // core (`SMULL`, an add with carry, two shifts) where the division
    // needed a sign fix-up; the tests compare both forms.
    let ab = a as i64 * b as i64;
    // |ab| <= 2^62, so the sum fits, and the result fits in i32 once
    // MIN * MIN is excluded.
    ((ab + (1 << 30)) >> 31) as i32
}

/// gemmlowp's `RoundingDivideByPOT`: `x / 2^exponent` rounded to nearest,
/// ties away from zero (`2.5 → 3`, `-2.5 → -3`), for `exponent` in
/// `0..=31` (`0` returns `x`).
///
/// ```
/// use small_ir::quant::rounding_divide_by_pot;
/// assert_eq!(rounding_divide_by_pot(5, 1), 3);
/// assert_eq!(rounding_divide_by_pot(-5, 1), -3);
/// assert_eq!(rounding_divide_by_pot(i32::MIN, 31), -1);
/// ```
///
/// An `exponent` above 31 is a caller bug (gemmlowp asserts); it is
/// treated as 31 here rather than panicking.
#[inline(always)]
pub const fn rounding_divide_by_pot(x: i32, exponent: u32) -> i32 {
    let exponent = if exponent > 31 { 31 } else { exponent };
    let mask = ((1i64 << exponent) - 1) as i32;
    let remainder = x & mask;
    let threshold = (mask >> 1) + (x < 0) as i32;
    (x >> exponent) + (remainder > threshold) as i32
}

/// TFLite's `MultiplyByQuantizedMultiplier` as built by default (double
/// rounding, gemmlowp): `x * multiplier * 2^(shift - 31)` computed as
/// [`rounding_divide_by_pot`]`(`[`saturating_rounding_doubling_high_mul`]`(x << max(shift, 0), multiplier), max(-shift, 0))`.
///
/// The product is rounded twice (once to 32 bits, once by the shift), so
/// a value just above a tie after the first rounding can round up again:
/// `5 * 0.5 / 2` gives `2`, where one rounding of `1.25` gives `1`
/// ([`multiply_by_quantized_multiplier_single_rounding`]). This is the
/// output stage of LiteRT's reference per-channel `CONV_2D` and
/// `DEPTHWISE_CONV_2D` and of TFLite Micro's default build.
///
/// `multiplier` is a Q31 mantissa from [`quantize_multiplier`] (`2^30 ..
/// 2^31`, or 0) and `shift` its exponent; the left shift `x << shift`
/// wraps as TFLite's `x * (1 << left_shift)` does on two's complement.
///
/// ```
/// use small_ir::quant::{multiply_by_quantized_multiplier, quantize_multiplier};
/// let (m, shift) = quantize_multiplier(0.25);
/// assert_eq!((m, shift), (1 << 30, -1));
/// assert_eq!(multiply_by_quantized_multiplier(100, m, shift), 25);
/// assert_eq!(multiply_by_quantized_multiplier(5, m, shift), 2); // 1.25, rounded twice
/// ```
#[inline(always)]
pub const fn multiply_by_quantized_multiplier(x: i32, multiplier: i32, shift: i32) -> i32 {
    let left = if shift > 0 { shift as u32 } else { 0 };
    let right = if shift > 0 { 0 } else { shift.unsigned_abs() };
    rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(x.wrapping_shl(left), multiplier),
        right,
    )
}

/// [`multiply_by_quantized_multiplier`] with its per-channel parts worked
/// out once, for code that applies one multiplier to many accumulators a
/// lane at a time (a scalar core's output stage): the left shift, and the
/// mask and threshold base of [`rounding_divide_by_pot`]. Per value that
/// leaves one 32x32->64 multiply, an add with carry, two shifts for the
/// doubling high half, and a shift, a mask, a compare and an add for the
/// division: on a Cortex-M4 about a dozen instructions, against twenty
/// for the single 64-bit step of [`crate::step::Step`], whose negative
/// ties cost a 64-bit compare and select there.
///
/// ```
/// use small_ir::quant::{multiply_by_quantized_multiplier as mbqm, Multiplier, Prepared};
/// let m = Multiplier { multiplier: 1 << 30, shift: -1 };
/// let p = Prepared::new(m).unwrap();
/// for x in [5, -5, 100, -101, i32::MAX, i32::MIN] {
///     assert_eq!(p.apply(x), mbqm(x, m.multiplier, m.shift));
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prepared {
    multiplier: i32,
    left: u32,
    right: u32,
    mask: i32,
    threshold: i32,
}

impl Prepared {
    /// The parts of `m`, or `None` for the mantissa `i32::MIN`, with which
    /// the doubling high half saturates (TFLite's mantissas are positive).
    pub const fn new(m: Multiplier) -> Option<Prepared> {
        if m.multiplier == i32::MIN {
            return None;
        }
        let left = if m.shift > 0 { m.shift as u32 } else { 0 };
        let right = if m.shift > 0 {
            0
        } else {
            m.shift.unsigned_abs()
        };
        let right = if right > 31 { 31 } else { right };
        let mask = ((1i64 << right) - 1) as i32;
        Some(Prepared {
            multiplier: m.multiplier,
            left,
            right,
            mask,
            threshold: mask >> 1,
        })
    }

    /// [`multiply_by_quantized_multiplier`]`(x, m.multiplier, m.shift)`
    /// for the `m` of [`Prepared::new`].
    #[inline(always)]
    pub const fn apply(self, x: i32) -> i32 {
        // `saturating_rounding_doubling_high_mul` without its saturation,
        // which needs the multiplier `i32::MIN`.
        let ab = x.wrapping_shl(self.left) as i64 * self.multiplier as i64;
        let high = ((ab + (1 << 30)) >> 31) as i32;
        // `rounding_divide_by_pot`, its mask and threshold base hoisted.
        let threshold = self.threshold + (high < 0) as i32;
        (high >> self.right) + ((high & self.mask) > threshold) as i32
    }
}

/// TFLite's `MultiplyByQuantizedMultiplier` under `TFLITE_SINGLE_ROUNDING`:
/// `(x * multiplier + 2^(30 - shift)) >> (31 - shift)` in 64 bits, one
/// rounding to nearest with ties toward +∞.
///
/// `shift` must be in `-31..=30` (what [`quantize_multiplier_single_rounding`]
/// returns); values outside are clamped to that range instead of
/// panicking. The result is truncated to 32 bits as TFLite's
/// `static_cast<int32_t>` does (it cannot overflow for a multiplier below
/// 1).
///
/// ```
/// use small_ir::quant::multiply_by_quantized_multiplier_single_rounding as single;
/// assert_eq!(single(5, 1 << 30, -1), 1); // 1.25
/// assert_eq!(single(6, 1 << 30, -1), 2); // 1.5: ties toward +inf
/// assert_eq!(single(-6, 1 << 30, -1), -1); // -1.5
/// ```
pub const fn multiply_by_quantized_multiplier_single_rounding(
    x: i32,
    multiplier: i32,
    shift: i32,
) -> i32 {
    let shift = if shift < -31 {
        -31
    } else if shift > 30 {
        30
    } else {
        shift
    };
    let total_shift = (31 - shift) as u32; // 1..=62
    let round = 1i64 << (total_shift - 1);
    // |x * multiplier| <= 2^62 and round <= 2^61: no overflow.
    ((x as i64 * multiplier as i64 + round) >> total_shift) as i32
}

/// TFLite's `MultiplyByQuantizedMultiplierSmallerThanOneExp` (default
/// build): [`rounding_divide_by_pot`]`(`[`saturating_rounding_doubling_high_mul`]`(x, multiplier), -shift)`
/// for `shift <= 0` (a positive `shift` is treated as 0). ADD's rescaling.
pub const fn multiply_by_quantized_multiplier_smaller_than_one_exp(
    x: i32,
    multiplier: i32,
    shift: i32,
) -> i32 {
    let right = if shift < 0 { shift.unsigned_abs() } else { 0 };
    rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, multiplier), right)
}

/// TFLite's `MultiplyByQuantizedMultiplierGreaterThanOne` (default build):
/// [`saturating_rounding_doubling_high_mul`]`(x << left_shift, multiplier)`
/// for `left_shift >= 0` (a negative one is treated as 0; the shift wraps
/// as TFLite's `x * (1 << left_shift)` does). SOFTMAX's input scaling.
pub const fn multiply_by_quantized_multiplier_greater_than_one(
    x: i32,
    multiplier: i32,
    left_shift: i32,
) -> i32 {
    let left = if left_shift > 0 { left_shift as u32 } else { 0 };
    saturating_rounding_doubling_high_mul(x.wrapping_shl(left), multiplier)
}

/// `frexp` for a finite, non-zero `x`: `(m, e)` with `x = m * 2^e` and
/// `0.5 <= |m| < 1`, exactly (only the exponent bits change).
const fn frexp(x: f64) -> (f64, i32) {
    const EXP_MASK: u64 = 0x7ff << 52;
    let bits = x.to_bits();
    let biased = ((bits & EXP_MASK) >> 52) as i32;
    if biased == 0 {
        // Subnormal: scale into the normal range first (2^64, exact).
        let (m, e) = frexp(x * 18_446_744_073_709_551_616.0);
        return (m, e - 64);
    }
    // Biased exponent 1022 puts |m| in [0.5, 1).
    (
        f64::from_bits((bits & !EXP_MASK) | (1022 << 52)),
        biased - 1022,
    )
}

/// `round(x)` of C (`std::round`, TFLite's `TfLiteRound`): to nearest,
/// ties away from zero, as an `i64` (saturating at its range; NaN gives 0,
/// as Rust's `as` does).
///
/// ```
/// use small_ir::quant::round_f64;
/// assert_eq!((round_f64(2.5), round_f64(-2.5), round_f64(2.4999999999999996)), (3, -3, 2));
/// ```
pub const fn round_f64(x: f64) -> i64 {
    // 2^52: from here on every f64 is an integer (or inf / NaN).
    if !(x < 4_503_599_627_370_496.0 && x > -4_503_599_627_370_496.0) {
        return x as i64;
    }
    let t = x as i64; // truncated toward zero
    let frac = x - t as f64; // exact: |x| < 2^52
    if frac >= 0.5 {
        t + 1
    } else if frac <= -0.5 {
        t - 1
    } else {
        t
    }
}

/// [`round_f64`] for an `f32` (`std::round(float)`): to nearest, ties
/// away from zero, as an `i64`.
pub const fn round_f32(x: f32) -> i64 {
    // 2^23: from here on every f32 is an integer (or inf / NaN).
    if !(x < 8_388_608.0 && x > -8_388_608.0) {
        return x as i64;
    }
    let t = x as i64;
    let frac = x - t as f32; // exact: |x| < 2^23
    if frac >= 0.5 {
        t + 1
    } else if frac <= -0.5 {
        t - 1
    } else {
        t
    }
}

/// TFLite's `QuantizeMultiplier` (default build): a real multiplier as a
/// Q31 mantissa and a power-of-two exponent, `real ≈ m * 2^(shift - 31)`.
///
/// `(q, shift) = frexp(real)`, `m = round(q * 2^31)`; a mantissa that
/// rounds up to `2^31` is halved and the shift incremented; a `shift`
/// below -31 (a multiplier under about `2^-32`) flushes to `(0, 0)`, as
/// does 0. Computed in `f64` from the bits (no `libm`), exactly as `frexp`
/// and `round` do. A non-finite `real` (TFLite aborts) gives `(0, 0)`.
///
/// ```
/// use small_ir::quant::quantize_multiplier;
/// assert_eq!(quantize_multiplier(0.5), (1 << 30, 0));
/// assert_eq!(quantize_multiplier(0.75), (3 << 29, 0));
/// assert_eq!(quantize_multiplier(1.0), (1 << 30, 1));
/// assert_eq!(quantize_multiplier(0.0), (0, 0));
/// ```
pub const fn quantize_multiplier(real: f64) -> (i32, i32) {
    if real == 0.0 || !real.is_finite() {
        return (0, 0);
    }
    let (q, mut shift) = frexp(real);
    // |q * 2^31| is in [2^30, 2^31): exact, and round() stays in i64.
    let mut q_fixed = round_f64(q * 2_147_483_648.0);
    if q_fixed == 1 << 31 || q_fixed == -(1 << 31) {
        q_fixed /= 2;
        shift += 1;
    }
    if shift < -31 {
        return (0, 0);
    }
    (q_fixed as i32, shift)
}

/// [`quantize_multiplier`] as built with `TFLITE_SINGLE_ROUNDING`: a
/// shift above 30 (a multiplier of `2^30` or more) saturates to
/// `(i32::MAX, 30)`, the most [`multiply_by_quantized_multiplier_single_rounding`]
/// takes.
pub const fn quantize_multiplier_single_rounding(real: f64) -> (i32, i32) {
    let (m, shift) = quantize_multiplier(real);
    if shift > 30 {
        (i32::MAX, 30)
    } else {
        (m, shift)
    }
}

/// A real multiplier as TFLite stores it: Q31 mantissa and exponent
/// ([`quantize_multiplier`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Multiplier {
    /// Q31 mantissa, `2^30 ..= 2^31 - 1` (or 0); smaller for
    /// [`Rescale::mean`].
    pub multiplier: i32,
    /// Power-of-two exponent: the multiplier is `multiplier * 2^(shift - 31)`.
    pub shift: i32,
}

impl Multiplier {
    /// [`quantize_multiplier`]`(real)`.
    pub const fn from_real(real: f64) -> Self {
        let (multiplier, shift) = quantize_multiplier(real);
        Multiplier { multiplier, shift }
    }
}

/// The output rescaling of one channel of a multiply-and-sum operator:
/// the `i32` accumulator (bias included) to the output's scale, before
/// the output zero point and the clamp. One variant per TFLite form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rescale {
    /// [`multiply_by_quantized_multiplier`]: gemmlowp's double rounding,
    /// TFLite's default build. LiteRT's reference per-channel `CONV_2D`
    /// and `DEPTHWISE_CONV_2D`; [`Rescale::conv`] builds it.
    DoubleRounding(Multiplier),
    /// [`multiply_by_quantized_multiplier_single_rounding`]: TFLite built
    /// with `TFLITE_SINGLE_ROUNDING` (an option of TFLite Micro).
    SingleRounding(Multiplier),
    /// `round(acc * scale)` in `f64`, ties away from zero, saturated to
    /// `i32`: LiteRT's reference int8 `FULLY_CONNECTED`
    /// (`reference_integer_ops::FullyConnected` with float scales);
    /// [`Rescale::fully_connected`] builds it.
    Real(f64),
    /// `round(logistic(input_scale * acc) * inverse_scale)` in `f32`
    /// ([`crate::math::logistic`]): LiteRT's int8 LOGISTIC, whose table
    /// (`PopulateLookupTable`) holds this for every input `acc = q -
    /// zp_in`, as a layer of weight 1 computes it; [`Rescale::logistic`]
    /// builds it.
    Logistic {
        /// The input's scale.
        input_scale: f32,
        /// `1 / output_scale`, as LiteRT computes it.
        inverse_scale: f32,
    },
}

impl Rescale {
    /// The rescaling LiteRT's reference `CONV_2D` and `DEPTHWISE_CONV_2D`
    /// use for one output channel (`PopulateConvolutionQuantizationParams`),
    /// applied with double rounding:
    /// `QuantizeMultiplier((double)input_scale * (double)weight_scale /
    /// (double)output_scale)`.
    pub const fn conv(input_scale: f32, weight_scale: f32, output_scale: f32) -> Rescale {
        Rescale::DoubleRounding(Multiplier::from_real(
            input_scale as f64 * weight_scale as f64 / output_scale as f64,
        ))
    }

    /// LiteRT's int8 LOGISTIC from an input of scale `input_scale` to an
    /// output of scale `output_scale` (TFLite requires 1/256, zero point
    /// -128).
    ///
    /// ```
    /// use small_ir::quant::Rescale;
    /// let r = Rescale::logistic(0.1, 1.0 / 256.0);
    /// // acc = q - zp_in; + zp_out = -128 after.
    /// assert_eq!((r.apply(0), r.apply(-1000), r.apply(1000)), (128, 0, 256));
    /// ```
    pub const fn logistic(input_scale: f32, output_scale: f32) -> Rescale {
        Rescale::Logistic {
            input_scale,
            inverse_scale: 1.0 / output_scale,
        }
    }

    /// The rescaling LiteRT's reference int8 `FULLY_CONNECTED` uses:
    /// `round((double)acc * ((double)input_scale * (double)weight_scale /
    /// (double)output_scale))`.
    pub const fn fully_connected(
        input_scale: f32,
        weight_scale: f32,
        output_scale: f32,
    ) -> Rescale {
        Rescale::Real(input_scale as f64 * weight_scale as f64 / output_scale as f64)
    }

    /// The rescaling of LiteRT's int8 `MEAN` (`QuantizedMeanOrSum` in
    /// `reference/reduce.h`, with and without `keep_dims`) of `count`
    /// inputs: `QuantizeMultiplier(input_scale / output_scale)` in double,
    /// with `1 / count` folded in: the mantissa shifted left by
    /// `k = min(floor(log2(count)), 32, 31 + shift)`, divided by `count`
    /// (truncating), and the exponent lowered by `k`; applied with double
    /// rounding to `Σ q - count * input_zero_point`. The mantissa is then
    /// below `2^30` (not normalized), as LiteRT's is. `count` is at least 1.
    ///
    /// ```
    /// use small_ir::quant::{Multiplier, Rescale};
    /// // 25 inputs, scale 0.5 in and out: the mean, rounded twice (62 / 25
    /// // = 2.48 gives 3, as in LiteRT).
    /// let m = Rescale::mean(0.5, 0.5, 25);
    /// assert_eq!((m.apply(50), m.apply(62), m.apply(-63)), (2, 3, -3));
    /// ```
    pub const fn mean(input_scale: f32, output_scale: f32, count: usize) -> Rescale {
        let (m0, s0) = quantize_multiplier(input_scale as f64 / output_scale as f64);
        let count = if count == 0 { 1 } else { count as i64 };
        let log2 = 63 - (count as u64).leading_zeros() as i32;
        let mut k = if log2 < 32 { log2 } else { 32 };
        if k > 31 + s0 {
            k = 31 + s0;
        }
        let k = if k < 0 { 0 } else { k };
        Rescale::DoubleRounding(Multiplier {
            multiplier: (((m0 as i64) << k) / count) as i32,
            shift: s0 - k,
        })
    }

    /// Rescales `acc`.
    ///
    /// ```
    /// use small_ir::quant::{Multiplier, Rescale};
    /// let quarter = Multiplier::from_real(0.25);
    /// assert_eq!(Rescale::DoubleRounding(quarter).apply(5), 2);
    /// assert_eq!(Rescale::SingleRounding(quarter).apply(5), 1);
    /// assert_eq!(Rescale::Real(0.25).apply(5), 1);
    /// assert_eq!(Rescale::Real(0.25).apply(-6), -2); // -1.5: away from zero
    /// ```
    pub const fn apply(self, acc: i32) -> i32 {
        match self {
            Rescale::DoubleRounding(m) => {
                multiply_by_quantized_multiplier(acc, m.multiplier, m.shift)
            }
            Rescale::SingleRounding(m) => {
                multiply_by_quantized_multiplier_single_rounding(acc, m.multiplier, m.shift)
            }
            Rescale::Logistic {
                input_scale,
                inverse_scale,
            } => {
                let y = crate::math::logistic(input_scale * acc as f32);
                // In 0..=inverse_scale: 256 for TFLite's output scale.
                round_f32(y * inverse_scale) as i32
            }
            Rescale::Real(scale) => mul_round_real(acc, scale),
        }
    }
}

/// `round((double)acc * scale)` (ties away from zero), saturated to `i32`:
/// LiteRT's reference int8 FULLY_CONNECTED output stage. For a positive
/// finite `scale` it is computed in integers, exactly as the `f64`
/// product rounds, so a core without a double-precision FPU (Cortex-M4:
/// software `f64`, about 500 instructions per output) pays a 64 x 32-bit
/// product and a few shifts. `scale = m * 2^e` with `m` its 53-bit
/// significand: `|acc| * m` is exact in 84 bits (two 64-bit products);
/// the `f64` product is
/// that rounded to 53 significant bits, to nearest even; then `round`
/// rounds half away from zero. Both roundings are symmetric, so the
/// magnitude is rounded and the sign applied after. Any other `scale`
/// (zero, negative, infinite, NaN) takes the `f64` path.
///
/// ```
/// use small_ir::quant::mul_round_real;
/// assert_eq!((mul_round_real(5, 0.5), mul_round_real(-5, 0.5), mul_round_real(7, 0.1)), (3, -3, 1));
/// assert_eq!(mul_round_real(i32::MAX, 4.0), i32::MAX);
/// ```
#[inline]
pub const fn mul_round_real(acc: i32, scale: f64) -> i32 {
    let bits = scale.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    // Zero, negative, infinite or NaN (decided on the bits: an f64
    // compare is a library call on a core without double precision).
    if bits == 0 || bits >> 63 == 1 || biased == 0x7ff {
        return saturate_i64(round_f64(acc as f64 * scale));
    }
    // scale = m * 2^e, exactly (subnormal: no implicit bit).
    let (m, e) = if biased == 0 {
        (bits & ((1 << 52) - 1), -1074)
    } else {
        ((bits & ((1 << 52) - 1)) | (1 << 52), biased - 1075)
    };
    // p = |acc| * m < 2^84 as hi * 2^32 + lo, in 64-bit products.
    let a = acc.unsigned_abs() as u64;
    let low = a * (m & 0xffff_ffff);
    let (hi, lo) = (a * (m >> 32) + (low >> 32), low as u32);
    if hi == 0 && lo == 0 {
        return 0;
    }
    // The f64 product: p to 53 significant bits, to nearest even. p has
    // at most 84 bits, so at most 31 go: q and the remainder fit 64 and
    // 32 bits.
    let len = if hi == 0 {
        32 - lo.leading_zeros() as i32
    } else {
        96 - hi.leading_zeros() as i32
    };
    let (q, t) = if len <= 53 {
        ((hi << 32) | lo as u64, e)
    } else {
        let k = (len - 53) as u32; // 1..=31
        let q = (hi << (32 - k)) | (lo >> k) as u64;
        let (rem, half) = (lo & ((1 << k) - 1), 1u32 << (k - 1));
        let up = rem > half || (rem == half && q & 1 == 1);
        (q + up as u64, e + k as i32)
    };
    // `round` of q * 2^t, half away from zero (q <= 2^53; q << 10 fits).
    let magnitude: u64 = if t >= 0 {
        if t > 10 { u64::MAX } else { q << t }
    } else if t < -60 {
        0
    } else {
        let sh = (-t) as u32;
        (q + (1u64 << (sh - 1))) >> sh
    };
    if acc < 0 {
        if magnitude > 1 << 31 {
            i32::MIN
        } else {
            (magnitude as i64).wrapping_neg() as i32
        }
    } else if magnitude > i32::MAX as u64 {
        i32::MAX
    } else {
        magnitude as i32
    }
}

/// `r` saturated to `i32`.
const fn saturate_i64(r: i64) -> i32 {
    if r > i32::MAX as i64 {
        i32::MAX
    } else if r < i32::MIN as i64 {
        i32::MIN
    } else {
        r as i32
    }
}

/// The most filter taps an `i8` depthwise kernel may sum in `f32`
/// (`arch_defs::Dot::Mac`): each product `(x - zp_in) * w` has magnitude
/// at most `255 * 128 = 32640`, and 512 of them sum to at most
/// 16 711 680, below `2^24 = 16 777 216`: every partial sum is an integer
/// `f32` holds exactly, in any order. A layer with more taps sums in
/// `i32`.
pub const MAC_TAPS: usize = 512;

/// The per-channel data of an int8 layer, as the packer writes it and the
/// kernels' STORE reads it: rows of [`out_padded`](crate::geometry::out_padded)
/// `i32`s, one value per output channel, row `r` at `r * out_padded`
/// ([`acc_len`](crate::geometry::acc_len) counts them).
///
/// | row | holds |
/// | --- | --- |
/// | [`row::BIAS`] | the bias, minus the zero-point and offset compensation of every tap (see the packer) |
/// | [`row::RESCALE`] .. `+ 3` | [`Rescale::to_words`] |
/// | [`row::ZERO_POINT`] | the output zero point |
/// | [`row::MIN`], [`row::MAX`] | the clamp of the fused activation |
/// | [`row::SKIP_ZERO_POINT`] .. [`row::ADD_MAX`] | a residual layer's ADD ([`row::add_words`]) |
/// | [`row::NEG_INPUT_ZERO_POINT`] | minus the input zero point (channelwise layers) |
/// | [`row::STEP`] .. [`row::CORRECTION`] | the double roundings as [`Step`](crate::step::Step)s, for the vector output stages ([`derive_steps`](crate::step::derive_steps)) |
/// | [`row::CORRECTION`] `+ tap` | what a border tile of a broadcast layer adds back for each tap it skips |
pub mod row {
    /// The bias, compensated.
    pub const BIAS: usize = 0;
    /// The first of the three words of the [`Rescale`](super::Rescale).
    pub const RESCALE: usize = 1;
    /// The output zero point.
    pub const ZERO_POINT: usize = 4;
    /// The smallest output.
    pub const MIN: usize = 5;
    /// The largest output.
    pub const MAX: usize = 6;
    /// A residual layer's ADD: the convolution's output zero point (its
    /// first input), then the skip's; the rest of [`add_words`].
    pub const CONV_ZERO_POINT: usize = 7;
    /// The skip tensor's zero point.
    pub const SKIP_ZERO_POINT: usize = 8;
    /// The ADD's output zero point.
    pub const ADD_ZERO_POINT: usize = 9;
    /// The ADD's clamp, smallest.
    pub const ADD_MIN: usize = 10;
    /// The ADD's clamp, largest.
    pub const ADD_MAX: usize = 11;
    /// `left_shift`, then the three multipliers and shifts of the
    /// [`AddRescale`](super::AddRescale) (convolution, skip, output).
    pub const ADD_RESCALE: usize = 12;
    /// Minus the input's zero point: a channelwise layer (depthwise) adds
    /// it to each input it widens, and needs no border correction.
    pub const NEG_INPUT_ZERO_POINT: usize = 19;
    /// The [`Step`](crate::step::Step) of the double rounding at
    /// [`RESCALE`] (six rows: round, limit and shift, each a pair of rows
    /// of 64-bit words; see [`derive_steps`](crate::step::derive_steps)),
    /// where the variant word is [`STEPPED`].
    pub const STEP: usize = 20;
    /// A residual layer's ADD, where the variant word is [`STEPPED`]: the
    /// left shift of the convolution's [`Step`](crate::step::Step), then
    /// the skip's.
    pub const ADD_LEFT1: usize = 26;
    /// The left shift of the skip's step.
    pub const ADD_LEFT2: usize = 27;
    /// The ADD's three steps (convolution, skip, output), six rows each,
    /// as at [`STEP`].
    pub const ADD_STEP: usize = 28;
    /// The first tap's border correction (broadcast layers with weights).
    pub const CORRECTION: usize = 46;
    /// The variant word ([`RESCALE`]) of a double rounding whose
    /// [`Step`](crate::step::Step) rows are written (by
    /// [`derive_steps`](crate::step::derive_steps)); [`Rescale::from_words`](super::Rescale::from_words)
    /// reads it as the double rounding it is.
    pub const STEPPED: i32 = 3;
    /// The variant word of a [`Rescale::Logistic`](super::Rescale::Logistic).
    pub const LOGISTIC: i32 = 4;

    /// The seven words at [`ADD_RESCALE`] of `r`.
    pub const fn add_words(r: super::AddRescale) -> [i32; 7] {
        [
            r.left_shift,
            r.input1.multiplier,
            r.input1.shift,
            r.input2.multiplier,
            r.input2.shift,
            r.output.multiplier,
            r.output.shift,
        ]
    }

    /// The inverse of [`add_words`].
    pub const fn add_rescale(w: [i32; 7]) -> super::AddRescale {
        use super::Multiplier;
        super::AddRescale {
            left_shift: w[0],
            input1: Multiplier {
                multiplier: w[1],
                shift: w[2],
            },
            input2: Multiplier {
                multiplier: w[3],
                shift: w[4],
            },
            output: Multiplier {
                multiplier: w[5],
                shift: w[6],
            },
        }
    }
}

impl Rescale {
    /// Three `i32` words that [`Rescale::from_words`] turns back into
    /// `self`: the variant (0, 1, 2, [`row::LOGISTIC`]), then the multiplier
    /// and shift, the `f64`'s bits (low, high), or the two `f32`s' bits.
    ///
    /// ```
    /// use small_ir::quant::{Multiplier, Rescale};
    /// for r in [Rescale::Real(0.3), Rescale::SingleRounding(Multiplier::from_real(0.3))] {
    ///     assert_eq!(Rescale::from_words(r.to_words()), r);
    /// }
    /// ```
    pub const fn to_words(self) -> [i32; 3] {
        match self {
            Rescale::DoubleRounding(m) => [0, m.multiplier, m.shift],
            Rescale::SingleRounding(m) => [1, m.multiplier, m.shift],
            Rescale::Real(x) => {
                let bits = x.to_bits();
                [2, bits as u32 as i32, (bits >> 32) as u32 as i32]
            }
            Rescale::Logistic {
                input_scale,
                inverse_scale,
            } => [
                row::LOGISTIC,
                input_scale.to_bits() as i32,
                inverse_scale.to_bits() as i32,
            ],
        }
    }

    /// The inverse of [`Rescale::to_words`] (an unknown variant reads as
    /// double rounding).
    pub const fn from_words(w: [i32; 3]) -> Rescale {
        match w[0] {
            1 => Rescale::SingleRounding(Multiplier {
                multiplier: w[1],
                shift: w[2],
            }),
            2 => Rescale::Real(f64::from_bits(
                (w[1] as u32 as u64) | ((w[2] as u32 as u64) << 32),
            )),
            row::LOGISTIC => Rescale::Logistic {
                input_scale: f32::from_bits(w[1] as u32),
                inverse_scale: f32::from_bits(w[2] as u32),
            },
            _ => Rescale::DoubleRounding(Multiplier {
                multiplier: w[1],
                shift: w[2],
            }),
        }
    }
}

/// An int8 output: `acc` rescaled, plus the zero point, clamped to
/// `min..=max` (TFLite's output stage of every multiply-and-sum operator).
///
/// ```
/// use small_ir::quant::{output, Rescale};
/// assert_eq!(output(1000, Rescale::Real(0.25), -3, -128, 127), 127);
/// assert_eq!(output(-10, Rescale::Real(0.25), -3, -128, 127), -6);
/// ```
pub const fn output(acc: i32, rescale: Rescale, zero_point: i32, min: i32, max: i32) -> i8 {
    let v = rescale.apply(acc).wrapping_add(zero_point);
    clamp_i8(v, min, max)
}

/// `v` clamped to `min..=max`, as an `i8` (`min..=max` must lie in `i8`).
#[inline(always)]
pub const fn clamp_i8(v: i32, min: i32, max: i32) -> i8 {
    let v = if v < min { min } else { v };
    (if v > max { max } else { v }) as i8
}

/// The rounding average of `reference_integer_ops::AveragePool`:
/// `sum / count` rounded to nearest, ties away from zero
/// (`(sum ± count / 2) / count`, C's truncating division). `count` must be
/// at least 1 (0 returns 0 instead of panicking).
///
/// ```
/// use small_ir::quant::rounding_average;
/// assert_eq!((rounding_average(5, 2), rounding_average(-5, 2), rounding_average(-4, 3)), (3, -3, -1));
/// ```
pub const fn rounding_average(sum: i32, count: i32) -> i32 {
    if count <= 0 {
        return 0;
    }
    if sum > 0 {
        sum.saturating_add(count / 2) / count
    } else {
        sum.saturating_sub(count / 2) / count
    }
}

/// Per-tensor quantization of an int8 tensor: real value =
/// `scale * (q - zero_point)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quant {
    /// The step between two consecutive `q`.
    pub scale: f32,
    /// The `q` of the real value 0.
    pub zero_point: i32,
}

impl Quant {
    /// `scale`, `zero_point`.
    pub const fn new(scale: f32, zero_point: i32) -> Self {
        Quant { scale, zero_point }
    }
}

/// TFLite's `CalculateActivationRangeQuantized` for an int8 output: the
/// clamp `(min, max)` of a fused activation, `zero_point +
/// round(f / scale)` (in `f32`, as TFLite) of its bounds, within
/// `-128..=127`. `None` → `(-128, 127)`, `Relu` → `(max(-128, q(0)), 127)`,
/// `Relu6` → `(max(-128, q(0)), min(127, q(6)))`, `Logistic` → `(-128, 127)`.
///
/// ```
/// use small_ir::{Activation, quant::{Quant, activation_range}};
/// assert_eq!(activation_range(Activation::Relu, Quant::new(0.04, -128)), (-128, 127));
/// assert_eq!(activation_range(Activation::Relu6, Quant::new(0.05, 0)), (0, 120));
/// ```
pub const fn activation_range(act: Activation, out: Quant) -> (i8, i8) {
    const fn q(f: f32, out: Quant) -> i64 {
        out.zero_point as i64 + round_f32(f / out.scale)
    }
    const fn clamp(v: i64) -> i8 {
        if v < -128 {
            -128
        } else if v > 127 {
            127
        } else {
            v as i8
        }
    }
    match act {
        Activation::None => (-128, 127),
        Activation::Relu => (clamp(q(0.0, out)), 127),
        Activation::Relu6 => (clamp(q(0.0, out)), clamp(q(6.0, out))),
        // The rescale computes it (`Rescale::Logistic`); nothing to clamp.
        Activation::Logistic => (-128, 127),
    }
}

/// TFLite's int8 `ADD` arithmetic: the multipliers of `add.cc`'s `Prepare`
/// and the sum of `reference_integer_ops::AddFunc`, without the zero
/// points and the clamp.
///
/// Both inputs are shifted left by `left_shift` (20 for int8), scaled to
/// the common scale `2 * max(s1, s2)` and summed, and the sum is scaled to
/// the output: all three with
/// [`multiply_by_quantized_multiplier_smaller_than_one_exp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AddRescale {
    /// 20 for int8 inputs.
    pub left_shift: i32,
    /// `s1 / (2 max(s1, s2))`.
    pub input1: Multiplier,
    /// `s2 / (2 max(s1, s2))`.
    pub input2: Multiplier,
    /// `2 max(s1, s2) / (2^left_shift * s_out)`.
    pub output: Multiplier,
}

impl AddRescale {
    /// The multipliers for input scales `scale1`, `scale2` and output scale
    /// `output_scale`, computed in `f64` as TFLite does.
    pub const fn new(scale1: f32, scale2: f32, output_scale: f32) -> Self {
        const LEFT_SHIFT: i32 = 20;
        let max = if scale1 > scale2 { scale1 } else { scale2 };
        let twice_max = 2.0 * max as f64;
        AddRescale {
            left_shift: LEFT_SHIFT,
            input1: Multiplier::from_real(scale1 as f64 / twice_max),
            input2: Multiplier::from_real(scale2 as f64 / twice_max),
            output: Multiplier::from_real(
                twice_max / ((1i64 << LEFT_SHIFT) as f64 * output_scale as f64),
            ),
        }
    }

    /// The output, before its zero point and clamp, of `x1` and `x2`: the
    /// two inputs minus their zero points (each in `-255..=255` for int8).
    ///
    /// ```
    /// use small_ir::quant::AddRescale;
    /// let same = AddRescale::new(0.5, 0.5, 0.5);
    /// assert_eq!(same.apply(3, -7), -4);
    /// let half = AddRescale::new(1.0, 1.0, 2.0);
    /// assert_eq!((half.apply(3, 0), half.apply(-3, 0)), (2, -2)); // 1.5, -1.5
    /// ```
    pub const fn apply(&self, x1: i32, x2: i32) -> i32 {
        let s1 = multiply_by_quantized_multiplier_smaller_than_one_exp(
            x1.wrapping_shl(self.left_shift as u32),
            self.input1.multiplier,
            self.input1.shift,
        );
        let s2 = multiply_by_quantized_multiplier_smaller_than_one_exp(
            x2.wrapping_shl(self.left_shift as u32),
            self.input2.multiplier,
            self.input2.shift,
        );
        multiply_by_quantized_multiplier_smaller_than_one_exp(
            s1.wrapping_add(s2),
            self.output.multiplier,
            self.output.shift,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gemmlowp's literal form, which `saturating_rounding_doubling_high_mul`
    /// computes with a shift.
    fn srdhm_literal(a: i32, b: i32) -> i32 {
        if a == i32::MIN && b == i32::MIN {
            return i32::MAX;
        }
        let ab = a as i64 * b as i64;
        let nudge: i64 = if ab >= 0 { 1 << 30 } else { 1 - (1 << 30) };
        ((ab + nudge) / (1i64 << 31)) as i32
    }

    /// A xorshift64 generator from `seed` (not 0).
    fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// `Prepared` gives `multiply_by_quantized_multiplier`'s bits for every
    /// multiplier but `i32::MIN` and every shift, at the extremes of the
    /// accumulator and on random ones; a threshold without its sign term
    /// (ties of negative values rounded up) or a division by the wrong
    /// power fails it.
    #[test]
    fn prepared_equals_multiply_by_quantized_multiplier() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let edges = [
            0,
            1,
            -1,
            2,
            -2,
            3,
            -3,
            5,
            -5,
            1 << 20,
            -(1 << 20),
            i32::MAX,
            i32::MIN,
            i32::MIN + 1,
        ];
        let multipliers = [
            0,
            1,
            -1,
            1 << 30,
            (1 << 30) + 1,
            i32::MAX,
            i32::MIN + 1,
            1_518_500_250,
        ];
        assert_eq!(
            Prepared::new(Multiplier {
                multiplier: i32::MIN,
                shift: -1
            }),
            None
        );
        let mut checked = 0u32;
        for shift in -40..=31 {
            for round in 0..400 {
                let multiplier = match multipliers.get(round) {
                    Some(&m) => m,
                    None => match next() as i32 {
                        i32::MIN => 1 << 30,
                        m => m,
                    },
                };
                let m = Multiplier { multiplier, shift };
                let p = Prepared::new(m).expect("not i32::MIN");
                for i in 0..edges.len() + 8 {
                    let acc = match edges.get(i) {
                        Some(&a) => a,
                        // Small accumulators, as convolutions give, and any.
                        None if i % 2 == 0 => (next() as i32) >> 12,
                        None => next() as i32,
                    };
                    let want = multiply_by_quantized_multiplier(acc, multiplier, shift);
                    assert_eq!(p.apply(acc), want, "x {acc}, {m:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 600_000);
    }

    /// The `f64` form [`mul_round_real`] computes in integers.
    fn mul_round_f64(acc: i32, scale: f64) -> i32 {
        saturate_i64(round_f64(acc as f64 * scale))
    }

    #[test]
    fn mul_round_real_equals_the_f64_product_rounded() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let accs = [
            0,
            1,
            -1,
            2,
            -2,
            3,
            1000,
            -1000,
            i32::MAX,
            i32::MIN,
            i32::MIN + 1,
            1 << 30,
        ];
        let scales = [
            0.5,
            0.25,
            0.1,
            1.0,
            3.0,
            1e-300,
            5e-324,
            f64::MIN_POSITIVE,
            1e300,
            f64::MAX,
            0.0,
            -0.5,
            f64::INFINITY,
            f64::NAN,
            0.000_672_840_804 / 0.144_692_51,
        ];
        for &a in &accs {
            for &s in &scales {
                assert_eq!(mul_round_real(a, s), mul_round_f64(a, s), "{a} * {s:e}");
            }
        }
        // The f64 product rounds up to exactly n + 1/2 (then to n + 1),
        // where the exact product is just below it: the 53-bit rounding
        // decides (found by search; truncating there gives n).
        for (a, s, want) in [
            (2_041_642_190, 3.186160646494085e-07, 651),
            (2_096_206_525, 2.831304992717738e-07, 594),
            (-1_399_481_287, 4.155110935756299e-07, -582),
        ] {
            assert_eq!(mul_round_f64(a, s), want);
            assert_eq!(mul_round_real(a, s), want, "{a} * {s:e}");
        }
        for i in 0..400_000 {
            let r = next();
            // Realistic FC scales (2^-30 .. 2^4), and any bits.
            let s = if i % 4 == 0 {
                f64::from_bits(r >> 1)
            } else {
                (1.0 + (r >> 12) as f64 / (1u64 << 52) as f64)
                    * f64::powi(2.0, (r % 35) as i32 - 30)
            };
            let a = match i % 3 {
                0 => next() as i32,
                1 => (next() as i32) >> (r % 31),
                _ => (next() % 2001) as i32 - 1000,
            };
            assert_eq!(mul_round_real(a, s), mul_round_f64(a, s), "{a} * {s:e}");
            // Ties of the final rounding: an odd b times 2^-1.
            let b = ((next() % 4001) as i32 - 2000) | 1;
            assert_eq!(mul_round_real(b, 0.5), mul_round_f64(b, 0.5), "{b} * 0.5");
        }
    }

    #[test]
    fn srdhm_shift_form_equals_gemmlowp() {
        let edges = [
            i32::MIN,
            i32::MIN + 1,
            -(1 << 30) - 1,
            -(1 << 30),
            -(1 << 30) + 1,
            -3,
            -2,
            -1,
            0,
            1,
            2,
            3,
            (1 << 30) - 1,
            1 << 30,
            (1 << 30) + 1,
            i32::MAX - 1,
            i32::MAX,
        ];
        for &a in &edges {
            for &b in &edges {
                assert_eq!(
                    saturating_rounding_doubling_high_mul(a, b),
                    srdhm_literal(a, b),
                    "{a} {b}"
                );
            }
        }
        // Ties: ab = k * 2^31 +- 2^30 exactly, both signs.
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..200_000 {
            let x = next();
            let (a, b) = (x as i32, (x >> 32) as i32);
            assert_eq!(
                saturating_rounding_doubling_high_mul(a, b),
                srdhm_literal(a, b),
                "{a} {b}"
            );
            let small = (x >> 40) as i32 >> (x % 24);
            for t in [1 << 30, 3 << 29, 1 << 29] {
                for s in [1, -1] {
                    assert_eq!(
                        saturating_rounding_doubling_high_mul(small * s, t),
                        srdhm_literal(small * s, t)
                    );
                }
            }
        }
    }

    const MIN: i32 = i32::MIN;
    const MAX: i32 = i32::MAX;

    /// `2^e` for a normal exponent (`f64::powi` is not in `core`).
    fn pow2(e: i32) -> f64 {
        f64::from_bits(((e + 1023) as u64) << 52)
    }

    #[test]
    fn srdhm_rounds_half_up_and_saturates() {
        use saturating_rounding_doubling_high_mul as f;
        // The one overflow: (-1) * (-1) = +1 is not a Q31 value.
        assert_eq!(f(MIN, MIN), MAX);
        // -1 * (1 - 2^-31) = -(1 - 2^-31): exact.
        assert_eq!(f(MIN, MAX), -MAX);
        assert_eq!(f(MAX, MAX), MAX - 1); // (1 - 2^-31)^2 = 1 - 2^-30 + 2^-62
        assert_eq!(f(1 << 30, 1 << 30), 1 << 29); // 0.5 * 0.5
        // Ties: 1 * 0.5 = 0.5 ulp -> 1; -1 * 0.5 = -0.5 -> 0 (toward +inf).
        assert_eq!(f(1, 1 << 30), 1);
        assert_eq!(f(-1, 1 << 30), 0);
        assert_eq!(f(3, 1 << 30), 2); // 1.5 -> 2
        assert_eq!(f(-3, 1 << 30), -1); // -1.5 -> -1
        // Just past a tie rounds away: -0.5 - 2^-31 -> -1.
        assert_eq!(f(-2, (1 << 29) + 1), -1); // -2 * (0.25 + 2^-31) = -0.5 - 2^-30
        assert_eq!(f(0, MIN), 0);
        assert_eq!(f(MIN, 1 << 30), -(1 << 30)); // -1 * 0.5
    }

    #[test]
    fn rounding_divide_by_pot_ties_away_from_zero() {
        use rounding_divide_by_pot as f;
        assert_eq!((f(5, 1), f(-5, 1)), (3, -3)); // 2.5, -2.5
        assert_eq!((f(3, 1), f(-3, 1)), (2, -2)); // 1.5, -1.5
        assert_eq!((f(1, 1), f(-1, 1)), (1, -1)); // 0.5, -0.5
        assert_eq!((f(5, 2), f(-5, 2)), (1, -1)); // 1.25, -1.25
        assert_eq!((f(7, 2), f(-7, 2)), (2, -2)); // 1.75, -1.75
        // Exponent 0: the identity, at the extremes too.
        assert_eq!((f(MIN, 0), f(MAX, 0), f(-7, 0)), (MIN, MAX, -7));
        // Exponent 31.
        assert_eq!(f(MIN, 31), -1); // -1 exactly
        assert_eq!(f(MAX, 31), 1); // 1 - 2^-31
        assert_eq!((f(1 << 30, 31), f(-(1 << 30), 31)), (1, -1)); // +-0.5
        assert_eq!((f((1 << 30) - 1, 31), f(-(1 << 30) + 1, 31)), (0, 0));
        assert_eq!(f(-1, 31), 0);
        // Out of range: treated as 31, no panic.
        assert_eq!(f(MIN, 40), -1);
    }

    #[test]
    fn double_and_single_rounding() {
        let (m, shift) = quantize_multiplier(0.25);
        assert_eq!((m, shift), (1 << 30, -1));
        // 5 * 0.25 = 1.25: double rounding 2.5 -> 3, then 1.5 -> 2;
        // single rounding 1.25 -> 1.
        assert_eq!(multiply_by_quantized_multiplier(5, m, shift), 2);
        assert_eq!(
            multiply_by_quantized_multiplier_single_rounding(5, m, shift),
            1
        );
        // -5 * 0.25 = -1.25: -2.5 -> -2 (SRDHM: toward +inf), -1 -> -1 (away
        // from zero: -0.5 -> -1); single: -1.25 -> -1.
        assert_eq!(multiply_by_quantized_multiplier(-5, m, shift), -1);
        assert_eq!(
            multiply_by_quantized_multiplier_single_rounding(-5, m, shift),
            -1
        );
        // Ties of the final rounding: +-1.5.
        assert_eq!(multiply_by_quantized_multiplier(6, m, shift), 2);
        assert_eq!(multiply_by_quantized_multiplier(-6, m, shift), -2);
        assert_eq!(
            multiply_by_quantized_multiplier_single_rounding(6, m, shift),
            2
        );
        assert_eq!(
            multiply_by_quantized_multiplier_single_rounding(-6, m, shift),
            -1
        );
        // Shift 0 (multiplier in [0.5, 1)) and a left shift.
        assert_eq!(multiply_by_quantized_multiplier(100, 1 << 30, 0), 50);
        assert_eq!(multiply_by_quantized_multiplier(3, 1 << 30, 2), 6); // 3 * 2
        assert_eq!(
            multiply_by_quantized_multiplier_single_rounding(3, 1 << 30, 2),
            6
        );
        // Shift -31, the smallest: (1 - 2^-31) * 2^-31 * x.
        assert_eq!(multiply_by_quantized_multiplier(MAX, MAX, -31), 1);
        // 2^30 * (1 - 2^-31) * 2^-31 = 0.5 - 2^-32: the first rounding makes
        // it 0.5 exactly, the second rounds that away from zero.
        assert_eq!(multiply_by_quantized_multiplier(1 << 30, MAX, -31), 1);
        assert_eq!(
            multiply_by_quantized_multiplier_single_rounding(MAX, MAX, -31),
            1
        );
        assert_eq!(
            multiply_by_quantized_multiplier_single_rounding(1 << 30, MAX, -31),
            0
        );
        // Shift 30, the largest single rounding takes: x * m * 2^-1.
        assert_eq!(
            multiply_by_quantized_multiplier_single_rounding(3, 1 << 30, 30),
            3 << 29
        );
        // i32::MIN * i32::MIN saturates in the double-rounding form.
        assert_eq!(multiply_by_quantized_multiplier(MIN, MIN, 0), MAX);
        assert_eq!(multiply_by_quantized_multiplier(MIN, MIN, -31), 1);
        // The single-rounding form has no saturation: 2^62 >> 31 = 2^31
        // truncates to i32::MIN, as TFLite's static_cast does.
        assert_eq!(
            multiply_by_quantized_multiplier_single_rounding(MIN, MIN, 0),
            MIN
        );
    }

    #[test]
    fn smaller_and_greater_than_one() {
        // 0.375 = 0.75 * 2^-1
        let (m, s) = quantize_multiplier(0.375);
        assert_eq!((m, s), (3 << 29, -1));
        assert_eq!(
            multiply_by_quantized_multiplier_smaller_than_one_exp(8, m, s),
            3
        );
        assert_eq!(
            multiply_by_quantized_multiplier_smaller_than_one_exp(-4, m, s),
            -2
        ); // -1.5
        assert_eq!(
            multiply_by_quantized_multiplier_smaller_than_one_exp(4, m, 1),
            3
        ); // shift > 0 ignored
        // 12 = 0.75 * 2^4
        let (m, s) = quantize_multiplier(12.0);
        assert_eq!((m, s), (3 << 29, 4));
        assert_eq!(
            multiply_by_quantized_multiplier_greater_than_one(-3, m, s),
            -36
        );
        assert_eq!(
            multiply_by_quantized_multiplier_greater_than_one(5, m, -2),
            4
        ); // 3.75
    }

    #[test]
    fn quantize_multiplier_matches_frexp_and_round() {
        use quantize_multiplier as q;
        assert_eq!(q(0.5), (1 << 30, 0));
        assert_eq!(q(1.0), (1 << 30, 1));
        assert_eq!(q(0.75), (3 << 29, 0));
        assert_eq!(q(-0.5), (-(1 << 30), 0));
        assert_eq!(q(3.0), (3 << 29, 2));
        // A tie of round(q * 2^31) goes away from zero.
        assert_eq!(q(0.5 + pow2(-32)), ((1 << 30) + 1, 0));
        assert_eq!(q(0.5 + pow2(-33)), (1 << 30, 0)); // a quarter: down
        // Rounding up to 2^31 halves the mantissa and bumps the shift.
        assert_eq!(q(1.0 - pow2(-40)), (1 << 30, 1));
        assert_eq!(q(0.5 - pow2(-40)), (1 << 30, 0));
        // The smallest kept shift is -31; below it, flushed to zero.
        assert_eq!(q(pow2(-32)), (1 << 30, -31));
        assert_eq!(q(pow2(-33)), (0, 0));
        assert_eq!(q(f64::from_bits(1)), (0, 0)); // subnormal
        // Large multipliers keep their shift in the default build and
        // saturate under single rounding.
        assert_eq!(q(pow2(40)), (1 << 30, 41));
        assert_eq!(quantize_multiplier_single_rounding(pow2(40)), (MAX, 30));
        assert_eq!(quantize_multiplier_single_rounding(0.75), (3 << 29, 0));
        assert_eq!(
            (q(0.0), q(f64::NAN), q(f64::INFINITY)),
            ((0, 0), (0, 0), (0, 0))
        );
        // A real multiplier from the KWS model (FULLY_CONNECTED of op 011):
        // 0.0802361593 * 0.00838575512 / 0.14469251 = 0.0046502..., frexp
        // exponent -7; every result reconstructs the multiplier to 2^-31.
        let real = 0.080_236_16_f32 as f64 * 0.008_385_755_f32 as f64 / 0.144_692_5_f32 as f64;
        let (m, s) = q(real);
        assert_eq!(s, -7);
        assert!((m as f64 * pow2(s - 31) - real).abs() <= pow2(s - 32));
    }

    #[test]
    fn frexp_of_subnormals_and_powers() {
        assert_eq!(frexp(1.0), (0.5, 1));
        assert_eq!(frexp(-3.0), (-0.75, 2));
        assert_eq!(frexp(f64::MIN_POSITIVE), (0.5, -1021));
        assert_eq!(frexp(f64::from_bits(1)), (0.5, -1073));
        assert_eq!(frexp(f64::from_bits(3)), (0.75, -1072));
    }

    #[test]
    fn rounding_of_floats() {
        assert_eq!(
            (round_f64(0.5), round_f64(-0.5), round_f64(1.5)),
            (1, -1, 2)
        );
        assert_eq!(
            (
                round_f64(0.49999999999999994),
                round_f64(-0.49999999999999994)
            ),
            (0, 0)
        );
        assert_eq!(round_f64(4_503_599_627_370_497.0), 4_503_599_627_370_497);
        assert_eq!((round_f64(f64::NAN), round_f64(1e300)), (0, i64::MAX));
        assert_eq!(
            (round_f32(2.5), round_f32(-2.5), round_f32(0.49999997)),
            (3, -3, 0)
        );
        assert_eq!(round_f32(8_388_609.0), 8_388_609);
    }

    #[test]
    fn rescale_forms() {
        let m = Multiplier::from_real(0.25);
        assert_eq!(Rescale::DoubleRounding(m).apply(5), 2);
        assert_eq!(Rescale::SingleRounding(m).apply(5), 1);
        assert_eq!(Rescale::Real(0.25).apply(5), 1);
        assert_eq!(Rescale::Real(0.25).apply(6), 2); // 1.5
        assert_eq!(Rescale::Real(0.25).apply(-6), -2); // -1.5: away from zero
        assert_eq!(Rescale::Real(1e12).apply(MAX), MAX); // saturates
        assert_eq!(Rescale::Real(1e12).apply(MIN), MIN);
        // conv: in double, the product of the f32 scales is not rounded to f32.
        let r = Rescale::conv(0.5, 0.25, 0.5);
        assert_eq!(
            r,
            Rescale::DoubleRounding(Multiplier {
                multiplier: 1 << 30,
                shift: -1
            })
        );
        assert_eq!(
            Rescale::fully_connected(0.5, 0.25, 0.5),
            Rescale::Real(0.25)
        );
    }

    #[test]
    fn mean_folds_the_count_into_the_multiplier_as_litert_does() {
        // Expected values from the Python model of LiteRT's
        // QuantizedMeanOrSum that matched LiteRT 2.3's reference MEAN on
        // 14 400 outputs (5 window sizes, keep_dims on and off).
        let m = Rescale::mean(0.5, 0.5, 25);
        assert_eq!(
            m,
            Rescale::DoubleRounding(Multiplier {
                multiplier: 687_194_767,
                shift: -3
            })
        );
        let got = [50, 62, 63, -63, 37, 38, -37, -38].map(|a| m.apply(a));
        assert_eq!(got, [2, 3, 3, -3, 2, 2, -2, -2]);
        let m = Rescale::mean(0.031_351_69, 0.003_946_934, 64);
        assert_eq!(
            m,
            Rescale::DoubleRounding(Multiplier {
                multiplier: 2_132_263_986,
                shift: -3
            })
        );
        let got = [0, 1, 100, -100, 1000, -777, 12345].map(|a| m.apply(a));
        assert_eq!(got, [0, 0, 12, -12, 124, -96, 1532]);
        // One input, a multiplier of 900: k = 0, a left shift.
        let m = Rescale::mean(0.9, 0.001, 1);
        assert_eq!(
            m,
            Rescale::DoubleRounding(Multiplier {
                multiplier: 1_887_436_660,
                shift: 10
            })
        );
        assert_eq!([0, 1, -1, 2].map(|a| m.apply(a)), [0, 900, -900, 1800]);
    }

    #[test]
    fn averages_round_half_away() {
        assert_eq!(rounding_average(5, 2), 3); // 2.5
        assert_eq!(rounding_average(-5, 2), -3);
        assert_eq!(rounding_average(4, 3), 1); // 1.33
        assert_eq!(rounding_average(-4, 3), -1);
        assert_eq!(rounding_average(5, 3), 2); // 1.67
        assert_eq!(rounding_average(-5, 3), -2);
        assert_eq!(rounding_average(-128 * 64, 64), -128);
        assert_eq!(rounding_average(0, 9), 0);
        assert_eq!(rounding_average(7, 0), 0);
    }

    #[test]
    fn activation_ranges() {
        use Activation::*;
        assert_eq!(activation_range(None, Quant::new(0.1, 5)), (-128, 127));
        assert_eq!(activation_range(Relu, Quant::new(0.1, 5)), (5, 127));
        assert_eq!(activation_range(Relu, Quant::new(0.1, -128)), (-128, 127));
        // 6 / (6 / 255) = 255 -> -128 + 255 = 127.
        assert_eq!(
            activation_range(Relu6, Quant::new(6.0 / 255.0, -128)),
            (-128, 127)
        );
        assert_eq!(activation_range(Relu6, Quant::new(0.05, 0)), (0, 120));
        assert_eq!(activation_range(Relu6, Quant::new(0.01, 0)), (0, 127)); // 600 clamps
    }

    #[test]
    fn add_rescale() {
        // Equal scales: 0.5 for both inputs, 2^-19 for the output.
        let a = AddRescale::new(1.0, 1.0, 1.0);
        assert_eq!(
            a.input1,
            Multiplier {
                multiplier: 1 << 30,
                shift: 0
            }
        );
        assert_eq!(
            a.output,
            Multiplier {
                multiplier: 1 << 30,
                shift: -18
            }
        );
        for (x, y) in [(0, 0), (255, 255), (-255, -255), (17, -3)] {
            assert_eq!(a.apply(x, y), x + y);
        }
        // Different scales: 1 and 0.25, output 1: x + y / 4, rounded.
        let b = AddRescale::new(1.0, 0.25, 1.0);
        assert_eq!(b.apply(10, 4), 11);
        assert_eq!(b.apply(10, 2), 11); // 10.5 -> away from zero
        assert_eq!(b.apply(-10, -2), -11);
        assert_eq!(b.apply(0, 1), 0); // 0.25
    }
}
