//! MobileNetV1 at width 1.0 on the VWW input (96x96x3, 2 classes): the
//! VWW network with 4x the channels. No trained file exists for it; it runs
//! with generated weights, as a large workload for benches.

use small_core::{layer, model};

#[layer(fh = 3, fw = 3, fc = 3, k = 32, stride = 2, padding = same, activation = relu)]
pub struct Stem;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 32, padding = same, activation = relu)]
pub struct Dw32;
#[layer(fh = 1, fw = 1, fc = 32, k = 64, padding = same, activation = relu)]
pub struct Pw32To64;
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
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 256, stride = 2, padding = same, activation = relu)]
pub struct Dw256S2;
#[layer(fh = 1, fw = 1, fc = 256, k = 512, padding = same, activation = relu)]
pub struct Pw256To512;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 512, padding = same, activation = relu)]
pub struct Dw512;
#[layer(fh = 1, fw = 1, fc = 512, k = 512, padding = same, activation = relu)]
pub struct Pw512To512;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 512, stride = 2, padding = same, activation = relu)]
pub struct Dw512S2;
#[layer(fh = 1, fw = 1, fc = 512, k = 1024, padding = same, activation = relu)]
pub struct Pw512To1024;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 1024, padding = same, activation = relu)]
pub struct Dw1024;
#[layer(fh = 1, fw = 1, fc = 1024, k = 1024, padding = same, activation = relu)]
pub struct Pw1024To1024;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 1024, stride = 3, padding = valid, reduction = avg)]
pub struct Pool;
#[layer(fh = 1, fw = 1, fc = 1024, k = 2)]
pub struct Dense;

model! {
    /// Vww1. Output: 2 logits (no person, person).
    pub struct Vww1 {
        input image: [96, 96, 3];
        stem: Stem @ 0 (image) -> t0;
        dw1: Dw32 @ 1 (t0) -> t1;
        pw1: Pw32To64 @ 2 (t1) -> t2;
        dw2: Dw64S2 @ 3 (t2) -> t3;
        pw2: Pw64To128 @ 4 (t3) -> t4;
        dw3: Dw128 @ 5 (t4) -> t5;
        pw3: Pw128To128 @ 6 (t5) -> t6;
        dw4: Dw128S2 @ 7 (t6) -> t7;
        pw4: Pw128To256 @ 8 (t7) -> t8;
        dw5: Dw256 @ 9 (t8) -> t9;
        pw5: Pw256To256 @ 10 (t9) -> t10;
        dw6: Dw256S2 @ 11 (t10) -> t11;
        pw6: Pw256To512 @ 12 (t11) -> t12;
        dw7: Dw512 @ 13 (t12) -> t13;
        pw7: Pw512To512 @ 14 (t13) -> t14;
        dw8: Dw512 @ 15 (t14) -> t15;
        pw8: Pw512To512 @ 16 (t15) -> t16;
        dw9: Dw512 @ 17 (t16) -> t17;
        pw9: Pw512To512 @ 18 (t17) -> t18;
        dw10: Dw512 @ 19 (t18) -> t19;
        pw10: Pw512To512 @ 20 (t19) -> t20;
        dw11: Dw512 @ 21 (t20) -> t21;
        pw11: Pw512To512 @ 22 (t21) -> t22;
        dw12: Dw512S2 @ 23 (t22) -> t23;
        pw12: Pw512To1024 @ 24 (t23) -> t24;
        dw13: Dw1024 @ 25 (t24) -> t25;
        pw13: Pw1024To1024 @ 26 (t25) -> t26;
        pool: Pool @ 27 (t26) -> t27;
        dense: Dense @ 29 (t27) -> t28;
    }
}
