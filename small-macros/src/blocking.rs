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
//! Among the tiles that fit, the model prefers those with at least
//! `latency x FMAs-per-cycle` independent accumulators (enough to hide the
//! FMA latency), then the most operations per load, then (broadcast) the
//! fewest registers or (channelwise) the widest channel tile. `TC` must
//! divide the layout block `CB`, or be a multiple of `CB` that divides the
//! padded output channels, so tiles never straddle a block boundary badly
//! and no channel tail kernel is needed.

use crate::spec::{Reduction, Spec};
use arch_defs::{ArchParams, CB};

/// The blocking chosen for one layer on one arch.
#[derive(Debug, Clone, PartialEq)]
pub struct Blocking {
    pub channelwise: bool,
    /// Vector registers across the tile's channels.
    pub nv: usize,
    /// Output columns per tile.
    pub o_wb: usize,
    /// Registers used in total.
    pub regs: usize,
    /// Operations per load (the objective).
    pub score: f64,
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
    let lanes = arch.lanes;
    let out_pad = spec.out_channels().div_ceil(CB) * CB;
    let hide = arch.fma_latency * arch.fma_per_cycle;
    let mut best: Option<((bool, f64, isize), Blocking)> = None;
    let mut lines = Vec::new();
    for nv in 1..=r {
        let tc = nv * lanes;
        let tc_ok = if spec.channelwise() {
            CB.is_multiple_of(tc)
        } else {
            CB.is_multiple_of(tc) || (tc.is_multiple_of(CB) && out_pad.is_multiple_of(tc))
        };
        if !tc_ok || tc > out_pad {
            continue;
        }
        // Registers besides the accumulators, and operations/loads per O_wb.
        let (other, score): (usize, Box<dyn Fn(usize) -> f64>) = if spec.channelwise() {
            let (fw, sw) = (spec.fw as f64, spec.sw as f64);
            match spec.reduction {
                Reduction::Fma => (
                    spec.fw * nv + 1,
                    Box::new(move |o| o as f64 * fw / ((o as f64 - 1.0) * sw + 2.0 * fw)),
                ),
                Reduction::Max | Reduction::Avg => (
                    1,
                    Box::new(move |o| o as f64 * fw / ((o as f64 - 1.0) * sw + fw)),
                ),
            }
        } else {
            let b = usize::from(!arch.broadcast_from_memory);
            (nv + b, Box::new(move |o| (o * nv) as f64 / (o + nv) as f64))
        };
        if other >= r {
            continue;
        }
        let o_wb = (r - other) / nv;
        if o_wb == 0 {
            continue;
        }
        let regs = o_wb * nv + other;
        let s = score(o_wb);
        let hides = o_wb * nv >= hide;
        lines.push(format!(
            "nv={nv} (TC={tc}): O_wb={o_wb}, {acc} acc + {other} other = {regs}/{r} regs, {s:.2} ops/load{lat}",
            acc = o_wb * nv,
            lat = if hides { "" } else { ", too few accumulators to hide latency" }
        ));
        // Tie-break: broadcast prefers fewer registers, channelwise wider tiles.
        let tie = if spec.channelwise() {
            nv as isize
        } else {
            -(regs as isize)
        };
        let cand = Blocking {
            channelwise: spec.channelwise(),
            nv,
            o_wb,
            regs,
            score: s,
            candidates: Vec::new(),
        };
        let key = (hides, s, tie);
        if best
            .as_ref()
            .is_none_or(|(k, _)| key.partial_cmp(k) == Some(std::cmp::Ordering::Greater))
        {
            best = Some((key, cand));
        }
    }
    let mut b = best.map(|(_, b)| b).unwrap_or(Blocking {
        channelwise: spec.channelwise(),
        nv: 1,
        o_wb: 1,
        regs: 3,
        score: 0.0,
        candidates: Vec::new(),
    });
    b.candidates = lines;
    b
}

/// The text `explain()` returns for one arch.
pub fn explain(arch: &ArchParams, spec: &Spec, b: &Blocking) -> String {
    let kind = if b.channelwise {
        "channelwise"
    } else {
        "broadcast"
    };
    let mut s = format!(
        "{name}: {kind} kernel, tile O_wb={o} x TC={tc} channels ({nv} vector(s) of {l} lanes): \
         {acc} accumulators, {regs} of {r} registers, {score:.2} ops per load; \
         latency {lat} x {rate} FMA/cycle needs {need} independent accumulators.\n",
        name = arch.name,
        o = b.o_wb,
        tc = b.tc(arch),
        nv = b.nv,
        l = arch.lanes,
        acc = b.accumulators(),
        regs = b.regs,
        r = arch.vector_regs,
        score = b.score,
        lat = arch.fma_latency,
        rate = arch.fma_per_cycle,
        need = arch.fma_latency * arch.fma_per_cycle,
    );
    let _ = spec;
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

    #[test]
    fn conv_tiles_match_hand_worked_cases() {
        let conv = spec(3, 3, 16, 32, 1, 1, Reduction::Fma);
        // AVX2, 16 regs, 8 lanes: nv=2 -> O_wb = (16-3)/2 = 6: 12 acc + 2 w + 1 b = 15,
        // 12/8 = 1.5 FMA/load (nv=1: O_wb 14, 0.93; nv=4: O_wb 2, 1.33).
        assert_eq!(tile(&arch_defs::avx2::PARAMS, &conv), (6, 16));
        // NEON, 32 regs, 4 lanes: nv=4 -> O_wb = (32-5)/4 = 6: 24 acc, 2.4 FMA/load.
        assert_eq!(tile(&arch_defs::neon::PARAMS, &conv), (6, 16));
        // Scalar, 32 regs: TC must divide 16: nv=4 -> O_wb 6 (2.4) beats nv=8 (O_wb 2, 1.6).
        assert_eq!(tile(&arch_defs::reference::PARAMS, &conv), (6, 4));
        // AVX-512, 32 regs, 16 lanes, broadcast from memory: K=32 allows nv=2:
        // O_wb = (32-2)/2 = 15, 30/17 = 1.76 FMA/load.
        assert_eq!(tile(&arch_defs::avx512::PARAMS, &conv), (15, 32));
        // With K = 16 only nv=1 fits the channels: O_wb = 31.
        assert_eq!(
            tile(
                &arch_defs::avx512::PARAMS,
                &spec(3, 3, 16, 16, 1, 1, Reduction::Fma)
            ),
            (31, 16)
        );
    }

    #[test]
    fn channelwise_tiles_match_hand_worked_cases() {
        let dw = spec(3, 3, 1, 1, 32, 1, Reduction::Fma);
        // AVX2 depthwise: nv=1: O_wb = 16 - 3 - 1 = 12 (36 MACs / 17 loads); nv=2: O_wb 4.
        assert_eq!(tile(&arch_defs::avx2::PARAMS, &dw), (12, 8));
        // NEON: nv=1: O_wb = 32 - 4 = 28.
        assert_eq!(tile(&arch_defs::neon::PARAMS, &dw), (28, 4));
        // Max pool 2x2 s2 on AVX2: no weights, O_wb*nv + 1 <= 16; ops/load is
        // independent of nv, so the widest tile: nv=2, O_wb=7.
        let pool = spec(2, 2, 1, 1, 32, 2, Reduction::Max);
        assert_eq!(tile(&arch_defs::avx2::PARAMS, &pool), (7, 16));
    }

    #[test]
    fn accumulators_hide_fma_latency() {
        for arch in arch_defs::ARCHS {
            for s in [
                spec(3, 3, 16, 32, 1, 1, Reduction::Fma),
                spec(1, 1, 64, 64, 1, 1, Reduction::Fma),
            ] {
                let b = derive(arch, &s);
                assert!(
                    b.accumulators() >= arch.fma_latency * arch.fma_per_cycle,
                    "{}",
                    arch.name
                );
                assert!(b.regs <= arch.vector_regs, "{}", arch.name);
            }
        }
    }
}
