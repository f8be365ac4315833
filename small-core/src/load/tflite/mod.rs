//! Reading TensorFlow Lite models (`.tflite` flatbuffers, feature `tflite`).
//!
//! [`Model::parse`] reads a file's single subgraph into plain Rust values:
//! its [`Tensor`]s (name, shape, element type, quantization), its
//! [`Operator`]s in execution order (kind, inputs, outputs, [`Options`]) and
//! the constant data. The flatbuffer is read by the crate `small-tflite`
//! (`small-core/tflite`, re-exported here), with code that `planus`
//! generated from TensorFlow Lite's `schema.fbs`; every access is bounds
//! checked, so a truncated or corrupted file is an error, never a panic.
//! That decoding knows nothing of layers.
//!
//! [`Model`] is a [`WeightSource`] (`check.rs`): `model.layer(LayerRef { name, op }, &spec)`
//! checks operator `op` against the layer's declaration (operator kind,
//! stride, padding, dilation, filter and bias shapes, input channels; a
//! fully connected input only needs rows of `FC` values) and
//! returns its weights in TFLite order, which is the order small-rs layers
//! take ([`LayerSpec::weights_len`]):
//!
//! | declared layer | TFLite operator | filter tensor |
//! | --- | --- | --- |
//! | `reduction = fma`, `fc > 1` or `k > 1` | `CONV_2D` | `[G*K, FH, FW, FC]` |
//! | same with `fh = fw = 1`, `g = 1`, stride 1 | `FULLY_CONNECTED` | `[K, FC]` |
//! | `reduction = fma`, `fc = k = 1` | `DEPTHWISE_CONV_2D`, multiplier 1 | `[1, FH, FW, G]` |
//! | `reduction = max` / `avg` | `MAX_POOL_2D` / `AVERAGE_POOL_2D` | none |
//! | a `concat` line of `model!` (no layer) | `CONCATENATION` along channels | none: [`wiring`] checks it |
//!
//! The bias (input 2, optional) must be `[G*K]`. Float32 data is returned
//! as stored; int8 and uint8 data is dequantized, `(q - zero_point) * scale`,
//! per tensor or per channel (this is how the int8 weights of a
//! "hybrid" model, such as MLPerf Tiny's `kws_ref_model_float32.tflite`,
//! become floats). The fused activation is not checked there (a model may
//! fuse it into a following ADD); callers read it with
//! [`Operator::activation`].
//!
//! ```no_run
//! # #[cfg(feature = "std")]
//! # fn main() -> Result<(), small_core::load::LoadError> {
//! use small_core::load::{LayerRef, WeightSource};
//! use small_core::load::tflite::{Model, OpKind};
//! use small_core::{Activation, LayerSpec, Padding};
//!
//! let model = Model::from_file("kws_ref_model_float32.tflite")?;
//! let op = &model.operators()[1];
//! assert_eq!(op.kind, OpKind::DepthwiseConv2d);
//! assert_eq!(op.activation()?, Activation::Relu);
//! let spec = LayerSpec {
//!     padding: Padding::Same,
//!     activation: Activation::Relu,
//!     ..LayerSpec::new(3, 3, 1, 1, 64)
//! };
//! let w = model.layer(LayerRef { name: "dw1", op: 1 }, &spec)?;
//! assert_eq!(w.weights.len(), 3 * 3 * 64);
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "std"))]
//! # fn main() {}
//! ```
//!
//! Not supported (each is an error when the data is used): more than one
//! subgraph, sparse tensors, element types other than float32, int8 and
//! uint8, custom quantization, shuffled fully-connected weights, dilation.
//! Buffers stored outside the flatbuffer (models over 2 GB: a buffer's
//! `offset`/`size`) are read from the same byte slice.

mod check;
#[cfg(test)]
mod tests;
mod wiring;

#[cfg(doc)]
use crate::{LayerSpec, load::WeightSource};
pub use small_tflite::{
    DType, FusedActivation, Model, OpKind, Operator, Options, Quantization, Tensor,
};
/// Small files built in code and the flatbuffer types, for tests: hidden,
/// not a stable API.
#[doc(hidden)]
pub use small_tflite::{fixture, schema};
pub use wiring::{verify_wiring, wiring};
