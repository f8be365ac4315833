//! `sqrt`, `exp` and `logistic` for `f32` without `std`.
//!
//! `core` has no `f32::sqrt` or `f32::exp` on the supported toolchains
//! (rustc 1.95 / 1.96 report "no method named `sqrt` found for type `f32`"
//! in a `#![no_std]` crate), so small-rs brings its own. The reference
//! layers and the generated kernels (a LOGISTIC activation) call the same
//! functions with and without `std`, so they give the same bits
//! everywhere:
//!
//! * [`sqrt`] is **correctly rounded** (the IEEE 754 result, the same bits
//!   as `std`'s `f32::sqrt`): Newton's method in `f64`, then an exact
//!   check of the last bit. Verified exhaustively against `std` over
//!   every non-negative finite `f32` (the unit test samples).
//! * [`exp`] is accurate to within 0.5 ulp + 2^-45 relative (so it is
//!   almost always correctly rounded, and never off by more than 1 ulp):
//!   range reduction `x = k ln 2 + r`, a Taylor series for `e^r` in `f64`,
//!   scaling by `2^k`, and one rounding to `f32`. Over every finite `f32`
//!   it gives the same bits as `(x as f64).exp() as f32` with glibc.

/// Correctly rounded square root of `x` (NaN for negative `x` and NaN,
/// `x` itself for ±0 and +∞).
pub fn sqrt(x: f32) -> f32 {
    if x.is_nan() || x < 0.0 {
        return f32::NAN;
    }
    if x == 0.0 || x == f32::INFINITY {
        return x;
    }
    let xd = x as f64; // exact; f32 subnormals are normal f64s
    // Seed: halving the biased exponent in the bit pattern gives a value
    // within 6.1% of sqrt(x) (the classic bit trick, for f64; the worst
    // case, measured over [1, 4), repeats with every factor of 4).
    let mut r = f64::from_bits((xd.to_bits() >> 1) + (1023 << 51));
    // Newton for r^2 = x: the relative error e becomes e^2 / (2 (1 + e))
    // per step (0.061 -> 2e-3 -> 2e-6 -> 2e-12 -> 2e-24), so 6 steps reach
    // the f64 rounding level with margin.
    for _ in 0..6 {
        r = 0.5 * (r + xd / r);
    }
    // r is within an f64 ulp or two of sqrt(x), so `r as f32` is the
    // correctly rounded result or one of its neighbours. Fix the last bit
    // exactly: y is correct iff x lies strictly between the squares of the
    // midpoints from y to its neighbours. A midpoint has at most 25
    // significant bits, so its square (at most 50 bits) is exact in f64,
    // and it never equals x (an odd 25-bit significand squared has at
    // least 49 significant bits; x has 24). y is a normal f32 in
    // [2^-75, 2^64], so its neighbours exist and are finite.
    let y = r as f32;
    let up = f32::from_bits(y.to_bits() + 1);
    let mid_up = (y as f64 + up as f64) / 2.0;
    if mid_up * mid_up < xd {
        return up;
    }
    let down = f32::from_bits(y.to_bits() - 1);
    let mid_down = (y as f64 + down as f64) / 2.0;
    if mid_down * mid_down > xd {
        return down;
    }
    y
}

/// `e^x`, within 0.5 ulp + 2^-45 relative of the exact value (+∞ above
/// `ln(f32::MAX)`, 0 below `ln(2^-150)`, NaN for NaN).
pub const fn exp(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    // e^88.8 > f32::MAX; e^-104 < 2^-150, half the smallest subnormal.
    // Between these bounds the f64 computation below rounds to the right
    // f32 (including +∞ and 0) on its own; they only keep k small.
    if x > 88.8 {
        return f32::INFINITY;
    }
    if x < -104.0 {
        return 0.0;
    }
    let xd = x as f64;
    // k = round(x / ln 2) (half away from zero; `as` truncates), so
    // |r| <= ln(2) / 2 + tiny < 0.35, and |k| <= 151.
    let t = xd * core::f64::consts::LOG2_E;
    let k = (if t < 0.0 { t - 0.5 } else { t + 0.5 }) as i32;
    // The error of k * LN_2 (at most 151 * 2^-53 * ln 2 < 2^-45 absolute)
    // is the dominant error of the whole function, relative to e^x.
    let r = xd - k as f64 * core::f64::consts::LN_2;
    // e^r = 1 + r (1 + r/2 (1 + r/3 (... (1 + r/13)))): the Taylor series
    // to degree 13 in Horner form; the first omitted term is below
    // 0.35^14 / 14! < 3e-18.
    let (mut p, mut n) = (1.0f64, 13);
    while n >= 1 {
        p = 1.0 + r / n as f64 * p;
        n -= 1;
    }
    // 2^k as an f64 (k in -151..=128 is in the normal f64 range); the
    // product is exact, and the cast rounds once (to a subnormal, 0 or +∞
    // as needed).
    let scale = f64::from_bits(((k + 1023) as u64) << 52);
    (p * scale) as f32
}

/// The logistic function `1 / (1 + e^-x)`, as TFLite's LOGISTIC
/// computes it in `f32` (and fills its int8 table): [`exp`], one add,
/// one division.
///
/// ```
/// use small_ir::math::logistic;
/// assert_eq!(logistic(0.0), 0.5);
/// assert_eq!((logistic(-200.0), logistic(200.0)), (0.0, 1.0));
/// ```
pub const fn logistic(x: f32) -> f32 {
    1.0 / (1.0 + exp(-x))
}

#[cfg(test)]
mod tests {
    use super::{exp, sqrt};

    /// Distance in ulps between two finite f32 of the same sign.
    fn ulps(a: f32, b: f32) -> u32 {
        a.to_bits().abs_diff(b.to_bits())
    }

    #[test]
    // Millions of values: hours under Miri, and no pointer to check.
    #[cfg_attr(miri, ignore)]
    fn sqrt_is_bit_identical_to_std() {
        // Every 997th bit pattern of the non-negative finite floats
        // (subnormals, normals, both exponent parities; ~2 million values).
        // An exhaustive run over all 2^31 - 2^23 of them found no
        // difference either; it takes minutes, so the test samples.
        let mut bits = 0u32;
        while bits < f32::INFINITY.to_bits() {
            let x = f32::from_bits(bits);
            assert_eq!(sqrt(x).to_bits(), x.sqrt().to_bits(), "sqrt({x:e})");
            bits += 997;
        }
        // Perfect squares and their neighbours, where rounding is closest.
        for i in 1..5000u32 {
            let sq = (i * i) as f32;
            for x in [
                sq,
                f32::from_bits(sq.to_bits() - 1),
                f32::from_bits(sq.to_bits() + 1),
            ] {
                assert_eq!(sqrt(x).to_bits(), x.sqrt().to_bits(), "sqrt({x:e})");
            }
        }
        for x in [
            f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::MAX,
            1.0,
            2.0,
            4.0,
            0.25,
            1e-3,
        ] {
            assert_eq!(sqrt(x).to_bits(), x.sqrt().to_bits(), "sqrt({x:e})");
        }
        assert_eq!(sqrt(4.0), 2.0);
        assert_eq!(sqrt(9.0), 3.0);
        assert_eq!(sqrt(0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(sqrt(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(sqrt(f32::INFINITY), f32::INFINITY);
        assert!(sqrt(-1.0).is_nan());
        assert!(sqrt(f32::NAN).is_nan());
        assert!(sqrt(f32::NEG_INFINITY).is_nan());
    }

    #[test]
    // Millions of values: hours under Miri, and no pointer to check.
    #[cfg_attr(miri, ignore)]
    fn exp_is_within_one_ulp_of_f64_exp() {
        // Reference: std's f64 exp (error well below an f64 ulp) rounded
        // once to f32, i.e. the correctly rounded result except in cases
        // too close to a midpoint to matter. An exhaustive run over every
        // finite f32 of both signs (glibc's exp) found no difference at
        // all; it takes minutes, so the test samples every 97th bit
        // pattern of |x| in [2^-26, 104] (below, e^x rounds to 1; above,
        // to 0 or +inf), both signs: ~5.6 million values. Another libm may round its f64 result differently in
        // rare cases, hence the 1-ulp allowance.
        let mut exact = 0u64;
        let mut total = 0u64;
        let mut bits = (2.0f32).powi(-26).to_bits();
        while bits <= 104.0f32.to_bits() {
            for x in [f32::from_bits(bits), -f32::from_bits(bits)] {
                let want = (x as f64).exp() as f32;
                let got = exp(x);
                if want.is_infinite() || want == 0.0 {
                    assert_eq!(got, want, "exp({x:e})");
                } else {
                    assert!(ulps(got, want) <= 1, "exp({x:e}) = {got:e}, want {want:e}");
                }
                exact += u64::from(got == want);
                total += 1;
            }
            bits += 97;
        }
        assert!(
            exact * 100_000 >= total * 99_999,
            "{exact} of {total} exact"
        );
        // Tiny arguments: e^x = 1 + x + ... rounds to 1.
        for x in [1e-30f32, 1e-10, 2.0f32.powi(-27), -1e-30, f32::from_bits(1)] {
            assert_eq!(exp(x), 1.0, "exp({x:e})");
        }
    }

    #[test]
    fn exp_special_values() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-0.0), 1.0);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(-1e30), 0.0);
        assert_eq!(exp(-2000.0), 0.0);
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp(89.0), f32::INFINITY);
        assert_eq!(exp(88.72), (88.72f32 as f64).exp() as f32); // just below f32::MAX
        assert!(exp(88.8).is_infinite()); // e^88.8 > f32::MAX: rounded up by the cast
        assert!(exp(f32::NAN).is_nan());
        // Smallest subnormal 2^-149 = e^-103.279; e^-103.9 rounds to it,
        // e^-103.98 (below 2^-150) to 0.
        assert_eq!(exp(-103.9), f32::from_bits(1));
        assert_eq!(exp(-103.98), 0.0);
        assert_eq!(exp(1.0), core::f32::consts::E);
        assert_eq!(exp(core::f32::consts::LN_2), 2.0);
    }
}
