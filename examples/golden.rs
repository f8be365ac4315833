//! Reading the golden data of `../shared/models` (see its README): raw
//! little-endian `f32` tensors, or raw int8 bytes, no header.

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
