//! Where every element lives: the blocked activation layout shared by
//! every layer, and the packed-weight layout the kernels walk. The
//! emitter (unrolled offsets), the loop nest (pointer steps), the packer
//! and the tensors all compute addresses with these functions.
//!
//! **Activations** (SMaLL Fig. 2): a tensor of `C` channels and `H x W`
//! pixels is stored as `[C / CB][H][W][CB]`: channels in blocks of
//! [`CB`] (fastest), then width, height, and the block (slowest). Element
//! `(c, pixel)` lives at `block * H * W * CB + offset`, `(block, offset) =`
//! [`blocked_at`]`(c, pixel, CB)`. When `C` is not a multiple of `CB`, the
//! lanes `C..round_up(C, CB)` of the last block are zero in every pixel.
//!
//! A tensor of fewer than `CB` channels has one block, and on a target
//! that stores it narrow ([`NARROW`]: few channels on x86-64, any number
//! below `CB` on Arm) its pixels are only [`width`]`(C)` lanes apart:
//! `[1][H][W][width(C)]`, the lanes `C..width(C)` zero.
//!
//! **Packed weights**, `[bias][tiles]`:
//! - bias: [`out_padded`] values, zero past the real channels;
//! - broadcast kernels (convolution, group convolution, pointwise, FC): per
//!   output tile of `TC` channels, per input block the tile reads
//!   ([`tile_blocks`]), `[F_H][F_W][lanes][TC]` with `lanes =`
//!   [`block_lanes`]; every tile has room for [`max_tile_blocks`] blocks so
//!   tiles are a fixed stride apart;
//! - channelwise kernels (depthwise): per tile of `TC` channels
//!   `[F_H][F_W][TC]`.
//!
//! Counts are in elements of the layer's element type; the kernels read
//! zeros wherever an input channel does not feed an output channel.

use crate::{Dtype, Error, KernelKind, LayerSpec};

/// Channel block `C_b` of the blocked activation layout `[C/C_b][H][W][C_b]`.
///
/// One value for every target, so that every arch on a target (and the
/// host reference used to check a device) shares one layout and layers
/// never repack between each other. 16 is one AVX-512 register, two AVX2
/// registers and four NEON registers; it is also SMaLL's own choice for
/// AVX2 and NEON. Every arch's lane count must divide it.
pub const CB: usize = 16;

/// The most `f32`s one buffer can hold: a Rust allocation or slice is at
/// most `isize::MAX` bytes.
pub const MAX_ELEMENTS: usize = isize::MAX as usize / core::mem::size_of::<f32>();

/// How a target stores a tensor of fewer than [`CB`] channels: its
/// channels rounded up to a multiple of `unit` per pixel, not a whole
/// block, when it has at most `max` channels ([`width_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Narrow {
    /// Lanes a narrow pixel is rounded up to (a power of two dividing
    /// [`CB`]).
    pub unit: usize,
    /// The most channels a narrow tensor has; a tensor of more takes a
    /// whole block per pixel.
    pub max: usize,
}

/// Every tensor a whole block per pixel.
pub const WHOLE: Narrow = Narrow { unit: CB, max: 0 };

/// How this target stores few channels ([`Narrow`]).
///
/// - On a Cortex-M (one lane, `i8` kernels reading [`DOT_PACK`] channels
///   at once) and on AArch64 (NEON: 4 lanes) every tensor of fewer than
///   `CB` channels is narrow, in multiples of 4: a 3-channel image takes 4
///   values per pixel and VWW 0.25's 8-channel tensors 8, instead of 16.
///   The arena of a microcontroller is its scarcest resource, and the
///   padding lanes were half of those layers' work.
/// - On x86-64 tensors of at most 4 channels (images, spectrograms, a
///   few logits) take 4 values per pixel: VWW's 96x96x3 input was 590 KB
///   at 16 lanes, and writing it from NHWC took 28 µs of a 160 µs
///   inference (Xeon VM); at 4 lanes it is 147 KB. Kernels with 8 or 16
///   lanes read and write such a pixel in part (the generated code's
///   `small_core::__rt::read_px` and `write_px`); wider tensors keep whole
///   blocks, which AVX-512 kernels load and store whole.
pub const NARROW: Narrow = if cfg!(any(target_arch = "arm", target_arch = "aarch64")) {
    Narrow {
        unit: 4,
        max: CB - 1,
    }
} else if cfg!(target_arch = "x86_64") {
    Narrow { unit: 4, max: 4 }
} else {
    WHOLE
};

/// [`NARROW`] of every target where it is not [`WHOLE`], by
/// `target_arch`: what the blocking model, on the host, knows of the
/// target an arch's code compiles for. Keep it equal to `NARROW`'s
/// definition.
pub const NARROW_TARGETS: &[(&str, Narrow)] = &[
    (
        "arm",
        Narrow {
            unit: 4,
            max: CB - 1,
        },
    ),
    (
        "aarch64",
        Narrow {
            unit: 4,
            max: CB - 1,
        },
    ),
    ("x86_64", Narrow { unit: 4, max: 4 }),
];

/// [`NARROW`] on the target `target_arch`.
pub fn narrow_of(target_arch: &str) -> Narrow {
    NARROW_TARGETS
        .iter()
        .find(|(t, _)| *t == target_arch)
        .map_or(WHOLE, |&(_, n)| n)
}

/// Lanes per pixel in the channel blocks of a tensor of `c` channels on
/// this target: [`CB`], or `c` rounded up to [`NARROW`]'s unit when the
/// tensor is narrow there. A tensor with fewer than `CB` channels has one
/// block.
///
/// ```
/// use small_ir::geometry::{width, CB, NARROW};
/// assert_eq!(width(64), CB);
/// let narrow = 3 <= NARROW.max;
/// assert_eq!(width(3), if narrow { 4 } else { CB });
/// ```
#[inline]
pub const fn width(c: usize) -> usize {
    width_for(c, NARROW)
}

/// [`width`] on a target that stores few channels as `narrow` says: for
/// the blocking model, which runs on the host.
pub const fn width_for(c: usize, narrow: Narrow) -> usize {
    if c == 0 || c >= CB || c > narrow.max {
        return CB;
    }
    let w = c.div_ceil(narrow.unit) * narrow.unit;
    if w > CB { CB } else { w }
}

/// Element `(c, pixel)` of a blocked tensor whose pixels are `width`
/// lanes apart ([`width`] of its channels): its channel block, and its
/// offset within the block's plane (`pixel = y * W + x`). The element is
/// at `block * plane + offset`, `plane = H * W * width`.
///
/// ```
/// use small_ir::geometry::{blocked_at, CB};
/// assert_eq!(blocked_at(17, 2, CB), (1, 2 * CB + 1));
/// assert_eq!(blocked_at(2, 5, 4), (0, 5 * 4 + 2));
/// ```
pub const fn blocked_at(c: usize, pixel: usize, width: usize) -> (usize, usize) {
    (c / CB, pixel * width + c % CB)
}

/// Number of elements a blocked tensor of `c x h x w` occupies, or `None`
/// if it, or one channel block of it (`h x w x` [`width`]`(c)`, which
/// kernels index even when `c` is 0), would exceed [`MAX_ELEMENTS`].
///
/// Its sizes are positional, `(c, h, w)`, as generated code and `const`
/// items use them; with a shape in hand, [`Dims::checked_len`] (or
/// [`Dims::len`] for a shape checked at compile time) names them instead.
///
/// ```
/// use small_ir::{geometry::checked_blocked_len, MAX_ELEMENTS};
/// assert_eq!(checked_blocked_len(17, 2, 3), Some(2 * 2 * 3 * 16));
/// assert_eq!(checked_blocked_len(16, (1 << 60) + 1, 1), None);
/// assert_eq!(checked_blocked_len(0, MAX_ELEMENTS, 1), None);
/// ```
#[inline]
pub const fn checked_blocked_len(c: usize, h: usize, w: usize) -> Option<usize> {
    let Some(plane) = h.checked_mul(w) else {
        return None;
    };
    let Some(plane) = plane.checked_mul(width(c)) else {
        return None;
    };
    match c.div_ceil(CB).checked_mul(plane) {
        Some(n) if n <= MAX_ELEMENTS && plane <= MAX_ELEMENTS => Some(n),
        _ => None,
    }
}

/// Number of elements a blocked tensor of `c x h x w` occupies, for
/// constant shapes (a model's tensors, sized at compile time). Positional
/// `(c, h, w)`: [`Dims::len`] is the same with the sizes named.
///
/// # Panics
/// If [`checked_blocked_len`] is `None`: in a `const`, a compile error.
pub const fn blocked_len(c: usize, h: usize, w: usize) -> usize {
    match checked_blocked_len(c, h, w) {
        Some(n) => n,
        None => panic!("a blocked tensor exceeds the address space (isize::MAX bytes)"),
    }
}

/// [`checked_blocked_len`], or [`Error::TooLarge`] naming the shape.
/// Positional `(c, h, w)`: [`Dims::checked_len`] is the same with the
/// sizes named.
#[inline]
pub const fn tensor_len(c: usize, h: usize, w: usize) -> Result<usize, Error> {
    match checked_blocked_len(c, h, w) {
        Some(n) => Ok(n),
        None => Err(Error::TooLarge {
            what: "blocked tensor (channels x height x width)",
            dims: [c, h, w],
            refused: None,
        }),
    }
}

/// The shape of an activation tensor: channels, height and width, by
/// name. Every tensor constructor of `small_core` (`Blocked::zeros`,
/// `from_nhwc`, `from_nchw`, ...) takes one, so that no order of three
/// `usize`s can be mixed up: there is deliberately no positional
/// constructor, a shape is written `Dims { c, h, w }`.
///
/// ```
/// use small_ir::geometry::{CB, Dims, NARROW};
/// // 3 channels of 2 x 5 pixels: one channel block, of CB lanes per
/// // pixel, or 4 where the target stores few channels narrow.
/// let d = Dims { c: 3, h: 2, w: 5 };
/// assert_eq!(d.elements(), 3 * 2 * 5);
/// assert_eq!(d.width(), if 3 <= NARROW.max { 4 } else { CB });
/// assert_eq!(d.len(), 2 * 5 * d.width());
/// assert_eq!(Dims { c: 17, h: 2, w: 5 }.len(), 2 * 2 * 5 * CB);
/// assert!(!d.same(&Dims { c: 3, h: 5, w: 2 }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dims {
    /// Channels.
    pub c: usize,
    /// Height.
    pub h: usize,
    /// Width.
    pub w: usize,
}

impl Dims {
    /// Elements it occupies in the blocked layout ([`blocked_len`]).
    ///
    /// # Panics
    /// If that exceeds [`MAX_ELEMENTS`]: in a `const`, a compile error.
    pub const fn len(&self) -> usize {
        blocked_len(self.c, self.h, self.w)
    }
    /// [`Self::len`], or [`Error::TooLarge`] if it exceeds the address
    /// space: for dims that were not checked at compile time.
    #[inline]
    pub const fn checked_len(&self) -> Result<usize, Error> {
        tensor_len(self.c, self.h, self.w)
    }
    /// Lanes per pixel in each channel block ([`width`] of `c`).
    pub const fn width(&self) -> usize {
        width(self.c)
    }
    /// True if it holds no element.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Logical elements, `c * h * w` (`c * (h * w)`: the plane first).
    pub const fn elements(&self) -> usize {
        self.c * (self.h * self.w)
    }
    /// True if both have the same shape (`==`, in a `const`).
    pub const fn same(&self, o: &Dims) -> bool {
        self.c == o.c && self.h == o.h && self.w == o.w
    }
}

/// The output rows and columns the loop nest runs a layer over, for an
/// output of `out = (height, width)` pixels: a 1x1 stride-1 layer maps
/// each pixel to itself, and a channel block's plane is contiguous, so it
/// runs as one row of `height * width` pixels (full tiles instead of a
/// partial one per row); any other layer row by row. The nest
/// (`small_core`'s `Problem`) and the cost model both read it here.
///
/// ```
/// use small_ir::geometry::run_rows;
/// use small_ir::LayerSpec;
/// assert_eq!(run_rows(&LayerSpec::new(1, 1, 64, 64, 1), (25, 5)), (1, 125));
/// assert_eq!(run_rows(&LayerSpec::new(3, 3, 64, 64, 1), (25, 5)), (25, 5));
/// ```
pub const fn run_rows(spec: &LayerSpec, out: (usize, usize)) -> (usize, usize) {
    if spec.pointwise() {
        (1, out.0 * out.1)
    } else {
        out
    }
}

/// Output channels rounded up to whole channel blocks: the bias's length
/// and the channels the output tiles cover.
#[inline]
pub const fn out_padded(spec: &LayerSpec) -> usize {
    spec.out_channels().div_ceil(CB) * CB
}

/// Output-channel tiles of `tc` channels the loop nest computes: the
/// tiles that hold a channel, `ceil(C / tc)`. The padding lanes past them
/// ([`uncovered_lanes`]) are not computed: an `f32` layer writes zeros
/// there (the layout keeps them zero), an `i8` layer leaves them as they
/// are (an `i8` tensor's padding lanes are never read for a value: the
/// packed weights of those lanes are zero, and every other kernel maps a
/// padding lane to a padding lane). VWW 0.25's 8-channel layers in `f32`
/// on AVX2 (8-lane tiles, 16-lane pixels): half the tiles.
pub const fn computed_tiles(spec: &LayerSpec, tc: usize) -> usize {
    spec.out_channels().div_ceil(tc)
}

/// The lanes of the last channel block of an output of `spec` that its
/// [`computed_tiles`] of `tc` channels do not reach, as `start..end`
/// (empty for `i8`, whose padding lanes hold no value, and when the tiles
/// reach the end of the pixel): an `f32` layer writes zeros there.
///
/// ```
/// use small_ir::geometry::{uncovered_lanes, width, CB};
/// use small_ir::{Dtype, LayerSpec};
/// // A depthwise layer of 8 channels in 8-lane tiles: one tile, which
/// // leaves the pixel's lanes from 8 on (none on a target whose pixels
/// // of 8 channels hold 8 lanes).
/// let dw = LayerSpec::new(3, 3, 1, 1, 8);
/// let lanes = uncovered_lanes(&dw, 8);
/// assert_eq!(lanes.len(), width(8) - 8);
/// assert!(lanes.is_empty() || lanes == (8..CB));
/// assert!(uncovered_lanes(&dw, CB).is_empty());
/// // 40 channels: 5 tiles of 8 reach lane 8 of the third block.
/// let conv = LayerSpec::new(1, 1, 16, 40, 1);
/// assert_eq!(uncovered_lanes(&conv, 8), 8..CB);
/// assert!(uncovered_lanes(&LayerSpec { dtype: Dtype::I8, ..dw }, 8).is_empty());
/// ```
pub const fn uncovered_lanes(spec: &LayerSpec, tc: usize) -> core::ops::Range<usize> {
    let c = spec.out_channels();
    if matches!(spec.dtype, Dtype::I8) || c.is_multiple_of(CB) {
        return 0..0;
    }
    // Lanes of the last block the tiles reach (at least `c % CB`).
    let reached = computed_tiles(spec, tc) * tc - c / CB * CB;
    let end = width(c);
    if reached >= end { 0..0 } else { reached..end }
}

/// Input channel blocks `[first, end)` that output tile `ot` (of `tc`
/// channels) reads in a broadcast kernel.
pub const fn tile_blocks(spec: &LayerSpec, tc: usize, ot: usize) -> (usize, usize) {
    let blocks = spec.in_channels().div_ceil(CB);
    if spec.g == 1 {
        return (0, blocks);
    }
    let first_out = ot * tc;
    if first_out >= spec.out_channels() {
        return (0, 0);
    }
    let last_out = min(first_out + tc, spec.out_channels()) - 1;
    let first_in = first_out / spec.k * spec.fc;
    let end_in = (last_out / spec.k + 1) * spec.fc;
    (first_in / CB, end_in.div_ceil(CB))
}

const fn min(a: usize, b: usize) -> usize {
    if a < b { a } else { b }
}

/// The largest number of input blocks any output tile reads (1 for a
/// channelwise layer).
pub const fn max_tile_blocks(spec: &LayerSpec, tc: usize) -> usize {
    if matches!(spec.kind(), KernelKind::Channelwise) {
        return 1;
    }
    let mut ot = 0;
    let mut most = 0;
    while ot * tc < out_padded(spec) {
        let (a, b) = tile_blocks(spec, tc, ot);
        if b - a > most {
            most = b - a;
        }
        ot += 1;
    }
    most
}

/// Lanes of a packed input block of a broadcast tile: `CB`, or the input
/// channels of a layer with fewer than one block, whose only block is
/// packed without the padding lanes its kernel never reads (a 1-channel
/// stem would otherwise store 16 times its weights).
///
/// An `i8` block's lanes are a multiple of [`DOT_PACK`]: integer dot
/// products read that many consecutive input channels at once (the
/// padding lanes' weights are zero).
pub const fn block_lanes(spec: &LayerSpec) -> usize {
    let lanes = if spec.in_channels() < CB {
        spec.in_channels()
    } else {
        CB
    };
    match spec.dtype {
        Dtype::F32 => lanes,
        Dtype::I8 => lanes.div_ceil(DOT_PACK) * DOT_PACK,
    }
}

/// The most consecutive input channels an arch's integer dot product
/// sums per lane (AVX-512 VNNI's `vpdpbusd`, NEON's `sdot`: 4): `i8`
/// blocks are packed in whole groups of it. An arch's own `DOT` divides it.
pub const DOT_PACK: usize = 4;

/// Packed weights of one filter tap of one tile: `lanes x TC` for a
/// broadcast kernel (one `TC`-vector per input lane), `TC` for a
/// channelwise one.
pub const fn tap_len(spec: &LayerSpec, tc: usize) -> usize {
    match spec.kind() {
        KernelKind::Broadcast => block_lanes(spec) * tc,
        KernelKind::Channelwise => tc,
    }
}

/// Packed weights of one filter row (`F_W` taps) of one input block.
pub const fn row_len(spec: &LayerSpec, tc: usize) -> usize {
    spec.fw * tap_len(spec, tc)
}

/// Packed weights of one input block of one tile: `F_H x F_W` taps.
pub const fn block_len(spec: &LayerSpec, tc: usize) -> usize {
    spec.fh * row_len(spec, tc)
}

/// Packed weights of one tile: room for [`max_tile_blocks`] blocks.
pub const fn tile_len(spec: &LayerSpec, tc: usize) -> usize {
    max_tile_blocks(spec, tc) * block_len(spec, tc)
}

/// Length of the packed buffer for tiles of `tc` channels (0 without
/// weights): the bias, then every tile.
pub const fn packed_len(spec: &LayerSpec, tc: usize) -> usize {
    if !spec.has_weights() {
        return 0;
    }
    out_padded(spec) + out_padded(spec) / tc * tile_len(spec, tc)
}

/// Offset of the weight of filter tap `tap` (`x * F_W + y`, or `y` from
/// the start of a row), input lane `lane` and tile channel `t` from the
/// start of its block (a channelwise tile has one block and one lane).
pub const fn in_block_at(spec: &LayerSpec, tc: usize, tap: usize, lane: usize, t: usize) -> usize {
    in_block_at_dot(spec, tc, 1, tap, lane, t)
}

/// [`in_block_at`] for an integer kernel that sums `dot` consecutive input
/// lanes per output lane: within a tap, groups of `dot` lanes, each
/// `[TC][dot]`, so one vector load holds every lane's `dot` weights.
/// `dot = 1` is [`in_block_at`]'s `[lanes][TC]`.
///
/// ```
/// use small_ir::{geometry::in_block_at_dot, Dtype, LayerSpec};
/// let s = LayerSpec { dtype: Dtype::I8, ..LayerSpec::new(1, 1, 16, 16, 1) };
/// // lane 5 of channel 2: group 1 (lanes 4..8), channel 2, lane 1 of the group
/// assert_eq!(in_block_at_dot(&s, 16, 4, 0, 5, 2), 64 + 2 * 4 + 1);
/// ```
pub const fn in_block_at_dot(
    spec: &LayerSpec,
    tc: usize,
    dot: usize,
    tap: usize,
    lane: usize,
    t: usize,
) -> usize {
    tap * tap_len(spec, tc) + (lane / dot) * tc * dot + t * dot + lane % dot
}

/// Where weight `(tap, lane, t)` of input block `b` of output tile `ot`
/// lives in an `i8` layer's tiles ([`tiles_len`]), for an arch that sums
/// `dot` lanes at once ([`in_block_at_dot`]).
#[allow(clippy::too_many_arguments)]
pub const fn tiles_at(
    spec: &LayerSpec,
    tc: usize,
    dot: usize,
    ot: usize,
    b: usize,
    tap: usize,
    lane: usize,
    t: usize,
) -> usize {
    ot * tile_len(spec, tc) + b * block_len(spec, tc) + in_block_at_dot(spec, tc, dot, tap, lane, t)
}

/// Where weight `(tap, t)` of a layer whose kernel folds filter columns
/// into dot-product groups ([`crate::blocking::int8_folds_columns`]: one
/// input channel) lives from the start of its tile: per filter row `x`
/// (`tap = x * F_W + y`), groups of `dot` taps, each `[TC][dot]`, so one
/// vector load holds every lane's weights of `dot` neighbouring columns.
/// Within [`row_len`], which leaves room for `F_W` groups of
/// [`DOT_PACK`] lanes; the taps past `F_W` in the last group stay zero.
///
/// ```
/// use small_ir::{geometry::folded_at, Dtype, LayerSpec};
/// let s = LayerSpec { dtype: Dtype::I8, ..LayerSpec::new(10, 4, 1, 64, 1) };
/// // row 1 (4 taps x 4 lanes x 16 channels on), tap y = 2 of channel 3
/// assert_eq!(folded_at(&s, 16, 4, 4 + 2, 3), 256 + 3 * 4 + 2);
/// // with pairs: the second group of the row
/// assert_eq!(folded_at(&s, 16, 2, 3, 3), 32 + 3 * 2 + 1);
/// ```
pub const fn folded_at(spec: &LayerSpec, tc: usize, dot: usize, tap: usize, t: usize) -> usize {
    let (x, y) = (tap / spec.fw, tap % spec.fw);
    x * row_len(spec, tc) + (y / dot) * tc * dot + t * dot + y % dot
}

/// Elements of every tile's weights (0 without weights): [`packed_len`]
/// without the bias.
pub const fn tiles_len(spec: &LayerSpec, tc: usize) -> usize {
    if !spec.has_weights() {
        return 0;
    }
    out_padded(spec) / tc * tile_len(spec, tc)
}

/// Accumulator-type values of a layer's per-channel data: the bias
/// ([`out_padded`]) for `f32` with weights, 0 without; for `i8` the rows
/// of [`crate::quant::row`], each [`out_padded`] long, with one border
/// correction per filter tap for a broadcast layer with weights.
pub const fn acc_len(spec: &LayerSpec) -> usize {
    match spec.dtype {
        Dtype::F32 if spec.has_weights() => out_padded(spec),
        Dtype::F32 => 0,
        Dtype::I8 => acc_rows(spec) * out_padded(spec),
    }
}

/// Rows of an `i8` layer's per-channel data ([`crate::quant::row`]).
#[inline]
pub const fn acc_rows(spec: &LayerSpec) -> usize {
    if spec.has_weights() && matches!(spec.kind(), KernelKind::Broadcast) {
        crate::quant::row::CORRECTION + spec.fh * spec.fw
    } else {
        crate::quant::row::CORRECTION
    }
}

/// Where packed weight `(tap, lane, t)` (see [`in_block_at`]) of input
/// block `b` of output tile `ot` lives in the packed buffer. The packer
/// writes there and the kernels read there.
pub const fn packed_at(
    spec: &LayerSpec,
    tc: usize,
    ot: usize,
    b: usize,
    tap: usize,
    lane: usize,
    t: usize,
) -> usize {
    out_padded(spec)
        + ot * tile_len(spec, tc)
        + b * block_len(spec, tc)
        + in_block_at(spec, tc, tap, lane, t)
}

/// [`packed_len`] with every size checked: [`Error::TooLarge`] if a count
/// exceeds [`MAX_ELEMENTS`], [`Error::Unsupported`] for tiles of 0
/// channels. The other `const fn`s here assume a valid layer (they size a
/// declared layer's constants, where an overflow is a compile error); a
/// [`LayerSpec`] built at run time goes through this first.
///
/// Its work is linear in the output-channel tiles of grouped layers, which
/// every caller has checked against a buffer that exists (the weights, or
/// an output tensor of that many channels).
#[inline]
pub const fn checked_packed_len(spec: &LayerSpec, tc: usize) -> Result<usize, Error> {
    if !spec.has_weights() {
        return Ok(0);
    }
    if tc == 0 {
        return Err(Error::Unsupported {
            what: "channel tile",
            detail: "must hold at least 1 channel",
        });
    }
    let what = "packed weights (output channels x filter taps x input lanes per tile)";
    let (inp, out) = match spec.checked_channels() {
        Ok(c) => c,
        Err(e) => return Err(e),
    };
    let out_padded = match crate::error::checked_elements(what, out.div_ceil(CB), CB, 1) {
        Ok(n) => n,
        Err(e) => return Err(e),
    };
    if tc > out_padded {
        // No whole tile: the bias alone (`packed_len` with 0 tiles).
        return Ok(out_padded);
    }
    let taps = spec.fh.saturating_mul(spec.fw);
    // An upper bound of the weights of all tiles, `out_padded / tc` tiles
    // of `taps x lanes x tc` per input block a tile reads: every block
    // (one group), or those of the groups `tc` channels can touch.
    let lanes = match spec.kind() {
        KernelKind::Channelwise => 1,
        KernelKind::Broadcast => {
            let blocks = inp.div_ceil(CB);
            let per_tile = tc
                .div_ceil(if spec.k == 0 { 1 } else { spec.k })
                .saturating_add(1)
                .saturating_mul(spec.fc)
                .div_ceil(CB)
                .saturating_add(1);
            let read = if spec.g == 1 || blocks < per_tile {
                blocks
            } else {
                per_tile
            };
            read.saturating_mul(block_lanes(spec))
        }
    };
    let all = match crate::error::checked_elements(what, out_padded, taps, lanes) {
        Ok(n) => n,
        Err(e) => return Err(e),
    };
    if all.saturating_add(out_padded) > MAX_ELEMENTS {
        return Err(Error::TooLarge {
            what,
            dims: [out_padded, taps, lanes],
            refused: None,
        });
    }
    // Exact, now that no product can overflow. A tile of no weights needs
    // no walk over the tiles.
    let tile = match spec.kind() {
        KernelKind::Channelwise => taps * tc,
        KernelKind::Broadcast if all == 0 => 0,
        KernelKind::Broadcast => tile_len(spec, tc),
    };
    Ok(out_padded + out_padded / tc * tile)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Padding;

    fn spec(fh: usize, fw: usize, fc: usize, k: usize, g: usize) -> LayerSpec {
        LayerSpec {
            padding: Padding::Same,
            ..LayerSpec::new(fh, fw, fc, k, g)
        }
    }

    #[test]
    fn checked_packed_len_is_packed_len_for_valid_layers() {
        for g in [1, 2, 3, 9, 16, 17, 40] {
            for (fc, k) in [(1, 1), (1, 2), (2, 3), (3, 16), (16, 8), (17, 33)] {
                for (fh, fw) in [(1, 1), (3, 3), (10, 4)] {
                    let s = spec(fh, fw, fc, k, g);
                    for tc in [1, 4, 8, 16, 32, 48, 64] {
                        assert_eq!(
                            checked_packed_len(&s, tc),
                            Ok(packed_len(&s, tc)),
                            "{s:?} tc {tc}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn packed_at_walks_the_buffer_in_order() {
        // Every element of every tile, in the order the packer writes
        // them, is the next index: the layout has no holes and no overlaps.
        for s in [
            spec(3, 3, 16, 32, 1),
            spec(1, 1, 3, 8, 1),
            spec(3, 3, 1, 1, 32),
            spec(2, 2, 4, 4, 8),
        ] {
            let tc = 16;
            let mut next = out_padded(&s);
            for ot in 0..out_padded(&s) / tc {
                for b in 0..max_tile_blocks(&s, tc) {
                    for tap in 0..s.fh * s.fw {
                        for lane in 0..tap_len(&s, tc) / tc {
                            for t in 0..tc {
                                assert_eq!(packed_at(&s, tc, ot, b, tap, lane, t), next, "{s:?}");
                                next += 1;
                            }
                        }
                    }
                }
            }
            assert_eq!(next, packed_len(&s, tc), "{s:?}");
        }
    }
}
