//! The loop nest of SMaLL's Algorithm 1, shared by every generated layer.
//!
//! `#[layer]` generates, per arch, a [`Kernel`]: two fully unrolled tile
//! functions (Algorithm 2) and the layer's compile-time shape as consts.
//! [`run`] walks the output in tiles and calls them. It is
//! `#[inline(always)]` and generic, so each layer gets its own copy,
//! compiled inside the arch's `#[target_feature]` function with every
//! size that is known at compile time folded in.
//!
//! Loop order (outermost first): output channel tiles (`G_b x K_b`
//! channels), output rows, output column tiles of `O_wb`; the reduction
//! over input blocks, filter rows, filter columns and input lanes happens
//! inside the kernel with the tile in registers.
//!
//! Borders: the rows of the filter that fall outside the input are cut
//! from the kernel's row loop (`x0..x1`). A column tile whose window
//! leaves the input, or that is narrower than `O_wb` (the right edge),
//! goes to the guarded [`Kernel::edge`], which skips each tap outside
//! `lo..hi` and each output column past `w`; every other tile takes the
//! unguarded [`Kernel::full`].

use crate::layout::tensor_len;
use crate::pack::{checked_packed_len, out_padded, tile_blocks, tile_len};
use crate::{Blocked, CB, Error, KernelKind, LayerSpec, check_dim, check_len};

/// The operands of one kernel call.
///
/// Input pointers are computed with wrapping arithmetic and may point
/// outside the input for border tiles; a kernel only dereferences the
/// taps that the bounds below declare valid.
#[derive(Debug, Clone, Copy)]
pub struct Tile {
    /// Input at (first input block, row of filter row 0, column of filter column 0).
    pub inp: *const f32,
    /// Elements between input rows.
    pub in_row: usize,
    /// Elements between input channel blocks.
    pub in_plane: usize,
    /// Full input blocks to reduce over (broadcast kernels).
    pub in_blocks: usize,
    /// After the full blocks, one more block with `Kernel::TAIL` lanes.
    pub tail: bool,
    /// Valid filter rows `x0..x1`.
    pub x0: usize,
    /// End of the valid filter rows.
    pub x1: usize,
    /// First valid window column (edge tiles).
    pub lo: usize,
    /// End of the valid window columns (edge tiles).
    pub hi: usize,
    /// Output columns to compute (edge tiles), at most `O_WB`.
    pub w: usize,
    /// This tile's packed weights.
    pub wts: *const f32,
    /// This tile's bias (`TC` values).
    pub bias: *const f32,
    /// Output at (first channel of the tile, row, first column).
    pub out: *mut f32,
    /// Elements between output channel blocks.
    pub out_plane: usize,
    /// Residual input at the same position as `out` (residual layers only).
    pub res: *const f32,
    /// Start from the partial sums in `out` instead of the bias (a later
    /// chunk of input blocks; broadcast kernels).
    pub partial_in: bool,
    /// Store the raw sums, without the epilogue: more chunks follow.
    pub partial_out: bool,
}

/// A generated micro-kernel for one layer on one arch.
///
/// # Safety
/// Implementations must only access memory that the [`Tile`] contract
/// declares valid: the input taps inside `x0..x1` and (in `edge`) `lo..hi`,
/// `TC` channels of weights, bias and output for `O_WB` (in `edge`: `w`)
/// columns.
pub unsafe trait Kernel {
    /// The layer this kernel was generated for. The loop nest reads its
    /// shape from here rather than from the [`Problem`], so every size
    /// derived from it (strides, filter, packed tile lengths, channel
    /// tiles) is a constant in each layer's copy of the nest.
    const SPEC: LayerSpec;
    /// Output columns per tile `O_wb`.
    const O_WB: usize;
    /// Channels per tile (`G_b * K_b`).
    const TC: usize;
    /// Lanes of the last input block when it is partial (0 if none).
    const TAIL: usize;
    /// An interior tile: `O_WB` columns, every tap inside the input.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn full(t: &Tile);
    /// A border or right-edge tile: guarded taps and columns.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn edge(t: &Tile);
    /// True if [`Kernel::narrow`] is specialised (one-column outputs).
    const NARROW: bool = false;
    /// A tile of an output one column wide whose window starts inside the
    /// input (fully connected layers, global pooling): same result as
    /// `edge` up to the order of the sum.
    ///
    /// # Safety
    /// As [`Kernel::full`], for a tile with `w == 1` and `lo == 0 < hi`.
    unsafe fn narrow(t: &Tile) {
        unsafe { Self::edge(t) }
    }
}

/// A checked call of a layer: shapes validated, buffers borrowed.
pub struct Problem<'a> {
    /// Output channels per tile, to count the units of work.
    tc: usize,
    spec: &'a LayerSpec,
    inp: &'a [f32],
    ih: usize,
    iw: usize,
    /// The output, written through by every part of the call (disjoint
    /// rows); borrowed mutably for `'a`.
    out: *mut f32,
    out_life: core::marker::PhantomData<&'a mut [f32]>,
    oh: usize,
    ow: usize,
    pad_top: usize,
    pad_left: usize,
    packed: &'a [f32],
    res: Option<&'a [f32]>,
    /// The residual is `out` itself (see [`Problem::with_residual_in_place`]).
    in_place: bool,
    /// An elementwise layer without weights (ReLU): every channel block's
    /// plane, one after another, is one row of one block.
    elementwise: bool,
}

// SAFETY: a Problem is shared by the threads of one layer call, and each
// part writes only the output rows of its own units (see `run`); the
// input, weights and residual are only read.
unsafe impl Sync for Problem<'_> {}

/// Multiply-accumulates below which a part is not worth a thread. The
/// pool's fork and join cost 0.26 µs (median, 2 threads, Zen 5 VM,
/// `small-bench --threads 2`); a part of 40 k MACs takes 0.2-0.4 µs at
/// 100-200 GFLOP/s, so a split call is never slower than one thread (the
/// bench's speed-up column: 1.00x at worst) and layers from about 80 k MACs
/// up gain (the AD autoencoder's 640-wide layers: 1.45x on the network).
pub const MIN_PART_MACS: usize = 40_000;

impl<'a> Problem<'a> {
    /// Independent units of work: output rows of each output-channel tile,
    /// or output rows when the channel tiles are the innermost loop.
    /// (Only threads split calls into units.)
    #[cfg(feature = "std")]
    fn units(&self) -> usize {
        if self.channels_inner() {
            self.oh
        } else if self.oh == 1 {
            // A one-row problem (a flattened pointwise layer) also splits
            // its row; its column tiles are at most its columns ([`run`]).
            self.channel_tiles() * self.ow
        } else {
            self.channel_tiles() * self.oh
        }
    }

    /// Output-channel tiles of `tc` channels: of one block if elementwise.
    fn channel_tiles(&self) -> usize {
        if self.elementwise {
            CB / self.tc
        } else {
            out_padded(self.spec) / self.tc
        }
    }

    /// True if [`run`] loops over channel tiles innermost: channelwise
    /// kernels with more than one channel tile and more than one output
    /// row. With one channel tile there is nothing to share (and depthwise
    /// 48x48x16 measured 10 % slower in that loop). A one-row problem (a 1x1
    /// stride-1 layer such as ReLU, flattened) streams each channel
    /// block's plane in order instead, which its loads prefer (ReLU
    /// 25x5x512 ran 28 % slower channel-innermost), and splits over its
    /// channel tiles for threads.
    fn channels_inner(&self) -> bool {
        self.spec.kind() == KernelKind::Channelwise && self.oh > 1 && self.channel_tiles() > 1
    }

    /// The residual's pointer, null without one. In place it derives from
    /// the output's own pointer, so reads and writes share one provenance.
    fn residual(&self) -> *const f32 {
        match (self.in_place, self.res) {
            (true, _) => self.out as *const f32,
            (false, Some(r)) => r.as_ptr(),
            (false, None) => core::ptr::null(),
        }
    }

    /// Output row `j`'s first input row (may be negative: padding) and its
    /// valid filter rows `x0..x1`.
    #[inline(always)]
    fn rows_of<K: Kernel>(&self, j: usize) -> (isize, usize, usize) {
        let r0 = (j * K::SPEC.sh) as isize - self.pad_top as isize;
        let x0 = (-r0).clamp(0, K::SPEC.fh as isize) as usize;
        let x1 = (self.ih as isize - r0).clamp(0, K::SPEC.fh as isize) as usize;
        (r0, x0, x1)
    }

    /// The column tile at output column `l`: its first window column
    /// (may be negative), its valid window columns `lo..hi` of `span`, and
    /// its width.
    ///
    /// A channelwise tile narrower than `O_wb` (a row narrower than the
    /// tile: depthwise 25x5 with 8-column tiles) also ends `hi` at its last
    /// stored column's window, so its edge kernel skips the columns that
    /// feed only outputs it does not store.
    #[inline(always)]
    fn columns_of<K: Kernel>(&self, l: usize, span: usize) -> (isize, usize, usize, usize) {
        let c0 = (l * K::SPEC.sw) as isize - self.pad_left as isize;
        let lo = (-c0).clamp(0, span as isize) as usize;
        let hi = (self.iw as isize - c0).clamp(0, span as isize) as usize;
        let w = K::O_WB.min(self.ow - l);
        let hi = match K::SPEC.kind() {
            KernelKind::Channelwise => hi.min((w - 1) * K::SPEC.sw + K::SPEC.fw),
            KernelKind::Broadcast => hi,
        };
        (c0, lo, hi, w)
    }

    /// True if `t` takes [`Kernel::narrow`]: a one-column output whose
    /// window starts inside the input.
    #[inline(always)]
    fn narrow_tile<K: Kernel>(&self, t: &Tile) -> bool {
        K::NARROW && self.ow == 1 && t.lo == 0 && t.hi > 0
    }

    /// Multiply-accumulates of the call (saturating: only compared with
    /// [`MIN_PART_MACS`] to choose the thread count).
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    fn macs(&self) -> usize {
        let channels = if self.elementwise {
            CB
        } else {
            self.spec.out_channels()
        };
        [self.ow, channels, self.spec.fh, self.spec.fw, self.spec.fc]
            .iter()
            .fold(self.oh, |m, &f| m.saturating_mul(f))
    }

    /// Checks `x`, `y` and the packed weights against the layer and `tc`.
    pub fn new<X: AsRef<[f32]>, Y: AsRef<[f32]> + AsMut<[f32]>>(
        spec: &'a LayerSpec,
        tc: usize,
        x: &'a Blocked<X>,
        y: &'a mut Blocked<Y>,
        packed: &'a [f32],
    ) -> Result<Self, Error> {
        Self::with_residual::<X, Y, X>(spec, tc, x, None, y, packed)
    }

    /// As [`Problem::new`], plus a residual tensor `skip` of the output's
    /// shape, added before the activation.
    pub fn with_residual<X: AsRef<[f32]>, Y: AsRef<[f32]> + AsMut<[f32]>, S: AsRef<[f32]>>(
        spec: &'a LayerSpec,
        tc: usize,
        x: &'a Blocked<X>,
        skip: Option<&'a Blocked<S>>,
        y: &'a mut Blocked<Y>,
        packed: &'a [f32],
    ) -> Result<Self, Error> {
        if tc == 0 {
            return Err(Error::Unsupported {
                what: "channel tile",
                detail: "must hold at least 1 channel",
            });
        }
        let (in_channels, out_channels) = spec.checked_channels()?;
        check_dim("input channels", in_channels, x.c())?;
        check_dim("output channels", out_channels, y.c())?;
        let (dh, dw) = spec.output_dims(x.h(), x.w())?;
        check_dim("output height", dh.out, y.h())?;
        check_dim("output width", dw.out, y.w())?;
        check_len(
            "packed weights",
            checked_packed_len(spec, tc)?,
            packed.len(),
        )?;
        if let Some(s) = skip {
            check_dim("residual channels", y.c(), s.c())?;
            check_dim("residual height", y.h(), s.h())?;
            check_dim("residual width", y.w(), s.w())?;
        }
        // Every `Blocked` constructor checked its shape's size and its
        // buffer's length, but a buffer type's `AsRef` may hand out another
        // slice later: the kernels index by the shape, so check the very
        // slices they will read and write.
        let (inp, res) = (x.as_slice(), skip.map(|s| s.as_slice()));
        check_len("input tensor", tensor_len(x.c(), x.h(), x.w())?, inp.len())?;
        let y_len = tensor_len(y.c(), y.h(), y.w())?;
        if let Some(r) = res {
            check_len("residual tensor", y_len, r.len())?;
        }
        // A 1x1 stride-1 layer maps each pixel to itself, and a channel
        // block's plane is contiguous: one row of H*W pixels is the same
        // problem with full tiles instead of a partial one per row.
        // Without weights (ReLU) every block is alike, and the blocks'
        // planes are contiguous too: one row of one block holds them all.
        let pointwise = spec.fh == 1 && spec.fw == 1 && spec.sh == 1 && spec.sw == 1;
        let elementwise =
            pointwise && spec.kind() == KernelKind::Channelwise && !spec.has_weights();
        let (ih, iw, oh, ow) = if elementwise {
            let n = x.c().div_ceil(CB) * x.h() * x.w();
            (1, n, 1, n)
        } else if pointwise {
            (1, x.h() * x.w(), 1, dh.out * dw.out)
        } else {
            (x.h(), x.w(), dh.out, dw.out)
        };
        let out = y.as_mut_slice();
        check_len("output tensor", y_len, out.len())?;
        Ok(Problem {
            tc,
            spec,
            inp,
            ih,
            iw,
            oh,
            ow,
            out: out.as_mut_ptr(),
            out_life: core::marker::PhantomData,
            pad_top: dh.before,
            pad_left: dw.before,
            packed,
            res,
            in_place: false,
            elementwise,
        })
    }

    /// As [`Problem::with_residual`] with the residual already in `y`:
    /// `y = activation(layer(x) + y)`. Each output element reads its own
    /// residual before it is written, so the output can replace it (a
    /// residual's buffer reused in place, as DORY plans ResNet's adds).
    pub fn with_residual_in_place<X: AsRef<[f32]>, Y: AsRef<[f32]> + AsMut<[f32]>>(
        spec: &'a LayerSpec,
        tc: usize,
        x: &'a Blocked<X>,
        y: &'a mut Blocked<Y>,
        packed: &'a [f32],
    ) -> Result<Self, Error> {
        let mut p = Self::new(spec, tc, x, y, packed)?;
        p.in_place = true;
        Ok(p)
    }
}

// ANCHOR: l1_weights
/// Bytes of one output-channel tile's weights that a pass over the whole
/// output may stream: a larger reduction is split into chunks of input
/// blocks (SMaLL's `F_Cb` blocking, MEMA's tiling of the reduction) whose
/// weights stay in L1 while every pixel tile uses them; the partial sums
/// go through the output. Half of a 48 KiB L1 (Zen 4/5; 32 KiB on older
/// cores still holds it with the input rows and output tile).
pub const L1_WEIGHT_BYTES: usize = 24 * 1024;
// ANCHOR_END: l1_weights

/// True if `t` takes [`Kernel::full`]: `O_WB` columns whose windows (of
/// `span` columns in all) lie inside the input.
#[inline(always)]
fn full_tile<K: Kernel>(t: &Tile, span: usize) -> bool {
    t.lo == 0 && t.hi == span && t.w == K::O_WB
}

/// Input blocks per chunk of a reduction whose blocks hold `block_len`
/// weights each: as many as fit [`L1_WEIGHT_BYTES`], at least one.
const fn l1_chunk(block_len: usize) -> usize {
    let n = L1_WEIGHT_BYTES / (block_len * 4);
    if n == 0 { 1 } else { n }
}

/// Runs `f(part, parts)` for the parts of a layer call: on the pool's
/// threads with `std` (`parts = min(threads, p_max)`, `p_max` from the
/// independent units and [`MIN_PART_MACS`]), else on this thread.
pub fn execute(p: &Problem, f: &(dyn Fn(usize, usize) + Sync)) {
    #[cfg(feature = "std")]
    {
        // A call too small for two parts runs here without asking the pool.
        let most = p.macs() / MIN_PART_MACS;
        if most < 2 {
            return f(0, 1);
        }
        let pool = crate::threads::pool();
        // `width` is 1 while the pool runs solo after a late join.
        let parts = pool.width().min(p.units()).min(most);
        if parts < 2 {
            return f(0, 1);
        }
        pool.run(parts, &|k| f(k, parts));
    }
    #[cfg(not(feature = "std"))]
    {
        let _ = p;
        f(0, 1);
    }
}

/// Runs part `part` of `parts` of a layer with kernel `K` (Algorithm 1):
/// the units (output rows of each output-channel tile) are split into
/// `parts` contiguous ranges. A unit's outputs do not depend on the split,
/// so every thread count gives the same bits.
///
/// # Safety
/// `K` must have been generated for `p`'s layer (same spec and `TC`), the
/// CPU must support the arch `K` was generated for, and the calls for one
/// `p` must use distinct `part`s of the same `parts`.
#[inline(always)]
pub unsafe fn run<K: Kernel>(p: &Problem, part: usize, parts: usize) {
    if p.channels_inner() {
        // SAFETY: forwarded from the caller.
        return unsafe { run_channelwise::<K>(p, part, parts) };
    }
    // Units: (output-channel tile, row), or for a one-row problem
    // (output-channel tile, column tile), so a flattened pointwise layer
    // with one channel tile still splits over threads.
    // `Problem::channel_tiles`, with `K`'s constants.
    let tiles = if p.elementwise {
        const { CB / K::TC }
    } else {
        const { out_padded(&K::SPEC) / K::TC }
    };
    let row_tiles = p.ow.div_ceil(K::O_WB).max(1);
    let per_tile = if p.oh == 1 { row_tiles } else { p.oh.max(1) };
    let units = tiles * per_tile;
    // One part (most calls of small layers) owns everything: no divisions.
    let (u0, u1, ot0, ot1) = if parts == 1 {
        (0, units, 0, tiles)
    } else {
        let (u0, u1) = (units * part / parts, units * (part + 1) / parts);
        (u0, u1, u0 / per_tile, u1.div_ceil(per_tile))
    };
    let in_plane = p.ih * p.iw * CB;
    let out_plane = p.oh * p.ow * CB;
    let span = (K::O_WB - 1) * K::SPEC.sw + K::SPEC.fw;
    let in_blocks = const { K::SPEC.in_channels().div_ceil(CB) };
    let (bias, wts) = p
        .packed
        .split_at(p.packed.len().min(const { out_padded(&K::SPEC) }));
    let inp = p.inp.as_ptr();
    let out = p.out;
    let res = p.residual();
    for ot in ot0..ot1 {
        let mine =
            (u0.max(ot * per_tile) - ot * per_tile)..(u1.min((ot + 1) * per_tile) - ot * per_tile);
        // This part's rows, and its column tiles of each row.
        let (rows, cols) = if p.oh == 1 {
            (0..1, mine)
        } else {
            (mine, 0..row_tiles)
        };
        let whole_row = cols.start == 0 && cols.end == row_tiles;
        let (ch, wts) = (
            ot * K::TC,
            wts.as_ptr()
                .wrapping_add(ot * const { tile_len(&K::SPEC, K::TC) }),
        );
        let (first, end, lane) = match K::SPEC.kind() {
            KernelKind::Broadcast => {
                // From the Problem's spec, not `K::SPEC`: a reduction length
                // known at compile time changed how the pointwise kernel's
                // block loop was scheduled (DS-CNN's 64->64 layers 3 %
                // slower, Zen 4).
                let (a, b) = tile_blocks(p.spec, K::TC, ot);
                (a, b, 0)
            }
            KernelKind::Channelwise => (ch / CB, ch / CB + 1, ch % CB),
        };
        let tail = K::TAIL != 0 && end == in_blocks && end > first;
        let full_blocks = end - first - tail as usize;
        // Chunks of input blocks whose weights fit L1. Not in place (the
        // partial sums would overwrite the residual) nor for the narrow
        // kernel (its partial-sum columns are folded at every store).
        let block_len = const { crate::pack::block_len(&K::SPEC, K::TC) };
        let chunkable = K::SPEC.kind() == KernelKind::Broadcast
            && K::SPEC.reduction == crate::Reduction::Fma
            && !p.in_place
            && !(K::NARROW && p.ow == 1);
        let (chunk, chunks) = if chunkable {
            let chunk = l1_chunk(block_len);
            (chunk, full_blocks.div_ceil(chunk).max(1))
        } else {
            (full_blocks.max(1), 1)
        };
        let mut t = Tile {
            inp,
            in_row: p.iw * CB,
            in_plane,
            in_blocks: full_blocks,
            tail,
            x0: 0,
            x1: 0,
            lo: 0,
            hi: 0,
            w: 0,
            wts,
            bias: bias.as_ptr().wrapping_add(ch),
            out,
            out_plane,
            res,
            partial_in: false,
            partial_out: false,
        };
        for c in 0..chunks {
            let b0 = c * chunk;
            t.in_blocks = full_blocks.min(b0 + chunk) - b0.min(full_blocks);
            t.tail = tail && c + 1 == chunks;
            t.partial_in = c > 0;
            t.partial_out = c + 1 < chunks;
            t.wts = wts.wrapping_add(b0 * block_len);
            for j in rows.clone() {
                let r0;
                (r0, t.x0, t.x1) = p.rows_of::<K>(j);
                let mut l = cols.start * K::O_WB;
                let end = (cols.end * K::O_WB).min(p.ow);
                while l < end {
                    // A last partial tile moves left to end at the row's end and
                    // recomputes a few columns (bit-identical: a column's sum
                    // does not depend on its place in the tile), so it is a full
                    // tile; not in place, where the residual would be added
                    // twice, nor with chunks, where the partial sums would, nor
                    // when another part owns the columns it would recompute.
                    if l + K::O_WB > p.ow
                        && p.ow >= K::O_WB
                        && !p.in_place
                        && chunks == 1
                        && whole_row
                    {
                        l = p.ow - K::O_WB;
                    }
                    let c0;
                    (c0, t.lo, t.hi, t.w) = p.columns_of::<K>(l, span);
                    let at = ((first + b0) * in_plane + lane) as isize
                        + r0 * t.in_row as isize
                        + c0 * CB as isize;
                    t.inp = inp.wrapping_offset(at);
                    let at = (ch / CB) * out_plane + (j * p.ow + l) * CB + ch % CB;
                    t.out = out.wrapping_add(at);
                    t.res = res.wrapping_add(at);
                    // SAFETY: the Tile bounds computed above describe exactly the
                    // in-bounds taps and columns; the caller guarantees K matches.
                    unsafe {
                        if full_tile::<K>(&t, span) {
                            K::full(&t)
                        } else if p.narrow_tile::<K>(&t) {
                            K::narrow(&t)
                        } else {
                            K::edge(&t)
                        }
                    }
                    l += K::O_WB;
                }
            }
        }
    }
}

/// [`run`] for channelwise kernels (depthwise, pooling, elementwise): a
/// channel tile's weights are a few vectors, so the channel tiles are the
/// innermost loop and one output row's and column tile's geometry (valid
/// filter rows and window columns, width, which kernel) serves all of
/// them. On small feature maps that geometry cost as much as the kernel:
/// depthwise 25x5x512 spent about 40 % of its time in the loop nest's
/// scalar code when the channel tiles were outermost.
///
/// # Safety
/// As [`run`].
#[inline(always)]
unsafe fn run_channelwise<K: Kernel>(p: &Problem, part: usize, parts: usize) {
    let (j0, j1) = if parts == 1 {
        (0, p.oh)
    } else {
        (p.oh * part / parts, p.oh * (part + 1) / parts)
    };
    let in_plane = p.ih * p.iw * CB;
    let out_plane = p.oh * p.ow * CB;
    let span = (K::O_WB - 1) * K::SPEC.sw + K::SPEC.fw;
    let tiles = const { out_padded(&K::SPEC) / K::TC };
    let wlen = const { tile_len(&K::SPEC, K::TC) };
    let (bias, wts) = p
        .packed
        .split_at(p.packed.len().min(const { out_padded(&K::SPEC) }));
    let (inp, out) = (p.inp.as_ptr(), p.out);
    let res = p.residual();
    let mut t = Tile {
        inp,
        in_row: p.iw * CB,
        in_plane,
        in_blocks: 0,
        tail: false,
        x0: 0,
        x1: 0,
        lo: 0,
        hi: 0,
        w: 0,
        wts: wts.as_ptr(),
        bias: bias.as_ptr(),
        out,
        out_plane,
        res,
        partial_in: false,
        partial_out: false,
    };
    for j in j0..j1 {
        let r0;
        (r0, t.x0, t.x1) = p.rows_of::<K>(j);
        let mut l = 0;
        while l < p.ow {
            // The last partial tile moves left to end at the row's end (see
            // `run`); not in place, where the residual would be added twice.
            if l + K::O_WB > p.ow && p.ow >= K::O_WB && !p.in_place {
                l = p.ow - K::O_WB;
            }
            let c0;
            (c0, t.lo, t.hi, t.w) = p.columns_of::<K>(l, span);
            let full = full_tile::<K>(&t, span);
            let in_at = r0 * t.in_row as isize + c0 * CB as isize;
            let out_at = (j * p.ow + l) * CB;
            t.inp = inp.wrapping_offset(in_at);
            t.wts = wts.as_ptr();
            t.bias = bias.as_ptr();
            t.out = out.wrapping_add(out_at);
            t.res = res.wrapping_add(out_at);
            // The next channel tile: `TC` lanes on, or the next block's plane.
            let next = |t: &mut Tile, ot: usize| {
                let (di, dout) = if ((ot + 1) * K::TC).is_multiple_of(CB) {
                    (in_plane + K::TC - CB, out_plane + K::TC - CB)
                } else {
                    (K::TC, K::TC)
                };
                t.inp = t.inp.wrapping_add(di);
                t.wts = t.wts.wrapping_add(wlen);
                t.bias = t.bias.wrapping_add(K::TC);
                t.out = t.out.wrapping_add(dout);
                t.res = t.res.wrapping_add(dout);
            };
            // One loop per kernel, so the unrolled `full` sits in a plain loop.
            // SAFETY: the Tile bounds computed above describe exactly the
            // in-bounds taps and columns; the caller guarantees K matches.
            unsafe {
                if full {
                    for ot in 0..tiles {
                        K::full(&t);
                        next(&mut t, ot);
                    }
                } else if p.narrow_tile::<K>(&t) {
                    for ot in 0..tiles {
                        K::narrow(&t);
                        next(&mut t, ot);
                    }
                } else {
                    for ot in 0..tiles {
                        K::edge(&t);
                        next(&mut t, ot);
                    }
                }
            }
            l += K::O_WB;
        }
    }
}
