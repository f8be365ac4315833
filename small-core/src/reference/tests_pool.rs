//! Hand-worked tests of max_pool, avg_pool and global_avg_pool.
//!
//! All inputs are small integers; maxima are exact, and every average
//! below has a quotient that is exactly representable in f32 (IEEE
//! division is correctly rounded, so it is then exact) unless a test says
//! otherwise.

use super::*;
use crate::Padding::{Same, Valid};
use alloc::vec;
use alloc::vec::Vec;

fn run_max(input: &[f32], shape: Shape, window: Window, out_len: usize) -> (Shape, Vec<f32>) {
    let mut out = vec![f32::NAN; out_len];
    let s = max_pool(input, shape, window, &mut out).unwrap();
    (s, out)
}

fn run_avg(input: &[f32], shape: Shape, window: Window, out_len: usize) -> (Shape, Vec<f32>) {
    let mut out = vec![f32::NAN; out_len];
    let s = avg_pool(input, shape, window, &mut out).unwrap();
    (s, out)
}

/// -1, -2, ..., -9: a 3x3 image where every value is negative.
const NEG_3X3: [f32; 9] = [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0];
/// 1..9 as a 3x3 image.
const POS_3X3: [f32; 9] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];

#[test]
fn max_pool_same_ignores_padding_for_negative_inputs() {
    // Input  -1 -2 -3
    //        -4 -5 -6
    //        -7 -8 -9
    // 2x2 window, stride 2, SAME: out 2x2, pad_total = 1*2 + 2 - 3 = 1 -> 0 before, 1 after.
    //   (0,0): max(-1, -2, -4, -5) = -1
    //   (0,1): column 2 and the padding: max(-3, -6) = -3
    //   (1,0): row 2 and the padding:    max(-7, -8) = -7
    //   (1,1): only (2,2): -9
    // A max that counted the padding as 0 would give 0 in three places.
    let (s, out) = run_max(
        &NEG_3X3,
        Shape { h: 3, w: 3, c: 1 },
        Window::new(2, 2, 2, 2, Same),
        4,
    );
    assert_eq!(s, Shape { h: 2, w: 2, c: 1 });
    assert_eq!(out, [-1.0, -3.0, -7.0, -9.0]);
}

#[test]
fn max_pool_same_3x3_stride1_two_channels() {
    // 3x3 window, stride 1, SAME (pad 1 on every side), 2 channels:
    // c0 = -1..-9 (the max is the value nearest the top-left of the window),
    // c1 = 1..9 (the max is the value nearest the bottom-right).
    //   c0: (0,0) max(-1,-2,-4,-5) = -1, (0,1) -1, (0,2) max(-2,-3,-5,-6) = -2,
    //       (1,0) -1, (1,1) -1, (1,2) -2, (2,0) max(-4,-5,-7,-8) = -4, (2,1) -4, (2,2) -5.
    //   c1: (0,0) max(1,2,4,5) = 5, (0,1) 6, (0,2) 6, (1,0) 8, (1,1) 9, (1,2) 9,
    //       (2,0) 8, (2,1) 9, (2,2) 9.
    let input: Vec<f32> = NEG_3X3
        .iter()
        .zip(POS_3X3)
        .flat_map(|(&n, p)| [n, p])
        .collect();
    let (s, out) = run_max(
        &input,
        Shape { h: 3, w: 3, c: 2 },
        Window::new(3, 3, 1, 1, Same),
        18,
    );
    assert_eq!(s, Shape { h: 3, w: 3, c: 2 });
    #[rustfmt::skip]
    let want = [
        -1.0, 5.0, -1.0, 6.0, -2.0, 6.0,
        -1.0, 8.0, -1.0, 9.0, -2.0, 9.0,
        -4.0, 8.0, -4.0, 9.0, -5.0, 9.0,
    ];
    assert_eq!(out, want);
    assert!(out.iter().all(|v| v.is_finite()));
}

#[test]
fn max_pool_2x2_stride2_valid() {
    // 4x5 input; VALID 2x2 stride 2 -> out = (4-2)/2+1 = 2 rows, (5-2)/2+1 = 2 columns;
    // column 4 (all 100) is never read.
    //    1  5  2  0 100
    //    3 -1  8  7 100
    //   -2 -3 -9 -4 100
    //   -5 -6 -8 -7 100
    // (0,0) max(1,5,3,-1) = 5; (0,1) max(2,0,8,7) = 8;
    // (1,0) max(-2,-3,-5,-6) = -2; (1,1) max(-9,-4,-8,-7) = -4.
    #[rustfmt::skip]
    let input = [
        1.0, 5.0, 2.0, 0.0, 100.0,
        3.0, -1.0, 8.0, 7.0, 100.0,
        -2.0, -3.0, -9.0, -4.0, 100.0,
        -5.0, -6.0, -8.0, -7.0, 100.0,
    ];
    let (s, out) = run_max(
        &input,
        Shape { h: 4, w: 5, c: 1 },
        Window::new(2, 2, 2, 2, Valid),
        4,
    );
    assert_eq!(s, Shape { h: 2, w: 2, c: 1 });
    assert_eq!(out, [5.0, 8.0, -2.0, -4.0]);
}

#[test]
fn avg_pool_same_divides_by_valid_count() {
    // 3x3 of ones, 3x3 window, stride 1, SAME: every average is n/n = 1
    // (TF divides by the number of valid positions, 4 at corners, 6 at edges, 9 inside).
    let (s, out) = run_avg(
        &[1.0; 9],
        Shape { h: 3, w: 3, c: 1 },
        Window::new(3, 3, 1, 1, Same),
        9,
    );
    assert_eq!(s, Shape { h: 3, w: 3, c: 1 });
    assert_eq!(out, [1.0; 9]);

    // 1..9, same window: the box sums of conv_groups_3x3_same over the valid counts:
    //   (0,0) (1+2+4+5)/4 = 3, (0,1) 21/6 = 3.5, (0,2) 16/4 = 4,
    //   (1,0) 27/6 = 4.5, (1,1) 45/9 = 5, (1,2) 33/6 = 5.5,
    //   (2,0) 24/4 = 6, (2,1) 39/6 = 6.5, (2,2) 28/4 = 7.
    let (_, out) = run_avg(
        &POS_3X3,
        Shape { h: 3, w: 3, c: 1 },
        Window::new(3, 3, 1, 1, Same),
        9,
    );
    assert_eq!(out, [3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0]);

    // 2x2 stride 2 SAME (0 before, 1 after):
    //   (0,0) (1+2+4+5)/4 = 3; (0,1) (3+6)/2 = 4.5; (1,0) (7+8)/2 = 7.5; (1,1) 9/1 = 9.
    // (Dividing by 4 everywhere would give 3, 2.25, 3.75, 2.25.)
    let (s, out) = run_avg(
        &POS_3X3,
        Shape { h: 3, w: 3, c: 1 },
        Window::new(2, 2, 2, 2, Same),
        4,
    );
    assert_eq!(s, Shape { h: 2, w: 2, c: 1 });
    assert_eq!(out, [3.0, 4.5, 7.5, 9.0]);
}

#[test]
fn avg_pool_valid_two_channels() {
    // 2x2 image, 2 channels: c0 = [1, 2, 3, 4], c1 = [10, 20, 30, 50].
    // 2x2 VALID -> one pixel: c0 = 10/4 = 2.5, c1 = 110/4 = 27.5.
    let input = [1.0, 10.0, 2.0, 20.0, 3.0, 30.0, 4.0, 50.0];
    let (s, out) = run_avg(
        &input,
        Shape { h: 2, w: 2, c: 2 },
        Window::new(2, 2, 1, 1, Valid),
        2,
    );
    assert_eq!(s, Shape { h: 1, w: 1, c: 2 });
    assert_eq!(out, [2.5, 27.5]);
}

#[test]
fn global_avg_pool_means() {
    // 2x2 image, 2 channels: c0 = 1, 2, 3, 4 -> 10/4 = 2.5; c1 = 10, 20, 30, 40 -> 25.
    let mut out = [0.0; 2];
    let input = [1.0, 10.0, 2.0, 20.0, 3.0, 30.0, 4.0, 40.0];
    global_avg_pool(&input, Shape { h: 2, w: 2, c: 2 }, &mut out).unwrap();
    assert_eq!(out, [2.5, 25.0]);

    // 1x3 image, 3 channels: c0 = 1, 2, 4 -> 7/3 (inexact: the sum 7 is exact and the
    // division is correctly rounded, so the result is exactly 7f32 / 3f32);
    // c1 = -3, 0, 3 -> 0; c2 = 5, 5, 5 -> 5.
    let mut out = [0.0; 3];
    let input = [1.0, -3.0, 5.0, 2.0, 0.0, 5.0, 4.0, 3.0, 5.0];
    global_avg_pool(&input, Shape { h: 1, w: 3, c: 3 }, &mut out).unwrap();
    assert_eq!(out, [7.0f32 / 3.0, 0.0, 5.0]);
}

#[test]
fn pool_errors() {
    let shape = Shape { h: 3, w: 3, c: 1 };
    let win = Window::new(2, 2, 2, 2, Same);
    let mut out = [0.0; 4];
    let len = |what, expected, actual| {
        Err(Error::BufferLength {
            what,
            expected,
            actual,
        })
    };
    for pool in [max_pool, avg_pool] {
        assert_eq!(
            pool(&NEG_3X3, shape, win, &mut out),
            Ok(Shape { h: 2, w: 2, c: 1 })
        );
        assert_eq!(
            pool(&NEG_3X3[..8], shape, win, &mut out),
            len("input", 9, 8)
        );
        assert_eq!(
            pool(&NEG_3X3, shape, win, &mut out[..3]),
            len("output", 4, 3)
        );
        assert_eq!(
            pool(&NEG_3X3, shape, Window::new(2, 2, 0, 2, Same), &mut out),
            Err(Error::Unsupported {
                what: "stride height",
                detail: AT_LEAST_ONE
            })
        );
        assert_eq!(
            pool(&NEG_3X3, shape, Window::new(2, 0, 2, 2, Same), &mut out),
            Err(Error::Unsupported {
                what: "filter width",
                detail: AT_LEAST_ONE
            })
        );
        assert_eq!(
            pool(&[], Shape { h: 3, w: 3, c: 0 }, win, &mut out),
            Err(Error::Unsupported {
                what: "channels",
                detail: AT_LEAST_ONE
            })
        );
        assert_eq!(
            pool(&NEG_3X3, shape, Window::new(4, 2, 1, 1, Valid), &mut out),
            Err(Error::InputTooSmall {
                what: "height",
                minimum: 4,
                actual: 3
            })
        );
        assert_eq!(
            pool(&[], Shape { h: 3, w: 0, c: 1 }, win, &mut out),
            Err(Error::InputTooSmall {
                what: "width",
                minimum: 1,
                actual: 0
            })
        );
    }
    let mut out = [0.0; 2];
    assert_eq!(
        global_avg_pool(&[0.0; 8], Shape { h: 2, w: 2, c: 2 }, &mut out[..1]),
        Err(Error::BufferLength {
            what: "output",
            expected: 2,
            actual: 1
        })
    );
    assert_eq!(
        global_avg_pool(&[0.0; 7], Shape { h: 2, w: 2, c: 2 }, &mut out),
        Err(Error::BufferLength {
            what: "input",
            expected: 8,
            actual: 7
        })
    );
    assert_eq!(
        global_avg_pool(&[], Shape { h: 0, w: 2, c: 2 }, &mut out),
        Err(Error::InputTooSmall {
            what: "height",
            minimum: 1,
            actual: 0
        })
    );
    assert_eq!(
        global_avg_pool(&[], Shape { h: 2, w: 2, c: 0 }, &mut []),
        Err(Error::Unsupported {
            what: "channels",
            detail: AT_LEAST_ONE
        })
    );
}
