//! The MLPerf Tiny networks end to end.
//!
//! - Built-in (generated) weights, on every arch this CPU runs: each
//!   network against the reference layers, within the bound propagated
//!   through its layers (`small_examples::check`), starting from an arena
//!   full of NaN so a read of an unwritten element cannot pass.
//! - Real weights (`../shared/models`, or `SMALL_MODELS`): see `golden`.

use small_core::Arch;
use small_core::load::Generated;
use small_core::model::Model;
use small_examples::check::{self, Propagation, first_mismatch, head_bound};

/// Trained weights: the probabilistic bound (see `check::Propagation`).
const PROBABLE: Propagation = Propagation::Probable { lambda: 8.0 };
use small_examples::models::{Head, Network, ad, dscnn, resnet8, vww};

fn all_archs<N: Network>() {
    for arch in small_core::arch::available() {
        check::check_builtin::<N>(arch);
        println!(
            "{}: built-in weights match the reference on {}",
            N::NAME,
            arch.name()
        );
    }
}

#[test]
fn resnet8_builtin() {
    all_archs::<resnet8::Resnet8>();
}

#[test]
fn vww_builtin() {
    all_archs::<vww::Vww>();
}

#[test]
fn dscnn_builtin() {
    all_archs::<dscnn::DsCnn>();
}

#[test]
fn ad_builtin() {
    all_archs::<ad::Autoencoder>();
}

#[test]
fn sweep_builtin() {
    use small_examples::models::sweep;
    all_archs::<sweep::SweepConv>();
    all_archs::<sweep::SweepChannelwise>();
    all_archs::<sweep::SweepResidual>();
    all_archs::<sweep::SweepGroupFc>();
}

#[test]
fn arena_is_planned_tight() {
    // Every network reaches the lower bound (the most bytes live at one step).
    fn tight<N: Network>() {
        assert_eq!(N::ARENA, N::LOWER_BOUND, "{}", N::NAME);
    }
    tight::<ad::Autoencoder>();
    tight::<dscnn::DsCnn>();
    tight::<vww::Vww>();
    tight::<resnet8::Resnet8>();
    // ResNet's three adds write over their residual: two 32x32x16 tensors
    // at the busiest step instead of three.
    assert_eq!(resnet8::Resnet8::IN_PLACE.iter().filter(|&&b| b).count(), 3);
    assert_eq!(<resnet8::Resnet8 as Model>::ARENA, 2 * 32 * 32 * 16);
}

/// The firmware's path: weights packed ahead of time (`pack`) and borrowed
/// (`from_packed`) give the network `load` gives, bit for bit, on every
/// arch this CPU runs; a buffer of the wrong length is an error.
#[test]
fn packed_ahead_of_time_equals_load() {
    type N = dscnn::DsCnn;
    let source = Generated { seed: 3 };
    let input = Generated::values(11, N::DIMS[0].elements(), 1.0);
    let run = |net: &N| {
        let mut arena = vec![f32::NAN; N::ARENA];
        let mut out = vec![0.0; 12];
        net.infer(&mut arena, &input, &mut out).unwrap();
        out.iter().map(|v| v.to_bits()).collect::<Vec<u32>>()
    };
    for arch in small_core::arch::available() {
        let mut buf = vec![0.0; N::packed_len(arch)];
        N::pack(&source, arch, &mut buf).unwrap();
        let buf: &'static [f32] = Box::leak(buf.into_boxed_slice());
        let packed = N::from_packed(arch, buf).unwrap();
        assert_eq!(
            run(&packed),
            run(&N::load(&source, arch).unwrap()),
            "{}",
            arch.name()
        );
        assert!(N::from_packed(arch, &buf[1..]).is_err());
        let mut short = vec![0.0; buf.len() - 1];
        assert!(N::pack(&source, arch, &mut short).is_err());
    }
    // A Cortex-M4's weights pack here (its firmware's build script does
    // this); running them here is an error, not a wrong answer.
    let mut buf = vec![0.0; N::packed_len(Arch::CortexM4)];
    assert!(!buf.is_empty());
    N::pack(&source, Arch::CortexM4, &mut buf).unwrap();
    let buf: &'static [f32] = Box::leak(buf.into_boxed_slice());
    assert!(matches!(
        N::from_packed(Arch::CortexM4, buf),
        Err(small_core::Error::ArchUnavailable { .. })
    ));
}

#[test]
fn short_arena_is_an_error() {
    let net = ad::Autoencoder::load(&Generated { seed: 1 }, Arch::best_available()).unwrap();
    let mut arena = vec![0.0; ad::Autoencoder::ARENA - 1];
    let e = net.forward(&mut arena).unwrap_err();
    assert!(
        e.to_string().contains(&ad::Autoencoder::ARENA.to_string()),
        "{e}"
    );
}

// ---- Real weights and LiteRT's golden data (../shared/models) ----

use small_core::load::tflite;
use small_core::load::tflite::verify_wiring;
use std::path::Path;

/// The MLPerf Tiny models directory: `SMALL_MODELS`, else `../shared/models`
/// beside the repository. Missing: a skip, printed, except under CI, where
/// it is a failure (CI has the files; a silent skip would hide a broken path).
fn read_f32(path: &Path) -> Vec<f32> {
    small_examples::golden::read_f32(path).unwrap_or_else(|e| panic!("{e}"))
}

/// Golden tensor `index` of input 0 (`0.tensors/<index>_<name>.bin`).
fn golden_tensor(golden: &Path, index: usize) -> Vec<f32> {
    let dir = golden.join("0.tensors");
    let prefix = format!("{index}_");
    let entry = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .unwrap_or_else(|| panic!("no tensor {index} in {}", dir.display()));
    read_f32(&entry.path())
}

/// Inputs checked end to end: all on the host, fewer under QEMU.
fn inputs(golden: &Path) -> Vec<usize> {
    let all: Vec<usize> = (0..)
        .take_while(|i| golden.join(format!("{i}.input.bin")).exists())
        .collect();
    if cfg!(target_arch = "aarch64") {
        // Emulated: the first random input and the real sample, if any.
        all.iter().copied().filter(|&i| i == 0 || i == 8).collect()
    } else {
        all
    }
}

fn golden<N: Network>() {
    let Some(dir) = small_tests::models_dir() else {
        return;
    };
    let file = N::FILE.unwrap();
    let model = tflite::Model::from_file(dir.join(file)).unwrap();
    let tensor = verify_wiring::<N>(&model).unwrap();
    let golden = dir.join(format!("{}.golden", file.trim_end_matches(".tflite")));
    let hybrid = |op: usize| {
        let w = model.operators()[op].input(1).unwrap();
        model.tensor(w).unwrap().dtype != tflite::DType::Float32
    };
    for arch in small_core::arch::available() {
        let net = N::load(&model, arch).unwrap();
        let mut arena = vec![f32::NAN; N::ARENA];
        // Layer by layer, each fed LiteRT's own input tensors: a failure
        // names the first wrong layer.
        for (i, l) in N::LAYERS.iter().enumerate() {
            let Some(spec) = l.spec else {
                // A concatenation copies: LiteRT's output exactly.
                for t in l.step.reads() {
                    let v = golden_tensor(&golden, tensor[t]);
                    N::tensor_mut(&mut arena, t)
                        .unwrap()
                        .fill_from_nhwc(&v)
                        .unwrap();
                }
                net.forward_layer(i, &mut arena).unwrap();
                let got = N::tensor(&arena, l.step.y).unwrap().to_nhwc();
                let want = golden_tensor(&golden, tensor[l.step.y]);
                assert_eq!(got, want, "{} layer {i} `{}`", N::NAME, l.name);
                continue;
            };
            let x = golden_tensor(&golden, tensor[l.step.x]);
            N::tensor_mut(&mut arena, l.step.x)
                .unwrap()
                .fill_from_nhwc(&x)
                .unwrap();
            let skip = (l.step.skip != small_core::model::NONE)
                .then(|| golden_tensor(&golden, tensor[l.step.skip]));
            if let Some(s) = &skip {
                N::tensor_mut(&mut arena, l.step.skip)
                    .unwrap()
                    .fill_from_nhwc(s)
                    .unwrap();
            }
            net.forward_layer(i, &mut arena).unwrap();
            let got = N::tensor(&arena, l.step.y).unwrap().to_nhwc();
            let want = golden_tensor(&golden, tensor[l.step.y]);
            let w = if spec.has_weights() {
                Some(
                    small_core::load::WeightSource::layer(
                        &model,
                        small_core::load::LayerRef {
                            name: l.name,
                            op: l.op,
                        },
                        &spec,
                    )
                    .unwrap(),
                )
            } else {
                None
            };
            let (wts, bias) = w.as_ref().map_or((small_core::Filter::none(), None), |w| {
                (w.filter(), w.bias.as_deref())
            });
            let shape = small_core::reference::Shape::from(N::DIMS[l.step.x]);
            let mut tol =
                small_core::reference::tolerances(&spec, &x, shape, wts, bias, skip.as_deref());
            if spec.has_weights() && hybrid(l.op) {
                // LiteRT quantizes this layer's input to int8 (scale
                // max|x| / 127), so each input is off by up to half a step.
                let half_step = x.iter().fold(0.0f32, |m, v| m.max(v.abs())) / 254.0;
                let mut lin = spec;
                lin.activation = small_core::Activation::None;
                let abs: Vec<f32> = wts.values.iter().map(|w| w.abs()).collect();
                let (q, _) = small_core::reference::layer(
                    &lin,
                    &vec![half_step; x.len()],
                    shape,
                    small_core::Filter {
                        values: &abs,
                        ..wts
                    },
                    None,
                    None,
                )
                .unwrap();
                tol.iter_mut().zip(q).for_each(|(t, q)| *t += q * 1.01);
            }
            if let Some((j, g, w, t)) = first_mismatch(&got, &want, &tol) {
                panic!(
                    "{} on {}: layer {i} `{}` (op {}) element {j}: got {g}, LiteRT {w}, bound {t}",
                    N::NAME,
                    arch.name(),
                    l.name,
                    l.op
                );
            }
        }
        // End to end, every golden input (fewer under QEMU).
        let mut out = vec![0.0; N::DIMS[N::OUTPUT].c];
        for i in inputs(&golden) {
            let input = read_f32(&golden.join(format!("{i}.input.bin")));
            let litert = read_f32(&golden.join(format!("{i}.output.bin")));
            let dq = golden.join(format!("{i}.output.dequantized_weights.bin"));
            let want = if dq.exists() {
                read_f32(&dq)
            } else {
                litert.clone()
            };
            let values =
                small_core::model::reference_run(&model, N::LAYERS, N::DIMS, &input).unwrap();
            let bounds = check::bounds(N::LAYERS, N::DIMS, &model, &values, PROBABLE).unwrap();
            let tol = head_bound(N::HEAD, &bounds[N::OUTPUT]);
            net.infer(&mut arena, &input, &mut out).unwrap();
            if let Some((j, g, w, t)) = first_mismatch(&out, &want, &tol) {
                panic!(
                    "{} on {} input {i}: output {j}: got {g}, LiteRT {w}, bound {t}",
                    N::NAME,
                    arch.name()
                );
            }
            if N::HEAD == Head::Softmax {
                assert_eq!(
                    check::argmax(&out),
                    check::argmax(&litert),
                    "{} input {i}: class",
                    N::NAME
                );
            }
        }
        println!(
            "{}: {} layers and {} golden inputs match LiteRT on {}",
            N::NAME,
            N::LAYERS.len(),
            inputs(&golden).len(),
            arch.name()
        );
    }
}

#[test]
fn resnet8_golden() {
    golden::<resnet8::Resnet8>();
}

#[test]
fn vww_golden() {
    golden::<vww::Vww>();
}

#[test]
fn dscnn_golden() {
    golden::<dscnn::DsCnn>();
}

#[test]
fn ad_golden() {
    golden::<ad::Autoencoder>();
}

/// The AD sample clip: 196 windows of 5 frames; LiteRT scores it 9.707087,
/// MLCommons' reference result 9.70710781.
#[test]
fn ad_sample_clip_score() {
    let Some(dir) = small_tests::models_dir() else {
        return;
    };
    let model = tflite::Model::from_file(dir.join("ad01_fp32.tflite")).unwrap();
    let net = ad::Autoencoder::load(&model, small_core::arch::selected().unwrap()).unwrap();
    let clip = read_f32(&dir.join("normal_id_01_00000000_hist_librosa.bin"));
    let (score, windows) = ad::anomaly_score(&net, &clip).unwrap();
    assert_eq!(windows, 196);
    println!("AD sample clip score {score:.6}");
    assert_eq!(format!("{score:.4}"), "9.7071");
}

#[test]
fn wiring_mismatch_is_an_error() {
    let Some(dir) = small_tests::models_dir() else {
        return;
    };
    // DS-CNN's declaration on ResNet-8's file: its stem is 10x4 stride 2,
    // 1 -> 64 channels; ResNet's op 0 is 3x3 stride 1, 3 -> 16.
    let model = tflite::Model::from_file(dir.join("pretrainedResnet.tflite")).unwrap();
    let e = dscnn::DsCnn::load(&model, Arch::best_available())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`conv`") && e.contains("declared 2x2, file has 1x1"),
        "{e}"
    );
    // Same strides, other shape: AD's first layer on DS-CNN's pointwise op.
    let kws = tflite::Model::from_file(dir.join("kws_ref_model_float32.tflite")).unwrap();
    let spec = <ad::Fc640To128>::SPEC;
    let r = small_core::load::LayerRef { name: "fc1", op: 2 };
    let e = small_core::load::WeightSource::layer(&kws, r, &spec)
        .unwrap_err()
        .to_string();
    assert!(e.contains("fc1"), "{e}");
    let e = verify_wiring::<dscnn::DsCnn>(&model)
        .unwrap_err()
        .to_string();
    assert!(e.contains("declared") && e.contains("file has"), "{e}");
}

// AD's first layers with operator 1 left out: every layer's weights load
// (op 2's are 128x128 as `Fc128To128` declares), but `skips` reads `fc1`'s
// output, which the file's op 2 does not: loading and packing fail on the
// wiring, naming the layer and both tensors.
use ad::{Fc128To128, Fc640To128};
small_core::model! {
    struct SkipsAnOperator {
        input frames: [1, 1, 640];
        fc1: Fc640To128 @ 0 (frames) -> a;
        skips: Fc128To128 @ 2 (a) -> b;
    }
}

#[test]
fn a_program_wired_unlike_its_file_does_not_load() {
    let Some(dir) = small_tests::models_dir() else {
        return;
    };
    let file = tflite::Model::from_file(dir.join("ad01_fp32.tflite")).unwrap();
    let load = SkipsAnOperator::load(&file, Arch::best_available()).map(|_| ());
    let mut packed = vec![0.0; SkipsAnOperator::packed_len(Arch::best_available())];
    let pack = SkipsAnOperator::pack(&file, Arch::best_available(), &mut packed);
    for e in [load.unwrap_err(), pack.unwrap_err()] {
        let e = e.to_string();
        assert!(
            e.contains("layer `skips` (op 2): input tensor declared t") && e.contains("file has"),
            "{e}"
        );
    }
    // The same layers wired as the file: both load.
    small_core::model! {
        struct Wired {
            input frames: [1, 1, 640];
            fc1: Fc640To128 @ 0 (frames) -> a;
            fc2: Fc128To128 @ 1 (a) -> b;
        }
    }
    Wired::load(&file, Arch::best_available()).unwrap();
    Wired::pack(&file, Arch::best_available(), &mut packed).unwrap();
}
