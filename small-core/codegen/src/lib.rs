//! From a `.tflite` file to a small-rs program.
//!
//! [`Program::from_file`] maps a file's graph to the layers a `model!`
//! declares: one `#[layer]` per operator that computes, a residual ADD
//! fused into the convolution it adds to, a CONCATENATION along channels
//! as a `concat` line, RESHAPE dropped where it is the no-op it is in the
//! blocked layout, a final SOFTMAX kept as the head.
//! Anything else is an [`Unsupported`] error naming the operator, its
//! index, its tensors with their shapes and what is supported.
//! [`Program::table`] prints the operator table (the `small-codegen`
//! binary's output) and [`Program::source`] the Rust source of the
//! `#[layer]` structs and the `model!` block.
//!
//! ```no_run
//! use small_codegen::Program;
//! use small_tflite::Model;
//! let file = Model::from_file("../shared/models/pretrainedResnet.tflite")?;
//! let program = Program::from_file(&file)?;
//! print!("{}", program.table("resnet8"));
//! print!("{}", program.source("Resnet8"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! It depends on the reader (`small-tflite`), the IR and the arch
//! numbers only, not on `small-core`, so that a proc macro can use it.

mod names;
mod program;
mod source;
mod table;

pub use names::Names;
pub use program::{Arena, Head, Layer, Program, Unsupported};
