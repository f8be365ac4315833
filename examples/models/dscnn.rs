//! MLPerf Tiny keyword spotting: DS-CNN (49x10 MFCC, 12 classes),
//! `kws_ref_model_float32.tflite`. Its first convolution is 10x4 with
//! stride 2 and TF SAME padding, which pads 4 rows on top and 5 below.

/// DS-CNN with the element type `$dt` (none: `f32`).
macro_rules! dscnn {
    ($(#[$meta:meta])* $net:ident $(, $dt:ident)?) => {
        use small_core::{layer, model};
        #[layer(fh = 10, fw = 4, fc = 1, k = 64, stride = 2, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Stem;
        #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 64, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Depthwise;
        #[layer(fh = 1, fw = 1, fc = 64, k = 64, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Pointwise;
        #[layer(fh = 25, fw = 5, fc = 1, k = 1, g = 64, stride = (25, 5), padding = valid, reduction = avg $(, dtype = $dt)?)]
        pub struct Pool;
        #[layer(fh = 1, fw = 1, fc = 64, k = 12 $(, dtype = $dt)?)]
        pub struct Dense;

        model! {
            $(#[$meta])*
            pub struct $net {
                input mfcc: [49, 10, 1] $($dt)?;
                stem: Stem @ 0 (mfcc) -> t22;
                dw1: Depthwise @ 1 (t22) -> t23;
                pw1: Pointwise @ 2 (t23) -> t24;
                dw2: Depthwise @ 3 (t24) -> t25;
                pw2: Pointwise @ 4 (t25) -> t26;
                dw3: Depthwise @ 5 (t26) -> t27;
                pw3: Pointwise @ 6 (t27) -> t28;
                dw4: Depthwise @ 7 (t28) -> t29;
                pw4: Pointwise @ 8 (t29) -> t30;
                pool: Pool @ 9 (t30) -> t31;
                dense: Dense @ 11 (t31) -> t33;
            }
        }
    };
}

dscnn!(
    /// DS-CNN (MLPerf Tiny KWS). Output: 12 logits.
    DsCnn
);

/// The int8 DS-CNN (`kws_ref_model.tflite`): the same declaration with
/// `dtype = i8`.
pub mod int8 {
    dscnn!(
        /// DS-CNN, int8. Output: 12 int8 logits (before SOFTMAX).
        DsCnn,
        i8
    );
}
