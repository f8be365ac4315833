//! `avx512`: x86_64 with AVX-512F (Skylake-SP and later, Zen 4, Zen 5).
//!
//! 32 zmm registers of 16 `f32`; two 512-bit FMA pipes, latency 4 (Zen 5,
//! Sapphire Rapids). FMAs take broadcast operands from memory (`{1to16}`).

use crate::Machine;

/// The blocking model's numbers of AVX-512F.
pub const MACHINE: Machine = Machine {
    cfg: &[("target_arch", "x86_64")],
    target_features: &["avx512f", "avx2", "fma"],
    vector_regs: 32,
    lanes: 16,
    fma_latency: 4,
    fma_per_cycle: 2,
    loads_per_cycle: 2,
    issue_per_cycle: 4,
    broadcast_from_memory: true,
    int8_dot: 4,
    int8_x_offset: 128,
};

/// True if the running CPU has AVX-512F (and AVX2 + FMA).
pub fn available() -> bool {
    #[cfg(all(target_arch = "x86_64", feature = "std"))]
    return std::arch::is_x86_feature_detected!("avx512f") && super::avx2::available();
    #[cfg(all(target_arch = "x86_64", not(feature = "std")))]
    return cfg!(all(
        target_feature = "avx512f",
        target_feature = "avx2",
        target_feature = "fma"
    ));
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// AVX-512F.
#[derive(Debug, Clone, Copy)]
pub struct Avx512;

#[cfg(target_arch = "x86_64")]
// Every primitive is an `unsafe fn` whose body is one intrinsic call; the
// one safety argument below covers them all, so the bodies need no blocks.
#[allow(unsafe_op_in_unsafe_fn)]
mod imp {
    use super::{Avx512, MACHINE};
    use crate::Simd;
    use core::arch::x86_64::*;

    crate::check_arch!(MACHINE, Avx512);

    // SAFETY (every function below): the caller guarantees AVX-512F is present
    // and that pointers are valid for 16 (broadcast: 1) unaligned f32s.
    impl Simd for Avx512 {
        type Elem = f32;
        type V = __m512;
        const LANES: usize = 16;
        #[inline(always)]
        unsafe fn zero() -> __m512 {
            _mm512_setzero_ps()
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> __m512 {
            _mm512_set1_ps(x)
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> __m512 {
            _mm512_loadu_ps(p)
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: __m512) {
            _mm512_storeu_ps(p, v)
        }
        #[inline(always)]
        unsafe fn broadcast(p: *const f32) -> __m512 {
            _mm512_set1_ps(p.read_unaligned())
        }
        #[inline(always)]
        unsafe fn fma(acc: __m512, a: __m512, b: __m512) -> __m512 {
            _mm512_fmadd_ps(a, b, acc)
        }
        #[inline(always)]
        unsafe fn max(a: __m512, b: __m512) -> __m512 {
            _mm512_max_ps(a, b)
        }
        #[inline(always)]
        unsafe fn min(a: __m512, b: __m512) -> __m512 {
            _mm512_min_ps(a, b)
        }
        #[inline(always)]
        unsafe fn add(a: __m512, b: __m512) -> __m512 {
            _mm512_add_ps(a, b)
        }
        #[inline(always)]
        unsafe fn mul(a: __m512, b: __m512) -> __m512 {
            _mm512_mul_ps(a, b)
        }
    }
}
