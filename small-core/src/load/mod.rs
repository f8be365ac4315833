//! Loading a model's weights, apart from running it: a [`WeightSource`]
//! hands each layer its weights in TFLite order (see
//! [`LayerSpec::weights_len`]) after checking them against the layer's
//! compile-time declaration. Sources:
//!
//! | source | feature | module |
//! | --- | --- | --- |
//! | a `.tflite` flatbuffer (decoded, then each operator checked against its layer) | `tflite` | `small_core::load::tflite` |
//! | a `.safetensors` file (`<layer>.weight`, `<layer>.bias`) | `safetensors` | `small_core::load::safetensors` |
//! | deterministic values, no file at all | `alloc` | [`Generated`] |
//!
//! A `model!` network loads every layer from a source with
//! [`Model::load`](crate::model::Model::load); running it never touches
//! the source again.

#[cfg(feature = "safetensors")]
#[cfg_attr(docsrs, doc(cfg(feature = "safetensors")))]
pub mod safetensors;
#[cfg(feature = "tflite")]
#[cfg_attr(docsrs, doc(cfg(feature = "tflite")))]
pub mod tflite;

use crate::model::LayerInfo;
use crate::reference::int8::{AddParams, Requant, Rescale};
use crate::{Filter, LayerSpec, Order};
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use small_ir::quant::round_f32;

/// Which layer of a model is being loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerRef {
    /// The layer's field name in the model (`"conv1"`).
    pub name: &'static str,
    /// Index of the TFLite operator that holds its weights.
    pub op: usize,
}

/// A layer's weights, in the order its source stores them, and its bias.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerWeights {
    /// `[G*K][F_H][F_W][F_C]` ([`Order::Ohwi`]) or `[F_H][F_W][G*K]`
    /// ([`Order::Depthwise`]), as `order` says; empty for pools.
    pub weights: Vec<f32>,
    /// The order of `weights`.
    pub order: Order,
    /// `[G*K]`, if the layer has one.
    pub bias: Option<Vec<f32>>,
}

impl LayerWeights {
    /// The weights as a layer's constructor takes them.
    pub fn filter(&self) -> Filter<'_> {
        Filter {
            order: self.order,
            values: &self.weights,
        }
    }
}

/// An `i8` layer's weights, bias and quantization as its file holds them
/// (TFLite's int8 scheme), ready for the layer's constructor.
#[derive(Debug, Clone, PartialEq)]
pub struct Int8LayerWeights {
    /// The weights, in `order` (empty for pools).
    pub weights: Vec<i8>,
    /// The order of `weights`.
    pub order: Order,
    /// `[G*K]` in the scale `input_scale * weight_scale`, if the layer has one.
    pub bias: Option<Vec<i32>>,
    /// One rescale per output channel, or one for all (empty for pools):
    /// [`Rescale::conv`] for convolutions, [`Rescale::fully_connected`] for
    /// FULLY_CONNECTED, as LiteRT's reference kernels.
    pub rescale: Vec<Rescale>,
    /// The input's zero point.
    pub input_zero_point: i32,
    /// The output's zero point.
    pub output_zero_point: i32,
    /// The clamp of the fused activation.
    pub min: i8,
    /// See `min`.
    pub max: i8,
    /// A residual layer's ADD: input 1 the layer's output, input 2 the skip.
    pub add: Option<AddParams>,
}

impl Int8LayerWeights {
    /// The weights as a layer's constructor takes them.
    pub fn filter(&self) -> Filter<'_, i8> {
        Filter {
            order: self.order,
            values: &self.weights,
        }
    }

    /// The quantization as a layer's constructor takes it.
    pub fn requant(&self) -> Requant<'_> {
        Requant {
            input_zero_point: self.input_zero_point,
            rescale: &self.rescale,
            output_zero_point: self.output_zero_point,
            min: self.min,
            max: self.max,
        }
    }
}

/// An error while loading a model's weights. Every variant names the
/// tensor or layer and the expected and actual values.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be parsed (truncated, wrong identifier, bad offsets).
    Malformed {
        /// What was being read.
        what: String,
        /// The parser's message.
        detail: String,
    },
    /// A tensor's shape differs from the layer's declaration.
    Shape {
        /// Tensor (or layer) name.
        tensor: String,
        /// Shape the layer declares.
        expected: Vec<usize>,
        /// Shape in the file.
        actual: Vec<usize>,
    },
    /// A tensor has an element type that cannot be used here.
    DType {
        /// Tensor name.
        tensor: String,
        /// Types accepted.
        expected: &'static str,
        /// Type in the file.
        actual: String,
    },
    /// The file's operator or option differs from the layer's declaration
    /// (`what` = `"operator"`, `"stride"`, `"padding"`, `"activation"` ...).
    Mismatch {
        /// Layer name and operator index.
        layer: String,
        /// Which property.
        what: &'static str,
        /// Declared value.
        expected: String,
        /// Value in the file.
        actual: String,
    },
    /// A tensor or operator the model needs is absent.
    Missing {
        /// What is missing.
        what: String,
    },
    /// Reading the file failed.
    Io {
        /// Path.
        path: String,
        /// The OS error.
        detail: String,
    },
    /// A small-rs error while packing.
    Core(crate::Error),
    /// The file holds what no small-rs program can run (an operator
    /// `small-codegen` cannot map), or what this call does not support.
    Unsupported {
        /// What, and why.
        what: String,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Malformed { what, detail } => write!(f, "malformed {what}: {detail}"),
            LoadError::Shape {
                tensor,
                expected,
                actual,
            } => write!(
                f,
                "tensor `{tensor}`: expected shape {expected:?}, found {actual:?}"
            ),
            LoadError::DType {
                tensor,
                expected,
                actual,
            } => write!(f, "tensor `{tensor}`: expected {expected}, found {actual}"),
            LoadError::Mismatch {
                layer,
                what,
                expected,
                actual,
            } => write!(f, "{layer}: {what} declared {expected}, file has {actual}"),
            LoadError::Missing { what } => write!(f, "missing {what}"),
            LoadError::Io { path, detail } => write!(f, "cannot read {path}: {detail}"),
            LoadError::Core(e) => write!(f, "{e}"),
            LoadError::Unsupported { what } => write!(f, "not supported: {what}"),
        }
    }
}

#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
impl std::error::Error for LoadError {}

/// The reader's errors, variant by variant.
#[cfg(feature = "tflite")]
impl From<small_tflite::Error> for LoadError {
    fn from(e: small_tflite::Error) -> Self {
        use small_tflite::Error as E;
        match e {
            E::Malformed { what, detail } => LoadError::Malformed { what, detail },
            E::DType {
                tensor,
                expected,
                actual,
            } => LoadError::DType {
                tensor,
                expected,
                actual,
            },
            E::Mismatch {
                layer,
                what,
                expected,
                actual,
            } => LoadError::Mismatch {
                layer,
                what,
                expected,
                actual,
            },
            E::Missing { what } => LoadError::Missing { what },
            E::Io { path, detail } => LoadError::Io { path, detail },
        }
    }
}

impl From<crate::Error> for LoadError {
    fn from(e: crate::Error) -> Self {
        LoadError::Core(e)
    }
}

/// Gives each layer of a model its weights.
pub trait WeightSource {
    /// The weights of `layer`, declared as `spec`, checked against it
    /// (`Filter::check` passes on [`LayerWeights::filter`]).
    /// A layer without weights (max or average pool) gets none: empty
    /// `weights` and no `bias`.
    fn layer(&self, layer: LayerRef, spec: &LayerSpec) -> Result<LayerWeights, LoadError>;

    /// The weights and quantization of the `i8` layer `layer` (declared
    /// `dtype = i8`), checked as [`WeightSource::layer`]; `out_op` is the
    /// operator that writes the layer's output (a residual layer's ADD).
    /// A source of `f32` weights returns an error.
    fn layer_i8(
        &self,
        layer: LayerRef,
        out_op: usize,
        spec: &LayerSpec,
    ) -> Result<Int8LayerWeights, LoadError> {
        let _ = (layer, out_op, spec);
        Err(LoadError::Core(crate::Error::Unsupported {
            what: "int8 weights",
            detail: "this weight source holds f32 weights only",
        }))
    }

    /// Checks that `layers` (a program of `tensors` tensors: the input,
    /// then each layer's output) read and write the tensors the source's
    /// graph wires them to. A `.tflite` file has a graph
    /// (`tflite::wiring`, feature `tflite`); a source of weights alone (generated,
    /// safetensors) accepts any wiring. Every `model!` program runs it
    /// when it loads or packs its weights.
    fn check_wiring(&self, tensors: usize, layers: &[LayerInfo]) -> Result<(), LoadError> {
        let _ = (tensors, layers);
        Ok(())
    }
}

/// Deterministic pseudo-random weights (no file): values in
/// `[-s, s)` with `s = 2 / (F_H F_W F_C)`, so that each output's weights
/// have an expected absolute sum of 1 and a difference in a layer's input
/// is not amplified on its way through a deep network (which keeps the
/// error bounds of whole-network checks tight), and biases in
/// `[-0.1, 0.1)`, which keep activations away from zero and denormals.
/// The same `seed` and layer always give the same values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generated {
    /// Seed of the whole model.
    pub seed: u32,
}

impl Generated {
    /// `n` values in `[-scale, scale)` from `seed` (xorshift32).
    ///
    /// # Panics
    /// As `Vec`, if `n` values cannot be allocated; [`Self::try_values`]
    /// returns an error instead.
    pub fn values(seed: u32, n: usize, scale: f32) -> Vec<f32> {
        Self::stream(seed, scale).take(n).collect()
    }

    /// `n` int8 values from `seed`: [`Self::values`] in `[-128, 128)`,
    /// each truncated toward zero (the generated input of an int8 network).
    ///
    /// ```
    /// use small_core::load::Generated;
    /// let x = Generated::values_i8(13, 4);
    /// let f = Generated::values(13, 4, 128.0);
    /// assert!(x.iter().zip(&f).all(|(&x, &f)| x == f as i8));
    /// ```
    ///
    /// # Panics
    /// As [`Self::values`].
    pub fn values_i8(seed: u32, n: usize) -> Vec<i8> {
        Self::stream(seed, 128.0).take(n).map(|v| v as i8).collect()
    }

    /// [`Self::values`], or [`crate::Error::TooLarge`] if `n` values exceed
    /// the address space or cannot be allocated.
    pub fn try_values(seed: u32, n: usize, scale: f32) -> Result<Vec<f32>, crate::Error> {
        let too_large = |refused| crate::Error::TooLarge {
            what: "generated values (elements x 1 x 1)",
            dims: [n, 1, 1],
            refused,
        };
        if n > crate::MAX_ELEMENTS {
            return Err(too_large(None));
        }
        let mut v = Vec::new();
        v.try_reserve_exact(n)
            .map_err(|_| too_large(Some(n * core::mem::size_of::<f32>())))?;
        v.extend(Self::stream(seed, scale).take(n));
        Ok(v)
    }

    fn stream(seed: u32, scale: f32) -> impl Iterator<Item = f32> {
        let mut s = seed.wrapping_mul(2_654_435_761) | 1;
        core::iter::repeat_with(move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            ((s >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0) * scale
        })
    }
}

impl WeightSource for Generated {
    fn layer(&self, layer: LayerRef, spec: &LayerSpec) -> Result<LayerWeights, LoadError> {
        let seed = self
            .seed
            .wrapping_mul(31)
            .wrapping_add(layer.op as u32 * 2 + 1);
        // A scale only: saturating is exact enough.
        let fan_in = spec.fh.saturating_mul(spec.fw).saturating_mul(spec.fc) as f32;
        let scale = 2.0 / fan_in;
        // Sizes checked (`weights_len` bounds the output channels) and
        // allocated fallibly before any value is generated.
        let n = spec.checked_weights_len()?;
        let bias = if spec.has_weights() {
            Some(Self::try_values(seed ^ 0x5bd1_e995, spec.g * spec.k, 0.1)?)
        } else {
            None
        };
        Ok(LayerWeights {
            weights: Self::try_values(seed, n, scale)?,
            order: Order::Ohwi,
            bias,
        })
    }

    /// Deterministic int8 weights in `-127..=127` and an int32 bias, zero
    /// points that differ from layer to layer (edge values included), and
    /// per-channel double-rounding rescales of about `0.004 /
    /// sqrt(F_H F_W F_C)`, which keep most outputs inside the int8 range
    /// rather than clamped; the clamp follows the declared activation
    /// (LOGISTIC: its requantization, output scale 1/256). A
    /// residual layer gets an ADD of fixed scales. The quantization of one
    /// layer does not match the next one's (each layer is checked alone,
    /// and a network of them still computes a well-defined result).
    fn layer_i8(
        &self,
        layer: LayerRef,
        _out_op: usize,
        spec: &LayerSpec,
    ) -> Result<Int8LayerWeights, LoadError> {
        let w = self.layer(layer, spec)?;
        let op = layer.op as u32;
        let zp = |k: u32| -> i32 {
            const ZPS: [i32; 6] = [-128, 0, 127, -7, 33, -100];
            ZPS[(self.seed.wrapping_add(op * 3 + k) % 6) as usize]
        };
        let (input_zp, output_zp) = (zp(0), zp(1));
        let range = |zp: i32| match spec.activation {
            crate::Activation::None => (-128, 127),
            crate::Activation::Relu => (zp as i8, 127),
            crate::Activation::Relu6 => (zp as i8, (zp + 96).min(127) as i8),
            crate::Activation::Logistic => (-128, 127),
        };
        // The f32 weights are in [-s, s), s = 2 / fan_in: scaled to int8.
        let taps = spec
            .fh
            .saturating_mul(spec.fw)
            .saturating_mul(spec.fc)
            .max(1);
        let fan_in = taps as f32;
        let to_i8 = |v: f32| round_f32(v * fan_in / 2.0 * 127.0).clamp(-127, 127) as i8;
        let weights: Vec<i8> = w.weights.iter().map(|&v| to_i8(v)).collect();
        let bias = w
            .bias
            .map(|b| b.iter().map(|&v| (v * 20_000.0) as i32).collect());
        let channels = if spec.has_weights() {
            spec.out_channels()
        } else {
            0
        };
        // No `sqrt` without std: the integer square root is near enough.
        let base = 0.004 / taps.isqrt() as f64;
        let rescale = (0..channels)
            .map(|c| {
                let r = base * (0.75 + 0.5 * ((c * 7 + layer.op) % 16) as f64 / 16.0);
                match spec.activation {
                    // TFLite's LOGISTIC output scale, over a sum of
                    // about 40 steps of `r` around zero.
                    crate::Activation::Logistic => Rescale::logistic(r as f32 * 40.0, 1.0 / 256.0),
                    _ => Rescale::DoubleRounding(crate::ir::quant::Multiplier::from_real(r)),
                }
            })
            .collect();
        let (mut min, mut max) = range(output_zp);
        let add = spec.residual.then(|| {
            let out = zp(2);
            let (lo, hi) = range(out);
            let q = crate::ir::quant::Quant::new;
            let p = AddParams::new(
                q(0.05, output_zp),
                q(0.07, zp(3)),
                q(0.09, out),
                spec.activation,
            );
            AddParams {
                min: lo,
                max: hi,
                ..p
            }
        });
        if spec.residual {
            // The activation is the ADD's; the layer itself clamps nothing.
            (min, max) = (-128, 127);
        }
        Ok(Int8LayerWeights {
            weights,
            order: Order::Ohwi,
            bias,
            rescale,
            input_zero_point: input_zp,
            output_zero_point: output_zp,
            min,
            max,
            add,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_is_deterministic_and_scaled() {
        let spec = LayerSpec {
            fh: 3,
            fw: 3,
            fc: 16,
            k: 8,
            g: 1,
            sh: 1,
            sw: 1,
            padding: crate::Padding::Same,
            reduction: crate::Reduction::Fma,
            activation: crate::Activation::None,
            residual: false,
            dtype: crate::Dtype::F32,
        };
        let g = Generated { seed: 7 };
        let r = LayerRef { name: "c", op: 2 };
        let a = g.layer(r, &spec).unwrap();
        assert_eq!(a, g.layer(r, &spec).unwrap());
        assert_eq!(a.weights.len(), 8 * 9 * 16);
        let s = 2.0 / 144.0;
        assert!(a.weights.iter().all(|w| w.abs() <= s));
        assert!(a.weights.iter().any(|w| w.abs() > s / 2.0));
        assert_ne!(a, g.layer(LayerRef { name: "d", op: 3 }, &spec).unwrap());
        // A pool has no weights and no bias, as from every source.
        let pool = LayerSpec {
            reduction: crate::Reduction::Max,
            fc: 1,
            k: 1,
            g: 16,
            ..spec
        };
        let p = g.layer(r, &pool).unwrap();
        assert!(p.weights.is_empty() && p.bias.is_none());
    }
}
