//! The layer IR of small-rs: one definition of a layer, shared by the
//! `#[layer]` proc macro (which parses into it and derives the blocking
//! with it at expansion time) and the runtime `small-core` (which
//! re-exports it and checks, packs and walks with the same functions).
//!
//! One module per concept of the SMaLL paper:
//!
//! | module | concept |
//! | --- | --- |
//! | [`spec`] | the abstract layer (Table 2): filter, channels, groups, stride, padding, reduction, activation, element type |
//! | [`padding`] | TensorFlow's SAME / VALID output sizes and border padding |
//! | [`machine`] | what the blocking model knows of an arch: registers, lanes, FMA latency and rate |
//! | [`blocking`] | the analytic register blocking (§4.2.1) and `explain` |
//! | [`filter`] | a layer's weights as handed over, tagged with their order (CONV_2D's OHWI or DEPTHWISE_CONV_2D's) |
//! | [`geometry`] | the blocked activation layout and the packed-weight layout, as `const fn`s |
//! | [`quant`] | int8 requantization, bit for bit as TFLite's reference kernels |
//! | [`math`] | `sqrt`, `exp` and `logistic` in `f32` without `std`, the same bits everywhere |
//! | [`error`] | the errors of run-time geometry (sizes, shapes) |
//!
//! `no_std`, no dependencies: everything is `core`, and everything the
//! runtime needs in a constant is a `const fn`.
#![no_std]
#![warn(missing_docs)]

pub mod blocking;
pub mod cost;
pub mod error;
pub mod filter;
pub mod geometry;
pub mod machine;
pub mod math;
pub mod padding;
pub mod plan;
pub mod quant;
pub mod spec;
pub mod step;

pub use blocking::Blocking;
pub use error::Error;
pub use filter::{Filter, Order};
pub use geometry::{CB, Dims, MAX_ELEMENTS};
pub use machine::Machine;
pub use padding::{Dim, Padding};
pub use spec::{Activation, Dtype, Element, KernelKind, LayerSpec, Reduction};
