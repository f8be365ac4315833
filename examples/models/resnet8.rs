//! MLPerf Tiny image classification: ResNet-8 on CIFAR-10 (32x32x3 raw
//! pixels 0..255, 10 classes), `pretrainedResnet.tflite`. Each ADD (with
//! its ReLU) is fused into the convolution before it as a residual, so the
//! un-added convolution output never exists.

/// ResNet-8 with the element type `$dt` (none: `f32`).
macro_rules! resnet8 {
    ($(#[$meta:meta])* $net:ident $(, $dt:ident)?) => {
        use small_core::{layer, model};
        #[layer(fh = 3, fw = 3, fc = 3, k = 16, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Stem;
        #[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Conv16;
        #[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same, activation = relu, residual $(, dtype = $dt)?)]
        pub struct Conv16Add;
        #[layer(fh = 3, fw = 3, fc = 16, k = 32, stride = 2, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Down32;
        #[layer(fh = 1, fw = 1, fc = 16, k = 32, stride = 2, padding = same $(, dtype = $dt)?)]
        pub struct Skip32;
        #[layer(fh = 3, fw = 3, fc = 32, k = 32, padding = same, activation = relu, residual $(, dtype = $dt)?)]
        pub struct Conv32Add;
        #[layer(fh = 3, fw = 3, fc = 32, k = 64, stride = 2, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Down64;
        #[layer(fh = 1, fw = 1, fc = 32, k = 64, stride = 2, padding = same $(, dtype = $dt)?)]
        pub struct Skip64;
        #[layer(fh = 3, fw = 3, fc = 64, k = 64, padding = same, activation = relu, residual $(, dtype = $dt)?)]
        pub struct Conv64Add;
        #[layer(fh = 8, fw = 8, fc = 1, k = 1, g = 64, stride = 8, padding = valid, reduction = avg $(, dtype = $dt)?)]
        pub struct Pool;
        #[layer(fh = 1, fw = 1, fc = 64, k = 10 $(, dtype = $dt)?)]
        pub struct Dense;

        model! {
            $(#[$meta])*
            pub struct $net {
                input image: [32, 32, 3] $($dt)?;
                stem: Stem @ 0 (image) -> t22;
                conv1: Conv16 @ 1 (t22) -> t23;
                conv2: Conv16Add @ 2 => 3 (t23, + t22) -> t25;
                down1: Down32 @ 4 (t25) -> t26;
                skip1: Skip32 @ 6 (t25) -> t28;
                conv3: Conv32Add @ 5 => 7 (t26, + t28) -> t29;
                down2: Down64 @ 8 (t29) -> t30;
                skip2: Skip64 @ 10 (t29) -> t32;
                conv4: Conv64Add @ 9 => 11 (t30, + t32) -> t33;
                pool: Pool @ 12 (t33) -> t34;
                dense: Dense @ 14 (t34) -> t36;
            }
        }
    };
}

resnet8!(
    /// ResNet-8 (MLPerf Tiny IC). Output: 10 logits (softmax in
    /// [`crate::models::Network::infer`]).
    Resnet8
);

/// The int8 ResNet-8 (`pretrainedResnet_quant.tflite`): the same
/// declaration with `dtype = i8`.
pub mod int8 {
    resnet8!(
        /// ResNet-8, int8. Output: 10 int8 logits (before SOFTMAX).
        Resnet8,
        i8
    );
}
