//! The analytic register-blocking model (SMaLL §4.2.1, after Low et al.
//! and MEMA's `mn / (m + n)` tile analysis).
//!
//! A kernel keeps an `O_wb x TC` output tile in `O_wb * nv` vector
//! registers (`nv = TC / lanes`) for the whole reduction, so the tile must
//! fit the register file together with the operands it streams:
//!
//! - **broadcast** kernels (convolution, pointwise, FC, group conv): per
//!   input channel and tap, `nv` weight vectors are loaded and each of the
//!   `O_wb` input pixels is broadcast once:
//!   `O_wb * nv + nv + b <= R` (b = 1 broadcast register, 0 where the FMA
//!   takes its broadcast from memory); FMAs per load = `O_wb nv / (O_wb + nv)`.
//! - **channelwise** kernels (depthwise, pooling): per filter row, the
//!   `F_W * nv` weights of the row stay in registers while the
//!   `(O_wb - 1) S_W + F_W` input columns stream through one register:
//!   `O_wb * nv + F_W * nv + 1 <= R` (no weights for max);
//!   operations per load = `O_wb F_W / ((O_wb - 1) S_W + F_W [+ F_W])`.
//!
//! Each tile that fits is rated by the fraction of the FMA rate the load
//! ports can feed, `min(1, loads_per_cycle * ops_per_load / fma_per_cycle)`,
//! and, on a core that issues fewer instructions per cycle than its FMA
//! and load ports could take (Cortex-M: one), by the issue width:
//! `issue_per_cycle * s / (s + 1) / fma_per_cycle` for `s` ops per load.
//! Among the tiles with at least `latency x FMAs-per-cycle` independent
//! accumulators (enough to hide the FMA latency), those within 10 % of the
//! best rate count as equally fast, and the narrowest of them (fewest
//! accumulators, then fewest registers) wins: a narrow tile leaves fewer
//! output columns to the slower edge kernel and leaves the compiler spare
//! registers to schedule loads early. Measured on Zen 4, conv 3x3
//! 48x48x16: AVX-512 with 31 accumulators (the most FMAs per load) ran in
//! 158 us, with 8 in 101 us; AVX2 was flat between 4 and 6 columns. `TC` must
//! divide the layout block `CB`, or be a multiple of `CB` that divides the
//! padded output channels, so tiles never straddle a block boundary badly
//! and no channel tail kernel is needed; an output narrower than `CB`
//! (`geometry::width`) must hold whole tiles on every target the arch
//! compiles for.

use crate::geometry::{CB, NARROW_TARGETS, WHOLE, narrow_of, width_for};
use crate::{KernelKind, LayerSpec, Machine, Reduction};
use core::cmp::Ordering;
use core::fmt;

/// The register blocking chosen for one layer on one arch (SMaLL
/// §4.2.1): each kernel call updates an `O_wb x TC` tile of the output,
/// `TC = G_b * K_b` channels, held in `accumulators` vector registers.
/// `A` names the arch: its name from [`derive()`], the runtime's arch id in
/// a generated layer's `BLOCKING`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Blocking<A = &'static str> {
    /// The arch this blocking is for.
    pub arch: A,
    /// Kernel family.
    pub kind: KernelKind,
    /// A broadcast kernel that streams input columns through the filter
    /// row held in registers (`F_W > 1`), instead of one tap at a time.
    /// Channelwise kernels always stream columns.
    pub columns: bool,
    /// Output pixels along the width per tile, `O_wb`.
    pub o_wb: usize,
    /// Groups per tile, `G_b` (channelwise kernels: channels per tile).
    pub g_b: usize,
    /// Output channels per group per tile, `K_b`.
    pub k_b: usize,
    /// Input channels per kernel step, `F_Cb`.
    pub f_cb: usize,
    /// Output channels per tile, `TC` (`G_b * K_b` for ungrouped layers).
    pub tc: usize,
    /// Vector registers across the tile's channels (`TC / lanes`).
    pub vectors: usize,
    /// Accumulator registers (`O_wb * vectors`).
    pub accumulators: usize,
    /// Registers the tile uses in total (accumulators, weights, inputs).
    pub registers: usize,
    /// Operations per load.
    pub ops_per_load: f64,
    /// Fraction of the FMA rate the load ports (and issue width) can feed,
    /// times the fraction of the tile's lanes that hold output channels
    /// ([`useful_lanes`]): the objective.
    pub rate: f64,
    /// The kernel multiply-adds with one fused `Simd::fma` (see
    /// [`unfuses`]); false: a multiply, then an add.
    pub fused: bool,
}

/// One tile the model considers.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    nv: usize,
    o_wb: usize,
    columns: bool,
    regs: usize,
    score: f64,
    rate: f64,
}

impl Candidate {
    fn accumulators(&self) -> usize {
        self.o_wb * self.nv
    }
}

/// Derives the blocking of `spec` on the arch `arch` whose numbers are `m`.
pub fn derive<A>(arch: A, m: &Machine, spec: &LayerSpec) -> Blocking<A> {
    let m = &for_dtype(m, spec);
    let c = pick(m, spec, |_| true).unwrap_or(Candidate {
        nv: 1,
        o_wb: 1,
        columns: false,
        regs: 3,
        score: 0.0,
        rate: 0.0,
    });
    let tc = c.nv * m.lanes;
    let (g_b, k_b, f_cb) = match spec.kind() {
        KernelKind::Channelwise => (tc, 1, 1),
        KernelKind::Broadcast if spec.g == 1 => (1, tc, CB),
        KernelKind::Broadcast => (tc.div_ceil(spec.k).max(1), tc.min(spec.k), CB),
    };
    Blocking {
        arch,
        kind: spec.kind(),
        columns: c.columns,
        o_wb: c.o_wb,
        g_b,
        k_b,
        f_cb,
        tc,
        vectors: c.nv,
        accumulators: c.accumulators(),
        registers: c.regs,
        ops_per_load: c.score,
        rate: c.rate,
        fused: !unfuses(m, spec),
    }
}

/// True if an `f32` multiply-add layer multiplies, then adds (two
/// instructions, `Simd::mul` and `Simd::add`) instead of one fused
/// `Simd::fma`: where the arch says that costs fewer cycles
/// ([`Machine::fuses`]: Cortex-M4, VMUL 1 + VADD 1 against VFMA 3), for
/// channelwise kernels (depthwise), whose tiles leave most registers
/// free. Broadcast kernels stay fused: their unrolled block of input
/// lanes lets LLVM's scheduler hoist many products ahead of their adds,
/// and they spilled an accumulator per multiply-add even with a
/// register free for every accumulator's product (DS-CNN on the M4:
/// 13.4 M instructions, 19.8 M estimated cycles against 6.8 M and
/// 14.4 M fused; ResNet-8 43.3 M cycles against 49.2 M, but 35.1 M
/// instructions against 19.6 M). Unfused depthwise layers took DS-CNN
/// from 14.39 M to 13.91 M cycles and VWW 0.25 from 37.25 M to 36.26 M.
pub fn unfuses(m: &Machine, spec: &LayerSpec) -> bool {
    spec.dtype == crate::Dtype::F32
        && spec.reduction == Reduction::Fma
        && spec.kind() == KernelKind::Channelwise
        && !m.fuses()
}

/// The machine as a layer of `spec`'s element type sees it: an `i8`
/// broadcast kernel's activations pass through a register (the arch's
/// `Dot::group` offsets or widens them) before the dot product, so no
/// broadcast comes from memory. Each of its steps reduces `int8_dot` input
/// channels, which changes the work per step but not the register count
/// or the per-step load/operation balance the model rates.
///
/// A kernel that steps over its input lanes one at a time
/// ([`int8_lane_steps`]) fetches an operand with one load and keeps it
/// in one register.
pub fn for_dtype(m: &Machine, spec: &LayerSpec) -> Machine {
    match spec.dtype {
        crate::Dtype::F32 => *m,
        crate::Dtype::I8 => {
            let lane_steps = int8_lane_steps(m, spec);
            Machine {
                broadcast_from_memory: false,
                vector_regs: m.int8_regs,
                fma_latency: match spec.kind() {
                    KernelKind::Broadcast => m.int8_latency,
                    KernelKind::Channelwise => m.int8_mac_latency,
                },
                // The `i8` tiles were measured with the one slack.
                column_operand_latency: m.operand_latency,
                int8_operand_regs: if lane_steps { 1 } else { m.int8_operand_regs },
                int8_load_cost: if lane_steps { 1 } else { m.int8_load_cost },
                ..*m
            }
        }
    }
}

/// True if the `i8` broadcast kernel of `spec` on `m` multiplies its input
/// lanes one at a time (widened bytes, one multiply-add per product)
/// instead of in groups of the dot product's `int8_dot` lanes: on a
/// one-lane arch whose dot product widens a group into several registers
/// (`int8_operand_regs > 1`, Cortex-M4: a word, two `SXTB16`s, two
/// `SMLAD`s), when the layer's input holds at most half a group of
/// channels. DS-CNN's 1-channel stem would otherwise multiply three zero
/// weights with every input: per tap of a 2x2 tile 20 instructions
/// where lane steps take 8 (four `LDRSB`, four `MLA`).
pub fn int8_lane_steps(m: &Machine, spec: &LayerSpec) -> bool {
    spec.dtype == crate::Dtype::I8
        && spec.kind() == KernelKind::Broadcast
        && m.lanes == 1
        && m.int8_operand_regs > 1
        && 2 * spec.in_channels() <= m.int8_dot
}

/// True if the `i8` broadcast kernel of `spec` on `m` folds each filter
/// row's columns into its dot-product groups: a layer of one input
/// channel (a spectrogram or a grey image) wider than one column, on an
/// arch whose dot product sums several lanes. Its pixels hold one real
/// lane of a group, so a dot product per tap would multiply the padding
/// lanes' zero weights with every input; folded, a group holds `dot`
/// neighbouring window columns, and a filter row of `F_W` taps takes
/// `ceil(F_W / dot)` dot products. The weights are packed for it
/// ([`crate::geometry::folded_at`]). DS-CNN's 10x4 stem: 40 dot products
/// per output pixel and channel vector become 10.
pub fn int8_folds_columns(m: &Machine, spec: &LayerSpec) -> bool {
    spec.dtype == crate::Dtype::I8
        && spec.kind() == KernelKind::Broadcast
        && spec.has_weights()
        && spec.in_channels() == 1
        && spec.fw > 1
        && m.int8_dot_for(spec) > 1
        && !int8_lane_steps(m, spec)
}

/// Registers one broadcast operand (an input or a weight vector) of
/// `spec` takes on `m`.
fn operand_regs(m: &Machine, spec: &LayerSpec) -> usize {
    match spec.dtype {
        crate::Dtype::F32 => 1,
        crate::Dtype::I8 => m.int8_operand_regs,
    }
}

/// True if output tiles of `tc` channels fit the output tensor's layout
/// on every target `m` compiles for (its `target_arch`'s
/// [`NARROW`](crate::geometry::NARROW), or every target's for an arch
/// without one, the portable reference): a tile lies in one channel block
/// (`tc` divides the pixel's lanes, [`width_for`]), is one vector over a
/// pixel narrower than a vector (read and written in part), or, in a
/// broadcast kernel, covers whole blocks of a tensor of whole tiles.
fn tc_fits(m: &Machine, spec: &LayerSpec, tc: usize) -> bool {
    let out = spec.out_channels();
    let out_pad = out.div_ceil(CB) * CB;
    let channelwise = spec.kind() == KernelKind::Channelwise;
    let target = m.cfg.iter().find(|(k, _)| *k == "target_arch");
    // Every target's `NARROW`, or only `m`'s target's.
    let mut layouts = core::iter::once(WHOLE).chain(NARROW_TARGETS.iter().map(|&(_, n)| n));
    layouts.all(|n| {
        if target.is_some_and(|&(_, arch)| narrow_of(arch) != n) {
            return true;
        }
        let w = width_for(out, n);
        w.is_multiple_of(tc)
            || (w < m.lanes && tc == m.lanes)
            || (!channelwise && w == CB && tc.is_multiple_of(CB) && out_pad.is_multiple_of(tc))
    })
}

/// Calls `f` with every tile that fits the register file, in order of
/// `nv`, then form, then `O_wb`.
fn each(m: &Machine, spec: &LayerSpec, f: &mut impl FnMut(Candidate)) {
    let r = m.vector_regs;
    for nv in 1..=r {
        let tc = nv * m.lanes;
        if !tc_fits(m, spec, tc) {
            continue;
        }
        for &columns in forms(spec) {
            let other = other_registers(m, spec, nv, columns);
            for o_wb in 1..=r.saturating_sub(other) / nv {
                let score = ops_per_load(spec, nv, o_wb, columns);
                f(Candidate {
                    nv,
                    o_wb,
                    columns,
                    regs: o_wb * nv + other,
                    score,
                    rate: rate(m, spec, score) * useful_lanes(spec, tc),
                });
            }
        }
    }
}

/// The chosen tile among the candidates `keep` admits: of those with
/// enough accumulators to hide the FMA latency (if any has), the
/// narrowest ([`narrower`]) within [`NEAR`] of the best rate.
fn pick(m: &Machine, spec: &LayerSpec, keep: impl Fn(&Candidate) -> bool) -> Option<Candidate> {
    let hides = |c: &Candidate| c.accumulators() >= accumulators_to_hide(m, spec, c.columns);
    let mut any_hides = false;
    each(m, spec, &mut |c| any_hides |= keep(&c) && hides(&c));
    let eligible = |c: &Candidate| keep(c) && (!any_hides || hides(c));
    let mut best = 0.0;
    each(m, spec, &mut |c| {
        if eligible(&c) {
            best = f64::max(best, c.rate);
        }
    });
    let mut chosen: Option<Candidate> = None;
    each(m, spec, &mut |c| {
        let better = chosen.is_none_or(|x| narrower(m, spec, &c, &x) == Ordering::Less);
        if eligible(&c) && c.rate >= NEAR * best && better {
            chosen = Some(c);
        }
    });
    chosen
}

/// The order among equally fast tiles, narrowest first: fewest
/// accumulators; then, for broadcast kernels, the most operations per
/// load and the fewest output columns (a narrow tile wastes less of a
/// small output row); then fewest registers and the widest channel tile.
///
/// Operations per load come before columns: the model's rate is capped at
/// the FMA peak, but of two tiles at that cap the one loading less runs
/// faster where loads compete with the FMAs' operands. Measured on an
/// Intel Xeon VM (2026-11-28, AVX-512, 16 accumulators, median µs of
/// `mlperf_tiny --per-layer`): VWW 0.25's 6x6 128->128 pointwise layer
/// took 9.4 with 2 columns x 128 channels (1.6 FMA/load) and 6.6 with
/// 4 x 64 (2.0); its 3x3 256->256 one 16.1 with 1 x 256 and 7.8 with
/// 4 x 64 (8.3 and 8.9 with the 12-accumulator 3 x 64 before).
///
/// On a core whose issue width binds (`issue_per_cycle` below its FMA plus
/// load ports: the single-issue Cortex-M4), a broadcast kernel's widest
/// channel tile comes first: what each channel tile repeats (its input
/// loads, pointers and loop) costs instructions one for one there. Measured
/// on the M4 (QEMU instructions, ResNet-8): 4x4 column-streamed 19.1 M,
/// 6x2 column-streamed 24.3 M, 8x2 22.0 M, 4x4 per tap 21.3 M.
fn narrower(m: &Machine, spec: &LayerSpec, a: &Candidate, b: &Candidate) -> Ordering {
    use Ordering::Equal;
    let (by_tc, by_width) = match (spec.kind(), m.issue_bound()) {
        (KernelKind::Channelwise, _) => (Equal, Equal),
        (KernelKind::Broadcast, bound) => (
            if bound { b.nv.cmp(&a.nv) } else { Equal },
            b.score.total_cmp(&a.score).then(a.o_wb.cmp(&b.o_wb)),
        ),
    };
    by_tc
        .then(a.accumulators().cmp(&b.accumulators()))
        .then(by_width)
        .then((a.regs, usize::MAX - a.nv).cmp(&(b.regs, usize::MAX - b.nv)))
}

/// Independent accumulators a tile of `spec` needs. `latency x FMAs per
/// cycle` keeps every pipe busy only if each FMA issues the cycle its
/// operand is ready; a broadcast kernel's FMAs also wait for the operands
/// they load, so it keeps `FMAs per cycle x (latency + operand latency)`
/// ([`Machine::operand_latency`]; a column-streamed tile, `columns`,
/// [`Machine::column_operand_latency`]; a pointwise layer's,
/// [`Machine::flat_operand_latency`]). Measured on Zen 5 (AVX-512, latency
/// 4 x 2): 8 register-only FMA chains ran at 90 % of 12, and conv 3x3
/// 48x48x16 took 49 us with an 8-column tile and 43 us with 12; on an
/// Intel Xeon a 1x1 layer ran 20 % faster with 24 accumulators than with
/// 12. Channelwise kernels are bound by their loads and per-tile work
/// instead, and a wider tile only wastes more of a narrow row (depthwise
/// 6x6x512: 3.3 us with 8 columns, 4.1 us with 12).
pub fn accumulators_to_hide(m: &Machine, spec: &LayerSpec, columns: bool) -> usize {
    match spec.kind() {
        KernelKind::Channelwise => m.fma_latency * m.fma_per_cycle,
        KernelKind::Broadcast => {
            m.fma_per_cycle * (m.fma_latency + operand_latency(m, spec, columns))
        }
    }
}

/// [`Machine::operand_latency`], or for a column-streamed tile
/// [`Machine::column_operand_latency`], or for a pointwise layer's tile
/// [`Machine::flat_operand_latency`].
fn operand_latency(m: &Machine, spec: &LayerSpec, columns: bool) -> usize {
    if columns {
        m.column_operand_latency
    } else if spec.pointwise() {
        m.flat_operand_latency
    } else {
        m.operand_latency
    }
}

/// Fraction of the FMA rate a tile doing `score` FMAs per load attains:
/// bound by the load ports (`loads_per_cycle x score` FMAs per cycle) and
/// by the issue width (`s / (s + 1)` of the issued instructions are FMAs).
fn rate(m: &Machine, spec: &LayerSpec, score: f64) -> f64 {
    let fmas = m.fma_per_cycle as f64;
    let by_loads = m.loads_per_cycle as f64 * score;
    let load_cost = match spec.dtype {
        crate::Dtype::F32 => 1.0,
        crate::Dtype::I8 => m.int8_load_cost as f64,
    };
    let by_issue = m.issue_per_cycle as f64 * score / (score + load_cost);
    f64::min(f64::min(by_loads, by_issue) / fmas, 1.0)
}

/// The attainable rate of blocking `b`'s tile run `o_wb` columns wide, as
/// [`derive()`] rates its candidates (`b.rate` at `b.o_wb`): a row narrower
/// than the tile loads the same weights for fewer multiply-adds. The cost
/// model charges a one-pixel layer (a fully connected one) this rate at
/// one column: AD's 128 -> 128 layers on AVX2 (6 x 16 tiles) feed 2
/// FMAs from 3 loads.
pub fn rate_at<A>(m: &Machine, spec: &LayerSpec, b: &Blocking<A>, o_wb: usize) -> f64 {
    let m = &for_dtype(m, spec);
    let nv = b.vectors.max(1);
    rate(m, spec, ops_per_load(spec, nv, o_wb.max(1), b.columns)) * useful_lanes(spec, b.tc)
}

/// Fraction of the lanes of tiles `tc` channels wide that hold output
/// channels: the layer's channels over their count rounded up to whole
/// tiles. A tile wider than the layer computes padding lanes at the same
/// cost: VWW 0.25's 3 -> 8 stem in 16-channel tiles (the 12 x 8 tile of
/// 8 channels had fewer operations per load) did half its work on
/// padding.
pub fn useful_lanes(spec: &LayerSpec, tc: usize) -> f64 {
    let out = spec.out_channels();
    out as f64 / out.next_multiple_of(tc) as f64
}

/// How an arch's `i8` dot product reduces, for [`explain`].
fn dot_form(m: &Machine, spec: &LayerSpec) -> &'static str {
    if int8_folds_columns(m, spec) {
        return "one input channel: each step sums neighbouring filter columns of a row per lane, as many as the dot product takes (folded; Dot::group_strided)";
    }
    if m.int8_dot_for(spec) != m.int8_dot {
        return "a thin layer (fewer input channels than int8_dot): the arch's narrower dot product, each step summing int8_thin_dot input channels per lane (AVX2: i16 x i16 pairs -> i32)";
    }
    match (m.int8_dot, m.int8_x_offset) {
        (4, 0) if m.int8_operand_regs == 2 => {
            "each step sums 4 input channels per lane as two i16 pairs (i8 widened by SXTB16, two SMLADs)"
        }
        (4, 0) if m.int8_weight_min > i8::MIN => {
            "each step sums 4 input channels per lane (|x| as u8 x w with x's sign -> i16 pairs -> i32; weights in -127..=127)"
        }
        (4, 0) => "each step sums 4 input channels per lane (i8 x i8 -> i32, 4-wide dot product)",
        (4, _) => {
            "each step sums 4 input channels per lane (u8 x i8 -> i32 with activations offset by 128, compensated in the bias)"
        }
        (2, _) => "each step sums 2 input channels per lane (i16 x i16 pairs -> i32)",
        _ => "each step multiplies 1 input channel per lane (i8 widened to i32)",
    }
}

/// Tiles whose attainable rate is within this factor of the best count as
/// equally fast; among them the narrowest wins.
const NEAR: f64 = 0.9;

/// The kernel forms a layer can take: per tap (`false`) for every
/// broadcast kernel, and column-streamed (`true`) when the filter is wider
/// than one column; channelwise kernels always stream columns.
fn forms(spec: &LayerSpec) -> &'static [bool] {
    let broadcast = spec.kind() == KernelKind::Broadcast;
    if broadcast && spec.reduction == Reduction::Fma && spec.fw > 1 {
        &[false, true]
    } else {
        &[false]
    }
}

/// Registers a kernel needs besides its `O_wb * nv` accumulators.
fn other_registers(m: &Machine, spec: &LayerSpec, nv: usize, columns: bool) -> usize {
    let op = operand_regs(m, spec);
    match (spec.kind(), spec.reduction) {
        // One filter row of weights and the streamed input column.
        (KernelKind::Channelwise, Reduction::Fma) => spec.fw * nv + 1,
        (KernelKind::Channelwise, _) => 1,
        // One filter row of weights and the streamed input column, and in
        // `f32` one more: LLVM loads the next row's weights while the last
        // columns of this one still multiply. With none to spare, AVX2's
        // 12 x 8 tile (16 of 16 registers) spilled to the stack in every
        // row and ran 3x3 16 -> 16 layers about 30 % slower than the
        // 6 x 16 per-tap tile (AMD EPYC Zen 3; see the book, Performance).
        // `i8` tiles keep their measured budget (`Machine::int8_regs`:
        // AVX2's column-streamed 4 x 16 uses its 15 and ran fastest).
        (KernelKind::Broadcast, _) if columns => {
            (spec.fw * nv + 1) * op + usize::from(spec.dtype == crate::Dtype::F32)
        }
        // nv weight vectors and the broadcast input (unless it comes from memory).
        (KernelKind::Broadcast, _) => (nv + usize::from(!m.broadcast_from_memory)) * op,
    }
}

/// Operations per load of a tile `O_wb` wide and `nv` vectors deep.
fn ops_per_load(spec: &LayerSpec, nv: usize, o_wb: usize, columns: bool) -> f64 {
    let (o, fw, sw, n) = (o_wb as f64, spec.fw as f64, spec.sw as f64, nv as f64);
    match (spec.kind(), spec.reduction) {
        (KernelKind::Channelwise, Reduction::Fma) => o * fw / ((o - 1.0) * sw + 2.0 * fw),
        (KernelKind::Channelwise, _) => o * fw / ((o - 1.0) * sw + fw),
        // Per filter row and lane: F_W nv weights and the span's broadcasts.
        (KernelKind::Broadcast, _) if columns => o * fw * n / (fw * n + (o - 1.0) * sw + fw),
        (KernelKind::Broadcast, _) => (o_wb * nv) as f64 / (o_wb + nv) as f64,
    }
}

/// Writes how the blocking `b` of `spec` on the arch `name` (numbers `m`)
/// was derived, with the best tile of every channel width and form
/// considered: the text of a generated layer's `explain()`.
pub fn explain(
    out: &mut impl fmt::Write,
    name: &str,
    m: &Machine,
    spec: &LayerSpec,
    b: &Blocking<impl Sized>,
) -> fmt::Result {
    let m = &for_dtype(m, spec);
    let kind = match (b.kind, b.columns) {
        (KernelKind::Channelwise, _) => "channelwise",
        (KernelKind::Broadcast, true) => "broadcast (column-streamed)",
        (KernelKind::Broadcast, false) => "broadcast (per tap)",
    };
    write!(
        out,
        "{name}: {kind} kernel, tile O_wb={o} x TC={tc} channels ({nv} vector(s) of {l} lanes): \
         {acc} accumulators, {regs} of {r} registers, {score:.2} ops per load ({pct:.0}% of the FMA rate at {loads} loads/cycle",
        o = b.o_wb,
        tc = b.tc,
        nv = b.vectors,
        l = m.lanes,
        acc = b.accumulators,
        regs = b.registers,
        r = m.vector_regs,
        score = b.ops_per_load,
        pct = 100.0 * b.rate,
        loads = m.loads_per_cycle,
    )?;
    if m.issue_bound() {
        write!(out, ", {} instructions/cycle", m.issue_per_cycle)?;
    }
    match spec.kind() {
        KernelKind::Channelwise => write!(out, "); latency {}", m.fma_latency)?,
        KernelKind::Broadcast => write!(
            out,
            "); latency ({} + {} for the loaded operands)",
            m.fma_latency,
            operand_latency(m, spec, b.columns)
        )?,
    }
    writeln!(
        out,
        " x {rate} FMA/cycle needs {need} independent accumulators.",
        rate = m.fma_per_cycle,
        need = accumulators_to_hide(m, spec, b.columns),
    )?;
    if !b.fused {
        writeln!(
            out,
            "    f32: multiply, then add (unfused: {mul_add} cycles against {fma} for a fused multiply-add).",
            mul_add = m.mul_add_cycles,
            fma = m.fma_cycles,
        )?;
    }
    if spec.dtype == crate::Dtype::I8 {
        let how = match spec.kind() {
            KernelKind::Broadcast => dot_form(m, spec),
            KernelKind::Channelwise => "inputs and weights widened to i32 lanes",
        };
        writeln!(
            out,
            "    i8: i32 accumulators in the same {l} lanes; {how}; per-channel requantization in STORE.",
            l = m.lanes,
        )?;
    }
    let mut last: Option<(usize, bool)> = None;
    let mut result = Ok(());
    each(m, spec, &mut |c| {
        if last == Some((c.nv, c.columns)) || result.is_err() {
            return;
        }
        last = Some((c.nv, c.columns));
        let Some(best) = pick(m, spec, |x| x.nv == c.nv && x.columns == c.columns) else {
            return;
        };
        result = write_candidate(out, m, spec, &best);
    });
    result
}

/// One `candidate` line of [`explain`].
fn write_candidate(
    out: &mut impl fmt::Write,
    m: &Machine,
    spec: &LayerSpec,
    c: &Candidate,
) -> fmt::Result {
    let tc = c.nv * m.lanes;
    write!(
        out,
        "    candidate nv={nv} (TC={tc}){form}: O_wb={o}, {acc} acc, {regs}/{r} regs, {s:.2} ops/load, \
         {pct:.0}% of the FMA rate",
        nv = c.nv,
        form = if c.columns { " column-streamed" } else { "" },
        o = c.o_wb,
        acc = c.accumulators(),
        regs = c.regs,
        r = m.vector_regs,
        s = c.score,
        pct = 100.0 * c.rate,
    )?;
    let useful = useful_lanes(spec, tc);
    if useful < 1.0 {
        write!(
            out,
            " ({:.0}% of its lanes output channels)",
            100.0 * useful
        )?;
    }
    if c.accumulators() < accumulators_to_hide(m, spec, c.columns) {
        write!(out, ", too few accumulators to hide the latency")?;
    }
    writeln!(out)
}
