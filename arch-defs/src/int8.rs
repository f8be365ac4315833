//! The integer primitives of an arch, beyond the common [`Simd`] part:
//! the dot product COMPUTE calls and the output stages STORE calls.
//!
//! A broadcast kernel (convolution, pointwise, FC) reduces `DOT`
//! consecutive input channels per accumulator lane and step:
//!
//! ```text
//! x = A::group(input)            // DOT activations, in every lane
//! w = A::weights(packed)         // LANES x DOT weights
//! acc = A::dot(acc, x, w)        // acc[l] += Σ_j (x[j] + X_OFFSET) * w[l][j]
//! ```
//!
//! `X_OFFSET` is what an arch adds to each activation (AVX-512 VNNI's
//! `vpdpbusd` multiplies unsigned bytes: `x ^ 0x80 = x + 128`); the packer
//! folds `-(zp_in + X_OFFSET) * Σ w` into the bias, so the kernels never
//! subtract a zero point. A channelwise kernel widens `LANES` consecutive
//! bytes ([`Dot::widen`]) and multiplies lane by lane ([`Simd::fma`]).
//!
//! The output stages ([`Dot::requantize`], [`Dot::average`],
//! [`Dot::clamp`]) read the layer's per-channel rows
//! ([`small_ir::quant::row`]) at `rows + r * stride`. Their default
//! bodies are scalar, lane by lane, through `small_ir::quant`: bit-exact
//! on every arch by construction; an arch may override them with vector
//! code that gives the same bits.

use crate::Simd;
use small_ir::quant::{Rescale, clamp_i8, output, rounding_average, row};

/// Integer dot-product and output-stage primitives of `Int8<A>`.
///
/// # Safety
///
/// As [`Simd`]: the CPU supports the arch, and every pointer is valid for
/// what the function reads or writes (`group`: `DOT` bytes; `weights`:
/// `LANES * DOT` bytes; `widen` and the stores: `LANES` bytes; `rows`:
/// every row the function reads, `LANES` values each).
#[allow(clippy::missing_safety_doc)] // one contract for all: see the trait docs
pub trait Dot: Simd<Elem = i8> {
    /// Consecutive input channels one [`Dot::dot`] sums per lane: 1, 2 or
    /// 4, a divisor of [`small_ir::geometry::DOT_PACK`].
    const DOT: usize;
    /// Added to every activation before it is multiplied (0, or 128 for an
    /// unsigned-by-signed product); compensated in the bias at pack time.
    const X_OFFSET: i32;
    /// `DOT` activations, as [`Dot::dot`] takes them.
    type X: Copy;
    /// `LANES x DOT` weights, as [`Dot::dot`] takes them.
    type W: Copy;
    /// Reads `DOT` consecutive activations for every lane.
    unsafe fn group(p: *const i8) -> Self::X;
    /// Reads `LANES x DOT` weights, lane-major (`[LANES][DOT]`).
    unsafe fn weights(p: *const i8) -> Self::W;
    /// `acc[l] + Σ_j (x[j] + X_OFFSET) * w[l][j]`, wrapping in `i32`.
    unsafe fn dot(acc: Self::V, x: Self::X, w: Self::W) -> Self::V;
    /// `LANES` consecutive bytes, each widened to its lane.
    unsafe fn widen(p: *const i8) -> Self::V;

    /// Writes `LANES` outputs of a multiply-and-sum layer to `p`: each
    /// lane's sum rescaled, plus the output zero point, clamped
    /// ([`small_ir::quant::output`]).
    #[inline(always)]
    unsafe fn requantize(p: *mut i8, acc: Self::V, rows: *const i32, stride: usize) {
        let mut a = [0i32; 64];
        // SAFETY: LANES <= 64 (every arch's LANES divides CB); the caller
        // guarantees `rows` and `p` (see the trait).
        unsafe {
            Self::store(a.as_mut_ptr(), acc);
            for (l, acc) in a.iter().enumerate().take(Self::LANES) {
                let at = |r: usize| rows.add(r * stride + l).read();
                let words = [at(row::RESCALE), at(row::RESCALE + 1), at(row::RESCALE + 2)];
                let v = output(
                    *acc,
                    Rescale::from_words(words),
                    at(row::ZERO_POINT),
                    at(row::MIN),
                    at(row::MAX),
                );
                p.add(l).write(v);
            }
        }
    }

    /// Writes `LANES` averages: each lane's `sum / count`, rounded half
    /// away from zero, clamped ([`small_ir::quant::rounding_average`]).
    #[inline(always)]
    unsafe fn average(p: *mut i8, sum: Self::V, count: i32, rows: *const i32, stride: usize) {
        let mut a = [0i32; 64];
        // SAFETY: as `requantize`.
        unsafe {
            Self::store(a.as_mut_ptr(), sum);
            for (l, sum) in a.iter().enumerate().take(Self::LANES) {
                let at = |r: usize| rows.add(r * stride + l).read();
                let v = clamp_i8(rounding_average(*sum, count), at(row::MIN), at(row::MAX));
                p.add(l).write(v);
            }
        }
    }

    /// Writes `LANES` values, each clamped (max pooling).
    #[inline(always)]
    unsafe fn clamp(p: *mut i8, v: Self::V, rows: *const i32, stride: usize) {
        let mut a = [0i32; 64];
        // SAFETY: as `requantize`.
        unsafe {
            Self::store(a.as_mut_ptr(), v);
            for (l, v) in a.iter().enumerate().take(Self::LANES) {
                let at = |r: usize| rows.add(r * stride + l).read();
                p.add(l).write(clamp_i8(*v, at(row::MIN), at(row::MAX)));
            }
        }
    }
}

/// `Simd` and `Dot` of `Int8<$arch>` for a scalar arch (one `i32` lane):
/// the portable form every arch's integer kernels are checked against.
macro_rules! scalar_int8 {
    ($arch:ty) => {
        /// The `i8` element type on a scalar arch: each element widened to
        /// one `i32` accumulator, which wraps as TFLite's `int32` does.
        impl $crate::Simd for $crate::Int8<$arch> {
            type Elem = i8;
            type V = i32;
            const LANES: usize = 1;
            #[inline(always)]
            unsafe fn zero() -> i32 {
                0
            }
            #[inline(always)]
            unsafe fn splat(x: i32) -> i32 {
                x
            }
            #[inline(always)]
            unsafe fn load(p: *const i32) -> i32 {
                // SAFETY: the caller guarantees `p` is valid for one read.
                unsafe { p.read_unaligned() }
            }
            #[inline(always)]
            unsafe fn store(p: *mut i32, v: i32) {
                // SAFETY: the caller guarantees `p` is valid for one write.
                unsafe { p.write_unaligned(v) }
            }
            #[inline(always)]
            unsafe fn broadcast(p: *const i8) -> i32 {
                // SAFETY: as for `load`.
                i32::from(unsafe { p.read() })
            }
            #[inline(always)]
            unsafe fn fma(acc: i32, a: i32, b: i32) -> i32 {
                acc.wrapping_add(a.wrapping_mul(b))
            }
            #[inline(always)]
            unsafe fn max(a: i32, b: i32) -> i32 {
                a.max(b)
            }
            #[inline(always)]
            unsafe fn min(a: i32, b: i32) -> i32 {
                a.min(b)
            }
            #[inline(always)]
            unsafe fn add(a: i32, b: i32) -> i32 {
                a.wrapping_add(b)
            }
            #[inline(always)]
            unsafe fn mul(a: i32, b: i32) -> i32 {
                a.wrapping_mul(b)
            }
        }

        impl $crate::Dot for $crate::Int8<$arch> {
            const DOT: usize = 1;
            const X_OFFSET: i32 = 0;
            type X = i32;
            type W = i32;
            #[inline(always)]
            unsafe fn group(p: *const i8) -> i32 {
                // SAFETY: the caller guarantees `p` is valid for one read.
                i32::from(unsafe { p.read() })
            }
            #[inline(always)]
            unsafe fn weights(p: *const i8) -> i32 {
                // SAFETY: as `group`.
                i32::from(unsafe { p.read() })
            }
            #[inline(always)]
            unsafe fn dot(acc: i32, x: i32, w: i32) -> i32 {
                acc.wrapping_add(x.wrapping_mul(w))
            }
            #[inline(always)]
            unsafe fn widen(p: *const i8) -> i32 {
                // SAFETY: as `group`.
                i32::from(unsafe { p.read() })
            }
        }
    };
}
pub(crate) use scalar_int8;
