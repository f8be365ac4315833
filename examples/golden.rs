//! Reading the golden data of `../shared/models` (see its README): raw
//! little-endian `f32` tensors, or raw int8 bytes, no header.

use small_core::load::tflite;
use small_core::reference::int8;
use std::path::{Path, PathBuf};

/// The `f32`s of a raw little-endian file; an error names the file if it
/// cannot be read or is not a whole number of `f32`s.
pub fn read_f32(path: &Path) -> Result<Vec<f32>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() % 4 != 0 {
        return Err(format!(
            "{}: {} bytes is not a whole number of f32s",
            path.display(),
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// The bytes of a raw int8 file, as `i8`s (an int8 model's golden data).
pub fn read_i8(path: &Path) -> Result<Vec<i8>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(bytes.into_iter().map(|b| b as i8).collect())
}

/// The MLPerf Tiny models directory: `SMALL_MODELS`, else `shared/models`
/// beside the repository whose root is `repo`. It may not exist.
pub fn models_dir(repo: &Path) -> PathBuf {
    std::env::var_os("SMALL_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("../shared/models"))
}

/// The parameters of the int8 SOFTMAX a file ends in, if it does: the
/// head an int8 network leaves to its caller, which LiteRT's golden
/// outputs are after.
pub fn int8_softmax(model: &tflite::Model) -> Result<Option<int8::SoftmaxParams>, String> {
    let Some(op) = model
        .operators()
        .last()
        .filter(|o| o.kind == tflite::OpKind::Softmax)
    else {
        return Ok(None);
    };
    let input = op
        .input(0)
        .and_then(|i| model.tensor(i))
        .ok_or("SOFTMAX without an input")?;
    let scale = input
        .quantization
        .as_ref()
        .and_then(|q| q.scales.first().copied())
        .ok_or("SOFTMAX input without a scale")?;
    let beta = op.options.beta.unwrap_or(1.0);
    int8::SoftmaxParams::new(beta, scale)
        .map(Some)
        .map_err(|e| e.to_string())
}
