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
//! No FMA reads memory, so a broadcast costs a register. A VMUL and a
//! VADD (1 cycle each) cost less than one VFMA (3): `fma_cycles` and
//! `mul_add_cycles` let the blocking model unfuse the depthwise kernels
//! (`small_ir::blocking::unfuses`), which needs `-C target-cpu=cortex-m4`
//! (else LLVM merges the pair into a 3-cycle `vmla.f32`).
//!
//! `i8` lives in the core registers: the DSP extension's `SXTB16` widens
//! bytes 0, 2 (and, rotated, 1, 3) of a word to two `i16` halves, and
//! `SMLAD` multiplies both halves and adds to an `i32` in one cycle, so a
//! step of the dot product (`Dot::DOT = 4`) is one `LDR` and two
//! `SXTB16` per operand and two `SMLAD`s. The blocking model sees 10
//! registers (r0-r12 and lr, less the kernel's pointers and counters),
//! two per operand, a 1-cycle dot product and an operand fetch costing
//! two dot products' issue slots: it picks a 2x2 tile (4 accumulators,
//! 2 weight operands, 1 input operand: 10 registers, 16 multiply-adds per
//! 4 loads).
//!
//! `cfg`: `target_feature = "mclass"`, `"fpregs"` and `"dsp"` (M profile
//! with an FPU and the DSP extension, ARMv7E-M: every such FPU, FPv4-SP
//! and later, has VFMA; Cortex-R's VFPv3 does not). Arm target features are unstable, so rustc reports them only when
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
    cfg: &[
        ("target_arch", "arm"),
        ("target_feature", "mclass"),
        ("target_feature", "fpregs"),
        ("target_feature", "dsp"),
    ],
    target_features: &[],
    vector_regs: 32,
    lanes: 1,
    fma_latency: 3,
    fma_per_cycle: 1,
    // Two cycles of slack, the tiles' measured setting.
    operand_latency: 2,
    column_operand_latency: 2,
    flat_operand_latency: 2,
    // VFMA.F32 3 cycles, VMUL.F32 + VADD.F32 1 + 1: unfused is cheaper.
    fma_cycles: 3,
    mul_add_cycles: 2,
    loads_per_cycle: 1,
    issue_per_cycle: 1,
    broadcast_from_memory: false,
    int8_dot: 4,
    int8_thin_dot: 4,
    int8_x_offset: 0,
    int8_weight_min: -128,
    // r0-r12 and lr, less the kernel's input and weight pointers and its
    // tap counter and bound: 10 for accumulators and operands.
    int8_regs: 10,
    int8_operand_regs: 2,
    // SMLAD: 1 cycle, its result forwarded to the next (TRM table 3-2).
    int8_latency: 1,
    int8_mac_latency: 1,
    int8_load_cost: 2,
    // Two `SMLAD`.
    int8_dot_slots: 2,
    excludes_reference: true,
};

/// True when compiled for an M-profile core with an FPU (fixed at compile
/// time: there is no run-time detection on a microcontroller).
pub fn available() -> bool {
    cfg!(all(
        target_arch = "arm",
        target_feature = "mclass",
        target_feature = "fpregs",
        target_feature = "dsp"
    ))
}

/// Cortex-M4F FPv4-SP.
#[derive(Debug, Clone, Copy)]
pub struct CortexM4;

#[cfg(all(
    target_arch = "arm",
    target_feature = "mclass",
    target_feature = "fpregs",
    target_feature = "dsp"
))]
mod imp {
    use super::{CortexM4, MACHINE};
    use crate::Simd;

    crate::check_arch!(MACHINE, CortexM4);

    crate::int8::scalar_int8_simd!(CortexM4);
    crate::check_dot!(MACHINE, crate::Int8<CortexM4>);

    /// The two `i16` pairs of four bytes `b0 b1 b2 b3`: `(b0, b2)` and
    /// `(b1, b3)`, each byte sign-extended (`SXTB16`, and `SXTB16` of the
    /// word rotated by 8). A dot product pairs an input's halves with a
    /// weight's, so the order within them never matters.
    #[inline(always)]
    fn halves(word: u32) -> (i32, i32) {
        let (even, odd): (i32, i32);
        // SAFETY: `sxtb16` reads and writes core registers only, and every
        // core of this arch's `cfg` (ARMv7E-M, `dsp`) has it.
        unsafe {
            core::arch::asm!("sxtb16 {e}, {w}", w = in(reg) word, e = lateout(reg) even,
                options(pure, nomem, nostack, preserves_flags));
            core::arch::asm!("sxtb16 {o}, {w}, ror #8", w = in(reg) word, o = lateout(reg) odd,
                options(pure, nomem, nostack, preserves_flags));
        }
        (even, odd)
    }

    /// `acc + x.lo * w.lo + x.hi * w.hi` over `i16` halves, wrapping
    /// (`SMLAD`, one cycle). It may set the sticky Q flag, which nothing
    /// reads: hence no `preserves_flags`.
    #[inline(always)]
    fn smlad(acc: i32, x: i32, w: i32) -> i32 {
        let r: i32;
        // SAFETY: as in `halves`: registers only, present on every core
        // of this arch's `cfg`.
        unsafe {
            core::arch::asm!("smlad {r}, {x}, {w}, {a}", r = lateout(reg) r, x = in(reg) x,
                w = in(reg) w, a = in(reg) acc, options(pure, nomem, nostack));
        }
        r
    }

    /// The DSP extension's dot product: four `i8` pairs per step, as two
    /// `SMLAD`s over the `i16` halves `SXTB16` makes. Per step of a 2x2
    /// tile: four words loaded (`LDR`), eight `SXTB16`, eight `SMLAD`s for
    /// 16 multiply-adds. The depthwise kernels widen single bytes
    /// (`LDRSB`) and multiply-add in `i32` (`MLA`).
    impl crate::Dot for crate::Int8<CortexM4> {
        crate::int8::scalar_stages!();
        crate::int8::mac_in_self!();
        crate::int8::dot_is_thin!();
        const DOT: usize = 4;
        const X_OFFSET: i32 = 0;
        type X = (i32, i32);
        type W = (i32, i32);
        #[inline(always)]
        unsafe fn group(p: *const i8) -> (i32, i32) {
            // SAFETY: the caller guarantees `p` is valid for 4 reads. The
            // M4 loads an unaligned word with one `LDR`.
            halves(unsafe { p.cast::<u32>().read_unaligned() })
        }
        #[inline(always)]
        unsafe fn weights(p: *const i8) -> (i32, i32) {
            // SAFETY: as `group` (LANES x DOT = 4 bytes).
            halves(unsafe { p.cast::<u32>().read_unaligned() })
        }
        #[inline(always)]
        unsafe fn dot(acc: i32, x: (i32, i32), w: (i32, i32)) -> i32 {
            smlad(smlad(acc, x.0, w.0), x.1, w.1)
        }
        #[inline(always)]
        unsafe fn widen(p: *const i8) -> i32 {
            // SAFETY: the caller guarantees `p` is valid for one read.
            i32::from(unsafe { p.read() })
        }
    }

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
