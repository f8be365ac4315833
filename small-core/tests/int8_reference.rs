//! The int8 reference operators (`small_core::reference::int8`) against
//! LiteRT's golden tensors, bit for bit.
//!
//! For each MLPerf Tiny int8 network of `../shared/models` (or
//! `SMALL_MODELS`; see its README), a small interpreter walks the
//! `.tflite` graph operator by operator with the reference operators and
//! compares with what LiteRT's reference kernels (`BUILTIN_REF`) wrote:
//!
//! - input 0, each operator on LiteRT's own input tensors: its output
//!   equals the golden tensor (`0.tensors/<index>_<name>.bin`), so a
//!   difference names the operator that makes it;
//! - input 0, the whole chain on our own tensors: every intermediate
//!   tensor and the output equal the golden ones;
//! - every golden input: the output equals `<i>.output.bin`.
//!
//! Equal means equal: `i8` slices, no tolerance. A failure names the
//! model, the operator, its output tensor and the first differing element.
//! Without the models the tests print a skip, except under `CI`, where
//! they fail.
//!
//! `rounding_is_discriminated` shows the golden data tell the roundings
//! apart: with TFLite Micro's fixed-point FULLY_CONNECTED (double
//! rounding), or with single rounding in the convolutions, some tensors
//! differ. (They do not separate LiteRT's `f64` FULLY_CONNECTED from the
//! single-rounding fixed-point form, which agree on all these tensors; the
//! reference follows LiteRT's source.)
#![cfg(all(feature = "std", feature = "tflite"))]

use small_core::load::tflite::{DType, Model, OpKind, Operator, Tensor};
use small_core::reference::int8::{
    self, AddParams, Multiplier, Quant, Requant, Rescale, SoftmaxParams, activation_range,
};
use small_core::reference::{Conv, Shape, Window};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The four int8 networks, by file stem.
const MODELS: [&str; 4] = [
    "ad01_int8",
    "kws_ref_model",
    "pretrainedResnet_quant",
    "vww_96_int8",
];

/// The MLPerf Tiny models directory: `SMALL_MODELS`, else `shared/models`
/// beside the repository. Missing: a skip, printed, except under CI, where
/// it is a failure (CI has the files; a silent skip would hide a broken
/// path).
fn models_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("SMALL_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/models"));
    if MODELS
        .iter()
        .all(|m| dir.join(format!("{m}.tflite")).exists())
    {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "CI is set but the MLPerf Tiny int8 models are not in {}",
            dir.display()
        );
    }
    println!(
        "SKIPPED: no MLPerf Tiny int8 models in {} (set SMALL_MODELS)",
        dir.display()
    );
    None
}

/// Which output rescaling the multiply-and-sum operators use.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Rounding {
    /// LiteRT's reference kernels: conv and depthwise with double-rounding
    /// fixed point, fully connected in `f64`.
    LiteRt,
    /// Fully connected as TFLite Micro's default build: the fixed-point
    /// multiplier of `GetQuantizedConvolutionMultipler` (the two scales
    /// multiplied in `f32`), double rounding.
    FcMicro,
    /// Conv and depthwise with single rounding (`TFLITE_SINGLE_ROUNDING`).
    ConvSingle,
}

/// The raw int8 contents of a golden file.
fn read_i8(path: &Path) -> Vec<i8> {
    std::fs::read(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .into_iter()
        .map(|b| b as i8)
        .collect()
}

/// Elements of a tensor shape.
fn elements(t: &Tensor) -> usize {
    t.shape.iter().product()
}

/// `t`'s per-tensor quantization.
fn quant(t: &Tensor) -> Quant {
    let q = t
        .quantization
        .as_ref()
        .unwrap_or_else(|| panic!("t{} '{}' has no quantization", t.index, t.name));
    assert_eq!(q.scales.len(), 1, "t{} is not per-tensor", t.index);
    let zp = q.zero_points.first().copied().unwrap_or(0);
    Quant::new(q.scales[0], i32::try_from(zp).unwrap())
}

/// A weight tensor's scales (one, or one per output channel); its zero
/// points must be 0, as TFLite's int8 spec requires.
fn weight_scales(t: &Tensor) -> &[f32] {
    let q = t.quantization.as_ref().unwrap();
    assert!(
        q.zero_points.iter().all(|&z| z == 0),
        "t{}: weight zero points",
        t.index
    );
    &q.scales
}

/// `scales[c]`, or the one scale of a per-tensor weight.
fn scale_of(scales: &[f32], c: usize) -> f32 {
    scales[if scales.len() == 1 { 0 } else { c }]
}

/// An NHWC activation of batch 1 as a reference `Shape`.
fn nhwc(t: &Tensor) -> Shape {
    match t.shape[..] {
        [1, h, w, c] => Shape { h, w, c },
        _ => panic!("t{}: shape {:?} is not [1, H, W, C]", t.index, t.shape),
    }
}

/// The four dimensions of a filter.
fn dims4(t: &Tensor) -> [usize; 4] {
    t.shape[..]
        .try_into()
        .unwrap_or_else(|_| panic!("t{}: shape {:?} is not 4-D", t.index, t.shape))
}

/// Output `out` of operator `op` on the tensors in `values`.
fn eval(model: &Model, op: &Operator, values: &HashMap<usize, Vec<i8>>, r: Rounding) -> Vec<i8> {
    let t = |i: usize| model.tensor(i).unwrap();
    let arg = |n: usize| {
        let i = op
            .input(n)
            .unwrap_or_else(|| panic!("op {} has no input {n}", op.index));
        (t(i), &values[&i])
    };
    let (xt, x) = arg(0);
    assert_eq!(op.outputs.len(), 1, "op {}", op.index);
    let yt = t(op.outputs[0]);
    assert_eq!(xt.dtype, DType::Int8, "op {} input", op.index);
    assert_eq!(yt.dtype, DType::Int8, "op {} output", op.index);
    let (qx, qy) = (quant(xt), quant(yt));
    let (min, max) = activation_range(op.activation().unwrap(), qy);
    let mut y = vec![0i8; elements(yt)];
    let o = &op.options;
    let weights = || {
        let w = op.input(1).unwrap();
        (t(w), model.tensor_i8(w).unwrap())
    };
    let bias = || op.input(2).map(|b| model.tensor_i32(b).unwrap());
    let conv_rescale = |w_scale: f32| match r {
        Rounding::ConvSingle => Rescale::SingleRounding(Multiplier::from_real(
            f64::from(qx.scale) * f64::from(w_scale) / f64::from(qy.scale),
        )),
        _ => Rescale::conv(qx.scale, w_scale, qy.scale),
    };
    let window = |fh, fw| {
        assert_eq!(o.dilation.unwrap_or((1, 1)), (1, 1), "op {}", op.index);
        let (sh, sw) = o.stride.unwrap();
        Window::new(fh, fw, sh, sw, o.padding.unwrap())
    };
    let check_shape = |s: Shape| assert_eq!(s, nhwc(yt), "op {} output shape", op.index);
    match op.kind {
        OpKind::Conv2d => {
            let (wt, w) = weights();
            let [oc, fh, fw, fc] = dims4(wt);
            let shape = nhwc(xt);
            let g = shape.c / fc;
            let scales = weight_scales(wt);
            let rescale: Vec<Rescale> =
                (0..oc).map(|c| conv_rescale(scale_of(scales, c))).collect();
            let q = Requant {
                input_zero_point: qx.zero_point,
                rescale: &rescale,
                output_zero_point: qy.zero_point,
                min,
                max,
            };
            let conv = Conv::new(window(fh, fw), fc, oc / g, g);
            let bias = bias();
            check_shape(int8::conv2d(x, shape, &w, bias.as_deref(), conv, &q, &mut y).unwrap());
        }
        OpKind::DepthwiseConv2d => {
            let (wt, w) = weights();
            let [one, fh, fw, oc] = dims4(wt);
            assert_eq!(one, 1);
            let scales = weight_scales(wt);
            let rescale: Vec<Rescale> =
                (0..oc).map(|c| conv_rescale(scale_of(scales, c))).collect();
            let q = Requant {
                input_zero_point: qx.zero_point,
                rescale: &rescale,
                output_zero_point: qy.zero_point,
                min,
                max,
            };
            let multiplier = usize::try_from(o.depth_multiplier.unwrap()).unwrap();
            let bias = bias();
            let (shape, win) = (nhwc(xt), window(fh, fw));
            let s =
                int8::depthwise_conv2d(x, shape, &w, bias.as_deref(), win, multiplier, &q, &mut y);
            check_shape(s.unwrap());
        }
        OpKind::FullyConnected => {
            assert!(!o.shuffled_weights);
            let (wt, w) = weights();
            let [outputs, inputs] = wt.shape[..] else {
                panic!("op {}: weights {:?}", op.index, wt.shape)
            };
            let scales = weight_scales(wt);
            let rescale: Vec<Rescale> = (0..if scales.len() == 1 { 1 } else { outputs })
                .map(|c| {
                    let s = scale_of(scales, c);
                    match r {
                        Rounding::FcMicro => Rescale::DoubleRounding(Multiplier::from_real(
                            f64::from(qx.scale * s) / f64::from(qy.scale),
                        )),
                        _ => Rescale::fully_connected(qx.scale, s, qy.scale),
                    }
                })
                .collect();
            let q = Requant {
                input_zero_point: qx.zero_point,
                rescale: &rescale,
                output_zero_point: qy.zero_point,
                min,
                max,
            };
            let bias = bias();
            // One row per batch.
            assert_eq!(x.len() % inputs, 0, "op {}", op.index);
            for (row, out) in x.chunks(inputs).zip(y.chunks_mut(outputs)) {
                int8::fully_connected(row, &w, bias.as_deref(), &q, out).unwrap();
            }
        }
        OpKind::AveragePool2d | OpKind::MaxPool2d => {
            // TFLite requires equal input and output quantization.
            assert_eq!(qx, qy, "op {}", op.index);
            let (fh, fw) = o.filter.unwrap();
            let pool = if op.kind == OpKind::MaxPool2d {
                int8::max_pool
            } else {
                int8::avg_pool
            };
            check_shape(pool(x, nhwc(xt), window(fh, fw), (min, max), &mut y).unwrap());
        }
        OpKind::Add => {
            let (bt, b) = arg(1);
            assert_eq!(xt.shape, bt.shape, "op {}: broadcasting", op.index);
            let p = AddParams::new(qx, quant(bt), qy, op.activation().unwrap());
            int8::add(x, b, &p, &mut y).unwrap();
        }
        OpKind::Reshape => {
            assert_eq!(qx, qy, "op {}", op.index);
            y.copy_from_slice(x);
        }
        OpKind::Softmax => {
            assert_eq!(qy, Quant::new(1.0 / 256.0, -128), "op {}", op.index);
            let depth = *xt.shape.last().unwrap();
            let p = SoftmaxParams::new(o.beta.unwrap(), qx.scale).unwrap();
            int8::softmax(x, depth, &p, &mut y).unwrap();
        }
        ref other => panic!("op {}: no int8 reference for {other}", op.index),
    }
    y
}

/// `(index, got, want, how many differ, largest |difference|)` of the
/// first difference, if any.
fn difference(got: &[i8], want: &[i8]) -> Option<(usize, i8, i8, usize, i32)> {
    assert_eq!(got.len(), want.len());
    let first = got.iter().zip(want).position(|(g, w)| g != w)?;
    let pairs = || got.iter().zip(want).filter(|(g, w)| g != w);
    let count = pairs().count();
    let largest = pairs()
        .map(|(&g, &w)| (i32::from(g) - i32::from(w)).abs())
        .max()
        .unwrap();
    Some((first, got[first], want[first], count, largest))
}

/// One line describing a difference in `what`.
fn describe(what: &str, got: &[i8], want: &[i8]) -> Option<String> {
    difference(got, want).map(|(j, g, w, n, d)| {
        format!(
            "{what}: element {j}: got {g}, LiteRT {w} ({n} of {} differ, by up to {d})",
            want.len()
        )
    })
}

/// A model and its golden directory.
struct Golden {
    name: &'static str,
    model: Model,
    dir: PathBuf,
}

impl Golden {
    fn load(models: &Path, name: &'static str) -> Golden {
        Golden {
            name,
            model: Model::from_file(models.join(format!("{name}.tflite"))).unwrap(),
            dir: models.join(format!("{name}.golden")),
        }
    }

    /// Every tensor of `0.tensors`, by index.
    fn tensors0(&self) -> HashMap<usize, Vec<i8>> {
        let dir = self.dir.join("0.tensors");
        let mut all = HashMap::new();
        for e in std::fs::read_dir(&dir).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            let Some(stem) = name.strip_suffix(".bin") else {
                continue; // tensors.json
            };
            let index: usize = stem.split('_').next().unwrap().parse().unwrap();
            let t = self.model.tensor(index).unwrap();
            let data = read_i8(&dir.join(&name));
            assert_eq!(data.len(), elements(t), "{}: {name}", self.name);
            all.insert(index, data);
        }
        all
    }

    /// The golden inputs `<i>.input.bin`, in order.
    fn inputs(&self) -> Vec<usize> {
        (0..)
            .take_while(|i| self.dir.join(format!("{i}.input.bin")).exists())
            .collect()
    }

    /// `op`'s output tensor, named.
    fn label(&self, op: &Operator) -> String {
        let t = self.model.tensor(op.outputs[0]).unwrap();
        format!(
            "{} op {:03} {} -> t{} '{}'",
            self.name, op.index, op.kind, t.index, t.name
        )
    }

    /// Runs the whole graph on `input`; every tensor it computes.
    fn run(&self, input: Vec<i8>, r: Rounding) -> HashMap<usize, Vec<i8>> {
        let mut values = HashMap::from([(self.model.inputs()[0], input)]);
        for op in self.model.operators() {
            let y = eval(&self.model, op, &values, r);
            values.insert(op.outputs[0], y);
        }
        values
    }

    /// Each operator on LiteRT's inputs of `golden`: the differences from
    /// LiteRT's outputs, one line per operator.
    fn isolated(&self, golden: &HashMap<usize, Vec<i8>>, r: Rounding) -> Vec<String> {
        let mut diffs = Vec::new();
        for op in self.model.operators() {
            let y = eval(&self.model, op, golden, r);
            let what = format!("{} (on LiteRT's inputs)", self.label(op));
            diffs.extend(describe(&what, &y, &golden[&op.outputs[0]]));
        }
        diffs
    }
}

/// The whole comparison for one model; prints what was compared.
fn check(name: &'static str) {
    let Some(dir) = models_dir() else { return };
    let g = Golden::load(&dir, name);
    let model = &g.model;
    assert_eq!(model.inputs().len(), 1);
    assert_eq!(model.outputs().len(), 1);
    let golden = g.tensors0();
    // The golden files are exactly the model input and every op output.
    let expected: BTreeSet<usize> = model
        .operators()
        .iter()
        .flat_map(|op| op.outputs.iter().copied())
        .chain(model.inputs().iter().copied())
        .collect();
    assert_eq!(
        golden.keys().copied().collect::<BTreeSet<_>>(),
        expected,
        "{name}: the tensors of 0.tensors"
    );

    let mut failures = g.isolated(&golden, Rounding::LiteRt);
    // The chain on our own tensors.
    let input0 = golden[&model.inputs()[0]].clone();
    assert_eq!(input0, read_i8(&g.dir.join("0.input.bin")), "{name}");
    let ours = g.run(input0, Rounding::LiteRt);
    for op in model.operators() {
        let i = op.outputs[0];
        let what = format!("{} (chained)", g.label(op));
        failures.extend(describe(&what, &ours[&i], &golden[&i]));
    }
    // Every golden input's output.
    let output = model.outputs()[0];
    let inputs = g.inputs();
    for &i in &inputs {
        let input = read_i8(&g.dir.join(format!("{i}.input.bin")));
        let want = read_i8(&g.dir.join(format!("{i}.output.bin")));
        let got = &g.run(input, Rounding::LiteRt)[&output];
        failures.extend(describe(&format!("{name} input {i} output"), got, &want));
    }
    assert!(
        failures.is_empty(),
        "{name}: {} differences from LiteRT:\n{}",
        failures.len(),
        failures.join("\n")
    );
    println!(
        "{name}: {} operators; input 0: all {} tensors equal LiteRT's bit for bit \
         (each operator on LiteRT's inputs, and chained); {} golden inputs: outputs equal",
        model.operators().len(),
        golden.len(),
        inputs.len()
    );
}

#[test]
fn ad01_int8() {
    check("ad01_int8");
}

#[test]
fn kws_ref_model() {
    check("kws_ref_model");
}

#[test]
fn pretrained_resnet_quant() {
    check("pretrainedResnet_quant");
}

#[test]
fn vww_96_int8() {
    check("vww_96_int8");
}

/// The golden data distinguish the roundings: TFLite Micro's fixed-point
/// FULLY_CONNECTED, or single rounding in the convolutions, changes some
/// of LiteRT's tensors (each operator on LiteRT's inputs, every golden
/// input's output), so the bit-exact match above tests the choice of
/// rounding, not only the loops.
#[test]
fn rounding_is_discriminated() {
    let Some(dir) = models_dir() else { return };
    for (r, kinds) in [
        (Rounding::FcMicro, [OpKind::FullyConnected].as_slice()),
        (
            Rounding::ConvSingle,
            [OpKind::Conv2d, OpKind::DepthwiseConv2d].as_slice(),
        ),
    ] {
        let mut total = 0;
        for name in MODELS {
            let g = Golden::load(&dir, name);
            let golden = g.tensors0();
            let layers = g.isolated(&golden, r);
            let output = g.model.outputs()[0];
            let outputs = g
                .inputs()
                .iter()
                .filter(|&&i| {
                    let input = read_i8(&g.dir.join(format!("{i}.input.bin")));
                    let want = read_i8(&g.dir.join(format!("{i}.output.bin")));
                    g.run(input, r)[&output] != want
                })
                .count();
            println!(
                "{r:?}: {name}: {} operators differ on LiteRT's inputs, {outputs} of {} outputs",
                layers.len(),
                g.inputs().len()
            );
            for l in &layers {
                println!("  {l}");
                assert!(
                    kinds.iter().any(|k| l.contains(&format!(" {k} "))),
                    "{r:?} changed an operator it does not touch: {l}"
                );
            }
            total += layers.len();
        }
        assert!(total > 0, "{r:?} equals LiteRT on every tensor");
    }
}

/// The int8 accessors of the loader: raw weights and biases as stored,
/// and a wrong element type is an error naming the tensor.
#[test]
fn loader_reads_int8_weights_and_int32_biases() {
    let Some(dir) = models_dir() else { return };
    let model = Model::from_file(dir.join("kws_ref_model.tflite")).unwrap();
    let op = &model.operators()[0];
    let (w, b) = (op.input(1).unwrap(), op.input(2).unwrap());
    let weights = model.tensor_i8(w).unwrap();
    assert_eq!(weights.len(), 64 * 10 * 4);
    // Dequantizing the raw weights gives tensor_f32's values.
    let scales = &model
        .tensor(w)
        .unwrap()
        .quantization
        .as_ref()
        .unwrap()
        .scales;
    let f = model.tensor_f32(w).unwrap();
    for (i, (&q, &v)) in weights.iter().zip(&f).enumerate() {
        assert_eq!(f32::from(q) * scales[i / 40], v, "element {i}");
    }
    assert_eq!(model.tensor_i32(b).unwrap().len(), 64);
    let e = model.tensor_i32(w).unwrap_err().to_string();
    assert!(e.contains("dense int32") && e.contains("int8"), "{e}");
    let e = model.tensor_i8(b).unwrap_err().to_string();
    assert!(e.contains("dense int8") && e.contains("int32"), "{e}");
    // An activation has no data.
    assert!(model.tensor_i8(model.inputs()[0]).is_err());
    assert_eq!(model.operators()[12].options.beta, Some(1.0));
}
