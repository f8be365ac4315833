//! Checking a decoded operator against a layer's declaration
//! ([`LayerSpec`]) and extracting its weights in TFLite order: what makes
//! a [`Model`] a [`WeightSource`] (see the [module docs](super) for the
//! mapping of layers to operators).

use super::{DType, Model, OpKind, Operator, Tensor};
use crate::load::{Int8LayerWeights, LayerRef, LayerWeights, LoadError, WeightSource};
use crate::model::LayerInfo;
use crate::reference::int8::{AddParams, Rescale};
use crate::{Dtype, LayerSpec, Order, Padding, Reduction};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use small_ir::quant::{Multiplier, Quant, activation_range};

fn hxw((h, w): (usize, usize)) -> String {
    format!("{h}x{w}")
}

pub(super) fn padding_name(p: Padding) -> String {
    match p {
        Padding::Same => "SAME".into(),
        Padding::Valid => "VALID".into(),
        Padding::Explicit {
            top,
            bottom,
            left,
            right,
        } => format!("explicit (top {top}, bottom {bottom}, left {left}, right {right})"),
    }
}

fn opt_name<T>(v: Option<T>, f: impl FnOnce(T) -> String) -> String {
    v.map_or_else(|| "none".into(), f)
}

/// A layer being loaded from operator `op`: names both in errors.
struct Target<'m> {
    layer: LayerRef,
    op: &'m Operator,
    model: &'m Model,
}

impl<'m> Target<'m> {
    fn name(&self) -> String {
        format!(
            "layer `{}` (op {} {})",
            self.layer.name, self.op.index, self.op.kind
        )
    }

    fn tensor_label(&self, role: &str, t: &Tensor) -> String {
        format!(
            "{role} t{} '{}' of layer {} (op {} {})",
            t.index, t.name, self.layer.name, self.op.index, self.op.kind
        )
    }

    fn mismatch(&self, what: &'static str, expected: String, actual: String) -> LoadError {
        LoadError::Mismatch {
            layer: self.name(),
            what,
            expected,
            actual,
        }
    }

    fn check<T: PartialEq + Copy>(
        &self,
        what: &'static str,
        expected: T,
        actual: Option<T>,
        show: impl Fn(T) -> String,
    ) -> Result<(), LoadError> {
        if actual == Some(expected) {
            Ok(())
        } else {
            Err(self.mismatch(what, show(expected), opt_name(actual, &show)))
        }
    }

    fn window(&self, spec: &LayerSpec) -> Result<(), LoadError> {
        let o = &self.op.options;
        self.check("stride", (spec.sh, spec.sw), o.stride, hxw)?;
        // A PAD before a convolution is part of its padding
        // (`Model::folded_pad`).
        let padding = self.model.padding(self.op);
        self.check("padding", spec.padding, padding, padding_name)
    }

    /// A standalone ADD (RELU, RELU6, PAD, LOGISTIC) is the layer `fh = fw = fc = k
    /// = 1`, `g = C`, stride 1, weight 1 and no bias, `residual` (not):
    /// its input plus the ADD's second input, then the activation; a
    /// PAD's padding is its amounts ([`Model::pad_amounts`]), the others
    /// have none.
    fn identity(&self, spec: &LayerSpec) -> Result<(), LoadError> {
        let add = self.op.kind == OpKind::Add;
        let padding = match self.op.kind {
            OpKind::Pad => self.model.pad_amounts(self.op).ok_or_else(|| {
                self.mismatch(
                    "PAD",
                    "zeros on height and width only, input and output quantized alike".into(),
                    format!("inputs {:?}", self.op.inputs),
                )
            })?,
            _ => Padding::Valid,
        };
        if !(padding.is_none(1, 1) && spec.padding.is_none(1, 1)) {
            self.check("padding", padding, Some(spec.padding), padding_name)?;
        }
        let shape = (spec.fh, spec.fw, spec.fc, spec.k, spec.sh, spec.sw);
        if spec.reduction != Reduction::Fma || shape != (1, 1, 1, 1, 1, 1) || spec.residual != add {
            return Err(self.mismatch(
                "declaration",
                format!(
                    "a 1x1 depthwise layer of stride 1{} (a standalone {})",
                    if add { ", residual" } else { "" },
                    self.op.kind
                ),
                format!("{spec:?}"),
            ));
        }
        self.input_channels(spec.g)
    }

    /// A MEAN over height and width as a `fh x fw` average pool: the
    /// window must be the whole input, with no stride or padding.
    fn spatial_mean(&self, spec: &LayerSpec) -> Result<(), LoadError> {
        if !self.model.is_spatial_mean(self.op) {
            return Err(self.mismatch(
                "MEAN axes",
                "[1, 2] of an [1, H, W, C] input".into(),
                format!("{:?}", self.op.inputs),
            ));
        }
        let t = self.tensor("input", 0)?;
        let hw = (t.shape[1], t.shape[2]);
        self.check("filter", hw, Some((spec.fh, spec.fw)), hxw)?;
        self.check("stride", (1, 1), Some((spec.sh, spec.sw)), hxw)?;
        self.check("padding", Padding::Valid, Some(spec.padding), padding_name)
    }

    /// An int8 MEAN over height and width as a depthwise layer
    /// (`fc = k = 1`, `g = C`) whose window is the whole input.
    fn mean_as_depthwise(&self, spec: &LayerSpec) -> Result<(), LoadError> {
        if (spec.fc, spec.k, spec.dtype) != (1, 1, Dtype::I8) {
            return Err(self.mismatch(
                "declaration",
                "an int8 depthwise layer (fc = 1, k = 1) over the plane, or an average pool".into(),
                format!("{spec:?}"),
            ));
        }
        self.spatial_mean(spec)?;
        self.input_channels(spec.g)
    }

    fn tensor(&self, role: &str, i: usize) -> Result<&'m Tensor, LoadError> {
        self.op
            .input(i)
            .and_then(|t| self.model.tensor(t))
            .ok_or_else(|| LoadError::Missing {
                what: format!("{role} (input {i}) of {}", self.name()),
            })
    }

    /// The input activation's channels (last dimension), if its shape is known.
    fn input_channels(&self, channels: usize) -> Result<(), LoadError> {
        let t = self.tensor("input", 0)?;
        match t.shape.last() {
            Some(&c) if c != channels => {
                let mut expected = t.shape.clone();
                if let Some(last) = expected.last_mut() {
                    *last = channels;
                }
                Err(LoadError::Shape {
                    tensor: self.tensor_label("input", t),
                    expected,
                    actual: t.shape.clone(),
                })
            }
            _ => Ok(()),
        }
    }

    /// A fully connected input: rows of `fc` values (TFLite flattens all
    /// but the last dimension, or the whole tensor, into batches of rows).
    fn input_rows(&self, fc: usize) -> Result<(), LoadError> {
        let t = self.tensor("input", 0)?;
        let n: Option<usize> = t.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        if t.shape.is_empty() || n.is_some_and(|n| n > 0 && fc > 0 && n % fc == 0) {
            return Ok(());
        }
        Err(LoadError::Shape {
            tensor: format!("{} (rows of {fc} values)", self.tensor_label("input", t)),
            expected: alloc::vec![1, fc],
            actual: t.shape.clone(),
        })
    }

    /// The filter tensor after checking its shape.
    fn filter(&self, expected: &[usize]) -> Result<&'m Tensor, LoadError> {
        let t = self.tensor("filter", 1)?;
        if t.shape != expected {
            return Err(LoadError::Shape {
                tensor: self.tensor_label("filter", t),
                expected: expected.to_vec(),
                actual: t.shape.clone(),
            });
        }
        Ok(t)
    }

    /// The bias tensor, if any, after checking its shape.
    fn bias(&self, channels: usize) -> Result<Option<&'m Tensor>, LoadError> {
        let Some(t) = self.op.input(2).and_then(|t| self.model.tensor(t)) else {
            return Ok(None);
        };
        if t.shape != [channels] {
            return Err(LoadError::Shape {
                tensor: self.tensor_label("bias", t),
                expected: alloc::vec![channels],
                actual: t.shape.clone(),
            });
        }
        Ok(Some(t))
    }

    /// `t`'s data as `f32` (int8 dequantized).
    fn f32_of(&self, role: &str, t: &Tensor) -> Result<Vec<f32>, LoadError> {
        Ok(self.model.f32_of(t, &self.tensor_label(role, t))?)
    }

    /// `t`'s per-tensor quantization (an activation's).
    fn quant(&self, role: &str, t: &Tensor) -> Result<Quant, LoadError> {
        let q = t.quantization.as_ref().filter(|q| !q.custom);
        match q {
            Some(q) if q.scales.len() == 1 && q.zero_points.len() <= 1 => {
                let zp = q.zero_points.first().copied().unwrap_or(0);
                let zp = i8::try_from(zp).map_err(|_| LoadError::Mismatch {
                    layer: self.name(),
                    what: "zero point",
                    expected: "-128..=127".into(),
                    actual: zp.to_string(),
                })?;
                Ok(Quant::new(q.scales[0], i32::from(zp)))
            }
            _ => Err(LoadError::DType {
                tensor: self.tensor_label(role, t),
                expected: "int8 with one scale and zero point",
                actual: format!("{} with {:?}", t.dtype, t.quantization),
            }),
        }
    }

    /// An int8 tensor's data as stored (`role` names it in errors).
    fn i8_of(&self, role: &str, t: &Tensor) -> Result<Vec<i8>, LoadError> {
        if t.dtype != DType::Int8 {
            return Err(LoadError::DType {
                tensor: self.tensor_label(role, t),
                expected: "int8",
                actual: t.dtype.to_string(),
            });
        }
        Ok(self.model.tensor_i8(t.index)?)
    }

    /// A weight tensor's scales: one, or one per output channel
    /// (`channels`); its zero points must be 0 (TFLite's int8 weights).
    fn weight_scales(&self, t: &Tensor, channels: usize) -> Result<Vec<f32>, LoadError> {
        let label = || self.tensor_label("filter", t);
        let q = t.quantization.as_ref().filter(|q| !q.custom);
        let Some(q) = q else {
            return Err(LoadError::DType {
                tensor: label(),
                expected: "int8 with scales",
                actual: "no quantization".into(),
            });
        };
        if q.zero_points.iter().any(|&z| z != 0) {
            return Err(LoadError::Mismatch {
                layer: self.name(),
                what: "weight zero points",
                expected: "0 (symmetric int8 weights)".into(),
                actual: format!("{:?}", q.zero_points),
            });
        }
        if q.scales.len() != 1 && q.scales.len() != channels {
            return Err(LoadError::Shape {
                tensor: format!("{} (scales)", label()),
                expected: alloc::vec![channels],
                actual: alloc::vec![q.scales.len()],
            });
        }
        Ok(q.scales.clone())
    }

    /// The tensor operator `op` writes.
    fn output_of(&self, op: &Operator) -> Result<&'m Tensor, LoadError> {
        op.outputs
            .first()
            .and_then(|&t| self.model.tensor(t))
            .ok_or_else(|| LoadError::Missing {
                what: format!("output of op {} of {}", op.index, self.name()),
            })
    }

    /// The ADD operator `out_op` fused into this residual layer: its
    /// parameters with input 1 the layer's output and input 2 the skip.
    fn add_params(&self, out_op: usize) -> Result<AddParams, LoadError> {
        let add = self
            .model
            .operators()
            .get(out_op)
            .filter(|o| o.kind == OpKind::Add)
            .ok_or_else(|| LoadError::Missing {
                what: format!("ADD (op {out_op}) of the residual {}", self.name()),
            })?;
        let conv = self.op.outputs.first().copied();
        let (a, b) = (add.input(0), add.input(1));
        let skip = match (a, b) {
            (x, Some(s)) if x == conv => s,
            (Some(s), x) if x == conv => s,
            _ => {
                return Err(LoadError::Mismatch {
                    layer: self.name(),
                    what: "residual ADD",
                    expected: format!("an ADD of t{}", conv.unwrap_or(usize::MAX)),
                    actual: format!("ADD (op {out_op}) of {:?}", add.inputs),
                });
            }
        };
        let tensor = |i: usize| {
            self.model.tensor(i).ok_or_else(|| LoadError::Missing {
                what: format!("tensor t{i} of ADD (op {out_op})"),
            })
        };
        let q1 = self.quant("ADD input", self.output_of(self.op)?)?;
        let q2 = self.quant("ADD skip", tensor(skip)?)?;
        let qo = self.quant("ADD output", self.output_of(add)?)?;
        Ok(AddParams::new(q1, q2, qo, add.activation()?))
    }

    /// The activation of a layer whose last operator is `out_op`: a
    /// RELU or RELU6 after the layer's operator (whose int8 output it
    /// must not requantize), else the operator's fused one.
    fn fused_activation(&self, out_op: usize) -> Result<crate::Activation, LoadError> {
        let last = self.model.operators().get(out_op);
        match last {
            Some(r)
                if out_op != self.op.index && matches!(r.kind, OpKind::Relu | OpKind::Relu6) =>
            {
                let qx = self.quant("RELU input", self.output_of(self.op)?)?;
                let qy = self.quant("RELU output", self.output_of(r)?)?;
                if qx != qy {
                    return Err(self.mismatch(
                        "quantization of the fused RELU's output",
                        format!("its input's, {qx:?}"),
                        format!("{qy:?}"),
                    ));
                }
                Ok(r.activation()?)
            }
            _ => Ok(self.op.activation()?),
        }
    }

    /// The int8 identity layer of a standalone ADD, RELU, RELU6, PAD or
    /// LOGISTIC, all weights one, of scale one. For ADD, its
    /// requantization (by exactly one) returns its input `x`, then
    /// TFLite's ADD of `x` and the second input; PAD copies the same way;
    /// for RELU, LiteRT's requantization to the output's scale and the
    /// clamp; for LOGISTIC, LiteRT's table as the requantization.
    fn identity_i8(&self, qx: Quant, channels: usize) -> Result<Int8LayerWeights, LoadError> {
        let qy = self.quant("output", self.output_of(self.op)?)?;
        let full = (i8::MIN, i8::MAX);
        let (rescale, out, (min, max), add) = match self.op.kind {
            OpKind::Logistic => {
                // LiteRT's table, entry by entry: `q - zp_in` through the
                // logistic in `f32`; its output is quantized 1/256, -128.
                if qy.scale != 1.0 / 256.0 || qy.zero_point != -128 {
                    return Err(self.mismatch(
                        "LOGISTIC output quantization",
                        "scale 1/256, zero point -128 (as TFLite requires)".into(),
                        format!("{qy:?}"),
                    ));
                }
                (Rescale::logistic(qx.scale, qy.scale), qy, full, None)
            }
            // A multiplier of exactly 1 (`x * 1 / x`): the input itself,
            // which PAD writes (input and output quantized alike:
            // `Model::pad_amounts`) and ADD adds to its second input.
            OpKind::Pad | OpKind::Add => {
                let add = if self.op.kind == OpKind::Add {
                    let q2 = self.quant("ADD input 2", self.tensor("ADD input 2", 1)?)?;
                    Some(AddParams::new(qx, q2, qy, self.op.activation()?))
                } else {
                    None
                };
                (Rescale::conv(qx.scale, 1.0, qx.scale), qx, full, add)
            }
            _ => {
                // LiteRT's RELU / RELU6: `input_scale / output_scale` in
                // float, then doubled, the double-rounding multiply, the
                // clamp.
                let real = (qx.scale / qy.scale) as f64;
                let rescale = Rescale::DoubleRounding(Multiplier::from_real(real));
                let range = activation_range(self.op.activation()?, qy);
                (rescale, qy, range, None)
            }
        };
        Ok(Int8LayerWeights {
            weights: alloc::vec![1; channels],
            order: Order::Depthwise,
            bias: None,
            rescale: alloc::vec![rescale; channels],
            input_zero_point: qx.zero_point,
            output_zero_point: out.zero_point,
            min,
            max,
            add,
        })
    }

    /// The int8 depthwise layer of a MEAN over the plane: weight 1 at
    /// every tap, no bias, so the sum is `Σ q - count * zp_in`, then
    /// LiteRT's MEAN requantization ([`Rescale::mean`]), then the clamp of
    /// a RELU fused into it (`out_op`).
    fn mean_i8(
        &self,
        qx: Quant,
        spec: &LayerSpec,
        out_op: usize,
    ) -> Result<Int8LayerWeights, LoadError> {
        let qy = self.quant("output", self.output_of(self.op)?)?;
        let (min, max) = activation_range(self.fused_activation(out_op)?, qy);
        let rescale = Rescale::mean(qx.scale, qy.scale, spec.fh * spec.fw);
        Ok(Int8LayerWeights {
            weights: alloc::vec![1; spec.weights_len()],
            order: Order::Depthwise,
            bias: None,
            rescale: alloc::vec![rescale; spec.g],
            input_zero_point: qx.zero_point,
            output_zero_point: qy.zero_point,
            min,
            max,
            add: None,
        })
    }

    fn kind(&self, expected: &str) -> LoadError {
        self.mismatch("operator", expected.into(), self.op.kind.to_string())
    }
}

/// An operator checked against a layer: its filter and bias tensors (none
/// for pools) and the filter's order.
struct Resolved<'m> {
    target: Target<'m>,
    filter: Option<&'m Tensor>,
    order: Order,
    bias: Option<&'m Tensor>,
    /// Weights the file does not hold: made here.
    made: Made,
}

/// An operator without weights declared as a layer with weights, which
/// the loader makes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Made {
    /// The file's weights.
    No,
    /// A standalone ADD, RELU, RELU6, PAD or LOGISTIC declared as a 1x1
    /// depthwise layer of weight 1 (`residual` for ADD, the PAD's padding
    /// for PAD).
    Identity,
    /// An int8 MEAN over height and width declared as a depthwise layer
    /// over the whole plane, weight 1: the requantization is MEAN's.
    Mean,
}

/// Checks operator `layer.op` against `spec` (see the [module docs](super)).
fn resolve<'m>(
    model: &'m Model,
    layer: LayerRef,
    spec: &LayerSpec,
) -> Result<Resolved<'m>, LoadError> {
    let op = model
        .operators()
        .get(layer.op)
        .ok_or_else(|| LoadError::Missing {
            what: format!(
                "operator {} for layer `{}` (model has {} operators)",
                layer.op,
                layer.name,
                model.operators().len()
            ),
        })?;
    let target = Target { layer, op, model };
    let o = &op.options;
    let unit = |what: &'static str, v: Option<(usize, usize)>| target.check(what, (1, 1), v, hxw);
    if matches!(
        op.kind,
        OpKind::Add | OpKind::Relu | OpKind::Relu6 | OpKind::Pad | OpKind::Logistic
    ) {
        target.identity(spec)?;
        return Ok(Resolved {
            target,
            filter: None,
            order: Order::Depthwise,
            bias: None,
            made: Made::Identity,
        });
    }
    if op.kind == OpKind::Mean && spec.reduction == Reduction::Fma {
        target.mean_as_depthwise(spec)?;
        return Ok(Resolved {
            target,
            filter: None,
            order: Order::Depthwise,
            bias: None,
            made: Made::Mean,
        });
    }
    let (weights, order, bias) = match (spec.reduction, spec.kind()) {
        (Reduction::Avg, _) if op.kind == OpKind::Mean => {
            target.spatial_mean(spec)?;
            target.input_channels(spec.in_channels())?;
            (None, Order::Ohwi, None)
        }
        (Reduction::Max | Reduction::Avg, _) => {
            let (kind, name) = match spec.reduction {
                Reduction::Max => (OpKind::MaxPool2d, "MAX_POOL_2D"),
                _ => (OpKind::AveragePool2d, "AVERAGE_POOL_2D"),
            };
            if op.kind != kind {
                return Err(target.kind(name));
            }
            target.check("filter", (spec.fh, spec.fw), o.filter, hxw)?;
            target.window(spec)?;
            target.input_channels(spec.in_channels())?;
            (None, Order::Ohwi, None)
        }
        (Reduction::Fma, _) => match op.kind {
            // A depthwise convolution with multiplier M is the grouped
            // layer fc = 1, k = M, g = C.
            OpKind::DepthwiseConv2d => {
                if spec.fc != 1 {
                    return Err(target.mismatch(
                        "operator",
                        format!("CONV_2D ({} input channels per group)", spec.fc),
                        "DEPTHWISE_CONV_2D (1 input channel per group)".into(),
                    ));
                }
                target.window(spec)?;
                unit("dilation", o.dilation)?;
                // A negative multiplier reads as none.
                let m = o.depth_multiplier.and_then(|m| usize::try_from(m).ok());
                target.check("depth_multiplier", spec.k, m, |m| m.to_string())?;
                target.input_channels(spec.g)?;
                let out = spec.out_channels();
                let w = target.filter(&[1, spec.fh, spec.fw, out])?;
                (Some(w), Order::Depthwise, target.bias(out)?)
            }
            // Grouped too: TFLite infers the groups from the input's
            // channels over the filter's.
            OpKind::Conv2d => {
                target.window(spec)?;
                unit("dilation", o.dilation)?;
                target.input_channels(spec.in_channels())?;
                let w = target.filter(&[spec.out_channels(), spec.fh, spec.fw, spec.fc])?;
                (Some(w), Order::Ohwi, target.bias(spec.out_channels())?)
            }
            OpKind::FullyConnected => {
                if (spec.fh, spec.fw, spec.g) != (1, 1, 1) {
                    return Err(target.mismatch(
                        "operator",
                        format!(
                            "CONV_2D (a {}x{} filter, {} groups)",
                            spec.fh, spec.fw, spec.g
                        ),
                        "FULLY_CONNECTED (1x1, 1 group)".into(),
                    ));
                }
                if (spec.sh, spec.sw) != (1, 1) {
                    return Err(target.mismatch(
                        "stride",
                        hxw((spec.sh, spec.sw)),
                        "none (FULLY_CONNECTED: 1x1)".into(),
                    ));
                }
                if o.shuffled_weights {
                    return Err(target.mismatch(
                        "weights format",
                        "DEFAULT".into(),
                        "SHUFFLED4x16INT8".into(),
                    ));
                }
                target.input_rows(spec.fc)?;
                let w = target.filter(&[spec.k, spec.fc])?;
                (Some(w), Order::Ohwi, target.bias(spec.k)?)
            }
            _ => {
                return Err(target.kind("CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED"));
            }
        },
    };
    Ok(Resolved {
        target,
        filter: weights,
        order,
        bias,
        made: Made::No,
    })
}

/// Checks that a layer got as many weights as it declares.
fn check_count(target: &Target<'_>, spec: &LayerSpec, n: usize) -> Result<(), LoadError> {
    if n == spec.weights_len() {
        return Ok(());
    }
    Err(LoadError::Shape {
        tensor: format!("weights of {}", target.name()),
        expected: alloc::vec![spec.weights_len()],
        actual: alloc::vec![n],
    })
}

impl WeightSource for Model {
    /// Checks operator `layer.op` against `spec` (see the [module
    /// docs](super)) and returns its filter (TFLite order, which is the
    /// layer's) and bias, int8 data dequantized. Pools return no weights.
    /// The fused activation and a residual ADD are checked with the whole
    /// program's wiring ([`WeightSource::check_wiring`]).
    fn layer(&self, layer: LayerRef, spec: &LayerSpec) -> Result<LayerWeights, LoadError> {
        let r = resolve(self, layer, spec)?;
        let t = &r.target;
        let weights = match r.filter {
            Some(f) => t.f32_of("filter", f)?,
            None if r.made == Made::Identity => alloc::vec![1.0; spec.g],
            None if r.made == Made::Mean => {
                return Err(t.mismatch(
                    "declaration",
                    "an average pool (a float MEAN)".into(),
                    "a depthwise convolution (an int8 MEAN's)".into(),
                ));
            }
            None => Vec::new(),
        };
        check_count(t, spec, weights.len())?;
        let bias = r.bias.map(|b| t.f32_of("bias", b)).transpose()?;
        Ok(LayerWeights {
            weights,
            order: r.order,
            bias,
        })
    }

    /// As [`Model::layer`] for an int8 operator, its data as stored: the
    /// int8 filter (zero points 0), the int32 bias, and the quantization
    /// LiteRT's reference kernels use ([`Int8LayerWeights::rescale`]); the
    /// clamp from the operator's fused activation, or, for a residual
    /// layer, the parameters of the ADD `out_op` (with its activation).
    /// [`super::wiring`] of `layers` against this file's graph.
    fn check_wiring(&self, tensors: usize, layers: &[LayerInfo]) -> Result<(), LoadError> {
        super::wiring(self, tensors, layers).map(|_| ())
    }

    fn layer_i8(
        &self,
        layer: LayerRef,
        out_op: usize,
        spec: &LayerSpec,
    ) -> Result<Int8LayerWeights, LoadError> {
        let r = resolve(self, layer, spec)?;
        let t = &r.target;
        let qx = t.quant("input", t.tensor("input", 0)?)?;
        match r.made {
            Made::Identity => return t.identity_i8(qx, spec.g),
            Made::Mean => return t.mean_i8(qx, spec, out_op),
            Made::No => {}
        }
        let qy = t.quant("output", t.output_of(t.op)?)?;
        if t.op.kind == OpKind::Mean {
            return Err(t.mismatch(
                "declaration",
                "a depthwise convolution over the plane (an int8 MEAN rounds unlike AVERAGE_POOL_2D)"
                    .into(),
                "an average pool".into(),
            ));
        }
        let (min, max) = activation_range(t.fused_activation(out_op)?, qy);
        let out = spec.out_channels();
        let (weights, rescale) = match r.filter {
            Some(f) => {
                let w = t.i8_of("filter", f)?;
                let scales = t.weight_scales(f, out)?;
                let rescale = scales
                    .iter()
                    .map(|&s| match t.op.kind {
                        OpKind::FullyConnected => Rescale::fully_connected(qx.scale, s, qy.scale),
                        _ => Rescale::conv(qx.scale, s, qy.scale),
                    })
                    .collect();
                (w, rescale)
            }
            None => {
                if qx != qy {
                    return Err(t.mismatch(
                        "output quantization",
                        format!("the input's, {qx:?} (TFLite's int8 pools)"),
                        format!("{qy:?}"),
                    ));
                }
                (Vec::new(), Vec::new())
            }
        };
        check_count(t, spec, weights.len())?;
        let bias = match r.bias {
            Some(b) if b.dtype == DType::Int32 => Some(self.tensor_i32(b.index)?),
            Some(b) => {
                return Err(LoadError::DType {
                    tensor: t.tensor_label("bias", b),
                    expected: "int32",
                    actual: b.dtype.to_string(),
                });
            }
            None => None,
        };
        let add = if spec.residual {
            Some(t.add_params(out_op)?)
        } else {
            None
        };
        Ok(Int8LayerWeights {
            weights,
            order: r.order,
            bias,
            rescale,
            input_zero_point: qx.zero_point,
            output_zero_point: qy.zero_point,
            min,
            max,
            add,
        })
    }
}
