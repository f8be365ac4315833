//! Hand-worked tests of the int8 reference operators. Every expected
//! value is worked out in the comment next to it.

use super::*;
use crate::Activation;
use crate::Padding::{Same, Valid};
use crate::reference::{Conv, Shape, Window};
use alloc::vec;
use alloc::vec::Vec;

/// A Requant with `rescale`, zero points `zp_in`, `zp_out`, no clamp.
fn requant(zp_in: i32, rescale: &[Rescale], zp_out: i32) -> Requant<'_> {
    Requant {
        input_zero_point: zp_in,
        rescale,
        output_zero_point: zp_out,
        min: -128,
        max: 127,
    }
}

/// `m * 2^(shift - 31)`, double rounding: `Multiplier::from_real(real)`.
fn double(real: f64) -> Rescale {
    Rescale::DoubleRounding(Multiplier::from_real(real))
}

#[test]
fn conv2d_per_channel_zero_points_and_clamp() {
    // 1x2 image, 2 channels, zero point 3: real values x - 3.
    let input = [5i8, 4, 3, 1]; // pixels (2, 1), (0, -2)
    let shape = Shape { h: 1, w: 2, c: 2 };
    // 1x1 conv, 2 -> 2 channels: o0 = 2 a + 1 b, o1 = -1 a + 3 b.
    let weights = [2i8, 1, -1, 3];
    let bias = [1i32, -2];
    // o0 rescaled by 0.5, o1 by 0.25 (double rounding); output zp -10.
    let rescale = [double(0.5), double(0.25)];
    let q = Requant {
        min: -12,
        ..requant(3, &rescale, -10)
    };
    let conv = Conv::new(Window::new(1, 1, 1, 1, Valid), 2, 2, 1);
    let mut out = [0i8; 4];
    let s = conv2d(&input, shape, &weights, Some(&bias), conv, &q, &mut out).unwrap();
    assert_eq!(s, Shape { h: 1, w: 2, c: 2 });
    // Pixel 0 (2, 1): o0 = 4 + 1 + 1 = 6 -> 3 -> -7; o1 = -2 + 3 - 2 = -1
    //   -> SRDHM(-1, 0.5) = -0.5 -> 0 (ties up), then /2 -> 0 -> -10.
    // Pixel 1 (0, -2): o0 = -2 + 1 = -1 -> -0.5: SRDHM rounds ties up,
    //   the shift is 0 -> 0 -> -10; o1 = -6 - 2 = -8 -> -2 -> -12.
    assert_eq!(out, [-7, -10, -10, -12]);
    // The clamp: min -11 turns -12 into -11.
    let q = Requant { min: -11, ..q };
    conv2d(&input, shape, &weights, Some(&bias), conv, &q, &mut out).unwrap();
    assert_eq!(out, [-7, -10, -10, -11]);
}

#[test]
fn conv2d_double_rounding_and_one_rescale_for_all() {
    // One 1x1x1 pixel of real value 5 (zp 0), weight 1: acc = 5.
    let conv = Conv::new(Window::new(1, 1, 1, 1, Valid), 1, 1, 1);
    let mut out = [0i8];
    let quarter = [Rescale::conv(0.5, 0.5, 1.0)]; // 0.25
    let q = requant(0, &quarter, 0);
    conv2d(
        &[5],
        Shape { h: 1, w: 1, c: 1 },
        &[1],
        None,
        conv,
        &q,
        &mut out,
    )
    .unwrap();
    // 1.25 rounded twice: SRDHM(5, 0.5) = 2.5 -> 3, then 3 / 2 = 1.5 -> 2.
    assert_eq!(out, [2]);
    let single = [Rescale::SingleRounding(Multiplier::from_real(0.25))];
    let q = requant(0, &single, 0);
    conv2d(
        &[5],
        Shape { h: 1, w: 1, c: 1 },
        &[1],
        None,
        conv,
        &q,
        &mut out,
    )
    .unwrap();
    assert_eq!(out, [1]);
}

#[test]
fn conv2d_padding_is_the_real_zero_and_groups() {
    // 3x3 SAME on a 1x1 image: only the centre tap is inside. The padding
    // is the real value 0, so it adds nothing even with zero point 7.
    let conv = Conv::new(Window::new(3, 3, 1, 1, Same), 1, 1, 1);
    let mut out = [0i8];
    let half = [double(0.5)];
    let q = requant(7, &half, 0);
    conv2d(
        &[9],
        Shape { h: 1, w: 1, c: 1 },
        &[3; 9],
        None,
        conv,
        &q,
        &mut out,
    )
    .unwrap();
    assert_eq!(out, [3]); // 3 * (9 - 7) = 6 -> 3
    // Two groups of one channel, 1x1: output c reads input c only.
    let conv = Conv::new(Window::new(1, 1, 1, 1, Valid), 1, 1, 2);
    let mut out = [0i8; 2];
    let one = [double(0.5)];
    conv2d(
        &[4, 6],
        Shape { h: 1, w: 1, c: 2 },
        &[2, 3],
        None,
        conv,
        &requant(0, &one, 0),
        &mut out,
    )
    .unwrap();
    assert_eq!(out, [4, 9]); // 8 / 2, 18 / 2
}

#[test]
fn depthwise_multiplier_two() {
    // 1x2 image of 1 channel, zp -1 (real 2, 3); 1x2 filter, multiplier 2:
    // weights [1][1][2][2]: tap 0 (1, -1), tap 1 (2, 1).
    let window = Window::new(1, 2, 1, 1, Valid);
    let mut out = [0i8; 2];
    let rescale = [double(0.5), double(0.5)];
    let s = depthwise_conv2d(
        &[1, 2],
        Shape { h: 1, w: 2, c: 1 },
        &[1, -1, 2, 1],
        Some(&[4, 0]),
        window,
        2,
        &requant(-1, &rescale, 1),
        &mut out,
    )
    .unwrap();
    assert_eq!(s, Shape { h: 1, w: 1, c: 2 });
    // o0 = 2 + 6 + 4 = 12 -> 6 + 1 = 7; o1 = -2 + 3 = 1 -> 0.5: SRDHM
    // ties up -> 1, + 1 = 2.
    assert_eq!(out, [7, 2]);
}

#[test]
fn fully_connected_rounds_in_f64_away_from_zero() {
    let scale = [Rescale::Real(0.5)];
    let q = requant(1, &scale, 0);
    let mut out = [0i8; 3];
    // Inputs 2, 4 (zp 1: real 1, 3). Rows: (1, 0), (-1, 0), (1, 1).
    fully_connected(
        &[2, 4],
        &[1, 0, -1, 0, 1, 1],
        Some(&[4, 0, 0]),
        &q,
        &mut out,
    )
    .unwrap();
    // 5 * 0.5 = 2.5 -> 3; -1 * 0.5 = -0.5 -> -1; 4 * 0.5 = 2.
    assert_eq!(out, [3, -1, 2]);
    // The same sums with double rounding: 2.5 -> 3, -0.5 -> 0 (SRDHM
    // rounds ties up), 2.
    let half = [double(0.5)];
    let q = requant(1, &half, 0);
    fully_connected(
        &[2, 4],
        &[1, 0, -1, 0, 1, 1],
        Some(&[4, 0, 0]),
        &q,
        &mut out,
    )
    .unwrap();
    assert_eq!(out, [3, 0, 2]);
    // Saturation at both ends of int8, and per-output rescales.
    let scale = [Rescale::Real(100.0), Rescale::Real(-100.0)];
    fully_connected(&[3], &[1, 1], None, &requant(0, &scale, 0), &mut out[..2]).unwrap();
    assert_eq!(out[..2], [127, -128]);
}

#[test]
fn pools_round_and_clamp() {
    // 2x2 image of 1 channel: 1, 2 / -3, -6.
    let input = [1i8, 2, -3, -6];
    let shape = Shape { h: 2, w: 2, c: 1 };
    let mut out = [0i8; 4];
    // 2x2 VALID: (1 + 2 - 3 - 6) / 4 = -1.5 -> -2 (away from zero).
    avg_pool(
        &input,
        shape,
        Window::new(2, 2, 2, 2, Valid),
        (-128, 127),
        &mut out[..1],
    )
    .unwrap();
    assert_eq!(out[0], -2);
    // 1x2 stride 1 SAME: windows (1, 2), (2), (-3, -6), (-6): the padding
    // is not counted. 1.5 -> 2, 2, -4.5 -> -5, -6.
    avg_pool(
        &input,
        shape,
        Window::new(1, 2, 1, 1, Same),
        (-128, 127),
        &mut out,
    )
    .unwrap();
    assert_eq!(out, [2, 2, -5, -6]);
    // Max pool with a clamp at 1 (a fused RELU6 of some scale) and -4.
    max_pool(
        &input,
        shape,
        Window::new(1, 2, 1, 1, Same),
        (-4, 1),
        &mut out,
    )
    .unwrap();
    assert_eq!(out, [1, 1, -3, -4]);
    // All of -128: the max is -128, not the padding.
    let low = [-128i8; 4];
    max_pool(
        &low,
        shape,
        Window::new(3, 3, 1, 1, Same),
        (-128, 127),
        &mut out,
    )
    .unwrap();
    assert_eq!(out, [-128; 4]);
}

#[test]
fn add_rescales_both_inputs() {
    // Input 1: scale 1, zp 0; input 2: scale 0.25, zp 4; output: scale 1,
    // zp -3, RELU (min = -3).
    let p = AddParams::new(
        Quant::new(1.0, 0),
        Quant::new(0.25, 4),
        Quant::new(1.0, -3),
        Activation::Relu,
    );
    assert_eq!((p.min, p.max), (-3, 127));
    let mut out = [0i8; 3];
    add(&[10, -10, -1], &[8, 2, 0], &p, &mut out).unwrap();
    // 10 + 1 = 11 -> 8; -10 - 0.5 = -10.5 -> -11 -> -14, clamped to -3;
    // -1 - 1 = -2 -> -5 -> -3.
    assert_eq!(out, [8, -3, -3]);
    let p = AddParams::new(
        Quant::new(1.0, 0),
        Quant::new(0.25, 4),
        Quant::new(1.0, -3),
        Activation::None,
    );
    add(&[10, -10, -1], &[8, 2, 0], &p, &mut out).unwrap();
    assert_eq!(out, [8, -14, -5]);
}

/// The float softmax of a row of int8 values (scale `s`), scaled to int8
/// with scale 1/256 and zero point -128, rounded.
fn float_softmax(row: &[i8], s: f64) -> Vec<i32> {
    let max = row.iter().copied().max().unwrap();
    let e: Vec<f64> = row
        .iter()
        .map(|&x| f64_exp(f64::from(i32::from(x) - i32::from(max)) * s))
        .collect();
    let sum: f64 = e.iter().sum();
    e.iter()
        .map(|v| {
            ((v / sum * 256.0 - 128.0) + 0.5)
                .floor()
                .clamp(-128.0, 127.0) as i32
        })
        .collect()
}

/// `exp` for the test (small-core is `no_std`): the series, with range
/// reduction by halving.
fn f64_exp(x: f64) -> f64 {
    let mut k = 0;
    let mut r = x;
    while r.abs() > 0.5 {
        r /= 2.0;
        k += 1;
    }
    let (mut term, mut sum) = (1.0f64, 1.0f64);
    for n in 1..30 {
        term *= r / f64::from(n);
        sum += term;
    }
    for _ in 0..k {
        sum *= sum;
    }
    sum
}

#[test]
fn softmax_fixed_point() {
    let p = SoftmaxParams::new(1.0, 1.0).unwrap();
    // beta * scale * 2^26 = 2^26 = 0.5 * 2^27.
    assert_eq!((p.input_multiplier, p.input_left_shift), (1 << 30, 27));
    // floor(31 * 2^26 / 2^27) = 15.
    assert_eq!(p.diff_min, -15);
    let mut out = [0i8; 2];
    // Equal inputs: 0.5 each -> 128 - 128 = 0.
    softmax(&[5, 5], 2, &p, &mut out).unwrap();
    assert_eq!(out, [0, 0]);
    // One input: 1.0 -> 256 - 128, clamped to 127.
    softmax(&[-7], 1, &p, &mut out[..1]).unwrap();
    assert_eq!(out[0], 127);
    // A difference below diff_min: exactly -128, the other 1.0 -> 127.
    softmax(&[127, -128], 2, &p, &mut out).unwrap();
    assert_eq!(out, [127, -128]);
    // Rows of random-ish values at a few scales: within one step of the
    // correctly rounded float softmax (TFLite's fixed point is that close).
    let mut seed = 7u32;
    let mut next = || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 24) as u8 as i8
    };
    for scale in [0.02f32, 0.0787, 0.1447, 0.5] {
        let p = SoftmaxParams::new(1.0, scale).unwrap();
        let input: Vec<i8> = (0..10 * 12).map(|_| next()).collect();
        let mut out = vec![0i8; input.len()];
        softmax(&input, 12, &p, &mut out).unwrap();
        for (row, got) in input.chunks(12).zip(out.chunks(12)) {
            let want = float_softmax(row, f64::from(scale));
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (i32::from(*g) - w).abs() <= 1,
                    "{row:?}: {got:?} vs {want:?}"
                );
            }
        }
    }
}

#[test]
fn quantize_and_dequantize() {
    let q = Quant::new(0.5, -3);
    let mut out = [0i8; 6];
    // x / 0.5 rounded half away from zero, + -3, clamped.
    quantize(&[0.25, -0.25, 1.0, 1000.0, -1000.0, f32::NAN], q, &mut out).unwrap();
    assert_eq!(out, [-2, -4, -1, 127, -128, -3]);
    let mut back = [0.0f32; 3];
    dequantize(&[-3, 127, -128], q, &mut back).unwrap();
    assert_eq!(back, [0.0, 65.0, -62.5]);
}

#[test]
fn errors_name_expected_and_actual() {
    let window = Window::new(1, 1, 1, 1, Valid);
    let conv = Conv::new(window, 1, 2, 1);
    let one = [double(0.5)];
    let q = requant(0, &one, 0);
    let shape = Shape { h: 1, w: 1, c: 1 };
    let mut out = [0i8; 2];
    assert_eq!(
        conv2d(&[1, 2], shape, &[1, 1], None, conv, &q, &mut out),
        Err(Error::BufferLength {
            what: "input",
            expected: 1,
            actual: 2
        })
    );
    assert_eq!(
        conv2d(&[1], shape, &[1, 1], Some(&[0]), conv, &q, &mut out),
        Err(Error::BufferLength {
            what: "bias",
            expected: 2,
            actual: 1
        })
    );
    // Three rescales for two channels.
    let three = [double(0.5); 3];
    assert_eq!(
        conv2d(
            &[1],
            shape,
            &[1, 1],
            None,
            conv,
            &requant(0, &three, 0),
            &mut out
        ),
        Err(Error::BufferLength {
            what: "rescale",
            expected: 2,
            actual: 3
        })
    );
    let bad = requant(200, &one, 0);
    assert!(matches!(
        conv2d(&[1], shape, &[1, 1], None, conv, &bad, &mut out),
        Err(Error::Unsupported {
            what: "input zero point",
            ..
        })
    ));
    let empty = Requant {
        min: 5,
        max: 4,
        ..q
    };
    assert!(matches!(
        fully_connected(&[1], &[1, 1], None, &empty, &mut out),
        Err(Error::Unsupported {
            what: "activation range",
            ..
        })
    ));
    assert_eq!(
        depthwise_conv2d(&[1], shape, &[1], None, window, 2, &q, &mut out),
        Err(Error::BufferLength {
            what: "weights",
            expected: 2,
            actual: 1
        })
    );
    assert_eq!(
        avg_pool(&[1, 2], shape, window, (-128, 127), &mut out),
        Err(Error::BufferLength {
            what: "input",
            expected: 1,
            actual: 2
        })
    );
    let p = SoftmaxParams::new(1.0, 1.0).unwrap();
    assert_eq!(
        softmax(&[1, 2, 3], 2, &p, &mut [0; 3]),
        Err(Error::BufferLength {
            what: "input",
            expected: 2,
            actual: 3
        })
    );
    assert!(SoftmaxParams::new(1.0, 1e-9).is_err());
    assert!(SoftmaxParams::new(f32::NAN, 1.0).is_err());
    assert_eq!(
        add(
            &[1],
            &[1, 2],
            &AddParams::new(
                Quant::new(1.0, 0),
                Quant::new(1.0, 0),
                Quant::new(1.0, 0),
                Activation::None
            ),
            &mut out[..1]
        ),
        Err(Error::BufferLength {
            what: "b",
            expected: 1,
            actual: 2
        })
    );
}

#[test]
fn logistic_table_is_monotone_and_refuses_other_output_quantization() {
    let out = Quant {
        scale: 1.0 / 256.0,
        zero_point: -128,
    };
    let t = LogisticTable::new(
        Quant {
            scale: 0.05,
            zero_point: 3,
        },
        out,
    )
    .unwrap();
    // 0.5 at the input's zero point: 128 steps of 1/256, minus 128.
    assert_eq!(t.get(3), 0);
    let all: Vec<i8> = (i8::MIN..=i8::MAX).map(|q| t.get(q)).collect();
    assert!(all.windows(2).all(|w| w[0] <= w[1]), "{all:?}");
    for bad in [
        Quant {
            scale: 1.0 / 255.0,
            zero_point: -128,
        },
        Quant {
            scale: 1.0 / 256.0,
            zero_point: 0,
        },
    ] {
        let e = LogisticTable::new(
            Quant {
                scale: 0.05,
                zero_point: 3,
            },
            bad,
        )
        .unwrap_err();
        assert!(alloc::format!("{e}").contains("1/256"), "{e}");
    }
    let mut y = [0i8; 2];
    assert!(matches!(
        logistic(&[1, 2, 3], &t, &mut y),
        Err(Error::BufferLength { .. })
    ));
}
