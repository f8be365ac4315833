//! `small-codegen`'s mapping from a `.tflite` graph to layers, against
//! the MLPerf Tiny declarations of `examples/models`: on each of the
//! eight files it must find the same layers (declarations, operators,
//! wiring, shapes, arena) in the same order. ResNet-8 is written by hand
//! (the tutorial), so its generated program is the hand-written one; the
//! others are the tool's output, checked current. And what it rejects,
//! and how.

use small_codegen::{Head, Program};
use small_core::load::tflite::Model as File;
use small_core::model::{Model, NONE};
use small_examples::models::{Int8Network, Network, ad, dscnn, resnet8, vww};

/// Maps `N`'s file and compares every layer with `N`'s declaration.
fn same_program<N: Model>(name: &str, file: &str) {
    let Some(dir) = small_tests::models_dir() else {
        return;
    };
    let path = dir.join(file);
    let model = File::from_file(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let p = Program::from_file(&model).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(p.input, N::DIMS[0], "{name}: input");
    assert_eq!(
        p.layers.len(),
        N::LAYERS.len(),
        "{name}: layers\n{}",
        p.table(name)
    );
    // The arena the table shows is the one model! planned.
    let arena = p.arena(None);
    let elem = std::mem::size_of::<N::Elem>();
    assert_eq!(arena.bytes, N::ARENA * elem, "{name}: arena");
    assert_eq!(
        arena.lower_bound,
        N::LOWER_BOUND * elem,
        "{name}: lower bound"
    );
    let offsets: Vec<usize> = N::OFFSETS.iter().map(|o| o * elem).collect();
    assert_eq!(arena.offsets, offsets, "{name}: tensor offsets");
    for (i, (got, want)) in p.layers.iter().zip(N::LAYERS).enumerate() {
        let at = format!("{name}: layer {i} (`{}`)\n{}", want.name, p.table(name));
        assert_eq!(got.spec, want.spec, "{at}: declaration");
        assert_eq!(
            (got.op, got.out_op),
            (want.op, want.out_op),
            "{at}: operators"
        );
        let skip = (want.step.skip != NONE).then_some(want.step.skip);
        assert_eq!((got.x, got.skip), (want.step.x, skip), "{at}: tensors read");
        assert_eq!(want.step.y, i + 1, "{at}: the declaration's output id");
        assert_eq!(got.output, N::DIMS[i + 1], "{at}: output dims");
        assert_eq!(got.macs, want.macs, "{at}: MACs");
    }
    assert_eq!(p.macs(), N::MACS, "{name}: MACs");
    // The file's tensor of each program tensor, as the graph check finds it.
    let tensors = small_core::load::tflite::verify_wiring::<N>(&model).unwrap();
    assert_eq!(p.tensors, tensors, "{name}: file tensors");
}

fn f32_program<N: Network>() {
    same_program::<N>(N::NAME, N::FILE.unwrap());
}

fn i8_program<N: Int8Network>() {
    same_program::<N>(N::NAME, N::FILE);
}

#[test]
fn the_mlperf_tiny_files_map_to_the_examples_programs() {
    f32_program::<resnet8::Resnet8>();
    f32_program::<vww::Vww>();
    f32_program::<dscnn::DsCnn>();
    f32_program::<ad::Autoencoder>();
    i8_program::<resnet8::int8::Resnet8>();
    i8_program::<vww::int8::Vww>();
    i8_program::<dscnn::int8::DsCnn>();
    i8_program::<ad::int8::Autoencoder>();
}

#[test]
fn heads_and_table() {
    let Some(dir) = small_tests::models_dir() else {
        return;
    };
    let file = File::from_file(dir.join("pretrainedResnet.tflite")).unwrap();
    let p = Program::from_file(&file).unwrap();
    assert_eq!(p.head, Head::Softmax(15));
    let table = p.table("resnet8");
    // The fused ADD and its operators, the tile of every arch, the
    // declaration.
    let conv2 = table.lines().find(|l| l.contains("@ 2 => 3")).unwrap();
    assert!(
        conv2.contains("CONV_2D + ADD") && conv2.contains("residual"),
        "{conv2}"
    );
    assert_eq!(
        conv2.split_whitespace().filter(|w| w.contains('x')).count(),
        2 + small_core::arch_defs::ARCHS.len(),
        "{conv2}"
    );
    let source = p.source("Resnet8");
    // Fields named after their kind, structs after their geometry.
    assert!(
        source.contains("conv3: Conv3x3C16To16Add @ 2 => 3 (t23, + t22) -> t25;")
            && source.contains("pw1: Pw16To32S2 @ 6 (t25) -> t28;")
            && source.contains("fc: Fc64To10 @ 14 (t34) -> t36;"),
        "{source}"
    );
    let names: Vec<String> = p.names().into_iter().map(|n| n.field).collect();
    assert_eq!(
        names,
        [
            "conv1", "conv2", "conv3", "conv4", "pw1", "conv5", "conv6", "pw2", "conv7", "avgpool",
            "fc"
        ]
    );
    let ad = File::from_file(dir.join("ad01_fp32.tflite")).unwrap();
    assert_eq!(Program::from_file(&ad).unwrap().head, Head::None);
}

// ---- what the mapping rejects ----------------------------------------------

use small_core::load::tflite::fixture::{code, conv_options, f32_buffer, op, serialize, tensor};
use small_core::load::tflite::schema as fb;

/// A file of `[1, 4, 4, 2]` tensors 0 (input), 2, 3 and a 3x3 SAME
/// convolution (relu) 0 -> 2 with filter 1, then `ops` (code 1 is
/// `second`), graph inputs `inputs`, output tensor 3.
fn graph(
    second: fb::BuiltinOperator,
    ops: Vec<fb::Operator>,
    inputs: Vec<i32>,
) -> Result<Program, String> {
    use fb::TensorType::Float32 as F;
    let model = fb::Model {
        version: 3,
        operator_codes: Some(vec![code(fb::BuiltinOperator::Conv2d), code(second)]),
        subgraphs: Some(vec![fb::SubGraph {
            tensors: Some(vec![
                tensor("input", &[1, 4, 4, 2], F, 0),
                tensor("conv/filter", &[2, 3, 3, 2], F, 1),
                tensor("conv/out", &[1, 4, 4, 2], F, 0),
                tensor("out", &[1, 4, 4, 2], F, 0),
            ]),
            inputs: Some(inputs),
            outputs: Some(vec![3]),
            operators: Some(
                [op(
                    0,
                    &[0, 1, -1],
                    &[2],
                    Some(conv_options(1, fb::Padding::Same, 1)),
                )]
                .into_iter()
                .chain(ops)
                .collect(),
            ),
            name: Some("main".into()),
        }]),
        buffers: Some(vec![fb::Buffer::default(), f32_buffer(&[0.5; 36])]),
        ..Default::default()
    };
    let file = File::parse(&serialize(&model)).map_err(|e| e.to_string())?;
    Program::from_file(&file).map_err(|e| e.to_string())
}

#[test]
fn unsupported_operators_are_named_with_their_tensors() {
    let e = graph(
        fb::BuiltinOperator::Mul,
        vec![op(1, &[2, 2], &[3], None)],
        vec![0],
    )
    .unwrap_err();
    assert!(
        e.starts_with("operator 1 (MUL): not supported; inputs t2 [1, 4, 4, 2], t2 [1, 4, 4, 2], outputs t3 [1, 4, 4, 2]. Supported: CONV_2D,"),
        "{e}"
    );
    // An ADD of a convolution with a fused activation: not a residual,
    // a layer of its own (1x1 depthwise of weight 1, residual).
    let p = graph(
        fb::BuiltinOperator::Add,
        vec![op(1, &[2, 0], &[3], None)],
        vec![0],
    )
    .unwrap();
    let add = &p.layers[1];
    assert_eq!(add.operators, "ADD");
    let s = add.spec.unwrap();
    assert_eq!((s.fh, s.fw, s.fc, s.k, s.g), (1, 1, 1, 1, 2));
    assert!(s.residual);
    assert_eq!((add.x, add.skip), (1, Some(0)));
    // Two graph inputs.
    let e = graph(fb::BuiltinOperator::Mul, vec![], vec![0, 2]).unwrap_err();
    assert!(
        e.starts_with(
            "the graph has 2 inputs (t0 [1, 4, 4, 2], t2 [1, 4, 4, 2]); a program has one"
        ),
        "{e}"
    );
    // The convolution alone maps (its output need not be the file's).
    let p = graph(fb::BuiltinOperator::Mul, vec![], vec![0]).unwrap();
    assert_eq!(p.layers.len(), 1);
    assert_eq!(
        p.layers[0].spec.unwrap().activation,
        small_core::Activation::Relu
    );
}

/// A file: input `[1, 5, 6, 2]` -> PAD by `pads` (top, bottom, left,
/// right) -> a 3x3 VALID convolution with stride `s`, as the weights'
/// SAME padding would read it or not; loaded through the program.
fn padded(pads: [i32; 4], s: i32) -> Result<(Program, Vec<f32>, Vec<f32>), String> {
    let [t, b, l, r] = pads;
    padded_all([0, 0, t, b, l, r, 0, 0], s)
}

/// As [`padded`], with the PAD's amounts on all four axes (batch,
/// height, width, channels; before and after each).
fn padded_all(pads: [i32; 8], s: i32) -> Result<(Program, Vec<f32>, Vec<f32>), String> {
    use fb::TensorType::{Float32 as F, Int32};
    let [_, _, t, b, l, r, _, _] = pads;
    let (h, w) = (5 + t + b, 6 + l + r);
    let (oh, ow) = ((h - 3) / s + 1, (w - 3) / s + 1);
    let amounts: Vec<u8> = pads.iter().flat_map(|v: &i32| v.to_le_bytes()).collect();
    let weights: Vec<f32> = (0..36).map(|i| (i % 7) as f32 - 3.0).collect();
    let model = fb::Model {
        version: 3,
        operator_codes: Some(vec![
            code(fb::BuiltinOperator::Pad),
            code(fb::BuiltinOperator::Conv2d),
        ]),
        subgraphs: Some(vec![fb::SubGraph {
            tensors: Some(vec![
                tensor("input", &[1, 5, 6, 2], F, 0),
                tensor("pads", &[4, 2], Int32, 2),
                tensor("padded", &[1, h, w, 2], F, 0),
                tensor("conv/filter", &[2, 3, 3, 2], F, 1),
                tensor("out", &[1, oh, ow, 2], F, 0),
            ]),
            inputs: Some(vec![0]),
            outputs: Some(vec![4]),
            operators: Some(vec![
                op(0, &[0, 1], &[2], None),
                op(
                    1,
                    &[2, 3, -1],
                    &[4],
                    Some(conv_options(s, fb::Padding::Valid, 1)),
                ),
            ]),
            name: Some("main".into()),
        }]),
        buffers: Some(vec![
            fb::Buffer::default(),
            f32_buffer(&weights),
            fb::Buffer {
                data: Some(amounts),
                ..Default::default()
            },
        ]),
        ..Default::default()
    };
    let file = File::parse(&serialize(&model)).map_err(|e| e.to_string())?;
    let p = Program::from_file(&file).map_err(|e| e.to_string())?;
    // The program's layer on the PAD's input against the convolution by
    // hand on the padded input (relu: the fixture's activation).
    let x: Vec<f32> = (0..60).map(|i| ((i * 5) % 11) as f32 - 5.0).collect();
    let (infos, dims) = small_tests::program_layers(&p);
    small_core::load::tflite::wiring(&file, dims.len(), &infos).map_err(|e| e.to_string())?;
    let got =
        small_core::model::reference_run(&file, &infos, &dims, &x).map_err(|e| e.to_string())?;
    let at = |y: i32, x_: i32, c: i32| -> f32 {
        let (y, x_) = (y - t, x_ - l);
        if (0..5).contains(&y) && (0..6).contains(&x_) {
            x[((y * 6 + x_) * 2 + c) as usize]
        } else {
            0.0
        }
    };
    let mut want = Vec::new();
    for oy in 0..oh {
        for ox in 0..ow {
            for k in 0..2 {
                let mut acc = 0.0;
                for (i, w) in weights[k * 18..(k + 1) * 18].iter().enumerate() {
                    let (fy, fx, c) = (i as i32 / 6, i as i32 / 2 % 3, i as i32 % 2);
                    acc += w * at(oy * s + fy, ox * s + fx, c);
                }
                want.push(f32::max(acc, 0.0));
            }
        }
    }
    Ok((p, got.last().unwrap().clone(), want))
}

#[test]
fn a_pad_folds_into_the_convolution_reading_it() {
    use small_core::Padding;
    // TensorFlow's SAME split: stride 1 pads 1 + 1; stride 2 on 5 rows
    // pads 1 + 1 and on 6 columns 0 + 1. Then the layer is declared SAME.
    // Other amounts (1 + 0 where SAME pads 0 + 1, or more) are explicit.
    let explicit = |[top, bottom, left, right]: [usize; 4]| Padding::Explicit {
        top,
        bottom,
        left,
        right,
    };
    for (pads, s, padding) in [
        ([1, 1, 1, 1], 1, Padding::Same),
        ([1, 1, 0, 1], 2, Padding::Same),
        ([1, 1, 1, 0], 2, explicit([1, 1, 1, 0])),
        ([2, 2, 2, 2], 1, explicit([2, 2, 2, 2])),
        ([0, 3, 2, 0], 1, explicit([0, 3, 2, 0])),
    ] {
        let (p, got, want) = padded(pads, s).unwrap();
        assert_eq!(p.layers.len(), 1);
        assert_eq!(p.layers[0].spec.unwrap().padding, padding, "pads {pads:?}");
        assert_eq!(p.layers[0].x, 0, "the layer reads the PAD's input");
        // Small integers: exact in any order.
        assert_eq!(got, want, "pads {pads:?} stride {s}");
    }
    // Padding the channels (or the batch) is no layer's padding.
    let e = padded_all([0, 0, 1, 1, 1, 1, 0, 1], 1).unwrap_err();
    assert!(
        e.starts_with("operator 0 (PAD): a PAD of other than zeros on height and width"),
        "{e}"
    );
}

#[test]
fn a_relu_after_an_activation_is_a_layer_of_its_own() {
    // The fixture's convolution has a fused RELU already.
    let p = graph(
        fb::BuiltinOperator::Relu,
        vec![op(1, &[2], &[3], None)],
        vec![0],
    )
    .unwrap();
    assert_eq!(p.layers.len(), 2);
    let relu = &p.layers[1];
    assert_eq!(relu.operators, "RELU");
    let spec = relu.spec.unwrap();
    assert_eq!(spec.activation, small_core::Activation::Relu);
    assert!(!spec.residual);
    assert_eq!((spec.fh, spec.fc, spec.k, spec.g), (1, 1, 1, 2));
}

// ---- concatenation ----------------------------------------------------------

/// A file: input t0 `[1, 4, 4, 2]` -> MAX_POOL_2D 1x1 -> t1 (quantized as
/// t0), then CONCATENATION of `inputs` -> t2 `[1, 4, 4, out_c]` along
/// `axis` with fused `act`. Float, or int8 with t2 of scale `out_scale`
/// (t0, t1: 0.5).
fn concat_file(
    inputs: &[i32],
    out_c: i32,
    axis: i32,
    act: fb::ActivationFunctionType,
    out_scale: Option<f32>,
) -> File {
    let type_ = match out_scale {
        Some(_) => fb::TensorType::Int8,
        None => fb::TensorType::Float32,
    };
    let quant = |scale: f32| {
        out_scale.map(|_| {
            Box::new(fb::QuantizationParameters {
                scale: Some(vec![scale]),
                zero_point: Some(vec![-3]),
                ..Default::default()
            })
        })
    };
    let t = |name: &str, shape: &[i32], scale: f32| fb::Tensor {
        quantization: quant(scale),
        ..tensor(name, shape, type_, 0)
    };
    let pool = fb::BuiltinOptions::Pool2DOptions(Box::new(fb::Pool2DOptions {
        padding: fb::Padding::Valid,
        stride_w: 1,
        stride_h: 1,
        filter_width: 1,
        filter_height: 1,
        fused_activation_function: fb::ActivationFunctionType::None,
    }));
    let cat = fb::BuiltinOptions::ConcatenationOptions(Box::new(fb::ConcatenationOptions {
        axis,
        fused_activation_function: act,
    }));
    let model = fb::Model {
        version: 3,
        operator_codes: Some(vec![
            code(fb::BuiltinOperator::MaxPool2d),
            code(fb::BuiltinOperator::Concatenation),
        ]),
        subgraphs: Some(vec![fb::SubGraph {
            tensors: Some(vec![
                t("input", &[1, 4, 4, 2], 0.5),
                t("pool", &[1, 4, 4, 2], 0.5),
                t("cat", &[1, 4, 4, out_c], out_scale.unwrap_or(0.5)),
            ]),
            inputs: Some(vec![0]),
            outputs: Some(vec![2]),
            operators: Some(vec![
                op(0, &[0], &[1], Some(pool)),
                op(1, inputs, &[2], Some(cat)),
            ]),
            name: Some("main".into()),
        }]),
        buffers: Some(vec![fb::Buffer::default()]),
        ..Default::default()
    };
    File::parse(&serialize(&model)).unwrap()
}

#[test]
fn a_concatenation_along_channels_is_a_concat_line() {
    use fb::ActivationFunctionType::{None as NoAct, Relu};
    for (axis, int8) in [(3, None), (-1, None), (3, Some(0.5))] {
        let file = concat_file(&[1, 0, 1], 6, axis, NoAct, int8);
        let p = Program::from_file(&file).unwrap();
        let cat = &p.layers[1];
        assert_eq!((cat.operators.as_str(), cat.spec), ("CONCATENATION", None));
        assert_eq!((cat.x, cat.skip, &cat.concat), (1, None, &vec![1, 0, 1]));
        assert_eq!(cat.output, small_core::Dims { c: 6, h: 4, w: 4 });
        assert_eq!(p.macs(), 32);
        let source = p.source("Net");
        assert!(
            source.contains("concat: concat @ 1 (t1, t0, t1) -> t2;"),
            "{source}"
        );
        assert_eq!(source.matches("#[layer(").count(), 1, "{source}");
        let table = p.table("net");
        let row = table.lines().find(|l| l.contains("CONCATENATION")).unwrap();
        assert!(
            row.contains("4x4x(2+2+2)") && row.ends_with("concat"),
            "{row}"
        );
        // The arena holds every input of the concatenation at once.
        let a = p.arena(None);
        let elem = if int8.is_some() { 1 } else { 4 };
        let d = |c| small_core::Dims { c, h: 4, w: 4 }.len();
        assert_eq!(a.lower_bound, (2 * d(2) + d(6)) * elem);
        // Its wiring passes the graph check; reordered or misplaced, not.
        let (mut infos, dims) = small_tests::program_layers(&p);
        small_core::load::tflite::wiring(&file, dims.len(), &infos).unwrap();
        infos[1].step.concat = &[0, 1, 1];
        let e = small_core::load::tflite::wiring(&file, dims.len(), &infos).unwrap_err();
        assert_eq!(
            e.to_string(),
            "layer `layer` (op 1): input tensors declared [t0, t1, t1], file has [t1, t0, t1]"
        );
        infos[1].op = 0;
        let e = small_core::load::tflite::wiring(&file, dims.len(), &infos).unwrap_err();
        assert_eq!(
            e.to_string(),
            "layer `layer` (op 0): operator declared CONCATENATION, file has MAX_POOL_2D"
        );
    }
    // What LiteRT refuses (a fused activation, an int8 input quantized
    // unlike the output) and what is not a channel concatenation.
    let e = |file: File| Program::from_file(&file).unwrap_err().to_string();
    let m = e(concat_file(&[1, 0], 4, 3, Relu, None));
    assert!(
        m.starts_with(
            "operator 1 (CONCATENATION): a CONCATENATION with fused activation RELU (LiteRT \
             takes NONE); inputs t1 [1, 4, 4, 2], t0 [1, 4, 4, 2], outputs t2 [1, 4, 4, 4]. \
             Supported: "
        ),
        "{m}"
    );
    let m = e(concat_file(&[1, 0], 4, 3, NoAct, Some(0.25)));
    assert!(
        m.starts_with(
            "operator 1 (CONCATENATION): an int8 CONCATENATION whose input t1 is quantized \
             unlike its output (LiteRT refuses it: its int8 kernel copies)"
        ),
        "{m}"
    );
    let m = e(concat_file(&[1, 0], 4, 1, NoAct, None));
    assert!(
        m.starts_with("operator 1 (CONCATENATION): a CONCATENATION along axis 1 of a rank-4 tensor (channels are)"),
        "{m}"
    );
    let m = e(concat_file(&[1], 2, 3, NoAct, None));
    assert!(
        m.contains("a CONCATENATION of fewer than two tensors"),
        "{m}"
    );
    // The graph check refuses the same int8 file, wired as a program would.
    let file = concat_file(&[1, 0], 4, 3, NoAct, Some(0.25));
    let good = concat_file(&[1, 0], 4, 3, NoAct, Some(0.5));
    let (infos, dims) = small_tests::program_layers(&Program::from_file(&good).unwrap());
    small_core::load::tflite::wiring(&good, dims.len(), &infos).unwrap();
    let e = small_core::load::tflite::wiring(&file, dims.len(), &infos).unwrap_err();
    assert!(
        e.to_string().starts_with(
            "layer `layer` (op 1): int8 input quantization (LiteRT's int8 CONCATENATION \
             copies) declared the output's"
        ),
        "{e}"
    );
}

// ---- the generated MLPerf Tiny declarations are the tool's output ----------

/// `examples/models/generated/NETWORKS`: (output file, `.tflite`, struct).
fn generated_networks() -> Vec<(String, String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/models/generated");
    let list = std::fs::read_to_string(dir.join("NETWORKS")).unwrap();
    list.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(w.len(), 3, "NETWORKS: `{l}`");
            (w[0].into(), w[1].into(), w[2].into())
        })
        .collect()
}

/// The DS-CNN, AD and VWW declarations the examples (main job, firmware,
/// bench) compile are, byte for byte, what `small-codegen FILE --rust
/// NAME` prints today: the crate compiles the tool's output, and its
/// golden tests run it.
#[test]
fn generated_networks_are_current() {
    let Some(models) = small_tests::models_dir() else {
        return;
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/models/generated");
    let list = generated_networks();
    assert_eq!(list.len(), 6, "{list:?}");
    for (out, file, name) in list {
        let p = Program::from_file(&File::from_file(models.join(&file)).unwrap()).unwrap();
        let have = std::fs::read_to_string(dir.join(&out)).unwrap();
        assert!(
            have == p.source(&name),
            "examples/models/generated/{out} is not small-codegen's output for {file}: \
             run scripts/gen-networks and commit the result"
        );
    }
}

// ---- weights packed at build time ------------------------------------------

/// `small_core::build::pack_program` (what a build script calls, knowing
/// only the file) packs exactly what each network's own `pack` does, f32
/// and int8, for every arch: the tiles it derives are the `#[layer]`s'.
#[test]
fn a_build_script_packs_what_the_program_packs() {
    fn same<N: Network>() {
        let Some(dir) = small_tests::models_dir() else {
            return;
        };
        let file = File::from_file(dir.join(N::FILE.unwrap())).unwrap();
        for &arch in small_core::Arch::ALL {
            let mut want = vec![0.0; N::packed_len(arch)];
            N::pack(&file, arch, &mut want).unwrap();
            let got = small_core::build::pack_program(&file, arch).unwrap();
            assert!(got == want, "{} on {}", N::NAME, arch.name());
        }
    }
    same::<resnet8::Resnet8>();
    same::<dscnn::DsCnn>();
    same::<ad::Autoencoder>();
    same::<vww::Vww>();
    // int8: the words hold each layer's rows and tiles (`small_core::words`).
    fn same_i8<N: Int8Network>() {
        let Some(dir) = small_tests::models_dir() else {
            return;
        };
        let file = File::from_file(dir.join(N::FILE)).unwrap();
        for &arch in small_core::Arch::ALL {
            let mut want = vec![0.0; N::packed_len(arch)];
            N::pack(&file, arch, &mut want).unwrap();
            let got = small_core::build::pack_program(&file, arch).unwrap();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
            assert!(
                bits(&got) == bits(&want),
                "{} int8 on {}",
                N::NAME,
                arch.name()
            );
        }
    }
    same_i8::<resnet8::int8::Resnet8>();
    same_i8::<dscnn::int8::DsCnn>();
    same_i8::<ad::int8::Autoencoder>();
    same_i8::<vww::int8::Vww>();
}

/// An int8 network on words packed ahead of time (`from_packed`, as a
/// firmware runs from flash) gives the bits it gives loaded from the
/// file, on every arch the CPU has.
#[test]
fn int8_networks_run_from_packed_words_as_loaded() {
    fn same<N: Int8Network>() {
        let Some(dir) = small_tests::models_dir() else {
            return;
        };
        let file = File::from_file(dir.join(N::FILE)).unwrap();
        let x: Vec<i8> = (0..N::DIMS[0].elements())
            .map(|i| (i * 7919 % 256) as u8 as i8)
            .collect();
        let mut want = vec![0i8; N::DIMS[N::OUTPUT].elements()];
        let mut got = want.clone();
        for arch in small_core::arch::available() {
            let mut arena = vec![0i8; N::ARENA];
            N::load(&file, arch)
                .unwrap()
                .infer(&mut arena, &x, &mut want)
                .unwrap();
            let mut words = vec![0.0; N::packed_len(arch)];
            N::pack(&file, arch, &mut words).unwrap();
            let net = N::from_packed(arch, Box::leak(words.into_boxed_slice())).unwrap();
            net.infer(&mut arena, &x, &mut got).unwrap();
            assert_eq!(got, want, "{} on {}", N::NAME, arch.name());
        }
    }
    same::<resnet8::int8::Resnet8>();
    same::<dscnn::int8::DsCnn>();
    same::<ad::int8::Autoencoder>();
    same::<vww::int8::Vww>();
}

// ---- tflite_model!: the same program, generated at compile time ------------

// One network: the macro only plumbs `Program::source` (tested above on
// every file) into the crate, and each generated network costs the build
// its kernels for every arch. ResNet-8 int8: the network written by hand
// (the tutorial), with residual layers, in the type with exact outputs, so
// that the generated program is shown to be the hand-written one, bit for
// bit. The macro runs on the build host: x86_64 only.
#[cfg(all(small_shared_models, target_arch = "x86_64"))]
mod from_the_macro {
    use super::*;
    small_core::tflite_model!(
        /// ResNet-8, int8, from the file.
        pub Resnet8 = "../../shared/models/pretrainedResnet_quant.tflite"
    );

    /// `N` and `H` loaded from the same file, run on the same input: equal
    /// outputs, bit for bit.
    fn same_output<N: Model, H: Model<Elem = N::Elem>>(file: &str, x: impl Fn(usize) -> N::Elem)
    where
        N::Elem: Default + Copy + PartialEq + std::fmt::Debug,
    {
        let dir = small_tests::models_dir().expect("cfg(small_shared_models) is set");
        let file = File::from_file(dir.join(file)).unwrap();
        let d = N::DIMS[0];
        let x: Vec<N::Elem> = (0..d.h * d.w * d.c).map(x).collect();
        let arch = small_core::arch::selected().unwrap();
        let y = small_tests::run_program::<N>(&file, arch, &x);
        assert_eq!(y, small_tests::run_program::<H>(&file, arch, &x));
        assert!(y.iter().any(|v| *v != N::Elem::default()));
    }

    #[test]
    fn the_macro_generates_the_hand_written_program() {
        let file = "pretrainedResnet_quant.tflite";
        same_program::<Resnet8>("resnet8", file);
        same_output::<Resnet8, resnet8::int8::Resnet8>(file, |i| (i * 37 % 256) as u8 as i8);
    }
}
