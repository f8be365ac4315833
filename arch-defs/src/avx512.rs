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
    // A broadcast tile of 12 accumulators left the FMA pipes idle on an
    // Intel Xeon VM (2026-11-28, 2 x 512-bit FMA, peak 243 GFLOP/s; DS-CNN's
    // 1x1 64->64 layer as intrinsics over 120 pixels): 12 accumulators
    // (3 columns x 4 vectors) 163 GFLOP/s, 16 (4 x 4) 175, 24 (6 x 4) 193,
    // 24 (12 x 2) 196. The same loads per FMA with twice the accumulators
    // ran 20 % faster, so latency, not the load ports, held them back. 24
    // (operand latency 8) cost more than it gained in the networks, whose
    // rows are 32, 16 and 8 pixels wide (ResNet-8 f32 180 -> 194 µs: its
    // 32x32x16 layers ran 24-column tiles over 48 columns). 16, with the
    // tie-break on FMAs per load in `small_ir::blocking`, against 12 in one
    // run (`mlperf_tiny`, 5 interleaved rounds, median µs, one thread):
    // ResNet-8 f32 162 -> 132, i8 87 -> 81; VWW 0.25 f32 151 -> 146, i8
    // 152 -> 140; DS-CNN f32 40.5 -> 39.5; AD unchanged.
    operand_latency: 4,
    column_operand_latency: 4,
    // A pointwise layer's row is its whole plane (DS-CNN 125 pixels, VWW
    // 0.25 9 to 2304): there, 24 accumulators (6 columns x 4 vectors) beat
    // 16 (Intel Xeon VM, family 6 model 167, 2026-12-03; `rounds.py
    // --rounds 3`, one thread, median µs, 16 -> 24: DS-CNN f32 36.3 ->
    // 34.5, VWW 0.25 f32 123.5 -> 119.4, int8 112.6 -> 111.1 and 32.2 ->
    // 31.6; ResNet-8 and AD, without such layers, unchanged).
    flat_operand_latency: 8,
    fma_cycles: 1,
    mul_add_cycles: 2,
    loads_per_cycle: 2,
    issue_per_cycle: 4,
    broadcast_from_memory: true,
    int8_dot: 4,
    int8_thin_dot: 4,
    int8_x_offset: 128,
    int8_weight_min: -128,
    // i8 lives in the same vector registers, one per operand; the f32
    // latency stands in for the dot product's (the blocking is measured).
    int8_regs: 32,
    int8_operand_regs: 1,
    int8_latency: 4,
    int8_mac_latency: 4,
    int8_load_cost: 1,
    // `vpdpbusd`.
    int8_dot_slots: 1,
    excludes_reference: false,
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

/// Where `Int8<Avx512>`'s depthwise kernels multiply and sum
/// ([`Dot::Mac`](crate::Dot::Mac)): 16 `i32` lanes, as `Int8<Avx512>`,
/// but a multiply-add is one VNNI `vpdpwssd` (a 1-uop 16-bit dot product)
/// instead of `vpmulld` (2 uops, 10 cycles) and `vpaddd`. Exact where a
/// depthwise kernel uses it: both factors below `2^15` in magnitude (an
/// input minus its zero point, a weight). Never constructed.
#[derive(Debug, Clone, Copy)]
pub struct Avx512Mac;

#[cfg(target_arch = "x86_64")]
// Every primitive is an `unsafe fn` whose body is one intrinsic call; the
// one safety argument below covers them all, so the bodies need no blocks.
#[allow(unsafe_op_in_unsafe_fn)]
mod imp {
    use super::{Avx512, Avx512Mac, MACHINE};
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

    crate::check_arch!(MACHINE, Avx512);
    crate::check_dot!(MACHINE, Int8<Avx512>);

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

    /// `Int8<Avx512>`'s primitives, but `fma` is `vpdpwssd`: each lane
    /// plus the products of its two 16-bit halves, `a.lo * b.lo + a.hi *
    /// b.hi`. With `b`'s high half cleared (`vpandd`, hoisted out of the
    /// columns: `b` is a weight vector, the same for every column) and
    /// both low halves holding the factors (`|a|, |b| < 2^15`), that is
    /// `a * b`, exactly.
    impl Simd for Avx512Mac {
        type Elem = i8;
        type V = __m512i;
        const LANES: usize = 16;
        #[inline(always)]
        unsafe fn zero() -> __m512i {
            Int8::<Avx512>::zero()
        }
        #[inline(always)]
        unsafe fn splat(x: i32) -> __m512i {
            Int8::<Avx512>::splat(x)
        }
        #[inline(always)]
        unsafe fn load(p: *const i32) -> __m512i {
            Int8::<Avx512>::load(p)
        }
        #[inline(always)]
        unsafe fn store(p: *mut i32, v: __m512i) {
            Int8::<Avx512>::store(p, v)
        }
        #[inline(always)]
        unsafe fn broadcast(p: *const i8) -> __m512i {
            Int8::<Avx512>::broadcast(p)
        }
        /// `vpdpwssd` of `a` and `b`'s low halves. A weight from
        /// [`Dot::widen_mac_weights`] has them cleared already, and LLVM
        /// drops this `vpandd` for it.
        #[inline(always)]
        unsafe fn fma(acc: __m512i, a: __m512i, b: __m512i) -> __m512i {
            dpwssd(acc, a, _mm512_and_si512(b, _mm512_set1_epi32(0xFFFF)))
        }
        #[inline(always)]
        unsafe fn max(a: __m512i, b: __m512i) -> __m512i {
            Int8::<Avx512>::max(a, b)
        }
        #[inline(always)]
        unsafe fn min(a: __m512i, b: __m512i) -> __m512i {
            Int8::<Avx512>::min(a, b)
        }
        #[inline(always)]
        unsafe fn add(a: __m512i, b: __m512i) -> __m512i {
            Int8::<Avx512>::add(a, b)
        }
        #[inline(always)]
        unsafe fn mul(a: __m512i, b: __m512i) -> __m512i {
            Int8::<Avx512>::mul(a, b)
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
            // flipped: `x ^ 0x80` is `x + 128` as an unsigned byte.
            // `vpbroadcastd zmm, m32` (a load, no ALU uop), then `vpxord`
            // (see `xor_wide`; the constant hoisted out of loops).
            let x = _mm512_set1_epi32(p.cast::<i32>().read_unaligned());
            xor_wide(x, _mm512_set1_epi32(0x8080_8080_u32 as i32))
        }
        #[inline(always)]
        unsafe fn group_strided(p: *const i8, stride: usize) -> __m512i {
            if stride != 4 {
                return Self::group(crate::int8::strided::<4>(p, stride, 4).as_ptr());
            }
            // Four 4-byte pixels (16 bytes, the caller's contract): their
            // first bytes gathered into one word by `vpshufb`, offset, then
            // broadcast (no scalar work).
            let px = _mm_loadu_si128(p.cast());
            let word = _mm_shuffle_epi8(px, _mm_set1_epi32(0x0c08_0400));
            let word = _mm_xor_si128(word, _mm_set1_epi32(0x8080_8080_u32 as i32));
            _mm512_broadcastd_epi32(word)
        }
        const OFFSET_AHEAD: bool = true;
        #[inline(always)]
        unsafe fn offset_pixels(dst: *mut i8, src: *const i8, n: usize) {
            // One `vpxor xmm` per pixel (16 bytes), where `group` spends
            // one per 4 bytes and per read. Not 64 bytes at a time: the
            // 4-byte broadcasts right after did not forward from a 64-byte
            // store (Ice Lake VM: the tile as slow as without the buffer),
            // and do from a 16-byte one.
            let flip = _mm_set1_epi8(-128);
            for i in 0..n {
                let x = _mm_loadu_si128(src.add(16 * i).cast());
                _mm_storeu_si128(dst.add(16 * i).cast(), _mm_xor_si128(x, flip));
            }
            written(dst)
        }
        #[inline(always)]
        unsafe fn offset_fill(dst: *mut i8, x: i8, n: usize) {
            let v = _mm_set1_epi8(x ^ -128);
            for i in 0..n {
                _mm_storeu_si128(dst.add(16 * i).cast(), v);
            }
            written(dst)
        }
        #[inline(always)]
        fn offset_word(w: u32) -> u32 {
            w ^ 0x8080_8080
        }
        #[inline(always)]
        unsafe fn group_offset(p: *const i8) -> __m512i {
            // `vpbroadcastd zmm, m32`: a load, no ALU uop.
            _mm512_set1_epi32(p.cast::<i32>().read_unaligned())
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
        crate::int8::dot_is_thin!();

        /// [`Avx512Mac`]: `i32` lanes summed by `vpdpwssd`, so that an
        /// input is widened by one `vpmovsxbd` and the sum needs no
        /// conversion. (The `f32` form it replaced took `vpmovsxbd` and
        /// `vcvtdq2ps` per input and `vcvtps2dq` per output.)
        type Mac = Avx512Mac;
        #[inline(always)]
        unsafe fn widen_mac(p: *const i8) -> __m512i {
            Self::widen(p)
        }
        /// The high halves cleared, as `Avx512Mac::fma` needs them, once
        /// per weight vector: inside `fma`, an edge tile's guarded columns
        /// each repeated the `vpandd` before every `vpdpwssd`.
        #[inline(always)]
        unsafe fn widen_mac_weights(p: *const i8) -> __m512i {
            _mm512_and_si512(Self::widen(p), _mm512_set1_epi32(0xFFFF))
        }
        #[inline(always)]
        unsafe fn to_mac(v: __m512i) -> __m512i {
            v
        }
        #[inline(always)]
        unsafe fn from_mac(m: __m512i) -> __m512i {
            m
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
        unsafe fn requantize_staged(p: *mut i8, acc: __m512i, st: Stage) {
            if !st.stepped {
                return requantize_other(p, acc, st.at.rows, st.at.stride);
            }
            store_bytes(p, stepped_output(acc, &st))
        }

        /// Every lane [`row::STEPPED`]: `a`'s and `b`'s lower 8 lanes as
        /// one vector (`vshufi64x2`) through `requantize_staged`'s stages
        /// once (the rows' upper half repeats the lower, see the trait),
        /// then each pixel's 8 bytes beside the padding lanes' bytes, the
        /// zero point clamped, which is what the padding lanes' zero sums
        /// requantize to. Two 16-byte stores. Else two
        /// `requantize_staged`s.
        #[inline(always)]
        unsafe fn requantize_pair(pa: *mut i8, pb: *mut i8, a: __m512i, b: __m512i, st: Stage) {
            if !st.stepped {
                Self::requantize_staged(pa, a, st);
                return Self::requantize_staged(pb, b, st);
            }
            let v = _mm512_shuffle_i64x2::<0b01_00_01_00>(a, b);
            let bytes = _mm512_cvtepi32_epi8(stepped_output(v, &st));
            let pad = _mm512_cvtepi32_epi8(clamped(st.zero_point, &st));
            let pad = _mm_unpackhi_epi64(pad, pad);
            _mm_storeu_si128(pa.cast(), _mm_unpacklo_epi64(bytes, pad));
            _mm_storeu_si128(pb.cast(), _mm_unpackhi_epi64(bytes, pad));
        }

        /// Every lane [`row::STEPPED`] (so the ADD's steps are there too):
        /// [`output`] as `requantize_staged` computes it with the `as i8`
        /// of its result (`vpslld`/`vpsrad` by 24), minus
        /// `CONV_ZERO_POINT`; the skip's 16 bytes sign-extended
        /// (`vpmovsxbd`, read before `p` is written), minus
        /// `SKIP_ZERO_POINT`; each shifted left by its step's `left`
        /// (`vpsllvd`) and through its `step`, added, through the output's
        /// `step`; the ADD's zero point and clamp, `store_bytes`. Any
        /// other vector: `requantize_add_cold`.
        #[inline(always)]
        unsafe fn requantize_add_staged(p: *mut i8, acc: __m512i, skip: *const i8, st: AddStage) {
            let c = &st.conv;
            if !c.stepped {
                return requantize_add_cold(p, acc, skip, c.at.rows, c.at.stride);
            }
            let skip = Self::widen(skip);
            let conv = stepped_output(acc, c);
            let conv = _mm512_srai_epi32::<24>(_mm512_slli_epi32::<24>(conv));
            let x1 = _mm512_sub_epi32(conv, st.conv_zero_point);
            let x2 = _mm512_sub_epi32(skip, st.skip_zero_point);
            let s1 = step(_mm512_sllv_epi32(x1, st.left[0]), &st.steps[0]);
            let s2 = step(_mm512_sllv_epi32(x2, st.left[1]), &st.steps[1]);
            let sum = step(_mm512_add_epi32(s1, s2), &st.steps[2]);
            let v = _mm512_add_epi32(sum, st.zero_point);
            store_bytes(p, _mm512_min_epi32(_mm512_max_epi32(v, st.min), st.max))
        }

        /// `requantize_staged` of this vector's rows.
        #[inline(always)]
        unsafe fn requantize(p: *mut i8, acc: __m512i, rows: *const i32, stride: usize) {
            Self::requantize_staged(p, acc, Self::stage(rows, stride))
        }

        /// `requantize_add_staged` of this vector's rows.
        #[inline(always)]
        unsafe fn requantize_add(
            p: *mut i8,
            acc: __m512i,
            skip: *const i8,
            rows: *const i32,
            stride: usize,
        ) {
            Self::requantize_add_staged(p, acc, skip, Self::add_stage(rows, stride))
        }

        /// `div_round` on each half, then `clamp_store`. A `count` below
        /// 1: the scalar default.
        #[inline(always)]
        unsafe fn average(p: *mut i8, sum: __m512i, count: i32, rows: *const i32, stride: usize) {
            if count <= 0 {
                return average_cold(p, sum, count, rows, stride);
            }
            let lo = div_round(_mm512_castsi512_si256(sum), count);
            let hi = div_round(_mm512_extracti64x4_epi64::<1>(sum), count);
            let v = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi);
            clamp_store(p, v, rows, stride)
        }

        /// `clamp_store`.
        #[inline(always)]
        unsafe fn clamp(p: *mut i8, v: __m512i, rows: *const i32, stride: usize) {
            clamp_store(p, v, rows, stride)
        }
    }

    /// A stepped vector's output before its bytes: `step`, the zero
    /// point, the clamp (the rows of `st`).
    #[inline(always)]
    unsafe fn stepped_output(acc: __m512i, st: &Stage) -> __m512i {
        clamped(_mm512_add_epi32(step(acc, &st.step), st.zero_point), st)
    }

    /// `v` clamped to the rows `MIN..=MAX` of `st`: `vpmaxsd`, `vpminsd`.
    #[inline(always)]
    unsafe fn clamped(v: __m512i, st: &Stage) -> __m512i {
        _mm512_min_epi32(_mm512_max_epi32(v, st.min), st.max)
    }

    /// Tells LLVM that memory at `p` may have changed: after
    /// `offset_pixels`, so that it reads the buffer back with
    /// `vpbroadcastd zmm, m32` (a load). Without it LLVM saw through the
    /// stores, kept the bytes in registers and made every `group_offset`
    /// a shuffle and a register broadcast (`vpshufd`, `vpbroadcastd zmm,
    /// xmm`, both port 5), and spilled: the tile ran 30 % slower.
    #[inline(always)]
    fn written(p: *mut i8) {
        // SAFETY: an empty `asm!`: it reads and writes nothing.
        unsafe { core::arch::asm!("/* {p} */", p = in(reg) p, options(nostack, preserves_flags)) }
    }

    /// `a ^ b`, as one `vpxord zmm` that LLVM cannot narrow. Written as
    /// `_mm512_xor_si512`, the xor of [`Dot::group`]'s two splats becomes
    /// a splat of the xor: `vmovd`, `vpxor xmm`, `vpbroadcastd zmm, xmm`,
    /// two vector ALU uops per activation (one on port 5, beside the
    /// `vpdpbusd`s) where this form takes one. On an Ice Lake Xeon VM, 12
    /// `vpdpbusd`s with 4 such broadcasts ran at 0.85-1.0 cycles each in
    /// the narrowed form and 0.67-0.81 in this one (0.5 without the xor).
    /// Not `#[inline(always)]` (an `asm!` operand in `zmm_reg` needs the
    /// function's target feature); LLVM inlines it into the kernels, whose
    /// features include AVX-512F.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn xor_wide(a: __m512i, b: __m512i) -> __m512i {
        let r: __m512i;
        // SAFETY: `vpxord` reads and writes registers only (no memory,
        // stack or flags), and the CPU has AVX-512F (the caller's contract).
        unsafe {
            core::arch::asm!(
                "vpxord {r}, {a}, {b}",
                r = lateout(zmm_reg) r,
                a = in(zmm_reg) a,
                b = in(zmm_reg) b,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        r
    }

    /// `acc + a.lo * b.lo + a.hi * b.hi` in every `i32` lane: one
    /// `vpdpwssd` that LLVM cannot split. From the intrinsic, LLVM's
    /// machine combiner (no `target-cpu`) turned most of a depthwise
    /// tile's `vpdpwssd`s into `vpmaddwd` + `vpaddd`, two uops where one
    /// does, to shorten accumulator chains that a tile's 8 independent
    /// columns already hide. Not `#[inline(always)]`, as `xor_wide`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vnni")]
    unsafe fn dpwssd(acc: __m512i, a: __m512i, b: __m512i) -> __m512i {
        let mut r = acc;
        // SAFETY: `vpdpwssd` reads and writes registers only (no memory,
        // stack or flags), and the CPU has AVX-512F and VNNI (the
        // caller's contract).
        unsafe {
            core::arch::asm!(
                "vpdpwssd {r}, {a}, {b}",
                r = inout(zmm_reg) r,
                a = in(zmm_reg) a,
                b = in(zmm_reg) b,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        r
    }

    /// `requantize_add` of a vector whose lanes are not all
    /// [`row::STEPPED`]: if every lane is double rounding, the same
    /// stages with `mul_q31` and `mul_q31_exp` in place of the steps,
    /// else the scalar default. Out of line (see `requantize_other`).
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2,fma")]
    #[inline(never)]
    unsafe fn requantize_add_cold(
        p: *mut i8,
        acc: __m512i,
        skip: *const i8,
        rows: *const i32,
        stride: usize,
    ) {
        let variant = load_row(rows, stride, row::RESCALE);
        if !all_double(variant) {
            return requantize_add_scalar::<crate::Int8<Avx512>>(p, acc, skip, rows, stride);
        }
        let skip = <crate::Int8<Avx512> as Dot>::widen(skip);
        let conv = mul_q31(
            acc,
            load_row(rows, stride, row::RESCALE + 1),
            load_row(rows, stride, row::RESCALE + 2),
        );
        let conv = _mm512_add_epi32(conv, load_row(rows, stride, row::ZERO_POINT));
        let conv = clamp(conv, rows, stride, row::MIN, row::MAX);
        let conv = _mm512_srai_epi32::<24>(_mm512_slli_epi32::<24>(conv));
        let x1 = _mm512_sub_epi32(conv, load_row(rows, stride, row::CONV_ZERO_POINT));
        let x2 = _mm512_sub_epi32(skip, load_row(rows, stride, row::SKIP_ZERO_POINT));
        let at = |k: usize| row::ADD_RESCALE + k;
        let left = _mm512_and_si512(load_row(rows, stride, at(0)), _mm512_set1_epi32(31));
        let s1 = mul_q31_exp(
            _mm512_sllv_epi32(x1, left),
            load_row(rows, stride, at(1)),
            load_row(rows, stride, at(2)),
        );
        let s2 = mul_q31_exp(
            _mm512_sllv_epi32(x2, left),
            load_row(rows, stride, at(3)),
            load_row(rows, stride, at(4)),
        );
        let sum = mul_q31_exp(
            _mm512_add_epi32(s1, s2),
            load_row(rows, stride, at(5)),
            load_row(rows, stride, at(6)),
        );
        let v = _mm512_add_epi32(sum, load_row(rows, stride, row::ADD_ZERO_POINT));
        store_bytes(p, clamp(v, rows, stride, row::ADD_MIN, row::ADD_MAX))
    }

    /// The scalar `average`, out of line (see `requantize_other`).
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2,fma")]
    #[inline(never)]
    unsafe fn average_cold(p: *mut i8, sum: __m512i, count: i32, rows: *const i32, stride: usize) {
        average_scalar::<crate::Int8<Avx512>>(p, sum, count, rows, stride)
    }

    /// `requantize` of a vector whose lanes are not all
    /// [`row::STEPPED`]: FULLY_CONNECTED's `f64` rescale (`mul_real`);
    /// double rounding without steps (a shift of 0 or more): `mul_q31`;
    /// else the scalar default. Out of line, so that the convolutions'
    /// inlined STORE keeps only the step (inlined, these paths made
    /// ResNet-8's 3x3 convolutions 1.8x slower on Zen 5).
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2,fma")]
    #[inline(never)]
    unsafe fn requantize_other(p: *mut i8, acc: __m512i, rows: *const i32, stride: usize) {
        let variant = load_row(rows, stride, row::RESCALE);
        let (lo, hi) = (
            load_row(rows, stride, row::RESCALE + 1),
            load_row(rows, stride, row::RESCALE + 2),
        );
        if all_real(variant, hi) {
            let v = _mm512_add_epi32(mul_real(acc, lo, hi), load_row(rows, stride, row::ZERO_POINT));
            clamp_store(p, v, rows, stride)
        } else if all_double(variant) {
            let v = _mm512_add_epi32(mul_q31(acc, lo, hi), load_row(rows, stride, row::ZERO_POINT));
            clamp_store(p, v, rows, stride)
        } else {
            requantize_scalar_cold(p, acc, rows, stride)
        }
    }

    /// The scalar `requantize`, out of line: inlined, its lane buffer
    /// gave `requantize_other` a 300-byte frame and six saved registers
    /// that every FULLY_CONNECTED vector paid for.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2,fma")]
    #[inline(never)]
    #[cold]
    unsafe fn requantize_scalar_cold(p: *mut i8, acc: __m512i, rows: *const i32, stride: usize) {
        requantize_scalar::<crate::Int8<Avx512>>(p, acc, rows, stride)
    }

    /// True if every lane's variant word is [`row::STEPPED`].
    #[inline(always)]
    unsafe fn all_stepped(rows: *const i32, stride: usize) -> bool {
        let variant = load_row(rows, stride, row::RESCALE);
        _mm512_cmpneq_epi32_mask(variant, _mm512_set1_epi32(row::STEPPED)) == 0
    }

    /// True if every lane's variant word is a double rounding's (0, or
    /// [`row::STEPPED`]).
    #[inline(always)]
    unsafe fn all_double(variant: __m512i) -> bool {
        let zero = _mm512_cmpeq_epi32_mask(variant, _mm512_setzero_si512());
        let stepped = _mm512_cmpeq_epi32_mask(variant, _mm512_set1_epi32(row::STEPPED));
        zero | stepped == 0xffff
    }

    /// A vector of channels' output-stage rows, loaded once per tile
    /// ([`Dot::stage`]).
    #[derive(Clone, Copy)]
    pub struct Stage {
        at: RowsAt,
        /// Every lane [`row::STEPPED`].
        stepped: bool,
        step: StepRows,
        zero_point: __m512i,
        min: __m512i,
        max: __m512i,
    }

    /// A residual layer's rows: the convolution's, then the ADD's
    /// ([`Dot::add_stage`]).
    #[derive(Clone, Copy)]
    pub struct AddStage {
        conv: Stage,
        conv_zero_point: __m512i,
        skip_zero_point: __m512i,
        left: [__m512i; 2],
        steps: [StepRows; 3],
        zero_point: __m512i,
        min: __m512i,
        max: __m512i,
    }

    /// One [`Step`] of 16 channels: the multipliers (`m`; `m_odd`, read
    /// one word on, whose even lanes are the odd channels'), then each
    /// row pair (see `small_ir::step`), even channels first.
    #[derive(Clone, Copy)]
    struct StepRows {
        m: __m512i,
        m_odd: __m512i,
        round: [__m512i; 2],
        limit: [__m512i; 2],
        /// The even channels' whole-word shifts, `32 + shift` in each
        /// 64-bit lane (`vpsravq`), from the high words of their count row.
        even_shift: __m512i,
        /// The odd channels' count row: `shift` in each high word.
        odd_shift: __m512i,
    }

    /// The step whose multipliers are row `m` (the word after its 16 is
    /// read too) and whose row pairs start at row `pairs`.
    #[inline(always)]
    unsafe fn load_step(rows: *const i32, stride: usize, m: usize, pairs: usize) -> StepRows {
        let row = |k: usize| rows.add((pairs + k) * stride).cast::<__m512i>();
        StepRows {
            m: load_row(rows, stride, m),
            m_odd: _mm512_loadu_si512(rows.add(m * stride + 1).cast()),
            round: [_mm512_loadu_si512(row(0)), _mm512_loadu_si512(row(1))],
            limit: [_mm512_loadu_si512(row(2)), _mm512_loadu_si512(row(3))],
            even_shift: _mm512_add_epi64(
                _mm512_srli_epi64::<32>(_mm512_loadu_si512(row(4))),
                _mm512_set1_epi64(32),
            ),
            odd_shift: _mm512_loadu_si512(row(5)),
        }
    }

    /// [`Step::apply`] in every lane, bit for bit, for `x` already shifted
    /// left. The even lanes' products (`vpmuldq`), the odd lanes'
    /// (`vpsrlq` of `x` first); each plus `round` (`vpaddq`), minus `2^31`
    /// under the mask of products below `limit` (`vpcmpq`, `vpsubq`). The
    /// even products shifted right by `32 + shift` as whole words
    /// (`vpsravq`: each result lands in its low word, lane `2k`), the odd
    /// ones' high words by `shift` into lanes `2k + 1` (`vpsravd` under a
    /// mask). A shuffle interleaving two `vpsravd` results cost one more
    /// port-5 uop (`vpermt2d`) and a copy of its index.
    #[inline(always)]
    unsafe fn step(x: __m512i, s: &StepRows) -> __m512i {
        let even = rounded(_mm512_mul_epi32(x, s.m), s, 0);
        let odd = rounded(_mm512_mul_epi32(_mm512_srli_epi64::<32>(x), s.m_odd), s, 1);
        let low = _mm512_srav_epi64(even, s.even_shift);
        _mm512_mask_srav_epi32(low, 0xAAAA, odd, s.odd_shift)
    }

    /// `step`'s 8 products `p` (pair `k`) plus `round`, minus `2^31` where
    /// below `limit`. (A function, not a closure: a closure would be
    /// compiled without the target features.)
    #[inline(always)]
    unsafe fn rounded(p: __m512i, s: &StepRows, k: usize) -> __m512i {
        let r = _mm512_add_epi64(p, s.round[k]);
        let below = _mm512_cmplt_epi64_mask(p, s.limit[k]);
        _mm512_mask_sub_epi64(r, below, r, _mm512_set1_epi64(1 << 31))
    }

    /// Row `r` of the per-channel rows (`small_ir::quant::row`): 16
    /// values at `rows + r * stride`.
    #[inline(always)]
    unsafe fn load_row(rows: *const i32, stride: usize, r: usize) -> __m512i {
        _mm512_loadu_si512(rows.add(r * stride).cast())
    }

    /// [`clamp_i8`] in every lane (rows `MIN`, `MAX`) and the 16 bytes
    /// stored: `clamp`, `store_bytes`.
    #[inline(always)]
    unsafe fn clamp_store(p: *mut i8, v: __m512i, rows: *const i32, stride: usize) {
        store_bytes(p, clamp(v, rows, stride, row::MIN, row::MAX))
    }

    /// `v` clamped to rows `min..=max` in every lane, as [`clamp_i8`]
    /// before its `as i8`: `vpmaxsd`, `vpminsd`.
    #[inline(always)]
    unsafe fn clamp(v: __m512i, rows: *const i32, stride: usize, min: usize, max: usize) -> __m512i {
        let v = _mm512_max_epi32(v, load_row(rows, stride, min));
        _mm512_min_epi32(v, load_row(rows, stride, max))
    }

    /// The low byte of every lane, 16 bytes stored: `vpmovdb`, which
    /// truncates as `as i8` does (so even a clamp outside `i8` gives the
    /// scalar bits).
    #[inline(always)]
    unsafe fn store_bytes(p: *mut i8, v: __m512i) {
        _mm_storeu_si128(p.cast(), _mm512_cvtepi32_epi8(v))
    }

    /// [`rounding_average`]`(sum, count)` in 8 lanes, for `count >= 1`:
    /// `sum ± count / 2` (`+` where `sum > 0`) saturated to `i32`, divided
    /// by `count` and truncated, in `f64` (`vcvtdq2pd`, `vaddpd`/`vsubpd`
    /// under a mask, `vmaxpd`, `vminpd`, `vdivpd`, `vcvttpd2dq`). Exact:
    /// the sum and the bounds are exact in `f64`, and a quotient `n / c`
    /// of `i32`s that is not an integer lies at least `1 / c` from one,
    /// far more than its half ulp (`|n / c| * 2^-53 <= 2^-22 / c`), so
    /// rounding the division never crosses or reaches an integer.
    #[inline(always)]
    unsafe fn div_round(sum: __m256i, count: i32) -> __m256i {
        let s = _mm512_cvtepi32_pd(sum);
        let half = _mm512_set1_pd(f64::from(count / 2));
        let positive = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(s, _mm512_setzero_pd());
        let n = _mm512_mask_add_pd(_mm512_sub_pd(s, half), positive, s, half);
        let n = _mm512_max_pd(n, _mm512_set1_pd(f64::from(i32::MIN)));
        let n = _mm512_min_pd(n, _mm512_set1_pd(f64::from(i32::MAX)));
        _mm512_cvttpd_epi32(_mm512_div_pd(n, _mm512_set1_pd(f64::from(count))))
    }

    /// True if every lane's variant word is 2 ([`Rescale::Real`]) and its
    /// scale finite (the exponent bits of its high word not all ones):
    /// `vpcmpeqd`, `vpandd` + `vpcmpneqd` under that mask, `kortestw`.
    #[inline(always)]
    unsafe fn all_real(variant: __m512i, hi: __m512i) -> bool {
        let real = _mm512_cmpeq_epi32_mask(variant, _mm512_set1_epi32(2));
        let exponent = _mm512_set1_epi32(0x7ff0_0000);
        let finite =
            _mm512_mask_cmpneq_epi32_mask(real, _mm512_and_si512(hi, exponent), exponent);
        finite == 0xffff
    }

    /// [`Rescale::apply`] of [`Rescale::Real`] in every lane, bit for
    /// bit, for finite scales: the `f64` scales put together from their
    /// low and high words (`vpermt2d`), then `real_half` on each half.
    #[inline(always)]
    unsafe fn mul_real(acc: __m512i, lo: __m512i, hi: __m512i) -> __m512i {
        // Words `l` and `16 + l` (lane `l`'s low and high word) side by
        // side: the lanes' `f64`s, 0..8 then 8..16.
        let first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
        let second = _mm512_add_epi32(first, _mm512_set1_epi32(8));
        let s0 = _mm512_castsi512_pd(_mm512_permutex2var_epi32(lo, first, hi));
        let s1 = _mm512_castsi512_pd(_mm512_permutex2var_epi32(lo, second, hi));
        let r0 = real_half(_mm512_castsi512_si256(acc), s0);
        let r1 = real_half(_mm512_extracti64x4_epi64::<1>(acc), s1);
        _mm512_inserti64x4::<1>(_mm512_castsi256_si512(r0), r1)
    }

    /// `round_f64(acc * scale)` saturated to `i32`, in 8 lanes, for finite
    /// scales: `vcvtdq2pd` (exact), `vmulpd` (the scalar's one rounded
    /// product), `vminpd` with `i32::MAX` (rounding is monotone and keeps
    /// that integer, so clamping first is clamping after; `+inf` becomes
    /// the bound), then ties away from zero as `trunc(x ± H)`, `H` the
    /// double below 0.5 with `x`'s sign (`vpternlogq`), `vaddpd` and the
    /// truncating `vcvttpd2dq`. Exact for `|x| < 2^31`, where a double's
    /// unit in the last place is at most `2^-22`: with `x = n + f`, a
    /// fraction `f >= 0.5` puts the exact sum at `n + 1 - 2^-54` or above,
    /// which rounds to `n + 1` (at exactly that, `x = 0.5`, the tie goes
    /// to the even `1.0`); `f < 0.5` is at most `0.5 - ulp(x)`, so the sum
    /// stays below the double under `n + 1` and truncates to `n`. Below
    /// `i32::MIN` (or `-inf`) `vcvttpd2dq` gives `0x8000_0000`, its
    /// out-of-range value, which is the saturation to `i32::MIN`; so no
    /// lower clamp. Four dependent steps instead of `t = trunc(x)`, `t +
    /// trunc(2 (x - t))`'s seven: FULLY_CONNECTED's STORE is a latency
    /// chain per vector.
    #[inline(always)]
    unsafe fn real_half(acc: __m256i, scale: __m512d) -> __m256i {
        let x = _mm512_mul_pd(_mm512_cvtepi32_pd(acc), scale);
        let x = _mm512_castpd_si512(_mm512_min_pd(x, _mm512_set1_pd(f64::from(i32::MAX))));
        let sign = _mm512_set1_epi64(i64::MIN);
        let half = _mm512_set1_epi64(BELOW_HALF.to_bits() as i64);
        // (x & sign) | half: 0xEA is `(A & B) | C`.
        let h = _mm512_ternarylogic_epi64::<0xEA>(x, sign, half);
        let r = _mm512_add_pd(_mm512_castsi512_pd(x), _mm512_castsi512_pd(h));
        _mm512_cvttpd_epi32(r)
    }

    /// [`multiply_by_quantized_multiplier`]`(x, m, shift)` in every
    /// lane, bit for bit, for any `m` and `shift` (TFLite's double
    /// rounding): `vpsllvd`, then `srdhm` and `div_pot`.
    #[inline(always)]
    unsafe fn mul_q31(x: __m512i, m: __m512i, shift: __m512i) -> __m512i {
        // `x.wrapping_shl(max(shift, 0))` (the count taken `& 31`).
        let left = _mm512_and_si512(
            _mm512_max_epi32(shift, _mm512_setzero_si512()),
            _mm512_set1_epi32(31),
        );
        div_pot(srdhm(_mm512_sllv_epi32(x, left), m), right_exponent(shift))
    }

    /// [`multiply_by_quantized_multiplier_smaller_than_one_exp`]`(x, m,
    /// shift)` in every lane, bit for bit, for any `m` and `shift`:
    /// `mul_q31` without its left shift (a positive `shift` counts as 0).
    #[inline(always)]
    unsafe fn mul_q31_exp(x: __m512i, m: __m512i, shift: __m512i) -> __m512i {
        div_pot(srdhm(x, m), right_exponent(shift))
    }

    /// The exponent of `rounding_divide_by_pot` for a multiplier's
    /// `shift`: `min(max(-shift, 0), 31)`.
    #[inline(always)]
    unsafe fn right_exponent(shift: __m512i) -> __m512i {
        let zero = _mm512_setzero_si512();
        _mm512_sub_epi32(
            zero,
            _mm512_min_epi32(_mm512_max_epi32(shift, _mm512_set1_epi32(-31)), zero),
        )
    }

    /// `saturating_rounding_doubling_high_mul(x, m)` in every lane:
    /// `vpmuldq` of the even and of the odd lanes with the nudge and a
    /// 64-bit shift each, blended; the saturation of `i32::MIN *
    /// i32::MIN`.
    #[inline(always)]
    unsafe fn srdhm(x: __m512i, m: __m512i) -> __m512i {
        // With `ab` the exact product, TFLite's `(ab + nudge) / 2^31`
        // (nudge `2^30` if `ab >= 0`, else `1 - 2^30`; `/` truncating) is
        // `(ab + 2^30) >> 31` (floor) in both cases: for `ab < 0` the
        // dividend is negative and truncation is `ceil`, and `ceil((ab + 1
        // - 2^30) / 2^31) = floor((ab + 1 - 2^30 + 2^31 - 1) / 2^31)`.
        // Bits 31..62 of the 64-bit `ab + 2^30`: shifted down in the even
        // lanes, up by one in the odd lanes (high halves), blended.
        let nudge = _mm512_set1_epi64(1 << 30);
        let even = _mm512_add_epi64(_mm512_mul_epi32(x, m), nudge);
        let odd = _mm512_mul_epi32(_mm512_srli_epi64::<32>(x), _mm512_srli_epi64::<32>(m));
        let odd = _mm512_add_epi64(odd, nudge);
        let high = _mm512_mask_blend_epi32(
            0xaaaa,
            _mm512_srli_epi64::<31>(even),
            _mm512_slli_epi64::<1>(odd),
        );
        // The one product that does not fit, `i32::MIN * i32::MIN`, gives
        // `2^31`, read as `i32::MIN`, which no other product gives (the
        // least result, of `i32::MIN * i32::MAX`, is `-2^31 + 1`): it
        // saturates to `i32::MAX` (`i32::MIN - 1`).
        let overflow = _mm512_cmpeq_epi32_mask(high, _mm512_set1_epi32(i32::MIN));
        _mm512_mask_sub_epi32(high, overflow, high, _mm512_set1_epi32(1))
    }

    /// `rounding_divide_by_pot(x, right)` in every lane, `right` in
    /// `0..=31`: `x >> right` (`vpsravd`), plus one where the remainder
    /// exceeds half the divisor (plus one when negative, so that ties
    /// round away from zero).
    #[inline(always)]
    unsafe fn div_pot(x: __m512i, right: __m512i) -> __m512i {
        let one = _mm512_set1_epi32(1);
        let mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, right), one);
        let remainder = _mm512_and_si512(x, mask);
        let negative = _mm512_srai_epi32::<31>(x);
        let threshold = _mm512_sub_epi32(_mm512_srli_epi32::<1>(mask), negative);
        let up = _mm512_cmpgt_epi32_mask(remainder, threshold);
        let q = _mm512_srav_epi32(x, right);
        _mm512_mask_add_epi32(q, up, q, one)
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
            crate::int8::check::check_requantize_add::<Int8<Avx512>>(20_000);
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
