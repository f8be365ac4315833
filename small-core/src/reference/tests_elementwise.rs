//! Hand-worked tests of the per-element and per-channel layers.

use super::*;
use crate::Activation;

#[test]
fn relu_and_relu6() {
    // Boundaries exactly at 0 and 6, negatives, and large magnitudes.
    let input = [-2.0, -0.0, 0.0, 0.5, 6.0, 6.5, 1e30, -1e30, 5.999];
    let mut d = input;
    activation(&mut d, Activation::Relu);
    assert_eq!(d, [0.0, 0.0, 0.0, 0.5, 6.0, 6.5, 1e30, 0.0, 5.999]);
    let mut d = input;
    activation(&mut d, Activation::Relu6);
    assert_eq!(d, [0.0, 0.0, 0.0, 0.5, 6.0, 6.0, 6.0, 0.0, 5.999]);
    let mut d = input;
    activation(&mut d, Activation::None);
    assert_eq!(d, input);
    let mut empty: [f32; 0] = [];
    activation(&mut empty, Activation::Relu);
}

#[test]
fn batch_norm_hand_values() {
    // c = 2, eps = 1: ch0 mean 1, var 3 -> sqrt(3+1) = 2, gamma 2, beta 0.5;
    //                 ch1 mean 2, var 8 -> sqrt(8+1) = 3, gamma -1.5, beta 10.
    // pixel [1, 2]:  2*(1-1)/2 + 0.5 = 0.5;   -1.5*(2-2)/3 + 10 = 10
    // pixel [3, 4]:  2*(3-1)/2 + 0.5 = 2.5;   -1.5*(4-2)/3 + 10 = -3/3 + 10 = 9
    // pixel [-1, 8]: 2*(-2)/2 + 0.5 = -1.5;   -1.5*(8-2)/3 + 10 = -9/3 + 10 = 7
    let mut d = [1.0, 2.0, 3.0, 4.0, -1.0, 8.0];
    batch_norm(
        &mut d,
        2,
        &[1.0, 2.0],
        &[3.0, 8.0],
        &[2.0, -1.5],
        &[0.5, 10.0],
        1.0,
    )
    .unwrap();
    assert_eq!(d, [0.5, 10.0, 2.5, 9.0, -1.5, 7.0]);

    // A typical small eps, var 0: the formula evaluated with std's sqrt in the same
    // order; the private sqrt is correctly rounded like std's, so the bits agree.
    let (x, mean, gamma, beta, eps) = (0.7f32, 0.2f32, 1.3f32, -0.1f32, 1e-3f32);
    let mut d = [x];
    batch_norm(&mut d, 1, &[mean], &[0.0], &[gamma], &[beta], eps).unwrap();
    assert_eq!(d[0], gamma * (x - mean) / (0.0 + eps).sqrt() + beta);
}

#[test]
fn bias_add_and_add() {
    // 2 pixels of 3 channels + [10, 20, 30].
    let mut d = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    bias_add(&mut d, &[10.0, 20.0, 30.0]).unwrap();
    assert_eq!(d, [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]);

    let mut out = [0.0; 3];
    add(&[1.0, 2.0, 3.0], &[0.5, -2.0, 4.0], &mut out).unwrap();
    assert_eq!(out, [1.5, 0.0, 7.0]);
    add(&[], &[], &mut []).unwrap();
}

#[test]
fn upsample_nearest_hand_values() {
    // 2x2x1 [1 2 / 3 4] by 2x2 -> every pixel becomes a 2x2 block.
    let mut out = [0.0; 16];
    let s = upsample_nearest(
        &[1.0, 2.0, 3.0, 4.0],
        Shape { h: 2, w: 2, c: 1 },
        2,
        2,
        &mut out,
    )
    .unwrap();
    assert_eq!(s, Shape { h: 4, w: 4, c: 1 });
    #[rustfmt::skip]
    let want = [
        1.0, 1.0, 2.0, 2.0,
        1.0, 1.0, 2.0, 2.0,
        3.0, 3.0, 4.0, 4.0,
        3.0, 3.0, 4.0, 4.0,
    ];
    assert_eq!(out, want);

    // 1x2 pixels of 2 channels [1,2] [3,4], by 1 (rows) x 3 (columns):
    // each pixel is repeated 3 times along the row, channels kept together.
    let mut out = [0.0; 12];
    let s = upsample_nearest(
        &[1.0, 2.0, 3.0, 4.0],
        Shape { h: 1, w: 2, c: 2 },
        1,
        3,
        &mut out,
    )
    .unwrap();
    assert_eq!(s, Shape { h: 1, w: 6, c: 2 });
    assert_eq!(
        out,
        [1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 3.0, 4.0, 3.0, 4.0, 3.0, 4.0]
    );

    // 2x1x1 [5 / 6] by 3 rows x 1: [5, 5, 5, 6, 6, 6].
    let mut out = [0.0; 6];
    let s = upsample_nearest(&[5.0, 6.0], Shape { h: 2, w: 1, c: 1 }, 3, 1, &mut out).unwrap();
    assert_eq!(s, Shape { h: 6, w: 1, c: 1 });
    assert_eq!(out, [5.0, 5.0, 5.0, 6.0, 6.0, 6.0]);
}

#[test]
fn softmax_values() {
    // [0, ln 2, ln 3] -> e^x = [1, 2, 3] / 6. ln 2 and ln 3 are rounded to f32
    // (relative error <= 2^-24 each), exp adds <= 1 ulp, the sum and division
    // <= 1 ulp each: a relative tolerance of 1e-6 (~8 ulp) is ample.
    let mut out = [0.0; 3];
    softmax(&[0.0, core::f32::consts::LN_2, 3.0f32.ln()], &mut out).unwrap();
    for (got, want) in out.iter().zip([1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0]) {
        assert!((got - want).abs() <= 1e-6 * want, "{out:?}");
    }

    // Large equal inputs: exp(1000 - 1000) = 1 exactly, 1 / 2 = 0.5 exactly; no overflow.
    let mut out = [0.0; 2];
    softmax(&[1000.0, 1000.0], &mut out).unwrap();
    assert_eq!(out, [0.5, 0.5]);
    // Huge spread: exp(-2000) = 0 and exp(0) = 1, so exactly [0, 1].
    softmax(&[-1000.0, 1000.0], &mut out).unwrap();
    assert_eq!(out, [0.0, 1.0]);
    // Shift invariance: [1000, 1000 + ln 3] gives [1/4, 3/4] up to the f32 rounding of
    // 1000 + ln 3 (ulp of 1000 is 2^-14 ~ 6e-5, so x differs from ln 3 by <= 3.1e-5).
    softmax(&[1000.0, 1000.0 + 3.0f32.ln()], &mut out).unwrap();
    assert!(
        (out[0] - 0.25).abs() < 1e-4 && (out[1] - 0.75).abs() < 1e-4,
        "{out:?}"
    );

    // One element: exp(0) / exp(0) = 1.
    let mut one = [0.0];
    softmax(&[-3.5], &mut one).unwrap();
    assert_eq!(one, [1.0]);
    softmax(&[], &mut []).unwrap();
}

#[test]
fn elementwise_errors() {
    let len = |what, expected, actual| {
        Err(Error::BufferLength {
            what,
            expected,
            actual,
        })
    };
    let unsupported = |what| {
        Err(Error::Unsupported {
            what,
            detail: AT_LEAST_ONE,
        })
    };
    let mut d = [0.0; 6];
    let two = [1.0, 1.0];
    // 6 elements of 4 channels: expected the whole pixels that fit, 4.
    assert_eq!(
        batch_norm(&mut d, 4, &[0.0; 4], &[1.0; 4], &[1.0; 4], &[0.0; 4], 0.0),
        len("data", 4, 6)
    );
    assert_eq!(
        batch_norm(&mut d, 0, &[], &[], &[], &[], 0.0),
        unsupported("channels")
    );
    assert_eq!(
        batch_norm(&mut d, 2, &[0.0; 3], &two, &two, &two, 0.0),
        len("mean", 2, 3)
    );
    assert_eq!(
        batch_norm(&mut d, 2, &two, &[0.0; 1], &two, &two, 0.0),
        len("var", 2, 1)
    );
    assert_eq!(
        batch_norm(&mut d, 2, &two, &two, &[], &two, 0.0),
        len("gamma", 2, 0)
    );
    assert_eq!(
        batch_norm(&mut d, 2, &two, &two, &two, &[0.0; 4], 0.0),
        len("beta", 2, 4)
    );
    assert_eq!(d, [0.0; 6], "failed calls write nothing");

    assert_eq!(bias_add(&mut d, &[1.0; 4]), len("data", 4, 6));
    assert_eq!(bias_add(&mut d, &[]), unsupported("channels"));
    assert_eq!(d, [0.0; 6]);

    let mut out = [0.0; 3];
    assert_eq!(add(&[1.0; 3], &[1.0; 2], &mut out), len("b", 3, 2));
    assert_eq!(
        add(&[1.0; 3], &[1.0; 3], &mut out[..2]),
        len("output", 3, 2)
    );
    assert_eq!(softmax(&[1.0; 3], &mut out[..2]), len("output", 3, 2));

    let mut out = [0.0; 16];
    let s = Shape { h: 2, w: 2, c: 1 };
    let x = [1.0; 4];
    let up =
        |x: &[f32], s, sh, sw, out: &mut [f32]| upsample_nearest(x, s, sh, sw, out).map(|_| ());
    assert_eq!(
        up(&x, s, 0, 2, &mut out),
        unsupported("upsampling factor (height)")
    );
    assert_eq!(
        up(&x, s, 2, 0, &mut out),
        unsupported("upsampling factor (width)")
    );
    assert_eq!(
        up(&x, Shape { h: 2, w: 2, c: 0 }, 2, 2, &mut out),
        unsupported("channels")
    );
    assert_eq!(up(&x[..3], s, 2, 2, &mut out), len("input", 4, 3));
    assert_eq!(up(&x, s, 2, 2, &mut out[..15]), len("output", 16, 15));
    assert_eq!(
        up(&x, Shape { h: 0, w: 2, c: 1 }, 2, 2, &mut out),
        Err(Error::InputTooSmall {
            what: "height",
            minimum: 1,
            actual: 0
        })
    );
}
