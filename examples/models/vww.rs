//! MLPerf Tiny visual wake words: MobileNetV1 at width 0.25 on 96x96x3
//! images in [0, 1], 2 classes, `vww_96_float.tflite`. Operator `i` of the
//! file is line `i` below (13 depthwise-separable blocks).

use small_core::{layer, model};

#[layer(fh = 3, fw = 3, fc = 3, k = 8, stride = 2, padding = same, activation = relu)]
pub struct Stem;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 8, padding = same, activation = relu)]
pub struct Dw8;
#[layer(fh = 1, fw = 1, fc = 8, k = 16, padding = same, activation = relu)]
pub struct Pw8To16;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 16, stride = 2, padding = same, activation = relu)]
pub struct Dw16S2;
#[layer(fh = 1, fw = 1, fc = 16, k = 32, padding = same, activation = relu)]
pub struct Pw16To32;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 32, padding = same, activation = relu)]
pub struct Dw32;
#[layer(fh = 1, fw = 1, fc = 32, k = 32, padding = same, activation = relu)]
pub struct Pw32To32;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 32, stride = 2, padding = same, activation = relu)]
pub struct Dw32S2;
#[layer(fh = 1, fw = 1, fc = 32, k = 64, padding = same, activation = relu)]
pub struct Pw32To64;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 64, padding = same, activation = relu)]
pub struct Dw64;
#[layer(fh = 1, fw = 1, fc = 64, k = 64, padding = same, activation = relu)]
pub struct Pw64To64;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 64, stride = 2, padding = same, activation = relu)]
pub struct Dw64S2;
#[layer(fh = 1, fw = 1, fc = 64, k = 128, padding = same, activation = relu)]
pub struct Pw64To128;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 128, padding = same, activation = relu)]
pub struct Dw128;
#[layer(fh = 1, fw = 1, fc = 128, k = 128, padding = same, activation = relu)]
pub struct Pw128To128;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 128, stride = 2, padding = same, activation = relu)]
pub struct Dw128S2;
#[layer(fh = 1, fw = 1, fc = 128, k = 256, padding = same, activation = relu)]
pub struct Pw128To256;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 256, padding = same, activation = relu)]
pub struct Dw256;
#[layer(fh = 1, fw = 1, fc = 256, k = 256, padding = same, activation = relu)]
pub struct Pw256To256;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 256, stride = 3, padding = valid, reduction = avg)]
pub struct Pool;
#[layer(fh = 1, fw = 1, fc = 256, k = 2)]
pub struct Dense;

model! {
    /// Vww. Output: 2 logits (no person, person).
    pub struct Vww {
        input image: [96, 96, 3];
        stem: Stem @ 0 (image) -> t0;
        dw1: Dw8 @ 1 (t0) -> t1;
        pw1: Pw8To16 @ 2 (t1) -> t2;
        dw2: Dw16S2 @ 3 (t2) -> t3;
        pw2: Pw16To32 @ 4 (t3) -> t4;
        dw3: Dw32 @ 5 (t4) -> t5;
        pw3: Pw32To32 @ 6 (t5) -> t6;
        dw4: Dw32S2 @ 7 (t6) -> t7;
        pw4: Pw32To64 @ 8 (t7) -> t8;
        dw5: Dw64 @ 9 (t8) -> t9;
        pw5: Pw64To64 @ 10 (t9) -> t10;
        dw6: Dw64S2 @ 11 (t10) -> t11;
        pw6: Pw64To128 @ 12 (t11) -> t12;
        dw7: Dw128 @ 13 (t12) -> t13;
        pw7: Pw128To128 @ 14 (t13) -> t14;
        dw8: Dw128 @ 15 (t14) -> t15;
        pw8: Pw128To128 @ 16 (t15) -> t16;
        dw9: Dw128 @ 17 (t16) -> t17;
        pw9: Pw128To128 @ 18 (t17) -> t18;
        dw10: Dw128 @ 19 (t18) -> t19;
        pw10: Pw128To128 @ 20 (t19) -> t20;
        dw11: Dw128 @ 21 (t20) -> t21;
        pw11: Pw128To128 @ 22 (t21) -> t22;
        dw12: Dw128S2 @ 23 (t22) -> t23;
        pw12: Pw128To256 @ 24 (t23) -> t24;
        dw13: Dw256 @ 25 (t24) -> t25;
        pw13: Pw256To256 @ 26 (t25) -> t26;
        pool: Pool @ 27 (t26) -> t27;
        dense: Dense @ 29 (t27) -> t28;
    }
}
