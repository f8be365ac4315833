//! `avx512`: x86_64 with AVX-512 F, BW and VNNI (Cascade Lake, Ice Lake
//! and later, Zen 4, Zen 5). A CPU with AVX-512F but no VNNI (Skylake-SP)
//! runs `avx2`.
//!
//! 32 zmm registers of 16 `f32`; two 512-bit FMA pipes, latency 4 (Zen 5,
//! Sapphire Rapids). FMAs take broadcast operands from memory (`{1to16}`).
//!
//! `Int8<Avx512>` sums 4 channels per lane and step with VNNI's
//! `vpdpbusd` (unsigned bytes times signed bytes, into `i32`): the
//! activations enter with their top bit flipped (`x + 128`), which the
//! packer compensates in the bias (`X_OFFSET = 128`).

use crate::Machine;

/// The blocking model's numbers of AVX-512 F/BW/VNNI.
pub const MACHINE: Machine = Machine {
    cfg: &[("target_arch", "x86_64")],
    target_features: &["avx512f", "avx512bw", "avx512vnni", "avx2", "fma"],
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

/// True if the running CPU has AVX-512 F, BW and VNNI (and AVX2 + FMA).
pub fn available() -> bool {
    #[cfg(all(target_arch = "x86_64", feature = "std"))]
    return std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vnni")
        && super::avx2::available();
    #[cfg(all(target_arch = "x86_64", not(feature = "std")))]
    return cfg!(all(
        target_feature = "avx512f",
        target_feature = "avx512bw",
        target_feature = "avx512vnni",
        target_feature = "avx2",
        target_feature = "fma"
    ));
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// AVX-512 F/BW/VNNI.
#[derive(Debug, Clone, Copy)]
pub struct Avx512;

#[cfg(target_arch = "x86_64")]
// Every primitive is an `unsafe fn` whose body is one intrinsic call; the
// one safety argument below covers them all, so the bodies need no blocks.
#[allow(unsafe_op_in_unsafe_fn)]
mod imp {
    use super::{Avx512, MACHINE};
    use crate::{Dot, Int8, Simd};
    use core::arch::x86_64::*;

    crate::check_arch!(MACHINE, Avx512);
    crate::check_arch!(MACHINE, Int8<Avx512>);

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

    // SAFETY (every function below): the caller guarantees AVX-512 F, BW
    // and VNNI are present and that pointers are valid for what each
    // function reads or writes (`load`/`store`: 16 `i32`s; `broadcast`: 1
    // byte; `group`: 4; `weights`: 64; `widen`: 16), unaligned: every load
    // and store here is an unaligned form.
    impl Simd for Int8<Avx512> {
        type Elem = i8;
        type V = __m512i;
        const LANES: usize = 16;
        #[inline(always)]
        unsafe fn zero() -> __m512i {
            _mm512_setzero_si512()
        }
        #[inline(always)]
        unsafe fn splat(x: i32) -> __m512i {
            _mm512_set1_epi32(x)
        }
        #[inline(always)]
        unsafe fn load(p: *const i32) -> __m512i {
            _mm512_loadu_si512(p.cast())
        }
        #[inline(always)]
        unsafe fn store(p: *mut i32, v: __m512i) {
            _mm512_storeu_si512(p.cast(), v)
        }
        #[inline(always)]
        unsafe fn broadcast(p: *const i8) -> __m512i {
            _mm512_set1_epi32(i32::from(p.read()))
        }
        #[inline(always)]
        unsafe fn fma(acc: __m512i, a: __m512i, b: __m512i) -> __m512i {
            _mm512_add_epi32(acc, _mm512_mullo_epi32(a, b))
        }
        #[inline(always)]
        unsafe fn max(a: __m512i, b: __m512i) -> __m512i {
            _mm512_max_epi32(a, b)
        }
        #[inline(always)]
        unsafe fn min(a: __m512i, b: __m512i) -> __m512i {
            _mm512_min_epi32(a, b)
        }
        #[inline(always)]
        unsafe fn add(a: __m512i, b: __m512i) -> __m512i {
            _mm512_add_epi32(a, b)
        }
        #[inline(always)]
        unsafe fn mul(a: __m512i, b: __m512i) -> __m512i {
            _mm512_mullo_epi32(a, b)
        }
    }

    /// Four channels per lane through VNNI's `vpdpbusd`, which multiplies
    /// the unsigned bytes of its first source by the signed bytes of its
    /// second and adds each lane's 4 products (each in -32640..=32385, so
    /// the sum is exact) to the accumulator, wrapping, without saturation.
    impl Dot for Int8<Avx512> {
        const DOT: usize = 4;
        const X_OFFSET: i32 = 128;
        /// The 4 activations as `x + 128` (unsigned), in each of the 16
        /// lanes.
        type X = __m512i;
        /// 64 weight bytes, lane `l`'s 4 in bytes `4l..4l + 4`.
        type W = __m512i;
        #[inline(always)]
        unsafe fn group(p: *const i8) -> __m512i {
            // The 4 bytes as one word in every lane, each byte's top bit
            // flipped: `x ^ 0x80` is `x + 128` as an unsigned byte. LLVM
            // narrows the xor of two splats to a splat of the xor: `vmovd`
            // load, `vpxor xmm`, `vpbroadcastd zmm, xmm` (the constant
            // hoisted out of loops).
            let x = _mm512_set1_epi32(p.cast::<i32>().read_unaligned());
            _mm512_xor_si512(x, _mm512_set1_epi32(0x8080_8080_u32 as i32))
        }
        #[inline(always)]
        unsafe fn weights(p: *const i8) -> __m512i {
            _mm512_loadu_si512(p.cast())
        }
        #[inline(always)]
        unsafe fn dot(acc: __m512i, x: __m512i, w: __m512i) -> __m512i {
            _mm512_dpbusd_epi32(acc, x, w)
        }
        #[inline(always)]
        unsafe fn widen(p: *const i8) -> __m512i {
            _mm512_cvtepi8_epi32(_mm_loadu_si128(p.cast()))
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    extern crate std;
    use super::{Avx512, available};
    use crate::Int8;

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2,fma")]
    unsafe fn check() {
        // SAFETY: the caller guarantees AVX-512 F/BW/VNNI.
        unsafe {
            crate::int8::check::check_dot::<Int8<Avx512>>(200);
            crate::int8::check::check_output_stages::<Int8<Avx512>>(20_000);
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2,fma")]
    unsafe fn time() {
        // SAFETY: the caller guarantees AVX-512 F/BW/VNNI.
        unsafe { crate::int8::check::time_output_stages::<Int8<Avx512>>("avx512") }
    }

    /// Scalar against vector output stages, printed (`cargo test --release
    /// -p arch-defs -- --ignored --nocapture output_stage_timing`).
    #[test]
    #[ignore = "a timing, not a check: run it in release mode"]
    fn output_stage_timing() {
        if !available() {
            std::eprintln!("avx512: no AVX-512 F/BW/VNNI on this CPU, not timed");
            return;
        }
        // SAFETY: the CPU has AVX-512 F/BW/VNNI, AVX2 and FMA.
        unsafe { time() }
    }

    #[test]
    fn int8_matches_reference() {
        if !available() {
            std::eprintln!("avx512: no AVX-512 F/BW/VNNI on this CPU, Int8<Avx512> not run");
            return;
        }
        // SAFETY: the CPU has AVX-512 F/BW/VNNI, AVX2 and FMA.
        unsafe { check() }
    }
}
