//! Checking a decoded operator against a layer's declaration
//! ([`LayerSpec`]) and extracting its weights in TFLite order: what makes
//! a [`Model`] a [`WeightSource`] (see the [module docs](super) for the
//! mapping of layers to operators).

use super::{Model, OpKind, Operator, Tensor};
use crate::load::{LayerRef, LayerWeights, LoadError, WeightSource};
use crate::{Activation, LayerSpec, Order, Padding, Reduction};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

impl Operator {
    /// The fused activation as a small-rs [`Activation`]: `None` when the
    /// operator has none (or no such option); an error for one small-rs
    /// cannot fuse (`TANH`, `RELU_N1_TO_1`, ...).
    pub fn activation(&self) -> Result<Activation, LoadError> {
        match self.options.fused_activation {
            None => Ok(Activation::None),
            Some(f) => f.to_activation().ok_or_else(|| LoadError::Mismatch {
                layer: format!("op {} {}", self.index, self.kind),
                what: "activation",
                expected: "NONE, RELU or RELU6".into(),
                actual: f.to_string(),
            }),
        }
    }
}

fn hxw((h, w): (usize, usize)) -> String {
    format!("{h}x{w}")
}

pub(super) fn padding_name(p: Padding) -> &'static str {
    match p {
        Padding::Same => "SAME",
        Padding::Valid => "VALID",
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

impl Target<'_> {
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
        self.check("padding", spec.padding, o.padding, |p| {
            padding_name(p).into()
        })
    }

    fn tensor(&self, role: &str, i: usize) -> Result<&Tensor, LoadError> {
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

    /// The filter's data after checking its shape.
    fn filter(&self, expected: &[usize]) -> Result<Vec<f32>, LoadError> {
        let t = self.tensor("filter", 1)?;
        let label = self.tensor_label("filter", t);
        if t.shape != expected {
            return Err(LoadError::Shape {
                tensor: label,
                expected: expected.to_vec(),
                actual: t.shape.clone(),
            });
        }
        self.model.f32_of(t, &label)
    }

    fn bias(&self, channels: usize) -> Result<Option<Vec<f32>>, LoadError> {
        let Some(t) = self.op.input(2).and_then(|t| self.model.tensor(t)) else {
            return Ok(None);
        };
        let label = self.tensor_label("bias", t);
        if t.shape != [channels] {
            return Err(LoadError::Shape {
                tensor: label,
                expected: alloc::vec![channels],
                actual: t.shape.clone(),
            });
        }
        self.model.f32_of(t, &label).map(Some)
    }

    fn kind(&self, expected: &str) -> LoadError {
        self.mismatch("operator", expected.into(), self.op.kind.to_string())
    }
}

impl WeightSource for Model {
    /// Checks operator `layer.op` against `spec` (see the [module
    /// docs](super)) and returns its filter (TFLite order, which is the
    /// layer's) and bias. Pools return no weights. The fused activation
    /// and a residual ADD are not checked: see [`Operator::activation`].
    fn layer(&self, layer: LayerRef, spec: &LayerSpec) -> Result<LayerWeights, LoadError> {
        let op = self
            .operators()
            .get(layer.op)
            .ok_or_else(|| LoadError::Missing {
                what: format!(
                    "operator {} for layer `{}` (model has {} operators)",
                    layer.op,
                    layer.name,
                    self.operators().len()
                ),
            })?;
        let target = Target {
            layer,
            op,
            model: self,
        };
        let o = &op.options;
        let unit =
            |what: &'static str, v: Option<(usize, usize)>| target.check(what, (1, 1), v, hxw);
        let (weights, order, bias) = match (spec.reduction, spec.kind()) {
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
                (Vec::new(), Order::Ohwi, None)
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
                    (w, Order::Depthwise, target.bias(out)?)
                }
                // Grouped too: TFLite infers the groups from the input's
                // channels over the filter's.
                OpKind::Conv2d => {
                    target.window(spec)?;
                    unit("dilation", o.dilation)?;
                    target.input_channels(spec.in_channels())?;
                    let w = target.filter(&[spec.out_channels(), spec.fh, spec.fw, spec.fc])?;
                    (w, Order::Ohwi, target.bias(spec.out_channels())?)
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
                    (w, Order::Ohwi, target.bias(spec.k)?)
                }
                _ => {
                    return Err(target.kind("CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED"));
                }
            },
        };
        if weights.len() != spec.weights_len() {
            return Err(LoadError::Shape {
                tensor: format!("weights of {}", target.name()),
                expected: alloc::vec![spec.weights_len()],
                actual: alloc::vec![weights.len()],
            });
        }
        Ok(LayerWeights {
            weights,
            order,
            bias,
        })
    }
}
