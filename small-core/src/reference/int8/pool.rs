//! Int8 pooling: max and average (TFLite semantics at the border).

use super::{check_range, clamp};
use crate::Error;
use crate::reference::walk::Geometry;
use crate::reference::{Shape, Window};
use small_ir::quant::rounding_average;

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
    let geometry = Geometry::pool(input, shape, window, check_range(act.0, act.1), out)?;
    geometry.walk(
        out,
        i8::MIN,
        |m, i, _| m.max(input[i]),
        |_, m| clamp(i32::from(m), act.0, act.1),
    );
    Ok(geometry.output)
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
    let geometry = Geometry::pool(input, shape, window, check_range(act.0, act.1), out)?;
    // The count is >= 1: TensorFlow's SAME never pads a whole window.
    geometry.walk(
        out,
        (0i32, 0i32),
        |(sum, count), i, _| {
            (
                sum.wrapping_add(i32::from(input[i])),
                count.saturating_add(1),
            )
        },
        |_, (sum, count)| clamp(rounding_average(sum, count), act.0, act.1),
    );
    Ok(geometry.output)
}
