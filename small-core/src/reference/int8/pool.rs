//! Int8 pooling: max and average (TFLite semantics at the border).

use super::{check_range, clamp};
use crate::reference::{Shape, Window, check_shape, tap};
use crate::{Dim, Error, check_len};
use small_ir::quant::rounding_average;

/// Checks a pooling layer's arguments; returns the output shape and the
/// per-dimension geometry.
fn pool_geometry(
    input: &[i8],
    shape: Shape,
    window: Window,
    act: (i8, i8),
    out: &[i8],
) -> Result<(Shape, Dim, Dim), Error> {
    window.validate()?;
    check_shape(shape)?;
    check_range(act.0, act.1)?;
    let (dh, dw) = window.dims(shape.h, shape.w)?;
    let out_shape = Shape {
        h: dh.out,
        w: dw.out,
        c: shape.c,
    };
    check_len("input", shape.len(), input.len())?;
    check_len("output", out_shape.len(), out.len())?;
    Ok((out_shape, dh, dw))
}

/// TFLite int8 `MAX_POOL_2D` (`reference_integer_ops::MaxPool`) on one
/// NHWC image; returns the output shape `(out_h, out_w, C)`. The largest
/// `q` of the window's positions inside the input, clamped to the fused
/// activation's `act = (min, max)` ([`activation_range`](super::activation_range)
/// of the output, whose quantization TFLite requires to equal the
/// input's).
///
/// Errors (in this order): a zero filter size or stride, `C = 0`, or
/// `min > max` → [`Error::Unsupported`]; an input too small →
/// [`Error::InputTooSmall`]; lengths of `input`, `out` →
/// [`Error::BufferLength`] (`"input"`, `"output"`).
pub fn max_pool(
    input: &[i8],
    shape: Shape,
    window: Window,
    act: (i8, i8),
    out: &mut [i8],
) -> Result<Shape, Error> {
    let (out_shape, dh, dw) = pool_geometry(input, shape, window, act, out)?;
    let Window { fh, fw, sh, sw, .. } = window;
    for oy in 0..dh.out {
        for ox in 0..dw.out {
            for c in 0..shape.c {
                let mut m = i8::MIN;
                for ky in 0..fh {
                    let Some(iy) = tap(oy, ky, sh, dh, shape.h) else {
                        continue;
                    };
                    for kx in 0..fw {
                        let Some(ix) = tap(ox, kx, sw, dw, shape.w) else {
                            continue;
                        };
                        m = m.max(input[(iy * shape.w + ix) * shape.c + c]);
                    }
                }
                out[(oy * dw.out + ox) * shape.c + c] = clamp(i32::from(m), act.0, act.1);
            }
        }
    }
    Ok(out_shape)
}

/// TFLite int8 `AVERAGE_POOL_2D` (`reference_integer_ops::AveragePool`)
/// on one NHWC image; returns the output shape `(out_h, out_w, C)`.
///
/// The `i32` sum of the `q` of the window's positions inside the input
/// (padding neither summed nor counted), divided by their count rounding
/// half away from zero ([`rounding_average`]), clamped to `act = (min,
/// max)`. The zero point is not subtracted: TFLite requires the output's
/// quantization to equal the input's, and the average of `q - zp` is the
/// average of `q` minus `zp`.
///
/// Errors: as [`max_pool`].
pub fn avg_pool(
    input: &[i8],
    shape: Shape,
    window: Window,
    act: (i8, i8),
    out: &mut [i8],
) -> Result<Shape, Error> {
    let (out_shape, dh, dw) = pool_geometry(input, shape, window, act, out)?;
    let Window { fh, fw, sh, sw, .. } = window;
    for oy in 0..dh.out {
        for ox in 0..dw.out {
            for c in 0..shape.c {
                let mut sum = 0i32;
                // >= 1: TensorFlow's SAME never pads a whole window.
                let mut count = 0i32;
                for ky in 0..fh {
                    let Some(iy) = tap(oy, ky, sh, dh, shape.h) else {
                        continue;
                    };
                    for kx in 0..fw {
                        let Some(ix) = tap(ox, kx, sw, dw, shape.w) else {
                            continue;
                        };
                        sum = sum.wrapping_add(i32::from(input[(iy * shape.w + ix) * shape.c + c]));
                        count = count.saturating_add(1);
                    }
                }
                out[(oy * dw.out + ox) * shape.c + c] =
                    clamp(rounding_average(sum, count), act.0, act.1);
            }
        }
    }
    Ok(out_shape)
}
