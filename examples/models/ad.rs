//! MLPerf Tiny anomaly detection: the ToyCar autoencoder,
//! `ad01_fp32.tflite`: 640 -> 128 x4 -> 8 -> 128 x4 -> 640, fully connected
//! with ReLU on all but the last. A fully connected layer is a 1x1
//! convolution on a 1x1 image.

use small_core::{layer, model};

#[layer(fh = 1, fw = 1, fc = 640, k = 128, activation = relu)]
pub struct In;
#[layer(fh = 1, fw = 1, fc = 128, k = 128, activation = relu)]
pub struct Hidden;
#[layer(fh = 1, fw = 1, fc = 128, k = 8, activation = relu)]
pub struct Bottleneck;
#[layer(fh = 1, fw = 1, fc = 8, k = 128, activation = relu)]
pub struct Expand;
#[layer(fh = 1, fw = 1, fc = 128, k = 640)]
pub struct Out;

model! {
    /// The AD autoencoder. Output: the 640-value reconstruction.
    pub struct Autoencoder {
        input frames: [1, 1, 640];
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
