//! Tests of the `.tflite` reader: small models built here with the
//! generated planus builders (every option and error path), and the real
//! MLPerf Tiny models of the shared models directory (structure against
//! their `.ops.txt`, weights against golden activations, and truncated or
//! corrupted copies).

use super::check::padding_name;
use super::fixture::*;
use super::*;
use crate::load::{LayerRef, LayerWeights, LoadError, WeightSource};
use crate::{Activation, LayerSpec, Order, Padding, Reduction};
use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use small_tflite::schema as fb;

fn spec(
    fh: usize,
    fw: usize,
    fc: usize,
    k: usize,
    g: usize,
    s: usize,
    padding: Padding,
) -> LayerSpec {
    LayerSpec {
        fh,
        fw,
        fc,
        k,
        g,
        sh: s,
        sw: s,
        padding,
        reduction: Reduction::Fma,
        activation: Activation::None,
        residual: false,
        dtype: crate::Dtype::F32,
    }
}

const CONV: LayerRef = LayerRef {
    name: "conv",
    op: 0,
};
const DW: LayerRef = LayerRef { name: "dw", op: 1 };
const POOL: LayerRef = LayerRef {
    name: "pool",
    op: 2,
};
const FC: LayerRef = LayerRef { name: "fc", op: 3 };

fn conv_spec() -> LayerSpec {
    spec(3, 3, 2, 4, 1, 2, Padding::Same)
}

fn dw_spec() -> LayerSpec {
    spec(3, 3, 1, 1, 4, 1, Padding::Valid)
}

fn fc_spec() -> LayerSpec {
    spec(1, 1, 8, 3, 1, 1, Padding::Valid)
}

fn pool_spec() -> LayerSpec {
    LayerSpec {
        reduction: Reduction::Max,
        ..spec(2, 2, 1, 1, 4, 2, Padding::Valid)
    }
}

// ---- small models --------------------------------------------------------------

#[test]
fn toy_model_structure_and_options() {
    let m = Toy::new().parse();
    assert_eq!((m.version(), m.description()), (3, "toy"));
    assert_eq!((m.inputs(), m.outputs()), (&[0][..], &[11][..]));
    assert_eq!(m.tensors().len(), 12);
    let t = m.tensor(1).unwrap();
    assert_eq!(
        (t.index, t.name.as_str(), t.dtype),
        (1, "conv/filter", DType::Float32)
    );
    assert_eq!(
        (t.shape.as_slice(), t.buffer, t.sparse),
        (&[4, 3, 3, 2][..], 1, false)
    );
    assert!(t.quantization.is_none());
    assert!(m.tensor(12).is_none());

    let kinds: Vec<&str> = m.operators().iter().map(|o| o.kind.name()).collect();
    assert_eq!(
        kinds,
        [
            "CONV_2D",
            "DEPTHWISE_CONV_2D",
            "MAX_POOL_2D",
            "FULLY_CONNECTED",
            "Mul"
        ]
    );
    let ops = m.operators();
    assert_eq!(ops[0].inputs, [Some(0), Some(1), Some(2)]);
    assert_eq!(ops[0].outputs, [3]);
    assert_eq!(
        ops[0].options,
        Options {
            stride: Some((2, 2)),
            padding: Some(Padding::Same),
            dilation: Some((1, 1)),
            fused_activation: Some(FusedActivation::Relu),
            ..Options::default()
        }
    );
    assert_eq!(ops[0].activation().unwrap(), Activation::Relu);
    assert_eq!(ops[1].options.depth_multiplier, Some(1));
    assert_eq!(ops[1].activation().unwrap(), Activation::Relu6);
    assert_eq!(ops[2].options.filter, Some((2, 2)));
    assert_eq!(ops[2].options.stride, Some((2, 2)));
    assert_eq!(ops[2].activation().unwrap(), Activation::None);
    assert_eq!(ops[3].inputs, [Some(8), Some(9), None]);
    assert_eq!(ops[3].input(2), None);
    assert_eq!(ops[4].kind, OpKind::Other("Mul".into()));
    assert_eq!(ops[4].options, Options::default());
    assert_eq!(ops[4].activation().unwrap(), Activation::None);
}

#[test]
fn unsupported_fused_activation_is_an_error_when_used() {
    let m = Toy::new().parse();
    let fc = &m.operators()[3];
    assert_eq!(fc.options.fused_activation, Some(FusedActivation::Tanh));
    let e = fc.activation().unwrap_err();
    assert!(
        matches!(
            e,
            small_tflite::Error::Mismatch {
                what: "activation",
                ..
            }
        ),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains("op 3 FULLY_CONNECTED") && text.contains("TANH"),
        "{text}"
    );
    // Loading the weights does not look at the activation.
    assert!(m.layer(FC, &fc_spec()).is_ok());
}

#[test]
fn layers_get_the_files_data_in_order() {
    let m = Toy::new().parse();
    let conv = m.layer(CONV, &conv_spec()).unwrap();
    assert_eq!(conv.weights, ramp(Toy::CONV_W, 0.01));
    assert_eq!(conv.bias, Some(vec![0.5, -0.5, 1.0, 2.0]));
    assert_eq!(m.tensor_f32(1).unwrap(), conv.weights);

    assert_eq!(conv.order, Order::Ohwi);
    let dw = m.layer(DW, &dw_spec()).unwrap();
    assert_eq!((&dw.weights, dw.order), (&ramp(36, 0.1), Order::Depthwise));
    assert_eq!(dw.bias, Some(vec![1.0, 2.0, 3.0, 4.0]));

    let pool = m.layer(POOL, &pool_spec()).unwrap();
    assert_eq!(
        pool,
        LayerWeights {
            weights: vec![],
            order: Order::Ohwi,
            bias: None
        }
    );
    let avg = LayerSpec {
        reduction: Reduction::Avg,
        ..pool_spec()
    };
    assert!(matches!(
        m.layer(POOL, &avg),
        Err(LoadError::Mismatch {
            what: "operator",
            ..
        })
    ));

    let fc = m.layer(FC, &fc_spec()).unwrap();
    assert_eq!(fc.weights, ramp(24, 1.0));
    assert_eq!(fc.bias, None);
}

/// The error's text, after checking it names the layer and op.
fn err_text(e: LoadError, layer: &str) -> String {
    let text = e.to_string();
    assert!(text.contains(layer), "`{text}` does not name `{layer}`");
    text
}

#[test]
fn shape_mismatches_name_layer_tensor_expected_and_actual() {
    let m = Toy::new().parse();
    // Conv declared with 3 input channels per group: the input has 2.
    let e = m
        .layer(CONV, &spec(3, 3, 3, 4, 1, 2, Padding::Same))
        .unwrap_err();
    assert!(matches!(e, LoadError::Shape { .. }), "{e:?}");
    let t = err_text(e, "conv (op 0 CONV_2D)");
    assert!(
        t.contains("'input'") && t.contains("[1, 6, 6, 3]") && t.contains("[1, 6, 6, 2]"),
        "{t}"
    );

    // Right input channels, wrong filter: 5 x 3x3 (k = 5).
    let e = m
        .layer(CONV, &spec(3, 3, 2, 5, 1, 2, Padding::Same))
        .unwrap_err();
    let t = err_text(e, "conv (op 0 CONV_2D)");
    assert!(
        t.contains("filter t1 'conv/filter'")
            && t.contains("expected shape [5, 3, 3, 2], found [4, 3, 3, 2]"),
        "{t}"
    );

    // Groups: 2 groups of fc = 1 need a [4, 3, 3, 1] filter.
    let e = m
        .layer(CONV, &spec(3, 3, 1, 2, 2, 2, Padding::Same))
        .unwrap_err();
    let t = err_text(e, "conv (op 0 CONV_2D)");
    assert!(
        t.contains("[4, 3, 3, 1]") && t.contains("[4, 3, 3, 2]"),
        "{t}"
    );

    // Depthwise declared 5x5.
    let e = m
        .layer(DW, &spec(5, 5, 1, 1, 4, 1, Padding::Valid))
        .unwrap_err();
    let t = err_text(e, "dw (op 1 DEPTHWISE_CONV_2D)");
    assert!(
        t.contains("'dw/filter'") && t.contains("[1, 5, 5, 4]") && t.contains("[1, 3, 3, 4]"),
        "{t}"
    );

    // FC declared with 4 outputs.
    let e = m
        .layer(FC, &spec(1, 1, 8, 4, 1, 1, Padding::Valid))
        .unwrap_err();
    let t = err_text(e, "fc (op 3 FULLY_CONNECTED)");
    assert!(t.contains("[4, 8]") && t.contains("[3, 8]"), "{t}");

    // FC inputs are rows of `fc` values, whatever their shape.
    let mut toy = Toy::new();
    toy.tensor(8).shape = Some(vec![1, 2, 2, 2]);
    assert!(toy.parse().layer(FC, &fc_spec()).is_ok());
    toy.tensor(8).shape = Some(vec![1, 12]);
    let e = toy.parse().layer(FC, &fc_spec()).unwrap_err();
    let t = err_text(e, "input t8 'fc/in' of layer fc (op 3 FULLY_CONNECTED)");
    assert!(t.contains("expected shape [1, 8], found [1, 12]"), "{t}");

    // A bias of the wrong length.
    let mut toy = Toy::new();
    toy.tensor(2).shape = Some(vec![5]);
    let e = toy.parse().layer(CONV, &conv_spec()).unwrap_err();
    let t = err_text(e, "bias t2 'conv/bias' of layer conv (op 0 CONV_2D)");
    assert!(t.contains("expected shape [4], found [5]"), "{t}");
}

/// TensorFlow's converter writes a grouped convolution as CONV_2D (filter
/// `[G*K, FH, FW, FC]`, groups = input channels / FC) and a depthwise one
/// with multiplier M as DEPTHWISE_CONV_2D: a layer with one input
/// channel per group loads from either, each in its own order.
#[test]
fn grouped_conv_2d_and_depth_multipliers_load_in_their_order() {
    // Op 1 as CONV_2D with 4 groups: the depthwise filter's 36 values as
    // [4, 3, 3, 1].
    let mut toy = Toy::new();
    toy.op(1).opcode_index = 0;
    toy.op(1).builtin_options = Some(conv_options(1, fb::Padding::Valid, 1));
    toy.tensor(4).shape = Some(vec![4, 3, 3, 1]);
    let w = toy.parse().layer(DW, &dw_spec()).unwrap();
    assert_eq!((&w.weights, w.order), (&ramp(36, 0.1), Order::Ohwi));
    // The same op declared with 2 input channels per group: 2 groups.
    toy.tensor(4).shape = Some(vec![2, 3, 3, 2]);
    toy.tensor(5).shape = Some(vec![2]);
    *toy.buffer(4) = f32_buffer(&[1.0, 2.0]);
    let w = toy
        .parse()
        .layer(DW, &spec(3, 3, 2, 1, 2, 1, Padding::Valid))
        .unwrap();
    assert_eq!((w.weights.len(), w.order), (36, Order::Ohwi));

    // Depthwise with multiplier 2 on 2 channels: fc = 1, k = 2, g = 2.
    let mut toy = Toy::new();
    toy.tensor(3).shape = Some(vec![1, 3, 3, 2]);
    let Some(fb::BuiltinOptions::DepthwiseConv2DOptions(o)) = &mut toy.op(1).builtin_options else {
        panic!("op 1 is depthwise")
    };
    o.depth_multiplier = 2;
    let m = toy.parse();
    let w = m
        .layer(DW, &spec(3, 3, 1, 2, 2, 1, Padding::Valid))
        .unwrap();
    assert_eq!((&w.weights, w.order), (&ramp(36, 0.1), Order::Depthwise));
    assert_eq!(
        w.filter().check(&spec(3, 3, 1, 2, 2, 1, Padding::Valid)),
        Ok(())
    );
    // Declared as multiplier 1 on 4 channels, it names the multiplier.
    assert!(matches!(
        m.layer(DW, &dw_spec()),
        Err(LoadError::Mismatch {
            what: "depth_multiplier",
            ..
        })
    ));
}

#[test]
fn option_and_kind_mismatches_name_what_differs() {
    let m = Toy::new().parse();
    let cases: [(LayerRef, LayerSpec, &str, &str, &str); 7] = [
        (
            CONV,
            spec(3, 3, 2, 4, 1, 1, Padding::Same),
            "stride",
            "1x1",
            "2x2",
        ),
        (
            CONV,
            spec(3, 3, 2, 4, 1, 2, Padding::Valid),
            "padding",
            "VALID",
            "SAME",
        ),
        (
            DW,
            conv_spec(),
            "operator",
            "CONV_2D (2 input channels per group)",
            "DEPTHWISE_CONV_2D (1 input channel per group)",
        ),
        (
            POOL,
            dw_spec(),
            "operator",
            "CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED",
            "MAX_POOL_2D",
        ),
        (
            FC,
            spec(1, 1, 8, 3, 1, 2, Padding::Valid),
            "stride",
            "2x2",
            "none (FULLY_CONNECTED: 1x1)",
        ),
        (
            FC,
            spec(1, 1, 4, 3, 2, 1, Padding::Valid),
            "operator",
            "CONV_2D (a 1x1 filter, 2 groups)",
            "FULLY_CONNECTED (1x1, 1 group)",
        ),
        (
            POOL,
            LayerSpec {
                fh: 3,
                fw: 3,
                ..pool_spec()
            },
            "filter",
            "3x3",
            "2x2",
        ),
    ];
    for (layer, s, what, expected, actual) in cases {
        match m.layer(layer, &s) {
            Err(LoadError::Mismatch {
                layer: l,
                what: w,
                expected: e,
                actual: a,
            }) => {
                assert_eq!((w, e.as_str(), a.as_str()), (what, expected, actual));
                assert!(
                    l.contains(&format!("`{}` (op {}", layer.name, layer.op)),
                    "{l}"
                );
            }
            other => panic!("{layer:?} {what}: {other:?}"),
        }
    }

    let mut toy = Toy::new();
    toy.op(0).builtin_options = Some(conv_options(2, fb::Padding::Same, 2));
    let dw_options = fb::DepthwiseConv2DOptions {
        padding: fb::Padding::Valid,
        stride_w: 1,
        stride_h: 1,
        depth_multiplier: 2,
        ..Default::default()
    };
    toy.op(1).builtin_options = Some(fb::BuiltinOptions::DepthwiseConv2DOptions(Box::new(
        dw_options,
    )));
    toy.op(3).builtin_options = Some(fb::BuiltinOptions::FullyConnectedOptions(Box::new(
        fb::FullyConnectedOptions {
            weights_format: fb::FullyConnectedOptionsWeightsFormat::Shuffled4x16Int8,
            ..Default::default()
        },
    )));
    let m = toy.parse();
    let what = |r: Result<LayerWeights, LoadError>| match r {
        Err(LoadError::Mismatch {
            what,
            expected,
            actual,
            ..
        }) => (what, expected, actual),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        what(m.layer(CONV, &conv_spec())),
        ("dilation", "1x1".into(), "2x2".into())
    );
    assert_eq!(
        what(m.layer(DW, &dw_spec())),
        ("depth_multiplier", "1".into(), "2".into())
    );
    assert_eq!(
        what(m.layer(FC, &fc_spec())),
        (
            "weights format",
            "DEFAULT".into(),
            "SHUFFLED4x16INT8".into()
        )
    );

    // Options missing from the file.
    toy.op(1).builtin_options = None;
    let m = toy.parse();
    assert_eq!(m.operators()[1].options, Options::default());
    assert_eq!(
        what(m.layer(DW, &dw_spec())),
        ("stride", "1x1".into(), "none".into())
    );

    // An operator index past the end.
    let e = m
        .layer(LayerRef { name: "x", op: 9 }, &conv_spec())
        .unwrap_err();
    assert!(matches!(e, LoadError::Missing { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains("operator 9 for layer `x` (model has 5"),
        "{e}"
    );
}

#[test]
fn int8_dequantizes_per_tensor_and_per_channel() {
    let mut toy = Toy::new();
    // conv filter [4, 3, 3, 2] as int8, scale per output channel (axis 0).
    let q: Vec<i8> = (0..Toy::CONV_W)
        .map(|i| (i as i32 * 7 % 255 - 127) as i8)
        .collect();
    *toy.buffer(1) = fb::Buffer {
        data: Some(q.iter().map(|&v| v as u8).collect()),
        ..Default::default()
    };
    let scales = [0.5f32, 0.25, 2.0, 1.0];
    let zero_points = [0i64, 1, -2, 3];
    let t = toy.tensor(1);
    t.type_ = fb::TensorType::Int8;
    t.quantization = Some(Box::new(fb::QuantizationParameters {
        scale: Some(scales.to_vec()),
        zero_point: Some(zero_points.to_vec()),
        quantized_dimension: 0,
        ..Default::default()
    }));
    let m = toy.parse();
    let want: Vec<f32> = q
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let c = i / 18;
            (i64::from(v) - zero_points[c]) as f32 * scales[c]
        })
        .collect();
    assert_eq!(m.layer(CONV, &conv_spec()).unwrap().weights, want);
    let tq = m.tensor(1).unwrap().quantization.clone().unwrap();
    assert_eq!(
        (tq.scales, tq.zero_points, tq.quantized_dimension),
        (scales.to_vec(), zero_points.to_vec(), 0)
    );

    // Along the last axis (the depthwise layout): channel = i % 2.
    let t = toy.tensor(1);
    t.quantization = Some(Box::new(fb::QuantizationParameters {
        scale: Some(vec![0.5, 4.0]),
        zero_point: Some(vec![0, 0]),
        quantized_dimension: 3,
        ..Default::default()
    }));
    let w = toy.parse().tensor_f32(1).unwrap();
    for (i, (&v, &q)) in w.iter().zip(&q).enumerate() {
        assert_eq!(v, f32::from(q) * [0.5, 4.0][i % 2], "{i}");
    }

    // Per tensor, zero point -3, as uint8.
    let t = toy.tensor(1);
    t.type_ = fb::TensorType::Uint8;
    t.quantization = Some(Box::new(fb::QuantizationParameters {
        scale: Some(vec![0.125]),
        zero_point: Some(vec![-3]),
        ..Default::default()
    }));
    let w = toy.parse().tensor_f32(1).unwrap();
    for (&v, &q) in w.iter().zip(&q) {
        assert_eq!(v, (f32::from(q as u8) + 3.0) * 0.125);
    }

    // Scales that do not fit the channels.
    toy.tensor(1).quantization = Some(Box::new(fb::QuantizationParameters {
        scale: Some(vec![1.0, 2.0, 3.0]),
        quantized_dimension: 0,
        ..Default::default()
    }));
    let e = toy.parse().tensor_f32(1).unwrap_err();
    assert!(
        matches!(e, small_tflite::Error::Malformed { .. }) && e.to_string().contains("3 scales"),
        "{e}"
    );
    // A quantized dimension past the shape.
    toy.tensor(1).quantization = Some(Box::new(fb::QuantizationParameters {
        scale: Some(vec![1.0, 2.0]),
        quantized_dimension: 4,
        ..Default::default()
    }));
    let e = toy.parse().tensor_f32(1).unwrap_err();
    assert!(e.to_string().contains("quantized_dimension 4"), "{e}");
}

#[test]
fn unusable_data_is_a_dtype_or_missing_error() {
    // int32 bias (as in int8 models).
    let mut toy = Toy::new();
    toy.tensor(2).type_ = fb::TensorType::Int32;
    let e = toy.parse().layer(CONV, &conv_spec()).unwrap_err();
    match &e {
        LoadError::DType { tensor, actual, .. } => {
            assert!(
                tensor.contains("bias t2 'conv/bias' of layer conv (op 0 CONV_2D)"),
                "{tensor}"
            );
            assert_eq!(actual, "int32");
        }
        other => panic!("{other:?}"),
    }

    // int8 without quantization parameters.
    let mut toy = Toy::new();
    toy.tensor(5).type_ = fb::TensorType::Int8;
    *toy.buffer(4) = fb::Buffer {
        data: Some(vec![1, 2, 3, 4]),
        ..Default::default()
    };
    let e = toy.parse().tensor_f32(5).unwrap_err();
    assert!(
        matches!(&e, small_tflite::Error::DType { actual, .. } if actual == "int8 without quantization"),
        "{e:?}"
    );

    // Custom quantization.
    toy.tensor(5).quantization = Some(Box::new(fb::QuantizationParameters {
        details: Some(fb::QuantizationDetails::CustomQuantization(Box::new(
            fb::CustomQuantization {
                custom: Some(vec![1]),
            },
        ))),
        ..Default::default()
    }));
    let m = toy.parse();
    assert!(m.tensor(5).unwrap().quantization.as_ref().unwrap().custom);
    assert!(matches!(
        m.tensor_f32(5),
        Err(small_tflite::Error::DType { .. })
    ));

    // Sparse.
    let mut toy = Toy::new();
    toy.tensor(1).sparsity = Some(Box::new(fb::SparsityParameters::default()));
    let m = toy.parse();
    assert!(m.tensor(1).unwrap().sparse);
    assert!(
        matches!(m.layer(CONV, &conv_spec()), Err(LoadError::DType { actual, .. }) if actual == "sparse float32")
    );

    // No data: an activation, or an empty buffer.
    let m = Toy::new().parse();
    let e = m.tensor_f32(3).unwrap_err();
    assert!(
        matches!(e, small_tflite::Error::Missing { .. }) && e.to_string().contains("t3 'conv/out'"),
        "{e}"
    );
    assert!(matches!(
        m.tensor_f32(99),
        Err(small_tflite::Error::Missing { .. })
    ));
    assert!(matches!(
        m.tensor_data(0),
        Err(small_tflite::Error::Missing { .. })
    ));
    assert_eq!(
        m.tensor_data(2).unwrap(),
        &f32_buffer(&[0.5, -0.5, 1.0, 2.0]).data.unwrap()[..]
    );
    let mut toy = Toy::new();
    toy.buffer(1).data = None;
    let e = toy.parse().layer(CONV, &conv_spec()).unwrap_err();
    assert!(
        e.to_string()
            .contains("filter t1 'conv/filter' of layer conv"),
        "{e}"
    );

    // Data of the wrong length, another type.
    let mut toy = Toy::new();
    toy.buffer(2).data = Some(vec![0; 12]);
    let e = toy.parse().layer(CONV, &conv_spec()).unwrap_err();
    assert!(
        matches!(e, LoadError::Malformed { .. }) && e.to_string().contains("12 bytes"),
        "{e}"
    );
    let mut toy = Toy::new();
    toy.tensor(2).type_ = fb::TensorType::Float16;
    assert!(
        matches!(toy.parse().tensor_f32(2), Err(small_tflite::Error::DType { actual, .. }) if actual == "float16")
    );
}

#[test]
fn external_buffers_are_read_from_after_the_flatbuffer() {
    let data: Vec<u8> = [9.0f32, 8.0, 7.0, 6.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let mut toy = Toy::new();
    *toy.buffer(2) = fb::Buffer {
        data: None,
        offset: 2,
        size: 16,
    };
    let len = toy.bytes().len();
    // Same size: both offsets are stored (non-default) u64s.
    toy.buffer(2).offset = len as u64 + 8;
    let mut bytes = toy.bytes();
    assert_eq!(bytes.len(), len);
    bytes.extend_from_slice(&[0; 8]);
    bytes.extend_from_slice(&data);
    let m = Model::parse(&bytes).unwrap();
    assert_eq!(
        m.layer(CONV, &conv_spec()).unwrap().bias,
        Some(vec![9.0, 8.0, 7.0, 6.0])
    );

    bytes.truncate(bytes.len() - 1);
    let e = Model::parse(&bytes).unwrap_err();
    assert!(
        e.to_string().contains("buffer 2") && e.to_string().contains("outside"),
        "{e}"
    );
}

#[test]
fn identifier_subgraphs_and_indices_are_checked() {
    let bytes = Toy::new().bytes();
    let mut wrong = bytes.clone();
    wrong[4..8].copy_from_slice(b"TFL2");
    let e = Model::parse(&wrong).unwrap_err();
    assert!(e.to_string().contains("\"TFL2\""), "{e}");
    assert!(Model::parse(&bytes[..7]).is_err());
    assert!(Model::parse(&[]).is_err());

    let mut toy = Toy::new();
    let sg = toy.model.subgraphs.as_ref().unwrap()[0].clone();
    toy.model.subgraphs.as_mut().unwrap().push(sg);
    let e = Model::parse(&toy.bytes()).unwrap_err();
    assert!(e.to_string().contains("2 subgraphs"), "{e}");
    toy.model.subgraphs = Some(vec![]);
    assert!(Model::parse(&toy.bytes()).is_err());
    toy.model.subgraphs = None;
    assert!(Model::parse(&toy.bytes()).is_err());

    let bad = [
        |t: &mut Toy| t.op(0).inputs = Some(vec![0, 12, 2]),
        |t: &mut Toy| t.op(0).inputs = Some(vec![0, -2, 2]),
        |t: &mut Toy| t.op(0).outputs = Some(vec![-1]),
        |t: &mut Toy| t.op(0).opcode_index = 5,
        |t: &mut Toy| t.tensor(1).buffer = 6,
        |t: &mut Toy| t.tensor(1).shape = Some(vec![4, -1, 3, 2]),
        |t: &mut Toy| t.subgraph().outputs = Some(vec![12]),
        |t: &mut Toy| {
            t.op(0).builtin_options = Some(fb::BuiltinOptions::ReshapeOptions(Box::default()))
        },
        |t: &mut Toy| t.op(0).builtin_options = Some(conv_options(-1, fb::Padding::Same, 1)),
    ];
    for (i, f) in bad.iter().enumerate() {
        let mut toy = Toy::new();
        f(&mut toy);
        match Model::parse(&toy.bytes()) {
            Err(small_tflite::Error::Malformed { .. }) => {}
            other => panic!("case {i}: {other:?}"),
        }
    }
}

#[test]
fn other_custom_and_extended_operator_codes() {
    let mut toy = Toy::new();
    let codes = toy.model.operator_codes.as_mut().unwrap();
    codes[4] = fb::OperatorCode {
        deprecated_builtin_code: 32,
        builtin_code: fb::BuiltinOperator::Custom,
        custom_code: Some("MyOp".into()),
        version: 2,
    };
    // Extended codes (> 127) live in `builtin_code` only.
    codes[1] = fb::OperatorCode {
        deprecated_builtin_code: 127,
        builtin_code: fb::BuiltinOperator::Cumsum,
        ..Default::default()
    };
    // Old files have only the byte field.
    codes[0] = fb::OperatorCode {
        deprecated_builtin_code: 3,
        builtin_code: fb::BuiltinOperator::Add,
        version: 1,
        custom_code: None,
    };
    let m = toy.parse();
    let ops = m.operators();
    assert_eq!(ops[0].kind, OpKind::Conv2d);
    assert_eq!(ops[1].kind, OpKind::Other("Cumsum".into()));
    assert_eq!(ops[1].options, Options::default());
    assert_eq!((ops[4].kind.name(), ops[4].version), ("CUSTOM(MyOp)", 2));
}

#[test]
fn huge_shapes_are_errors_not_overflows() {
    let huge = vec![i32::MAX; 4];
    let mut toy = Toy::new();
    toy.tensor(1).shape = Some(huge.clone()); // conv filter
    toy.tensor(9).shape = Some(vec![i32::MAX, 1]); // fc weights
    toy.tensor(8).shape = Some(huge.clone()); // fc input
    let m = toy.parse();
    let e = m.tensor_f32(1).unwrap_err();
    assert!(e.to_string().contains("overflows"), "{e}");
    assert!(m.tensor_f32(9).is_err());
    let e = m.layer(CONV, &conv_spec()).unwrap_err();
    assert!(matches!(e, LoadError::Shape { .. }), "{e}");
    let fc = LayerSpec {
        fh: 1,
        fw: 1,
        fc: 8,
        k: 3,
        g: 1,
        sh: 1,
        sw: 1,
        padding: Padding::Same,
        reduction: Reduction::Fma,
        activation: Activation::None,
        residual: false,
        dtype: crate::Dtype::F32,
    };
    let e = m.layer(LayerRef { name: "fc", op: 3 }, &fc).unwrap_err();
    assert!(matches!(e, LoadError::Shape { .. }), "{e}");
    // Per-channel int8 data whose inner dimensions overflow.
    let mut toy = Toy::new();
    toy.tensor(1).type_ = fb::TensorType::Int8;
    toy.tensor(1).shape = Some(vec![2, i32::MAX, i32::MAX, i32::MAX]);
    toy.tensor(1).quantization = Some(Box::new(fb::QuantizationParameters {
        scale: Some(vec![1.0, 2.0]),
        zero_point: Some(vec![i64::MIN, i64::MAX]),
        ..Default::default()
    }));
    assert!(toy.parse().tensor_f32(1).is_err());
    // Extreme zero points are data, not an overflow.
    let mut toy = Toy::new();
    toy.tensor(9).type_ = fb::TensorType::Int8;
    toy.tensor(9).shape = Some(vec![2, 2]);
    *toy.buffer(5) = fb::Buffer {
        data: Some(vec![1, 2, 3, 4]),
        ..Default::default()
    };
    toy.tensor(9).quantization = Some(Box::new(fb::QuantizationParameters {
        scale: Some(vec![1.0, 1.0]),
        zero_point: Some(vec![i64::MIN, i64::MAX]),
        ..Default::default()
    }));
    let v = toy.parse().tensor_f32(9).unwrap();
    assert!(v.iter().all(|x| x.is_finite() && x.abs() > 1e18), "{v:?}");
}

/// The file's fault in the user's terms, never the parser's internals.
#[test]
fn unreadable_files_say_truncated_or_not_tflite() {
    let bytes = Toy::new().bytes();
    for n in [bytes.len() / 2, bytes.len() - 1, 12] {
        let e = Model::parse(&bytes[..n]).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "malformed TFLite model: file is truncated or not a TFLite flatbuffer (reading the "
            ),
            "{n} bytes: {e}"
        );
        assert!(!e.contains("Invalid offset") && !e.contains("In <"), "{e}");
    }
    let e = Model::parse(&[]).unwrap_err().to_string();
    assert_eq!(
        e,
        "malformed TFLite model: file is empty, not a TFLite flatbuffer"
    );
    let e = Model::parse(b"TFL3").unwrap_err().to_string();
    assert_eq!(
        e,
        "malformed TFLite model: file is truncated or not a TFLite flatbuffer: \
         4 bytes, shorter than a flatbuffer header"
    );
    let e = Model::parse(b"\x89PNG\r\n\x1a\n....")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "malformed TFLite model: not a TFLite flatbuffer: file identifier \"\\r\\n\\x1a\\n\" \
         (bytes 4..8), expected \"TFL3\""
    );
}

// ---- the real models ---------------------------------------------------------

#[cfg(feature = "std")]
mod real {
    use super::*;
    use std::path::{Path, PathBuf};
    use std::string::String;
    use std::{env, fs, println};

    /// `SMALL_MODELS`, else `<repo>/../shared/models`. `None` (skip) if
    /// absent, but a panic under `CI`: CI must not skip silently.
    fn models_dir() -> Option<PathBuf> {
        let (dir, explicit) = match env::var_os("SMALL_MODELS") {
            Some(d) => (PathBuf::from(d), true),
            None => (
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/models"),
                false,
            ),
        };
        if dir.join("kws_ref_model_float32.tflite").is_file() {
            return Some(dir);
        }
        if explicit || env::var_os("CI").is_some() {
            panic!(
                "no MLPerf Tiny models in {} (set SMALL_MODELS)",
                dir.display()
            );
        }
        println!(
            "skipped: no MLPerf Tiny models in {} (set SMALL_MODELS)",
            dir.display()
        );
        None
    }

    const FLOAT_MODELS: [&str; 4] = [
        "pretrainedResnet",
        "vww_96_float",
        "kws_ref_model_float32",
        "ad01_fp32",
    ];

    fn load(dir: &Path, name: &str) -> Model {
        Model::from_file(dir.join(format!("{name}.tflite"))).unwrap()
    }

    /// `t17[64,10,4,1]` at the start of `s`: index and shape.
    fn tensor_ref(s: &str) -> (usize, Vec<usize>) {
        let s = s.trim().strip_prefix('t').unwrap();
        let (i, rest) = s.split_once('[').unwrap();
        let dims = rest.split_once(']').unwrap().0;
        let shape = if dims.is_empty() {
            vec![]
        } else {
            dims.split(',').map(|d| d.parse().unwrap()).collect()
        };
        (i.parse().unwrap(), shape)
    }

    fn pair(v: &str) -> (usize, usize) {
        let (h, w) = v.split_once('x').unwrap();
        (h.parse().unwrap(), w.parse().unwrap())
    }

    /// Every operator and tensor line of `<name>.ops.txt` against the parse.
    fn check_against_ops_txt(m: &Model, text: &str, name: &str) {
        let mut ops = 0;
        let mut tensors = 0;
        for line in text.lines() {
            if let Some(h) = line.strip_prefix("# schema version ") {
                // `3, description 'MLIR Converted.', 1 subgraph, 35 tensors, 13 operators`
                let parts: Vec<&str> = h.split(", ").collect();
                assert_eq!(parts[0].parse::<u32>().unwrap(), m.version(), "{name}");
                let count = |suffix: &str| -> usize {
                    parts
                        .iter()
                        .find_map(|p| p.strip_suffix(suffix))
                        .unwrap()
                        .parse()
                        .unwrap()
                };
                assert_eq!(count(" tensors"), m.tensors().len(), "{name}");
                assert_eq!(count(" operators"), m.operators().len(), "{name}");
                assert!(
                    h.contains(&format!("description '{}'", m.description())),
                    "{name}"
                );
            } else if let Some(c) = line.strip_prefix("# op counts: ") {
                for kc in c.split(", ") {
                    let (kind, n) = kc.rsplit_once(' ').unwrap();
                    let have = m
                        .operators()
                        .iter()
                        .filter(|o| o.kind.name() == kind)
                        .count();
                    assert_eq!(have, n.parse::<usize>().unwrap(), "{name}: {kind}");
                }
            } else if line.len() > 4
                && line.as_bytes()[..3].iter().all(u8::is_ascii_digit)
                && line.as_bytes()[3] == b' '
            {
                let i: usize = line[..3].parse().unwrap();
                let op = &m.operators()[i];
                let (left, opts) = line.split_once(" |").unwrap();
                let (head, rest) = left.split_once(" in=").unwrap();
                let kind = head[4..].split_once('(').unwrap().0;
                assert_eq!(op.kind.name(), kind, "{name} op {i}");
                let version: i32 = head
                    .split_once("(v")
                    .unwrap()
                    .1
                    .trim_end_matches(')')
                    .parse()
                    .unwrap();
                assert_eq!(op.version, version, "{name} op {i}");
                let (ins, outs) = rest.split_once(" out=").unwrap();
                let ins: Vec<_> = ins.split("; ").map(tensor_ref).collect();
                let outs: Vec<_> = outs.split("; ").map(tensor_ref).collect();
                assert_eq!(op.inputs.len(), ins.len(), "{name} op {i}");
                for (got, (t, shape)) in op.inputs.iter().zip(&ins).chain(
                    op.outputs
                        .iter()
                        .map(|&o| Some(o))
                        .collect::<Vec<_>>()
                        .iter()
                        .zip(&outs),
                ) {
                    assert_eq!(*got, Some(*t), "{name} op {i}");
                    assert_eq!(&m.tensor(*t).unwrap().shape, shape, "{name} op {i} t{t}");
                }
                assert_eq!(op.outputs.len(), outs.len(), "{name} op {i}");
                let o = &op.options;
                for kv in opts.split_whitespace() {
                    let (k, v) = kv.split_once('=').unwrap();
                    match k {
                        "stride" => assert_eq!(o.stride, Some(pair(v)), "{name} op {i}"),
                        "filter" => assert_eq!(o.filter, Some(pair(v)), "{name} op {i}"),
                        "dilation" => assert_eq!(o.dilation, Some(pair(v)), "{name} op {i}"),
                        "pad" => assert_eq!(
                            o.padding.map(padding_name),
                            Some(v.to_string()),
                            "{name} op {i}"
                        ),
                        "act" => {
                            assert_eq!(o.fused_activation.unwrap().to_string(), v, "{name} op {i}")
                        }
                        "depth_multiplier" => {
                            assert_eq!(
                                o.depth_multiplier,
                                Some(v.parse().unwrap()),
                                "{name} op {i}"
                            )
                        }
                        "weights_format" => assert_eq!(o.shuffled_weights, v != "DEFAULT"),
                        _ => {}
                    }
                }
                ops += 1;
            } else if let Some(t) = line.strip_prefix('t') {
                // `t17 int8 [64,10,4,1] const bytes=2560 quant=... name='...'`
                let mut words = t.split(' ');
                let i: usize = words.next().unwrap().parse().unwrap();
                let dtype = words.next().unwrap();
                let (_, shape) = tensor_ref(&format!("t0{}", words.next().unwrap()));
                let tensor = m.tensor(i).unwrap();
                assert_eq!(tensor.dtype.to_string(), dtype, "{name} t{i}");
                assert_eq!(tensor.shape, shape, "{name} t{i}");
                let quoted = t.split_once(" name='").unwrap().1;
                assert_eq!(
                    tensor.name,
                    quoted.strip_suffix('\'').unwrap(),
                    "{name} t{i}"
                );
                let constant = t.contains(" const ");
                assert_eq!(m.tensor_data(i).is_ok(), constant, "{name} t{i}");
                if let Some(s) = t
                    .split_once(" scale=")
                    .map(|(_, s)| s.split(' ').next().unwrap())
                {
                    let q = tensor.quantization.as_ref().unwrap();
                    let want: f32 = s.parse().unwrap();
                    assert!((q.scales[0] - want).abs() <= want * 1e-6, "{name} t{i}");
                } else if t.contains("quant=none") {
                    assert!(tensor.quantization.is_none(), "{name} t{i}");
                }
                tensors += 1;
            }
        }
        assert_eq!(
            (ops, tensors),
            (m.operators().len(), m.tensors().len()),
            "{name}"
        );
    }

    #[test]
    fn float_models_match_their_ops_txt() {
        let Some(dir) = models_dir() else { return };
        for name in FLOAT_MODELS {
            let m = load(&dir, name);
            let text = fs::read_to_string(dir.join(format!("{name}.ops.txt"))).unwrap();
            check_against_ops_txt(&m, &text, name);
        }
    }

    #[test]
    fn float_models_spot_checks() {
        let Some(dir) = models_dir() else { return };
        let kws = load(&dir, "kws_ref_model_float32");
        assert_eq!(kws.operators().len(), 13);
        assert_eq!((kws.inputs(), kws.outputs()), (&[0][..], &[34][..]));
        let c = &kws.operators()[0];
        assert_eq!(c.kind, OpKind::Conv2d);
        assert_eq!(c.inputs, [Some(0), Some(17), Some(3)]);
        assert_eq!(
            (c.options.stride, c.options.padding),
            (Some((2, 2)), Some(Padding::Same))
        );
        assert_eq!(c.activation().unwrap(), Activation::Relu);
        let pool = &kws.operators()[9];
        assert_eq!(
            (pool.kind.clone(), pool.options.filter),
            (OpKind::AveragePool2d, Some((25, 5)))
        );
        assert_eq!(kws.operators()[12].kind, OpKind::Softmax);

        let resnet = load(&dir, "pretrainedResnet");
        let add = &resnet.operators()[3];
        assert_eq!(
            (add.kind.clone(), add.activation().unwrap()),
            (OpKind::Add, Activation::Relu)
        );
        assert_eq!(resnet.operators()[13].kind, OpKind::Reshape);

        let vww = load(&dir, "vww_96_float");
        let dw = &vww.operators()[3];
        assert_eq!(dw.kind, OpKind::DepthwiseConv2d);
        assert_eq!(
            (dw.options.stride, dw.options.depth_multiplier),
            (Some((2, 2)), Some(1))
        );
        assert_eq!(vww.tensor(33).unwrap().shape, [1, 3, 3, 16]);

        let ad = load(&dir, "ad01_fp32");
        assert!(
            ad.operators()
                .iter()
                .all(|o| o.kind == OpKind::FullyConnected)
        );
        assert_eq!(ad.operators()[9].activation().unwrap(), Activation::None);
        assert_eq!(ad.operators()[0].activation().unwrap(), Activation::Relu);
    }

    #[test]
    fn kws_hybrid_conv_weights_dequantize() {
        let Some(dir) = models_dir() else { return };
        let m = load(&dir, "kws_ref_model_float32");
        let t = m.tensor(17).unwrap();
        assert_eq!(
            (t.dtype, t.shape.as_slice()),
            (DType::Int8, &[64, 10, 4, 1][..])
        );
        let q = t.quantization.as_ref().unwrap();
        assert_eq!(
            (q.scales.as_slice(), q.zero_points.as_slice()),
            (&[0.002_022_754_4f32][..], &[0i64][..])
        );
        let raw = m.tensor_data(17).unwrap();
        let w = m.tensor_f32(17).unwrap();
        assert_eq!(w.len(), 2560);
        for (&b, &v) in raw.iter().zip(&w) {
            assert_eq!(v, f32::from(b as i8) * 0.002_022_754_4);
        }
        assert!(w.iter().any(|&v| v != 0.0));
        // And through the layer interface, with the float bias.
        let s = LayerSpec {
            activation: Activation::Relu,
            ..spec(10, 4, 1, 64, 1, 2, Padding::Same)
        };
        let l = m
            .layer(
                LayerRef {
                    name: "conv1",
                    op: 0,
                },
                &s,
            )
            .unwrap();
        assert_eq!(l.weights, w);
        assert_eq!(l.bias.unwrap(), m.tensor_f32(3).unwrap());
    }

    /// The layer a weighted or pooling operator implements, from the file.
    fn spec_of(m: &Model, op: &Operator) -> Option<LayerSpec> {
        let o = &op.options;
        let input_c = *m.tensor(op.input(0)?)?.shape.last()?;
        let filter = op
            .input(1)
            .and_then(|t| m.tensor(t))
            .map(|t| t.shape.clone());
        let (sh, sw) = o.stride.unwrap_or((1, 1));
        let base = |fh, fw, fc, k, g| LayerSpec {
            fh,
            fw,
            fc,
            k,
            g,
            sh,
            sw,
            padding: o.padding.unwrap_or(Padding::Valid),
            reduction: Reduction::Fma,
            activation: o
                .fused_activation
                .and_then(FusedActivation::to_activation)
                .unwrap_or_default(),
            residual: false,
            dtype: crate::Dtype::F32,
        };
        match (&op.kind, filter.as_deref()) {
            (OpKind::Conv2d, Some(&[oc, fh, fw, fc])) if fc > 0 && oc > 0 => {
                let g = input_c / fc;
                Some(base(fh, fw, fc, oc / g.max(1), g))
            }
            (OpKind::DepthwiseConv2d, Some(&[1, fh, fw, c])) => Some(base(fh, fw, 1, 1, c)),
            (OpKind::FullyConnected, Some(&[k, fc])) => Some(base(1, 1, fc, k, 1)),
            (OpKind::MaxPool2d | OpKind::AveragePool2d, _) => {
                let (fh, fw) = o.filter?;
                let reduction = if op.kind == OpKind::MaxPool2d {
                    Reduction::Max
                } else {
                    Reduction::Avg
                };
                Some(LayerSpec {
                    reduction,
                    ..base(fh, fw, 1, 1, input_c)
                })
            }
            _ => None,
        }
    }

    #[test]
    fn every_layer_of_the_float_models_loads() {
        let Some(dir) = models_dir() else { return };
        let mut loaded = 0;
        for name in FLOAT_MODELS {
            let m = load(&dir, name);
            for op in m.operators() {
                let Some(s) = spec_of(&m, op) else { continue };
                let layer = LayerRef {
                    name: "l",
                    op: op.index,
                };
                let w = m
                    .layer(layer, &s)
                    .unwrap_or_else(|e| panic!("{name} op {}: {e}", op.index));
                assert_eq!(w.weights.len(), s.weights_len(), "{name} op {}", op.index);
                if s.has_weights() {
                    assert_eq!(w.weights, m.tensor_f32(op.input(1).unwrap()).unwrap());
                    assert_eq!(
                        w.bias.map(|b| b.len()),
                        Some(s.out_channels()),
                        "{name} op {}",
                        op.index
                    );
                }
                assert!(w.weights.iter().all(|v| v.is_finite()));
                loaded += 1;
            }
        }
        // resnet 9 conv + pool + FC, vww 14 + 13 + pool + FC, kws 5 + 4 + pool + FC, ad 10.
        assert_eq!(loaded, 11 + 29 + 11 + 10);
    }

    /// Tensor `t` of input 0 from `<name>.golden/0.tensors/<t>_*.bin`.
    fn golden(dir: &Path, name: &str, t: usize) -> Vec<f32> {
        let tdir = dir.join(format!("{name}.golden/0.tensors"));
        let prefix = format!("{t}_");
        let file = fs::read_dir(&tdir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .find(|f: &String| f.starts_with(&prefix) && f.ends_with(".bin"))
            .unwrap_or_else(|| panic!("no tensor {t} in {}", tdir.display()));
        let bytes = fs::read(tdir.join(file)).unwrap();
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect()
    }

    /// Operator `i` run on the reference layers with the loaded weights
    /// reproduces the interpreter's output of input 0 (float ops only).
    fn reproduce(dir: &Path, name: &str, m: &Model, i: usize) {
        let op = &m.operators()[i];
        let s = spec_of(m, op).unwrap();
        let w = m.layer(LayerRef { name: "l", op: i }, &s).unwrap();
        let x_t = m.tensor(op.input(0).unwrap()).unwrap();
        let shape = match x_t.shape[..] {
            [1, h, w, c] => crate::reference::Shape { h, w, c },
            [1, c] => crate::reference::Shape { h: 1, w: 1, c },
            _ => panic!("{:?}", x_t.shape),
        };
        let x = golden(dir, name, x_t.index);
        let want = golden(dir, name, op.outputs[0]);
        let (got, _) =
            crate::reference::layer(&s, &x, shape, w.filter(), w.bias.as_deref(), None).unwrap();
        let tol = crate::reference::tolerances(&s, &x, shape, w.filter(), w.bias.as_deref(), None);
        assert_eq!(got.len(), want.len(), "{name} op {i}");
        for (j, ((g, w), t)) in got.iter().zip(&want).zip(&tol).enumerate() {
            // Both orders of summation are within `t` of the exact sum.
            assert!(
                (g - w).abs() <= 2.0 * t + 1e-6,
                "{name} op {i} [{j}]: {g} vs {w} (bound {t})"
            );
        }
    }

    #[test]
    fn loaded_layers_reproduce_golden_activations() {
        let Some(dir) = models_dir() else { return };
        let vww = load(&dir, "vww_96_float");
        reproduce(&dir, "vww_96_float", &vww, 0); // conv 3x3 s2 SAME
        reproduce(&dir, "vww_96_float", &vww, 1); // depthwise 3x3 s1
        reproduce(&dir, "vww_96_float", &vww, 3); // depthwise 3x3 s2
        reproduce(&dir, "vww_96_float", &vww, 4); // pointwise
        let kws = load(&dir, "kws_ref_model_float32");
        reproduce(&dir, "kws_ref_model_float32", &kws, 1); // depthwise after the hybrid conv
        reproduce(&dir, "kws_ref_model_float32", &kws, 9); // average pool 25x5
        let resnet = load(&dir, "pretrainedResnet");
        reproduce(&dir, "pretrainedResnet", &resnet, 0);
        let ad = load(&dir, "ad01_fp32");
        reproduce(&dir, "ad01_fp32", &ad, 0); // FC 640 -> 128
        reproduce(&dir, "ad01_fp32", &ad, 9); // FC 128 -> 640, no activation
    }

    /// Uses everything a parsed model offers; none of it may panic.
    fn exercise(m: &Model) {
        for i in 0..m.tensors().len() + 1 {
            let _ = m.tensor_f32(i);
        }
        for op in m.operators() {
            let _ = op.activation();
            if let Some(s) = spec_of(m, op) {
                let _ = m.layer(
                    LayerRef {
                        name: "l",
                        op: op.index,
                    },
                    &s,
                );
            }
        }
    }

    /// A file that is not a whole model: the path once, and what is wrong
    /// in the user's terms.
    #[test]
    fn truncated_garbage_and_empty_files_name_the_path_once() {
        let Some(dir) = models_dir() else { return };
        let bytes = fs::read(dir.join("pretrainedResnet.tflite")).unwrap();
        let tmp = env::temp_dir().join(format!("small-tflite-{}", std::process::id()));
        fs::create_dir_all(&tmp).unwrap();
        let garbage: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let cases: [(&str, &[u8], &str); 4] = [
            (
                "truncated.tflite",
                &bytes[..bytes.len() / 3],
                ": file is truncated or not a TFLite flatbuffer (reading the ",
            ),
            (
                "head.tflite",
                &bytes[..4096],
                ": file is truncated or not a TFLite flatbuffer (reading the ",
            ),
            (
                "garbage.tflite",
                &garbage,
                ": not a TFLite flatbuffer: file identifier ",
            ),
            (
                "empty.tflite",
                &[],
                ": file is empty, not a TFLite flatbuffer",
            ),
        ];
        for (name, data, want) in cases {
            let path = tmp.join(name);
            fs::write(&path, data).unwrap();
            let e = Model::from_file(&path).unwrap_err().to_string();
            let p = path.display().to_string();
            assert!(e.starts_with(&format!("malformed {p}{want}")), "{e}");
            assert_eq!(e.matches(&p).count(), 1, "{e}");
            assert!(!e.contains("Invalid offset") && !e.contains("In <"), "{e}");
        }
        let e = Model::from_file(tmp.join("missing.tflite")).unwrap_err();
        assert!(matches!(e, small_tflite::Error::Io { .. }), "{e}");
        fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn truncated_and_corrupted_files_are_errors_not_panics() {
        let Some(dir) = models_dir() else { return };
        let bytes = fs::read(dir.join("kws_ref_model_float32.tflite")).unwrap();
        exercise(&Model::parse(&bytes).unwrap());
        // Every prefix in steps of 13 bytes, plus the last 64 one by one.
        let cuts = (0..bytes.len())
            .step_by(13)
            .chain(bytes.len() - 64..bytes.len());
        for n in cuts {
            assert!(
                Model::parse(&bytes[..n]).is_err(),
                "prefix of {n} bytes parsed"
            );
        }
        // Random flips (xorshift, fixed seed): 1, 2 or 8 bytes at a time.
        let mut s = 0x2545_f491u32;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s as usize
        };
        let (mut ok, mut err) = (0, 0);
        let mut copy = bytes.clone();
        for round in 0..3000 {
            copy.copy_from_slice(&bytes);
            for _ in 0..[1, 2, 8][round % 3] {
                // Half of the flips hit the first 4 KiB (tables and vtables).
                let range = if next() % 2 == 0 { 4096 } else { copy.len() };
                let at = next() % range;
                copy[at] ^= 1 << (next() % 8);
            }
            match Model::parse(&copy) {
                Ok(m) => {
                    exercise(&m);
                    ok += 1;
                }
                Err(_) => err += 1,
            }
        }
        println!("byte flips: {ok} parsed, {err} rejected");
        assert!(err > 0);
    }
}
