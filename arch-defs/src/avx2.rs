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
    use crate::{Dot, Int8, Simd};
    use core::arch::x86_64::*;

    crate::check_arch!(MACHINE, Avx2);
    crate::check_arch!(MACHINE, Int8<Avx2>);

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

    // SAFETY (every function below): the caller guarantees AVX2 is present
    // and that pointers are valid for what each function reads or writes
    // (`load`/`store`: 8 `i32`s; `broadcast`: 1 byte; `group`: 2;
    // `weights`: 16; `widen`: 8), unaligned: every load and store here is
    // an unaligned form.
    impl Simd for Int8<Avx2> {
        type Elem = i8;
        type V = __m256i;
        const LANES: usize = 8;
        #[inline(always)]
        unsafe fn zero() -> __m256i {
            _mm256_setzero_si256()
        }
        #[inline(always)]
        unsafe fn splat(x: i32) -> __m256i {
            _mm256_set1_epi32(x)
        }
        #[inline(always)]
        unsafe fn load(p: *const i32) -> __m256i {
            _mm256_loadu_si256(p.cast())
        }
        #[inline(always)]
        unsafe fn store(p: *mut i32, v: __m256i) {
            _mm256_storeu_si256(p.cast(), v)
        }
        #[inline(always)]
        unsafe fn broadcast(p: *const i8) -> __m256i {
            _mm256_set1_epi32(i32::from(p.read()))
        }
        #[inline(always)]
        unsafe fn fma(acc: __m256i, a: __m256i, b: __m256i) -> __m256i {
            _mm256_add_epi32(acc, _mm256_mullo_epi32(a, b))
        }
        #[inline(always)]
        unsafe fn max(a: __m256i, b: __m256i) -> __m256i {
            _mm256_max_epi32(a, b)
        }
        #[inline(always)]
        unsafe fn min(a: __m256i, b: __m256i) -> __m256i {
            _mm256_min_epi32(a, b)
        }
        #[inline(always)]
        unsafe fn add(a: __m256i, b: __m256i) -> __m256i {
            _mm256_add_epi32(a, b)
        }
        #[inline(always)]
        unsafe fn mul(a: __m256i, b: __m256i) -> __m256i {
            _mm256_mullo_epi32(a, b)
        }
    }

    /// Two channels per lane through `vpmaddwd` on bytes sign-extended to
    /// `i16`: each product is at most 128 * 128 = 16384 in magnitude, so
    /// the pair sums are exact and no activation offset is needed.
    impl Dot for Int8<Avx2> {
        const DOT: usize = 2;
        const X_OFFSET: i32 = 0;
        /// The pair `(x0, x1)` as `i16`s, in each of the 8 lanes.
        type X = __m256i;
        /// 16 `i16` weights, lane `l`'s pair in words `2l`, `2l + 1`.
        type W = __m256i;
        #[inline(always)]
        unsafe fn group(p: *const i8) -> __m256i {
            // `vpbroadcastw xmm, m16` (the two bytes in every word: a load
            // and a shuffle) and `vpmovsxbw ymm, xmm` (one shuffle): 3
            // uops, against 6 for the pair packed in a general register
            // (2 `movsx` loads, shift, or, `vmovd`, `vpbroadcastd`).
            _mm256_cvtepi8_epi16(_mm_set1_epi16(p.cast::<i16>().read_unaligned()))
        }
        #[inline(always)]
        unsafe fn weights(p: *const i8) -> __m256i {
            _mm256_cvtepi8_epi16(_mm_loadu_si128(p.cast()))
        }
        #[inline(always)]
        unsafe fn dot(acc: __m256i, x: __m256i, w: __m256i) -> __m256i {
            _mm256_add_epi32(acc, _mm256_madd_epi16(x, w))
        }
        #[inline(always)]
        unsafe fn widen(p: *const i8) -> __m256i {
            _mm256_cvtepi8_epi32(_mm_loadl_epi64(p.cast()))
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    extern crate std;
    use super::{Avx2, available};
    use crate::Int8;

    #[target_feature(enable = "avx2,fma")]
    unsafe fn check() {
        // SAFETY: the caller guarantees AVX2.
        unsafe {
            crate::int8::check::check_dot::<Int8<Avx2>>(200);
            crate::int8::check::check_output_stages::<Int8<Avx2>>(20_000);
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn time() {
        // SAFETY: the caller guarantees AVX2.
        unsafe { crate::int8::check::time_output_stages::<Int8<Avx2>>("avx2") }
    }

    /// Scalar against vector output stages, printed (`cargo test --release
    /// -p arch-defs -- --ignored --nocapture output_stage_timing`).
    #[test]
    #[ignore = "a timing, not a check: run it in release mode"]
    fn output_stage_timing() {
        if !available() {
            std::eprintln!("avx2: not available on this CPU, not timed");
            return;
        }
        // SAFETY: the CPU has AVX2 and FMA.
        unsafe { time() }
    }

    #[test]
    fn int8_matches_reference() {
        if !available() {
            std::eprintln!("avx2: not available on this CPU, Int8<Avx2> not run");
            return;
        }
        // SAFETY: the CPU has AVX2 and FMA.
        unsafe { check() }
    }
}
