//! Multiply-and-sum layers: (group) convolution, depthwise convolution and
//! fully connected.

use super::walk::Geometry;
use super::{Conv, Shape, Window};
use crate::Error;

/// TFLite `CONV_2D` (with groups, as in SMaLL's abstract layer) on one
/// NHWC image. Returns the output shape `(out_h, out_w, g * k)` and writes
/// `out` in NHWC order.
///
/// * `input`: `shape.h * shape.w * shape.c` values, with
///   `shape.c == conv.g * conv.fc`.
/// * `weights`: OHWI, `[g * k][fh][fw][fc]`; output channel
///   `o = gi * k + kk` reads input channels `gi * fc .. (gi + 1) * fc`.
/// * `bias`: `g * k` values, or `None` for no bias.
///
/// Each output is `sum over (ky, kx, ci) of x * w`, accumulated in `f32`
/// in that order from 0, taps in the padding skipped (they are zeros),
/// plus the bias at the end.
///
/// Errors (in this order): a zero filter size, stride, `fc`, `k` or `g` →
/// [`Error::Unsupported`]; `shape.c != g * fc` →
/// [`Error::ShapeMismatch`] (`"input channels"`); an input too small →
/// [`Error::InputTooSmall`]; lengths of `input`, `weights`, `bias`, `out` →
/// [`Error::BufferLength`] (`"input"`, `"weights"`, `"bias"`, `"output"`).
pub fn conv2d(
    input: &[f32],
    shape: Shape,
    weights: &[f32],
    bias: Option<&[f32]>,
    conv: Conv,
    out: &mut [f32],
) -> Result<Shape, Error> {
    let geometry = Geometry::conv2d(input, shape, weights, bias, conv, Ok(()), out)?;
    Ok(multiply_add(&geometry, input, weights, bias, out))
}

/// TFLite `DEPTHWISE_CONV_2D` on one NHWC image of `C` channels. Returns
/// the output shape `(out_h, out_w, C * multiplier)`.
///
/// * `weights`: `[1][fh][fw][C * multiplier]` (channel-last); output
///   channel `o = c * multiplier + m` reads input channel `c`.
/// * `bias`: `C * multiplier` values, or `None`.
///
/// Each output is `sum over (ky, kx) of x * w` in `f32`, in that order,
/// plus the bias. It equals [`conv2d`] with `g = C`, `fc = 1`,
/// `k = multiplier` once the weights are reordered to OHWI.
///
/// Errors (in this order): a zero filter size, stride, or `multiplier`,
/// or `C = 0` → [`Error::Unsupported`]; an input too small →
/// [`Error::InputTooSmall`]; lengths of `input`, `weights`, `bias`, `out` →
/// [`Error::BufferLength`].
pub fn depthwise_conv2d(
    input: &[f32],
    shape: Shape,
    weights: &[f32],
    bias: Option<&[f32]>,
    window: Window,
    multiplier: usize,
    out: &mut [f32],
) -> Result<Shape, Error> {
    let geometry =
        Geometry::depthwise_conv2d(input, shape, weights, bias, window, multiplier, Ok(()), out)?;
    Ok(multiply_add(&geometry, input, weights, bias, out))
}

/// TFLite `FULLY_CONNECTED`: `out = W x + b` with `W` row-major
/// `[outputs][inputs]`, `inputs = input.len()`, `outputs = out.len()`.
///
/// An NHWC image flattens to `input` unchanged, so this equals
/// [`conv2d`] with a VALID filter covering the whole image (`fh = H`,
/// `fw = W`, `fc = C`, `k = outputs`) and the same weight array. Each
/// output is `sum over i of W[o][i] * x[i]` in `f32`, in order of `i`,
/// plus the bias.
///
/// Errors: an empty `input` or `out` → [`Error::Unsupported`]
/// (`"inputs"`, `"outputs"`); `weights.len() != outputs * inputs` or a
/// bias length other than `outputs` → [`Error::BufferLength`].
pub fn fully_connected(
    input: &[f32],
    weights: &[f32],
    bias: Option<&[f32]>,
    out: &mut [f32],
) -> Result<(), Error> {
    let geometry = Geometry::fully_connected(input, weights, bias, Ok(()), out)?;
    multiply_add(&geometry, input, weights, bias, out);
    Ok(())
}

/// Computes every output of `geometry`: the `f32` sum of `x * w` over
/// its taps, from 0 in tap order, plus the bias. Returns the output
/// shape.
fn multiply_add(
    geometry: &Geometry,
    input: &[f32],
    weights: &[f32],
    bias: Option<&[f32]>,
    out: &mut [f32],
) -> Shape {
    geometry.walk(
        out,
        0.0f32,
        |acc, i, w| acc + input[i] * weights[w],
        |o, acc| bias.map_or(acc, |b| acc + b[o]),
    );
    geometry.output
}
