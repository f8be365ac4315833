//! Helpers shared by the integration tests of `small-tests`: those of the
//! kernel suites (`small-kernel-tests`), the models directory and a
//! program's layers.

pub use small_kernel_tests::{Rng, first_mismatch, reference_forward, tolerances};

/// The README's code blocks, compiled and run as doctests so they cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The MLPerf Tiny models directory (`SMALL_MODELS`, else `../shared/models`
/// beside the repository), or `None` with a skip message when it holds no
/// models; under `CI` their absence is a failure.
pub fn models_dir() -> Option<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = small_examples::golden::models_dir(&root);
    if dir.join("pretrainedResnet.tflite").exists() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "CI is set but the MLPerf Tiny models are not in {}",
            dir.display()
        );
    }
    println!(
        "SKIPPED: no MLPerf Tiny models in {} (set SMALL_MODELS)",
        dir.display()
    );
    None
}

/// A generated program's layers and tensor dims as `model!` declares
/// them (`LAYERS`, `DIMS`), for running it on the reference layers. (A
/// `LayerInfo`'s step is `'static`, as `model!`'s constants are: the
/// lists of a concatenation's inputs are leaked, a few words per test.)
pub fn program_layers(
    p: &small_codegen::Program,
) -> (Vec<small_core::model::LayerInfo>, Vec<small_core::Dims>) {
    let infos = (p.layers.iter().zip(p.steps()))
        .map(|(l, step)| small_core::model::LayerInfo {
            name: "layer",
            spec: l.spec,
            op: l.op,
            out_op: l.out_op,
            step: small_core::plan::Step {
                concat: Box::leak(step.concat.to_vec().into_boxed_slice()),
                ..step
            },
            macs: l.macs,
        })
        .collect();
    (infos, p.dims())
}

/// `N` loaded from `file` for `arch` and run on the NHWC input `x`: its
/// output, NHWC.
pub fn run_program<N: small_core::model::Model>(
    file: &small_core::load::tflite::Model,
    arch: small_core::Arch,
    x: &[N::Elem],
) -> Vec<N::Elem>
where
    N::Elem: Default + Copy,
{
    let net = N::load(file, arch).unwrap();
    let mut arena = vec![N::Elem::default(); N::ARENA];
    N::input(&mut arena).unwrap().fill_from_nhwc(x).unwrap();
    net.forward(&mut arena).unwrap();
    N::output(&arena).unwrap().to_nhwc()
}
