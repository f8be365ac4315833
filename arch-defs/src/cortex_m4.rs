//! `cortex_m4`: Arm Cortex-M4F (`thumbv7em-none-eabihf`), FPv4-SP FPU.
//!
//! 32 single-precision `s` registers, one `f32` lane, scalar fused
//! multiply-add (`vfma.f32`). Cortex-M4 TRM (r0p1, table 7-1): VFMA.F32
//! takes 3 cycles, VADD/VMUL 1, VLDR 2 (1 when pipelined with another
//! load), VLDM 1 + N. The core is single-issue and the FPU has one
//! multiply-add unit, so: latency 3 and 1 FMA per cycle (the field is an
//! integer; 1 is the M4's issue width, and with 3 independent
//! accumulators no VFMA waits on the previous one's result). Loads share
//! the one issue slot with the FMAs (`issue_per_cycle = 1`): a tile doing
//! `s` FMAs per load spends `s / (s + 1)` of its instructions on FMAs, so
//! the model favours wider tiles here than on a dual-port core.
//! No FMA reads memory, so a broadcast costs a register.
//!
//! `cfg`: `target_feature = "mclass"` and `"fpregs"` (M profile with an
//! FPU: every such FPU, FPv4-SP and later, has VFMA; Cortex-R's VFPv3 does
//! not). Arm target features are unstable, so rustc reports them only when
//! unstable features are allowed (nightly, or `RUSTC_BOOTSTRAP=1` as
//! `-Zbuild-std` needs anyway); exactly then `core::f32::math::mul_add`
//! (feature `core_float_math`) is usable too. A stable compiler with a
//! prebuilt `core` sees no such feature and falls back to `reference`.
//! `mul_add` is LLVM's `fma` and lowers to `vfma.f32`; an `asm!` with
//! `sreg` operands is not an option on rustc 1.96, which requires the
//! `vfp2` feature (double precision) for `sreg` and this target has only
//! single precision (rust-lang/rust#159988 lifts that later).

use crate::Machine;

/// The blocking model's numbers of the Cortex-M4F.
pub const MACHINE: Machine = Machine {
    cfg: &[("target_arch", "arm"), ("target_feature", "mclass"), ("target_feature", "fpregs")],
    target_features: &[],
    vector_regs: 32,
    lanes: 1,
    fma_latency: 3,
    fma_per_cycle: 1,
    loads_per_cycle: 1,
    issue_per_cycle: 1,
    broadcast_from_memory: false,
    int8_dot: 1,
    int8_x_offset: 0,
};

/// True when compiled for an M-profile core with an FPU (fixed at compile
/// time: there is no run-time detection on a microcontroller).
pub fn available() -> bool {
    cfg!(all(
        target_arch = "arm",
        target_feature = "mclass",
        target_feature = "fpregs"
    ))
}

/// Cortex-M4F FPv4-SP.
#[derive(Debug, Clone, Copy)]
pub struct CortexM4;

#[cfg(all(
    target_arch = "arm",
    target_feature = "mclass",
    target_feature = "fpregs"
))]
mod imp {
    use super::{CortexM4, MACHINE};
    use crate::Simd;

    crate::check_arch!(MACHINE, CortexM4);

    // Scalar for now: the DSP extension's `SMLAD` is the `int8-mcu` issue.
    crate::int8::scalar_int8!(CortexM4);
    crate::check_dot!(MACHINE, crate::Int8<CortexM4>);

    // The bodies are plain `f32` arithmetic, which the FPU executes; only
    // `load`/`store`/`broadcast` touch memory, under the trait's contract.
    impl Simd for CortexM4 {
        type Elem = f32;
        type V = f32;
        const LANES: usize = 1;
        #[inline(always)]
        unsafe fn zero() -> f32 {
            0.0
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> f32 {
            x
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> f32 {
            // SAFETY: the caller guarantees `p` is valid for one read; it
            // points into an `[f32]`, so it is `f32`-aligned. An aligned
            // read is one `vldr`; `read_unaligned` would be `ldr` + `vmov`
            // (VLDR faults on an unaligned address on the M profile).
            unsafe { p.read() }
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: f32) {
            // SAFETY: as for `load`, for one write (`vstr`).
            unsafe { p.write(v) }
        }
        #[inline(always)]
        unsafe fn broadcast(p: *const f32) -> f32 {
            // SAFETY: as for `load`.
            unsafe { p.read() }
        }
        #[inline(always)]
        unsafe fn fma(acc: f32, a: f32, b: f32) -> f32 {
            // `vfma.f32 acc, a, b`: one rounding.
            core::f32::math::mul_add(a, b, acc)
        }
        #[inline(always)]
        unsafe fn max(a: f32, b: f32) -> f32 {
            if b > a { b } else { a }
        }
        #[inline(always)]
        unsafe fn min(a: f32, b: f32) -> f32 {
            if b < a { b } else { a }
        }
        #[inline(always)]
        unsafe fn add(a: f32, b: f32) -> f32 {
            a + b
        }
        #[inline(always)]
        unsafe fn mul(a: f32, b: f32) -> f32 {
            a * b
        }
    }
}
