//! Int8 reference operators: TFLite's int8 reference kernels
//! (`reference_integer_ops`, LiteRT's `BUILTIN_REF` op resolver), bit
//! for bit. The oracle every int8 kernel is compared with exactly.
//!
//! Tensors are one NHWC image of `i8`, with per-tensor quantization
//! ([`Quant`]: real value = `scale * (q - zero_point)`); weights are `i8`
//! with zero point 0 (TFLite's int8 spec: symmetric weights), per tensor
//! or per output channel; biases are `i32` in the scale
//! `input_scale * weight_scale`. Shapes, windows, padding and weight
//! layouts are those of the `f32` reference layers ([`super`]): the same
//! [`Shape`](super::Shape), [`Window`](super::Window) and
//! [`Conv`](super::Conv), TFLite's OHWI and `[1][fh][fw][C *
//! multiplier]` filters, padded positions skipped.
//!
//! The arithmetic is TFLite's, operator by operator, with the
//! requantization of [`small_ir::quant`]:
//!
//! | operator | sum | output stage |
//! | --- | --- | --- |
//! | [`conv2d`], [`depthwise_conv2d`] | `Σ w * (x - zp_in)` in `i32`, plus the bias | per channel, [`Rescale::conv`]: `MultiplyByQuantizedMultiplier`, double rounding |
//! | [`fully_connected`] | the same | [`Rescale::fully_connected`]: `round(acc * scale)` in `f64` |
//! | [`avg_pool`] | `Σ q` over the window's positions inside the input | [`rounding_average`](small_ir::quant::rounding_average): ties away from zero |
//! | [`max_pool`] | `max q` | — |
//! | [`add`] | both inputs rescaled to `2 max(s1, s2)` after `<< 20` | [`AddRescale`] |
//! | [`concat()`] | — | none: a copy (LiteRT's int8 CONCATENATION requires every input quantized as its output, and refuses the model otherwise) |
//! | [`softmax`] | gemmlowp fixed point: `exp` on Q5.26, sum in Q12.19, reciprocal | output scale 1/256, zero point -128 |
//! | [`logistic`] | a table of `1 / (1 + exp(-x))` filled in `f32` ([`LogisticTable`]) | output scale 1/256, zero point -128 |
//! | [`quantize`], [`dequantize`] | — | `round(x / scale) + zp`, `scale * (q - zp)` |
//!
//! then the output zero point and the clamp to the fused activation's
//! range ([`activation_range`]). The `i32` sums wrap on overflow instead
//! of panicking; TFLite's overflow there is undefined and needs more than
//! `2^16` filter taps.
//!
//! The [`Rescale`] of each operator is a parameter ([`Requant`]), so a
//! kernel with another rounding can be checked against its own oracle;
//! the constructors above give LiteRT's. TFLite Micro's default build
//! differs in one operator, FULLY_CONNECTED, which it rescales with
//! [`Rescale::DoubleRounding`] (see [`small_ir::quant`]). Which
//! rounding each operator of LiteRT uses was read in its source and is
//! checked bit for bit by the `int8_reference` test, every intermediate
//! tensor of the four MLPerf Tiny int8 networks included.
//!
//! Errors follow the `f32` reference layers (checked before anything is
//! written, nothing panics): zero parameters and unsupported quantization
//! parameters (a zero point outside `-128..=127`, `min > max`) →
//! [`Error::Unsupported`]; channel counts → [`Error::ShapeMismatch`];
//! spatial sizes → [`Error::InputTooSmall`]; buffer lengths in argument
//! order, then the per-channel [`Requant::rescale`] →
//! [`Error::BufferLength`].

use crate::Error;
pub use small_ir::quant::{AddRescale, Multiplier, Quant, Rescale, activation_range};

mod conv;
mod elementwise;
mod logistic;
mod pool;
mod softmax;

#[cfg(test)]
mod tests;

/// The concatenation of int8 tensors: [`super::concat`], a copy.
pub use super::concat;
pub use conv::{conv2d, depthwise_conv2d, fully_connected};
pub use elementwise::{AddParams, add, dequantize, quantize};
pub use logistic::{LogisticTable, logistic};
pub use pool::{avg_pool, max_pool};
pub use softmax::{SoftmaxParams, softmax};

/// The quantization of a multiply-and-sum operator ([`conv2d`],
/// [`depthwise_conv2d`], [`fully_connected`]): the input zero point, the
/// rescaling of each output channel's sum, the output zero point and the
/// fused activation's clamp.
///
/// Output `o` = `clamp(rescale[o].apply(acc) + output_zero_point, min,
/// max)`, `acc` = `Σ w * (x - input_zero_point) + bias[o]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Requant<'a> {
    /// The input's zero point, `-128..=127`.
    pub input_zero_point: i32,
    /// One [`Rescale`] per output channel (per-channel weights), or one
    /// for all (per-tensor weights).
    pub rescale: &'a [Rescale],
    /// The output's zero point, `-128..=127`.
    pub output_zero_point: i32,
    /// Smallest output ([`activation_range`]).
    pub min: i8,
    /// Largest output.
    pub max: i8,
}

impl Requant<'_> {
    /// Checks the zero points and the range ([`Error::Unsupported`]), then
    /// that there is one rescale or one per channel of `channels`
    /// ([`Error::BufferLength`]).
    pub fn check(&self, channels: usize) -> Result<(), Error> {
        self.check_params()?;
        self.check_rescale(channels)
    }

    /// Zero points and range ([`Error::Unsupported`]).
    fn check_params(&self) -> Result<(), Error> {
        check_zero_point("input zero point", self.input_zero_point)?;
        check_zero_point("output zero point", self.output_zero_point)?;
        check_range(self.min, self.max)
    }

    /// One rescale, or one per channel ([`Error::BufferLength`]).
    fn check_rescale(&self, channels: usize) -> Result<(), Error> {
        if self.rescale.len() == 1 {
            Ok(())
        } else {
            crate::check_len("rescale", channels, self.rescale.len())
        }
    }

    /// Output channel `o` of the sum `acc`.
    fn output(&self, o: usize, acc: i32) -> i8 {
        let r = self.rescale[if self.rescale.len() == 1 { 0 } else { o }];
        clamp(
            r.apply(acc).wrapping_add(self.output_zero_point),
            self.min,
            self.max,
        )
    }
}

/// `v` clamped to `min..=max` (as TFLite, `min(max(v, min), max)`).
fn clamp(v: i32, min: i8, max: i8) -> i8 {
    v.max(i32::from(min)).min(i32::from(max)) as i8
}

/// [`Error::Unsupported`] unless `zp` is an int8 value.
fn check_zero_point(what: &'static str, zp: i32) -> Result<(), Error> {
    if i8::try_from(zp).is_ok() {
        Ok(())
    } else {
        Err(Error::Unsupported {
            what,
            detail: "an int8 zero point must be in -128..=127",
        })
    }
}

/// [`Error::Unsupported`] if the activation range is empty.
fn check_range(min: i8, max: i8) -> Result<(), Error> {
    if min <= max {
        Ok(())
    } else {
        Err(Error::Unsupported {
            what: "activation range",
            detail: "min must not exceed max",
        })
    }
}
