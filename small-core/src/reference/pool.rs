//! Pooling layers: max, average (TF semantics at the border), global
//! average.

use super::walk::Geometry;
use super::{Shape, Window, check_shape};
use crate::{Error, check_len};

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
    let geometry = Geometry::pool(input, shape, window, Ok(()), out)?;
    // SAME: pad_before <= pad_total <= f - 1 and the last window starts at
    // (out - 1) * s - before <= in - 1, so no window lies entirely in the
    // padding and -inf never survives unless the input holds it.
    geometry.walk(out, f32::NEG_INFINITY, |m, i, _| m.max(input[i]), |_, m| m);
    Ok(geometry.output)
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
    let geometry = Geometry::pool(input, shape, window, Ok(()), out)?;
    // The count is >= 1, see max_pool.
    geometry.walk(
        out,
        (0.0f32, 0usize),
        |(sum, count), i, _| (sum + input[i], count + 1),
        |_, (sum, count)| sum / count as f32,
    );
    Ok(geometry.output)
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
