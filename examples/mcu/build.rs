//! Packs the weights of each network of the image (f32, or int8 with
//! the `int8` feature; the int8 sweep's test graphs) for cortex_m4 on the
//! host (small-core's `pack`, the same code the host runs) and writes
//! them, with the input, as little-endian `f32` files the firmware embeds
//! in flash; and puts `memory.x` where `cortex-m-rt`'s `link.x` finds it.

use small_core::Arch;
use small_examples::firmware::{self, i8_bytes, le_bytes};
use small_examples::models::{Int8Network, Network, ad, dscnn, resnet8, sweep, vww};
use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(here.join("memory.x"), out.join("memory.x")).expect("copy memory.x");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-env-changed=SMALL_MODELS");

    let feature = |f: &str| std::env::var_os(format!("CARGO_FEATURE_{f}")).is_some();
    let chosen: Vec<&str> = ["DSCNN", "AD", "RESNET8", "VWW", "SWEEP"]
        .into_iter()
        .filter(|f| feature(f))
        .collect();
    let repo = here.join("../..");
    let int8 = feature("INT8");
    let result = match chosen[..] {
        ["DSCNN"] if int8 => emit_i8::<dscnn::int8::DsCnn>(&repo, &out),
        ["AD"] if int8 => emit_i8::<ad::int8::Autoencoder>(&repo, &out),
        ["RESNET8"] if int8 => emit_i8::<resnet8::int8::Resnet8>(&repo, &out),
        ["VWW"] if int8 => emit_i8::<vww::int8::Vww>(&repo, &out),
        ["SWEEP"] if int8 => emit_graphs(),
        ["DSCNN"] => emit::<dscnn::DsCnn>(&repo, &out),
        ["AD"] => emit::<ad::Autoencoder>(&repo, &out),
        ["RESNET8"] => emit::<resnet8::Resnet8>(&repo, &out),
        ["VWW"] => emit::<vww::Vww>(&repo, &out),
        ["SWEEP"] => emit::<sweep::SweepConv>(&repo, &out)
            .and(emit::<sweep::SweepChannelwise>(&repo, &out))
            .and(emit::<sweep::SweepResidual>(&repo, &out))
            .and(emit::<sweep::SweepGroupFc>(&repo, &out)),
        _ => Err(format!(
            "enable exactly one image feature (dscnn, ad, resnet8, vww, sweep), not {chosen:?}; \
             e.g. --no-default-features --features ad (and int8 for the int8 network)"
        )),
    };
    if let Err(e) = result {
        panic!("small-mcu build script: {e}");
    }
}

// ANCHOR: emit
fn emit<N: Network>(repo: &Path, out: &Path) -> Result<(), String> {
    let case = firmware::case::<N>(repo)?;
    for f in &case.files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let mut packed = vec![0.0; N::packed_len(Arch::CortexM4)];
    N::pack(&case.weights, Arch::CortexM4, &mut packed).map_err(|e| e.to_string())?;
    let write = |ext: &str, bytes: &[u8]| {
        let name = format!("{}.{ext}", N::NAME);
        std::fs::write(out.join(&name), bytes).map_err(|e| format!("write {name}: {e}"))
    };
    write("weights", &le_bytes(&packed))?;
    write("input", &le_bytes(&case.input))?;
    write(
        "case",
        format!("{} on cortex_m4: {}", N::NAME, case.what).as_bytes(),
    )
}
// ANCHOR_END: emit

/// The same for the int8 network `N`: its words (rows and `i8` weight
/// tiles, packed for cortex_m4) and its `i8` input.
fn emit_i8<N: Int8Network>(repo: &Path, out: &Path) -> Result<(), String> {
    let case = firmware::case_i8::<N>(repo)?;
    for f in &case.files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let mut packed = vec![0.0; N::packed_len(Arch::CortexM4)];
    N::pack(&*case.model, Arch::CortexM4, &mut packed).map_err(|e| e.to_string())?;
    let write = |ext: &str, bytes: &[u8]| {
        let name = format!("{}.{ext}", N::NAME);
        std::fs::write(out.join(&name), bytes).map_err(|e| format!("write {name}: {e}"))
    };
    write("weights", &le_bytes(&packed))?;
    write("input", &i8_bytes(&case.input))?;
    write(
        "case",
        format!("{} int8 on cortex_m4: {}", N::NAME, case.what).as_bytes(),
    )
}

/// The int8 sweep: each graph of `firmware::INT8_GRAPHS` packed for
/// cortex_m4 (`small_core::build::pack_tflite`, which `packed_weights!`
/// embeds); the programs and inputs come from the files themselves.
fn emit_graphs() -> Result<(), String> {
    for stem in firmware::INT8_GRAPHS {
        small_core::build::pack_tflite(
            &format!("../../tests/data/tflite/{stem}.tflite"),
            Arch::CortexM4,
        )?;
    }
    Ok(())
}
