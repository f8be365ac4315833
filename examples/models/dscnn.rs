//! MLPerf Tiny keyword spotting: DS-CNN (49x10 MFCC, 12 classes),
//! `kws_ref_model_float32.tflite` and `kws_ref_model.tflite` (int8). Its
//! first convolution is 10x4 with stride 2 and TF SAME padding, which pads
//! 4 rows on top and 5 below.
//!
//! The declarations are generated: `generated/dscnn*.rs` is what
//! `small-codegen FILE --rust DsCnn` prints for each file
//! (`scripts/gen-networks` writes them; `tests/codegen.rs` fails when they
//! differ from the tool's output). Output: 12 logits.

include!("generated/dscnn.rs");

/// The int8 DS-CNN (`kws_ref_model.tflite`). Output: 12 int8 logits
/// (before SOFTMAX).
pub mod int8 {
    include!("generated/dscnn_int8.rs");
}
