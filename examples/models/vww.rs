//! MLPerf Tiny visual wake words: MobileNetV1 on 96x96x3 images in
//! [0, 1], 2 classes. `mobilenet_v1!` writes the network once, with its
//! channel counts as parameters; this module is width 0.25
//! (`vww_96_float.tflite`: operator `i` of the file is line `i` of the
//! model), and [`super::vww1`] is the same network at width 1.0.

/// MobileNetV1 on the VWW input (96x96x3, 2 classes): a 3x3 stride-2 stem,
/// 13 depthwise-separable blocks (a 3x3 depthwise convolution, then a 1x1
/// pointwise one), a 3x3 average pool and a dense layer to 2 logits.
/// `$c1 .. $c6` are the channel counts of the six levels (32, 64, 128,
/// 256, 512 and 1024 times the width), `$dt` the element type (none:
/// `f32`). The layer structs are named after
/// the levels (`Pw2To3` maps level 2's channels to level 3's), so that the
/// same names serve every width: invoke it once per module.
macro_rules! mobilenet_v1 {
    ($(#[$meta:meta])* $net:ident, channels: [$c1:tt, $c2:tt, $c3:tt, $c4:tt, $c5:tt, $c6:tt] $(, $dt:ident)?) => {
        use small_core::{layer, model};

        #[layer(fh = 3, fw = 3, fc = 3, k = $c1, stride = 2, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Stem;
        #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = $c1, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Dw1;
        #[layer(fh = 1, fw = 1, fc = $c1, k = $c2, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Pw1To2;
        #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = $c2, stride = 2, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Dw2S2;
        #[layer(fh = 1, fw = 1, fc = $c2, k = $c3, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Pw2To3;
        #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = $c3, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Dw3;
        #[layer(fh = 1, fw = 1, fc = $c3, k = $c3, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Pw3To3;
        #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = $c3, stride = 2, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Dw3S2;
        #[layer(fh = 1, fw = 1, fc = $c3, k = $c4, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Pw3To4;
        #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = $c4, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Dw4;
        #[layer(fh = 1, fw = 1, fc = $c4, k = $c4, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Pw4To4;
        #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = $c4, stride = 2, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Dw4S2;
        #[layer(fh = 1, fw = 1, fc = $c4, k = $c5, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Pw4To5;
        #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = $c5, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Dw5;
        #[layer(fh = 1, fw = 1, fc = $c5, k = $c5, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Pw5To5;
        #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = $c5, stride = 2, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Dw5S2;
        #[layer(fh = 1, fw = 1, fc = $c5, k = $c6, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Pw5To6;
        #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = $c6, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Dw6;
        #[layer(fh = 1, fw = 1, fc = $c6, k = $c6, padding = same, activation = relu $(, dtype = $dt)?)]
        pub struct Pw6To6;
        #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = $c6, stride = 3, padding = valid, reduction = avg $(, dtype = $dt)?)]
        pub struct Pool;
        #[layer(fh = 1, fw = 1, fc = $c6, k = 2 $(, dtype = $dt)?)]
        pub struct Dense;

        model! {
            $(#[$meta])*
            pub struct $net {
                input image: [96, 96, 3] $($dt)?;
                stem: Stem @ 0 (image) -> t0;
                dw1: Dw1 @ 1 (t0) -> t1;
                pw1: Pw1To2 @ 2 (t1) -> t2;
                dw2: Dw2S2 @ 3 (t2) -> t3;
                pw2: Pw2To3 @ 4 (t3) -> t4;
                dw3: Dw3 @ 5 (t4) -> t5;
                pw3: Pw3To3 @ 6 (t5) -> t6;
                dw4: Dw3S2 @ 7 (t6) -> t7;
                pw4: Pw3To4 @ 8 (t7) -> t8;
                dw5: Dw4 @ 9 (t8) -> t9;
                pw5: Pw4To4 @ 10 (t9) -> t10;
                dw6: Dw4S2 @ 11 (t10) -> t11;
                pw6: Pw4To5 @ 12 (t11) -> t12;
                dw7: Dw5 @ 13 (t12) -> t13;
                pw7: Pw5To5 @ 14 (t13) -> t14;
                dw8: Dw5 @ 15 (t14) -> t15;
                pw8: Pw5To5 @ 16 (t15) -> t16;
                dw9: Dw5 @ 17 (t16) -> t17;
                pw9: Pw5To5 @ 18 (t17) -> t18;
                dw10: Dw5 @ 19 (t18) -> t19;
                pw10: Pw5To5 @ 20 (t19) -> t20;
                dw11: Dw5 @ 21 (t20) -> t21;
                pw11: Pw5To5 @ 22 (t21) -> t22;
                dw12: Dw5S2 @ 23 (t22) -> t23;
                pw12: Pw5To6 @ 24 (t23) -> t24;
                dw13: Dw6 @ 25 (t24) -> t25;
                pw13: Pw6To6 @ 26 (t25) -> t26;
                pool: Pool @ 27 (t26) -> t27;
                dense: Dense @ 29 (t27) -> t28;
            }
        }
    };
}
pub(crate) use mobilenet_v1;

mobilenet_v1!(
    /// VWW, MobileNetV1 at width 0.25. Output: 2 logits (no person, person).
    Vww,
    channels: [8, 16, 32, 64, 128, 256]
);

/// The int8 VWW network (`vww_96_int8.tflite`): the same declaration with
/// `dtype = i8`.
pub mod int8 {
    super::mobilenet_v1!(
        /// VWW, MobileNetV1 at width 0.25, int8. Output: 2 int8 logits (before SOFTMAX).
        Vww,
        channels: [8, 16, 32, 64, 128, 256],
        i8
    );
}
