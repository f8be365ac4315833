//! The integer primitives of an arch, beyond the common [`Simd`] part:
//! the dot product COMPUTE calls and the output stages STORE calls.
//!
//! A broadcast kernel (convolution, pointwise, FC) reduces `DOT`
//! consecutive input channels per accumulator lane and step:
//!
//! ```text
//! x = A::group(input)            // DOT activations, in every lane
//! w = A::weights(packed)         // LANES x DOT weights
//! acc = A::dot(acc, x, w)        // acc[l] += Σ_j (x[j] + X_OFFSET) * w[l][j]
//! ```
//!
//! `X_OFFSET` is what an arch adds to each activation (AVX-512 VNNI's
//! `vpdpbusd` multiplies unsigned bytes: `x ^ 0x80 = x + 128`); the packer
//! folds `-(zp_in + X_OFFSET) * Σ w` into the bias, so the kernels never
//! subtract a zero point. A depthwise kernel widens `LANES` consecutive
//! bytes to its [`Dot::Mac`] lanes ([`Dot::widen_mac`]: `i32`, or exact
//! `f32` where `vpmulld` is slow and no `vpdpwssd` replaces it) and
//! multiplies lane by lane
//! ([`Simd::fma`] of `Mac`).
//!
//! The output stages ([`Dot::requantize`], [`Dot::requantize_add`],
//! [`Dot::average`], [`Dot::clamp`]) read the layer's per-channel rows
//! ([`small_ir::quant::row`]) at `rows + r * stride`. Their default
//! bodies are scalar, lane by lane, through `small_ir::quant`: bit-exact
//! on every arch by construction; an arch may override them with vector
//! code that gives the same bits.

use crate::Simd;
use small_ir::quant::{
    Multiplier, Prepared, Rescale, clamp_i8, multiply_by_quantized_multiplier, output,
    rounding_average, row,
};

/// The first rescale word of [`Rescale::DoubleRounding`].
const DOUBLE_ROUNDING: i32 = Rescale::DoubleRounding(Multiplier {
    multiplier: 0,
    shift: 0,
})
.to_words()[0];

/// The double just below 0.5: `trunc(x + BELOW_HALF)` rounds a
/// non-negative `x` below `2^31` to the nearest integer, ties away from
/// zero, exactly (see the x86 `real_half`).
#[cfg(target_arch = "x86_64")]
pub(crate) const BELOW_HALF: f64 = f64::from_bits(0.5f64.to_bits() - 1);

/// The `n` (at most `N`) bytes at `p`, `stride` apart, in an array (the
/// rest zero): [`Dot::group_strided`]'s default.
///
/// # Safety
/// `p` is valid for reads at `0, stride, .., (n - 1) * stride`.
#[inline(always)]
pub(crate) unsafe fn strided<const N: usize>(p: *const i8, stride: usize, n: usize) -> [i8; N] {
    let mut b = [0i8; N];
    for (j, b) in b.iter_mut().enumerate().take(n) {
        // SAFETY: the caller's contract.
        *b = unsafe { p.add(j * stride).read() };
    }
    b
}

/// Integer dot-product and output-stage primitives of `Int8<A>`.
///
/// # Safety
///
/// As [`Simd`]: the CPU supports the arch, and every pointer is valid for
/// what the function reads or writes (`group`, `group_offset`: `DOT`
/// bytes; `offset_pixels`, `offset_fill`: `n * CB` bytes each; `weights`:
/// `LANES * DOT` bytes; `widen` and the stores: `LANES` bytes; `rows`:
/// every row the function reads, `LANES` values each).
#[allow(clippy::missing_safety_doc)] // one contract for all: see the trait docs
pub trait Dot: Simd<Elem = i8> {
    /// Consecutive input channels one [`Dot::dot`] sums per lane: 1, 2 or
    /// 4, a divisor of [`small_ir::geometry::DOT_PACK`].
    const DOT: usize;
    /// Added to every activation before it is multiplied (0, or 128 for an
    /// unsigned-by-signed product); compensated in the bias at pack time.
    const X_OFFSET: i32;
    /// `DOT` activations, as [`Dot::dot`] takes them.
    type X: Copy;
    /// `LANES x DOT` weights, as [`Dot::dot`] takes them.
    type W: Copy;
    /// Reads `DOT` consecutive activations for every lane.
    unsafe fn group(p: *const i8) -> Self::X;
    /// Reads `LANES x DOT` weights, lane-major (`[LANES][DOT]`).
    unsafe fn weights(p: *const i8) -> Self::W;
    /// `acc[l] + Σ_j (x[j] + X_OFFSET) * w[l][j]`, wrapping in `i32`.
    unsafe fn dot(acc: Self::V, x: Self::X, w: Self::W) -> Self::V;
    /// `LANES` consecutive bytes, each widened to its lane.
    unsafe fn widen(p: *const i8) -> Self::V;

    /// The smallest weight [`Dot::dot`] multiplies exactly: `i8::MIN`, or
    /// -127 where the product takes the activation's sign into the weight
    /// (AVX2's `vpsignb`, which cannot negate -128). TFLite's int8 weights
    /// are in -127..=127; the packer refuses a layer with a smaller one
    /// for such an arch (`small_ir::Machine::int8_weight_min`).
    const WEIGHT_MIN: i8 = i8::MIN;

    /// The dot product of a thin layer, one of fewer input channels (per
    /// group) than [`Dot::DOT`]: `THIN_DOT` channels per lane and step,
    /// so that a 1- or 3-channel stem does not multiply `DOT - 1` zero
    /// weights per input. `DOT` itself (`dot_is_thin!`) where the arch
    /// has no narrower form. Its activations take [`Dot::X_OFFSET`] too,
    /// and it multiplies every `i8` weight exactly.
    const THIN_DOT: usize;
    /// `THIN_DOT` activations, as [`Dot::thin_dot`] takes them.
    type ThinX: Copy;
    /// `LANES x THIN_DOT` weights, as [`Dot::thin_dot`] takes them.
    type ThinW: Copy;
    /// Reads `THIN_DOT` consecutive activations for every lane.
    unsafe fn thin_group(p: *const i8) -> Self::ThinX;
    /// Reads `LANES x THIN_DOT` weights, lane-major.
    unsafe fn thin_weights(p: *const i8) -> Self::ThinW;
    /// `acc[l] + Σ_j (x[j] + X_OFFSET) * w[l][j]` over `THIN_DOT`
    /// channels, wrapping in `i32`.
    unsafe fn thin_dot(acc: Self::V, x: Self::ThinX, w: Self::ThinW) -> Self::V;

    /// [`Dot::group`] of `DOT` activations `stride` bytes apart (the
    /// first lanes of `DOT` neighbouring pixels of a one-channel tensor,
    /// each `stride` bytes): a group of a layer whose kernel folds filter
    /// columns into its dot products
    /// (`small_ir::blocking::int8_folds_columns`). `p` is valid for
    /// `DOT * stride` bytes (the pixels' padding lanes may be read).
    #[inline(always)]
    unsafe fn group_strided(p: *const i8, stride: usize) -> Self::X {
        // SAFETY: the caller's contract: `DOT` pixels of `stride` bytes.
        unsafe { Self::group(strided::<4>(p, stride, Self::DOT).as_ptr()) }
    }
    /// [`Dot::thin_group`] of `THIN_DOT` activations `stride` bytes apart
    /// (see [`Dot::group_strided`]; `p` valid for `THIN_DOT * stride`
    /// bytes).
    #[inline(always)]
    unsafe fn thin_group_strided(p: *const i8, stride: usize) -> Self::ThinX {
        // SAFETY: as `group_strided`.
        unsafe { Self::thin_group(strided::<4>(p, stride, Self::THIN_DOT).as_ptr()) }
    }

    /// True if [`Dot::group`] spends a vector ALU operation on every read
    /// to add [`Dot::X_OFFSET`] (AVX-512: a `vpxord` beside each
    /// `vpdpbusd`, on the same two ports), which [`Dot::offset_pixels`]
    /// can do for many pixels at once instead: a broadcast kernel then
    /// passes each input row's window through it into a buffer and reads
    /// the buffer with [`Dot::group_offset`]. A `const`, so the other form
    /// is not compiled in.
    const OFFSET_AHEAD: bool = false;
    /// Writes the `n` pixel blocks of [`CB`](small_ir::geometry::CB)
    /// activations at `src` to `dst` as [`Dot::group_offset`] reads them
    /// (for AVX-512, `x ^ 0x80`, which is `x + 128` as an unsigned byte;
    /// by default, unchanged).
    #[inline(always)]
    unsafe fn offset_pixels(dst: *mut i8, src: *const i8, n: usize) {
        // SAFETY: the caller's contract: `src` and `dst` hold `n` blocks.
        unsafe { core::ptr::copy_nonoverlapping(src, dst, n * small_ir::geometry::CB) }
    }
    /// Writes `n` pixel blocks of the activation `x` to `dst` as
    /// [`Dot::group_offset`] reads them (a padding value).
    #[inline(always)]
    unsafe fn offset_fill(dst: *mut i8, x: i8, n: usize) {
        // SAFETY: the caller's contract: `dst` holds `n` blocks.
        unsafe { core::ptr::write_bytes(dst, x as u8, n * small_ir::geometry::CB) }
    }
    /// Four activations (one `u32` of bytes, a thin input's pixel or part
    /// of one) as [`Dot::offset_pixels`] writes them: a thin layer's edge
    /// tile copies its window rows word by word with it.
    #[inline(always)]
    fn offset_word(w: u32) -> u32 {
        w
    }
    /// [`Dot::group`] of activations [`Dot::offset_pixels`] wrote.
    #[inline(always)]
    unsafe fn group_offset(p: *const i8) -> Self::X {
        // SAFETY: as `group`.
        unsafe { Self::group(p) }
    }

    /// Where a depthwise kernel (channelwise, with weights) multiplies and
    /// sums, `LANES` lanes: `Self`; the arch's `f32` [`Simd`] where its
    /// 32-bit integer multiply is slow (AVX2: `vpmulld` is 2 uops on Intel
    /// cores, one FMA 1); or a type whose multiply-add is a 16-bit dot
    /// product (AVX-512's `Avx512Mac`, `vpdpwssd`). Exact each way: every
    /// product `(x - zp) * w` is an integer of magnitude at most
    /// `255 * 128` (both factors below `2^15`), and the kernel sums at most
    /// [`small_ir::quant::MAC_TAPS`] of them, all below `2^24`, where `f32`
    /// holds every integer.
    type Mac: Simd;
    /// `LANES` consecutive bytes, each widened to its `Mac` lane.
    unsafe fn widen_mac(p: *const i8) -> <Self::Mac as Simd>::V;
    /// `LANES` consecutive weights as the `Mac`'s multiply-add takes its
    /// last operand: [`Dot::widen_mac`], or that in a form the multiply
    /// needs (AVX-512: the high 16 bits cleared for `vpdpwssd`). A
    /// depthwise kernel reads each weight vector once per filter row, so
    /// what this adds is not repeated at every column.
    #[inline(always)]
    unsafe fn widen_mac_weights(p: *const i8) -> <Self::Mac as Simd>::V {
        // SAFETY: the caller's contract, as `widen_mac`.
        unsafe { Self::widen_mac(p) }
    }
    /// `v` (every lane below `2^24` in magnitude) as a `Mac` vector.
    unsafe fn to_mac(v: Self::V) -> <Self::Mac as Simd>::V;
    /// A `Mac` vector of integers below `2^24` in magnitude, exactly.
    unsafe fn from_mac(m: <Self::Mac as Simd>::V) -> Self::V;

    /// One vector of channels' rows as [`Dot::requantize_staged`] takes
    /// them: [`RowsAt`], or registers [`Dot::stage`] loads once for all
    /// the positions of a tile (STORE writes each channel vector at
    /// `O_wb` positions).
    type Stage: Copy;
    /// The same for [`Dot::requantize_add_staged`] (a residual layer's
    /// rows).
    type AddStage: Copy;
    /// The rows of the `LANES` channels at `rows` (`stride` apart), for
    /// [`Dot::requantize_staged`]. May read every row below
    /// [`row::CORRECTION`] (and one value past a row's `LANES`): a
    /// layer's rows hold them all.
    unsafe fn stage(rows: *const i32, stride: usize) -> Self::Stage;
    /// The same for [`Dot::requantize_add_staged`].
    unsafe fn add_stage(rows: *const i32, stride: usize) -> Self::AddStage;
    /// [`Dot::requantize`] with the rows of [`Dot::stage`].
    unsafe fn requantize_staged(p: *mut i8, acc: Self::V, stage: Self::Stage);
    /// [`Dot::requantize_add`] with the rows of [`Dot::add_stage`].
    unsafe fn requantize_add_staged(
        p: *mut i8,
        acc: Self::V,
        skip: *const i8,
        stage: Self::AddStage,
    );

    /// [`Dot::requantize_staged`] in a one-column (narrow) tile: a fully
    /// connected layer's, whose every output vector goes through STORE
    /// once and whose few accumulators leave registers free. An arch may
    /// inline here a form it keeps out of line for wider tiles (AVX2: the
    /// `f64` rescale of FULLY_CONNECTED); the same bytes either way.
    #[inline(always)]
    unsafe fn requantize_narrow(p: *mut i8, acc: Self::V, stage: Self::Stage) {
        // SAFETY: the caller's guarantees, as for `requantize_staged`.
        unsafe { Self::requantize_staged(p, acc, stage) }
    }

    /// [`Dot::requantize_staged`] of two pixels, `a` to `pa` and `b` to
    /// `pb`, each `LANES` lanes wide, of a layer of at most `LANES / 2`
    /// channels: the lanes from `LANES / 2` on are padding, which outputs
    /// the zero point (clamped), and the packer gives them the rows of
    /// the channels `LANES / 2` below (`small_core::pack`), so the upper
    /// half of every row repeats the lower. An arch may requantize both
    /// pixels' lower halves as one vector; the default makes two calls.
    /// Either way the bytes are those of two `requantize_staged`s.
    #[inline(always)]
    unsafe fn requantize_pair(
        pa: *mut i8,
        pb: *mut i8,
        a: Self::V,
        b: Self::V,
        stage: Self::Stage,
    ) {
        // SAFETY: the caller's guarantees, as for `requantize_staged`.
        unsafe {
            Self::requantize_staged(pa, a, stage);
            Self::requantize_staged(pb, b, stage);
        }
    }

    /// [`Dot::widen`] of the first lanes of a pixel `width` lanes wide
    /// (see [`Simd::load_px`]).
    #[inline(always)]
    unsafe fn widen_px(p: *const i8, width: usize) -> Self::V {
        if width >= Self::LANES {
            // SAFETY: the pixel holds the vector (the caller's guarantee).
            return unsafe { Self::widen(p) };
        }
        const { assert!(Self::LANES <= crate::pixel::SCRATCH) };
        // SAFETY: the pixel holds `width` values; the scratch `LANES`.
        unsafe { Self::widen(crate::pixel::gather(p, width).as_ptr()) }
    }
    /// [`Dot::widen_mac`] of the first lanes of a pixel `width` lanes
    /// wide (see [`Simd::load_px`]).
    #[inline(always)]
    unsafe fn widen_mac_px(p: *const i8, width: usize) -> <Self::Mac as Simd>::V {
        if width >= Self::LANES {
            // SAFETY: the pixel holds the vector (the caller's guarantee).
            return unsafe { Self::widen_mac(p) };
        }
        const { assert!(Self::LANES <= crate::pixel::SCRATCH) };
        // SAFETY: as in `widen_px`.
        unsafe { Self::widen_mac(crate::pixel::gather(p, width).as_ptr()) }
    }
    /// [`Dot::requantize_staged`] into a pixel `width` lanes wide (see
    /// [`Simd::store_px`]).
    #[inline(always)]
    unsafe fn requantize_staged_px(p: *mut i8, acc: Self::V, stage: Self::Stage, width: usize) {
        if width >= Self::LANES {
            // SAFETY: the pixel holds the vector (the caller's guarantee).
            return unsafe { Self::requantize_staged(p, acc, stage) };
        }
        const { assert!(Self::LANES <= crate::pixel::SCRATCH) };
        // SAFETY: the caller's guarantees; the scratch holds `LANES`.
        unsafe { crate::pixel::write_through(p, width, |p| Self::requantize_staged(p, acc, stage)) }
    }
    /// [`Dot::requantize_narrow`] into a pixel `width` lanes wide.
    #[inline(always)]
    unsafe fn requantize_narrow_px(p: *mut i8, acc: Self::V, stage: Self::Stage, width: usize) {
        if width >= Self::LANES {
            // SAFETY: the pixel holds the vector (the caller's guarantee).
            return unsafe { Self::requantize_narrow(p, acc, stage) };
        }
        const { assert!(Self::LANES <= crate::pixel::SCRATCH) };
        // SAFETY: the caller's guarantees; the scratch holds `LANES`.
        unsafe { crate::pixel::write_through(p, width, |p| Self::requantize_narrow(p, acc, stage)) }
    }
    /// [`Dot::requantize_add_staged`] into and from pixels `width` lanes
    /// wide (see [`Simd::load_px`]); `p` may equal `skip`.
    #[inline(always)]
    unsafe fn requantize_add_staged_px(
        p: *mut i8,
        acc: Self::V,
        skip: *const i8,
        stage: Self::AddStage,
        width: usize,
    ) {
        if width >= Self::LANES {
            // SAFETY: the pixels hold the vector (the caller's guarantee).
            return unsafe { Self::requantize_add_staged(p, acc, skip, stage) };
        }
        const { assert!(Self::LANES <= crate::pixel::SCRATCH) };
        // SAFETY: the skip's pixel holds `width` values, read before `p`
        // is written; the scratch holds `LANES`.
        unsafe {
            let skip = crate::pixel::gather(skip, width);
            crate::pixel::write_through(p, width, |p| {
                Self::requantize_add_staged(p, acc, skip.as_ptr(), stage)
            })
        }
    }
    /// [`Dot::average`] into a pixel `width` lanes wide.
    #[inline(always)]
    unsafe fn average_px(
        p: *mut i8,
        sum: Self::V,
        count: i32,
        rows: *const i32,
        stride: usize,
        width: usize,
    ) {
        if width >= Self::LANES {
            // SAFETY: the pixel holds the vector (the caller's guarantee).
            return unsafe { Self::average(p, sum, count, rows, stride) };
        }
        const { assert!(Self::LANES <= crate::pixel::SCRATCH) };
        // SAFETY: as in `requantize_staged_px`.
        unsafe {
            crate::pixel::write_through(p, width, |p| Self::average(p, sum, count, rows, stride))
        }
    }
    /// [`Dot::clamp`] into a pixel `width` lanes wide.
    #[inline(always)]
    unsafe fn clamp_px(p: *mut i8, v: Self::V, rows: *const i32, stride: usize, width: usize) {
        if width >= Self::LANES {
            // SAFETY: the pixel holds the vector (the caller's guarantee).
            return unsafe { Self::clamp(p, v, rows, stride) };
        }
        const { assert!(Self::LANES <= crate::pixel::SCRATCH) };
        // SAFETY: as in `requantize_staged_px`.
        unsafe { crate::pixel::write_through(p, width, |p| Self::clamp(p, v, rows, stride)) }
    }

    /// Writes `LANES` outputs of a multiply-and-sum layer to `p`: each
    /// lane's sum rescaled, plus the output zero point, clamped
    /// ([`small_ir::quant::output`]).
    #[inline(always)]
    unsafe fn requantize(p: *mut i8, acc: Self::V, rows: *const i32, stride: usize) {
        // SAFETY: the caller's guarantees (see the trait).
        unsafe { requantize_scalar::<Self>(p, acc, rows, stride) }
    }

    /// Writes `LANES` outputs of a residual layer: each lane's sum through
    /// [`Dot::requantize`]'s stage (the convolution's `i8` output), then
    /// TFLite's int8 ADD with the skip's byte at `skip`
    /// ([`small_ir::quant::AddRescale`]), plus its zero point, clamped. `p`
    /// may equal `skip` (in place): each lane is read before it is written.
    #[inline(always)]
    unsafe fn requantize_add(
        p: *mut i8,
        acc: Self::V,
        skip: *const i8,
        rows: *const i32,
        stride: usize,
    ) {
        // SAFETY: the caller's guarantees (see the trait).
        unsafe { requantize_add_scalar::<Self>(p, acc, skip, rows, stride) }
    }

    /// Writes `LANES` averages: each lane's `sum / count`, rounded half
    /// away from zero, clamped ([`small_ir::quant::rounding_average`]).
    #[inline(always)]
    unsafe fn average(p: *mut i8, sum: Self::V, count: i32, rows: *const i32, stride: usize) {
        // SAFETY: the caller's guarantees (see the trait).
        unsafe { average_scalar::<Self>(p, sum, count, rows, stride) }
    }

    /// Writes `LANES` values, each clamped (max pooling).
    #[inline(always)]
    unsafe fn clamp(p: *mut i8, v: Self::V, rows: *const i32, stride: usize) {
        // SAFETY: the caller's guarantees (see the trait).
        unsafe { clamp_scalar::<Self>(p, v, rows, stride) }
    }
}

/// Where a vector's per-channel rows are: the [`Dot::AddStage`] of an
/// arch whose residual output stage reads its rows when it runs.
#[derive(Debug, Clone, Copy)]
pub struct RowsAt {
    /// Row 0 of the vector's first channel.
    pub rows: *const i32,
    /// Values per row.
    pub stride: usize,
}

/// One channel's output stage, decoded once for the outputs of a tile:
/// the [`Dot::Stage`] of a one-lane (scalar) arch. A double rounding
/// becomes its [`Prepared`] multiplier (a 32x32->64 multiply, the doubling
/// high half and the rounding division with its mask hoisted); any other
/// variant reads its rows per output, as the unstaged stage does. On a
/// Cortex-M4 an output then takes about 15 instructions with the zero
/// point, the clamp and the store; the single 64-bit [`small_ir::step::Step`] the vector
/// code uses took 25-30 (its negative ties need a 64-bit compare and
/// select there), and decoding the rows for each output 55.
#[derive(Debug, Clone, Copy)]
pub struct ScalarStage {
    at: RowsAt,
    step: Option<Prepared>,
    zero_point: i32,
    min: i32,
    max: i32,
}

impl ScalarStage {
    /// The stage of the channel whose row 0 is at `rows`.
    ///
    /// # Safety
    ///
    /// `rows` is valid for reads of rows `RESCALE..=MAX`, `stride` apart.
    #[inline(always)]
    pub(crate) unsafe fn new(rows: *const i32, stride: usize) -> ScalarStage {
        // SAFETY: the caller guarantees the rows.
        let at = |r: usize| unsafe { rows.add(r * stride).read() };
        let kind = at(row::RESCALE);
        let step = if kind == DOUBLE_ROUNDING || kind == row::STEPPED {
            Prepared::new(Multiplier {
                multiplier: at(row::RESCALE + 1),
                shift: at(row::RESCALE + 2),
            })
        } else {
            None
        };
        ScalarStage {
            at: RowsAt { rows, stride },
            step,
            zero_point: at(row::ZERO_POINT),
            min: at(row::MIN),
            max: at(row::MAX),
        }
    }

    /// Writes the output of `acc` to `p`.
    ///
    /// # Safety
    ///
    /// `p` is valid for one write; the rows as for [`ScalarStage::new`].
    #[inline(always)]
    pub(crate) unsafe fn write(self, p: *mut i8, acc: i32) {
        let y = match self.step {
            Some(step) => clamp_i8(
                step.apply(acc).wrapping_add(self.zero_point),
                self.min,
                self.max,
            ),
            // SAFETY: the caller guarantees the rows.
            None => unsafe { lane_output(acc, self.at.rows, self.at.stride) },
        };
        // SAFETY: the caller guarantees `p`.
        unsafe { p.write(y) }
    }
}

/// The staged output stages of a one-lane arch: [`ScalarStage`] for a
/// layer's own rows, [`RowsAt`] for a residual layer's. Expands inside an
/// `impl Dot` whose `V` is `i32`.
macro_rules! scalar_stages {
    () => {
        type Stage = $crate::int8::ScalarStage;
        type AddStage = $crate::int8::RowsAt;
        #[inline(always)]
        unsafe fn stage(rows: *const i32, stride: usize) -> $crate::int8::ScalarStage {
            // SAFETY: the caller's guarantees (see the trait).
            unsafe { $crate::int8::ScalarStage::new(rows, stride) }
        }
        #[inline(always)]
        unsafe fn add_stage(rows: *const i32, stride: usize) -> $crate::int8::RowsAt {
            $crate::int8::RowsAt { rows, stride }
        }
        #[inline(always)]
        unsafe fn requantize_staged(p: *mut i8, acc: i32, stage: $crate::int8::ScalarStage) {
            // SAFETY: the caller's guarantees (see the trait).
            unsafe { stage.write(p, acc) }
        }
        #[inline(always)]
        unsafe fn requantize_add_staged(
            p: *mut i8,
            acc: i32,
            skip: *const i8,
            at: $crate::int8::RowsAt,
        ) {
            // SAFETY: the caller's guarantees (see the trait).
            unsafe { <Self as $crate::Dot>::requantize_add(p, acc, skip, at.rows, at.stride) }
        }
    };
}

pub(crate) use scalar_stages;

/// [`Dot::Mac`] as the arch itself: depthwise kernels multiply and sum in
/// `V`. Expands inside an `impl Dot`.
macro_rules! mac_in_self {
    () => {
        type Mac = Self;
        #[inline(always)]
        unsafe fn widen_mac(p: *const i8) -> Self::V {
            // SAFETY: the caller's guarantees (see the trait).
            unsafe { <Self as $crate::Dot>::widen(p) }
        }
        #[inline(always)]
        unsafe fn to_mac(v: Self::V) -> Self::V {
            v
        }
        #[inline(always)]
        unsafe fn from_mac(m: Self::V) -> Self::V {
            m
        }
    };
}

pub(crate) use mac_in_self;

/// The `THIN_DOT` items of a `Dot` impl without a narrower dot product:
/// `DOT` channels, the arch's own `group`, `weights` and `dot`.
macro_rules! dot_is_thin {
    () => {
        const THIN_DOT: usize = Self::DOT;
        type ThinX = Self::X;
        type ThinW = Self::W;
        #[inline(always)]
        unsafe fn thin_group(p: *const i8) -> Self::X {
            // SAFETY: the caller's guarantees, as for `group`.
            unsafe { Self::group(p) }
        }
        #[inline(always)]
        unsafe fn thin_weights(p: *const i8) -> Self::W {
            // SAFETY: the caller's guarantees, as for `weights`.
            unsafe { Self::weights(p) }
        }
        #[inline(always)]
        unsafe fn thin_dot(acc: Self::V, x: Self::X, w: Self::W) -> Self::V {
            // SAFETY: the caller's guarantees, as for `dot`.
            unsafe { Self::dot(acc, x, w) }
        }
    };
}
pub(crate) use dot_is_thin;

/// The default [`Dot::requantize`]: lane by lane through
/// [`small_ir::quant::output`]. An arch's vector override falls back to it
/// for the lanes it does not handle itself.
///
/// # Safety
///
/// As [`Dot::requantize`].
#[inline(always)]
pub(crate) unsafe fn requantize_scalar<A: Dot + ?Sized>(
    p: *mut i8,
    acc: A::V,
    rows: *const i32,
    stride: usize,
) {
    let mut a = [0i32; 64];
    // SAFETY: LANES <= 64 (every arch's LANES divides CB); the caller
    // guarantees `rows` and `p` (see the trait).
    unsafe {
        A::store(a.as_mut_ptr(), acc);
        for (l, acc) in a.iter().enumerate().take(A::LANES) {
            p.add(l).write(lane_output(*acc, rows.add(l), stride));
        }
    }
}

/// One lane's [`small_ir::quant::output`] from its rows (`lane` points at
/// the lane's value in row 0): the rescale, zero point and clamp.
///
/// # Safety
///
/// `lane` is valid for reads of rows `RESCALE..=MAX`, `stride` apart.
#[inline(always)]
unsafe fn lane_output(acc: i32, lane: *const i32, stride: usize) -> i8 {
    // SAFETY: the caller guarantees the rows.
    let at = |r: usize| unsafe { lane.add(r * stride).read() };
    let kind = at(row::RESCALE);
    if kind == DOUBLE_ROUNDING || kind == row::STEPPED {
        // Every convolution of a TFLite model: inline, no variant decode
        // (the same arithmetic as `output`'s, which has every variant).
        let v = multiply_by_quantized_multiplier(acc, at(row::RESCALE + 1), at(row::RESCALE + 2));
        return clamp_i8(
            v.wrapping_add(at(row::ZERO_POINT)),
            at(row::MIN),
            at(row::MAX),
        );
    }
    let words = [at(row::RESCALE), at(row::RESCALE + 1), at(row::RESCALE + 2)];
    output(
        acc,
        Rescale::from_words(words),
        at(row::ZERO_POINT),
        at(row::MIN),
        at(row::MAX),
    )
}

/// The default [`Dot::requantize_add`]: lane by lane through
/// [`small_ir::quant::output`] (the convolution's `i8`), then
/// [`small_ir::quant::AddRescale::apply`] of it and the skip's byte, each
/// minus its zero point, then the ADD's zero point and
/// [`small_ir::quant::clamp_i8`]. The zero points are subtracted and added
/// wrapping, so any rows give defined bits. An arch's vector override
/// falls back to it for the lanes it does not handle itself.
///
/// # Safety
///
/// As [`Dot::requantize_add`].
#[inline(always)]
pub(crate) unsafe fn requantize_add_scalar<A: Dot + ?Sized>(
    p: *mut i8,
    acc: A::V,
    skip: *const i8,
    rows: *const i32,
    stride: usize,
) {
    let mut a = [0i32; 64];
    // SAFETY: as `requantize_scalar`; `skip` is valid for LANES reads, and
    // each lane's skip byte is read before its output is written.
    unsafe {
        A::store(a.as_mut_ptr(), acc);
        for (l, acc) in a.iter().enumerate().take(A::LANES) {
            let at = |r: usize| rows.add(r * stride + l).read();
            let conv = lane_output(*acc, rows.add(l), stride);
            let mut w = [0i32; 7];
            for (i, w) in w.iter_mut().enumerate() {
                *w = at(row::ADD_RESCALE + i);
            }
            let sum = row::add_rescale(w).apply(
                i32::from(conv).wrapping_sub(at(row::CONV_ZERO_POINT)),
                i32::from(skip.add(l).read()).wrapping_sub(at(row::SKIP_ZERO_POINT)),
            );
            let v = clamp_i8(
                sum.wrapping_add(at(row::ADD_ZERO_POINT)),
                at(row::ADD_MIN),
                at(row::ADD_MAX),
            );
            p.add(l).write(v);
        }
    }
}

/// The default [`Dot::average`]: lane by lane through
/// [`small_ir::quant::rounding_average`].
///
/// # Safety
///
/// As [`Dot::average`].
#[inline(always)]
pub(crate) unsafe fn average_scalar<A: Dot + ?Sized>(
    p: *mut i8,
    sum: A::V,
    count: i32,
    rows: *const i32,
    stride: usize,
) {
    let mut a = [0i32; 64];
    // SAFETY: as `requantize_scalar`.
    unsafe {
        A::store(a.as_mut_ptr(), sum);
        for (l, sum) in a.iter().enumerate().take(A::LANES) {
            let at = |r: usize| rows.add(r * stride + l).read();
            let v = clamp_i8(rounding_average(*sum, count), at(row::MIN), at(row::MAX));
            p.add(l).write(v);
        }
    }
}

/// The default [`Dot::clamp`]: lane by lane through
/// [`small_ir::quant::clamp_i8`].
///
/// # Safety
///
/// As [`Dot::clamp`].
#[inline(always)]
pub(crate) unsafe fn clamp_scalar<A: Dot + ?Sized>(
    p: *mut i8,
    v: A::V,
    rows: *const i32,
    stride: usize,
) {
    let mut a = [0i32; 64];
    // SAFETY: as `requantize_scalar`.
    unsafe {
        A::store(a.as_mut_ptr(), v);
        for (l, v) in a.iter().enumerate().take(A::LANES) {
            let at = |r: usize| rows.add(r * stride + l).read();
            p.add(l).write(clamp_i8(*v, at(row::MIN), at(row::MAX)));
        }
    }
}

/// `Simd` and `Dot` of `Int8<$arch>` for a scalar arch (one `i32` lane):
/// the portable form every arch's integer kernels are checked against.
macro_rules! scalar_int8 {
    ($arch:ty) => {
        $crate::int8::scalar_int8_simd!($arch);

        impl $crate::Dot for $crate::Int8<$arch> {
            $crate::int8::scalar_stages!();
            $crate::int8::mac_in_self!();
            $crate::int8::dot_is_thin!();
            const DOT: usize = 1;
            const X_OFFSET: i32 = 0;
            type X = i32;
            type W = i32;
            #[inline(always)]
            unsafe fn group(p: *const i8) -> i32 {
                // SAFETY: the caller guarantees `p` is valid for one read.
                i32::from(unsafe { p.read() })
            }
            #[inline(always)]
            unsafe fn weights(p: *const i8) -> i32 {
                // SAFETY: as `group`.
                i32::from(unsafe { p.read() })
            }
            #[inline(always)]
            unsafe fn dot(acc: i32, x: i32, w: i32) -> i32 {
                acc.wrapping_add(x.wrapping_mul(w))
            }
            #[inline(always)]
            unsafe fn widen(p: *const i8) -> i32 {
                // SAFETY: as `group`.
                i32::from(unsafe { p.read() })
            }
        }
    };
}
pub(crate) use scalar_int8;

/// The [`Simd`] part of [`scalar_int8`]: one `i32` lane. An arch with a
/// scalar integer core and its own [`Dot`] (Cortex-M4's DSP extension)
/// uses it alone.
macro_rules! scalar_int8_simd {
    ($arch:ty) => {
        /// The `i8` element type on a scalar arch: each element widened to
        /// one `i32` accumulator, which wraps as TFLite's `int32` does.
        impl $crate::Simd for $crate::Int8<$arch> {
            type Elem = i8;
            type V = i32;
            const LANES: usize = 1;
            #[inline(always)]
            unsafe fn zero() -> i32 {
                0
            }
            #[inline(always)]
            unsafe fn splat(x: i32) -> i32 {
                x
            }
            #[inline(always)]
            unsafe fn load(p: *const i32) -> i32 {
                // SAFETY: the caller guarantees `p` is valid for one read.
                unsafe { p.read_unaligned() }
            }
            #[inline(always)]
            unsafe fn store(p: *mut i32, v: i32) {
                // SAFETY: the caller guarantees `p` is valid for one write.
                unsafe { p.write_unaligned(v) }
            }
            #[inline(always)]
            unsafe fn broadcast(p: *const i8) -> i32 {
                // SAFETY: as for `load`.
                i32::from(unsafe { p.read() })
            }
            #[inline(always)]
            unsafe fn fma(acc: i32, a: i32, b: i32) -> i32 {
                acc.wrapping_add(a.wrapping_mul(b))
            }
            #[inline(always)]
            unsafe fn max(a: i32, b: i32) -> i32 {
                a.max(b)
            }
            #[inline(always)]
            unsafe fn min(a: i32, b: i32) -> i32 {
                a.min(b)
            }
            #[inline(always)]
            unsafe fn add(a: i32, b: i32) -> i32 {
                a.wrapping_add(b)
            }
            #[inline(always)]
            unsafe fn mul(a: i32, b: i32) -> i32 {
                a.wrapping_mul(b)
            }
        }
    };
}
pub(crate) use scalar_int8_simd;

/// Checks of an arch's `Int8` primitives against the scalar definition.
#[cfg(test)]
pub(crate) mod check {
    use super::Dot;
    use crate::Int8;
    use crate::Simd;
    use crate::reference::Reference;
    use small_ir::quant::MAC_TAPS;

    /// The scalar arch every `Int8<A>` must agree with, bit for bit.
    type R = Int8<Reference>;

    /// Most lanes an arch may have (the output stages' bound; AVX-512 has
    /// 16).
    const MAX_LANES: usize = 64;

    /// xorshift64: a fixed, dependency-free stream of test data.
    struct Rng(u64);

    impl Rng {
        fn new(seed: u64) -> Self {
            Rng(seed | 1)
        }
        fn u64(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }
        /// A byte, often one of the extremes (-128, 127, -1, 0).
        fn i8(&mut self) -> i8 {
            let r = self.u64();
            match r % 8 {
                0 => [-128, 127, -1, 0][(r >> 8) as usize % 4],
                _ => (r >> 16) as i8,
            }
        }
        /// An accumulator: any `i32`, often an extreme or a small value.
        fn i32(&mut self) -> i32 {
            let r = self.u64();
            match r % 8 {
                0 => [
                    i32::MIN,
                    i32::MAX,
                    -1,
                    0,
                    1,
                    i32::MIN + 1,
                    i32::MAX - 1,
                    16384,
                ][(r >> 8) as usize % 8],
                1 | 2 => (r >> 32) as i32 as i16 as i32,
                _ => (r >> 32) as i32,
            }
        }
    }

    /// Stores `v` and returns its lanes (the first `A::LANES` of 64),
    /// checking that the store writes exactly `LANES` values.
    unsafe fn lanes<A: Dot>(v: A::V) -> [i32; MAX_LANES] {
        const GUARD: i32 = 0x5a5a_5a5a;
        let mut a = [GUARD; MAX_LANES + 2];
        // SAFETY: LANES <= MAX_LANES (asserted by `check_dot`), so the
        // store stays inside `a`; one element in, it is not aligned to the
        // vector.
        unsafe { A::store(a.as_mut_ptr().add(1), v) };
        assert_eq!(a[0], GUARD, "store wrote before its pointer");
        assert!(
            a[A::LANES + 1..].iter().all(|&g| g == GUARD),
            "store wrote past LANES values"
        );
        let mut out = [0; MAX_LANES];
        out[..A::LANES].copy_from_slice(&a[1..A::LANES + 1]);
        out
    }

    /// Compares every primitive of `A` (its `Simd` part and `group`,
    /// `weights`, `dot`, their `thin_` forms, `widen`) with
    /// `Int8<Reference>`, lane by lane,
    /// on `cases` random cases: equal bits or a panic naming the case.
    ///
    /// # Safety
    ///
    /// The CPU supports `A`'s arch. Call it from a function compiled with
    /// the arch's target features so that the primitives are inlined.
    #[inline(always)]
    pub(crate) unsafe fn check_dot<A: Dot>(cases: usize) {
        let (n, d) = (A::LANES, A::DOT);
        assert!(n <= MAX_LANES && n * d <= MAX_LANES * 4);
        for d in [d, A::THIN_DOT] {
            assert!(matches!(d, 1 | 2 | 4) && small_ir::geometry::DOT_PACK.is_multiple_of(d));
        }
        assert!(A::THIN_DOT <= d);
        assert!(core::mem::size_of::<A::V>() == n * 4);
        let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
        // Every `i32` input is read from one element into a buffer, so no
        // load is aligned to the vector.
        let mut a = [0i32; MAX_LANES + 1];
        let mut b = [0i32; MAX_LANES + 1];
        let mut c = [0i32; MAX_LANES + 1];
        let mut x = [0i8; 4 * 8];
        let mut w = [0i8; MAX_LANES * 4 * 8];
        for case in 0..cases {
            for i in 1..=n {
                (a[i], b[i], c[i]) = (rng.i32(), rng.i32(), rng.i32());
            }
            // The extremes of the products in the first cases: every byte
            // -128 (the largest product, and sums past i16), then -128 by
            // 127 (the most negative one).
            let fill = |rng: &mut Rng, k: usize| match (case, k) {
                (0, _) | (1, 0) => -128,
                (1, _) => 127,
                _ => rng.i8(),
            };
            let steps = 1 + case % 8;
            for v in &mut x[..steps * d] {
                *v = fill(&mut rng, 0);
            }
            // `dot` takes weights from `WEIGHT_MIN` on; `thin_dot` all.
            for v in &mut w[..steps * n * d] {
                *v = fill(&mut rng, 1);
            }
            let mut wd = w;
            for v in &mut wd[..steps * n * d] {
                *v = (*v).max(A::WEIGHT_MIN);
            }
            // SAFETY: the caller guarantees the arch; every pointer is
            // valid for what it reads: `a`, `b`, `c` for LANES i32s after
            // their first element, `x` for `steps * DOT` bytes, `w` for
            // `steps * LANES * DOT` bytes, single bytes for the rest.
            unsafe {
                let (pa, pb, pc) = (a.as_ptr().add(1), b.as_ptr().add(1), c.as_ptr().add(1));
                let (va, vb, vc) = (A::load(pa), A::load(pb), A::load(pc));

                // The dot chain: `steps` groups of DOT channels into `a`.
                let mut acc = va;
                for s in 0..steps {
                    let xv = A::group(x.as_ptr().add(s * d));
                    let wv = A::weights(wd.as_ptr().add(s * n * d));
                    acc = A::dot(acc, xv, wv);
                }
                let want = |l: usize, d: usize, w: &[i8]| {
                    let mut r = R::load(pa.add(l));
                    for s in 0..steps {
                        for j in 0..d {
                            let xr = R::group(x.as_ptr().add(s * d + j)).wrapping_add(A::X_OFFSET);
                            let wr = R::weights(w.as_ptr().add((s * n + l) * d + j));
                            r = R::dot(r, xr, wr);
                        }
                    }
                    r
                };
                let got = lanes::<A>(acc);
                for (l, &g) in got[..n].iter().enumerate() {
                    assert_eq!(
                        g,
                        want(l, d, &wd),
                        "dot: case {case}, lane {l}, {steps} steps"
                    );
                }
                // The same in THIN_DOT groups, of every weight.
                let td = A::THIN_DOT;
                let mut acc = va;
                for s in 0..steps {
                    let xv = A::thin_group(x.as_ptr().add(s * td));
                    let wv = A::thin_weights(w.as_ptr().add(s * n * td));
                    acc = A::thin_dot(acc, xv, wv);
                }
                let got = lanes::<A>(acc);
                for (l, &g) in got[..n].iter().enumerate() {
                    assert_eq!(
                        g,
                        want(l, td, &w),
                        "thin_dot: case {case}, lane {l}, {steps} steps"
                    );
                }

                // widen: LANES consecutive bytes of `w`, at an odd offset.
                let got = lanes::<A>(A::widen(w.as_ptr().add(1)));
                for (l, &g) in got[..n].iter().enumerate() {
                    assert_eq!(
                        g,
                        R::widen(w.as_ptr().add(1 + l)),
                        "widen: case {case}, lane {l}"
                    );
                }

                // The depthwise chain in `Mac`: `(x - zp) * w` over up to
                // MAC_TAPS taps, exact. Cases 0 and 1 sum MAC_TAPS products
                // at the bound (every byte -128 with zp 127, then 127 with
                // zp -128: 255 * 128 and 255 * 127 each; with twice the taps
                // the second sum rounds).
                let zp = match case {
                    0 => 127,
                    1 => -128,
                    _ => i32::from(rng.i8()),
                };
                let taps = if case < 2 { MAC_TAPS } else { 1 + case % 64 };
                let mut bytes = [0i8; 4 * MAX_LANES];
                for v in &mut bytes {
                    *v = fill(&mut rng, 1);
                }
                let nzp = A::to_mac(A::splat(-zp));
                let mut m = <A::Mac as Simd>::zero();
                let mut want = [0i64; MAX_LANES];
                let len = bytes.len() - n;
                for t in 0..taps {
                    let (px, pw) = (
                        bytes.as_ptr().add(t * 7 % len),
                        bytes.as_ptr().add((t * 13 + 5) % len),
                    );
                    let xi = <A::Mac as Simd>::add(A::widen_mac(px), nzp);
                    m = <A::Mac as Simd>::fma(m, xi, A::widen_mac_weights(pw));
                    for (l, s) in want[..n].iter_mut().enumerate() {
                        *s += (i64::from(*px.add(l)) - i64::from(zp)) * i64::from(*pw.add(l));
                    }
                }
                let got = lanes::<A>(A::from_mac(m));
                for l in 0..n {
                    assert_eq!(
                        i64::from(got[l]),
                        want[l],
                        "mac: case {case}, lane {l}, {taps} taps"
                    );
                }

                // broadcast, splat, zero.
                let p = x.as_ptr().add(case % x.len());
                let got = lanes::<A>(A::broadcast(p));
                assert!(
                    got[..n].iter().all(|&g| g == R::broadcast(p)),
                    "broadcast: case {case}"
                );
                let got = lanes::<A>(A::splat(a[1]));
                assert!(
                    got[..n].iter().all(|&g| g == R::splat(a[1])),
                    "splat: case {case}"
                );
                let got = lanes::<A>(A::zero());
                assert!(
                    got[..n].iter().all(|&g| g == R::zero()),
                    "zero: case {case}"
                );

                // Lane-wise arithmetic, and load/store round trips.
                type Scalar = fn(i32, i32, i32) -> i32;
                let ops: [(&str, A::V, Scalar); 6] = [
                    ("load", va, |a, _, _| a),
                    ("fma", A::fma(va, vb, vc), |a, b, c| R::fma(a, b, c)),
                    ("max", A::max(va, vb), |a, b, _| R::max(a, b)),
                    ("min", A::min(va, vb), |a, b, _| R::min(a, b)),
                    ("add", A::add(va, vb), |a, b, _| R::add(a, b)),
                    ("mul", A::mul(va, vb), |a, b, _| R::mul(a, b)),
                ];
                for (name, v, f) in ops {
                    let got = lanes::<A>(v);
                    for l in 0..n {
                        let want = f(a[1 + l], b[1 + l], c[1 + l]);
                        assert_eq!(got[l], want, "{name}: case {case}, lane {l}");
                    }
                }
            }
        }
        // SAFETY: as above.
        unsafe { check_offset::<A>(cases, &mut rng) };
        // SAFETY: as above.
        unsafe { check_strided::<A>(cases, &mut rng) };
    }

    /// [`Dot::offset_pixels`] and [`Dot::offset_fill`]: every group
    /// [`Dot::group_offset`] reads from what they wrote takes the same
    /// part in a dot product as [`Dot::group`] of the source (1 to 3
    /// pixel blocks, one byte off alignment), and so does [`Dot::offset_word`]
    /// applied word by word.
    ///
    /// # Safety
    ///
    /// As [`check_dot`].
    unsafe fn check_offset<A: Dot>(cases: usize, rng: &mut Rng) {
        use small_ir::geometry::CB;
        let (n, d) = (A::LANES, A::DOT);
        let mut src = [0i8; 3 * CB + 1];
        let mut dst = [0i8; 3 * CB + 1];
        let mut w = [0i8; MAX_LANES * 4];
        let zeros = [0i32; MAX_LANES];
        for case in 0..cases {
            let blocks = 1 + case % 3;
            for v in src.iter_mut().chain(w.iter_mut()) {
                *v = rng.i8();
            }
            let fill = rng.i8();
            let fills = [fill; 4];
            // SAFETY: the caller guarantees the arch; `src` and `dst` hold
            // `blocks` pixel blocks after their first byte, `w` LANES x
            // DOT bytes, `fills` DOT bytes, `zeros` LANES i32s.
            unsafe {
                let dot = |x: A::X| {
                    lanes::<A>(A::dot(A::load(zeros.as_ptr()), x, A::weights(w.as_ptr())))
                };
                let (s, t) = (src.as_ptr().add(1), dst.as_mut_ptr().add(1));
                A::offset_pixels(t, s, blocks);
                for g in (0..blocks * CB).step_by(d) {
                    let (got, want) = (dot(A::group_offset(t.add(g))), dot(A::group(s.add(g))));
                    assert_eq!(got[..n], want[..n], "offset_pixels: case {case}, byte {g}");
                }
                // `offset_word`, a word at a time (as a thin layer's
                // edge tile copies its window row).
                for g in (0..blocks * CB).step_by(4) {
                    let word = s.add(g).cast::<u32>().read_unaligned();
                    t.add(g).cast::<u32>().write_unaligned(A::offset_word(word));
                }
                for g in (0..blocks * CB).step_by(d) {
                    let (got, want) = (dot(A::group_offset(t.add(g))), dot(A::group(s.add(g))));
                    assert_eq!(got[..n], want[..n], "offset_word: case {case}, byte {g}");
                }
                A::offset_fill(t, fill, blocks);
                for g in (0..blocks * CB).step_by(d) {
                    let (got, want) = (
                        dot(A::group_offset(t.add(g))),
                        dot(A::group(fills.as_ptr())),
                    );
                    assert_eq!(
                        got[..n],
                        want[..n],
                        "offset_fill {fill}: case {case}, byte {g}"
                    );
                }
            }
        }
    }

    /// [`Dot::group_strided`] and [`Dot::thin_group_strided`] against
    /// `group` and `thin_group` of the same bytes gathered, at the pixel
    /// strides of a one-channel tensor on every target (1, 2, 4, 8) and
    /// at every offset of a buffer holding exactly the bytes read.
    ///
    /// # Safety
    ///
    /// As [`check_dot`].
    unsafe fn check_strided<A: Dot>(cases: usize, rng: &mut Rng) {
        let n = A::LANES;
        let mut w = [0i8; MAX_LANES * 4];
        let zeros = [0i32; MAX_LANES];
        for case in 0..cases {
            let stride = [1, 2, 4, 8][case % 4];
            let mut src = [0i8; 4 * 8 + 3];
            for v in src.iter_mut().chain(w.iter_mut()) {
                *v = rng.i8();
            }
            for (dot, thin) in [(A::DOT, false), (A::THIN_DOT, true)] {
                // The last group's pixels end at the buffer's last byte.
                let len = dot * stride;
                for first in 0..=src.len() - len {
                    let mut gathered = [0i8; 4];
                    for (j, g) in gathered.iter_mut().enumerate().take(dot) {
                        *g = src[first + j * stride];
                    }
                    // SAFETY: the caller guarantees the arch; the reads
                    // stay in `src[first..first + len]` (`dot` pixels of
                    // `stride` bytes) and `gathered`,
                    // `w` holds LANES x 4 bytes, `zeros` LANES i32s.
                    let (got, want) = unsafe {
                        let (p, acc) = (src.as_ptr().add(first), A::load(zeros.as_ptr()));
                        if thin {
                            let wv = A::thin_weights(w.as_ptr());
                            (
                                lanes::<A>(A::thin_dot(acc, A::thin_group_strided(p, stride), wv)),
                                lanes::<A>(A::thin_dot(acc, A::thin_group(gathered.as_ptr()), wv)),
                            )
                        } else {
                            let wv = A::weights(w.as_ptr());
                            (
                                lanes::<A>(A::dot(acc, A::group_strided(p, stride), wv)),
                                lanes::<A>(A::dot(acc, A::group(gathered.as_ptr()), wv)),
                            )
                        }
                    };
                    assert_eq!(
                        got[..n],
                        want[..n],
                        "case {case}, stride {stride}, first {first}, thin {thin}"
                    );
                }
            }
        }
    }

    /// [`Dot::requantize_pair`] against the definition, lane by lane, on
    /// the case's rows made pair-shaped as the packer makes them for a
    /// layer of at most `LANES / 2` channels (every row's upper half
    /// repeats the lower) and two pixels whose upper lanes sum to 0, as
    /// padding channels do: the case's sums and the same reversed.
    ///
    /// # Safety
    ///
    /// As [`check_dot`].
    unsafe fn check_pair<A: Dot>(rows: &mut [i32], stride: usize, acc: &[i32], case: usize) {
        use small_ir::quant::{Rescale, output, row};
        const GUARD: i8 = 0x5a;
        let (n, half) = (A::LANES, A::LANES / 2);
        if half == 0 {
            return;
        }
        for r in 0..row::CORRECTION {
            for l in half..n {
                rows[1 + r * stride + l] = rows[1 + r * stride + l - half];
            }
        }
        let mut sums = [[0i32; MAX_LANES + 1]; 2];
        for l in 0..half {
            sums[0][1 + l] = acc[1 + l];
            sums[1][1 + l] = acc[half - l];
        }
        let mut got = [[GUARD; MAX_LANES + 2]; 2];
        let mut want = [[GUARD; MAX_LANES + 2]; 2];
        for (w, sum) in want.iter_mut().zip(&sums) {
            for l in 0..n {
                let at = |r: usize| rows[1 + r * stride + l];
                let words = [1, 2, 3].map(|k| at(row::RESCALE + k - 1));
                let rescale = Rescale::from_words(words);
                w[1 + l] = output(
                    sum[1 + l],
                    rescale,
                    at(row::ZERO_POINT),
                    at(row::MIN),
                    at(row::MAX),
                );
            }
        }
        // SAFETY: the caller guarantees the arch; `rows` holds every row
        // below CORRECTION of LANES values at `1 + r * stride`, each sum
        // LANES values at 1, and each output LANES bytes after its first.
        unsafe {
            let [a, b] = &mut got;
            A::requantize_pair(
                a.as_mut_ptr().add(1),
                b.as_mut_ptr().add(1),
                A::load(sums[0].as_ptr().add(1)),
                A::load(sums[1].as_ptr().add(1)),
                A::stage(rows.as_ptr().add(1), stride),
            );
        }
        assert_eq!(got, want, "requantize_pair: case {case}");
    }

    /// A real multiplier from `2^-20` to `2^4` (`2^e` times a mantissa
    /// in `1..2`), negative one time in 16.
    fn real(rng: &mut Rng) -> f64 {
        let r = rng.u64();
        let e = (r % 24) as i32 - 20;
        let mantissa = 1.0 + ((r >> 8) & 0xff_ffff) as f64 / (1u64 << 24) as f64;
        let x = mantissa * f64::from_bits(((1023 + e) as u64) << 52); // exact 2^e
        if (r >> 40).is_multiple_of(16) { -x } else { x }
    }

    /// An `f32` tensor scale of `2^-14..1` (about `1e-4..1`): `2^-e`
    /// times a mantissa in `1..2`.
    fn tensor_scale(rng: &mut Rng) -> f32 {
        let r = rng.u64();
        let e = r % 14;
        let mantissa = 1.0 + ((r >> 8) & 0xff_ffff) as f64 / (1u64 << 24) as f64;
        (mantissa * f64::from_bits((1023 - e) << 52)) as f32
    }

    /// `x` moved by `steps` units in the last place (toward +inf for a
    /// positive `x` and `steps`), for finite nonzero `x`.
    fn ulps(x: f64, steps: i64) -> f64 {
        f64::from_bits((x.to_bits() as i64 + steps) as u64)
    }

    /// A [`small_ir::quant::Rescale::Real`] scale: mostly FULLY_CONNECTED's,
    /// `Rescale::fully_connected` of three [`tensor_scale`]s (about
    /// `1e-8..1e4`), or `real`'s `2^-20..2^4`, negative one time in 16;
    /// else one of the edges (±0, ±1 and its neighbours, ±0.5 and its
    /// neighbours, powers of two, ±1e6, 1e300, `f64::MAX`, the least
    /// normal and subnormal), any bits (huge, tiny, subnormal, rarely
    /// NaN), and, one lane in about 200, NaN or ±inf (which the x86
    /// vector paths leave to the scalar default).
    fn real_scale(rng: &mut Rng) -> f64 {
        use small_ir::quant::Rescale;
        let r = rng.u64();
        let x = match r % 32 {
            0 => f64::from_bits(rng.u64()),
            1 | 2 => [
                0.0,
                1.0,
                ulps(1.0, 1),
                ulps(1.0, -1),
                0.5,
                ulps(0.5, 1),
                ulps(0.5, -1),
                0.25,
                1.5,
                2.0,
                1e6,
                1e300,
                f64::MAX,
                f64::MIN_POSITIVE,
                f64::from_bits(1),
                ulps(1.5, -1),
            ][(r >> 8) as usize % 16],
            3 if (r >> 8).is_multiple_of(6) => [f64::NAN, f64::INFINITY][(r >> 16) as usize % 2],
            4..=9 => real(rng),
            _ => {
                let (i, w, o) = (tensor_scale(rng), tensor_scale(rng), tensor_scale(rng));
                let [_, lo, hi] = Rescale::fully_connected(i, w, o).to_words();
                f64::from_bits(lo as u32 as u64 | (hi as u32 as u64) << 32)
            }
        };
        if (r >> 40).is_multiple_of(16) { -x } else { x }
    }

    /// The per-channel rows of one lane: `[variant, multiplier, shift,
    /// zero point, min, max]` (rows `RESCALE..=MAX`). `variant` is the
    /// rescale form wanted (0, 1, 2, or anything else: read as double
    /// rounding by `Rescale::from_words`, so the vector paths must fall
    /// back). A double rounding of a `steppable` case has a shift of -1
    /// or less and no `i32::MIN` multiplier (a [`small_ir::step::Step`]).
    fn lane_rows(rng: &mut Rng, variant: i32, steppable: bool) -> [i32; 6] {
        use small_ir::quant::{quantize_multiplier, quantize_multiplier_single_rounding};
        let r = rng.u64();
        let (m, shift) = match variant {
            2 => {
                let b = real_scale(rng).to_bits();
                (b as u32 as i32, (b >> 32) as u32 as i32)
            }
            1 => quantize_multiplier_single_rounding(real(rng)),
            _ => {
                let m = match r % 8 {
                    0 => [0, 1 << 30, i32::MAX, i32::MIN, 1, -1, -(1 << 30), 3 << 29]
                        [(r >> 8) as usize % 8],
                    _ => quantize_multiplier(real(rng)).0,
                };
                let shift = match (r >> 16) % 16 {
                    // Out of TFLite's range: the scalar form clamps the
                    // right shift to 31 and wraps the left one (`& 31`).
                    0 => [i32::MIN, i32::MAX, 31, 32, 33, 40, -32, -33, -40, -1000]
                        [(r >> 24) as usize % 10],
                    1 => [0, -31, 8, 1, -1][(r >> 24) as usize % 5],
                    2..=8 => ((r >> 24) % 40) as i32 - 31, // -31..=8
                    _ => quantize_multiplier(real(rng)).1,
                };
                if steppable {
                    (if m == i32::MIN { i32::MAX } else { m }, shift.min(-1))
                } else {
                    (m, shift)
                }
            }
        };
        let zp = match (r >> 32) % 8 {
            0 => -128,
            1 => 127,
            2 => 0,
            3 => rng.i32(), // wraps in the sum
            _ => rng.i8().into(),
        };
        let (min, max) = match (r >> 40) % 8 {
            0..=2 => (-128, 127),
            3 => {
                let v = rng.i8().into();
                (v, v)
            }
            // Outside the contract (`min..=max` in i8, `min <= max`): the
            // scalar form still defines the bits (`as i8` truncates).
            4 => (rng.i32() >> (rng.u64() % 32), rng.i32() >> (rng.u64() % 32)),
            _ => {
                let (a, b) = (i32::from(rng.i8()), i32::from(rng.i8()));
                (a.min(b), a.max(b))
            }
        };
        [variant, m, shift, zp, min, max]
    }

    /// The rescale variant of each lane of case `case` (`n` lanes): every
    /// lane double rounding (0) in 3 cases of 8 and every lane real (2)
    /// in 2 (the vector fast paths), else mixed: one lane of another form
    /// among double rounding or real ones, some lanes or every lane
    /// another form (the fallback).
    fn case_variants(rng: &mut Rng, case: usize, n: usize) -> [i32; MAX_LANES] {
        let mut v = [0; MAX_LANES];
        match case % 8 {
            // Every lane double rounding: the vector fast path.
            0..=2 => {}
            // Every lane real: the other vector fast path.
            3 | 4 => v[..n].fill(2),
            // One lane, some lanes or every lane another form.
            k => {
                let base = [0, 2][(rng.u64() % 2) as usize];
                let one = (rng.u64() % n as u64) as usize;
                for (l, v) in v[..n].iter_mut().enumerate() {
                    let r = rng.u64();
                    let other = [1, 2, 1, 2, 4, -1, 0][(r >> 8) as usize % 7];
                    let other = if other == base { 1 } else { other };
                    *v = match k {
                        5 if l == one => other,
                        6 if r.is_multiple_of(4) => other,
                        7 => other,
                        _ => base,
                    };
                }
            }
        }
        v
    }

    /// True if case `case` has every lane a [`small_ir::step::Step`]
    /// (the vector fast path): half the cases, in runs of 64.
    fn steppable(case: usize) -> bool {
        (case / 64).is_multiple_of(2)
    }

    /// One lane's rows `RESCALE..=MAX` ([`lane_rows`]) and accumulator
    /// for case `case`: the extremes in every lane of one case in 8 (in
    /// every group of 64, whatever the variants), products on or next to
    /// a tie of the rounding in another (double rounding: of the doubling
    /// high multiply and the division by a power of two; real: `x.5`
    /// exactly, or one unit in the last place of the scale away), else,
    /// for a real scale, an accumulator that the scale takes to about
    /// `-300..300` (FULLY_CONNECTED's case) 3 times in 4, or any `i32`.
    fn lane_rows_acc(rng: &mut Rng, case: usize, variant: i32) -> ([i32; 6], i32) {
        let mut words = lane_rows(rng, variant, steppable(case));
        let set_scale = |words: &mut [i32; 6], x: f64| {
            let b = x.to_bits();
            (words[1], words[2]) = (b as u32 as i32, (b >> 32) as u32 as i32);
        };
        let acc = match (case / 8) % 8 {
            // The largest magnitudes in every lane, a real scale often
            // near ±1 (products at and just past the bounds of `i32`).
            7 => {
                let r = rng.u64();
                if variant == 2 && !r.is_multiple_of(4) {
                    let x = [1.0, ulps(1.0, 1), ulps(1.0, -1), 0.5, 2.0, 1e6, 1e-9]
                        [(r >> 8) as usize % 7];
                    set_scale(&mut words, if (r >> 16).is_multiple_of(2) { x } else { -x });
                }
                [i32::MIN, i32::MAX, i32::MIN + 1, i32::MAX - 1][(r >> 24) as usize % 4]
            }
            // Products on, or one off, a tie of the doubling high
            // multiply (`x * m = 2^30 mod 2^31`: `x = ±2^30` with
            // `m = ±1` or `i32::MAX`, an odd `x` with `m = ±2^30`),
            // with no shift or a right shift of 1 or 2 (ties of
            // the division by a power of two).
            6 if variant == 0 => {
                let r = rng.u64();
                words[1] = [1, -1, 1 << 30, -(1 << 30), i32::MAX][r as usize % 5];
                words[2] = if steppable(case) {
                    [-1, -2, -1, -2]
                } else {
                    [0, 0, -1, -2]
                }[(r >> 8) as usize % 4];
                let tie: i32 = [1 << 30, -(1 << 30), 1, -1, 3, -3, 5, 7][(r >> 16) as usize % 8];
                tie.wrapping_add([0, 0, 1, -1][(r >> 24) as usize % 4])
            }
            // `acc * scale = ±(n + 0.5)` exactly: a scale `±m * 2^-k`
            // (`m` odd: 1, 3, 5, 7) and `acc = (2j + 1) * 2^(k - 1)`, then
            // one time in four the scale one unit in the last place up or
            // down (just past or short of the tie), one time in eight the
            // accumulator one off.
            6 if variant == 2 => {
                let r = rng.u64();
                let k = 1 + (r % 12) as u32;
                let m = [1.0, 3.0, 5.0, 7.0][(r >> 8) as usize % 4];
                let mut x = m / f64::from(1u32 << k);
                match (r >> 12) % 8 {
                    0 => x = ulps(x, 1),
                    1 => x = ulps(x, -1),
                    _ => {}
                }
                set_scale(&mut words, if (r >> 16).is_multiple_of(2) { x } else { -x });
                // |2j + 1| below 2^(31 - k): small j (outputs inside the
                // clamps) or any.
                let bound = if (r >> 20).is_multiple_of(2) {
                    64
                } else {
                    1u64 << (30 - k)
                };
                let j = (rng.u64() % (2 * bound)) as i64 - bound as i64;
                let acc = ((2 * j + 1) << (k - 1)) as i32;
                match (r >> 24) % 8 {
                    0 => acc.wrapping_add(1),
                    1 => acc.wrapping_sub(1),
                    // The largest double below 0.5 (±1 times the scale
                    // just below 0.5), where `x + 0.5` would round up to
                    // 1: round-half-away must give 0.
                    2 => {
                        set_scale(&mut words, ulps(0.5, -1));
                        if (r >> 28).is_multiple_of(2) { 1 } else { -1 }
                    }
                    _ => acc,
                }
            }
            _ if variant == 2 && !rng.u64().is_multiple_of(4) => {
                let scale = f64::from_bits(words[1] as u32 as u64 | (words[2] as u32 as u64) << 32);
                let u = (rng.u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
                let a = 300.0 * u / scale;
                if a.abs() < 2_147_483_647.0 {
                    a as i32
                } else {
                    rng.i32()
                }
            }
            _ => rng.i32(),
        };
        (words, acc)
    }

    /// A scale of `2^-10..1` (about `1e-3..1`): `2^e` times a mantissa in
    /// `1..2`; one time in four a power of two, or 1.5 times one, whose
    /// ADD multipliers are short and put sums on ties.
    fn add_scale(rng: &mut Rng) -> f32 {
        let r = rng.u64();
        let e = (r % 10) as i32 + 1;
        let mantissa = match (r >> 8) % 8 {
            0 => 1.0,
            1 => 1.5,
            _ => 1.0 + ((r >> 16) & 0xff_ffff) as f64 / (1u64 << 24) as f64,
        };
        (mantissa * f64::from_bits(((1023 - e) as u64) << 52)) as f32
    }

    /// `AddRescale::new` of three random scales ([`add_scale`]).
    fn add_words_real(rng: &mut Rng) -> [i32; 7] {
        use small_ir::quant::{AddRescale, row};
        let (s1, s2, so) = (add_scale(rng), add_scale(rng), add_scale(rng));
        row::add_words(AddRescale::new(s1, s2, so))
    }

    /// ADD words beyond what `AddRescale::new` gives: each multiplier one
    /// of the extremes (`0`, `±1`, `±2^30`, `i32::MAX`, `i32::MIN`) or any
    /// `i32`, each shift one of `i32::MIN`, `i32::MAX`, `±31`, `±32`, `1`
    /// (a positive shift: ignored), `-1000`, or `-31..=8`; the rest as
    /// `real`.
    fn add_words_raw(rng: &mut Rng, real: [i32; 7]) -> [i32; 7] {
        let mut w = real;
        for k in 0..3 {
            let r = rng.u64();
            if !r.is_multiple_of(4) {
                w[1 + 2 * k] = match (r >> 8) % 3 {
                    0 => [0, 1, -1, 1 << 30, -(1 << 30), i32::MAX, i32::MIN, 3 << 29]
                        [(r >> 16) as usize % 8],
                    _ => rng.i32(),
                };
            }
            if !(r >> 2).is_multiple_of(4) {
                w[2 + 2 * k] = match (r >> 24) % 3 {
                    0 => [i32::MIN, i32::MAX, 31, -31, 32, -32, 1, -1000, 0, -1]
                        [(r >> 32) as usize % 10],
                    _ => ((r >> 40) % 40) as i32 - 31,
                };
            }
        }
        w
    }

    /// Compares `A::requantize_add` with the scalar default
    /// (`Int8<Reference>`, one lane at a time), byte for byte, on `cases`
    /// random cases. The convolution's rows and accumulators as in
    /// [`check_output_stages`] (double rounding in every lane, or some
    /// lanes of another form: the fallback); the ADD's words from
    /// `AddRescale::new` of scales `2^-10..1`, the same in every lane (one
    /// tensor) or lane by lane, or raw words with extreme multipliers and
    /// shifts; `left_shift` 20 mostly, else `0..=31` or beyond (`-1`, 32,
    /// `i32::MIN`, ...: taken `& 31`); zero points -128, 127, 0, any `i8`
    /// or, rarely, any `i32` (wrapping); the ADD's clamp as the
    /// convolution's; skip bytes with -128 and 127. One case in three in
    /// place (`p == skip`). Checks that exactly `LANES` bytes are written
    /// (and, out of place, that the skip is not), and that enough lanes
    /// are inside both clamps for the test to mean something.
    ///
    /// # Safety
    ///
    /// As [`check_dot`].
    #[inline(always)]
    pub(crate) unsafe fn check_requantize_add<A: Dot>(cases: usize) {
        use small_ir::quant::{Rescale, output, row};
        use small_ir::step::derive_steps;
        const GUARD: i8 = 0x5a;
        const ROWS: usize = row::CORRECTION;
        let n = A::LANES;
        assert!(n <= MAX_LANES);
        let mut rng = Rng::new(0x6a09_e667_f3bc_c908);
        let mut rows = [0i32; ROWS * (MAX_LANES + 4) + 1];
        let mut acc = [0i32; MAX_LANES + 1];
        let zero_point = |rng: &mut Rng| -> i32 {
            let r = rng.u64();
            match r % 16 {
                0 | 1 => -128,
                2 | 3 => 127,
                4 | 5 => 0,
                6 => rng.i32(), // wraps
                _ => rng.i8().into(),
            }
        };
        let (mut fast, mut mixed, mut in_place) = (0usize, 0usize, 0usize);
        let (mut lanes, mut conv_inside, mut add_inside) = (0usize, 0usize, 0usize);
        for case in 0..cases {
            let stride = n + 1 + case % 4;
            let variants = case_variants(&mut rng, case, n);
            // As TFLite's ADD gives them in half the cases (every lane a
            // step, if its convolution's is): real words, a left shift of
            // 20, zero points in `i8`.
            let steppable = steppable(case);
            // 0, 1: one AddRescale for every lane; 2: one per lane; 3: raw.
            let kind = if steppable {
                [0, 2][(rng.u64() % 2) as usize]
            } else {
                rng.u64() % 4
            };
            let tensor = add_words_real(&mut rng);
            let shared_left = steppable || rng.u64().is_multiple_of(8);
            let left_shift = |rng: &mut Rng| -> i32 {
                let r = rng.u64();
                match r % 4 {
                    0 => [i32::MIN, i32::MAX, -1, -20, 32, 33, 40, 52][(r >> 8) as usize % 8],
                    _ => ((r >> 16) % 32) as i32,
                }
            };
            let case_left = if steppable { 20 } else { left_shift(&mut rng) };
            for l in 0..n {
                let (words, a) = lane_rows_acc(&mut rng, case, variants[l]);
                acc[1 + l] = a;
                let mut add = match kind {
                    0 | 1 => tensor,
                    2 => add_words_real(&mut rng),
                    _ => {
                        let real = add_words_real(&mut rng);
                        add_words_raw(&mut rng, real)
                    }
                };
                if shared_left {
                    add[0] = case_left;
                } else if kind == 3 && rng.u64().is_multiple_of(2) {
                    add[0] = left_shift(&mut rng);
                }
                let (add_min, add_max) = {
                    let [.., min, max] = lane_rows(&mut rng, 0, false);
                    (min, max)
                };
                let mut set = |r: usize, v: i32| rows[1 + r * stride + l] = v;
                for (k, w) in words.into_iter().enumerate() {
                    set(row::RESCALE + k, w);
                }
                for (k, w) in add.into_iter().enumerate() {
                    set(row::ADD_RESCALE + k, w);
                }
                let input_zp = |rng: &mut Rng| {
                    let zp = zero_point(rng);
                    if steppable { zp as i8 as i32 } else { zp }
                };
                set(row::CONV_ZERO_POINT, input_zp(&mut rng));
                set(row::SKIP_ZERO_POINT, input_zp(&mut rng));
                set(row::ADD_ZERO_POINT, zero_point(&mut rng));
                set(row::ADD_MIN, add_min);
                set(row::ADD_MAX, add_max);
            }
            derive_steps(&mut rows[1..], stride, n, true);
            let all_fast = (0..n).all(|l| rows[1 + row::RESCALE * stride + l] == row::STEPPED);
            if all_fast {
                fast += 1;
            } else {
                mixed += 1;
            }
            let mut skip = [GUARD; MAX_LANES + 2];
            for b in &mut skip[1..=n] {
                *b = rng.i8();
            }
            let inplace = case % 3 == 0;
            in_place += usize::from(inplace);

            // SAFETY: the caller guarantees the arch; `rows` holds rows
            // `0..ROWS` of LANES values at `1 + r * stride`, `acc` LANES
            // values at 1, the skip and every output LANES bytes after
            // their first byte.
            let (got, want) = unsafe {
                let q = rows.as_ptr().add(1);
                let v = A::load(acc.as_ptr().add(1));
                let mut got = if inplace {
                    skip
                } else {
                    [GUARD; MAX_LANES + 2]
                };
                let mut want = got;
                let g = got.as_mut_ptr().add(1);
                let w = want.as_mut_ptr().add(1);
                if inplace {
                    A::requantize_add(g, v, g, q, stride);
                    for l in 0..n {
                        R::requantize_add(w.add(l), acc[1 + l], w.add(l), q.add(l), stride);
                    }
                } else {
                    let s = skip.as_ptr().add(1);
                    A::requantize_add(g, v, s, q, stride);
                    for l in 0..n {
                        R::requantize_add(w.add(l), acc[1 + l], s.add(l), q.add(l), stride);
                    }
                }
                (got, want)
            };
            assert_eq!(got[0], GUARD, "requantize_add: wrote before its pointer");
            assert!(
                got[n + 1..].iter().all(|&g| g == GUARD),
                "requantize_add: wrote past LANES bytes"
            );
            assert!(
                skip[0] == GUARD && skip[n + 1..].iter().all(|&g| g == GUARD),
                "requantize_add: wrote to the skip"
            );
            for l in 0..n {
                let at = |r: usize| rows[1 + r * stride + l];
                assert_eq!(
                    got[1 + l],
                    want[1 + l],
                    "requantize_add: case {case} (in place: {inplace}), lane {l}: acc {}, \
                     skip {}, rows [variant, multiplier, shift, zp, min, max, conv zp, \
                     skip zp, add zp, add min, add max, left shift, m1, s1, m2, s2, mo, so] \
                     = {:?}",
                    acc[1 + l],
                    skip[1 + l],
                    core::array::from_fn::<i32, { ROWS - 1 }, _>(|k| at(row::RESCALE + k)),
                );
                if all_fast {
                    lanes += 1;
                    let conv = output(
                        acc[1 + l],
                        Rescale::from_words([at(1), at(2), at(3)]),
                        at(row::ZERO_POINT),
                        at(row::MIN),
                        at(row::MAX),
                    );
                    let inside = |v: i32, min: i32, max: i32| min < v && v < max;
                    conv_inside += usize::from(inside(conv.into(), at(row::MIN), at(row::MAX)));
                    add_inside += usize::from(inside(
                        got[1 + l].into(),
                        at(row::ADD_MIN),
                        at(row::ADD_MAX),
                    ));
                }
            }
        }
        // The step path in a fair share of the cases, the others too.
        assert!(
            fast * 8 > cases && mixed > 0 && in_place > 0,
            "{fast} of {cases} stepped"
        );
        // Not a vacuous check: on the fast path, enough lanes whose
        // results neither clamp saturates.
        assert!(
            conv_inside * 10 > lanes && add_inside * 10 > lanes,
            "{conv_inside} convolutions and {add_inside} sums inside the clamps, of {lanes} lanes"
        );
    }

    /// Compares `A`'s output stages (`requantize`, its `_staged` and
    /// `_narrow` forms, `average`, `clamp`) with the scalar defaults
    /// (`Int8<Reference>`, one lane at a time), byte for byte, on `cases`
    /// random cases: double-rounding lanes (the vector fast path) with
    /// multipliers of reals `2^-20..2^4`, the
    /// extremes `0`, `2^30`, `i32::MAX` (and `i32::MIN`, negatives), shifts
    /// `-31..=8` and beyond, accumulators with `i32::MIN`, `i32::MAX`, 0,
    /// ±1, zero points -128, 127 and wrapping ones, clamps with `min ==
    /// max`; real lanes in every lane (the other fast path) with
    /// FULLY_CONNECTED's scales ([`real_scale`]), products exactly on a
    /// tie `±(n + 0.5)` or one unit in the last place of the scale off,
    /// products past `i32` (saturation), NaN and infinite scales; and
    /// vectors where some lanes are double rounding or real and others
    /// single rounding, real, double rounding or an unknown variant (the
    /// fallback). Checks that each stage writes exactly `LANES` bytes, and
    /// that enough real lanes are inside the clamps, on ties and next to
    /// them for the check to mean something.
    ///
    /// # Safety
    ///
    /// As [`check_dot`].
    #[inline(always)]
    pub(crate) unsafe fn check_output_stages<A: Dot>(cases: usize) {
        use small_ir::quant::{Rescale, row};
        use small_ir::step::derive_steps;
        const GUARD: i8 = 0x5a;
        let n = A::LANES;
        assert!(n <= MAX_LANES);
        let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
        // Rows of `stride = LANES + 1..=4` values, so that neither the rows
        // nor the accumulators are aligned to the vector.
        let mut rows = [0i32; row::CORRECTION * (MAX_LANES + 4) + 1];
        let mut acc = [0i32; MAX_LANES + 1];
        let (mut fast, mut real, mut mixed) = (0usize, 0usize, 0usize);
        let (mut stepped, mut unstepped) = (0usize, 0usize);
        // Lanes of the all-real cases: in all, whose output is inside the
        // clamps, whose product is a tie `±(n + 0.5)`, and next to one.
        let (mut real_lanes, mut real_inside, mut ties, mut near_ties) = (0, 0, 0, 0);
        for case in 0..cases {
            let stride = n + 1 + case % 4;
            let variants = case_variants(&mut rng, case, n);
            let all_real = variants[..n].iter().all(|&v| v == 2);
            if variants[..n].iter().all(|&v| v == 0) {
                fast += 1;
            } else if all_real {
                real += 1;
            } else {
                mixed += 1;
            }
            for l in 0..n {
                let words;
                (words, acc[1 + l]) = lane_rows_acc(&mut rng, case, variants[l]);
                for (k, w) in words.into_iter().enumerate() {
                    rows[1 + (row::RESCALE + k) * stride + l] = w;
                }
            }
            derive_steps(&mut rows[1..], stride, n, false);
            if variants[..n].iter().all(|&v| v == 0) {
                let all = (0..n).all(|l| rows[1 + row::RESCALE * stride + l] == row::STEPPED);
                stepped += usize::from(all);
                unstepped += usize::from(!all);
            }
            let count = match rng.u64() % 8 {
                0 => [1, 2, 3, 4, 9, 0, -1, i32::MIN][rng.u64() as usize % 8],
                1 => rng.i32(),
                2 => (rng.u64() % (1 << 31)) as i32,
                _ => 1 + (rng.u64() % 100) as i32,
            };

            // SAFETY: the caller guarantees the arch; `rows` holds row
            // `RESCALE..=MAX` of LANES values at `1 + r * stride`, `acc`
            // LANES values at 1, and every output LANES bytes after its
            // first byte.
            unsafe {
                let q = rows.as_ptr().add(1);
                let v = A::load(acc.as_ptr().add(1));
                // The definition, lane by lane.
                let definition = |w: *mut i8| {
                    for l in 0..n {
                        let at = |r: usize| q.add(l + r * stride).read();
                        let words = [1, 2, 3].map(|k| at(row::RESCALE + k - 1));
                        let y = small_ir::quant::output(
                            acc[1 + l],
                            Rescale::from_words(words),
                            at(row::ZERO_POINT),
                            at(row::MIN),
                            at(row::MAX),
                        );
                        w.add(l).write(y);
                    }
                };
                let stages: [(&str, [i8; MAX_LANES + 2], [i8; MAX_LANES + 2]); 5] =
                    core::array::from_fn(|stage| {
                        let mut got = [GUARD; MAX_LANES + 2];
                        let mut want = [GUARD; MAX_LANES + 2];
                        let (g, w) = (got.as_mut_ptr().add(1), want.as_mut_ptr().add(1));
                        let name = match stage {
                            0 => {
                                A::requantize(g, v, q, stride);
                                definition(w);
                                "requantize"
                            }
                            3 => {
                                A::requantize_staged(g, v, A::stage(q, stride));
                                definition(w);
                                "requantize_staged"
                            }
                            4 => {
                                A::requantize_narrow(g, v, A::stage(q, stride));
                                definition(w);
                                "requantize_narrow"
                            }
                            1 => {
                                A::average(g, v, count, q, stride);
                                for l in 0..n {
                                    R::average(w.add(l), acc[1 + l], count, q.add(l), stride);
                                }
                                "average"
                            }
                            _ => {
                                A::clamp(g, v, q, stride);
                                for l in 0..n {
                                    R::clamp(w.add(l), acc[1 + l], q.add(l), stride);
                                }
                                "clamp"
                            }
                        };
                        (name, got, want)
                    });
                for (name, got, want) in stages {
                    assert_eq!(got[0], GUARD, "{name}: wrote before its pointer");
                    assert!(
                        got[n + 1..].iter().all(|&g| g == GUARD),
                        "{name}: wrote past LANES bytes"
                    );
                    for l in 0..n {
                        let at = |r: usize| rows[1 + r * stride + l];
                        assert_eq!(
                            got[1 + l],
                            want[1 + l],
                            "{name}: case {case}, lane {l}: acc {}, count {count}, rows \
                             [variant, multiplier, shift, zp, min, max] = {:?} ({:?})",
                            acc[1 + l],
                            [
                                row::RESCALE,
                                row::RESCALE + 1,
                                row::RESCALE + 2,
                                row::ZERO_POINT,
                                row::MIN,
                                row::MAX
                            ]
                            .map(at),
                            Rescale::from_words([1, 2, 3].map(at)),
                        );
                    }
                }
            }
            // SAFETY: the caller guarantees the arch.
            unsafe { check_pair::<A>(&mut rows, stride, &acc, case) };
            if all_real {
                for l in 0..n {
                    let at = |r: usize| rows[1 + r * stride + l];
                    let scale = f64::from_bits(
                        at(row::RESCALE + 1) as u32 as u64
                            | (at(row::RESCALE + 2) as u32 as u64) << 32,
                    );
                    let x = f64::from(acc[1 + l]) * scale;
                    let (min, max) = (at(row::MIN), at(row::MAX));
                    let v = Rescale::Real(scale)
                        .apply(acc[1 + l])
                        .wrapping_add(at(row::ZERO_POINT));
                    real_lanes += 1;
                    real_inside += usize::from(min < v && v < max);
                    if x.is_finite() && x != 0.0 && x < 2_147_483_648.0 && x > -2_147_483_649.0 {
                        let frac = x - (x as i64) as f64;
                        let gap = if frac < 0.0 { -frac } else { frac } - 0.5;
                        ties += usize::from(gap == 0.0);
                        near_ties += usize::from(gap != 0.0 && -1e-9 < gap && gap < 1e-9);
                    }
                }
            }
        }
        assert!(fast > 0 && real > 0 && mixed > 0);
        // Both double-rounding paths: every lane a step, and not.
        assert!(
            stepped * 4 > fast && unstepped > 0,
            "{stepped} stepped of {fast}"
        );
        // Not a vacuous check of the real path: enough lanes neither clamp
        // saturates, enough ties, and products just off them.
        assert!(
            real_inside * 10 > real_lanes && ties * 50 > real_lanes && near_ties * 200 > real_lanes,
            "of {real_lanes} real lanes: {real_inside} inside the clamps, {ties} ties, \
             {near_ties} next to one"
        );
    }

    /// Prints the time of `A`'s output stages against the scalar
    /// defaults, in ns per 16 outputs: a DEPTHWISE-like STORE of 64
    /// channels (double rounding) at 64 positions, repeated (for
    /// `requantize (real)`, the same with FULLY_CONNECTED's `f64` scales;
    /// for `requantize_add`, a residual layer's: one ADD for every
    /// channel, a skip tensor beside the output). Not a test:
    /// run it in release mode (`cargo test --release -p arch-defs --
    /// --ignored --nocapture output_stage_timing`).
    ///
    /// # Safety
    ///
    /// As [`check_dot`].
    #[inline(always)]
    pub(crate) unsafe fn time_output_stages<A: Dot>(arch: &str) {
        extern crate std;
        use small_ir::quant::{AddRescale, Multiplier, Rescale, quantize_multiplier, row};
        use std::hint::black_box;
        use std::time::Instant;
        const CH: usize = 64;
        const POS: usize = 64;
        let mut rng = Rng::new(7);
        let mut rows = [0i32; row::CORRECTION * CH];
        // The same layer with FULLY_CONNECTED's rescale: the same scales
        // as `f64`s (`Rescale::Real`).
        let mut real_rows = [0i32; row::CORRECTION * CH];
        for c in 0..CH {
            let scale = 0.0005 + 0.001 * real(&mut rng).abs();
            let (multiplier, shift) = quantize_multiplier(scale);
            let words = Rescale::DoubleRounding(Multiplier { multiplier, shift }).to_words();
            for (k, w) in words.into_iter().enumerate() {
                rows[(row::RESCALE + k) * CH + c] = w;
            }
            for (k, w) in Rescale::Real(scale).to_words().into_iter().enumerate() {
                real_rows[(row::RESCALE + k) * CH + c] = w;
            }
            rows[row::ZERO_POINT * CH + c] = i32::from(rng.i8());
            rows[row::MIN * CH + c] = -128;
            rows[row::MAX * CH + c] = 127;
            // A residual layer's ADD: one tensor's scales and zero points.
            let add = row::add_words(AddRescale::new(0.02, 0.05, 0.04));
            for (k, w) in add.into_iter().enumerate() {
                rows[(row::ADD_RESCALE + k) * CH + c] = w;
            }
            rows[row::CONV_ZERO_POINT * CH + c] = rows[row::ZERO_POINT * CH + c];
            rows[row::SKIP_ZERO_POINT * CH + c] = -3;
            rows[row::ADD_ZERO_POINT * CH + c] = 5;
            rows[row::ADD_MIN * CH + c] = -128;
            rows[row::ADD_MAX * CH + c] = 127;
            for r in [row::ZERO_POINT, row::MIN, row::MAX] {
                real_rows[r * CH + c] = rows[r * CH + c];
            }
        }
        // The same without steps (the fallback of a shift of 0 or more).
        let plain_rows = rows;
        small_ir::step::derive_steps(&mut rows, CH, CH, true);
        let acc: std::vec::Vec<i32> = (0..CH * POS)
            .map(|_| (rng.u64() >> 40) as i32 - (1 << 23))
            .collect();
        let mut out = std::vec![0i8; CH * POS];
        let skip: std::vec::Vec<i8> = (0..CH * POS).map(|_| rng.i8()).collect();
        let reps = 400;
        // A pooling window's size, as the kernel has it: known at run time.
        let count = black_box(9);
        let per16 = (reps * CH * POS / 16) as f64;
        // A macro, not a closure: a closure is a function of its own,
        // compiled without the caller's target features, so the
        // primitives would not be inlined into it.
        macro_rules! run {
            ($rows:expr, |$p:ident, $v:ident, $q:ident, $s:ident| $call:expr) => {{
                let t = Instant::now();
                for _ in 0..reps {
                    let (o, a, q, s) = (
                        black_box(out.as_mut_ptr()),
                        black_box(acc.as_ptr()),
                        black_box($rows.as_ptr()),
                        black_box(skip.as_ptr()),
                    );
                    for pos in 0..POS {
                        for c in (0..CH).step_by(A::LANES) {
                            // SAFETY: the caller guarantees the arch; every
                            // pointer stays in `rows`, `acc`, `skip` and
                            // `out`.
                            unsafe {
                                let at = pos * CH + c;
                                let ($p, $v, $q, $s) =
                                    (o.add(at), A::load(a.add(at)), q.add(c), s.add(at));
                                $call;
                            }
                        }
                    }
                    black_box(&mut out);
                }
                t.elapsed().as_nanos() as f64 / per16
            }};
        }
        // The best of 15 alternating runs of each (the machine is shared).
        macro_rules! best {
            ($name:literal, $scalar:expr, $vector:expr) => {
                best!($name, rows, $scalar, $vector)
            };
            ($name:literal, $rows:expr, $scalar:expr, $vector:expr) => {{
                let (mut s, mut v) = (f64::INFINITY, f64::INFINITY);
                for _ in 0..15 {
                    s = s.min(run!($rows, |p, v, q, skip| $scalar(p, v, q, skip)));
                    v = v.min(run!($rows, |p, v, q, skip| $vector(p, v, q, skip)));
                }
                ($name, (s, v))
            }};
        }
        let timings = [
            best!(
                "requantize",
                |p, v, q, _| super::requantize_scalar::<A>(p, v, q, CH),
                |p, v, q, _| A::requantize(p, v, q, CH)
            ),
            best!(
                "requantize (no step)",
                plain_rows,
                |p, v, q, _| super::requantize_scalar::<A>(p, v, q, CH),
                |p, v, q, _| A::requantize(p, v, q, CH)
            ),
            best!(
                "requantize_add (no step)",
                plain_rows,
                |p, v, q, s| super::requantize_add_scalar::<A>(p, v, s, q, CH),
                |p, v, q, s| A::requantize_add(p, v, s, q, CH)
            ),
            best!(
                "requantize (real)",
                real_rows,
                |p, v, q, _| super::requantize_scalar::<A>(p, v, q, CH),
                |p, v, q, _| A::requantize(p, v, q, CH)
            ),
            best!(
                "requantize_add",
                |p, v, q, s| super::requantize_add_scalar::<A>(p, v, s, q, CH),
                |p, v, q, s| A::requantize_add(p, v, s, q, CH)
            ),
            best!(
                "average",
                |p, v, q, _| super::average_scalar::<A>(p, v, count, q, CH),
                |p, v, q, _| A::average(p, v, count, q, CH)
            ),
            best!(
                "clamp",
                |p, v, q, _| super::clamp_scalar::<A>(p, v, q, CH),
                |p, v, q, _| A::clamp(p, v, q, CH)
            ),
        ];
        for (name, (scalar, vector)) in timings {
            std::println!(
                "{arch} {name}: scalar {scalar:.2} ns, vector {vector:.2} ns per 16 outputs ({:.1}x)",
                scalar / vector
            );
        }
    }
}
