//! What the Cortex-M4 firmware (`examples/mcu`) runs, in one place for
//! the two programs that must agree on it: the firmware's build script,
//! which packs the weights and the input into its flash, and
//! `tests/firmware.rs`, which runs the same case on the host and checks
//! the firmware's output against it.
//!
//! A case is trained weights and LiteRT's golden input when the MLPerf
//! Tiny models directory has the network's file, else the built-in
//! weights and input of the host tests.

use crate::golden::{models_dir, read_f32, read_i8};
use crate::models::{Int8Network, Network};
use small_core::LayerSpec;
use small_core::load::tflite;
use small_core::load::{Generated, LayerRef, LayerWeights, LoadError, WeightSource};
use std::path::{Path, PathBuf};

/// Seed of the built-in weights (as in `tests/models.rs`).
pub const WEIGHT_SEED: u32 = 3;
/// Seed of the built-in input.
pub const INPUT_SEED: u32 = 11;

/// Where a case's weights come from.
pub enum Weights {
    /// A trained `.tflite` file.
    Trained(Box<tflite::Model>),
    /// Deterministic built-in weights.
    Generated(Generated),
}

impl WeightSource for Weights {
    fn layer(&self, layer: LayerRef, spec: &LayerSpec) -> Result<LayerWeights, LoadError> {
        match self {
            Weights::Trained(m) => m.layer(layer, spec),
            Weights::Generated(g) => g.layer(layer, spec),
        }
    }
}

/// One inference the firmware runs.
pub struct Case {
    /// Weights of every layer.
    pub weights: Weights,
    /// The NHWC input.
    pub input: Vec<f32>,
    /// LiteRT's output for this input (trained weights only).
    pub golden: Option<Vec<f32>>,
    /// What it is, for people: weights and input.
    pub what: String,
    /// The files it was read from (none for built-in weights).
    pub files: Vec<PathBuf>,
}

/// Golden input of each trained network: KWS's is the real sample
/// (`kws_sample_input_int8.bin`), the others the first.
fn golden_input(name: &str) -> usize {
    if name == "ds-cnn" { 8 } else { 0 }
}

/// The golden input of network `name` for the trained `file` in `dir`:
/// its number, and its input and output files (f32 or int8 alike).
fn golden_files(dir: &Path, file: &str, name: &str) -> (usize, PathBuf, PathBuf) {
    let n = golden_input(name);
    let golden = dir.join(format!("{}.golden", file.trim_end_matches(".tflite")));
    (
        n,
        golden.join(format!("{n}.input.bin")),
        golden.join(format!("{n}.output.bin")),
    )
}

/// The case of network `N`, with the models directory looked up from the
/// repository root `repo`.
pub fn case<N: Network>(repo: &Path) -> Result<Case, String> {
    let dir = models_dir(repo);
    let Some(file) = N::FILE.filter(|f| dir.join(f).exists()) else {
        return Ok(Case {
            weights: Weights::Generated(Generated { seed: WEIGHT_SEED }),
            input: Generated::values(INPUT_SEED, N::DIMS[0].elements(), 1.0),
            golden: None,
            what: format!(
                "built-in weights (seed {WEIGHT_SEED}), built-in input (seed {INPUT_SEED})"
            ),
            files: Vec::new(),
        });
    };
    let path = dir.join(file);
    let model = tflite::Model::from_file(&path).map_err(|e| e.to_string())?; // names the path
    let (n, input, output) = golden_files(&dir, file, N::NAME);
    Ok(Case {
        weights: Weights::Trained(Box::new(model)),
        input: read_f32(&input)?,
        golden: Some(read_f32(&output)?),
        what: format!("trained weights ({file}), golden input {n}"),
        files: vec![path, input, output],
    })
}

/// Little-endian bytes of `v`: how the build script embeds `f32`s.
pub fn le_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// One int8 inference the firmware runs: always the trained file (an
/// int8 network's weights carry their quantization, which built-in
/// weights would have to invent) and LiteRT's golden input and output.
pub struct CaseI8 {
    /// The trained int8 model.
    pub model: Box<tflite::Model>,
    /// The NHWC int8 input.
    pub input: Vec<i8>,
    /// LiteRT's int8 output for it (NHWC).
    pub golden: Vec<i8>,
    /// What it is, for people: weights and input.
    pub what: String,
    /// The files it was read from.
    pub files: Vec<PathBuf>,
}

/// The int8 case of network `N` (same golden input as [`case`]), with the
/// models directory looked up from the repository root `repo`; an error
/// naming the directory when its file is not there.
pub fn case_i8<N: Int8Network>(repo: &Path) -> Result<CaseI8, String> {
    let dir = models_dir(repo);
    let path = dir.join(N::FILE);
    if !path.exists() {
        return Err(format!(
            "the int8 {} image needs the trained {} in the MLPerf Tiny models directory {} \
             (set SMALL_MODELS)",
            N::NAME,
            N::FILE,
            dir.display()
        ));
    }
    let model = tflite::Model::from_file(&path).map_err(|e| e.to_string())?;
    let (n, input, output) = golden_files(&dir, N::FILE, N::NAME);
    Ok(CaseI8 {
        model: Box::new(model),
        input: read_i8(&input)?,
        golden: read_i8(&output)?,
        what: format!("trained weights ({}), golden input {n}", N::FILE),
        files: vec![path, input, output],
    })
}

/// The bytes of `v`: how the build script embeds `i8`s.
pub fn i8_bytes(v: &[i8]) -> Vec<u8> {
    v.iter().map(|&x| x as u8).collect()
}

/// The int8 graphs of `tests/data/tflite` the firmware's int8 sweep image
/// (`--features sweep,int8`) runs, by file stem: every int8 operator
/// (`every_op_int8`), PADs, LOGISTIC, MEAN, and the random graphs, whose
/// shapes (1-8 input channels, odd widths, strides, SAME and VALID,
/// residual ADDs, concatenations) reach every kernel's edge tiles. Each
/// runs on its first saved input, and `tests/firmware.rs` requires its
/// output to equal the host's int8 reference (which
/// `tests/tflite_graphs.rs` holds to LiteRT's) byte for byte.
pub const INT8_GRAPHS: &[&str] = &[
    "every_op_int8",
    "pad_int8",
    "logistic_mid_int8",
    "logistic_head_int8",
    "mean_int8",
    "mean_keepdims_int8",
    "random_01",
    "random_03",
    "random_05",
    "random_07",
    "random_09",
    "random_11",
    "random_13",
    "random_15",
    "random_17",
    "random_19",
    "random_21",
    "random_23",
];
