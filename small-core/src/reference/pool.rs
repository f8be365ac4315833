//! Pooling layers: max, average (TF semantics at the border), global
//! average.

use super::{Shape, Window, check_shape, tap};
use crate::{Error, check_len};

/// Checks a pooling layer's arguments; returns the output shape and the
/// per-dimension geometry.
fn pool_geometry(
    input: &[f32],
    shape: Shape,
    window: Window,
    out: &[f32],
) -> Result<(Shape, crate::Dim, crate::Dim), Error> {
    window.validate()?;
    check_shape(shape)?;
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

/// Max pool over `window` on one NHWC image; returns the output shape
/// `(out_h, out_w, C)`.
///
/// Padded positions are ignored: the maximum is over the window's
/// positions inside the input only (never 0 or -∞ from the padding; with
/// TensorFlow's SAME every window contains at least one input position).
/// NaN handling is unspecified (`f32::max`, which ignores NaN, is used).
///
/// Errors (in this order): a zero filter size or stride, or `C = 0` →
/// [`Error::Unsupported`]; an input too small →
/// [`Error::InputTooSmall`]; lengths of `input`, `out` →
/// [`Error::BufferLength`] (`"input"`, `"output"`).
pub fn max_pool(
    input: &[f32],
    shape: Shape,
    window: Window,
    out: &mut [f32],
) -> Result<Shape, Error> {
    let (out_shape, dh, dw) = pool_geometry(input, shape, window, out)?;
    let Window { fh, fw, sh, sw, .. } = window;
    for oy in 0..dh.out {
        for ox in 0..dw.out {
            for c in 0..shape.c {
                // SAME: pad_before <= pad_total <= f - 1 and the last
                // window starts at (out - 1) * s - before <= in - 1, so
                // no window lies entirely in the padding and -inf never
                // survives unless the input holds it.
                let mut m = f32::NEG_INFINITY;
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
                out[(oy * dw.out + ox) * shape.c + c] = m;
            }
        }
    }
    Ok(out_shape)
}

/// Average pool over `window` on one NHWC image, TensorFlow semantics:
/// the sum over the window's positions inside the input, divided by the
/// number of those positions (padding is neither summed nor counted).
/// Returns the output shape `(out_h, out_w, C)`.
///
/// The sum is accumulated in `f32` in `(ky, kx)` order, then divided once
/// by the count.
///
/// Errors: as [`max_pool`].
pub fn avg_pool(
    input: &[f32],
    shape: Shape,
    window: Window,
    out: &mut [f32],
) -> Result<Shape, Error> {
    let (out_shape, dh, dw) = pool_geometry(input, shape, window, out)?;
    let Window { fh, fw, sh, sw, .. } = window;
    for oy in 0..dh.out {
        for ox in 0..dw.out {
            for c in 0..shape.c {
                let mut sum = 0.0f32;
                let mut count = 0usize; // >= 1, see max_pool
                for ky in 0..fh {
                    let Some(iy) = tap(oy, ky, sh, dh, shape.h) else {
                        continue;
                    };
                    for kx in 0..fw {
                        let Some(ix) = tap(ox, kx, sw, dw, shape.w) else {
                            continue;
                        };
                        sum += input[(iy * shape.w + ix) * shape.c + c];
                        count += 1;
                    }
                }
                out[(oy * dw.out + ox) * shape.c + c] = sum / count as f32;
            }
        }
    }
    Ok(out_shape)
}

/// Mean over height and width per channel (TFLite `MEAN` over axes 1
/// and 2, or a global average pool): `out[c]` = the sum of channel `c`
/// over all pixels in `f32`, in pixel (row-major) order, divided by
/// `H * W`. `out` has `C` elements.
///
/// Errors: `C = 0` → [`Error::Unsupported`]; `H = 0` or `W = 0` →
/// [`Error::InputTooSmall`]; lengths of `input`, `out` →
/// [`Error::BufferLength`] (`"input"`, `"output"`).
pub fn global_avg_pool(input: &[f32], shape: Shape, out: &mut [f32]) -> Result<(), Error> {
    check_shape(shape)?;
    check_len("input", shape.len(), input.len())?;
    check_len("output", shape.c, out.len())?;
    let pixels = shape.h * shape.w; // <= input.len(), checked above
    for (c, mean) in out.iter_mut().enumerate() {
        let mut sum = 0.0f32;
        for p in 0..pixels {
            sum += input[p * shape.c + c];
        }
        *mean = sum / pixels as f32;
    }
    Ok(())
}
