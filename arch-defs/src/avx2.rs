//! `avx2`: x86_64 with AVX2 and FMA (Haswell and later, Zen 1-5).
//!
//! 16 ymm registers of 8 `f32`; two FMA pipes with a latency of 4 cycles
//! (Zen 3: 4 / 2 per cycle; Skylake: 4 / 2).

use crate::Machine;

/// The blocking model's numbers of AVX2 + FMA.
pub const MACHINE: Machine = Machine {
    cfg: &[("target_arch", "x86_64")],
    target_features: &["avx2", "fma"],
    vector_regs: 16,
    lanes: 8,
    fma_latency: 4,
    fma_per_cycle: 2,
    loads_per_cycle: 2,
    issue_per_cycle: 4,
    broadcast_from_memory: false,
    int8_dot: 2,
    int8_x_offset: 0,
};

/// True if the running CPU has AVX2 and FMA.
pub fn available() -> bool {
    #[cfg(all(target_arch = "x86_64", feature = "std"))]
    return std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma");
    #[cfg(all(target_arch = "x86_64", not(feature = "std")))]
    return cfg!(all(target_feature = "avx2", target_feature = "fma"));
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// AVX2 + FMA.
#[derive(Debug, Clone, Copy)]
pub struct Avx2;

#[cfg(target_arch = "x86_64")]
// Every primitive is an `unsafe fn` whose body is one intrinsic call; the
// one safety argument below covers them all, so the bodies need no blocks.
#[allow(unsafe_op_in_unsafe_fn)]
mod imp {
    use super::{Avx2, MACHINE};
    use crate::Simd;
    use core::arch::x86_64::*;

    crate::check_arch!(MACHINE, Avx2);

    // SAFETY (every function below): the caller guarantees AVX2+FMA are present
    // and that pointers are valid for 8 (broadcast: 1) unaligned f32s.
    impl Simd for Avx2 {
        type Elem = f32;
        type V = __m256;
        const LANES: usize = 8;
        #[inline(always)]
        unsafe fn zero() -> __m256 {
            _mm256_setzero_ps()
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> __m256 {
            _mm256_set1_ps(x)
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> __m256 {
            _mm256_loadu_ps(p)
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: __m256) {
            _mm256_storeu_ps(p, v)
        }
        #[inline(always)]
        unsafe fn broadcast(p: *const f32) -> __m256 {
            _mm256_broadcast_ss(&*p)
        }
        #[inline(always)]
        unsafe fn fma(acc: __m256, a: __m256, b: __m256) -> __m256 {
            _mm256_fmadd_ps(a, b, acc)
        }
        #[inline(always)]
        unsafe fn max(a: __m256, b: __m256) -> __m256 {
            _mm256_max_ps(a, b)
        }
        #[inline(always)]
        unsafe fn min(a: __m256, b: __m256) -> __m256 {
            _mm256_min_ps(a, b)
        }
        #[inline(always)]
        unsafe fn add(a: __m256, b: __m256) -> __m256 {
            _mm256_add_ps(a, b)
        }
        #[inline(always)]
        unsafe fn mul(a: __m256, b: __m256) -> __m256 {
            _mm256_mul_ps(a, b)
        }
    }
}
