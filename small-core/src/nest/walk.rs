//! The walk of Algorithm 1: [`run`] and, for channelwise kernels,
//! `run_channelwise` (for a one-pixel output, `run_pixel`). Each loop
//! carries the name of the paper's loop as its label
//! (`'output_channel_tiles`: lines 1-2, `'input_channel_blocks`: line 3,
//! `'output_rows`: line 4, `'output_column_tiles`: line 5; see the table
//! in [`crate::nest`]); the kernel is lines 6-12.
//!
//! Every function here is `#[inline(always)]` and generic over the
//! [`Kernel`], and the sizes that `K` fixes are `const` blocks, so each
//! layer's copy of the nest is one function with its shape folded in.

// The labels name Algorithm 1's loops; most are never jumped to.
#![allow(unused_labels)]

use core::ops::Range;

use small_ir::geometry::{blocked_at, computed_tiles, uncovered_lanes, width};
use small_ir::plan::TILE_BUFFER;

use super::schedule::{Share, chunks};
use super::{Kernel, Packed, Problem, Tile};
use crate::pack::{tile_blocks, tile_len};
use crate::{CB, Element, KernelKind};

impl<E: Element> Problem<'_, E> {
    /// Output row `j`'s first input row (may be negative: padding) and its
    /// valid filter rows `x0..x1`.
    #[inline(always)]
    fn rows_of<K: Kernel<Elem = E>>(&self, j: usize) -> (isize, usize, usize) {
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
    fn columns_of<K: Kernel<Elem = E>>(
        &self,
        l: usize,
        span: usize,
    ) -> (isize, usize, usize, usize) {
        let c0 = (l * K::SPEC.sw) as isize - self.pad_left as isize;
        let lo = (-c0).clamp(0, span as isize) as usize;
        // The edge kernels test `lo` only on columns before this bound.
        debug_assert!(lo <= K::SPEC.padding.max_left(K::SPEC.fw));
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
    fn narrow_tile<K: Kernel<Elem = E>>(&self, t: &Tile<E>) -> bool {
        K::NARROW && self.ow == 1 && t.lo == 0 && t.hi > 0
    }

    /// The tile every call of `p` starts from: the input, output, residual,
    /// weights and bias at their first element, with their strides.
    #[inline(always)]
    fn first_tile(&self) -> Tile<E> {
        let Packed { bias, tiles: wts } = self.packed;
        Tile {
            inp: self.inp,
            in_row: self.iw * width(self.spec.in_channels()),
            in_plane: self.ih * self.iw * width(self.spec.in_channels()),
            in_blocks: 0,
            tail: false,
            x0: 0,
            x1: 0,
            lo: 0,
            hi: 0,
            w: 0,
            wts: wts.as_ptr(),
            bias: bias.as_ptr(),
            out: self.out,
            out_plane: self.oh * self.ow * width(self.spec.out_channels()),
            res: self.residual(),
            partial_in: false,
            partial_out: false,
        }
    }
}

/// The input's pixel stride ([`width`] of its channels).
#[inline(always)]
fn in_width<K: Kernel>() -> isize {
    const { width(K::SPEC.in_channels()) as isize }
}

/// The output's pixel stride.
#[inline(always)]
fn out_width<K: Kernel>() -> usize {
    const { width(K::SPEC.out_channels()) }
}

/// Window columns of a full column tile: `O_wb` outputs' windows.
#[inline(always)]
fn span<K: Kernel>() -> usize {
    (K::O_WB - 1) * K::SPEC.sw + K::SPEC.fw
}

/// True if `t` takes [`Kernel::full`]: `O_WB` columns whose windows (of
/// `span` columns in all) lie inside the input.
#[inline(always)]
fn full_tile<K: Kernel>(t: &Tile<K::Elem>, span: usize) -> bool {
    t.lo == 0 && t.hi == span && t.w == K::O_WB
}

/// True if this call's tiles leave output lanes that the layout keeps
/// zero ([`uncovered_lanes`]); never for an elementwise layer, whose
/// tiles cover every lane of its one flattened block.
#[inline(always)]
fn leaves_lanes<K: Kernel>(p: &Problem<'_, K::Elem>) -> bool {
    let leaves = const {
        let lanes = uncovered_lanes(&K::SPEC, K::TC);
        lanes.start < lanes.end
    };
    leaves && !p.elementwise
}

/// Zeroes the [`uncovered_lanes`] of the output pixels `px` of row `j`,
/// in the block of channel `ch` (from `first`'s output), right after the
/// tile that holds `ch` wrote them: the lines are still in L1. The lanes
/// are constants, so each pixel is a store or two, not a `memset` call.
///
/// # Safety
/// The pixels lie inside the output (`first`'s), and no other part
/// writes them (this part computes `ch`'s tile there).
#[inline(always)]
unsafe fn zero_lanes<K: Kernel>(
    p: &Problem<'_, K::Elem>,
    first: &Tile<K::Elem>,
    (j, ch): (usize, usize),
    px: Range<usize>,
) {
    let w = out_width::<K>();
    let (block, offset) = blocked_at(ch, j * p.ow + px.start, w);
    let pixels = first
        .out
        .wrapping_add(block * first.out_plane + offset - ch % CB);
    for i in 0..px.len() {
        for lane in const { uncovered_lanes(&K::SPEC, K::TC) } {
            // SAFETY: the caller's: pixel `px.start + i` of row `j` in
            // `ch`'s block, lane `lane < w`.
            unsafe { pixels.add(i * w + lane).write(K::Elem::default()) };
        }
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
pub unsafe fn run<K: Kernel>(p: &Problem<'_, K::Elem>, part: usize, parts: usize) {
    debug_assert!(
        !p.shifted,
        "an output over its input runs in `run_in_buffer`"
    );
    // `K`'s kind is a constant, `p.spec` is not (`run` is a
    // `#[target_feature]` function the layer's `forward` cannot inline):
    // tested first in a `const` block, the other kind's loop nest, with
    // its copies of the unrolled `full`, is not even compiled.
    if const { matches!(K::SPEC.kind(), KernelKind::Channelwise) } && p.channels_inner() {
        // SAFETY: forwarded from the caller.
        return unsafe { run_channelwise::<K>(p, part, parts) };
    }
    // A one-pixel output (a fully connected layer): one kernel call per
    // channel tile, at the same pixel.
    if const { K::NARROW && matches!(K::SPEC.kind(), KernelKind::Broadcast) }
        && p.oh == 1
        && p.ow == 1
    {
        // SAFETY: forwarded from the caller.
        return unsafe { run_pixel::<K>(p, part, parts) };
    }
    if const { elementwise::<K>() } {
        // SAFETY: forwarded from the caller.
        return unsafe { run_flat::<K>(p, part, parts) };
    }
    let share = Share::of::<K>(p, part, parts);
    let first = p.first_tile();
    // Algorithm 1, lines 1-2: `g` in steps of `G_b`, `k` in steps of `K_b`
    // (parallel), as one loop over tiles of `TC = G_b x K_b` channels.
    'output_channel_tiles: for ot in 0..share.tile_count {
        let (rows, cols) = share.of_tile(p, ot);
        if rows.is_empty() || cols.is_empty() {
            continue;
        }
        // Without the whole row, another part owns the columns a shifted
        // last tile would recompute.
        let whole_row = cols.start == 0 && cols.end == share.row_tiles;
        // SAFETY: forwarded from the caller.
        unsafe { channel_tile::<K>(p, &first, ot, rows, cols, whole_row) }
    }
}

/// [`run`] for a one-pixel output of a kernel with [`Kernel::NARROW`]:
/// what `channel_tile` and `row` do for it, with the pixel's geometry
/// (filter rows, window columns) worked out once instead of per channel
/// tile. A part's units are its channel tiles ([`Share`] with one column
/// tile), and the reduction is one chunk (`chunks` never splits a narrow
/// kernel's). The general walk's per-tile scalar work was 6-8 % of fully
/// connected `i8` layers on AMD EPYC Zen 1 (128 -> 640: 20 tiles).
///
/// # Safety
/// As [`run`], for `p.oh == p.ow == 1`.
#[inline(always)]
unsafe fn run_pixel<K: Kernel>(p: &Problem<'_, K::Elem>, part: usize, parts: usize) {
    let tiles = const { computed_tiles(&K::SPEC, K::TC) };
    let first = p.first_tile();
    let span = span::<K>();
    let mut t = first;
    let (r0, c0);
    (r0, t.x0, t.x1) = p.rows_of::<K>(0);
    (c0, t.lo, t.hi, t.w) = p.columns_of::<K>(0, span);
    let window = r0 * first.in_row as isize + c0 * in_width::<K>();
    'output_channel_tiles: for ot in tiles * part / parts..tiles * (part + 1) / parts {
        let ch = ot * K::TC;
        let blocks = InBlocks::of::<K>(p, ot, ch);
        t.in_blocks = blocks.full;
        t.tail = blocks.tail;
        t.wts = first
            .wts
            .wrapping_add(ot * const { tile_len(&K::SPEC, K::TC) });
        t.bias = first.bias.wrapping_add(ch);
        let in_at = (blocks.first * first.in_plane + blocks.lane) as isize;
        t.inp = first.inp.wrapping_offset(in_at + window);
        let (block, offset) = blocked_at(ch, 0, out_width::<K>());
        let at = block * first.out_plane + offset;
        t.out = first.out.wrapping_add(at);
        t.res = first.res.wrapping_add(at);
        // SAFETY: the Tile bounds above describe exactly the in-bounds
        // taps and columns of the pixel; the caller guarantees K matches.
        unsafe { kernel::<K>(p, &t, span) };
        if ot + 1 == tiles && leaves_lanes::<K>(p) {
            // SAFETY: the pixel is in the output, and this part computed
            // the last channel tile there.
            unsafe { zero_lanes::<K>(p, &first, (0, ch), 0..1) };
        }
    }
}

/// True if `K`'s layer is elementwise (1x1 stride 1, per channel, no
/// weights: ReLU), which [`Problem::new`] flattens into one row of every
/// channel block's pixels.
pub(super) const fn elementwise<K: Kernel>() -> bool {
    K::SPEC.pointwise()
        && matches!(K::SPEC.kind(), KernelKind::Channelwise)
        && !K::SPEC.has_weights()
}

/// [`run`] for an elementwise layer: its one row of pixels, every column
/// tile but a partial last one through [`Kernel::full`], the pointers
/// stepping by a tile. Nothing changes between tiles but where they are,
/// and the general walk's per-tile geometry (window columns, output
/// offset, which kernel) weighed on a kernel this light: ReLU 48x48x16
/// took 1.7x the time of a plain loop over the same buffers, 1.15-1.3x
/// with this walk, 1.05-1.1x with the single `max` of the emitter's
/// `floor_first` too (AMD EPYC Zen 1, alternated in one process). A part
/// owns whole column tiles (all channel tiles of each).
///
/// # Safety
/// As [`run`], for an elementwise `K` (`p.oh == 1`).
#[inline(always)]
unsafe fn run_flat<K: Kernel>(p: &Problem<'_, K::Elem>, part: usize, parts: usize) {
    let (tiles, lanes) = const {
        (
            width(K::SPEC.out_channels()).div_ceil(K::TC),
            width(K::SPEC.out_channels()),
        )
    };
    debug_assert!(p.elementwise && p.oh == 1 && in_width::<K>() as usize == lanes);
    let row_tiles = p.ow.div_ceil(K::O_WB);
    let (c0, c1) = if parts == 1 {
        (0, row_tiles)
    } else {
        (row_tiles * part / parts, row_tiles * (part + 1) / parts)
    };
    let span = span::<K>();
    let first = p.first_tile();
    // `t` moved by `d` elements: input, output and residual alike (an
    // elementwise pixel is as wide in each).
    let moved = |t: &Tile<K::Elem>, d: isize| Tile {
        inp: t.inp.wrapping_offset(d),
        out: t.out.wrapping_offset(d),
        res: t.res.wrapping_offset(d),
        ..*t
    };
    // The channel tiles of the column tile at `t`, through `run`.
    let column_tile = |t: &Tile<K::Elem>, run: unsafe fn(&Tile<K::Elem>)| {
        for ot in 0..tiles {
            // SAFETY: the caller's: the column tile's pixels (`t.w` of
            // them) lie inside the input and output, and this part owns
            // them; an elementwise window is its own pixel.
            unsafe { run(&moved(t, (ot * K::TC) as isize)) };
        }
    };
    let step = (K::O_WB * lanes) as isize;
    let mut t = moved(&first, c0 as isize * step);
    (_, t.x0, t.x1) = p.rows_of::<K>(0);
    (_, t.lo, t.hi, t.w) = p.columns_of::<K>(0, span);
    // A partial last tile is this part's if it owns the last column tile
    // (a part may own none: more parts than tiles).
    let partial = c0 < c1 && c1 == row_tiles && !p.ow.is_multiple_of(K::O_WB);
    let full = c1 - c0 - partial as usize;
    'output_column_tiles: for _ in 0..full {
        column_tile(&t, K::full);
        t = moved(&t, step);
    }
    if partial {
        let l = (row_tiles - 1) * K::O_WB;
        // Moved left to end at the row's end, as `row` does, when this part
        // owns the columns it recomputes (and not in place, where the
        // residual would be added twice).
        if parts == 1 && p.ow >= K::O_WB && !p.in_place {
            let back = ((K::O_WB - (p.ow - l)) * lanes) as isize;
            column_tile(&moved(&t, -back), K::full);
        } else {
            (_, t.lo, t.hi, t.w) = p.columns_of::<K>(l, span);
            column_tile(&t, K::edge);
        }
    }
}

/// [`run`] for a call whose output overlaps its input
/// ([`Problem::in_buffer`] with [`Problem::overlaps`]), in one part, in
/// the order that reads every input before an output lands on it:
/// channelwise layers one channel block at a time, pointwise layers a
/// stripe of column tiles at a time. A separate entry from [`run`], so
/// that layers never run so carry none of its code (their images grew
/// 3-7 % when `run` held both); a call whose output lies apart from its
/// input takes `run`.
///
/// # Safety
/// As [`run`] for the whole call, and `p` from `Problem::in_buffer`,
/// overlapping (which `plan::may_overlap` allows for channelwise and
/// pointwise layers only).
#[inline(always)]
pub unsafe fn run_in_buffer<K: Kernel>(p: &Problem<'_, K::Elem>) {
    debug_assert!(p.shifted, "an output apart from its input runs in `run`");
    // SAFETY: forwarded from the caller.
    unsafe {
        if const { matches!(K::SPEC.kind(), KernelKind::Channelwise) } {
            run_channelwise_by_block::<K>(p)
        } else {
            run_column_tiles::<K>(p)
        }
    }
}

/// Output-channel tile `ot`: Algorithm 1's lines 3-5 over the output
/// rows `rows` and the column tiles `cols`; the last partial column tile
/// moves left to end at the row's end only if `whole_row` (see `row`).
///
/// # Safety
/// As [`run`], for rows and column tiles of this part.
#[inline(always)]
unsafe fn channel_tile<K: Kernel>(
    p: &Problem<'_, K::Elem>,
    first: &Tile<K::Elem>,
    ot: usize,
    rows: Range<usize>,
    cols: Range<usize>,
    whole_row: bool,
) {
    let ch = ot * K::TC;
    let wts = first
        .wts
        .wrapping_add(ot * const { tile_len(&K::SPEC, K::TC) });
    let blocks = InBlocks::of::<K>(p, ot, ch);
    let (chunk, chunks) = chunks::<K>(p, blocks.full);
    let block_len = const { crate::pack::block_len(&K::SPEC, K::TC) };
    let mut t = Tile {
        in_blocks: blocks.full,
        tail: blocks.tail,
        wts,
        bias: first.bias.wrapping_add(ch),
        ..*first
    };
    // The last partial tile of a row may move left (see `row`); not in
    // place, where the residual would be added twice, nor with chunks,
    // where the partial sums would.
    let shift = !p.in_place && chunks == 1 && whole_row;
    // Line 3: `i` over `F_C` in steps of `F_Cb`, chunks of `chunk`
    // input blocks whose weights fit L1; the partial sums go through
    // the output.
    'input_channel_blocks: for c in 0..chunks {
        let b0 = c * chunk;
        t.in_blocks = blocks.full.min(b0 + chunk) - b0.min(blocks.full);
        t.tail = blocks.tail && c + 1 == chunks;
        t.partial_in = c > 0;
        t.partial_out = c + 1 < chunks;
        t.wts = wts.wrapping_add(b0 * block_len);
        let in_at = ((blocks.first + b0) * first.in_plane + blocks.lane) as isize;
        // The padding lanes past the last tile, once its sums are final.
        let last = ot + 1 == const { computed_tiles(&K::SPEC, K::TC) } && c + 1 == chunks;
        let zero = last && leaves_lanes::<K>(p);
        let px = cols.start * K::O_WB..(cols.end * K::O_WB).min(p.ow);
        // Line 4: `j` over `O_H`, this part's rows of the tile.
        'output_rows: for j in rows.clone() {
            // SAFETY: forwarded from the caller; the row's pixels `px` are
            // this part's, in the output.
            unsafe {
                row::<K>(p, &mut t, first, j, cols.clone(), in_at, ch, shift);
                if zero {
                    zero_lanes::<K>(p, first, (j, ch), px.clone());
                }
            }
        }
    }
}

/// [`run`] for a pointwise layer over its own input
/// ([`Problem::in_buffer`], exactly in place): a stripe of columns at a
/// time (Algorithm 1's line 5 split, the stripe outermost), every
/// output-channel tile of the stripe into a stack buffer, then the
/// buffer over the stripe's input pixels, which no later stripe reads.
/// A stripe is as many whole column tiles as [`TILE_BUFFER`] holds, so
/// each channel tile's setup serves several column tiles (one tile per
/// stripe cost DS-CNN's int8 pointwise layers on the M4 15 % more).
///
/// # Safety
/// As [`run`], for the whole call; `O_WB` pixels of every output block
/// fit [`TILE_BUFFER`] (`in_place_shift` checked it).
#[inline(always)]
unsafe fn run_column_tiles<K: Kernel>(p: &Problem<'_, K::Elem>) {
    let first = p.first_tile();
    let tiles = const { computed_tiles(&K::SPEC, K::TC) };
    let (lanes, blocks) = (
        out_width::<K>(),
        const { K::SPEC.out_channels().div_ceil(CB) },
    );
    let stripe = TILE_BUFFER / (blocks * lanes) / K::O_WB * K::O_WB;
    let (row_tiles, plane) = (p.ow.div_ceil(K::O_WB), stripe * lanes);
    let mut buf = [K::Elem::default(); TILE_BUFFER];
    // The buffer as the output: block `b` of the stripe at `plane * b`.
    let mut at = Tile {
        out_plane: plane,
        ..first
    };
    let mut l = 0;
    'output_column_tiles: while l < p.ow {
        let w = stripe.min(p.ow - l);
        // `row` adds the tile's pixel offset back.
        at.out = buf.as_mut_ptr().wrapping_sub(l * lanes);
        let cols = l / K::O_WB..(l / K::O_WB + stripe / K::O_WB).min(row_tiles);
        // The last partial tile may move left inside the stripe: the
        // input there is intact until the copy below.
        let whole = l + w == p.ow && w >= K::O_WB;
        'output_channel_tiles: for ot in 0..tiles {
            // SAFETY: forwarded from the caller; the stripe's outputs land
            // in `buf` (`blocks * plane <= TILE_BUFFER`).
            unsafe { channel_tile::<K>(p, &at, ot, 0..p.oh, cols.clone(), whole) }
        }
        for b in 0..blocks {
            let to = first.out.wrapping_add(b * first.out_plane + l * lanes);
            // SAFETY: the stripe's `w` pixels of block `b` lie inside the
            // output, and every tile that reads the input there has run:
            // those input pixels are dead.
            unsafe { core::ptr::copy_nonoverlapping(buf.as_ptr().add(b * plane), to, w * lanes) };
        }
        l += w;
    }
}

/// The input blocks output-channel tile `ot` (first channel `ch`) reduces
/// over: the reduction of Algorithm 1's line 3 before chunking.
struct InBlocks {
    /// The first input block.
    first: usize,
    /// The tile's first lane in each block (channelwise kernels).
    lane: usize,
    /// Full blocks.
    full: usize,
    /// One more block of `Kernel::TAIL` lanes after them.
    tail: bool,
}

impl InBlocks {
    #[inline(always)]
    fn of<K: Kernel>(p: &Problem<'_, K::Elem>, ot: usize, ch: usize) -> InBlocks {
        let in_blocks = const { K::SPEC.in_channels().div_ceil(CB) };
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
        InBlocks {
            first,
            lane,
            full: end - first - tail as usize,
            tail,
        }
    }
}

/// Output row `j` of the tile `t` (channel `ch`, its chunk's input at
/// `in_at` from the first tile's): the column tiles `cols`, the last
/// partial one moved left to end at the row's end if `shift`.
///
/// # Safety
/// As [`run`], for `t` from `first` with the chunk's fields set.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn row<K: Kernel>(
    p: &Problem<'_, K::Elem>,
    t: &mut Tile<K::Elem>,
    first: &Tile<K::Elem>,
    j: usize,
    cols: Range<usize>,
    in_at: isize,
    ch: usize,
    shift: bool,
) {
    let span = span::<K>();
    let r0;
    (r0, t.x0, t.x1) = p.rows_of::<K>(j);
    let mut l = cols.start * K::O_WB;
    let end = (cols.end * K::O_WB).min(p.ow);
    // Line 5: `l` over `O_W` in steps of `O_Wb`.
    'output_column_tiles: while l < end {
        // A last partial tile moves left to end at the row's end and
        // recomputes a few columns (bit-identical: a column's sum does not
        // depend on its place in the tile), so it is a full tile.
        if l + K::O_WB > p.ow && p.ow >= K::O_WB && shift {
            l = p.ow - K::O_WB;
        }
        let c0;
        (c0, t.lo, t.hi, t.w) = p.columns_of::<K>(l, span);
        t.inp = first
            .inp
            .wrapping_offset(in_at + r0 * t.in_row as isize + c0 * in_width::<K>());
        let (block, offset) = blocked_at(ch, j * p.ow + l, out_width::<K>());
        let at = block * first.out_plane + offset;
        t.out = first.out.wrapping_add(at);
        t.res = first.res.wrapping_add(at);
        // Lines 6-12.
        // SAFETY: the Tile bounds computed above describe exactly the
        // in-bounds taps and columns; the caller guarantees K matches.
        unsafe { kernel::<K>(p, t, span) }
        l += K::O_WB;
    }
}

/// Algorithm 1's lines 6-12 on tile `t`: the unguarded kernel, the narrow
/// one or the guarded one.
///
/// # Safety
/// As [`run`], with `t`'s bounds those of its tile.
#[inline(always)]
unsafe fn kernel<K: Kernel>(p: &Problem<'_, K::Elem>, t: &Tile<K::Elem>, span: usize) {
    // SAFETY: forwarded from the caller; each kernel is chosen by the
    // bounds it accepts.
    unsafe {
        if full_tile::<K>(t, span) {
            K::full(t)
        } else if p.narrow_tile::<K>(t) {
            K::narrow(t)
        } else {
            K::edge(t)
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
unsafe fn run_channelwise<K: Kernel>(p: &Problem<'_, K::Elem>, part: usize, parts: usize) {
    // Every channel tile per column tile; `all` stays a constant in the
    // loops (a run-time count cost VWW's depthwise layers 0.1 M
    // instructions on the M4).
    let all = const { computed_tiles(&K::SPEC, K::TC) };
    let first = p.first_tile();
    let mut t = first;
    // The padded windows' copy (`full_tiles`), zeroed once per call; an
    // arch without `PAD_EDGES` never touches it, and it is optimized out.
    let mut window = [K::Elem::default(); WINDOW];
    let zero = leaves_lanes::<K>(p);
    // SAFETY: forwarded from the caller.
    unsafe { channelwise_rows::<K>(p, &first, &mut t, (part, parts), all, zero, &mut window) }
}

/// [`run_channelwise`] over its own input ([`run_in_buffer`]), in one
/// part, one channel block (or one tile of several) at a time: its
/// output rows land on rows of its own block already read, or on earlier
/// blocks. Apart from `run_channelwise`, so that `run` does not carry
/// (and the compiler does not build, then drop) this loop for every
/// channelwise layer.
///
/// # Safety
/// As [`run_in_buffer`].
#[inline(always)]
unsafe fn run_channelwise_by_block<K: Kernel>(p: &Problem<'_, K::Elem>) {
    let all = const { computed_tiles(&K::SPEC, K::TC) };
    let mut first = p.first_tile();
    let mut t = first;
    let mut window = [K::Elem::default(); WINDOW];
    let per = const { if K::TC < CB { CB / K::TC } else { 1 } };
    let mut done = 0;
    while done < all {
        let tiles = per.min(all - done);
        let zero = done + tiles == all && leaves_lanes::<K>(p);
        // SAFETY: forwarded from the caller.
        unsafe { channelwise_rows::<K>(p, &first, &mut t, (0, 1), tiles, zero, &mut window) };
        done += tiles;
        // The next group starts at a block: `tiles` tiles on.
        let blocks = (tiles * K::TC).div_ceil(CB);
        first.inp = first.inp.wrapping_add(blocks * first.in_plane);
        first.out = first.out.wrapping_add(blocks * first.out_plane);
        first.wts = first
            .wts
            .wrapping_add(tiles * const { tile_len(&K::SPEC, K::TC) });
        first.bias = first.bias.wrapping_add(tiles * K::TC);
        first.res = first.res.wrapping_add(blocks * first.out_plane);
    }
}

/// The rows of part `part.0` of `part.1` of [`run_channelwise`], for the
/// `tiles` channel tiles from `first`'s; with `zero`, then the
/// [`uncovered_lanes`] of the last tile's block in each column tile.
///
/// # Safety
/// As [`run`].
#[inline(always)]
unsafe fn channelwise_rows<K: Kernel>(
    p: &Problem<'_, K::Elem>,
    first: &Tile<K::Elem>,
    t: &mut Tile<K::Elem>,
    (part, parts): (usize, usize),
    tiles: usize,
    zero: bool,
    window: &mut [K::Elem; WINDOW],
) {
    let span = span::<K>();
    // Line 4: `j` over `O_H`, this part's rows (a row is a unit).
    'output_rows: for j in p.rows_of_part(part, parts) {
        let r0;
        (r0, t.x0, t.x1) = p.rows_of::<K>(j);
        let mut l = 0;
        // Line 5: `l` over `O_W` in steps of `O_Wb`.
        'output_column_tiles: while l < p.ow {
            // The last partial tile moves left to end at the row's end (see
            // `row`); not in place, where the residual would be added twice.
            if l + K::O_WB > p.ow && p.ow >= K::O_WB && !p.in_place {
                l = p.ow - K::O_WB;
            }
            let c0;
            (c0, t.lo, t.hi, t.w) = p.columns_of::<K>(l, span);
            let full = full_tile::<K>(t, span);
            let in_at = r0 * t.in_row as isize + c0 * in_width::<K>();
            // Channel 0's element: the walk below steps to each tile's.
            let (_, out_at) = blocked_at(0, j * p.ow + l, out_width::<K>());
            t.inp = first.inp.wrapping_offset(in_at);
            t.wts = first.wts;
            t.bias = first.bias;
            t.out = first.out.wrapping_add(out_at);
            t.res = first.res.wrapping_add(out_at);
            // SAFETY: the Tile bounds computed above describe exactly the
            // in-bounds taps and columns; the caller guarantees K matches.
            // The column tile's pixels are in the output, and this part's.
            unsafe {
                channel_tiles::<K>(p, t, tiles, full, window);
                if zero {
                    let px = l..(l + K::O_WB).min(p.ow);
                    zero_lanes::<K>(p, first, (j, (tiles - 1) * K::TC), px);
                }
            }
            l += K::O_WB;
        }
    }
}

/// Algorithm 1, lines 1-2 innermost: every output-channel tile of the
/// column tile `t` (at channel 0), with the kernel `full` or not chose
/// for all of them.
///
/// # Safety
/// As [`run`], with `t`'s bounds those of its column tile.
#[inline(always)]
unsafe fn channel_tiles<K: Kernel>(
    p: &Problem<'_, K::Elem>,
    t: &mut Tile<K::Elem>,
    tiles: usize,
    full: bool,
    window: &mut [K::Elem; WINDOW],
) {
    let (in_plane, out_plane) = (t.in_plane, t.out_plane);
    let wlen = const { tile_len(&K::SPEC, K::TC) };
    // The next channel tile: `TC` lanes on, or the next block's plane.
    let next = |t: &mut Tile<K::Elem>, ot: usize| {
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
    // SAFETY: forwarded from the caller: the bounds are the column tile's,
    // alike for every channel tile.
    let padded = K::PAD_EDGES && !full && t.w == K::O_WB && window_len::<K>() <= WINDOW;
    unsafe {
        if K::PAD_EDGES && (full || padded) {
            // One loop, so one copy of the unrolled `full` in the code.
            full_tiles::<K>(t, tiles, padded.then_some(window), next);
        } else if full {
            'output_channel_tiles: for ot in 0..tiles {
                K::full(t);
                next(t, ot);
            }
        } else if p.narrow_tile::<K>(t) {
            'output_channel_tiles: for ot in 0..tiles {
                K::narrow(t);
                next(t, ot);
            }
        } else {
            'output_channel_tiles: for ot in 0..tiles {
                K::edge(t);
                next(t, ot);
            }
        }
    }
}

/// Elements of a border column tile's window in one channel block: the
/// filter's rows, the tile's window columns, the input's lanes.
#[inline(always)]
fn window_len<K: Kernel>() -> usize {
    const { K::SPEC.fh * ((K::O_WB - 1) * K::SPEC.sw + K::SPEC.fw) * width(K::SPEC.in_channels()) }
}

/// The largest window [`full_tiles`] copies (on the stack).
const WINDOW: usize = 1024;

/// The channel tiles of column tile `t` through [`Kernel::full`]: in
/// place, or with a `padded` buffer (a border column tile `O_WB` columns
/// wide) on a copy of each channel block's window whose taps outside the input are
/// [`Kernel::pad`]. On a single-issue core the guarded `edge` kernel cost
/// twice `full` (its column guards and the values they keep live spill),
/// and on small planes (DS-CNN's 25x5) every column tile is a border one:
/// DS-CNN's int8 depthwise layers on a Cortex-M4 went from 3.3 M to 2.2 M
/// instructions. The copy is a few word moves per window pixel, once per
/// block for all of its channel tiles.
///
/// # Safety
/// As [`channel_tiles`]; with `padded`, `window_len::<K>() <= WINDOW`.
#[inline(always)]
unsafe fn full_tiles<K: Kernel>(
    t: &mut Tile<K::Elem>,
    tiles: usize,
    mut padded: Option<&mut [K::Elem; WINDOW]>,
    next: impl Fn(&mut Tile<K::Elem>, usize),
) {
    let (fh, span, lanes) = (K::SPEC.fh, span::<K>(), in_width::<K>() as usize);
    // Read once per call, before the loop: read inside it (only when a
    // window is filled) DS-CNN int8 on the M4 took 10.10 M instructions
    // instead of 9.98 M.
    // SAFETY: the caller's bias rows are the kernel's.
    let pad = unsafe { K::pad(t) };
    let (inp, block_plane) = (t.inp, t.in_plane);
    'output_channel_tiles: for ot in 0..tiles {
        let (block, lane) = (ot * K::TC / CB, ot * K::TC % CB);
        if let (Some(buf), 0) = (padded.as_deref_mut(), lane) {
            let src = inp.wrapping_add(block * block_plane);
            for x in 0..fh {
                for c in 0..span {
                    let to = &mut buf[(x * span + c) * lanes..][..lanes];
                    if (t.x0..t.x1).contains(&x) && (t.lo..t.hi).contains(&c) {
                        let from = src.wrapping_add(x * t.in_row + c * lanes);
                        // SAFETY: row `x` and column `c` of the window
                        // are inside the input (the Tile's bounds), and a
                        // pixel holds `lanes` elements of this block.
                        let from = unsafe { core::slice::from_raw_parts(from, lanes) };
                        to.copy_from_slice(from);
                    } else {
                        to.fill(pad);
                    }
                }
            }
        }
        let k = if let Some(buf) = padded.as_deref() {
            Tile {
                inp: buf.as_ptr().wrapping_add(lane),
                in_row: span * lanes,
                lo: 0,
                hi: span,
                ..*t
            }
        } else {
            *t
        };
        // SAFETY: `k` is a full tile, over the input or over the copy
        // (every window column inside it); the weights, bias and outputs
        // are `t`'s.
        unsafe { K::full(&k) };
        next(t, ot);
    }
}
