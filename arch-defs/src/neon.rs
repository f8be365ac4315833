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
    // Half the FMA latency: the slack that the tiles were measured with.
    operand_latency: 2,
    column_operand_latency: 2,
    flat_operand_latency: 2,
    fma_cycles: 1,
    mul_add_cycles: 2,
    loads_per_cycle: 2,
    issue_per_cycle: 4,
    broadcast_from_memory: false,
    int8_dot: 4,
    int8_thin_dot: 4,
    int8_x_offset: 0,
    int8_weight_min: -128,
    // i8 lives in the same vector registers, one per operand; the f32
    // latency stands in for the dot product's (the blocking is measured).
    int8_regs: 32,
    int8_operand_regs: 1,
    int8_latency: 4,
    int8_mac_latency: 4,
    int8_load_cost: 1,
    // Two `smull`.
    int8_dot_slots: 2,
    // NEON is the AArch64 baseline, so the portable kernels could never
    // be picked there: leaving them out halves an aarch64 program's code.
    excludes_reference: true,
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
    use super::{MACHINE, Neon};
    use crate::int8::{average_scalar, requantize_add_scalar, requantize_scalar};
    use crate::{Dot, Int8, RowsAt, Simd};
    use core::arch::aarch64::*;
    #[cfg(doc)]
    use small_ir::quant::{
        AddRescale, clamp_i8, multiply_by_quantized_multiplier,
        multiply_by_quantized_multiplier_smaller_than_one_exp, output, rounding_average,
        Rescale,
    };
    use small_ir::quant::row;
    #[cfg(doc)]
    use small_ir::step::Step;

    crate::check_arch!(MACHINE, Neon);
    crate::check_dot!(MACHINE, Int8<Neon>);

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

    // SAFETY (every function below): NEON is present on every aarch64 target
    // this compiles for; the caller guarantees pointers are valid for what
    // each function reads or writes (`load`/`store`: 4 `i32`s; `broadcast`:
    // 1 byte; `group`: 4; `weights`: 16; `widen`: 4). NEON loads and stores
    // have no alignment requirement, and the 4-byte reads are
    // `read_unaligned` (`vld1_dup_s32` would dereference an `*const i32`,
    // which must be aligned).
    impl Simd for Int8<Neon> {
        type Elem = i8;
        type V = int32x4_t;
        const LANES: usize = 4;
        #[inline(always)]
        unsafe fn zero() -> int32x4_t {
            vdupq_n_s32(0)
        }
        #[inline(always)]
        unsafe fn splat(x: i32) -> int32x4_t {
            vdupq_n_s32(x)
        }
        #[inline(always)]
        unsafe fn load(p: *const i32) -> int32x4_t {
            vld1q_s32(p)
        }
        #[inline(always)]
        unsafe fn store(p: *mut i32, v: int32x4_t) {
            vst1q_s32(p, v)
        }
        #[inline(always)]
        unsafe fn broadcast(p: *const i8) -> int32x4_t {
            vdupq_n_s32(i32::from(p.read()))
        }
        #[inline(always)]
        unsafe fn fma(acc: int32x4_t, a: int32x4_t, b: int32x4_t) -> int32x4_t {
            vmlaq_s32(acc, a, b)
        }
        #[inline(always)]
        unsafe fn max(a: int32x4_t, b: int32x4_t) -> int32x4_t {
            vmaxq_s32(a, b)
        }
        #[inline(always)]
        unsafe fn min(a: int32x4_t, b: int32x4_t) -> int32x4_t {
            vminq_s32(a, b)
        }
        #[inline(always)]
        unsafe fn add(a: int32x4_t, b: int32x4_t) -> int32x4_t {
            vaddq_s32(a, b)
        }
        #[inline(always)]
        unsafe fn mul(a: int32x4_t, b: int32x4_t) -> int32x4_t {
            vmulq_s32(a, b)
        }
    }

    /// Four channels per lane with baseline NEON (no dot-product
    /// extension): widening `i8` products (`smull`; each at most 128 * 128
    /// = 16384 in magnitude, exact in `i16`), regrouped by `uzp1`/`uzp2`
    /// into channel pairs and added into the lanes by `sadalp`: 6
    /// instructions per step and vector after one `ld1r` per group and one
    /// `ldp` of two `d` registers per vector of weights.
    ///
    /// `X` and `W` are 64-bit halves rather than `q` registers: with the
    /// activations in a `q` register (`smull` on the low halves, `smull2`
    /// on the high ones, two `saddlp`, `addp`, `add`), LLVM sees that both
    /// halves of the group are equal, takes the weights' high half apart
    /// with an `ext`, and splits the `addp` into `uzp1 + uzp2 + add`
    /// reassociated with the accumulator: 9 instructions (checked on
    /// rustc 1.96's LLVM, in a loop of 2 accumulators).
    impl Dot for Int8<Neon> {
        const DOT: usize = 4;
        const X_OFFSET: i32 = 0;
        /// The 4 activations, twice.
        type X = int8x8_t;
        /// 16 weight bytes: lanes 0 and 1 (bytes `4l..4l + 4`), then
        /// lanes 2 and 3.
        type W = int8x8x2_t;
        #[inline(always)]
        unsafe fn group(p: *const i8) -> int8x8_t {
            // `ld1r {v.2s}`.
            vreinterpret_s8_s32(vdup_n_s32(p.cast::<i32>().read_unaligned()))
        }
        #[inline(always)]
        unsafe fn weights(p: *const i8) -> int8x8x2_t {
            // `ldp d, d`.
            int8x8x2_t(vld1_s8(p), vld1_s8(p.add(8)))
        }
        #[inline(always)]
        unsafe fn dot(acc: int32x4_t, x: int8x8_t, w: int8x8x2_t) -> int32x4_t {
            // i16 products, viewed as i32 pairs of channels:
            // lo = [l0 (j0, j1), l0 (j2, j3), l1 (j0, j1), l1 (j2, j3)],
            // hi = the same of lanes 2 and 3.
            let lo = vreinterpretq_s32_s16(vmull_s8(x, w.0));
            let hi = vreinterpretq_s32_s16(vmull_s8(x, w.1));
            // Channels 0 and 1 of lanes 0, 1, 2, 3, then channels 2, 3.
            let j01 = vreinterpretq_s16_s32(vuzp1q_s32(lo, hi));
            let j23 = vreinterpretq_s16_s32(vuzp2q_s32(lo, hi));
            // Each lane adds its adjacent pair of i16 products.
            vpadalq_s16(vpadalq_s16(acc, j01), j23)
        }
        #[inline(always)]
        unsafe fn widen(p: *const i8) -> int32x4_t {
            let b = vreinterpret_s8_u32(vdup_n_u32(p.cast::<u32>().read_unaligned()));
            vmovl_s16(vget_low_s16(vmovl_s8(b)))
        }

        // `mla` in `i32`: not measured against `fmla` on a NEON core.
        crate::int8::mac_in_self!();
        crate::int8::dot_is_thin!();

        type Stage = Stage;
        type AddStage = AddStage;

        #[inline(always)]
        unsafe fn stage(rows: *const i32, stride: usize) -> Stage {
            Stage {
                at: RowsAt { rows, stride },
                stepped: all_stepped(rows, stride),
                step: load_step(rows, stride, row::RESCALE + 1, row::STEP),
                zero_point: load_row(rows, stride, row::ZERO_POINT),
                min: load_row(rows, stride, row::MIN),
                max: load_row(rows, stride, row::MAX),
            }
        }

        #[inline(always)]
        unsafe fn add_stage(rows: *const i32, stride: usize) -> AddStage {
            let add_step = |k: usize| row::ADD_STEP + 6 * k;
            AddStage {
                conv: Self::stage(rows, stride),
                conv_zero_point: load_row(rows, stride, row::CONV_ZERO_POINT),
                skip_zero_point: load_row(rows, stride, row::SKIP_ZERO_POINT),
                left: [
                    load_row(rows, stride, row::ADD_LEFT1),
                    load_row(rows, stride, row::ADD_LEFT2),
                ],
                steps: [
                    load_step(rows, stride, row::ADD_RESCALE + 1, add_step(0)),
                    load_step(rows, stride, row::ADD_RESCALE + 3, add_step(1)),
                    load_step(rows, stride, row::ADD_RESCALE + 5, add_step(2)),
                ],
                zero_point: load_row(rows, stride, row::ADD_ZERO_POINT),
                min: load_row(rows, stride, row::ADD_MIN),
                max: load_row(rows, stride, row::ADD_MAX),
            }
        }

        /// Every lane a [`Step`] (row `RESCALE` all [`row::STEPPED`]:
        /// CONV_2D and DEPTHWISE_CONV_2D, shift `<= -1`): `step`, the
        /// zero point, the clamp, `store_bytes`. Any other vector:
        /// `requantize_other`.
        #[inline(always)]
        unsafe fn requantize_staged(p: *mut i8, acc: int32x4_t, st: Stage) {
            if !st.stepped {
                return requantize_other(p, acc, st.at.rows, st.at.stride);
            }
            let v = vaddq_s32(step(acc, &st.step), st.zero_point);
            store_bytes(p, vminq_s32(vmaxq_s32(v, st.min), st.max))
        }

        /// Every lane [`row::STEPPED`] (so the ADD's steps are there too):
        /// [`output`] as `requantize_staged` computes it with the `as i8`
        /// of its result (`shl`, `sshr` by 24), minus `CONV_ZERO_POINT`;
        /// the skip's 4 bytes sign-extended (`widen`, read before `p` is
        /// written), minus `SKIP_ZERO_POINT`; each shifted left by its
        /// step's `left` (`sshl`) and through its `step`, added, through
        /// the output's `step`; the ADD's zero point and clamp,
        /// `store_bytes`. Any other vector: `requantize_add_cold`.
        #[inline(always)]
        unsafe fn requantize_add_staged(
            p: *mut i8,
            acc: int32x4_t,
            skip: *const i8,
            st: AddStage,
        ) {
            let c = &st.conv;
            if !c.stepped {
                return requantize_add_cold(p, acc, skip, c.at.rows, c.at.stride);
            }
            let skip = Self::widen(skip);
            let conv = vaddq_s32(step(acc, &c.step), c.zero_point);
            let conv = vminq_s32(vmaxq_s32(conv, c.min), c.max);
            let conv = vshrq_n_s32::<24>(vshlq_n_s32::<24>(conv));
            let x1 = vsubq_s32(conv, st.conv_zero_point);
            let x2 = vsubq_s32(skip, st.skip_zero_point);
            let s1 = step(vshlq_s32(x1, st.left[0]), &st.steps[0]);
            let s2 = step(vshlq_s32(x2, st.left[1]), &st.steps[1]);
            let sum = step(vaddq_s32(s1, s2), &st.steps[2]);
            let v = vaddq_s32(sum, st.zero_point);
            store_bytes(p, vminq_s32(vmaxq_s32(v, st.min), st.max))
        }

        /// `requantize_staged` of this vector's rows.
        #[inline(always)]
        unsafe fn requantize(p: *mut i8, acc: int32x4_t, rows: *const i32, stride: usize) {
            Self::requantize_staged(p, acc, Self::stage(rows, stride))
        }

        /// `requantize_add_staged` of this vector's rows.
        #[inline(always)]
        unsafe fn requantize_add(
            p: *mut i8,
            acc: int32x4_t,
            skip: *const i8,
            rows: *const i32,
            stride: usize,
        ) {
            Self::requantize_add_staged(p, acc, skip, Self::add_stage(rows, stride))
        }

        /// `sum ± count / 2` (`+` where `sum > 0`) saturated to `i32`,
        /// divided by `count` and truncated, in `f64` two lanes at a time
        /// (`sxtl`, `scvtf`, `fadd`/`fsub`, `bsl`, `fmax`, `fmin`, `fdiv`,
        /// `fcvtzs`, `xtn`), then `clamp_store`. Exact, as `rounding_average`
        /// in integers: the sum and the bounds are exact in `f64`, and a
        /// quotient `n / c` of `i32`s that is not an integer lies at least
        /// `1 / c` from one, far more than its half ulp (`|n / c| * 2^-53
        /// <= 2^-22 / c`). A `count` below 1: the scalar default.
        #[inline(always)]
        unsafe fn average(p: *mut i8, sum: int32x4_t, count: i32, rows: *const i32, stride: usize) {
            if count <= 0 {
                return average_cold(p, sum, count, rows, stride);
            }
            let lo = div_round(vmovl_s32(vget_low_s32(sum)), count);
            let hi = div_round(vmovl_high_s32(sum), count);
            clamp_store(p, vcombine_s32(lo, hi), rows, stride)
        }

        /// `clamp_store`.
        #[inline(always)]
        unsafe fn clamp(p: *mut i8, v: int32x4_t, rows: *const i32, stride: usize) {
            clamp_store(p, v, rows, stride)
        }
    }

    /// `requantize_add` of a vector whose lanes are not all
    /// [`row::STEPPED`]: if every lane is double rounding, the same
    /// stages with `mul_q31` and `mul_q31_exp` in place of the steps,
    /// else the scalar default. Out of line (see `requantize_other`).
    #[target_feature(enable = "neon")]
    #[inline(never)]
    unsafe fn requantize_add_cold(
        p: *mut i8,
        acc: int32x4_t,
        skip: *const i8,
        rows: *const i32,
        stride: usize,
    ) {
        if !all_double(load_row(rows, stride, row::RESCALE)) {
            return requantize_add_scalar::<crate::Int8<Neon>>(p, acc, skip, rows, stride);
        }
        let skip = <crate::Int8<Neon> as Dot>::widen(skip);
        let conv = mul_q31(
            acc,
            load_row(rows, stride, row::RESCALE + 1),
            load_row(rows, stride, row::RESCALE + 2),
        );
        let conv = vaddq_s32(conv, load_row(rows, stride, row::ZERO_POINT));
        let conv = clamp(conv, rows, stride, row::MIN, row::MAX);
        let conv = vshrq_n_s32::<24>(vshlq_n_s32::<24>(conv));
        let x1 = vsubq_s32(conv, load_row(rows, stride, row::CONV_ZERO_POINT));
        let x2 = vsubq_s32(skip, load_row(rows, stride, row::SKIP_ZERO_POINT));
        let at = |k: usize| row::ADD_RESCALE + k;
        let left = vandq_s32(load_row(rows, stride, at(0)), vdupq_n_s32(31));
        let s1 = mul_q31_exp(
            vshlq_s32(x1, left),
            load_row(rows, stride, at(1)),
            load_row(rows, stride, at(2)),
        );
        let s2 = mul_q31_exp(
            vshlq_s32(x2, left),
            load_row(rows, stride, at(3)),
            load_row(rows, stride, at(4)),
        );
        let sum = mul_q31_exp(
            vaddq_s32(s1, s2),
            load_row(rows, stride, at(5)),
            load_row(rows, stride, at(6)),
        );
        let v = vaddq_s32(sum, load_row(rows, stride, row::ADD_ZERO_POINT));
        store_bytes(p, clamp(v, rows, stride, row::ADD_MIN, row::ADD_MAX))
    }

    /// The scalar `average`, out of line (see `requantize_other`).
    #[target_feature(enable = "neon")]
    #[inline(never)]
    unsafe fn average_cold(p: *mut i8, sum: int32x4_t, count: i32, rows: *const i32, stride: usize) {
        average_scalar::<crate::Int8<Neon>>(p, sum, count, rows, stride)
    }

    /// `requantize` of a vector whose lanes are not all
    /// [`row::STEPPED`]: FULLY_CONNECTED's `f64` rescale (`mul_real`);
    /// double rounding without steps (a shift of 0 or more): `mul_q31`;
    /// else the scalar default. Out of line, so that the convolutions'
    /// inlined STORE keeps only the step (inlined, these paths made
    /// ResNet-8's 3x3 convolutions 1.8x slower on Zen 5).
    #[target_feature(enable = "neon")]
    #[inline(never)]
    unsafe fn requantize_other(p: *mut i8, acc: int32x4_t, rows: *const i32, stride: usize) {
        let variant = load_row(rows, stride, row::RESCALE);
        let (lo, hi) = (
            load_row(rows, stride, row::RESCALE + 1),
            load_row(rows, stride, row::RESCALE + 2),
        );
        if vminvq_u32(vceqq_s32(variant, vdupq_n_s32(2))) != 0 {
            let v = vaddq_s32(mul_real(acc, lo, hi), load_row(rows, stride, row::ZERO_POINT));
            clamp_store(p, v, rows, stride)
        } else if all_double(variant) {
            let v = vaddq_s32(mul_q31(acc, lo, hi), load_row(rows, stride, row::ZERO_POINT));
            clamp_store(p, v, rows, stride)
        } else {
            requantize_scalar::<crate::Int8<Neon>>(p, acc, rows, stride)
        }
    }

    /// True if every lane's variant word is [`row::STEPPED`]: `cmeq`,
    /// `uminv`.
    #[inline(always)]
    unsafe fn all_stepped(rows: *const i32, stride: usize) -> bool {
        let variant = load_row(rows, stride, row::RESCALE);
        vminvq_u32(vceqq_s32(variant, vdupq_n_s32(row::STEPPED))) != 0
    }

    /// True if every lane's variant word is a double rounding's (0, or
    /// [`row::STEPPED`]).
    #[inline(always)]
    unsafe fn all_double(variant: int32x4_t) -> bool {
        let zero = vceqzq_s32(variant);
        let stepped = vceqq_s32(variant, vdupq_n_s32(row::STEPPED));
        vminvq_u32(vorrq_u32(zero, stepped)) != 0
    }

    /// A vector of channels' output-stage rows, loaded once per tile
    /// ([`Dot::stage`]).
    #[derive(Clone, Copy)]
    pub struct Stage {
        at: RowsAt,
        /// Every lane [`row::STEPPED`].
        stepped: bool,
        step: StepRows,
        zero_point: int32x4_t,
        min: int32x4_t,
        max: int32x4_t,
    }

    /// A residual layer's rows: the convolution's, then the ADD's
    /// ([`Dot::add_stage`]).
    #[derive(Clone, Copy)]
    pub struct AddStage {
        conv: Stage,
        conv_zero_point: int32x4_t,
        skip_zero_point: int32x4_t,
        left: [int32x4_t; 2],
        steps: [StepRows; 3],
        zero_point: int32x4_t,
        min: int32x4_t,
        max: int32x4_t,
    }

    /// One [`Step`] of 4 channels: the multipliers, then each pair of rows
    /// (see `small_ir::step`) as halves: the 64-bit words of channels 0
    /// and 1, then of 2 and 3, which `smull` and `smull2` products line
    /// up with.
    #[derive(Clone, Copy)]
    struct StepRows {
        m: int32x4_t,
        round: [int64x2_t; 2],
        limit: [int64x2_t; 2],
        counts: [int64x2_t; 2],
    }

    /// The step whose multipliers are row `m` and whose row pairs start at
    /// row `pairs`.
    #[inline(always)]
    unsafe fn load_step(rows: *const i32, stride: usize, m: usize, pairs: usize) -> StepRows {
        StepRows {
            m: load_row(rows, stride, m),
            round: load_halves(rows, stride, pairs),
            limit: load_halves(rows, stride, pairs + 2),
            counts: load_halves(rows, stride, pairs + 4),
        }
    }

    /// The row pair at row `r` (channels 0 and 2 of the vector, then 1
    /// and 3) as halves: `zip1`, `zip2` of the pair's 64-bit words.
    #[inline(always)]
    unsafe fn load_halves(rows: *const i32, stride: usize, r: usize) -> [int64x2_t; 2] {
        // `vld1q_s32`, not `vld1q_s64`: the rows are only 4-byte aligned.
        let even = vreinterpretq_s64_s32(load_row(rows, stride, r));
        let odd = vreinterpretq_s64_s32(load_row(rows, stride, r + 1));
        [vzip1q_s64(even, odd), vzip2q_s64(even, odd)]
    }

    /// [`Step::apply`] in every lane, bit for bit, for `x` already shifted
    /// left: the products of lanes 0, 1 (`smull`) and 2, 3 (`smull2`),
    /// each through `step_half`; the low words of the results (`uzp1`).
    #[inline(always)]
    unsafe fn step(x: int32x4_t, s: &StepRows) -> int32x4_t {
        let lo = vmull_s32(vget_low_s32(x), vget_low_s32(s.m));
        let hi = vmull_high_s32(x, s.m);
        vuzp1q_s32(step_half(lo, s, 0), step_half(hi, s, 1))
    }

    /// `step`'s rounding of 2 products `p` (half `k`), as 32-bit words
    /// whose even ones are the results: `p + round` (`add`), minus `2^31`
    /// where `p < limit` (`cmgt`'s all-ones shifted left by 31, `shl`, and
    /// added, `add`), shifted right arithmetically by `32 + shift`
    /// (`sshl` by the count's negative low byte). (A function, not a
    /// closure: a closure would be compiled without the target features.)
    #[inline(always)]
    unsafe fn step_half(p: int64x2_t, s: &StepRows, k: usize) -> int32x4_t {
        let r = vaddq_s64(p, s.round[k]);
        let below = vreinterpretq_s64_u64(vcltq_s64(p, s.limit[k]));
        let r = vaddq_s64(r, vshlq_n_s64::<31>(below));
        vreinterpretq_s32_s64(vshlq_s64(r, s.counts[k]))
    }

    /// Row `r` of the per-channel rows (`small_ir::quant::row`): 4 values
    /// at `rows + r * stride`.
    #[inline(always)]
    unsafe fn load_row(rows: *const i32, stride: usize, r: usize) -> int32x4_t {
        vld1q_s32(rows.add(r * stride))
    }

    /// [`clamp_i8`] in every lane (rows `MIN`, `MAX`) and the 4 bytes
    /// stored: `clamp`, `store_bytes`.
    #[inline(always)]
    unsafe fn clamp_store(p: *mut i8, v: int32x4_t, rows: *const i32, stride: usize) {
        store_bytes(p, clamp(v, rows, stride, row::MIN, row::MAX))
    }

    /// `v` clamped to rows `min..=max` in every lane, as [`clamp_i8`]
    /// before its `as i8`: `smax`, `smin`.
    #[inline(always)]
    unsafe fn clamp(
        v: int32x4_t,
        rows: *const i32,
        stride: usize,
        min: usize,
        max: usize,
    ) -> int32x4_t {
        let v = vmaxq_s32(v, load_row(rows, stride, min));
        vminq_s32(v, load_row(rows, stride, max))
    }

    /// The low byte of every lane, 4 bytes stored: two `xtn` (which
    /// truncate, as `as i8` does, so even a clamp outside `i8` gives the
    /// scalar bits) and one 32-bit store.
    #[inline(always)]
    unsafe fn store_bytes(p: *mut i8, v: int32x4_t) {
        let h = vmovn_s32(v);
        let b = vmovn_s16(vcombine_s16(h, h));
        p.cast::<u32>().write_unaligned(vget_lane_u32::<0>(vreinterpret_u32_s8(b)))
    }

    /// [`rounding_average`]`(sum, count)` of two lanes (`sum` widened to
    /// `i64`), for `count >= 1`.
    #[inline(always)]
    unsafe fn div_round(sum: int64x2_t, count: i32) -> int32x2_t {
        let s = vcvtq_f64_s64(sum);
        let half = vdupq_n_f64(f64::from(count / 2));
        let n = vbslq_f64(vcgtzq_f64(s), vaddq_f64(s, half), vsubq_f64(s, half));
        let n = vmaxq_f64(n, vdupq_n_f64(f64::from(i32::MIN)));
        let n = vminq_f64(n, vdupq_n_f64(f64::from(i32::MAX)));
        vmovn_s64(vcvtq_s64_f64(vdivq_f64(n, vdupq_n_f64(f64::from(count)))))
    }

    /// [`Rescale::apply`] of [`Rescale::Real`] in every lane, bit for
    /// bit, for any scale: the `f64` scales put together from their low
    /// and high words (`zip1`, `zip2`: lanes 0, 1 and 2, 3), `real_half`
    /// on each half, `xtn` + `xtn2`.
    #[inline(always)]
    unsafe fn mul_real(acc: int32x4_t, lo: int32x4_t, hi: int32x4_t) -> int32x4_t {
        let s0 = vreinterpretq_f64_s32(vzip1q_s32(lo, hi));
        let s1 = vreinterpretq_f64_s32(vzip2q_s32(lo, hi));
        let r0 = real_half(vmovl_s32(vget_low_s32(acc)), s0);
        let r1 = real_half(vmovl_high_s32(acc), s1);
        vmovn_high_s64(vmovn_s64(r0), r1)
    }

    /// `round_f64(acc * scale)` saturated to `i32`, in 2 lanes (`acc`
    /// widened to `i64`), as an `i64` in `i32`'s range: `scvtf` (exact),
    /// `fmul` (the scalar's one rounded product), `fmax`/`fmin` to
    /// `i32::MIN..=i32::MAX` (rounding is monotone and keeps these
    /// integers, so clamping first is clamping after; an infinite product
    /// becomes a bound), then `fcvtas`: to the nearest integer, ties away
    /// from zero, which is `f64::round` exactly. A NaN product (a NaN
    /// scale, or an infinite one times 0) stays NaN through `fmax` and
    /// `fmin`, and `fcvtas` makes it 0, as `round_f64`'s `as i64` does: no
    /// scale needs the scalar default.
    #[inline(always)]
    unsafe fn real_half(acc: int64x2_t, scale: float64x2_t) -> int64x2_t {
        let x = vmulq_f64(vcvtq_f64_s64(acc), scale);
        let x = vmaxq_f64(x, vdupq_n_f64(f64::from(i32::MIN)));
        let x = vminq_f64(x, vdupq_n_f64(f64::from(i32::MAX)));
        vcvtaq_s64_f64(x)
    }

    /// [`multiply_by_quantized_multiplier`]`(x, m, shift)` in every lane,
    /// bit for bit, for any `m` and `shift` (TFLite's double rounding),
    /// as gemmlowp's NEON form: `sshl` by `max(shift, 0) & 31`; `sqrdmulh`,
    /// which is `saturating_rounding_doubling_high_mul` exactly; then
    /// `div_pot`.
    #[inline(always)]
    unsafe fn mul_q31(x: int32x4_t, m: int32x4_t, shift: int32x4_t) -> int32x4_t {
        // `x.wrapping_shl(max(shift, 0))` (the count taken `& 31`).
        let left = vandq_s32(vmaxq_s32(shift, vdupq_n_s32(0)), vdupq_n_s32(31));
        div_pot(vqrdmulhq_s32(vshlq_s32(x, left), m), neg_right_exponent(shift))
    }

    /// [`multiply_by_quantized_multiplier_smaller_than_one_exp`]`(x, m,
    /// shift)` in every lane, bit for bit, for any `m` and `shift`:
    /// `mul_q31` without its left shift (a positive `shift` counts as 0).
    #[inline(always)]
    unsafe fn mul_q31_exp(x: int32x4_t, m: int32x4_t, shift: int32x4_t) -> int32x4_t {
        div_pot(vqrdmulhq_s32(x, m), neg_right_exponent(shift))
    }

    /// Minus the exponent of `rounding_divide_by_pot` for a multiplier's
    /// `shift`: `-min(max(-shift, 0), 31)`, as `srshl` takes it.
    #[inline(always)]
    unsafe fn neg_right_exponent(shift: int32x4_t) -> int32x4_t {
        vminq_s32(vmaxq_s32(shift, vdupq_n_s32(-31)), vdupq_n_s32(0))
    }

    /// `rounding_divide_by_pot(x, -neg_right)` in every lane, `neg_right`
    /// in `-31..=0`: `srshl` (a rounding shift right, ties up) of `x - 1`
    /// where `x < 0` (`and`, `sshr`, `sqadd`), which turns its ties away
    /// from zero.
    #[inline(always)]
    unsafe fn div_pot(x: int32x4_t, neg_right: int32x4_t) -> int32x4_t {
        // -1 where `x < 0` and the exponent is not 0 (both sign bits set);
        // `sqadd` keeps `i32::MIN`, whose quotient is exact anyway.
        let fixup = vshrq_n_s32::<31>(vandq_s32(x, neg_right));
        vrshlq_s32(vqaddq_s32(x, fixup), neg_right)
    }
}

#[cfg(all(test, target_arch = "aarch64"))]
mod tests {
    extern crate std;
    use super::{Neon, available};
    use crate::Int8;

    #[test]
    fn int8_matches_reference() {
        if !available() {
            std::eprintln!("neon: not available, Int8<Neon> not run");
            return;
        }
        // SAFETY: NEON is present.
        unsafe {
            crate::int8::check::check_dot::<Int8<Neon>>(200);
            crate::int8::check::check_output_stages::<Int8<Neon>>(20_000);
            crate::int8::check::check_requantize_add::<Int8<Neon>>(20_000);
        }
    }

    /// Scalar against vector output stages, printed (`cargo test --release
    /// -p arch-defs -- --ignored --nocapture output_stage_timing`; on real
    /// hardware: under qemu-user the times mean nothing).
    #[test]
    #[ignore = "a timing, not a check: run it in release mode"]
    fn output_stage_timing() {
        // SAFETY: NEON is part of the aarch64 baseline.
        unsafe { crate::int8::check::time_output_stages::<Int8<Neon>>("neon") }
    }
}
