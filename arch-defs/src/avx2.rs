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
    // Half the FMA latency: the slack that the tiles were measured with.
    operand_latency: 2,
    // A column-streamed tile of 12 accumulators does not fit 16 registers
    // beside its filter row; 4 x 16 columns (8 accumulators, operands in
    // registers) ran ResNet-8's 3x3 layers 10-28 % faster than 6 x 16 per
    // tap on their 8- to 32-pixel rows and 2-6 % slower on 194-pixel rows
    // (AMD EPYC Zen 3, a scratch crate of `#[layer]`s, alternated).
    column_operand_latency: 0,
    flat_operand_latency: 2,
    fma_cycles: 1,
    mul_add_cycles: 2,
    loads_per_cycle: 2,
    issue_per_cycle: 4,
    broadcast_from_memory: false,
    int8_dot: 4,
    int8_thin_dot: 2,
    int8_x_offset: 0,
    int8_weight_min: -127,
    // i8 lives in the same vector registers, one per operand, less one:
    // `vpmaddwd` does not accumulate, so each dot product's pair sums take
    // a register until their `vpaddd`. With all 16 counted, every 3x3
    // tile spilled accumulators to the stack (ResNet-8 int8, `perf
    // annotate`: a third of the samples of its 3x3 kernels on stack
    // operands).
    int8_regs: 15,
    int8_operand_regs: 1,
    // The accumulator's chain is the `vpaddd` (1 cycle; the `vpmaddwd`
    // before it does not wait for the accumulator), so fewer accumulators
    // than the FMA's 12 keep the pipes busy: with 2, a 3x3 tile is 4
    // columns x 16 channels, column-streamed (8 accumulators, each
    // broadcast input feeding 6 dot products), against 12 x 8 (1 vector:
    // each input widened for one channel vector). AMD EPYC Zen 1 (avx2,
    // 2026-11-30), loops of `forward` alternating the two builds, median
    // of 3, one thread: ResNet-8 int8 1068 -> 911 µs, AD int8 29.6 ->
    // 26.3, VWW 0.25 866 -> 854, DS-CNN the same. 1 (3 x 16, 6
    // accumulators) ran one 3x3 layer (32x32x16) slower than 2.
    int8_latency: 2,
    // `Dot::Mac` is the `f32` FMA.
    int8_mac_latency: 4,
    int8_load_cost: 1,
    // `vpmaddubsw` and `vpmaddwd`, both multiplies: on AMD EPYC Zen 1
    // both on one pipe, and the cost model's int8 pointwise layers came out
    // 30 % fast and depthwise 29 % slow with one slot (2026-11-30).
    int8_dot_slots: 2,
    excludes_reference: false,
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
    use crate::int8::{BELOW_HALF, average_scalar, requantize_add_scalar, requantize_scalar};
    use crate::{Dot, Int8, RowsAt, Simd};
    use core::arch::x86_64::*;
    #[cfg(doc)]
    use small_ir::quant::{
        AddRescale, clamp_i8, multiply_by_quantized_multiplier,
        multiply_by_quantized_multiplier_smaller_than_one_exp, output, rounding_average,
        Rescale,
    };
    use small_ir::quant::row;
    #[cfg(doc)]
    use small_ir::step::Step;

    crate::check_arch!(MACHINE, Avx2);
    crate::check_dot!(MACHINE, Int8<Avx2>);

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

    /// Four channels per lane through `vpmaddubsw`, which multiplies
    /// unsigned by signed bytes: the activations' magnitudes (`vpabsb`,
    /// at most 128) by the weights with the activations' signs
    /// (`vpsignb`), so each product is `x * w` exactly. A pair of them is
    /// at most `2 * 128 * 127 = 32512` in magnitude, below the `i16`
    /// saturation, for weights in -127..=127 (`WEIGHT_MIN`: `vpsignb`
    /// cannot negate -128); `vpmaddwd` by ones sums the pairs into `i32`.
    /// Four `i8` channels in 4 instructions where the pair form below
    /// (`THIN_DOT`) takes 6 (2 `vpmovsxbw`, 2 `vpmaddwd`, 2 `vpaddd`):
    /// AMD EPYC Zen 1, 640 -> 128 fully connected, 6.0 -> 4.0 µs.
    ///
    /// Thin layers (fewer than 4 input channels: DS-CNN's 1-channel and
    /// the 3-channel stems) take the pairs, so that a 1-channel input
    /// multiplies one zero weight per product, not three.
    impl Dot for Int8<Avx2> {
        const DOT: usize = 4;
        const X_OFFSET: i32 = 0;
        const WEIGHT_MIN: i8 = -127;
        /// The 4 activations' magnitudes (`vpabsb`), and the 4 themselves
        /// (their signs), in each of the 8 lanes.
        type X = [__m256i; 2];
        /// 32 weight bytes, lane `l`'s 4 in bytes `4l..4l + 4`.
        type W = __m256i;
        #[inline(always)]
        unsafe fn group(p: *const i8) -> [__m256i; 2] {
            let x = _mm256_set1_epi32(p.cast::<i32>().read_unaligned());
            [_mm256_abs_epi8(x), x]
        }
        #[inline(always)]
        unsafe fn weights(p: *const i8) -> __m256i {
            _mm256_loadu_si256(p.cast())
        }
        #[inline(always)]
        unsafe fn dot(acc: __m256i, x: [__m256i; 2], w: __m256i) -> __m256i {
            let pairs = _mm256_maddubs_epi16(x[0], _mm256_sign_epi8(w, x[1]));
            _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)))
        }

        /// Two channels per lane through `vpmaddwd` on bytes
        /// sign-extended to `i16`: each product is at most 128 * 128 =
        /// 16384 in magnitude, so the pair sums are exact for every
        /// weight.
        const THIN_DOT: usize = 2;
        /// The pair `(x0, x1)` as `i16`s, in each of the 8 lanes.
        type ThinX = __m256i;
        /// 16 `i16` weights, lane `l`'s pair in words `2l`, `2l + 1`.
        type ThinW = __m256i;
        #[inline(always)]
        unsafe fn thin_group(p: *const i8) -> __m256i {
            // `vpbroadcastw xmm, m16` (the two bytes in every word: a load
            // and a shuffle) and `vpmovsxbw ymm, xmm` (one shuffle): 3
            // uops, against 6 for the pair packed in a general register
            // (2 `movsx` loads, shift, or, `vmovd`, `vpbroadcastd`).
            _mm256_cvtepi8_epi16(_mm_set1_epi16(p.cast::<i16>().read_unaligned()))
        }
        #[inline(always)]
        unsafe fn thin_weights(p: *const i8) -> __m256i {
            _mm256_cvtepi8_epi16(_mm_loadu_si128(p.cast()))
        }
        #[inline(always)]
        unsafe fn thin_dot(acc: __m256i, x: __m256i, w: __m256i) -> __m256i {
            _mm256_add_epi32(acc, _mm256_madd_epi16(x, w))
        }
        #[inline(always)]
        unsafe fn widen(p: *const i8) -> __m256i {
            _mm256_cvtepi8_epi32(_mm_loadl_epi64(p.cast()))
        }

        /// `f32`: `vpmulld` is 2 uops on Intel cores (and 10 cycles'
        /// latency), an `f32` FMA 1; the conversions are exact (integers
        /// below `2^24`, see [`Dot::Mac`]).
        type Mac = Avx2;
        #[inline(always)]
        unsafe fn widen_mac(p: *const i8) -> __m256 {
            _mm256_cvtepi32_ps(Self::widen(p))
        }
        #[inline(always)]
        unsafe fn to_mac(v: __m256i) -> __m256 {
            _mm256_cvtepi32_ps(v)
        }
        #[inline(always)]
        unsafe fn from_mac(m: __m256) -> __m256i {
            _mm256_cvtps_epi32(m)
        }

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
        unsafe fn requantize_staged(p: *mut i8, acc: __m256i, st: Stage) {
            if !st.stepped {
                return requantize_other(p, acc, st.at.rows, st.at.stride);
            }
            let v = _mm256_add_epi32(step(acc, &st.step), st.zero_point);
            store_bytes(p, _mm256_min_epi32(_mm256_max_epi32(v, st.min), st.max))
        }

        /// `requantize_staged` with `requantize_other`'s forms inline
        /// (FULLY_CONNECTED's `f64` rescale, `mul_real`, above all): a
        /// one-column tile has registers to spare, and its every output
        /// vector takes them (AMD EPYC Zen 1, fully connected 128 -> 640
        /// with `Rescale::Real`: 6.61 -> 6.37 µs).
        #[inline(always)]
        unsafe fn requantize_narrow(p: *mut i8, acc: __m256i, st: Stage) {
            if st.stepped {
                return Self::requantize_staged(p, acc, st);
            }
            requantize_unstepped(p, acc, st.at.rows, st.at.stride)
        }

        /// Every lane [`row::STEPPED`] (so the ADD's steps are there too):
        /// [`output`] as `requantize_staged` computes it with the `as i8`
        /// of its result (`vpslld`/`vpsrad` by 24), minus
        /// `CONV_ZERO_POINT`; the skip's 8 bytes sign-extended
        /// (`vpmovsxbd`, read before `p` is written), minus
        /// `SKIP_ZERO_POINT`; each shifted left by its step's `left`
        /// (`vpsllvd`) and through its `step`, added, through the output's
        /// `step`; the ADD's zero point and clamp, `store_bytes`. Any
        /// other vector: `requantize_add_cold`.
        #[inline(always)]
        unsafe fn requantize_add_staged(p: *mut i8, acc: __m256i, skip: *const i8, st: AddStage) {
            let c = &st.conv;
            if !c.stepped {
                return requantize_add_cold(p, acc, skip, c.at.rows, c.at.stride);
            }
            let skip = Self::widen(skip);
            let conv = _mm256_add_epi32(step(acc, &c.step), c.zero_point);
            let conv = _mm256_min_epi32(_mm256_max_epi32(conv, c.min), c.max);
            let conv = _mm256_srai_epi32::<24>(_mm256_slli_epi32::<24>(conv));
            let x1 = _mm256_sub_epi32(conv, st.conv_zero_point);
            let x2 = _mm256_sub_epi32(skip, st.skip_zero_point);
            let s1 = step(_mm256_sllv_epi32(x1, st.left[0]), &st.steps[0]);
            let s2 = step(_mm256_sllv_epi32(x2, st.left[1]), &st.steps[1]);
            let sum = step(_mm256_add_epi32(s1, s2), &st.steps[2]);
            let v = _mm256_add_epi32(sum, st.zero_point);
            store_bytes(p, _mm256_min_epi32(_mm256_max_epi32(v, st.min), st.max))
        }

        /// `requantize_staged` of this vector's rows.
        #[inline(always)]
        unsafe fn requantize(p: *mut i8, acc: __m256i, rows: *const i32, stride: usize) {
            Self::requantize_staged(p, acc, Self::stage(rows, stride))
        }

        /// `requantize_add_staged` of this vector's rows.
        #[inline(always)]
        unsafe fn requantize_add(
            p: *mut i8,
            acc: __m256i,
            skip: *const i8,
            rows: *const i32,
            stride: usize,
        ) {
            Self::requantize_add_staged(p, acc, skip, Self::add_stage(rows, stride))
        }

        /// `div_round` on each half, then `clamp_store`. A `count` below
        /// 1: the scalar default.
        #[inline(always)]
        unsafe fn average(p: *mut i8, sum: __m256i, count: i32, rows: *const i32, stride: usize) {
            if count <= 0 {
                return average_cold(p, sum, count, rows, stride);
            }
            let lo = div_round(_mm256_castsi256_si128(sum), count);
            let hi = div_round(_mm256_extracti128_si256::<1>(sum), count);
            clamp_store(p, _mm256_set_m128i(hi, lo), rows, stride)
        }

        /// `clamp_store`.
        #[inline(always)]
        unsafe fn clamp(p: *mut i8, v: __m256i, rows: *const i32, stride: usize) {
            clamp_store(p, v, rows, stride)
        }
    }

    /// `requantize_add` of a vector whose lanes are not all
    /// [`row::STEPPED`]: if every lane is double rounding, the same
    /// stages with `mul_q31` and `mul_q31_exp` in place of the steps,
    /// else the scalar default. Out of line (see `requantize_other`).
    #[target_feature(enable = "avx2,fma")]
    #[inline(never)]
    unsafe fn requantize_add_cold(
        p: *mut i8,
        acc: __m256i,
        skip: *const i8,
        rows: *const i32,
        stride: usize,
    ) {
        if !all_double(load_row(rows, stride, row::RESCALE)) {
            return requantize_add_scalar::<crate::Int8<Avx2>>(p, acc, skip, rows, stride);
        }
        let skip = <crate::Int8<Avx2> as Dot>::widen(skip);
        let conv = mul_q31(
            acc,
            load_row(rows, stride, row::RESCALE + 1),
            load_row(rows, stride, row::RESCALE + 2),
        );
        let conv = _mm256_add_epi32(conv, load_row(rows, stride, row::ZERO_POINT));
        let conv = clamp(conv, rows, stride, row::MIN, row::MAX);
        let conv = _mm256_srai_epi32::<24>(_mm256_slli_epi32::<24>(conv));
        let x1 = _mm256_sub_epi32(conv, load_row(rows, stride, row::CONV_ZERO_POINT));
        let x2 = _mm256_sub_epi32(skip, load_row(rows, stride, row::SKIP_ZERO_POINT));
        let at = |k: usize| row::ADD_RESCALE + k;
        let left = _mm256_and_si256(load_row(rows, stride, at(0)), _mm256_set1_epi32(31));
        let s1 = mul_q31_exp(
            _mm256_sllv_epi32(x1, left),
            load_row(rows, stride, at(1)),
            load_row(rows, stride, at(2)),
        );
        let s2 = mul_q31_exp(
            _mm256_sllv_epi32(x2, left),
            load_row(rows, stride, at(3)),
            load_row(rows, stride, at(4)),
        );
        let sum = mul_q31_exp(
            _mm256_add_epi32(s1, s2),
            load_row(rows, stride, at(5)),
            load_row(rows, stride, at(6)),
        );
        let v = _mm256_add_epi32(sum, load_row(rows, stride, row::ADD_ZERO_POINT));
        store_bytes(p, clamp(v, rows, stride, row::ADD_MIN, row::ADD_MAX))
    }

    /// The scalar `average`, out of line (see `requantize_other`).
    #[target_feature(enable = "avx2,fma")]
    #[inline(never)]
    unsafe fn average_cold(p: *mut i8, sum: __m256i, count: i32, rows: *const i32, stride: usize) {
        average_scalar::<crate::Int8<Avx2>>(p, sum, count, rows, stride)
    }

    /// `requantize_unstepped`, out of line, so that the convolutions'
    /// inlined STORE keeps only the step (inlined, these paths made
    /// ResNet-8's 3x3 convolutions 1.8x slower on Zen 5).
    #[target_feature(enable = "avx2,fma")]
    #[inline(never)]
    unsafe fn requantize_other(p: *mut i8, acc: __m256i, rows: *const i32, stride: usize) {
        requantize_unstepped(p, acc, rows, stride)
    }

    /// `requantize` of a vector whose lanes are not all
    /// [`row::STEPPED`]: FULLY_CONNECTED's `f64` rescale (`mul_real`);
    /// double rounding without steps (a shift of 0 or more): `mul_q31`;
    /// else the scalar default. Inline in a narrow tile
    /// (`requantize_narrow`), out of line elsewhere (`requantize_other`).
    #[inline(always)]
    unsafe fn requantize_unstepped(p: *mut i8, acc: __m256i, rows: *const i32, stride: usize) {
        let variant = load_row(rows, stride, row::RESCALE);
        let (lo, hi) = (
            load_row(rows, stride, row::RESCALE + 1),
            load_row(rows, stride, row::RESCALE + 2),
        );
        if all_real(variant, hi) {
            let v = _mm256_add_epi32(mul_real(acc, lo, hi), load_row(rows, stride, row::ZERO_POINT));
            clamp_store(p, v, rows, stride)
        } else if all_double(variant) {
            let v = _mm256_add_epi32(mul_q31(acc, lo, hi), load_row(rows, stride, row::ZERO_POINT));
            clamp_store(p, v, rows, stride)
        } else {
            requantize_scalar_cold(p, acc, rows, stride)
        }
    }

    /// The scalar `requantize`, out of line: inlined, its lane buffer
    /// gave `requantize_other` a 300-byte frame and six saved registers
    /// that every FULLY_CONNECTED vector paid for.
    #[target_feature(enable = "avx2,fma")]
    #[inline(never)]
    #[cold]
    unsafe fn requantize_scalar_cold(p: *mut i8, acc: __m256i, rows: *const i32, stride: usize) {
        requantize_scalar::<crate::Int8<Avx2>>(p, acc, rows, stride)
    }

    /// True if every lane's variant word is [`row::STEPPED`]:
    /// `vpcmpeqd`, `vpmovmskb`.
    #[inline(always)]
    unsafe fn all_stepped(rows: *const i32, stride: usize) -> bool {
        let variant = load_row(rows, stride, row::RESCALE);
        let stepped = _mm256_cmpeq_epi32(variant, _mm256_set1_epi32(row::STEPPED));
        _mm256_movemask_epi8(stepped) == -1
    }

    /// True if every lane's variant word is a double rounding's (0, or
    /// [`row::STEPPED`]).
    #[inline(always)]
    unsafe fn all_double(variant: __m256i) -> bool {
        let zero = _mm256_cmpeq_epi32(variant, _mm256_setzero_si256());
        let stepped = _mm256_cmpeq_epi32(variant, _mm256_set1_epi32(row::STEPPED));
        _mm256_movemask_epi8(_mm256_or_si256(zero, stepped)) == -1
    }

    /// A vector of channels' output-stage rows, loaded once per tile
    /// ([`Dot::stage`]).
    #[derive(Clone, Copy)]
    pub struct Stage {
        at: RowsAt,
        /// Every lane [`row::STEPPED`].
        stepped: bool,
        step: StepRows,
        zero_point: __m256i,
        min: __m256i,
        max: __m256i,
    }

    /// A residual layer's rows: the convolution's, then the ADD's
    /// ([`Dot::add_stage`]).
    #[derive(Clone, Copy)]
    pub struct AddStage {
        conv: Stage,
        conv_zero_point: __m256i,
        skip_zero_point: __m256i,
        left: [__m256i; 2],
        steps: [StepRows; 3],
        zero_point: __m256i,
        min: __m256i,
        max: __m256i,
    }

    /// One [`Step`] of 8 channels: the multipliers (`m`; `m_odd`, read
    /// one word on, whose even lanes are the odd channels'), then each
    /// row pair (see `small_ir::step`), even channels first.
    #[derive(Clone, Copy)]
    struct StepRows {
        m: __m256i,
        m_odd: __m256i,
        round: [__m256i; 2],
        limit: [__m256i; 2],
        counts: [__m256i; 2],
    }

    /// The step whose multipliers are row `m` (the word after its 8 is
    /// read too) and whose row pairs start at row `pairs`.
    #[inline(always)]
    unsafe fn load_step(rows: *const i32, stride: usize, m: usize, pairs: usize) -> StepRows {
        StepRows {
            m: load_row(rows, stride, m),
            m_odd: _mm256_loadu_si256(rows.add(m * stride + 1).cast()),
            round: [load_row(rows, stride, pairs), load_row(rows, stride, pairs + 1)],
            limit: [load_row(rows, stride, pairs + 2), load_row(rows, stride, pairs + 3)],
            counts: [load_row(rows, stride, pairs + 4), load_row(rows, stride, pairs + 5)],
        }
    }

    /// [`Step::apply`] in every lane, bit for bit, for `x` already shifted
    /// left: the even lanes' products (`vpmuldq`), the odd lanes'
    /// (`vpsrlq` of `x` first), each through `step_high`; the even high
    /// words moved down (`vpshufd`) and blended with the odd ones in
    /// place (`vpblendd`).
    #[inline(always)]
    unsafe fn step(x: __m256i, s: &StepRows) -> __m256i {
        let even = _mm256_mul_epi32(x, s.m);
        let odd = _mm256_mul_epi32(_mm256_srli_epi64::<32>(x), s.m_odd);
        // Words 1, 1, 3, 3 of each half: lane 2k from word 2k + 1.
        let even = _mm256_shuffle_epi32::<0b1111_0101>(step_high(even, s, 0));
        _mm256_blend_epi32::<0b1010_1010>(even, step_high(odd, s, 1))
    }

    /// `step`'s rounding of 4 products `p` (pair `k`): the results in the
    /// high words. `p + round`, minus `2^31` where `p < limit`: AVX2 has
    /// no mask registers, so the comparison's all-ones words (`vpcmpgtq`)
    /// shifted left by 31 (`vpsllq`: `-2^31`) are added (`vpaddq`); then
    /// the high words shifted (`vpsravd`; the low words' counts, above
    /// 31, fill them with sign bits, unused). (A function, not a
    /// closure: a closure would be compiled without the target features.)
    #[inline(always)]
    unsafe fn step_high(p: __m256i, s: &StepRows, k: usize) -> __m256i {
        let r = _mm256_add_epi64(p, s.round[k]);
        let below = _mm256_cmpgt_epi64(s.limit[k], p);
        let r = _mm256_add_epi64(r, _mm256_slli_epi64::<31>(below));
        _mm256_srav_epi32(r, s.counts[k])
    }

    /// Row `r` of the per-channel rows (`small_ir::quant::row`): 8
    /// values at `rows + r * stride`.
    #[inline(always)]
    unsafe fn load_row(rows: *const i32, stride: usize, r: usize) -> __m256i {
        _mm256_loadu_si256(rows.add(r * stride).cast())
    }

    /// [`clamp_i8`] in every lane (rows `MIN`, `MAX`) and the 8 bytes
    /// stored: `clamp`, `store_bytes`.
    #[inline(always)]
    unsafe fn clamp_store(p: *mut i8, v: __m256i, rows: *const i32, stride: usize) {
        store_bytes(p, clamp(v, rows, stride, row::MIN, row::MAX))
    }

    /// `v` clamped to rows `min..=max` in every lane, as [`clamp_i8`]
    /// before its `as i8`: `vpmaxsd`, `vpminsd`.
    #[inline(always)]
    unsafe fn clamp(v: __m256i, rows: *const i32, stride: usize, min: usize, max: usize) -> __m256i {
        let v = _mm256_max_epi32(v, load_row(rows, stride, min));
        _mm256_min_epi32(v, load_row(rows, stride, max))
    }

    /// The low byte of every lane, 8 bytes stored: `vpshufb` within each
    /// half, `vpermd` across, `vmovq`. This truncates as `as i8` does (a
    /// saturating `vpackssdw`/`vpacksswb` would differ from the scalar
    /// bits for a clamp outside `i8`).
    #[inline(always)]
    unsafe fn store_bytes(p: *mut i8, v: __m256i) {
        #[rustfmt::skip]
        let low_bytes = _mm256_setr_epi8(
            0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
            0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        );
        let b = _mm256_shuffle_epi8(v, low_bytes);
        let b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
        _mm_storel_epi64(p.cast(), _mm256_castsi256_si128(b))
    }

    /// [`rounding_average`]`(sum, count)` in 4 lanes, for `count >= 1`:
    /// `sum ± count / 2` (`+` where `sum > 0`) saturated to `i32`, divided
    /// by `count` and truncated, in `f64` (`vcvtdq2pd`, `vaddpd`,
    /// `vsubpd`, `vblendvpd`, `vmaxpd`, `vminpd`, `vdivpd`,
    /// `vcvttpd2dq`). Exact: the sum and the bounds are exact in `f64`,
    /// and a quotient `n / c` of `i32`s that is not an integer lies at
    /// least `1 / c` from one, far more than its half ulp (`|n / c| *
    /// 2^-53 <= 2^-22 / c`), so rounding the division never crosses or
    /// reaches an integer.
    #[inline(always)]
    unsafe fn div_round(sum: __m128i, count: i32) -> __m128i {
        let s = _mm256_cvtepi32_pd(sum);
        let half = _mm256_set1_pd(f64::from(count / 2));
        let positive = _mm256_cmp_pd::<_CMP_GT_OQ>(s, _mm256_setzero_pd());
        let n = _mm256_blendv_pd(_mm256_sub_pd(s, half), _mm256_add_pd(s, half), positive);
        let n = _mm256_max_pd(n, _mm256_set1_pd(f64::from(i32::MIN)));
        let n = _mm256_min_pd(n, _mm256_set1_pd(f64::from(i32::MAX)));
        _mm256_cvttpd_epi32(_mm256_div_pd(n, _mm256_set1_pd(f64::from(count))))
    }

    /// True if every lane's variant word is 2 ([`Rescale::Real`]) and its
    /// scale finite (the exponent bits of its high word not all ones):
    /// `vpcmpeqd` twice, `vpandn`, `vpmovmskb`.
    #[inline(always)]
    unsafe fn all_real(variant: __m256i, hi: __m256i) -> bool {
        let real = _mm256_cmpeq_epi32(variant, _mm256_set1_epi32(2));
        let exponent = _mm256_set1_epi32(0x7ff0_0000);
        let not_finite = _mm256_cmpeq_epi32(_mm256_and_si256(hi, exponent), exponent);
        _mm256_movemask_epi8(_mm256_andnot_si256(not_finite, real)) == -1
    }

    /// [`Rescale::apply`] of [`Rescale::Real`] in every lane, bit for
    /// bit, for finite scales: the `f64` scales put together from their
    /// low and high words (`vpunpckldq`, `vpunpckhdq`: lanes 0, 1, 4, 5
    /// and 2, 3, 6, 7; `vperm2i128` twice: 0..4 and 4..8), then
    /// `real_half` on each half.
    #[inline(always)]
    unsafe fn mul_real(acc: __m256i, lo: __m256i, hi: __m256i) -> __m256i {
        let (a, b) = (_mm256_unpacklo_epi32(lo, hi), _mm256_unpackhi_epi32(lo, hi));
        let s0 = _mm256_castsi256_pd(_mm256_permute2x128_si256::<0x20>(a, b));
        let s1 = _mm256_castsi256_pd(_mm256_permute2x128_si256::<0x31>(a, b));
        let r0 = real_half(_mm256_castsi256_si128(acc), s0);
        let r1 = real_half(_mm256_extracti128_si256::<1>(acc), s1);
        _mm256_set_m128i(r1, r0)
    }

    /// `round_f64(acc * scale)` saturated to `i32`, in 4 lanes, for finite
    /// scales, as `avx512::real_half` (whose comments give the reasons):
    /// `vcvtdq2pd`, `vmulpd`, `vminpd` with `i32::MAX`, `x ± H` (`H` the
    /// double below 0.5 with `x`'s sign: `vandpd`, `vorpd`, `vaddpd`),
    /// `vcvttpd2dq` (which truncates, and whose out-of-range
    /// `0x8000_0000` is the saturation to `i32::MIN`).
    #[inline(always)]
    unsafe fn real_half(acc: __m128i, scale: __m256d) -> __m128i {
        let x = _mm256_mul_pd(_mm256_cvtepi32_pd(acc), scale);
        let x = _mm256_min_pd(x, _mm256_set1_pd(f64::from(i32::MAX)));
        let sign = _mm256_and_pd(x, _mm256_set1_pd(-0.0));
        let h = _mm256_or_pd(sign, _mm256_set1_pd(BELOW_HALF));
        _mm256_cvttpd_epi32(_mm256_add_pd(x, h))
    }

    /// [`multiply_by_quantized_multiplier`]`(x, m, shift)` in every
    /// lane, bit for bit, for any `m` and `shift` (TFLite's double
    /// rounding): `vpsllvd`, then `srdhm` and `div_pot`. As
    /// `avx512::mul_q31`, whose comments give the reasons.
    #[inline(always)]
    unsafe fn mul_q31(x: __m256i, m: __m256i, shift: __m256i) -> __m256i {
        // `x.wrapping_shl(max(shift, 0))` (the count taken `& 31`).
        let left = _mm256_and_si256(
            _mm256_max_epi32(shift, _mm256_setzero_si256()),
            _mm256_set1_epi32(31),
        );
        div_pot(srdhm(_mm256_sllv_epi32(x, left), m), right_exponent(shift))
    }

    /// [`multiply_by_quantized_multiplier_smaller_than_one_exp`]`(x, m,
    /// shift)` in every lane, bit for bit, for any `m` and `shift`:
    /// `mul_q31` without its left shift (a positive `shift` counts as 0).
    #[inline(always)]
    unsafe fn mul_q31_exp(x: __m256i, m: __m256i, shift: __m256i) -> __m256i {
        div_pot(srdhm(x, m), right_exponent(shift))
    }

    /// The exponent of `rounding_divide_by_pot` for a multiplier's
    /// `shift`: `min(max(-shift, 0), 31)`.
    #[inline(always)]
    unsafe fn right_exponent(shift: __m256i) -> __m256i {
        let zero = _mm256_setzero_si256();
        _mm256_sub_epi32(
            zero,
            _mm256_min_epi32(_mm256_max_epi32(shift, _mm256_set1_epi32(-31)), zero),
        )
    }

    /// `saturating_rounding_doubling_high_mul(x, m)` in every lane: bits
    /// 31..62 of the 64-bit `x * m + 2^30` (TFLite's nudge and truncating
    /// division come to this floor), even and odd lanes apart
    /// (`vpmuldq`), blended; then the saturation.
    #[inline(always)]
    unsafe fn srdhm(x: __m256i, m: __m256i) -> __m256i {
        let nudge = _mm256_set1_epi64x(1 << 30);
        let even = _mm256_add_epi64(_mm256_mul_epi32(x, m), nudge);
        let odd = _mm256_mul_epi32(_mm256_srli_epi64::<32>(x), _mm256_srli_epi64::<32>(m));
        let odd = _mm256_add_epi64(odd, nudge);
        let high = _mm256_blend_epi32::<0b1010_1010>(
            _mm256_srli_epi64::<31>(even),
            _mm256_slli_epi64::<1>(odd),
        );
        // `i32::MIN * i32::MIN` comes out as `i32::MIN` (no other product
        // does): `i32::MAX`, adding the comparison's -1.
        _mm256_add_epi32(high, _mm256_cmpeq_epi32(high, _mm256_set1_epi32(i32::MIN)))
    }

    /// `rounding_divide_by_pot(x, right)` in every lane, `right` in
    /// `0..=31`: `x >> right` (`vpsravd`), plus one where the remainder
    /// exceeds half the divisor (plus one when negative: ties away from
    /// zero).
    #[inline(always)]
    unsafe fn div_pot(x: __m256i, right: __m256i) -> __m256i {
        let one = _mm256_set1_epi32(1);
        let mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, right), one);
        let remainder = _mm256_and_si256(x, mask);
        let negative = _mm256_srai_epi32::<31>(x);
        let threshold = _mm256_sub_epi32(_mm256_srli_epi32::<1>(mask), negative);
        let up = _mm256_cmpgt_epi32(remainder, threshold);
        _mm256_sub_epi32(_mm256_srav_epi32(x, right), up)
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
            crate::int8::check::check_requantize_add::<Int8<Avx2>>(20_000);
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
