//! Hand-worked tests of conv2d, depthwise_conv2d and fully_connected.
//!
//! Unless stated otherwise every value is a small integer (or a sum of
//! products of small integers) and exactly representable in f32, so the
//! comparisons are exact.

use super::*;
use crate::Padding::{Same, Valid};
use alloc::vec;
use alloc::vec::Vec;

/// 1.0, 2.0, ..., n as f32.
fn seq(n: usize) -> Vec<f32> {
    (1..=n).map(|v| v as f32).collect()
}

/// Runs conv2d into a fresh buffer of `out_len` elements.
fn run_conv(
    input: &[f32],
    shape: Shape,
    weights: &[f32],
    bias: Option<&[f32]>,
    conv: Conv,
    out_len: usize,
) -> (Shape, Vec<f32>) {
    let mut out = vec![f32::NAN; out_len];
    let s = conv2d(input, shape, weights, bias, conv, &mut out).unwrap();
    (s, out)
}

/// Runs depthwise_conv2d into a fresh buffer of `out_len` elements.
fn run_dw(
    input: &[f32],
    shape: Shape,
    weights: &[f32],
    bias: Option<&[f32]>,
    window: Window,
    multiplier: usize,
    out_len: usize,
) -> (Shape, Vec<f32>) {
    let mut out = vec![f32::NAN; out_len];
    let s = depthwise_conv2d(input, shape, weights, bias, window, multiplier, &mut out).unwrap();
    (s, out)
}

/// Small deterministic generator (no dependencies): values in -8..8 in
/// steps of 1/8, so products and short sums stay exact in f32.
fn lcg_values(seed: &mut u64, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((*seed >> 33) % 128) as f32 / 8.0 - 8.0
        })
        .collect()
}

/// `Err(BufferLength)` with the given fields.
fn len<T>(what: &'static str, expected: usize, actual: usize) -> Result<T, Error> {
    Err(Error::BufferLength {
        what,
        expected,
        actual,
    })
}

/// `Err(Unsupported)` for a zero size.
fn unsupported<T>(what: &'static str) -> Result<T, Error> {
    Err(Error::Unsupported {
        what,
        detail: AT_LEAST_ONE,
    })
}

#[test]
fn conv_same_stride2_odd_size_ones() {
    // 7x7 input of ones, 3x3 filter of ones, stride 2, SAME:
    // out = ceil(7/2) = 4, pad_total = (4-1)*2 + 3 - 7 = 2 -> 1 top/left, 1 bottom/right.
    // Output row oy reads padded rows 2oy..2oy+2 = input rows 2oy-1..2oy+1:
    //   oy=0: rows -1,0,1 -> 2 valid; oy=1: 1,2,3 -> 3; oy=2: 3,4,5 -> 3;
    //   oy=3: 5,6,7 -> 2 valid (row 7 is padding). Same for columns.
    // Output = (valid rows) * (valid columns): corners 2*2, edges 2*3, interior 3*3.
    let conv = Conv::new(Window::new(3, 3, 2, 2, Same), 1, 1, 1);
    let (s, out) = run_conv(
        &[1.0; 49],
        Shape { h: 7, w: 7, c: 1 },
        &[1.0; 9],
        None,
        conv,
        16,
    );
    assert_eq!(s, Shape { h: 4, w: 4, c: 1 });
    #[rustfmt::skip]
    let want = [
        4.0, 6.0, 6.0, 4.0,
        6.0, 9.0, 9.0, 6.0,
        6.0, 9.0, 9.0, 6.0,
        4.0, 6.0, 6.0, 4.0,
    ];
    assert_eq!(out, want);
}

#[test]
fn conv_same_stride2_odd_size_ramp() {
    // Same geometry, input(y, x) = 7y + x + 1 (1..49), filter of ones.
    // Valid rows R and columns C per output index (from the test above):
    //   R0={0,1} R1={1,2,3} R2={3,4,5} R3={5,6}; same sets for columns.
    // out(oy, ox) = sum_{y in R, x in C} (7y + 1 + x)
    //             = |C| * sum_R (7y + 1) + |R| * sum_C x, with
    //   sum_R(7y+1): R0 = 1+8 = 9, R1 = 8+15+22 = 45, R2 = 22+29+36 = 87, R3 = 36+43 = 79;
    //   sum_C x:     C0 = 1, C1 = 6, C2 = 12, C3 = 11;  |R|, |C| = 2, 3, 3, 2.
    // e.g. (0,0) = 2*9 + 2*1 = 20 (= 1+2+8+9); (1,1) = 9 * 17 (centre (2,2)) = 153;
    //      (3,3) = 2*79 + 2*11 = 180 (= 41+42+48+49); (3,0) = 2*79 + 2*1 = 160.
    let conv = Conv::new(Window::new(3, 3, 2, 2, Same), 1, 1, 1);
    let (s, out) = run_conv(
        &seq(49),
        Shape { h: 7, w: 7, c: 1 },
        &[1.0; 9],
        None,
        conv,
        16,
    );
    assert_eq!(s, Shape { h: 4, w: 4, c: 1 });
    #[rustfmt::skip]
    let want = [
        20.0,  39.0,  51.0,  40.0,  // 2*9+2*1, 3*9+2*6, 3*9+2*12, 2*9+2*11
        93.0,  153.0, 171.0, 123.0, // 2*45+3*1, 3*45+3*6, 3*45+3*12, 2*45+3*11
        177.0, 279.0, 297.0, 207.0, // 2*87+3*1, 3*87+3*6, 3*87+3*12, 2*87+3*11
        160.0, 249.0, 261.0, 180.0, // 2*79+2*1, 3*79+2*6, 3*79+2*12, 2*79+2*11
    ];
    assert_eq!(out, want);
}

#[test]
fn conv_same_asymmetric_padding_1d() {
    // 1x8 input 1..8, 1x3 filter [1, 10, 100], stride 2 along the width, SAME:
    // out = ceil(8/2) = 4, pad_total = 3*2 + 3 - 8 = 1 -> 0 left, 1 right.
    // Output x reads input columns 2x, 2x+1, 2x+2 (column 8 is padding):
    //   x=0: 1*1 + 2*10 + 3*100 = 321;  x=1: 3 + 40 + 500 = 543;
    //   x=2: 5 + 60 + 700 = 765;        x=3: 7 + 80 + 0 = 87.
    // (Padding 1 on the left instead would give 0 + 10 + 200 = 210 at x=0.)
    let conv = Conv::new(Window::new(1, 3, 1, 2, Same), 1, 1, 1);
    let w = [1.0, 10.0, 100.0];
    let (s, out) = run_conv(&seq(8), Shape { h: 1, w: 8, c: 1 }, &w, None, conv, 4);
    assert_eq!(s, Shape { h: 1, w: 4, c: 1 });
    assert_eq!(out, [321.0, 543.0, 765.0, 87.0]);

    // The same along the height (8x1 input, 3x1 filter, stride 2 rows).
    let conv = Conv::new(Window::new(3, 1, 2, 1, Same), 1, 1, 1);
    let (s, out) = run_conv(&seq(8), Shape { h: 8, w: 1, c: 1 }, &w, None, conv, 4);
    assert_eq!(s, Shape { h: 4, w: 1, c: 1 });
    assert_eq!(out, [321.0, 543.0, 765.0, 87.0]);
}

#[test]
fn conv_kws_first_layer_geometry() {
    // KWS DS-CNN first layer: 49x10x1 input, 10x4 filter, stride 2, SAME.
    // Height: out 25, pad_total = 24*2 + 10 - 49 = 9 -> 4 top, 5 bottom.
    // Width:  out 5,  pad_total = 4*2 + 4 - 10 = 2 -> 1 left, 1 right.
    // Ones in, ones weights: output = (valid rows) * (valid columns).
    // Rows of output oy: input rows 2oy-4 .. 2oy+5 clipped to 0..=48:
    //   oy=0: 0..=5 -> 6; oy=1: 0..=7 -> 8; oy=2..=21: 10 (oy=21: 38..=47);
    //   oy=22: 40..=48 -> 9; oy=23: 42..=48 -> 7; oy=24: 44..=48 -> 5.
    // Columns of ox: input columns 2ox-1 .. 2ox+2 clipped to 0..=9:
    //   ox=0: 0..=2 -> 3; ox=1,2,3: 4; ox=4: 7..=9 -> 3.
    let rows: [f32; 25] = [
        6.0, 8.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0,
        10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 9.0, 7.0, 5.0,
    ];
    let cols: [f32; 5] = [3.0, 4.0, 4.0, 4.0, 3.0];
    let conv = Conv::new(Window::new(10, 4, 2, 2, Same), 1, 1, 1);
    let (s, out) = run_conv(
        &[1.0; 490],
        Shape { h: 49, w: 10, c: 1 },
        &[1.0; 40],
        None,
        conv,
        125,
    );
    assert_eq!(s, Shape { h: 25, w: 5, c: 1 });
    let want: Vec<f32> = rows
        .iter()
        .flat_map(|r| cols.iter().map(move |c| r * c))
        .collect();
    assert_eq!(out, want);
    // A few positions spelled out.
    assert_eq!(out[0], 18.0); // (0,0): 6 rows * 3 cols
    assert_eq!(out[1], 24.0); // (0,1): 6 * 4
    assert_eq!(out[2 * 5 + 2], 40.0); // (2,2): a full 10x4 window
    assert_eq!(out[23 * 5 + 2], 28.0); // (23,2): 7 * 4
    assert_eq!(out[24 * 5 + 4], 15.0); // (24,4): 5 * 3

    // With 2 output channels (weights 1 and 2) each channel scales.
    let mut w = vec![1.0; 40];
    w.extend([2.0; 40]);
    let conv = Conv::new(Window::new(10, 4, 2, 2, Same), 1, 2, 1);
    let (s, out) = run_conv(
        &[1.0; 490],
        Shape { h: 49, w: 10, c: 1 },
        &w,
        None,
        conv,
        250,
    );
    assert_eq!(s, Shape { h: 25, w: 5, c: 2 });
    assert_eq!(&out[..4], &[18.0, 36.0, 24.0, 48.0]);
    assert_eq!(&out[248..], &[15.0, 30.0]);
}

#[test]
fn conv_valid_1x1_two_in_three_out_with_bias() {
    // 1x2 pixels of 2 channels: p0 = [1, 2], p1 = [3, 4].
    // OHWI weights [3][1][1][2]: o0 = [1, 2], o1 = [3, 4], o2 = [5, -6]; bias [10, 20, 30].
    // p0: o0 = 1+4 = 5 -> 15; o1 = 3+8 = 11 -> 31; o2 = 5-12 = -7 -> 23.
    // p1: o0 = 3+8 = 11 -> 21; o1 = 9+16 = 25 -> 45; o2 = 15-24 = -9 -> 21.
    let conv = Conv::new(Window::new(1, 1, 1, 1, Valid), 2, 3, 1);
    let w = [1.0, 2.0, 3.0, 4.0, 5.0, -6.0];
    let b = [10.0, 20.0, 30.0];
    let (s, out) = run_conv(&seq(4), Shape { h: 1, w: 2, c: 2 }, &w, Some(&b), conv, 6);
    assert_eq!(s, Shape { h: 1, w: 2, c: 3 });
    assert_eq!(out, [15.0, 31.0, 23.0, 21.0, 45.0, 21.0]);
}

#[test]
fn conv_valid_2x2_two_in_three_out() {
    // Input 2x3 pixels of 2 channels, value(y, x, c) = 6y + 2x + c + 1:
    //   y0: [1,2] [3,4] [5,6]
    //   y1: [7,8] [9,10] [11,12]
    // 2x2 filter, stride 1, VALID -> 1x2 output, 3 channels.
    // OHWI weights, tap order (ky, kx, ci):
    //   o0: all ones (sum of the window);
    //   o1: only (ky=1, kx=0, ci=1) = 1;
    //   o2: (0,0,0) = 1, (0,0,1) = -1, (1,1,0) = 2, rest 0.
    // ox=0 window: (0,0)=[1,2] (0,1)=[3,4] (1,0)=[7,8] (1,1)=[9,10]
    //   o0 = 1+2+3+4+7+8+9+10 = 44; o1 = 8; o2 = 1 - 2 + 2*9 = 17.
    // ox=1 window: (0,0)=[3,4] (0,1)=[5,6] (1,0)=[9,10] (1,1)=[11,12]
    //   o0 = 3+4+5+6+9+10+11+12 = 60; o1 = 10; o2 = 3 - 4 + 2*11 = 21.
    let conv = Conv::new(Window::new(2, 2, 1, 1, Valid), 2, 3, 1);
    #[rustfmt::skip]
    let w = [
        1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0,
        1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0,
    ];
    let (s, out) = run_conv(&seq(12), Shape { h: 2, w: 3, c: 2 }, &w, None, conv, 6);
    assert_eq!(s, Shape { h: 1, w: 2, c: 3 });
    assert_eq!(out, [44.0, 8.0, 17.0, 60.0, 10.0, 21.0]);
}

#[test]
fn conv_valid_stride_drops_leftover_columns() {
    // 1x5 input 1..5, 1x2 filter [1, 1], stride 2, VALID: out = (5-2)/2 + 1 = 2;
    // x=0: 1+2 = 3; x=1: 3+4 = 7; column 4 (value 5) is never read.
    let conv = Conv::new(Window::new(1, 2, 1, 2, Valid), 1, 1, 1);
    let (s, out) = run_conv(
        &seq(5),
        Shape { h: 1, w: 5, c: 1 },
        &[1.0, 1.0],
        None,
        conv,
        2,
    );
    assert_eq!(s, Shape { h: 1, w: 2, c: 1 });
    assert_eq!(out, [3.0, 7.0]);
}

#[test]
fn conv_groups() {
    // g = 2 groups, fc = 2, k = 2: 4 input and 4 output channels, 1x1 filter.
    // o0, o1 (group 0) read input channels 0, 1; o2, o3 (group 1) read 2, 3.
    // OHWI weights [4][1][1][2]: o0 = [1, 1], o1 = [1, -1], o2 = [1, 1], o3 = [10, 100].
    // bias [0.5, 0, 0, -30].
    // p0 = [1, 2, 3, 4]: o0 = 1+2 = 3 -> 3.5; o1 = 1-2 = -1; o2 = 3+4 = 7; o3 = 30+400 = 430 -> 400.
    // p1 = [5, 6, 7, 8]: o0 = 11 -> 11.5; o1 = -1; o2 = 15; o3 = 70+800 = 870 -> 840.
    // (Reading channels 0, 1 for group 1 too would give o2 = 3, o3 = 210 at p0.)
    let conv = Conv::new(Window::new(1, 1, 1, 1, Valid), 2, 2, 2);
    let w = [1.0, 1.0, 1.0, -1.0, 1.0, 1.0, 10.0, 100.0];
    let b = [0.5, 0.0, 0.0, -30.0];
    let (s, out) = run_conv(&seq(8), Shape { h: 1, w: 2, c: 4 }, &w, Some(&b), conv, 8);
    assert_eq!(s, Shape { h: 1, w: 2, c: 4 });
    assert_eq!(out, [3.5, -1.0, 7.0, 400.0, 11.5, -1.0, 15.0, 840.0]);
}

#[test]
fn conv_groups_3x3_same() {
    // g = 2, fc = 1, k = 1 on a 3x3 image of 2 channels: channel 0 = 1..9,
    // channel 1 = 10, 20, ..., 90. Filter of group 0: ones; group 1: only the
    // centre-right tap (ky=1, kx=2), so out1(y, x) = in1(y, x+1) or 0 past the edge.
    // Group 0 (3x3 SAME box sums of 1..9):
    //   (0,0) 1+2+4+5 = 12, (0,1) 1+..+6 = 21, (0,2) 2+3+5+6 = 16,
    //   (1,0) 1+2+4+5+7+8 = 27, (1,1) 45, (1,2) 2+3+5+6+8+9 = 33,
    //   (2,0) 4+5+7+8 = 24, (2,1) 4+..+9 = 39, (2,2) 5+6+8+9 = 28.
    // Group 1: [20, 30, 0, 50, 60, 0, 80, 90, 0].
    let input: Vec<f32> = (1..=9).flat_map(|v| [v as f32, 10.0 * v as f32]).collect();
    let mut w = vec![1.0; 9];
    let mut w1 = vec![0.0; 9];
    w1[3 + 2] = 1.0;
    w.extend(w1);
    let conv = Conv::new(Window::new(3, 3, 1, 1, Same), 1, 1, 2);
    let (s, out) = run_conv(&input, Shape { h: 3, w: 3, c: 2 }, &w, None, conv, 18);
    assert_eq!(s, Shape { h: 3, w: 3, c: 2 });
    #[rustfmt::skip]
    let want = [
        12.0, 20.0, 21.0, 30.0, 16.0, 0.0,
        27.0, 50.0, 45.0, 60.0, 33.0, 0.0,
        24.0, 80.0, 39.0, 90.0, 28.0, 0.0,
    ];
    assert_eq!(out, want);
}

#[test]
fn conv_17_input_channels_sum() {
    // 2x1 pixels of 17 channels (1..34), 1x1 filter of ones, k = 1:
    // p0 = 1+..+17 = 17*18/2 = 153; p1 = 18+..+34 = (18+34)*17/2 = 442.
    let conv = Conv::new(Window::new(1, 1, 1, 1, Valid), 17, 1, 1);
    let (s, out) = run_conv(
        &seq(34),
        Shape { h: 2, w: 1, c: 17 },
        &[1.0; 17],
        None,
        conv,
        2,
    );
    assert_eq!(s, Shape { h: 2, w: 1, c: 1 });
    assert_eq!(out, [153.0, 442.0]);
}

#[test]
fn conv_3_in_17_out() {
    // One pixel [1, 2, 3]; output channel o has weights [o, 1, 0]:
    // out[o] = o*1 + 1*2 + 0*3 = o + 2 -> 2, 3, ..., 18.
    let conv = Conv::new(Window::new(1, 1, 1, 1, Valid), 3, 17, 1);
    let w: Vec<f32> = (0..17).flat_map(|o| [o as f32, 1.0, 0.0]).collect();
    let (s, out) = run_conv(
        &[1.0, 2.0, 3.0],
        Shape { h: 1, w: 1, c: 3 },
        &w,
        None,
        conv,
        17,
    );
    assert_eq!(s, Shape { h: 1, w: 1, c: 17 });
    let want: Vec<f32> = (2..=18).map(|v| v as f32).collect();
    assert_eq!(out, want);

    // 3 channels with a 3x3 SAME filter of ones and bias -1: each output
    // channel = sum over the window of (c0 + c1 + c2) - 1. One pixel image:
    // only the centre tap is valid -> 1+2+3 - 1 = 5 for every o.
    let conv = Conv::new(Window::new(3, 3, 1, 1, Same), 3, 17, 1);
    let b = [-1.0; 17];
    let (_, out) = run_conv(
        &[1.0, 2.0, 3.0],
        Shape { h: 1, w: 1, c: 3 },
        &[1.0; 17 * 27],
        Some(&b),
        conv,
        17,
    );
    assert_eq!(out, [5.0; 17]);
}

#[test]
fn depthwise_multiplier_1_same() {
    // 3x3 image, 2 channels: c0 = 1..9, c1 = 10, 20, ..., 90.
    // Weights [1][3][3][2]: c0 filter all ones; c1 filter only the tap below
    // the centre (ky=2, kx=1), so out1(y, x) = in1(y+1, x) or 0 on the last row.
    // bias [1, -1].
    // c0: the 3x3 SAME box sums of 1..9 (see conv_groups_3x3_same):
    //   12 21 16 / 27 45 33 / 24 39 28, plus 1.
    // c1: 40 50 60 / 70 80 90 / 0 0 0, minus 1.
    let input: Vec<f32> = (1..=9).flat_map(|v| [v as f32, 10.0 * v as f32]).collect();
    let mut w = vec![0.0; 18];
    for t in 0..9 {
        w[t * 2] = 1.0;
    }
    w[(2 * 3 + 1) * 2 + 1] = 1.0;
    let win = Window::new(3, 3, 1, 1, Same);
    let (s, out) = run_dw(
        &input,
        Shape { h: 3, w: 3, c: 2 },
        &w,
        Some(&[1.0, -1.0]),
        win,
        1,
        18,
    );
    assert_eq!(s, Shape { h: 3, w: 3, c: 2 });
    #[rustfmt::skip]
    let want = [
        13.0, 39.0, 22.0, 49.0, 17.0, 59.0,
        28.0, 69.0, 46.0, 79.0, 34.0, 89.0,
        25.0, -1.0, 40.0, -1.0, 29.0, -1.0,
    ];
    assert_eq!(out, want);
}

#[test]
fn depthwise_multiplier_2_asymmetric_same() {
    // 2x2x1 image [1, 2 / 3, 4], 2x2 filter, stride 1, SAME:
    // out 2x2, pad_total = 1*1 + 2 - 2 = 1 -> 0 before, 1 after.
    // Multiplier 2, weights [1][2][2][2], index (ky*2 + kx)*2 + m:
    //   m=0: all ones; m=1: (0,0)=1, (0,1)=10, (1,0)=100, (1,1)=1000.
    // Output (y, x) reads input (y+ky, x+kx) when inside:
    //   (0,0): m0 = 1+2+3+4 = 10;  m1 = 1 + 20 + 300 + 4000 = 4321
    //   (0,1): m0 = 2+4 = 6;       m1 = 2*1 + 4*100 = 402
    //   (1,0): m0 = 3+4 = 7;       m1 = 3*1 + 4*10 = 43
    //   (1,1): m0 = 4;             m1 = 4*1 = 4
    let w = [1.0, 1.0, 1.0, 10.0, 1.0, 100.0, 1.0, 1000.0];
    let win = Window::new(2, 2, 1, 1, Same);
    let (s, out) = run_dw(&seq(4), Shape { h: 2, w: 2, c: 1 }, &w, None, win, 2, 8);
    assert_eq!(s, Shape { h: 2, w: 2, c: 2 });
    assert_eq!(out, [10.0, 4321.0, 6.0, 402.0, 7.0, 43.0, 4.0, 4.0]);
}

#[test]
fn depthwise_output_channel_order() {
    // One pixel of 2 channels [1, 2], 1x1 filter, multiplier 2, weights [10, 20, 30, 40]:
    // o = c*2 + m reads channel c: o0 = 1*10, o1 = 1*20, o2 = 2*30, o3 = 2*40.
    // (o = m*C + c would read channel o % 2: o1 = 2*20 = 40.)
    let win = Window::new(1, 1, 1, 1, Valid);
    let w = [10.0, 20.0, 30.0, 40.0];
    let (s, out) = run_dw(
        &[1.0, 2.0],
        Shape { h: 1, w: 1, c: 2 },
        &w,
        Some(&[0.0, 1.0, 2.0, 3.0]),
        win,
        2,
        4,
    );
    assert_eq!(s, Shape { h: 1, w: 1, c: 4 });
    assert_eq!(out, [10.0, 21.0, 62.0, 83.0]);
}

#[test]
fn depthwise_equals_group_conv() {
    // depthwise(C, multiplier M) == conv2d(g = C, fc = 1, k = M) with the weights
    // moved from [fh][fw][C*M] to OHWI [C*M][fh][fw][1]. With fc = 1 both sum the
    // same products in the same (ky, kx) order, so the results are bit-identical.
    let mut seed = 11;
    let cases = [
        // (h, w, c, m, fh, fw, sh, sw, padding)
        (5, 5, 3, 1, 3, 3, 1, 1, Same),
        (7, 6, 2, 2, 3, 3, 2, 2, Same),
        (6, 8, 17, 1, 3, 3, 2, 1, Same),
        (9, 4, 1, 3, 4, 2, 2, 2, Same),
        (8, 8, 4, 2, 5, 5, 3, 3, Valid),
        (3, 3, 5, 1, 5, 5, 1, 1, Same),
    ];
    for (h, w, c, m, fh, fw, sh, sw, padding) in cases {
        let shape = Shape { h, w, c };
        let win = Window::new(fh, fw, sh, sw, padding);
        let input = lcg_values(&mut seed, shape.len());
        let dw = lcg_values(&mut seed, fh * fw * c * m);
        let bias = lcg_values(&mut seed, c * m);
        let mut ohwi = vec![0.0; dw.len()];
        for o in 0..c * m {
            for t in 0..fh * fw {
                ohwi[o * fh * fw + t] = dw[t * c * m + o];
            }
        }
        let (dh, dwd) = win.dims(h, w).unwrap();
        let n = dh.out * dwd.out * c * m;
        let (s1, a) = run_dw(&input, shape, &dw, Some(&bias), win, m, n);
        let (s2, b) = run_conv(
            &input,
            shape,
            &ohwi,
            Some(&bias),
            Conv::new(win, 1, m, c),
            n,
        );
        assert_eq!(s1, s2);
        assert_eq!(a, b, "case h={h} w={w} c={c} m={m}");
    }
}

#[test]
fn fully_connected_2x3() {
    // x = [1, 2, 3]; W = [[1, 0, -1], [2, 3, 4]]; b = [0.5, -1]
    // out0 = 1 - 3 + 0.5 = -1.5; out1 = 2 + 6 + 12 - 1 = 19.
    let w = [1.0, 0.0, -1.0, 2.0, 3.0, 4.0];
    let mut out = [0.0; 2];
    fully_connected(&[1.0, 2.0, 3.0], &w, Some(&[0.5, -1.0]), &mut out).unwrap();
    assert_eq!(out, [-1.5, 19.0]);
    fully_connected(&[1.0, 2.0, 3.0], &w, None, &mut out).unwrap();
    assert_eq!(out, [-2.0, 20.0]);
}

#[test]
fn fully_connected_equals_full_size_valid_conv() {
    // TFLite flattens NHWC, so FC weights [outputs][H*W*C] are exactly the OHWI
    // weights of a VALID HxW conv with fc = C; both sum in flattened order, so
    // the results are bit-identical (the values are not exact, which does not matter).
    let mut seed = 5;
    for (h, w, c, outputs) in [(2, 3, 2, 3), (1, 1, 17, 5), (4, 4, 3, 1), (3, 1, 16, 10)] {
        let shape = Shape { h, w, c };
        let x: Vec<f32> = lcg_values(&mut seed, shape.len())
            .iter()
            .map(|v| v * 0.3)
            .collect();
        let wts = lcg_values(&mut seed, outputs * shape.len());
        let b = lcg_values(&mut seed, outputs);
        let mut fc = vec![0.0; outputs];
        fully_connected(&x, &wts, Some(&b), &mut fc).unwrap();
        let conv = Conv::new(Window::new(h, w, 1, 1, Valid), c, outputs, 1);
        let (s, out) = run_conv(&x, shape, &wts, Some(&b), conv, outputs);
        assert_eq!(
            s,
            Shape {
                h: 1,
                w: 1,
                c: outputs
            }
        );
        assert_eq!(out, fc);
    }
}

#[test]
fn conv_errors() {
    let conv = Conv::new(Window::new(3, 3, 1, 1, Same), 1, 2, 1);
    let shape = Shape { h: 3, w: 3, c: 1 };
    let (x, w, b) = ([0.0; 9], [0.0; 18], [0.0; 2]);
    let mut out = [0.0; 18];
    // Sanity: these arguments are right.
    assert_eq!(
        conv2d(&x, shape, &w, Some(&b), conv, &mut out),
        Ok(Shape { h: 3, w: 3, c: 2 })
    );
    assert_eq!(out, [0.0; 18]);
    out.fill(7.0); // sentinel: no failing call below may write
    assert_eq!(
        conv2d(&x[..8], shape, &w, Some(&b), conv, &mut out),
        len("input", 9, 8)
    );
    assert_eq!(
        conv2d(&x, shape, &w[..17], Some(&b), conv, &mut out),
        len("weights", 18, 17)
    );
    assert_eq!(
        conv2d(&x, shape, &w, Some(&b[..1]), conv, &mut out),
        len("bias", 2, 1)
    );
    assert_eq!(
        conv2d(&x, shape, &w, Some(&b), conv, &mut out[..17]),
        len("output", 18, 17)
    );
    assert_eq!(
        conv2d(&x, Shape { h: 3, w: 1, c: 3 }, &w, None, conv, &mut out),
        Err(Error::ShapeMismatch {
            what: "input channels",
            expected: 1,
            actual: 3
        })
    );
    // g * fc = 2 * 2 = 4 input channels expected.
    let grouped = Conv::new(Window::new(1, 1, 1, 1, Valid), 2, 1, 2);
    assert_eq!(
        conv2d(&x, Shape { h: 3, w: 1, c: 3 }, &w, None, grouped, &mut out),
        Err(Error::ShapeMismatch {
            what: "input channels",
            expected: 4,
            actual: 3
        })
    );
    let valid = Conv::new(Window::new(3, 3, 1, 1, Valid), 1, 1, 1);
    assert_eq!(
        conv2d(
            &x[..4],
            Shape { h: 2, w: 2, c: 1 },
            &w[..9],
            None,
            valid,
            &mut out[..1]
        ),
        Err(Error::InputTooSmall {
            what: "height",
            minimum: 3,
            actual: 2
        })
    );
    assert_eq!(
        conv2d(
            &x[..6],
            Shape { h: 3, w: 2, c: 1 },
            &w[..9],
            None,
            valid,
            &mut out[..1]
        ),
        Err(Error::InputTooSmall {
            what: "width",
            minimum: 3,
            actual: 2
        })
    );
    let stride0 = Conv::new(Window::new(3, 3, 0, 1, Same), 1, 2, 1);
    assert_eq!(
        conv2d(&x, shape, &w, None, stride0, &mut out),
        unsupported("stride height")
    );
    let stride0 = Conv::new(Window::new(3, 3, 1, 0, Same), 1, 2, 1);
    assert_eq!(
        conv2d(&x, shape, &w, None, stride0, &mut out),
        unsupported("stride width")
    );
    let f0 = Conv::new(Window::new(0, 3, 1, 1, Same), 1, 2, 1);
    assert_eq!(
        conv2d(&x, shape, &w, None, f0, &mut out),
        unsupported("filter height")
    );
    let f0 = Conv::new(Window::new(3, 0, 1, 1, Same), 1, 2, 1);
    assert_eq!(
        conv2d(&x, shape, &w, None, f0, &mut out),
        unsupported("filter width")
    );
    let k0 = Conv::new(Window::new(3, 3, 1, 1, Same), 1, 0, 1);
    assert_eq!(
        conv2d(&x, shape, &w, None, k0, &mut out),
        unsupported("output channels per group")
    );
    let fc0 = Conv::new(Window::new(3, 3, 1, 1, Same), 0, 2, 1);
    assert_eq!(
        conv2d(&x, shape, &w, None, fc0, &mut out),
        unsupported("input channels per group")
    );
    let g0 = Conv::new(Window::new(3, 3, 1, 1, Same), 1, 2, 0);
    assert_eq!(
        conv2d(&x, shape, &w, None, g0, &mut out),
        unsupported("groups")
    );
    // Empty image: reported by Padding::height.
    assert_eq!(
        conv2d(&[], Shape { h: 0, w: 3, c: 1 }, &w, None, conv, &mut out),
        Err(Error::InputTooSmall {
            what: "height",
            minimum: 1,
            actual: 0
        })
    );
    // Absurd sizes saturate instead of overflowing.
    let huge = Shape {
        h: usize::MAX / 2,
        w: 3,
        c: 1,
    };
    let conv1 = Conv::new(Window::new(1, 1, 1, 1, Same), 1, 1, 1);
    assert_eq!(
        conv2d(&x, huge, &w[..1], None, conv1, &mut out),
        len("input", usize::MAX, 9)
    );
    let huge_filter = Conv::new(Window::new(usize::MAX, 1, 1, 1, Same), 1, 1, 1);
    assert_eq!(
        conv2d(&x, shape, &w, None, huge_filter, &mut out),
        Err(Error::Unsupported {
            what: "filter height",
            detail: "filter height plus input height overflows usize"
        })
    );
    assert_eq!(out, [7.0; 18]);
}

#[test]
fn depthwise_and_fc_errors() {
    let win = Window::new(3, 3, 1, 1, Same);
    let shape = Shape { h: 2, w: 2, c: 2 };
    let (x, w) = ([0.0; 8], [0.0; 36]);
    let mut out = [0.0; 16];
    assert_eq!(
        depthwise_conv2d(&x, shape, &w, None, win, 2, &mut out),
        Ok(Shape { h: 2, w: 2, c: 4 })
    );
    assert_eq!(
        depthwise_conv2d(&x[..7], shape, &w, None, win, 2, &mut out),
        len("input", 8, 7)
    );
    assert_eq!(
        depthwise_conv2d(&x, shape, &w[..18], None, win, 2, &mut out),
        len("weights", 36, 18)
    );
    assert_eq!(
        depthwise_conv2d(&x, shape, &w, Some(&[0.0; 2]), win, 2, &mut out),
        len("bias", 4, 2)
    );
    assert_eq!(
        depthwise_conv2d(&x, shape, &w, None, win, 2, &mut out[..8]),
        len("output", 16, 8)
    );
    assert_eq!(
        depthwise_conv2d(&x, shape, &w, None, win, 0, &mut out),
        Err(Error::Unsupported {
            what: "depth multiplier",
            detail: AT_LEAST_ONE
        })
    );
    assert_eq!(
        depthwise_conv2d(&[], Shape { h: 2, w: 2, c: 0 }, &w, None, win, 1, &mut out),
        Err(Error::Unsupported {
            what: "channels",
            detail: AT_LEAST_ONE
        })
    );
    assert_eq!(
        depthwise_conv2d(
            &x,
            shape,
            &w,
            None,
            Window::new(3, 3, 1, 1, Valid),
            2,
            &mut out
        ),
        Err(Error::InputTooSmall {
            what: "height",
            minimum: 3,
            actual: 2
        })
    );

    let mut out = [0.0; 2];
    assert_eq!(
        fully_connected(&[1.0; 3], &[0.0; 5], None, &mut out),
        len("weights", 6, 5)
    );
    assert_eq!(
        fully_connected(&[1.0; 3], &[0.0; 6], Some(&[0.0; 3]), &mut out),
        len("bias", 2, 3)
    );
    assert_eq!(
        fully_connected(&[], &[], None, &mut out),
        Err(Error::Unsupported {
            what: "inputs",
            detail: AT_LEAST_ONE
        })
    );
    assert_eq!(
        fully_connected(&[1.0], &[], None, &mut []),
        Err(Error::Unsupported {
            what: "outputs",
            detail: AT_LEAST_ONE
        })
    );
}
