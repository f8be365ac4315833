//! Scheduling a call: its units of work (Algorithm 1's parallel loops
//! over output-channel tiles, with the output rows), the split of the
//! units into parts for threads, and the chunking of the reduction
//! (Algorithm 1's `F_Cb` loop) so that a chunk's weights stay in L1.

use core::ops::Range;

use super::{Kernel, Problem};
use crate::Element;
use crate::KernelKind;
use small_ir::geometry::{computed_tiles, width};

/// Multiply-accumulates below which a part is not worth a thread. The
/// pool's fork and join cost 0.26 µs on a Zen 5 VM and 0.5-1 µs on a
/// Xeon VM (median, 2 threads, `small-bench --threads 2`). A layer left on
/// one thread costs more than its own time, though: it reads the half of
/// its input that the other core wrote and writes what that core reads
/// next (reading 32 KiB written by the other core took 6.9 µs on the Xeon,
/// 1.1 µs from its own cache). So the layers of a network split alike from
/// 40 k MACs (DS-CNN's 72 k-MAC depthwise layers too): on the Xeon VM
/// (2026-11-28, `small-bench --threads 2 --quick`, two rounds) DS-CNN ran
/// 43.6-45.8 µs on 2 threads with 20 k, 58-61 µs with 40 k.
#[cfg(feature = "std")]
pub const MIN_PART_MACS: usize = 20_000;

/// Products an `i8` broadcast kernel sums per lane and step on the arches
/// that run threads (AVX-512 VNNI's `vpdpbusd`, AVX2's `vpmaddubsw` +
/// `vpmaddwd`, NEON's `sdot`): [`Problem::split_macs`].
#[cfg(feature = "std")]
const I8_DOT: usize = 4;

// ANCHOR: l1_weights
/// Bytes of one output-channel tile's weights that a pass over the whole
/// output may stream: a larger reduction is split into chunks of input
/// blocks (SMaLL's `F_Cb` blocking, MEMA's tiling of the reduction) whose
/// weights stay in L1 while every pixel tile uses them; the partial sums
/// go through the output. Half of a 48 KiB L1 (Zen 4/5; 32 KiB on older
/// cores still holds it with the input rows and output tile).
pub const L1_WEIGHT_BYTES: usize = 24 * 1024;
// ANCHOR_END: l1_weights

/// Input blocks per chunk of a reduction whose blocks hold `block_len`
/// weights each: as many as fit [`L1_WEIGHT_BYTES`], at least one.
const fn l1_chunk(block_len: usize) -> usize {
    let n = L1_WEIGHT_BYTES / (block_len * 4);
    if n == 0 { 1 } else { n }
}

/// The chunks of `full_blocks` input blocks of one output-channel tile
/// (Algorithm 1, line 3): `(chunk, chunks)`, input blocks per chunk and
/// their count. Only broadcast `fma` kernels chunk; not in place (the
/// partial sums would overwrite the residual) nor for the narrow kernel
/// (its partial-sum columns are folded at every store).
#[inline(always)]
pub(super) fn chunks<K: Kernel>(p: &Problem<'_, K::Elem>, full_blocks: usize) -> (usize, usize) {
    let block_len = const { crate::pack::block_len(&K::SPEC, K::TC) };
    // An `i8` layer's output holds bytes, not the `i32` partial sums a
    // chunk would leave there: it reduces in one pass (its weights are a
    // quarter of an `f32` layer's).
    let chunkable = K::SPEC.kind() == KernelKind::Broadcast
        && K::SPEC.reduction == crate::Reduction::Fma
        && K::SPEC.dtype == crate::Dtype::F32
        && !p.in_place
        && !(K::NARROW && p.ow == 1);
    if chunkable {
        let chunk = l1_chunk(block_len);
        (chunk, full_blocks.div_ceil(chunk).max(1))
    } else {
        (full_blocks.max(1), 1)
    }
}

impl<E: Element> Problem<'_, E> {
    /// Independent units of work: output rows of each output-channel tile,
    /// or output rows when the channel tiles are the innermost loop.
    /// (Only threads split calls into units.)
    #[cfg(feature = "std")]
    pub(crate) fn units(&self) -> usize {
        if self.channels_inner() {
            self.oh
        } else if self.oh == 1 {
            // A one-row problem (a flattened pointwise layer) also splits
            // its row; its column tiles are at most its columns ([`Share`]).
            self.channel_tiles() * self.ow
        } else {
            self.channel_tiles() * self.oh
        }
    }

    /// Output-channel tiles of `tc` channels: of one block if elementwise.
    fn channel_tiles(&self) -> usize {
        if self.elementwise {
            width(self.spec.out_channels()).div_ceil(self.tc)
        } else {
            computed_tiles(self.spec, self.tc)
        }
    }

    /// True if [`run`](super::run) loops over channel tiles innermost:
    /// channelwise kernels with more than one channel tile and more than
    /// one output row. With one channel tile there is nothing to share
    /// (and depthwise 48x48x16 measured 10 % slower in that loop). A
    /// one-row problem (a 1x1 stride-1 layer such as ReLU, flattened)
    /// streams each channel block's plane in order instead, which its
    /// loads prefer (ReLU 25x5x512 ran 28 % slower channel-innermost), and
    /// splits over its channel tiles for threads.
    pub(super) fn channels_inner(&self) -> bool {
        self.spec.kind() == KernelKind::Channelwise && self.oh > 1 && self.channel_tiles() > 1
    }

    /// Multiply-accumulates of the call (saturating: only compared with
    /// [`MIN_PART_MACS`] to choose the thread count).
    #[cfg_attr(not(feature = "std"), allow(dead_code))]
    pub(crate) fn macs(&self) -> usize {
        let channels = if self.elementwise {
            width(self.spec.out_channels())
        } else {
            self.spec.out_channels()
        };
        [self.ow, channels, self.spec.fh, self.spec.fw, self.spec.fc]
            .iter()
            .fold(self.oh, |m, &f| m.saturating_mul(f))
    }

    /// [`Problem::macs`] in `f32` multiply-adds' time, for the thread
    /// count: an `i8` broadcast kernel sums [`I8_DOT`] products per lane
    /// and step, so its call takes about a quarter of an `f32` call of the
    /// same MACs (int8 depthwise kernels widen each input and sum one
    /// product per step: counted whole).
    #[cfg(feature = "std")]
    pub(crate) fn split_macs(&self) -> usize {
        let dot = self.spec.dtype == crate::Dtype::I8 && self.spec.kind() == KernelKind::Broadcast;
        if dot {
            self.macs() / I8_DOT
        } else {
            self.macs()
        }
    }

    /// The output rows `j0..j1` of part `part` of `parts` when the channel
    /// tiles are innermost ([`Problem::channels_inner`]): a unit is a row.
    #[inline(always)]
    pub(super) fn rows_of_part(&self, part: usize, parts: usize) -> Range<usize> {
        if let Some((j0, j1)) = self.band {
            j0..j1
        } else if parts == 1 {
            0..self.oh
        } else {
            (self.oh * part / parts)..(self.oh * (part + 1) / parts)
        }
    }
}

/// One part's share of the units of the general walk: (row, output-channel
/// tile), or for a one-row problem (column tile, output-channel tile). The
/// units are numbered row by row, the channel tiles innermost, and a part
/// owns a contiguous range `u0..u1` of them: whole rows of every channel
/// tile, and at most the channel tiles of one row at each end of its range.
/// So consecutive layers split alike keep each part's pixels on one core:
/// a layer reads mostly what the same core wrote (on a 2-core Xeon VM a
/// 32 KiB read of another core's writes took 6.9 µs, of its own 1.1 µs),
/// and the parts stay balanced to one unit.
pub(super) struct Share {
    /// Units per output-channel tile: rows, or column tiles of one row.
    per_tile: usize,
    /// Column tiles of one row.
    pub(super) row_tiles: usize,
    /// Output-channel tiles of the call; each may hold units of this part
    /// (with fewer units than tiles, some hold none, and
    /// [`Share::of_tile`] gives them empty ranges).
    pub(super) tile_count: usize,
    /// This part's units.
    u0: usize,
    u1: usize,
}

impl Share {
    /// Part `part` of `parts` of `p`, with `K`'s constants.
    #[inline(always)]
    pub(super) fn of<K: Kernel>(p: &Problem<'_, K::Elem>, part: usize, parts: usize) -> Share {
        // `Problem::channel_tiles`, with `K`'s constants. Whether the layer
        // is elementwise is a constant of its spec too (`Problem::new`):
        // from `p.elementwise`, `tiles` was a run-time value and each
        // tile's `units_of_tile` two 64-bit divisions.
        let elementwise = const { super::walk::elementwise::<K>() };
        debug_assert_eq!(elementwise, p.elementwise);
        let tiles = if elementwise {
            const { width(K::SPEC.out_channels()).div_ceil(K::TC) }
        } else {
            const { computed_tiles(&K::SPEC, K::TC) }
        };
        let row_tiles = p.ow.div_ceil(K::O_WB).max(1);
        let per_tile = if p.oh == 1 { row_tiles } else { p.oh.max(1) };
        let units = tiles * per_tile;
        // One part (most calls of small layers) owns everything: no divisions.
        let (u0, u1) = if let Some((b0, b1)) = p.band {
            // A band: its rows, or the column tiles that hold its columns.
            let (r0, r1) = if p.oh == 1 {
                (b0 / K::O_WB, b1.div_ceil(K::O_WB))
            } else {
                (b0, b1)
            };
            (r0.min(r1) * tiles, r1 * tiles)
        } else if parts == 1 {
            (0, units)
        } else {
            (units * part / parts, units * (part + 1) / parts)
        };
        Share {
            per_tile,
            row_tiles,
            tile_count: tiles,
            u0,
            u1,
        }
    }

    /// This part's units of output-channel tile `ot`: unit `r * tile_count
    /// + ot` is row (or column tile) `r` of tile `ot`, and this part's are
    /// those from `u0` to `u1`.
    #[inline(always)]
    fn units_of_tile(&self, ot: usize) -> Range<usize> {
        let from = |u: usize| {
            if u <= ot {
                0
            } else {
                (u - ot).div_ceil(self.tile_count).min(self.per_tile)
            }
        };
        from(self.u0)..from(self.u1)
    }

    /// This part's rows of output-channel tile `ot`, and its column tiles
    /// of each row.
    #[inline(always)]
    pub(super) fn of_tile<E: Element>(
        &self,
        p: &Problem<'_, E>,
        ot: usize,
    ) -> (Range<usize>, Range<usize>) {
        let mine = self.units_of_tile(ot);
        if p.oh == 1 {
            (0..1, mine)
        } else {
            (mine, 0..self.row_tiles)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Share;
    use alloc::vec;

    /// Every (tile, row) unit belongs to exactly one part, each part's are
    /// its range `u0..u1` of the row-major numbering, and part sizes differ
    /// by at most one unit.
    #[test]
    fn parts_cover_every_unit_once_row_by_row() {
        for tiles in 1..7 {
            for per_tile in 1..10 {
                let units = tiles * per_tile;
                for parts in 1..12 {
                    let mut owner = vec![usize::MAX; units];
                    let mut sizes = vec![];
                    for part in 0..parts {
                        let (u0, u1) = (units * part / parts, units * (part + 1) / parts);
                        let share = Share {
                            per_tile,
                            row_tiles: per_tile,
                            tile_count: tiles,
                            u0,
                            u1,
                        };
                        let mut size = 0;
                        for ot in 0..share.tile_count {
                            for r in share.units_of_tile(ot) {
                                let u = r * tiles + ot;
                                assert!((u0..u1).contains(&u), "{tiles} {per_tile} {parts} {part}");
                                assert_eq!(owner[u], usize::MAX, "unit {u} twice");
                                owner[u] = part;
                                size += 1;
                            }
                        }
                        sizes.push(size);
                    }
                    assert!(
                        owner.iter().all(|&o| o != usize::MAX),
                        "{tiles} {per_tile} {parts}"
                    );
                    let (lo, hi) = (sizes.iter().min(), sizes.iter().max());
                    assert!(hi.unwrap() - lo.unwrap() <= 1, "{sizes:?}");
                }
            }
        }
    }
}
