//! MLPerf Tiny anomaly detection: the ToyCar autoencoder,
//! `ad01_fp32.tflite`: 640 -> 128 x4 -> 8 -> 128 x4 -> 640, fully connected
//! with ReLU on all but the last. A fully connected layer is a 1x1
//! convolution on a 1x1 image.
//!
//! The declarations are generated: `generated/ad*.rs` is what
//! `small-codegen FILE --rust Autoencoder` prints for `ad01_fp32.tflite`
//! and `ad01_int8.tflite` (`scripts/gen-networks` writes them;
//! `tests/codegen.rs` fails when they differ from the tool's output).

include!("generated/ad.rs");

/// The int8 AD autoencoder (`ad01_int8.tflite`). Output: the 640-value
/// reconstruction, int8.
pub mod int8 {
    include!("generated/ad_int8.rs");
}

#[cfg(feature = "std")]
/// The anomaly score of a clip of 128-bin log-mel frames (frame-major):
/// the mean over its windows of 5 consecutive frames (stride 1 frame) of
/// the reconstruction's mean squared error, as MLPerf Tiny scores it.
/// Returns the score and the number of windows.
pub fn anomaly_score(net: &Autoencoder, clip: &[f32]) -> Result<(f64, usize), String> {
    use crate::models::Network;
    if clip.len() < 640 || !clip.len().is_multiple_of(128) {
        return Err(format!(
            "AD clip: {} floats is not frames of 128 (at least 5)",
            clip.len()
        ));
    }
    let windows = clip.len() / 128 - 4;
    let mut arena =
        small_core::Aligned::filled(Autoencoder::ARENA, 0.0).map_err(|e| e.to_string())?;
    let mut out = vec![0.0; 640];
    let mut total = 0.0f64;
    for j in 0..windows {
        let x = &clip[j * 128..j * 128 + 640];
        net.infer(&mut arena, x, &mut out)
            .map_err(|e| e.to_string())?;
        total += x
            .iter()
            .zip(&out)
            .map(|(a, b)| ((a - b) as f64).powi(2))
            .sum::<f64>()
            / 640.0;
    }
    Ok((total / windows as f64, windows))
}
