//! Helpers shared by the integration tests: a seeded generator, random
//! tensors, the reference oracle for a generated layer's spec, and the
//! tolerance derived from the reduction length.

pub use small_core::reference::{layer as reference_forward, tolerances};

/// Small seeded generator (PCG-style LCG): reproducible, no dependency.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.next_u32() as usize % (hi - lo + 1)
    }
    /// Uniform in `[-1, 1)`.
    pub fn unit(&mut self) -> f32 {
        self.next_u32() as f32 / (1u64 << 31) as f32 - 1.0
    }
    /// `n` values uniform in `[-1, 1)`.
    pub fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.unit()).collect()
    }
}

/// Index and values of the first element outside its tolerance.
pub fn first_mismatch(got: &[f32], want: &[f32], tol: &[f32]) -> Option<(usize, f32, f32, f32)> {
    (0..want.len())
        .find(|&i| {
            // NaN on either side is a mismatch.
            let within = matches!(
                (got[i] - want[i]).abs().partial_cmp(&tol[i]),
                Some(core::cmp::Ordering::Less | core::cmp::Ordering::Equal)
            );
            !within
        })
        .map(|i| (i, got[i], want[i], tol[i]))
}

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
