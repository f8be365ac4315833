//! The small graphs of `tests/data/tflite`, written by TensorFlow's
//! converter (`scripts/gen-test-models`; `MODELS.txt` lists their
//! operators): a network with every operator `small-codegen` maps, and
//! random chains and branches of convolutions, depthwise convolutions,
//! pools, residual ADDs and concatenations with random shapes, strides
//! and paddings, in f32 and int8. Each maps to a program, passes the graph
//! check, and its reference run on the file's weights equals LiteRT's
//! outputs on the saved inputs: int8 exactly, f32 within the
//! probabilistic rounding bound of its layers. (The generated kernels
//! equal the reference layers in `kernels.rs`; `every_op` and two random
//! graphs with concatenations also run through `tflite_model!` below.)

use small_codegen::{Head, Program};
use small_core::Dtype;
use small_core::load::tflite::{Model as File, OpKind, wiring};
use small_core::model::{reference_run, reference_run_i8};
use small_core::reference::int8;
use small_examples::check::{self, Propagation, first_mismatch, head_bound};
use small_examples::models::Head as Checked;
use std::path::{Path, PathBuf};

/// Inputs per model in each `.in` file.
const INPUTS: usize = 2;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/tflite")
}

fn models() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tflite"))
        .collect();
    v.sort();
    assert!(v.len() >= 27, "tests/data/tflite holds {} models", v.len());
    v
}

/// LiteRT's reference float LOGISTIC, cutoffs included.
fn logistic(x: f32) -> f32 {
    if x > 16.619_047 {
        1.0
    } else if x < -9.0 {
        x.exp()
    } else {
        1.0 / (1.0 + (-x).exp())
    }
}

fn int8_softmax(file: &File, op: usize) -> int8::SoftmaxParams {
    let op = &file.operators()[op];
    assert_eq!(op.kind, OpKind::Softmax);
    let x = file.tensor(op.input(0).unwrap()).unwrap();
    let scale = x.quantization.as_ref().unwrap().scales[0];
    int8::SoftmaxParams::new(op.options.beta.unwrap_or(1.0), scale).unwrap()
}

fn int8_logistic(file: &File, op: usize) -> int8::LogisticTable {
    let op = &file.operators()[op];
    assert_eq!(op.kind, OpKind::Logistic);
    let quant = |t: usize| {
        let q = file.tensor(t).unwrap().quantization.as_ref().unwrap();
        int8::Quant {
            scale: q.scales[0],
            zero_point: q.zero_points[0] as i32,
        }
    };
    int8::LogisticTable::new(quant(op.input(0).unwrap()), quant(op.outputs[0])).unwrap()
}

fn check_model(path: &Path) {
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let file = File::from_file(path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let p = Program::from_file(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (infos, dims) = small_tests::program_layers(&p);
    wiring(&file, dims.len(), &infos).unwrap_or_else(|e| panic!("{name}: {e}"));
    let raw = |ext: &str| std::fs::read(path.with_extension(ext)).unwrap();
    let (ins, outs) = (raw("in"), raw("out"));
    let out_len = dims.last().unwrap().elements();
    let width = if p.dtype == Dtype::F32 { 4 } else { 1 };
    assert_eq!(
        ins.len(),
        INPUTS * p.input.elements() * width,
        "{name}: .in"
    );
    assert_eq!(outs.len(), INPUTS * out_len * width, "{name}: .out");
    let at = |i: usize| format!("{name} input {i}\n{}", p.table(&name));
    for i in 0..INPUTS {
        let input = &ins[i * ins.len() / INPUTS..(i + 1) * ins.len() / INPUTS];
        let want = &outs[i * outs.len() / INPUTS..(i + 1) * outs.len() / INPUTS];
        if p.dtype == Dtype::I8 {
            let x: Vec<i8> = input.iter().map(|&b| b as i8).collect();
            let values = reference_run_i8(&file, &infos, &dims, &x)
                .unwrap_or_else(|e| panic!("{}: {e}", at(i)));
            let mut got = values.last().unwrap().clone();
            let logits = got.clone();
            match p.head {
                Head::Softmax(op) => {
                    int8::softmax(&logits, out_len, &int8_softmax(&file, op), &mut got).unwrap()
                }
                Head::Logistic(op) => {
                    int8::logistic(&logits, &int8_logistic(&file, op), &mut got).unwrap()
                }
                Head::None => {}
            }
            let want: Vec<i8> = want.iter().map(|&b| b as i8).collect();
            assert_eq!(got, want, "{}", at(i));
        } else {
            let f32s = |b: &[u8]| -> Vec<f32> {
                b.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect()
            };
            let (x, want) = (f32s(input), f32s(want));
            let values = reference_run(&file, &infos, &dims, &x)
                .unwrap_or_else(|e| panic!("{}: {e}", at(i)));
            let probable = Propagation::Probable { lambda: 8.0 };
            let bounds = check::bounds(&infos, &dims, &file, &values, probable).unwrap();
            let mut got = values.last().unwrap().clone();
            let tol = match p.head {
                Head::Softmax(_) => {
                    check::softmax(&mut got);
                    head_bound(Checked::Softmax, bounds.last().unwrap())
                }
                Head::Logistic(_) => {
                    got.iter_mut().for_each(|v| *v = logistic(*v));
                    // 1/4-Lipschitz, then the function's own rounding
                    // (values at most 1).
                    let e = bounds.last().unwrap();
                    e.iter().map(|e| e / 4.0 + 4.0 * f32::EPSILON).collect()
                }
                Head::None => head_bound(Checked::Reconstruction, bounds.last().unwrap()),
            };
            if let Some((j, g, w, t)) = first_mismatch(&got, &want, &tol) {
                panic!("{}: output {j}: got {g}, LiteRT {w}, bound {t}", at(i));
            }
        }
    }
    println!(
        "{name}: {} layers, {:?}: LiteRT's outputs",
        p.layers.len(),
        p.dtype
    );
}

#[test]
fn every_graph_maps_and_matches_litert() {
    for path in models() {
        check_model(&path);
    }
}

/// Every operator `small-codegen` maps, from TensorFlow's converter: the
/// list `MODELS.txt` records for `every_op`.
#[test]
fn every_op_has_every_operator() {
    let file = File::from_file(dir().join("every_op.tflite")).unwrap();
    let p = Program::from_file(&file).unwrap();
    let ops: Vec<&str> = p.layers.iter().map(|l| l.operators.as_str()).collect();
    for want in [
        "CONV_2D",
        "DEPTHWISE_CONV_2D",
        "CONV_2D + ADD",
        "MAX_POOL_2D",
        "AVERAGE_POOL_2D",
        "MEAN + RELU",
        "FULLY_CONNECTED",
        "CONCATENATION",
    ] {
        assert!(ops.contains(&want), "every_op has no {want}: {ops:?}");
    }
    assert!(
        (p.layers.iter()).any(|l| l.spec.is_some_and(|s| s.g > 1 && s.fc > 1)),
        "every_op has no grouped CONV_2D"
    );
    assert!(matches!(p.head, Head::Softmax(_)));
}

// `every_op` through `tflite_model!`: the generated kernels on every arch
// the CPU has, against the reference run (which equals LiteRT above): int8
// exactly, f32 within the bound. x86_64 only, as `codegen.rs`'s macro test:
// the cross stage would build these kernels for little gain.
#[cfg(target_arch = "x86_64")]
mod from_the_macro {
    use super::*;
    use small_core::model::LayerInfo;

    small_core::tflite_model!(EveryOp = "data/tflite/every_op.tflite");
    small_core::tflite_model!(EveryOpInt8 = "data/tflite/every_op_int8.tflite");
    // Random graphs with concatenations (checked below: a regenerated
    // set without one here fails), f32 and int8.
    small_core::tflite_model!(Random14 = "data/tflite/random_14.tflite");
    small_core::tflite_model!(Random19 = "data/tflite/random_19.tflite");
    // PADs folded with uneven sides and padding steps, f32 and int8.
    small_core::tflite_model!(Pad = "data/tflite/pad.tflite");
    small_core::tflite_model!(PadInt8 = "data/tflite/pad_int8.tflite");
    // LOGISTIC as a layer (not the head), f32 and int8.
    small_core::tflite_model!(LogisticMid = "data/tflite/logistic_mid.tflite");
    small_core::tflite_model!(LogisticMidInt8 = "data/tflite/logistic_mid_int8.tflite");

    /// `N`, generated from `name`, on every arch the CPU has, against
    /// LiteRT's outputs on the saved inputs: int8 exactly, f32 within
    /// the bound of its layers (as `check_model`). `N` must hold a line
    /// `has` accepts: what the test is about (`what`).
    fn golden<N: small_core::model::Model>(name: &str, what: &str, has: fn(&LayerInfo) -> bool)
    where
        N::Elem: Element,
    {
        assert!(
            N::LAYERS.iter().any(has),
            "{name} has no {what}: pick another file (MODELS.txt)"
        );
        let path = dir().join(format!("{name}.tflite"));
        let file = File::from_file(&path).unwrap();
        let raw = |ext: &str| std::fs::read(path.with_extension(ext)).unwrap();
        let (ins, outs) = (raw("in"), raw("out"));
        for i in 0..INPUTS {
            let input = &ins[i * ins.len() / INPUTS..(i + 1) * ins.len() / INPUTS];
            let want = &outs[i * outs.len() / INPUTS..(i + 1) * outs.len() / INPUTS];
            let (x, want) = (N::Elem::decode(input), N::Elem::decode(want));
            let tol = N::Elem::bound::<N>(&file, &x);
            for arch in small_core::arch::available() {
                let got = small_tests::run_program::<N>(&file, arch, &x);
                let at = format!("{name} input {i} on {}", arch.name());
                N::Elem::compare(&got, &want, &tol, &at);
            }
        }
        println!("{name}: the generated kernels equal LiteRT's outputs on every arch");
    }

    /// What `golden` needs of an element type.
    trait Element: Sized + Copy + Default + 'static {
        fn decode(bytes: &[u8]) -> Vec<Self>;
        /// Per-output bound on the difference from LiteRT.
        fn bound<N: small_core::model::Model<Elem = Self>>(file: &File, x: &[Self]) -> Vec<f32>;
        fn compare(got: &[Self], want: &[Self], tol: &[f32], at: &str);
    }

    impl Element for i8 {
        fn decode(bytes: &[u8]) -> Vec<i8> {
            bytes.iter().map(|&b| b as i8).collect()
        }
        fn bound<N: small_core::model::Model<Elem = i8>>(_: &File, _: &[i8]) -> Vec<f32> {
            Vec::new()
        }
        fn compare(got: &[i8], want: &[i8], _: &[f32], at: &str) {
            assert_eq!(got, want, "{at}");
        }
    }

    impl Element for f32 {
        fn decode(bytes: &[u8]) -> Vec<f32> {
            (bytes.chunks_exact(4))
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        }
        fn bound<N: small_core::model::Model<Elem = f32>>(file: &File, x: &[f32]) -> Vec<f32> {
            let values = reference_run(file, N::LAYERS, N::DIMS, x).unwrap();
            let probable = Propagation::Probable { lambda: 8.0 };
            let bounds = check::bounds(N::LAYERS, N::DIMS, file, &values, probable).unwrap();
            head_bound(Checked::Reconstruction, bounds.last().unwrap())
        }
        fn compare(got: &[f32], want: &[f32], tol: &[f32], at: &str) {
            if let Some((j, g, w, t)) = first_mismatch(got, want, tol) {
                panic!("{at}: output {j}: got {g}, LiteRT {w}, bound {t}");
            }
        }
    }

    #[test]
    fn concatenations_through_the_macro_equal_litert() {
        let concat = |l: &LayerInfo| l.spec.is_none();
        golden::<Random14>("random_14", "concatenation", concat);
        golden::<Random19>("random_19", "concatenation", concat);
    }

    /// PADs: folded into a convolution with uneven sides (explicit
    /// padding), folded with a SAME convolution's own, and padding steps
    /// (before a pool, read twice, before a MEAN).
    #[test]
    fn pads_through_the_macro_equal_litert() {
        let step = |l: &LayerInfo| {
            l.spec
                .is_some_and(|s| s.fh == 1 && !s.padding.is_none(1, 1))
        };
        let folded = |l: &LayerInfo| {
            l.spec
                .is_some_and(|s| s.fh == 3 && !s.padding.is_none(1, 1))
        };
        for layers in [Pad::LAYERS, PadInt8::LAYERS] {
            assert!(
                layers.iter().any(folded),
                "no convolution with a folded PAD"
            );
        }
        golden::<Pad>("pad", "padding step", step);
        golden::<PadInt8>("pad_int8", "padding step", step);
    }

    /// LOGISTIC before the last operator: a layer with `activation =
    /// logistic` (int8: LiteRT's table as its requantization).
    #[test]
    fn logistic_layers_through_the_macro_equal_litert() {
        use small_core::Activation;
        let logistic = |l: &LayerInfo| l.spec.is_some_and(|s| s.activation == Activation::Logistic);
        golden::<LogisticMid>("logistic_mid", "LOGISTIC layer", logistic);
        golden::<LogisticMidInt8>("logistic_mid_int8", "LOGISTIC layer", logistic);
    }

    use small_core::Arch::{self, CortexM4};
    // This target's portable arch: `reference`, or NEON where it is the
    // baseline and `reference` is left out (`Machine::excludes_reference`).
    const HERE: Arch = if cfg!(target_arch = "aarch64") {
        Arch::Neon
    } else {
        Arch::Reference
    };
    // Packed by build.rs (`small_core::build::pack_tflite`), embedded here.
    macro_rules! packed_here {
        ($net:ty, $file:literal) => {{
            #[cfg(target_arch = "aarch64")]
            let p = small_core::packed_weights!($net, Neon, $file);
            #[cfg(not(target_arch = "aarch64"))]
            let p = small_core::packed_weights!($net, Reference, $file);
            p
        }};
    }
    static PACKED: [f32; EveryOp::packed_len(HERE)] = packed_here!(EveryOp, "every_op.tflite");
    static PACKED_M4: [f32; EveryOp::packed_len(CortexM4)] =
        small_core::packed_weights!(EveryOp, CortexM4, "every_op.tflite");

    // The int8 twin: words holding each layer's rows and tiles.
    static PACKED_I8: [f32; EveryOpInt8::packed_len(HERE)] =
        packed_here!(EveryOpInt8, "every_op_int8.tflite");
    static PACKED_I8_M4: [f32; EveryOpInt8::packed_len(CortexM4)] =
        small_core::packed_weights!(EveryOpInt8, CortexM4, "every_op_int8.tflite");

    /// int8: the words packed at build time are those `pack` writes, bit
    /// for bit, and the program runs on them as loaded from the file.
    #[test]
    fn int8_weights_packed_at_build_time_run_as_loaded_ones() {
        let file = File::parse(EveryOpInt8::FILE).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
        for (arch, packed) in [(HERE, &PACKED_I8[..]), (CortexM4, &PACKED_I8_M4[..])] {
            let mut want = vec![0.0; EveryOpInt8::packed_len(arch)];
            EveryOpInt8::pack(&file, arch, &mut want).unwrap();
            assert!(
                bits(&want) == bits(packed),
                "{}: packed at build time",
                arch.name()
            );
        }
        let q: Vec<i8> = (0..EveryOpInt8::DIMS[0].elements())
            .map(|i| (i * 7919 % 256) as u8 as i8)
            .collect();
        let loaded = small_tests::run_program::<EveryOpInt8>(&file, HERE, &q);
        let net = EveryOpInt8::from_packed(HERE, &PACKED_I8).unwrap();
        let mut arena = vec![0; EveryOpInt8::ARENA];
        EveryOpInt8::input(&mut arena)
            .unwrap()
            .fill_from_nhwc(&q)
            .unwrap();
        net.forward(&mut arena).unwrap();
        assert_eq!(EveryOpInt8::output(&arena).unwrap().to_nhwc(), loaded);
    }

    /// The weights packed at build time are those `pack` writes, for
    /// this arch and another, and the program runs on them as on weights
    /// loaded from the file: the same bits.
    #[test]
    fn weights_packed_at_build_time_run_as_loaded_ones() {
        let file = File::parse(EveryOp::FILE).unwrap();
        for (arch, packed) in [(HERE, &PACKED[..]), (CortexM4, &PACKED_M4[..])] {
            let mut want = vec![0.0; EveryOp::packed_len(arch)];
            EveryOp::pack(&file, arch, &mut want).unwrap();
            assert!(want == packed, "{}: packed at build time", arch.name());
        }
        let x: Vec<f32> = (0..EveryOp::DIMS[0].elements())
            .map(|i| ((i * 7919) % 200) as f32 / 50.0 - 2.0)
            .collect();
        let loaded = small_tests::run_program::<EveryOp>(&file, HERE, &x);
        let net = EveryOp::from_packed(HERE, &PACKED).unwrap();
        let mut arena = vec![0.0; EveryOp::ARENA];
        EveryOp::input(&mut arena)
            .unwrap()
            .fill_from_nhwc(&x)
            .unwrap();
        net.forward(&mut arena).unwrap();
        assert_eq!(EveryOp::output(&arena).unwrap().to_nhwc(), loaded);
    }

    #[test]
    fn every_op_kernels_equal_the_reference_on_every_arch() {
        let f32_file = File::from_file(dir().join("every_op.tflite")).unwrap();
        // The copy the program embeds is the file.
        let i8_file = File::parse(EveryOpInt8::FILE).unwrap();
        assert_eq!(
            EveryOp::FILE,
            std::fs::read(dir().join("every_op.tflite")).unwrap()
        );
        let x: Vec<f32> = (0..EveryOp::DIMS[0].elements())
            .map(|i| ((i * 7919) % 200) as f32 / 50.0 - 2.0)
            .collect();
        let q: Vec<i8> = (0..EveryOpInt8::DIMS[0].elements())
            .map(|i| (i * 7919 % 256) as u8 as i8)
            .collect();
        let values = reference_run(&f32_file, &EveryOp::LAYERS, &EveryOp::DIMS, &x).unwrap();
        let probable = Propagation::Probable { lambda: 8.0 };
        let bounds = check::bounds(
            &EveryOp::LAYERS,
            &EveryOp::DIMS,
            &f32_file,
            &values,
            probable,
        )
        .unwrap();
        let want_q =
            reference_run_i8(&i8_file, &EveryOpInt8::LAYERS, &EveryOpInt8::DIMS, &q).unwrap();
        for arch in small_core::arch::available() {
            let got = small_tests::run_program::<EveryOp>(&f32_file, arch, &x);
            let (want, tol) = (values.last().unwrap(), bounds.last().unwrap());
            if let Some((j, g, w, t)) = first_mismatch(&got, want, tol) {
                panic!(
                    "every_op on {}: output {j}: got {g}, reference {w}, bound {t}",
                    arch.name()
                );
            }
            let got = small_tests::run_program::<EveryOpInt8>(&i8_file, arch, &q);
            assert_eq!(
                &got,
                want_q.last().unwrap(),
                "every_op_int8 on {}",
                arch.name()
            );
            println!(
                "every_op (f32, int8): the kernels equal the reference on {}",
                arch.name()
            );
        }
    }
}
