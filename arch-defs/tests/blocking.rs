//! The register blocking each registered arch gets for hand-worked
//! layers: the numbers in its file, through `small_ir::blocking`.

use arch_defs::Machine;
use small_ir::blocking::{self, Blocking};
use small_ir::{LayerSpec, Padding, Reduction};

fn spec(
    fh: usize,
    fw: usize,
    fc: usize,
    k: usize,
    g: usize,
    s: usize,
    reduction: Reduction,
) -> LayerSpec {
    LayerSpec {
        sh: s,
        sw: s,
        padding: Padding::Same,
        reduction,
        ..LayerSpec::new(fh, fw, fc, k, g)
    }
}

fn derive(arch: &Machine, s: &LayerSpec) -> Blocking {
    blocking::derive("", arch, s)
}

fn tile(arch: &Machine, s: &LayerSpec) -> (usize, usize) {
    let b = derive(arch, s);
    (b.o_wb, b.tc)
}

// ANCHOR: hand_worked
#[test]
fn conv_tiles_match_hand_worked_cases() {
    let conv = spec(3, 3, 16, 32, 1, 1, Reduction::Fma);
    // A broadcast tile needs `FMAs/cycle x (latency + operand latency)`
    // accumulators: 2 x (4 + 2) = 12 on AVX2, NEON and the reference,
    // 2 x (4 + 4) = 16 on AVX-512. Two forms: per tap (nv weight vectors
    // + 1 broadcast register, O_wb nv / (O_wb + nv) FMA/load) and
    // column-streamed (3 nv weights + 1, 3 O_wb nv / (3 nv + O_wb + 2)).
    // Among tiles equally fast by the model with the fewest accumulators,
    // the most FMAs per load wins, then the fewest columns.
    // AVX2: 16 regs, 8 lanes, 2 loads/cycle feed 2 FMAs/cycle once
    // FMA/load >= 1.
    // nv=1 (TC 8): per tap O_wb=12 has 12/13 FMA/load (0.92 of the rate,
    //   14 regs); columns O_wb=12: 36/17 = 2.1 (full rate, 16 regs).
    // nv=2 (TC 16): per tap O_wb=6: 12 acc, 12/8 = 1.5 FMA/load, full rate,
    //   12 + 2 + 1 = 15 regs; columns would need 12 + 6 + 1 = 19.
    // A column-streamed `f32` tile also leaves one register free (LLVM
    // loads the next row's weights early; 12 x 8 with all 16 spilled), so
    // 12 x 8 columns would need 17. Its FMAs take register operands only,
    // and AVX2 counts no operand latency for it (`column_operand_latency`
    // 0): 2 x 4 = 8 accumulators hide the FMA latency. 8-accumulator
    // column tiles: nv=1 O_wb=8 (24/13 = 1.85 FMA/load, 13 regs), nv=2
    // O_wb=4 (24/12 = 2.0, 8 + 6 + 1 + 1 = 16 regs); both full rate, the
    // most FMAs per load wins: 4 x 16 column-streamed, where per tap
    // needs 12 accumulators (6 x 16).
    assert_eq!(tile(&arch_defs::avx2::MACHINE, &conv), (4, 16));
    assert!(derive(&arch_defs::avx2::MACHINE, &conv).columns);
    // NEON: 32 regs, 4 lanes. Column-streamed nv=2 (TC 8), O_wb=6: 36/14 =
    // 2.6 FMA/load with 12 + 6 + 1 = 19 regs; nv=4, O_wb=3: 36/17 = 2.1
    // (25 regs); per tap nv=4, O_wb=3: 12/7 = 1.7 (all full rate, 12 acc).
    assert_eq!(tile(&arch_defs::neon::MACHINE, &conv), (6, 8));
    assert!(derive(&arch_defs::neon::MACHINE, &conv).columns);
    // Scalar, 32 regs, 1 load/cycle for 2 FMAs/cycle: needs >= 1.8 FMA/load
    // for 90 % of the rate. Column-streamed nv=2, O_wb=6: 36/14 = 2.6
    // (19 regs); nv=4, O_wb=3: 36/17 = 2.1 (25 regs); per tap only 12/7.
    assert_eq!(tile(&arch_defs::reference::MACHINE, &conv), (6, 2));
    // AVX-512, 32 regs, 16 lanes, broadcast from memory: K=32 allows nv=2;
    // 16 acc with O_wb=8: columns 48/16 = 3 FMA/load (16 + 6 + 1 = 23
    // regs), per tap 16/10.
    assert_eq!(tile(&arch_defs::avx512::MACHINE, &conv), (8, 32));
    assert!(derive(&arch_defs::avx512::MACHINE, &conv).columns);
    // With K = 16 only nv=1 fits the channels: O_wb = 16, and columns
    // (48/21 = 2.3 FMA/load) beat per tap (16/17). Measured on Zen 5,
    // conv 3x3 48x48x16: per tap with 8 columns 59 us, column-streamed
    // with 8 columns 49 us, with 12 columns 43 us.
    let k16 = spec(3, 3, 16, 16, 1, 1, Reduction::Fma);
    assert_eq!(tile(&arch_defs::avx512::MACHINE, &k16), (16, 16));
    assert!(derive(&arch_defs::avx512::MACHINE, &k16).columns);
    // A 1x1 filter has one form: per tap. Its row is the whole plane, and
    // AVX-512 hides 2 x (4 + 8) = 24 accumulators there
    // (`flat_operand_latency`): with 4 weight vectors (TC 64) and the
    // broadcast from memory, 6 columns (24/10 FMA/load, 28 regs); 12 x 32
    // (24/14) and 3 x 128 (24/11) load more per FMA.
    let pw = spec(1, 1, 64, 64, 1, 1, Reduction::Fma);
    assert!(!derive(&arch_defs::avx512::MACHINE, &pw).columns);
    assert_eq!(tile(&arch_defs::avx512::MACHINE, &pw), (6, 64));
    // A strided 1x1 layer (ResNet-8's skips) runs row by row: 16.
    let skip = spec(1, 1, 32, 64, 1, 2, Reduction::Fma);
    assert_eq!(derive(&arch_defs::avx512::MACHINE, &skip).accumulators, 16);
}

#[test]
fn channelwise_tiles_match_hand_worked_cases() {
    let dw = spec(3, 3, 1, 1, 32, 1, Reduction::Fma);
    // AVX2 depthwise: 3 O_wb MACs per (O_wb + 5) loads; nv=1, O_wb=8:
    // 8 acc + 3 weights + 1 input = 12 regs, 24/13 MACs/load: full rate.
    // nv=2, O_wb=4 also has 8 acc but 15 regs.
    assert_eq!(tile(&arch_defs::avx2::MACHINE, &dw), (8, 8));
    // NEON: the same reasoning with 4 lanes.
    assert_eq!(tile(&arch_defs::neon::MACHINE, &dw), (8, 4));
    // Max pool 2x2 s2 on AVX2: one max per load whatever the tile, which
    // 2 loads/cycle sustain; 8 acc with 9 regs for nv=1 and nv=2: the
    // wider channel tile wins the tie (fewer tiles): nv=2, O_wb=4.
    let pool = spec(2, 2, 1, 1, 32, 2, Reduction::Max);
    assert_eq!(tile(&arch_defs::avx2::MACHINE, &pool), (4, 16));
}

#[test]
fn cortex_m4_tiles_match_hand_worked_cases() {
    let m4 = &arch_defs::cortex_m4::MACHINE;
    // Cortex-M4F: 32 s registers, 1 lane, VFMA latency 3 x 1 FMA/cycle
    // -> >= 5 accumulators for a broadcast tile (1 x (3 + 2)),
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
    // regs and the spare register of a column-streamed `f32` tile: 30
    // (6 x 4 per tap has 24 acc).
    let conv = spec(3, 3, 16, 16, 1, 1, Reduction::Fma);
    assert_eq!(tile(m4, &conv), (4, 4));
    assert!(derive(m4, &conv).columns);
    assert_eq!(derive(m4, &conv).registers, 30);
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
    assert_eq!(derive(m4, &dw).registers, 12);
}
// ANCHOR_END: hand_worked

/// An `i8` broadcast layer with at most half a dot group of input
/// channels multiplies lane by lane on the M4 (`int8_lane_steps`), its
/// operands one register each; nowhere else.
#[test]
fn cortex_m4_steps_narrow_int8_inputs_lane_by_lane() {
    let m4 = &arch_defs::cortex_m4::MACHINE;
    let i8 = |fc: usize, k: usize, g: usize| LayerSpec {
        dtype: small_ir::Dtype::I8,
        ..spec(3, 3, fc, k, g, 1, Reduction::Fma)
    };
    assert!(blocking::int8_lane_steps(m4, &i8(1, 64, 1)));
    assert!(blocking::int8_lane_steps(m4, &i8(2, 16, 1)));
    assert!(!blocking::int8_lane_steps(m4, &i8(3, 16, 1)));
    assert!(!blocking::int8_lane_steps(m4, &i8(16, 16, 1)));
    // Depthwise (channelwise) and f32 layers have no dot groups.
    assert!(!blocking::int8_lane_steps(m4, &i8(1, 1, 16)));
    assert!(!blocking::int8_lane_steps(
        m4,
        &spec(3, 3, 1, 16, 1, 1, Reduction::Fma)
    ));
    // Vector archs keep their groups (a lane's weights are not adjacent).
    for m in [&arch_defs::reference::MACHINE, &arch_defs::avx512::MACHINE] {
        assert!(!blocking::int8_lane_steps(m, &i8(1, 64, 1)));
    }
    // Operands of one register: the model sees 10 registers, 1 per
    // operand and a load costing one multiply-add's slot.
    let m = blocking::for_dtype(m4, &i8(1, 64, 1));
    assert_eq!(
        (m.vector_regs, m.int8_operand_regs, m.int8_load_cost),
        (10, 1, 1)
    );
    // DS-CNN's stem, 10x4 stride 2, 1 -> 64: per tap (O_wb nv + nv + 1
    // <= 10 registers, s = O_wb nv / (O_wb + nv), rate s / (s + 1)):
    // 2x2 0.5, 3x2 0.545; column-streamed (4 nv + 1 besides the
    // accumulators) 5x1 0.556 is the best. Within 0.9 of it the widest
    // channel tile leads (issue-bound), then the fewest accumulators: 2x2.
    let stem = LayerSpec {
        dtype: small_ir::Dtype::I8,
        ..spec(10, 4, 1, 64, 1, 2, Reduction::Fma)
    };
    assert_eq!(tile(m4, &stem), (2, 2));
    assert_eq!(derive(m4, &stem).registers, 7);
}

#[test]
fn accumulators_hide_fma_latency() {
    for arch in arch_defs::ARCHS.iter().map(|a| &a.machine) {
        for s in [
            spec(3, 3, 16, 32, 1, 1, Reduction::Fma),
            spec(1, 1, 64, 64, 1, 1, Reduction::Fma),
        ] {
            let b = derive(arch, &s);
            assert!(
                b.accumulators >= blocking::accumulators_to_hide(arch, &s, b.columns),
                "{arch:?}"
            );
            assert!(b.registers <= arch.vector_regs, "{arch:?}");
        }
    }
}

/// A tensor of fewer than `CB` channels stores `width` lanes per pixel,
/// which on a Cortex-M is its channels rounded up to 4: an output tile
/// must lie inside them there, and for the portable reference arch on
/// every target. On x86-64 only tensors of at most 4 channels are
/// narrow; AVX-512 keeps one 16-lane vector over them (written in part)
/// and 16 over an 8-channel tensor (a whole block there).
#[test]
fn output_tiles_fit_narrow_tensors() {
    use small_ir::geometry::{Narrow, WHOLE, narrow_of, width_for};
    let arm = narrow_of("arm");
    assert_eq!(arm, Narrow { unit: 4, max: 15 });
    assert_eq!(narrow_of("x86_64"), Narrow { unit: 4, max: 4 });
    assert_eq!(narrow_of("riscv64"), WHOLE);
    assert_eq!(
        [1, 3, 4, 8, 12, 13, 16, 17].map(|c| width_for(c, arm)),
        [4, 4, 4, 8, 12, 16, 16, 16]
    );
    assert_eq!(
        [1, 3, 4, 5, 8, 16].map(|c| width_for(c, narrow_of("x86_64"))),
        [4, 4, 4, 16, 16, 16]
    );
    let f32_pw = |k: usize| spec(1, 1, 16, k, 1, 1, Reduction::Fma);
    let i8_pw = |k: usize| LayerSpec {
        dtype: small_ir::Dtype::I8,
        ..f32_pw(k)
    };
    let dw = |c: usize| spec(3, 3, 1, 1, c, 1, Reduction::Fma);
    let m4 = &arch_defs::cortex_m4::MACHINE;
    for s in [f32_pw(8), i8_pw(8), dw(8), f32_pw(12), i8_pw(3), dw(3)] {
        let tc = derive(m4, &s).tc;
        let w = width_for(s.out_channels(), arm);
        assert!(w.is_multiple_of(tc), "M4 tile of {tc} in {w} lanes");
        let tc = derive(&arch_defs::reference::MACHINE, &s).tc;
        assert!(
            w.is_multiple_of(tc) && 16 % tc == 0,
            "reference tile of {tc}"
        );
    }
    // 12 channels: 12 lanes on the M4, which takes 6 of them per tile
    // (a tile of 4 no longer needs to divide 16); the reference's tile
    // must divide both 12 (Cortex-M) and 16 (elsewhere).
    assert_eq!(derive(m4, &f32_pw(12)).tc, 6);
    assert_eq!(
        derive(&arch_defs::reference::MACHINE, &f32_pw(12)).tc % 4,
        0
    );
    let avx512 = &arch_defs::avx512::MACHINE;
    assert_eq!(derive(avx512, &f32_pw(8)).tc, 16);
    // Two logits (VWW's head): one vector, of which 4 lanes are stored.
    assert_eq!(derive(avx512, &f32_pw(2)).tc, 16);
    assert_eq!(derive(&arch_defs::avx2::MACHINE, &f32_pw(2)).tc, 8);
    assert_eq!(derive(avx512, &dw(3)).tc, 16);
}

/// Only the Cortex-M4's `f32` depthwise kernels multiply, then add: VMUL
/// and VADD take a cycle each there, VFMA three; every other arch, every
/// broadcast kernel (they spilled unfused) and every `i8` or max kernel
/// keeps the one fused `fma`.
#[test]
fn only_cortex_m4_f32_depthwise_multiplies_unfused() {
    let m4 = &arch_defs::cortex_m4::MACHINE;
    let dw = spec(3, 3, 1, 1, 16, 1, Reduction::Fma);
    let dw_s2 = spec(3, 3, 1, 1, 64, 2, Reduction::Fma);
    let conv = spec(3, 3, 16, 16, 1, 1, Reduction::Fma);
    let pw = spec(1, 1, 64, 64, 1, 1, Reduction::Fma);
    let max = spec(3, 3, 1, 1, 16, 2, Reduction::Max);
    let dw_i8 = LayerSpec {
        dtype: small_ir::Dtype::I8,
        ..dw
    };
    assert!(!m4.fuses());
    assert!(!derive(m4, &dw).fused);
    assert!(!derive(m4, &dw_s2).fused);
    for s in [&conv, &pw, &max, &dw_i8] {
        assert!(derive(m4, s).fused, "{s:?}");
    }
    for (name, m) in arch_defs::ARCHS.iter().map(|a| (a.name, &a.machine)) {
        if name != "cortex_m4" {
            assert!(m.fuses(), "{name}");
            assert!(derive(m, &dw).fused, "{name}");
        }
    }
}

/// AVX2's `i8` broadcast kernels see 15 registers and the dot product's
/// 2-cycle latency (`vpmaddwd` does not accumulate: its product takes a
/// register, and the accumulator's chain is one `vpaddd`): a 3x3
/// convolution is column-streamed 4 x 16, 15 registers, as its `f32`
/// twin is with 16 (8 accumulators: `column_operand_latency` 0, and a
/// column-streamed `f32` tile keeps a register spare). An `i8` depthwise layer sums in `Dot::Mac`,
/// the `f32` FMA, and keeps the FMA's latency: the same tile as `f32`.
#[test]
fn avx2_int8_counts_the_product_register_and_the_add_chain() {
    let avx2 = &arch_defs::avx2::MACHINE;
    let i8 = |s: LayerSpec| LayerSpec {
        dtype: small_ir::Dtype::I8,
        ..s
    };
    let conv = spec(3, 3, 16, 16, 1, 1, Reduction::Fma);
    let dw = spec(3, 3, 1, 1, 64, 1, Reduction::Fma);
    assert_eq!(tile(avx2, &conv), (4, 16));
    let b = derive(avx2, &i8(conv));
    assert_eq!((b.o_wb, b.tc, b.columns, b.registers), (4, 16, true, 15));
    assert_eq!(tile(avx2, &i8(dw)), tile(avx2, &dw));
}

/// `rate_at` at a tile's own width is the rate the blocking gave it, and
/// one column never loads less per multiply-add than the whole tile.
#[test]
fn the_rate_at_a_tiles_width_is_its_rate() {
    for a in arch_defs::ARCHS {
        let m = &a.machine;
        for s in [
            spec(3, 3, 16, 16, 1, 1, Reduction::Fma),
            spec(1, 1, 128, 128, 1, 1, Reduction::Fma),
            spec(1, 1, 128, 8, 1, 1, Reduction::Fma),
            spec(3, 3, 3, 8, 1, 2, Reduction::Fma),
            spec(3, 3, 1, 1, 64, 1, Reduction::Fma),
        ] {
            for dtype in [small_ir::Dtype::F32, small_ir::Dtype::I8] {
                let s = LayerSpec { dtype, ..s };
                let b = derive(m, &s);
                let name = a.name;
                let at = blocking::rate_at(m, &s, &b, b.o_wb);
                assert!(
                    (at - b.rate).abs() < 1e-12,
                    "{name} {s:?}: {at} vs {}",
                    b.rate
                );
                assert!(
                    blocking::rate_at(m, &s, &b, 1) <= b.rate + 1e-12,
                    "{name} {s:?}"
                );
            }
        }
    }
}

/// The cost model counts a narrow layer's padding lanes in the
/// multiply-adds it computes, so its tile's rate must not weigh them
/// again (the blocking's rate does, to rank tiles): VWW 0.25's 3 -> 8
/// stem was predicted twice its measured time.
#[test]
fn the_cost_model_charges_padding_lanes_once() {
    use small_ir::cost::{Tile, estimate};
    let m = &arch_defs::avx512::MACHINE;
    let narrow = spec(3, 3, 3, 8, 1, 2, Reduction::Fma);
    let wide = spec(3, 3, 3, 16, 1, 2, Reduction::Fma);
    let (bn, bw) = (derive(m, &narrow), derive(m, &wide));
    assert_eq!((bn.o_wb, bn.tc), (bw.o_wb, bw.tc), "the same tile");
    assert!(bn.rate < bw.rate, "the blocking ranks the narrow one lower");
    let (tn, tw) = (Tile::of(&bn, m, &narrow), Tile::of(&bw, m, &wide));
    assert!((tn.rate - tw.rate).abs() < 1e-12);
    assert!((tn.one_column_rate - tw.one_column_rate).abs() < 1e-12);
    // Both compute 16 lanes per pixel: the same time.
    let r = small_ir::cost::Rates {
        flops: 200e9,
        l1: 200e9,
        l2: 100e9,
        memory: 10e9,
        l1_bytes: 48 << 10,
        l2_bytes: 2 << 20,
        call: 0.1e-6,
        tile: [0.0; 2],
        efficiency: [1.0; 2],
    };
    let time = |s: &LayerSpec, t: &Tile| estimate(s, t, (96, 96), (48, 48), &r).compute;
    assert!((time(&narrow, &tn) - time(&wide, &tw)).abs() < 1e-12);
}
