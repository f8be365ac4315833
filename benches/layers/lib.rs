//! The layers `small-bench` runs that no example declares, in a crate of
//! their own so that their kernels compile once (not again for the bench
//! library's unit tests, which check them):
//!
//! - [`c16`], [`c512`]: the SMaLL paper's layer set at 16 and 512 channels;
//! - [`vww1`]: VWW at width 1.0, the largest network case.

pub mod vww1;

/// Declares the layer set for `$c` channels in module `$m`: conv 3x3
/// C -> C SAME, conv 1x1 C -> C, depthwise 3x3 SAME, max pool 2x2/2 and
/// ReLU. Weights (and so the channel counts and filters) are compile-time;
/// the height and width are run-time values.
macro_rules! layer_set {
    ($m:ident, $c:tt) => {
        #[doc = concat!("The bench's layer set at ", stringify!($c), " channels.")]
        pub mod $m {
            use small_core::layer;
            /// Conv 3x3, SAME.
            #[layer(fh = 3, fw = 3, fc = $c, k = $c, padding = same)]
            pub struct Conv3x3;
            /// Conv 1x1.
            #[layer(fh = 1, fw = 1, fc = $c, k = $c)]
            pub struct Conv1x1;
            /// Depthwise 3x3, SAME.
            #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = $c, padding = same)]
            pub struct Dw3x3;
            /// Max pool 2x2, stride 2.
            #[layer(fh = 2, fw = 2, fc = 1, k = 1, g = $c, stride = 2, reduction = max)]
            pub struct MaxPool;
            /// ReLU (a 1x1 max with a ReLU activation).
            #[layer(fh = 1, fw = 1, fc = 1, k = 1, g = $c, reduction = max, activation = relu)]
            pub struct Relu;
        }
    };
}

layer_set!(c16, 16);
layer_set!(c512, 512);

/// Channel counts the layer set is compiled for.
pub const CHANNELS: [usize; 2] = [16, 512];
