//! `neon`: AArch64 Advanced SIMD.
//!
//! 32 q registers of 4 `f32`; two FMA pipes with a latency of 4 cycles
//! (Cortex-A76/A78/X1, Neoverse N1; Cortex-A72 has latency 7 and is
//! covered by the same tile because the tile holds 24 accumulators).

use crate::Machine;

/// The blocking model's numbers of NEON.
pub const MACHINE: Machine = Machine {
    cfg: &[("target_arch", "aarch64")],
    target_features: &["neon"],
    vector_regs: 32,
    lanes: 4,
    fma_latency: 4,
    fma_per_cycle: 2,
    loads_per_cycle: 2,
    issue_per_cycle: 4,
    broadcast_from_memory: false,
    int8_dot: 4,
    int8_x_offset: 0,
};

/// NEON is part of the AArch64 baseline.
pub fn available() -> bool {
    cfg!(all(target_arch = "aarch64", target_feature = "neon"))
}

/// AArch64 NEON.
#[derive(Debug, Clone, Copy)]
pub struct Neon;

#[cfg(target_arch = "aarch64")]
// Every primitive is an `unsafe fn` whose body is one intrinsic call; the
// one safety argument below covers them all, so the bodies need no blocks.
#[allow(unsafe_op_in_unsafe_fn)]
mod imp {
    use super::{Neon, MACHINE};
    use crate::Simd;
    use core::arch::aarch64::*;

    crate::check_arch!(MACHINE, Neon);

    // SAFETY (every function below): NEON is present on every aarch64 target this
    // compiles for; the caller guarantees pointers are valid for 4 (broadcast:
    // 1) f32s. NEON loads and stores have no alignment requirement.
    impl Simd for Neon {
        type Elem = f32;
        type V = float32x4_t;
        const LANES: usize = 4;
        #[inline(always)]
        unsafe fn zero() -> float32x4_t {
            vdupq_n_f32(0.0)
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> float32x4_t {
            vdupq_n_f32(x)
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> float32x4_t {
            vld1q_f32(p)
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: float32x4_t) {
            vst1q_f32(p, v)
        }
        #[inline(always)]
        unsafe fn broadcast(p: *const f32) -> float32x4_t {
            vld1q_dup_f32(p)
        }
        #[inline(always)]
        unsafe fn fma(acc: float32x4_t, a: float32x4_t, b: float32x4_t) -> float32x4_t {
            vfmaq_f32(acc, a, b)
        }
        #[inline(always)]
        unsafe fn max(a: float32x4_t, b: float32x4_t) -> float32x4_t {
            vmaxq_f32(a, b)
        }
        #[inline(always)]
        unsafe fn min(a: float32x4_t, b: float32x4_t) -> float32x4_t {
            vminq_f32(a, b)
        }
        #[inline(always)]
        unsafe fn add(a: float32x4_t, b: float32x4_t) -> float32x4_t {
            vaddq_f32(a, b)
        }
        #[inline(always)]
        unsafe fn mul(a: float32x4_t, b: float32x4_t) -> float32x4_t {
            vmulq_f32(a, b)
        }
    }
}
