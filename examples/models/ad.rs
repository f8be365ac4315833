//! MLPerf Tiny anomaly detection: the ToyCar autoencoder,
//! `ad01_fp32.tflite`: 640 -> 128 x4 -> 8 -> 128 x4 -> 640, fully connected
//! with ReLU on all but the last. A fully connected layer is a 1x1
//! convolution on a 1x1 image.

/// The AD autoencoder with the element type `$dt` (none: `f32`).
macro_rules! autoencoder {
    ($(#[$meta:meta])* $net:ident $(, $dt:ident)?) => {
        use small_core::{layer, model};
        #[layer(fh = 1, fw = 1, fc = 640, k = 128, activation = relu $(, dtype = $dt)?)]
        pub struct In;
        #[layer(fh = 1, fw = 1, fc = 128, k = 128, activation = relu $(, dtype = $dt)?)]
        pub struct Hidden;
        #[layer(fh = 1, fw = 1, fc = 128, k = 8, activation = relu $(, dtype = $dt)?)]
        pub struct Bottleneck;
        #[layer(fh = 1, fw = 1, fc = 8, k = 128, activation = relu $(, dtype = $dt)?)]
        pub struct Expand;
        #[layer(fh = 1, fw = 1, fc = 128, k = 640 $(, dtype = $dt)?)]
        pub struct Out;

        model! {
            $(#[$meta])*
            pub struct $net {
                input frames: [1, 1, 640] $($dt)?;
                fc1: In @ 0 (frames) -> t21;
                fc2: Hidden @ 1 (t21) -> t22;
                fc3: Hidden @ 2 (t22) -> t23;
                fc4: Hidden @ 3 (t23) -> t24;
                fc5: Bottleneck @ 4 (t24) -> t25;
                fc6: Expand @ 5 (t25) -> t26;
                fc7: Hidden @ 6 (t26) -> t27;
                fc8: Hidden @ 7 (t27) -> t28;
                fc9: Hidden @ 8 (t28) -> t29;
                fc10: Out @ 9 (t29) -> t30;
            }
        }
    };
}

autoencoder!(
    /// The AD autoencoder. Output: the 640-value reconstruction.
    Autoencoder
);

/// The int8 AD autoencoder (`ad01_int8.tflite`): the same declaration
/// with `dtype = i8`.
pub mod int8 {
    autoencoder!(
        /// The AD autoencoder, int8. Output: the 640-value reconstruction, int8.
        Autoencoder,
        i8
    );
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
    let mut arena = vec![0.0; Autoencoder::ARENA];
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
