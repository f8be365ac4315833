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
//! and no channel tail kernel is needed.

use crate::spec::{Reduction, Spec};
use arch_defs::{ArchParams, CB};

/// The blocking chosen for one layer on one arch.
#[derive(Debug, Clone, PartialEq)]
pub struct Blocking {
    pub channelwise: bool,
    /// A broadcast kernel that streams input columns through the filter
    /// row held in registers (`F_W > 1`), instead of one tap at a time.
    pub columns: bool,
    /// Vector registers across the tile's channels.
    pub nv: usize,
    /// Output columns per tile.
    pub o_wb: usize,
    /// Registers used in total.
    pub regs: usize,
    /// Operations per load.
    pub score: f64,
    /// Fraction of the FMA rate the load ports can feed (the objective).
    pub rate: f64,
    /// One line per candidate considered, for `explain()`.
    pub candidates: Vec<String>,
}

impl Blocking {
    pub fn accumulators(&self) -> usize {
        self.o_wb * self.nv
    }
    pub fn tc(&self, arch: &ArchParams) -> usize {
        self.nv * arch.lanes
    }
}

/// Derives the blocking of `spec` on `arch`.
pub fn derive(arch: &ArchParams, spec: &Spec) -> Blocking {
    let r = arch.vector_regs;
    let out_pad = spec.out_channels().div_ceil(CB) * CB;
    let hide = accumulators_to_hide(arch, spec);
    let mut all = Vec::new();
    for nv in 1..=r {
        let tc = nv * arch.lanes;
        let tc_ok = if spec.channelwise() {
            CB.is_multiple_of(tc)
        } else {
            CB.is_multiple_of(tc) || (tc.is_multiple_of(CB) && out_pad.is_multiple_of(tc))
        };
        if !tc_ok || tc > out_pad {
            continue;
        }
        for &columns in forms(spec) {
            let other = other_registers(arch, spec, nv, columns);
            for o_wb in 1..=r.saturating_sub(other) / nv {
                let score = ops_per_load(spec, nv, o_wb, columns);
                let rate = rate(arch, score);
                let (channelwise, regs) = (spec.channelwise(), o_wb * nv + other);
                all.push(Blocking {
                    channelwise,
                    columns,
                    nv,
                    o_wb,
                    regs,
                    score,
                    rate,
                    candidates: Vec::new(),
                });
            }
        }
    }
    let hides = |b: &Blocking| b.accumulators() >= hide;
    let pick = |set: Vec<&Blocking>| -> Option<Blocking> {
        let set: Vec<&Blocking> = if set.iter().any(|b| hides(b)) {
            set.into_iter().filter(|b| hides(b)).collect()
        } else {
            set
        };
        let best = set.iter().map(|b| b.rate).fold(0.0, f64::max);
        set.into_iter()
            .filter(|b| b.rate >= NEAR * best)
            .min_by(|a, b| narrower(arch, a, b))
            .cloned()
    };
    let mut lines = Vec::new();
    let mut kinds: Vec<(usize, bool)> = all.iter().map(|b| (b.nv, b.columns)).collect();
    kinds.dedup();
    for (nv, columns) in kinds {
        let same = |b: &&Blocking| b.nv == nv && b.columns == columns;
        if let Some(b) = pick(all.iter().filter(same).collect()) {
            lines.push(format!(
                "nv={nv} (TC={tc}){form}: O_wb={o}, {acc} acc, {regs}/{r} regs, {s:.2} ops/load, \
                 {pct:.0}% of the FMA rate{lat}",
                form = if columns { " column-streamed" } else { "" },
                tc = nv * arch.lanes,
                o = b.o_wb,
                acc = b.accumulators(),
                regs = b.regs,
                s = b.score,
                pct = 100.0 * b.rate,
                lat = if hides(&b) {
                    ""
                } else {
                    ", too few accumulators to hide the latency"
                }
            ));
        }
    }
    let mut b = pick(all.iter().collect()).unwrap_or(Blocking {
        channelwise: spec.channelwise(),
        columns: false,
        nv: 1,
        o_wb: 1,
        regs: 3,
        score: 0.0,
        rate: 0.0,
        candidates: Vec::new(),
    });
    b.candidates = lines;
    b
}

/// The order among equally fast tiles, narrowest first: fewest
/// accumulators; then, for broadcast kernels, fewest output columns (a
/// narrow tile wastes less of a small output row: 3 columns divide widths
/// 6, 12 and 48) and the most operations per load; then fewest registers
/// and the widest channel tile.
///
/// On a core whose issue width binds (`issue_per_cycle` below its FMA plus
/// load ports: the single-issue Cortex-M4), a broadcast kernel's widest
/// channel tile comes first: what each channel tile repeats (its input
/// loads, pointers and loop) costs instructions one for one there. Measured
/// on the M4 (QEMU instructions, ResNet-8): 4x4 column-streamed 19.1 M,
/// 6x2 column-streamed 24.3 M, 8x2 22.0 M, 4x4 per tap 21.3 M.
fn narrower(arch: &ArchParams, a: &Blocking, b: &Blocking) -> core::cmp::Ordering {
    use core::cmp::Ordering::Equal;
    let issue_bound = arch.issue_per_cycle < arch.fma_per_cycle + arch.loads_per_cycle;
    let (by_tc, by_width) = match (a.channelwise, issue_bound) {
        (true, _) => (Equal, Equal),
        (false, bound) => (
            if bound { b.nv.cmp(&a.nv) } else { Equal },
            a.o_wb.cmp(&b.o_wb).then(b.score.total_cmp(&a.score)),
        ),
    };
    by_tc
        .then(a.accumulators().cmp(&b.accumulators()))
        .then(by_width)
        .then((a.regs, usize::MAX - a.nv).cmp(&(b.regs, usize::MAX - b.nv)))
}

/// Independent accumulators a tile of `spec` needs. `latency x FMAs per
/// cycle` keeps every pipe busy only if each FMA issues the cycle its
/// operand is ready; a broadcast kernel gets half as many again, which
/// leave the scheduler slack for the loads and broadcasts in between.
/// Measured on Zen 5 (AVX-512, latency 4 x 2): 8 register-only FMA
/// chains ran at 90 % of 12, and conv 3x3 48x48x16 took 49 us with an
/// 8-column tile and 43 us with 12. Channelwise kernels are bound by their
/// loads and per-tile work instead, and a wider tile only wastes more of a
/// narrow row (depthwise 6x6x512: 3.3 us with 8 columns, 4.1 us with 12).
pub fn accumulators_to_hide(arch: &ArchParams, spec: &Spec) -> usize {
    let need = arch.fma_latency * arch.fma_per_cycle;
    if spec.channelwise() {
        need
    } else {
        (3 * need).div_ceil(2)
    }
}

/// Fraction of the FMA rate a tile doing `score` FMAs per load attains:
/// bound by the load ports (`loads_per_cycle x score` FMAs per cycle) and
/// by the issue width (`s / (s + 1)` of the issued instructions are FMAs).
fn rate(arch: &ArchParams, score: f64) -> f64 {
    let fmas = arch.fma_per_cycle as f64;
    let by_loads = arch.loads_per_cycle as f64 * score;
    let by_issue = arch.issue_per_cycle as f64 * score / (score + 1.0);
    (by_loads.min(by_issue) / fmas).min(1.0)
}

/// Tiles whose attainable rate is within this factor of the best count as
/// equally fast; among them the narrowest wins.
const NEAR: f64 = 0.9;

/// The kernel forms a layer can take: per tap (`false`) for every
/// broadcast kernel, and column-streamed (`true`) when the filter is wider
/// than one column; channelwise kernels always stream columns.
fn forms(spec: &Spec) -> &'static [bool] {
    if !spec.channelwise() && spec.reduction == Reduction::Fma && spec.fw > 1 {
        &[false, true]
    } else {
        &[false]
    }
}

/// Registers a kernel needs besides its `O_wb * nv` accumulators.
fn other_registers(arch: &ArchParams, spec: &Spec, nv: usize, columns: bool) -> usize {
    match (spec.channelwise(), spec.reduction) {
        // One filter row of weights and the streamed input column.
        (true, Reduction::Fma) => spec.fw * nv + 1,
        (true, _) => 1,
        (false, _) if columns => spec.fw * nv + 1,
        // nv weight vectors and the broadcast input (unless it comes from memory).
        (false, _) => nv + usize::from(!arch.broadcast_from_memory),
    }
}

/// Operations per load of a tile `O_wb` wide and `nv` vectors deep.
fn ops_per_load(spec: &Spec, nv: usize, o_wb: usize, columns: bool) -> f64 {
    let (o, fw, sw, n) = (o_wb as f64, spec.fw as f64, spec.sw as f64, nv as f64);
    match (spec.channelwise(), spec.reduction) {
        (true, Reduction::Fma) => o * fw / ((o - 1.0) * sw + 2.0 * fw),
        (true, _) => o * fw / ((o - 1.0) * sw + fw),
        // Per filter row and lane: F_W nv weights and the span's broadcasts.
        (false, _) if columns => o * fw * n / (fw * n + (o - 1.0) * sw + fw),
        (false, _) => (o_wb * nv) as f64 / (o_wb + nv) as f64,
    }
}

/// The text `explain()` returns for one arch.
pub fn explain(arch: &ArchParams, spec: &Spec, b: &Blocking) -> String {
    let kind = match (b.channelwise, b.columns) {
        (true, _) => "channelwise",
        (false, true) => "broadcast (column-streamed)",
        (false, false) => "broadcast (per tap)",
    };
    let mut s = format!(
        "{name}: {kind} kernel, tile O_wb={o} x TC={tc} channels ({nv} vector(s) of {l} lanes): \
         {acc} accumulators, {regs} of {r} registers, {score:.2} ops per load ({pct:.0}% of the FMA rate at {loads} loads/cycle{issue}); \
         latency {lat} x {rate} FMA/cycle needs {need} independent accumulators{slack}.\n",
        name = arch.name,
        o = b.o_wb,
        tc = b.tc(arch),
        nv = b.nv,
        l = arch.lanes,
        acc = b.accumulators(),
        regs = b.regs,
        r = arch.vector_regs,
        score = b.score,
        pct = 100.0 * b.rate,
        loads = arch.loads_per_cycle,
        issue = if arch.issue_per_cycle < arch.fma_per_cycle + arch.loads_per_cycle {
            format!(", {} instructions/cycle", arch.issue_per_cycle)
        } else {
            String::new()
        },
        lat = arch.fma_latency,
        rate = arch.fma_per_cycle,
        need = accumulators_to_hide(arch, spec),
        slack = if spec.channelwise() {
            ""
        } else {
            " (1.5x, for slack)"
        },
    );
    for c in &b.candidates {
        s.push_str("    candidate ");
        s.push_str(c);
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Activation, Padding};

    fn spec(
        fh: usize,
        fw: usize,
        fc: usize,
        k: usize,
        g: usize,
        s: usize,
        reduction: Reduction,
    ) -> Spec {
        Spec {
            fh,
            fw,
            fc,
            k,
            g,
            sh: s,
            sw: s,
            padding: Padding::Same,
            reduction,
            activation: Activation::None,
            residual: false,
            archs: vec![],
        }
    }

    fn tile(arch: &ArchParams, s: &Spec) -> (usize, usize) {
        let b = derive(arch, s);
        (b.o_wb, b.tc(arch))
    }

    // ANCHOR: hand_worked
    #[test]
    fn conv_tiles_match_hand_worked_cases() {
        let conv = spec(3, 3, 16, 32, 1, 1, Reduction::Fma);
        // Every arch below: latency 4 x 2 FMA/cycle, so a broadcast tile
        // needs >= 12 accumulators (1.5 x 8). Two forms: per tap (nv weight
        // vectors + 1 broadcast register, O_wb nv / (O_wb + nv) FMA/load)
        // and column-streamed (3 nv weights + 1, 3 O_wb nv / (3 nv + O_wb + 2)).
        // AVX2: 16 regs, 8 lanes, 2 loads/cycle feed 2 FMAs/cycle once
        // FMA/load >= 1.
        // nv=1 (TC 8): per tap O_wb=12 has 12/13 FMA/load (0.92 of the rate,
        //   14 regs); columns O_wb=12: 36/17 (full rate, 16 regs).
        // nv=2 (TC 16): per tap O_wb=6: 12 acc, 12/8 = 1.5 FMA/load, full rate,
        //   12 + 2 + 1 = 15 regs; columns would need 12 + 6 + 1 = 19.
        // The narrowest tile with 12 accumulators: 6 x 16 per tap.
        assert_eq!(tile(&arch_defs::avx2::PARAMS, &conv), (6, 16));
        assert!(!derive(&arch_defs::avx2::PARAMS, &conv).columns);
        // NEON: 32 regs, 4 lanes. nv=4 (TC 16), O_wb=3: columns 36/17 = 2.1
        // FMA/load with 12 + 12 + 1 = 25 regs, per tap 12/7 = 1.7 (both full
        // rate); nv=2 needs 6 columns. Narrowest, then most FMAs per load:
        // 3 x 16 column-streamed.
        assert_eq!(tile(&arch_defs::neon::PARAMS, &conv), (3, 16));
        assert!(derive(&arch_defs::neon::PARAMS, &conv).columns);
        // Scalar, 32 regs, 1 load/cycle for 2 FMAs/cycle: needs >= 1.8 FMA/load
        // for 90 % of the rate. nv=4, O_wb=3: columns 36/17 = 2.1 (25 regs);
        // per tap only 12/7 = 1.7. nv=2 and nv=1 need 6 and 12 columns.
        assert_eq!(tile(&arch_defs::reference::PARAMS, &conv), (3, 4));
        // AVX-512, 32 regs, 16 lanes, broadcast from memory: K=32 allows nv=2;
        // O_wb=6: 12 acc; columns 36/14 = 2.6 FMA/load (19 regs), per tap 1.5.
        assert_eq!(tile(&arch_defs::avx512::PARAMS, &conv), (6, 32));
        assert!(derive(&arch_defs::avx512::PARAMS, &conv).columns);
        // With K = 16 only nv=1 fits the channels: O_wb = 12, and columns
        // (36/17 = 2.1 FMA/load) beat per tap (12/13). Measured on Zen 5,
        // conv 3x3 48x48x16: per tap with 8 columns 59 us, column-streamed
        // with 8 columns 49 us, with 12 columns 43 us.
        let k16 = spec(3, 3, 16, 16, 1, 1, Reduction::Fma);
        assert_eq!(tile(&arch_defs::avx512::PARAMS, &k16), (12, 16));
        assert!(derive(&arch_defs::avx512::PARAMS, &k16).columns);
        // A 1x1 filter has one form: per tap.
        let pw = spec(1, 1, 64, 64, 1, 1, Reduction::Fma);
        assert!(!derive(&arch_defs::avx512::PARAMS, &pw).columns);
    }

    #[test]
    fn channelwise_tiles_match_hand_worked_cases() {
        let dw = spec(3, 3, 1, 1, 32, 1, Reduction::Fma);
        // AVX2 depthwise: 3 O_wb MACs per (O_wb + 5) loads; nv=1, O_wb=8:
        // 8 acc + 3 weights + 1 input = 12 regs, 24/13 MACs/load: full rate.
        // nv=2, O_wb=4 also has 8 acc but 15 regs.
        assert_eq!(tile(&arch_defs::avx2::PARAMS, &dw), (8, 8));
        // NEON: the same reasoning with 4 lanes.
        assert_eq!(tile(&arch_defs::neon::PARAMS, &dw), (8, 4));
        // Max pool 2x2 s2 on AVX2: one max per load whatever the tile, which
        // 2 loads/cycle sustain; 8 acc with 9 regs for nv=1 and nv=2: the
        // wider channel tile wins the tie (fewer tiles): nv=2, O_wb=4.
        let pool = spec(2, 2, 1, 1, 32, 2, Reduction::Max);
        assert_eq!(tile(&arch_defs::avx2::PARAMS, &pool), (4, 16));
    }

    #[test]
    fn cortex_m4_tiles_match_hand_worked_cases() {
        let m4 = &arch_defs::cortex_m4::PARAMS;
        // Cortex-M4F: 32 s registers, 1 lane, VFMA latency 3 x 1 FMA/cycle
        // -> >= 5 accumulators for a broadcast tile (1.5 x 3, rounded up),
        // >= 3 for a channelwise one. Single issue: a tile doing s FMAs per
        // load spends s / (s + 1) of its instructions on FMAs; tiles within
        // 0.9 of the best count as equally fast (NEAR), the narrowest wins.
        // Conv 3x3 16->16 (TC = nv must divide 16):
        //   per tap (s = O_wb nv / (O_wb + nv), O_wb nv + nv + 1 <= 32):
        //     nv=4, O_wb=6: 24/10 = 2.4 -> 0.706; O_wb=4: 2.0 -> 0.667;
        //   column-streamed (s = 3 O_wb nv / (3 nv + O_wb + 2),
        //     O_wb nv + 3 nv + 1 <= 32):
        //     nv=2, O_wb=12: 72/20 = 3.6 -> 0.783 (the best),
        //           O_wb=6: 36/14 = 2.57 -> 0.720, O_wb=5: 30/13 -> 0.698;
        //     nv=4, O_wb=4: 48/18 = 2.67 -> 0.727 (16 acc);
        //     nv=1 needs O_wb >= 20 for 0.705.
        // Within 0.9 x 0.783 = 0.705: 6x2, 8x2, ... 12x2 and 4x4
        // column-streamed, 6x4 per tap, nv=1 from 20 columns. The issue width
        // binds, so the widest channel tile comes first (nv=4), then the
        // fewest accumulators: 4 x 4 column-streamed, 16 acc + 12 w + 1 = 29
        // regs (6 x 4 per tap has 24 acc).
        let conv = spec(3, 3, 16, 16, 1, 1, Reduction::Fma);
        assert_eq!(tile(m4, &conv), (4, 4));
        assert!(derive(m4, &conv).columns);
        assert_eq!(derive(m4, &conv).regs, 29);
        // Pointwise 16->16 (per tap only): the best is nv=4, O_wb=6 (0.706);
        // within 0.9 of it nv=4 leads, and O_wb=4 (0.667) has the fewest
        // accumulators.
        let pw = spec(1, 1, 16, 16, 1, 1, Reduction::Fma);
        assert_eq!(tile(m4, &pw), (4, 4));
        // Depthwise 3x3 s1 (channelwise, s = 3 O_wb / ((O_wb - 1) + 6),
        // 3 nv weights + 1 input register besides the accumulators):
        //   nv=1, O_wb<=28: O_wb=28 84/33 -> 0.718 (the best);
        //          O_wb=8 24/13 -> 0.649, O_wb=7 21/12 -> 0.636;
        //   nv=2 needs O_wb=8 for 24/13 -> 0.649 (16 acc).
        // Within 0.9 x 0.718 = 0.646, the fewest accumulators: 8 x 1,
        // 8 acc + 3 + 1 = 12 regs.
        let dw = spec(3, 3, 1, 1, 16, 1, Reduction::Fma);
        assert_eq!(tile(m4, &dw), (8, 1));
        assert_eq!(derive(m4, &dw).regs, 12);
    }
    // ANCHOR_END: hand_worked

    #[test]
    fn accumulators_hide_fma_latency() {
        for arch in arch_defs::ARCHS {
            for s in [
                spec(3, 3, 16, 32, 1, 1, Reduction::Fma),
                spec(1, 1, 64, 64, 1, 1, Reduction::Fma),
            ] {
                let b = derive(arch, &s);
                assert!(
                    b.accumulators() >= accumulators_to_hide(arch, &s),
                    "{}",
                    arch.name
                );
                assert!(b.regs <= arch.vector_regs, "{}", arch.name);
            }
        }
    }
}
