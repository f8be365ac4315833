//! Two things the tests need at build time:
//!
//! * `cfg(small_shared_models)` when the MLPerf Tiny files are where
//!   `tests/codegen.rs`'s `tflite_model!` line reads them at compile time
//!   (`../shared/models` beside the repository); without them that test
//!   is left out of the build rather than failing it.
//! * The weights of `data/tflite/every_op.tflite` and of its int8 twin,
//!   packed as a user's
//!   build script packs them for a target without a heap or a file system
//!   (`small_core::build::pack_tflite`); `tflite_graphs.rs` embeds them
//!   with `small_core::packed_weights!` and runs the program on them.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(small_shared_models)");
    let file = "../../shared/models/pretrainedResnet_quant.tflite";
    println!("cargo::rerun-if-changed={file}");
    if std::path::Path::new(file).exists() {
        println!("cargo::rustc-cfg=small_shared_models");
    }
    for file in ["every_op", "every_op_int8"] {
        // `tflite_graphs.rs` embeds the target's portable arch (`reference`,
        // or NEON on aarch64, where `reference` is left out) and the M4's.
        use small_core::Arch::{CortexM4, Neon, Reference};
        for arch in [Reference, Neon, CortexM4] {
            let path = format!("data/tflite/{file}.tflite");
            if let Err(e) = small_core::build::pack_tflite(&path, arch) {
                panic!("small-tests build script: {e}");
            }
        }
    }
}
