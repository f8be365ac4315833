//! `reference`: portable scalar arch, one `f32` per "vector".
//!
//! Runs on every target and is the baseline the SIMD arches are tested
//! against. Its numbers describe a generic scalar FPU with 32 registers
//! (the shape of AArch64, RISC-V and Cortex-M FP register files) that
//! issues two FMAs but one load per cycle, as most scalar cores do.

use crate::{Machine, Simd};

/// The blocking model's numbers of the portable scalar arch.
pub const MACHINE: Machine = Machine {
    cfg: &[],
    target_features: &[],
    vector_regs: 32,
    lanes: 1,
    fma_latency: 4,
    fma_per_cycle: 2,
    // Half the FMA latency: the slack that the tiles were measured with.
    operand_latency: 2,
    column_operand_latency: 2,
    flat_operand_latency: 2,
    fma_cycles: 1,
    mul_add_cycles: 2,
    loads_per_cycle: 1,
    issue_per_cycle: 3,
    broadcast_from_memory: false,
    int8_dot: 1,
    int8_thin_dot: 1,
    int8_x_offset: 0,
    int8_weight_min: -128,
    // i8 lives in the same vector registers, one per operand; the f32
    // latency stands in for the dot product's (the blocking is measured).
    int8_regs: 32,
    int8_operand_regs: 1,
    int8_latency: 4,
    int8_mac_latency: 4,
    int8_load_cost: 1,
    int8_dot_slots: 1,
    excludes_reference: false,
};

/// Available everywhere, except where an arch that excludes it
/// ([`Machine::excludes_reference`]: the Cortex-M4) is compiled in: its
/// kernels are left out of such programs.
pub fn available() -> bool {
    !crate::reference_excluded()
}

/// Portable scalar arch.
#[derive(Debug, Clone, Copy)]
pub struct Reference;

crate::check_arch!(MACHINE, Reference);

impl Simd for Reference {
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
        // SAFETY: the caller guarantees `p` is valid for one read.
        unsafe { p.read_unaligned() }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: f32) {
        // SAFETY: the caller guarantees `p` is valid for one write.
        unsafe { p.write_unaligned(v) }
    }
    #[inline(always)]
    unsafe fn broadcast(p: *const f32) -> f32 {
        // SAFETY: as for `load`.
        unsafe { p.read_unaligned() }
    }
    #[inline(always)]
    unsafe fn fma(acc: f32, a: f32, b: f32) -> f32 {
        // `mul_add` needs std (libm) on some targets; a separate multiply
        // and add rounds twice, which the tolerance of the tests allows.
        acc + a * b
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

crate::int8::scalar_int8!(Reference);
crate::check_dot!(MACHINE, crate::Int8<Reference>);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Int8;

    #[test]
    fn int8_accumulates_widened_products() {
        type A = Int8<Reference>;
        let (x, w, bias) = ([-128i8, 127], [127i8, -128], 5i32);
        // SAFETY: every pointer is valid for one value.
        let acc = unsafe {
            let mut acc = A::load(&bias);
            for (x, w) in x.iter().zip(&w) {
                acc = A::fma(acc, A::broadcast(x), A::broadcast(w));
            }
            acc
        };
        assert_eq!(acc, 5 - 128 * 127 + 127 * -128);
    }

    /// The scalar output stages, staged ([`crate::int8::ScalarStage`]: the
    /// Cortex-M4's too) and not, against `small_ir::quant::output`.
    #[test]
    fn int8_output_stages_match_the_definition() {
        // SAFETY: the reference arch runs everywhere.
        unsafe {
            crate::int8::check::check_output_stages::<Int8<Reference>>(50_000);
            crate::int8::check::check_requantize_add::<Int8<Reference>>(5_000);
        }
    }
}
