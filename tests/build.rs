//! Sets `cfg(small_shared_models)` when the MLPerf Tiny files are where
//! `tests/codegen.rs`'s `tflite_model!` lines read them at compile time
//! (`../shared/models` beside the repository); without them those tests
//! are left out of the build rather than failing it.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(small_shared_models)");
    let file = "../../shared/models/pretrainedResnet.tflite";
    println!("cargo::rerun-if-changed={file}");
    if std::path::Path::new(file).exists() {
        println!("cargo::rustc-cfg=small_shared_models");
    }
}
