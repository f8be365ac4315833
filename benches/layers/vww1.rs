//! MobileNetV1 at width 1.0 on the VWW input (96x96x3, 2 classes): the
//! VWW network of `small_examples::models::vww` with 4x the channels, a
//! large workload for the bench (here, not in the examples, so that the
//! builds that never run it do not compile its kernels; its test is in
//! small-bench). No trained file
//! exists for it, so it is written by hand (it runs with generated
//! weights): `examples/models/generated/vww.rs` with every channel count
//! times four, the layers keeping the VWW file's operator numbers.

use small_core::{layer, model};

/// CONV_2D (VWW operator 0): 96x96x3 -> 48x48x32.
#[layer(fh = 3, fw = 3, fc = 3, k = 32, stride = 2, padding = same, activation = relu)]
pub struct Conv3x3S2C3To32;

/// DEPTHWISE_CONV_2D (VWW operator 1): 48x48x32 -> 48x48x32.
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 32, padding = same, activation = relu)]
pub struct Dw3x3C32;

/// CONV_2D (VWW operator 2): 48x48x32 -> 48x48x64.
#[layer(fh = 1, fw = 1, fc = 32, k = 64, padding = same, activation = relu)]
pub struct Pw32To64;

/// DEPTHWISE_CONV_2D (VWW operator 3): 48x48x64 -> 24x24x64.
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 64, stride = 2, padding = same, activation = relu)]
pub struct Dw3x3S2C64;

/// CONV_2D (VWW operator 4): 24x24x64 -> 24x24x128.
#[layer(fh = 1, fw = 1, fc = 64, k = 128, padding = same, activation = relu)]
pub struct Pw64To128;

/// DEPTHWISE_CONV_2D (VWW operator 5): 24x24x128 -> 24x24x128.
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 128, padding = same, activation = relu)]
pub struct Dw3x3C128;

/// CONV_2D (VWW operator 6): 24x24x128 -> 24x24x128.
#[layer(fh = 1, fw = 1, fc = 128, k = 128, padding = same, activation = relu)]
pub struct Pw128To128;

/// DEPTHWISE_CONV_2D (VWW operator 7): 24x24x128 -> 12x12x128.
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 128, stride = 2, padding = same, activation = relu)]
pub struct Dw3x3S2C128;

/// CONV_2D (VWW operator 8): 12x12x128 -> 12x12x256.
#[layer(fh = 1, fw = 1, fc = 128, k = 256, padding = same, activation = relu)]
pub struct Pw128To256;

/// DEPTHWISE_CONV_2D (VWW operator 9): 12x12x256 -> 12x12x256.
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 256, padding = same, activation = relu)]
pub struct Dw3x3C256;

/// CONV_2D (VWW operator 10): 12x12x256 -> 12x12x256.
#[layer(fh = 1, fw = 1, fc = 256, k = 256, padding = same, activation = relu)]
pub struct Pw256To256;

/// DEPTHWISE_CONV_2D (VWW operator 11): 12x12x256 -> 6x6x256.
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 256, stride = 2, padding = same, activation = relu)]
pub struct Dw3x3S2C256;

/// CONV_2D (VWW operator 12): 6x6x256 -> 6x6x512.
#[layer(fh = 1, fw = 1, fc = 256, k = 512, padding = same, activation = relu)]
pub struct Pw256To512;

/// DEPTHWISE_CONV_2D (VWW operator 13): 6x6x512 -> 6x6x512.
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 512, padding = same, activation = relu)]
pub struct Dw3x3C512;

/// CONV_2D (VWW operator 14): 6x6x512 -> 6x6x512.
#[layer(fh = 1, fw = 1, fc = 512, k = 512, padding = same, activation = relu)]
pub struct Pw512To512;

/// DEPTHWISE_CONV_2D (VWW operator 23): 6x6x512 -> 3x3x512.
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 512, stride = 2, padding = same, activation = relu)]
pub struct Dw3x3S2C512;

/// CONV_2D (VWW operator 24): 3x3x512 -> 3x3x1024.
#[layer(fh = 1, fw = 1, fc = 512, k = 1024, padding = same, activation = relu)]
pub struct Pw512To1024;

/// DEPTHWISE_CONV_2D (VWW operator 25): 3x3x1024 -> 3x3x1024.
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 1024, padding = same, activation = relu)]
pub struct Dw3x3C1024;

/// CONV_2D (VWW operator 26): 3x3x1024 -> 3x3x1024.
#[layer(fh = 1, fw = 1, fc = 1024, k = 1024, padding = same, activation = relu)]
pub struct Pw1024To1024;

/// AVERAGE_POOL_2D (VWW operator 27): 3x3x1024 -> 1x1x1024.
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 1024, stride = 3, reduction = avg)]
pub struct AvgPool3x3C1024;

/// FULLY_CONNECTED (VWW operator 29): 1x1x1024 -> 1x1x2.
#[layer(fh = 1, fw = 1, fc = 1024, k = 2)]
pub struct Fc1024To2;

model! {
    /// MobileNetV1 at width 1.0. Output: 2 logits (no person, person).
    pub struct Vww1 {
        input t0: [96, 96, 3];
        conv: Conv3x3S2C3To32 @ 0 (t0) -> t58;
        dw1: Dw3x3C32 @ 1 (t58) -> t59;
        pw1: Pw32To64 @ 2 (t59) -> t60;
        dw2: Dw3x3S2C64 @ 3 (t60) -> t61;
        pw2: Pw64To128 @ 4 (t61) -> t62;
        dw3: Dw3x3C128 @ 5 (t62) -> t63;
        pw3: Pw128To128 @ 6 (t63) -> t64;
        dw4: Dw3x3S2C128 @ 7 (t64) -> t65;
        pw4: Pw128To256 @ 8 (t65) -> t66;
        dw5: Dw3x3C256 @ 9 (t66) -> t67;
        pw5: Pw256To256 @ 10 (t67) -> t68;
        dw6: Dw3x3S2C256 @ 11 (t68) -> t69;
        pw6: Pw256To512 @ 12 (t69) -> t70;
        dw7: Dw3x3C512 @ 13 (t70) -> t71;
        pw7: Pw512To512 @ 14 (t71) -> t72;
        dw8: Dw3x3C512 @ 15 (t72) -> t73;
        pw8: Pw512To512 @ 16 (t73) -> t74;
        dw9: Dw3x3C512 @ 17 (t74) -> t75;
        pw9: Pw512To512 @ 18 (t75) -> t76;
        dw10: Dw3x3C512 @ 19 (t76) -> t77;
        pw10: Pw512To512 @ 20 (t77) -> t78;
        dw11: Dw3x3C512 @ 21 (t78) -> t79;
        pw11: Pw512To512 @ 22 (t79) -> t80;
        dw12: Dw3x3S2C512 @ 23 (t80) -> t81;
        pw12: Pw512To1024 @ 24 (t81) -> t82;
        dw13: Dw3x3C1024 @ 25 (t82) -> t83;
        pw13: Pw1024To1024 @ 26 (t83) -> t84;
        avgpool: AvgPool3x3C1024 @ 27 (t84) -> t85;
        fc: Fc1024To2 @ 29 (t85) -> t87;
    }
}

impl small_examples::models::Network for Vww1 {
    const NAME: &'static str = "vww_1.0";
    const FILE: Option<&'static str> = None;
    const HEAD: small_examples::models::Head = small_examples::models::Head::Softmax;
}
