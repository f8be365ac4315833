//! The four MLPerf Tiny int8 networks end to end, bit for bit, on every
//! arch this CPU runs (and NEON under QEMU).
//!
//! - Built-in (generated) int8 weights: every layer's output, chained
//!   through the arena, equals the int8 reference operators'
//!   (`small_core::model::reference_run_i8`).
//! - Trained weights (`../shared/models`, or `SMALL_MODELS`): the wiring
//!   is checked against the file; every layer, fed LiteRT's own input
//!   tensors of input 0 (`0.tensors`), equals LiteRT's output tensor; then
//!   every golden input end to end equals LiteRT's output (through the
//!   file's int8 SOFTMAX where it ends in one). A failure names the
//!   network, the arch, the first differing layer and element.

use small_core::load::tflite::verify_wiring;
use small_core::load::{Generated, tflite};
use small_core::model::NONE;
use small_core::reference::int8;
use small_examples::golden::{int8_softmax, read_i8};
use small_examples::models::{Int8Network, ad, dscnn, resnet8, vww};
use std::path::Path;

/// The first differing element of a layer's output, described.
fn compare(what: &str, got: &[i8], want: &[i8], channels: usize) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} elements, expected {}",
            got.len(),
            want.len()
        ));
    }
    match (0..want.len()).find(|&j| got[j] != want[j]) {
        None => Ok(()),
        Some(j) => Err(format!(
            "{what}: element {j} (pixel {}, channel {}) is {}, expected {}",
            j / channels.max(1),
            j % channels.max(1),
            got[j],
            want[j]
        )),
    }
}

fn builtin<N: Int8Network>() {
    let source = Generated { seed: 5 };
    let input: Vec<i8> = Generated::values_i8(13, N::DIMS[0].elements());
    let values = small_core::model::reference_run_i8(&source, N::LAYERS, N::DIMS, &input).unwrap();
    for arch in small_core::arch::available() {
        let net = N::load(&source, arch).unwrap();
        let mut arena = vec![0x55u8 as i8; N::ARENA];
        N::input(&mut arena)
            .unwrap()
            .fill_from_nhwc(&input)
            .unwrap();
        for (i, l) in N::LAYERS.iter().enumerate() {
            net.forward_layer(i, &mut arena).unwrap();
            let got = N::tensor(&arena, l.step.y).unwrap().to_nhwc();
            let what = format!("{} on {}: layer {i} `{}`", N::NAME, arch.name(), l.name);
            compare(&what, &got, &values[l.step.y], N::DIMS[l.step.y].c)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        println!(
            "{}: built-in int8 weights bit-exact on {}",
            N::NAME,
            arch.name()
        );
    }
}

/// Golden tensor `index` of input 0 (`0.tensors/<index>_<name>.bin`).
fn golden_tensor(golden: &Path, index: usize) -> Vec<i8> {
    let dir = golden.join("0.tensors");
    let prefix = format!("{index}_");
    let entry = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .unwrap_or_else(|| panic!("no tensor {index} in {}", dir.display()));
    read_i8(&entry.path()).unwrap()
}

fn golden<N: Int8Network>() {
    let Some(dir) = small_tests::models_dir() else {
        return;
    };
    let model = tflite::Model::from_file(dir.join(N::FILE)).unwrap();
    let tensor = verify_wiring::<N>(&model).unwrap_or_else(|e| panic!("{}: {e}", N::NAME));
    let golden = dir.join(format!("{}.golden", N::FILE.trim_end_matches(".tflite")));
    let softmax = int8_softmax(&model).unwrap();
    let inputs: Vec<usize> = (0..)
        .take_while(|i| golden.join(format!("{i}.input.bin")).exists())
        .filter(|&i| !cfg!(target_arch = "aarch64") || i < 2)
        .collect();
    assert!(
        !inputs.is_empty(),
        "no golden inputs in {}",
        golden.display()
    );
    for arch in small_core::arch::available() {
        let net = N::load(&model, arch).unwrap();
        let mut arena = vec![0i8; N::ARENA];
        // Layer by layer, each fed LiteRT's own input tensors.
        for (i, l) in N::LAYERS.iter().enumerate() {
            let x = golden_tensor(&golden, tensor[l.step.x]);
            N::tensor_mut(&mut arena, l.step.x)
                .unwrap()
                .fill_from_nhwc(&x)
                .unwrap();
            if l.step.skip != NONE {
                let s = golden_tensor(&golden, tensor[l.step.skip]);
                N::tensor_mut(&mut arena, l.step.skip)
                    .unwrap()
                    .fill_from_nhwc(&s)
                    .unwrap();
            }
            net.forward_layer(i, &mut arena).unwrap();
            let got = N::tensor(&arena, l.step.y).unwrap().to_nhwc();
            let want = golden_tensor(&golden, tensor[l.step.y]);
            let what = format!(
                "{} on {}: layer {i} `{}` (op {}, t{})",
                N::NAME,
                arch.name(),
                l.name,
                l.op,
                tensor[l.step.y]
            );
            compare(&what, &got, &want, N::DIMS[l.step.y].c).unwrap_or_else(|e| panic!("{e}"));
        }
        // Every golden input end to end.
        let mut out = vec![0i8; N::DIMS[N::OUTPUT].c];
        for &n in &inputs {
            let input = read_i8(&golden.join(format!("{n}.input.bin"))).unwrap();
            let want = read_i8(&golden.join(format!("{n}.output.bin"))).unwrap();
            net.infer(&mut arena, &input, &mut out).unwrap();
            let got = match &softmax {
                Some(p) => {
                    let mut y = vec![0i8; out.len()];
                    int8::softmax(&out, out.len(), p, &mut y).unwrap();
                    y
                }
                None => out.clone(),
            };
            let what = format!("{} on {}: golden input {n}", N::NAME, arch.name());
            compare(&what, &got, &want, want.len()).unwrap_or_else(|e| panic!("{e}"));
        }
        println!(
            "{}: every layer of input 0 and {} golden inputs bit-exact on {}",
            N::NAME,
            inputs.len(),
            arch.name()
        );
    }
}

#[test]
fn resnet8_i8_builtin() {
    builtin::<resnet8::int8::Resnet8>();
}

#[test]
fn vww_i8_builtin() {
    builtin::<vww::int8::Vww>();
}

#[test]
fn dscnn_i8_builtin() {
    builtin::<dscnn::int8::DsCnn>();
}

#[test]
fn ad_i8_builtin() {
    builtin::<ad::int8::Autoencoder>();
}

#[test]
fn resnet8_i8_golden() {
    golden::<resnet8::int8::Resnet8>();
}

#[test]
fn vww_i8_golden() {
    golden::<vww::int8::Vww>();
}

#[test]
fn dscnn_i8_golden() {
    golden::<dscnn::int8::DsCnn>();
}

#[test]
fn ad_i8_golden() {
    golden::<ad::int8::Autoencoder>();
}
