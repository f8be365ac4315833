//! MLPerf Tiny visual wake words: MobileNetV1 at width 0.25 on 96x96x3
//! images in [0, 1], 2 classes (`vww_96_float.tflite`,
//! `vww_96_int8.tflite`): a 3x3 stride-2 stem, 13 depthwise-separable
//! blocks (a 3x3 depthwise convolution, then a 1x1 pointwise one), a 3x3
//! average pool and a dense layer to 2 logits.
//!
//! The declarations are generated: `generated/vww*.rs` is what
//! `small-codegen FILE --rust Vww` prints for each file
//! (`scripts/gen-networks` writes them; `tests/codegen.rs` fails when they
//! differ from the tool's output). The bench crate's `vww1` is the same
//! network at width 1.0.

include!("generated/vww.rs");

/// The int8 VWW network (`vww_96_int8.tflite`). Output: 2 int8 logits
/// (before SOFTMAX).
pub mod int8 {
    include!("generated/vww_int8.rs");
}
