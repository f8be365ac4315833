//! Weights packed at build time, for a target without a heap or a file
//! system (feature `build`, for build scripts): [`pack_program`] packs
//! the weights of the program `tflite_model!` generates from a `.tflite`
//! file, for any arch, into the buffer the program's `from_packed` takes;
//! [`pack_tflite`] does it in a build script and writes the buffer to
//! `OUT_DIR`, where [`packed_weights!`](crate::packed_weights) embeds it
//! as a `static` (flash on a microcontroller).
//!
//! The user crate's `build.rs` (with `small-core` as a build dependency,
//! feature `build`):
//!
//! ```ignore
//! fn main() {
//!     small_core::build::pack_tflite("model.tflite", small_core::Arch::CortexM4).unwrap();
//! }
//! ```
//!
//! and its code (`small-core` without default features):
//!
//! ```ignore
//! small_core::tflite_model!(pub Net = "model.tflite");
//! static WEIGHTS: [f32; Net::packed_len(small_core::Arch::CortexM4)] =
//!     small_core::packed_weights!(Net, CortexM4, "model.tflite");
//! let net = Net::from_packed(small_core::Arch::CortexM4, &WEIGHTS)?;
//! ```
//!
//! The layers are those of `small_codegen::Program::from_file` (the
//! mapping `tflite_model!` expands), each packed with the channel tile its
//! `#[layer]` derives for `arch` (`small_ir::blocking::derive`, the
//! model the macro runs). An `i8` layer's words hold its per-channel rows
//! and its weight tiles ([`crate::words`]).

use crate::load::tflite::Model;
use crate::load::{LayerRef, LoadError, WeightSource};
use crate::{Arch, Dtype};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use small_ir::geometry::checked_packed_len;

/// The channel tile `arch`'s `#[layer]` derives for `spec`.
fn tile(arch: Arch, spec: &crate::LayerSpec) -> usize {
    let def = arch.params();
    small_ir::blocking::derive(def.name, &def.machine, spec).tc
}

/// The weights of the program generated from `file`, packed for `arch`
/// layer after layer: what the program's `pack` writes, and its
/// `from_packed` takes. `arch` need not run here.
///
/// Errors: a file `small-codegen` cannot map → [`LoadError::Unsupported`];
/// weights that do not match their layers → the loader's error.
pub fn pack_program(file: &Model, arch: Arch) -> Result<Vec<f32>, LoadError> {
    let program =
        small_codegen::Program::from_file(file).map_err(|e| unsupported(e.to_string()))?;
    let mut out = Vec::new();
    for (l, names) in program.layers.iter().zip(program.names()) {
        // A concatenation has no weights.
        let Some(spec) = &l.spec else { continue };
        let tc = tile(arch, spec);
        let at = out.len();
        let layer = LayerRef {
            name: leak(names.field),
            op: l.op,
        };
        match program.dtype {
            Dtype::F32 => {
                out.resize(at + checked_packed_len(spec, tc)?, 0.0);
                let w = file.layer(layer, spec)?;
                crate::pack::pack(spec, tc, w.filter(), w.bias.as_deref(), &mut out[at..])?;
            }
            Dtype::I8 => {
                // An `i8` layer's words: its rows, then its tiles
                // (`small_core::words`).
                out.resize(at + crate::__rt::packed_len_i8(spec, tc), 0.0);
                let w = file.layer_i8(layer, l.out_op, spec)?;
                crate::__rt::pack_i8_words(spec, tc, arch, &w, &mut out[at..])?;
            }
        }
    }
    Ok(out)
}

/// For a build script: reads `path` (relative to the crate's
/// `Cargo.toml`), packs its program for `arch` ([`pack_program`]) and
/// writes the little-endian `f32`s to `$OUT_DIR/<file name>.<Arch>.packed`
/// (`model.tflite.CortexM4.packed`), which
/// [`packed_weights!`](crate::packed_weights) embeds; tells Cargo to rerun
/// when the file changes.
#[cfg(feature = "std")]
pub fn pack_tflite(path: &str, arch: Arch) -> Result<(), String> {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .ok_or("CARGO_MANIFEST_DIR is not set: call this from a build script")?;
    let out =
        std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set: call this from a build script")?;
    let full = std::path::Path::new(&dir).join(path);
    std::println!("cargo:rerun-if-changed={}", full.display());
    let file = Model::from_file(&full).map_err(|e| format!("{path}: {e}"))?;
    let packed = pack_program(&file, arch).map_err(|e| format!("{path}: {e}"))?;
    let bytes: Vec<u8> = packed.iter().flat_map(|v| v.to_le_bytes()).collect();
    let name = std::path::Path::new(path)
        .file_name()
        .ok_or_else(|| format!("{path}: not a file name"))?
        .to_string_lossy();
    let target = std::path::Path::new(&out).join(format!("{name}.{arch:?}.packed"));
    std::fs::write(&target, bytes).map_err(|e| format!("{}: {e}", target.display()))
}

fn unsupported(what: String) -> LoadError {
    LoadError::Unsupported { what }
}

/// `LayerRef` names are `&'static str` (a `model!`'s field names); the
/// few names of one packing run live for the build script's lifetime.
fn leak(s: String) -> &'static str {
    alloc::boxed::Box::leak(s.into_boxed_str())
}
