//! A first-order model of one layer call's time on the running machine
//! (after Ramírez et al.: a kernel's time from its arithmetic and data
//! movement, calibrated by a few measurements of the machine): the tile's
//! multiply-adds at the rate its loads can feed (the blocking model's
//! `rate`), or the bytes it moves at the bandwidth of the cache level its
//! working set fits, whichever is longer, plus a fixed cost per call.
//!
//! The machine numbers ([`Rates`]) are measured by the caller: the FMA
//! peak and read bandwidths that the bench and the main job probe.

use crate::geometry::{computed_tiles, run_rows, width};
use crate::{Blocking, Dtype, KernelKind, LayerSpec, Machine};

/// Requantizations per output of an `i8` residual layer, against one of
/// any other layer: the [`Rates::tile`] work it does per accumulator.
pub const I8_ADD_STEPS: f64 = 4.0;

/// What one core of the running machine does, measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// `f32` FMA peak of one core with the layer's arch, FLOP/s (two per
    /// multiply-add and lane).
    pub flops: f64,
    /// Read bandwidth from L1, from L2 and from memory, bytes/s.
    pub l1: f64,
    /// See [`Rates::l1`].
    pub l2: f64,
    /// See [`Rates::l1`].
    pub memory: f64,
    /// Capacity of L1 and of L2 (one core's), bytes: a working set above
    /// L2 streams from memory (or a shared last level).
    pub l1_bytes: usize,
    /// See [`Rates::l1_bytes`].
    pub l2_bytes: usize,
    /// Fixed time of a call (checks, dispatch, set-up), seconds.
    pub call: f64,
    /// Time per accumulator of a tile outside its multiply-adds (zeroing
    /// and storing it, bias, activation, requantization), seconds: `f32`,
    /// and `i8`.
    pub tile: [f64; 2],
    /// Fraction of the load-fed FMA rate the kernels reach: `f32`, and
    /// `i8` (whose dot products also widen operands).
    pub efficiency: [f64; 2],
}

/// Which ceiling a layer call meets first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// The FMA pipes.
    Fma,
    /// The load ports feeding the FMAs (the tile's ops per load).
    Loads,
    /// Bandwidth from L1, L2 or memory: the working set's level.
    L1,
    /// See [`Bound::L1`].
    L2,
    /// See [`Bound::L1`].
    Memory,
    /// The fixed cost per call.
    Call,
}

impl Bound {
    /// Short name for tables.
    pub const fn name(self) -> &'static str {
        match self {
            Bound::Fma => "FMA",
            Bound::Loads => "loads",
            Bound::L1 => "L1",
            Bound::L2 => "L2",
            Bound::Memory => "memory",
            Bound::Call => "call",
        }
    }
}

/// What the model needs of a layer's blocking (see [`Blocking`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tile {
    /// Output pixels per tile along the width, `O_wb`.
    pub o_wb: usize,
    /// Output channels per tile, `TC`.
    pub tc: usize,
    /// Fraction of the FMA rate the tile's loads can feed, padding lanes
    /// counted as fed: [`estimate`] counts them in the computed
    /// multiply-adds (the blocking's `rate` also weighs the tile by its
    /// useful lanes; [`Tile::of`] takes that out).
    pub rate: f64,
    /// Accumulator registers of the tile.
    pub accumulators: usize,
    /// Products an `i8` dot product sums per lane and step
    /// (`Machine::int8_dot_for` the layer; 1 for `f32`).
    pub int8_dot: usize,
    /// FMA slots one such step takes (`Machine::int8_dot_slots`, 1 for
    /// the thin form and for `f32`).
    pub dot_slots: usize,
    /// An `i8` kernel that folds filter columns into its dot products
    /// ([`crate::blocking::int8_folds_columns`]): a step sums `int8_dot`
    /// taps of a filter row, not input channels.
    pub folds: bool,
    /// [`Tile::rate`] of the tile run one column wide
    /// ([`crate::blocking::rate_at`]): what a one-pixel layer reaches.
    pub one_column_rate: f64,
}

impl Tile {
    /// The tile of blocking `b` of `spec` on a machine with numbers `m`.
    pub fn of<A>(b: &Blocking<A>, m: &Machine, spec: &LayerSpec) -> Tile {
        // Charged once, as computed padding lanes, not again in the rate.
        let useful = crate::blocking::useful_lanes(spec, b.tc).max(1e-3);
        Tile {
            o_wb: b.o_wb,
            tc: b.tc,
            rate: b.rate / useful,
            accumulators: b.accumulators,
            int8_dot: m.int8_dot_for(spec),
            dot_slots: if m.int8_dot_for(spec) == m.int8_dot {
                m.int8_dot_slots
            } else {
                1
            },
            folds: crate::blocking::int8_folds_columns(m, spec),
            one_column_rate: crate::blocking::rate_at(m, spec, b, 1) / useful,
        }
    }
}

/// The model's estimate of one call, seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Multiply-adds the kernels execute, padding lanes and edge-tile
    /// columns included.
    pub computed_macs: f64,
    /// Bytes of weights, input and output the call touches.
    pub bytes: f64,
    /// Tiles the call runs (rows x column tiles x channel tiles).
    pub tiles: f64,
    /// The multiply-adds at the rate the tile's loads can feed, and the
    /// tiles' fixed work.
    pub compute: f64,
    /// The bytes at the bandwidth of the level they fit.
    pub memory: f64,
    /// `max(compute, memory) + call`.
    pub seconds: f64,
    /// The larger term (or the call cost, if it is larger than both).
    pub bound: Bound,
}

/// Estimates a call of `spec` with tile `b` from an `input` of `(h, w)`
/// pixels to an `output` of `(h, w)` pixels.
///
/// ```
/// use small_ir::cost::{estimate, Bound, Rates, Tile};
/// use small_ir::LayerSpec;
/// let spec = LayerSpec::new(1, 1, 64, 64, 1); // DS-CNN's pointwise layers
/// let tile = Tile { o_wb: 3, tc: 64, rate: 1.0, accumulators: 12, int8_dot: 4, dot_slots: 1, folds: false, one_column_rate: 0.5 };
/// let r = Rates { flops: 200e9, l1: 200e9, l2: 100e9, memory: 10e9,
///                 l1_bytes: 48 << 10, l2_bytes: 1 << 20, call: 0.1e-6,
///                 tile: [0.0; 2], efficiency: [1.0, 1.0] };
/// let e = estimate(&spec, &tile, (25, 5), (25, 5), &r);
/// assert_eq!(e.bound, Bound::Fma);
/// // The 125 pixels run as one row: 126 computed columns x 64 x 64 MACs
/// // at 100 G/s, and the call.
/// assert!((e.seconds - (126.0 * 4096.0 / 100e9 + 0.1e-6)).abs() < 1e-9);
/// ```
pub fn estimate(
    spec: &LayerSpec,
    b: &Tile,
    input: (usize, usize),
    output: (usize, usize),
    r: &Rates,
) -> Estimate {
    estimate_in(spec, b, input, output, r, 0)
}

/// [`estimate`] of the call inside a network whose forward pass touches
/// `pass_bytes` (every layer's weights and the arena): the layer read its
/// weights one pass ago, so they come from the level that holds the
/// pass, while its input was just written and its output is written
/// now, from the level that holds the call's own bytes. `pass_bytes` 0
/// (or less than the call's) is the call repeated alone, as [`estimate`].
///
/// ```
/// use small_ir::cost::{estimate, estimate_in, Bound, Rates, Tile};
/// use small_ir::LayerSpec;
/// // AD's 128 -> 128 layers: 64 KB of f32 weights, from L2 alone; in a
/// // network of 1 MB they still come from L2, in one of 4 MB from memory.
/// let spec = LayerSpec::new(1, 1, 128, 128, 1);
/// let tile = Tile { o_wb: 4, tc: 64, rate: 1.0, accumulators: 16, int8_dot: 4, dot_slots: 1, folds: false, one_column_rate: 1.0 };
/// let r = Rates { flops: 200e9, l1: 200e9, l2: 100e9, memory: 10e9,
///                 l1_bytes: 48 << 10, l2_bytes: 2 << 20, call: 0.1e-6,
///                 tile: [0.0; 2], efficiency: [1.0, 1.0] };
/// let alone = estimate(&spec, &tile, (1, 1), (1, 1), &r);
/// assert_eq!(estimate_in(&spec, &tile, (1, 1), (1, 1), &r, 1 << 20), alone);
/// let big = estimate_in(&spec, &tile, (1, 1), (1, 1), &r, 4 << 20);
/// assert_eq!(big.bound, Bound::Memory);
/// assert!(big.seconds > 8.0 * alone.seconds);
/// ```
pub fn estimate_in(
    spec: &LayerSpec,
    b: &Tile,
    input: (usize, usize),
    output: (usize, usize),
    r: &Rates,
    pass_bytes: usize,
) -> Estimate {
    // A 1x1 stride-1 layer runs its pixels as one row, so only the
    // plane's last tile is partial.
    let output = run_rows(spec, output);
    let (oh, ow) = (output.0 as f64, output.1 as f64);
    // Whole tiles along a row: the last one moves left, recomputing
    // columns, except in a residual layer (a network adds the skip in
    // place, where a moved tile would add it twice: its last tile runs
    // its own columns); a row narrower than a tile runs its own columns.
    let o_wb = b.o_wb.max(1);
    let columns = if output.1 >= o_wb && !spec.residual {
        output.1.div_ceil(o_wb) * o_wb
    } else {
        output.1
    } as f64;
    let channels = (computed_tiles(spec, b.tc) * b.tc) as f64;
    let taps = (spec.fh * spec.fw) as f64;
    let per_output = match spec.kind() {
        KernelKind::Broadcast => taps * spec.fc as f64,
        KernelKind::Channelwise => taps,
    };
    let computed_macs = oh * columns * channels * per_output;
    // An i8 dot product sums `int8_dot` consecutive input channels per
    // lane and step (fewer if the layer has fewer), in `dot_slots` FMAs'
    // time. An i8 channelwise layer sums one product per lane and step,
    // and widens each input vector first (`Dot::widen_mac`): two slots of
    // the vector pipes per multiply-add.
    let per_fma = match (spec.dtype, spec.kind()) {
        (Dtype::I8, KernelKind::Broadcast) => {
            let products = if b.folds {
                spec.fw as f64 / spec.fw.div_ceil(b.int8_dot.max(1)) as f64
            } else {
                b.int8_dot.clamp(1, spec.fc.max(1)) as f64
            };
            products / b.dot_slots.max(1) as f64
        }
        (Dtype::I8, KernelKind::Channelwise) if spec.has_weights() => 0.5,
        _ => 1.0,
    };
    let fma_rate = r.flops / 2.0 * per_fma;
    let d = match spec.dtype {
        Dtype::F32 => 0,
        Dtype::I8 => 1,
    };
    let tiles = oh * output.1.div_ceil(o_wb) as f64 * (channels / b.tc.max(1) as f64);
    // A one-column row (a one-pixel layer) runs its tile one column wide.
    let rate = if output.1 == 1 {
        b.one_column_rate
    } else {
        b.rate
    };
    // Each tile zeroes, finishes and stores its accumulators. An i8
    // residual layer's STORE requantizes each output four times, not once
    // (its conv's output, both ADD inputs and their sum: TFLite's ADD).
    let finish = match spec.dtype {
        Dtype::I8 if spec.residual => I8_ADD_STEPS,
        _ => 1.0,
    };
    let compute = computed_macs / (fma_rate * rate.clamp(1e-3, 1.0) * r.efficiency[d])
        + tiles * b.accumulators as f64 * r.tile[d] * finish;

    let elem = match spec.dtype {
        Dtype::F32 => 4.0,
        Dtype::I8 => 1.0,
    };
    // Lanes stored per pixel: whole blocks, or one narrower block.
    let stored = |c: usize| (c.div_ceil(crate::CB) * width(c)) as f64;
    let weights = if spec.has_weights() {
        channels * per_output
    } else {
        0.0
    };
    let x = (input.0 * input.1) as f64 * stored(spec.in_channels());
    let y = oh * ow * stored(spec.out_channels());
    let bytes = (weights + x + y) * elem;
    let (bw, level) = level_of(r, bytes);
    let (weights_bw, weights_level) = level_of(r, bytes.max(pass_bytes as f64));
    let (weights, activations) = (weights * elem / weights_bw, (x + y) * elem / bw);
    let memory = weights + activations;
    let level = if weights > activations {
        weights_level
    } else {
        level
    };

    let work = compute.max(memory);
    let bound = if r.call > work {
        Bound::Call
    } else if memory > compute {
        level
    } else if rate < 0.999 {
        Bound::Loads
    } else {
        Bound::Fma
    };
    Estimate {
        computed_macs,
        bytes,
        tiles,
        compute,
        memory,
        seconds: work + r.call,
        bound,
    }
}

/// The bandwidth of the smallest level that holds `bytes`, and its name.
fn level_of(r: &Rates, bytes: f64) -> (f64, Bound) {
    if bytes <= r.l1_bytes as f64 {
        (r.l1, Bound::L1)
    } else if bytes <= r.l2_bytes as f64 {
        (r.l2, Bound::L2)
    } else {
        (r.memory, Bound::Memory)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Rates = Rates {
        flops: 200e9,
        l1: 200e9,
        l2: 100e9,
        memory: 10e9,
        l1_bytes: 48 << 10,
        l2_bytes: 1 << 20,
        call: 0.1e-6,
        tile: [0.0; 2],
        efficiency: [1.0, 1.0],
    };

    #[test]
    fn a_fully_connected_layer_streams_its_weights_from_l2() {
        // AD's 640 -> 128 layer: 327 KB of f32 weights, 82 k MACs.
        let spec = LayerSpec::new(1, 1, 640, 128, 1);
        let tile = Tile {
            o_wb: 3,
            tc: 64,
            rate: 0.75,
            accumulators: 12,
            int8_dot: 4,
            dot_slots: 1,
            folds: false,
            one_column_rate: 0.75,
        };
        let e = estimate(&spec, &tile, (1, 1), (1, 1), &R);
        assert_eq!(e.bound, Bound::L2);
        let bytes = (640.0 * 128.0 + 640.0 + 128.0) * 4.0;
        assert_eq!(e.bytes, bytes);
        assert!((e.seconds - (bytes / R.l2 + R.call)).abs() < 1e-15);
        // In a network of 4 MB the weights come from memory, the input
        // and output (just written) still from L2.
        let cold = estimate_in(&spec, &tile, (1, 1), (1, 1), &R, 4 << 20);
        assert_eq!(cold.bound, Bound::Memory);
        let weights = 640.0 * 128.0 * 4.0;
        let want = weights / R.memory + (bytes - weights) / R.l2 + R.call;
        assert!((cold.seconds - want).abs() < 1e-15);
        // int8 moves a quarter of the bytes.
        let e8 = estimate(
            &LayerSpec {
                dtype: Dtype::I8,
                ..spec
            },
            &tile,
            (1, 1),
            (1, 1),
            &R,
        );
        assert_eq!(e8.bytes, bytes / 4.0);
        assert_eq!(e8.bound, Bound::L2);
    }

    #[test]
    fn a_one_pixel_layer_runs_at_its_tile_s_one_column_rate() {
        let tile = Tile {
            o_wb: 6,
            tc: 16,
            rate: 1.0,
            accumulators: 12,
            int8_dot: 4,
            dot_slots: 1,
            folds: false,
            one_column_rate: 0.25,
        };
        // 32 KB of weights, from L1 faster than the loads feed the FMAs.
        let small = LayerSpec::new(1, 1, 64, 128, 1);
        let e = estimate(&small, &tile, (1, 1), (1, 1), &R);
        assert_eq!(e.compute, e.computed_macs / (100e9 * 0.25));
        assert_eq!(e.bound, Bound::Loads);
        // Two pixels run the whole tile's rate.
        let e = estimate(&small, &tile, (1, 2), (1, 2), &R);
        assert_eq!(e.compute, e.computed_macs / 100e9);
    }

    #[test]
    fn a_folded_one_channel_layer_sums_filter_columns_per_step() {
        // DS-CNN's int8 stem: per step, one of four lanes real, or four
        // taps of a filter row once folded; a 5-wide row, two steps.
        let stem = LayerSpec {
            dtype: Dtype::I8,
            ..LayerSpec::new(10, 4, 1, 64, 1)
        };
        let tile = |folds| Tile {
            o_wb: 8,
            tc: 32,
            rate: 1.0,
            accumulators: 16,
            int8_dot: 4,
            dot_slots: 1,
            folds,
            one_column_rate: 1.0,
        };
        let (plain, folded) = (
            estimate(&stem, &tile(false), (49, 10), (25, 5), &R),
            estimate(&stem, &tile(true), (49, 10), (25, 5), &R),
        );
        assert_eq!(plain.computed_macs, folded.computed_macs);
        assert!((plain.compute / folded.compute - 4.0).abs() < 1e-12);
        let wide = LayerSpec::new(3, 5, 1, 16, 1);
        let wide = LayerSpec {
            dtype: Dtype::I8,
            ..wide
        };
        let (plain, folded) = (
            estimate(&wide, &tile(false), (9, 9), (7, 5), &R),
            estimate(&wide, &tile(true), (9, 9), (7, 5), &R),
        );
        assert!((plain.compute / folded.compute - 2.5).abs() < 1e-12);
    }

    #[test]
    fn padding_lanes_and_edge_columns_are_computed() {
        // 8 channels are stored `width(8)` lanes wide (a 16-lane block on
        // x86-64, 8 lanes on Arm): a tile of that width computes them all.
        // A 1x1 layer's 2 x 5 pixels run as one row of 10: four 3-wide
        // tiles, the last moved left (12 columns).
        let spec = LayerSpec::new(1, 1, 8, 8, 1);
        let tc = width(8);
        let tile = Tile {
            o_wb: 3,
            tc,
            rate: 0.5,
            accumulators: 3,
            int8_dot: 4,
            dot_slots: 1,
            folds: false,
            one_column_rate: 0.5,
        };
        let e = estimate(&spec, &tile, (2, 5), (2, 5), &R);
        assert_eq!(e.computed_macs, 12.0 * tc as f64 * 8.0);
        assert_eq!(e.tiles, 4.0);
        assert_eq!(e.compute, e.computed_macs / (100e9 * 0.5));
        // 1-2 k MACs: the call cost dominates.
        assert_eq!(e.bound, Bound::Call);
    }

    #[test]
    fn a_row_of_a_3x3_layer_recomputes_columns_unless_it_adds_a_residual() {
        // 2 rows of 5 columns in 3-wide tiles: two tiles per row, the
        // second moved left (6 columns), or, adding a residual in place,
        // running its own 2 columns.
        let spec = LayerSpec {
            padding: crate::Padding::Same,
            ..LayerSpec::new(3, 3, 16, 16, 1)
        };
        let tile = Tile {
            o_wb: 3,
            tc: 16,
            rate: 1.0,
            accumulators: 3,
            int8_dot: 4,
            dot_slots: 1,
            folds: false,
            one_column_rate: 0.5,
        };
        let e = estimate(&spec, &tile, (2, 5), (2, 5), &R);
        assert_eq!(e.computed_macs, 2.0 * 6.0 * 16.0 * 9.0 * 16.0);
        assert_eq!(e.tiles, 4.0);
        let res = LayerSpec {
            residual: true,
            ..spec
        };
        let e = estimate(&res, &tile, (2, 5), (2, 5), &R);
        assert_eq!(e.computed_macs, 2.0 * 5.0 * 16.0 * 9.0 * 16.0);
        assert_eq!(e.tiles, 4.0);
    }

    #[test]
    fn i8_depthwise_widens_and_i8_residual_requantizes_four_times() {
        let tile = Tile {
            o_wb: 4,
            tc: 16,
            rate: 1.0,
            accumulators: 4,
            int8_dot: 4,
            dot_slots: 1,
            folds: false,
            one_column_rate: 0.5,
        };
        let r = Rates {
            tile: [1e-9; 2],
            ..R
        };
        let dw = LayerSpec::new(3, 3, 1, 1, 16);
        let dw8 = LayerSpec {
            dtype: Dtype::I8,
            ..dw
        };
        let (f, q) = (
            estimate(&dw, &tile, (10, 8), (8, 8), &r),
            estimate(&dw8, &tile, (10, 8), (8, 8), &r),
        );
        assert_eq!(f.computed_macs, q.computed_macs);
        let fixed = f.tiles * 4.0 * 1e-9;
        assert!((q.compute - fixed - 2.0 * (f.compute - fixed)).abs() < 1e-15);
        // A pool has no products to widen.
        let pool = LayerSpec {
            reduction: crate::Reduction::Max,
            ..dw8
        };
        assert!(!pool.has_weights());
        let p = estimate(&pool, &tile, (10, 8), (8, 8), &r);
        assert!((p.compute - fixed - (f.compute - fixed)).abs() < 1e-15);
        // The residual's STORE: four requantizations per accumulator.
        let conv = LayerSpec {
            dtype: Dtype::I8,
            ..LayerSpec::new(3, 3, 16, 16, 1)
        };
        let res = LayerSpec {
            residual: true,
            ..conv
        };
        let (c, a) = (
            estimate(&conv, &tile, (10, 8), (8, 8), &r),
            estimate(&res, &tile, (10, 8), (8, 8), &r),
        );
        assert_eq!(c.tiles, a.tiles);
        let extra = c.tiles * 4.0 * 1e-9 * (I8_ADD_STEPS - 1.0);
        assert!((a.compute - c.compute - extra).abs() < 1e-15);
    }
}
