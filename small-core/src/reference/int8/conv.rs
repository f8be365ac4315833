//! Int8 multiply-and-sum operators: (group) convolution, depthwise
//! convolution, fully connected.

use super::Requant;
use crate::Error;
use crate::reference::walk::Geometry;
use crate::reference::{Conv, Shape, Window};

/// `acc + w * (x - zp)` in `i32`, wrapping as TFLite's `int32_t` does.
fn mac(acc: i32, w: i8, x: i8, zp: i32) -> i32 {
    acc.wrapping_add(i32::from(w).wrapping_mul(i32::from(x).wrapping_sub(zp)))
}

/// TFLite int8 `CONV_2D` with per-channel (or per-tensor) weights and
/// groups (`reference_integer_ops::ConvPerChannel`) on one NHWC image.
/// Returns the output shape `(out_h, out_w, g * k)`.
///
/// Arguments as [`crate::reference::conv2d`]: `weights` OHWI
/// `[g * k][fh][fw][fc]` (zero point 0), `bias` `g * k` values or `None`.
/// Output `o` at each position: `acc = Σ w * (x - q.input_zero_point)`
/// over `(ky, kx, ci)`, taps in the padding skipped (a padded input is the
/// real value 0), plus `bias[o]`; then [`Requant`]'s output stage with
/// `q.rescale[o]` (LiteRT: [`Rescale::conv`](super::Rescale::conv) of
/// each channel's weight scale).
///
/// Errors (in this order): a zero filter size, stride, `fc`, `k` or `g`,
/// or a zero point outside `-128..=127` or `q.min > q.max` →
/// [`Error::Unsupported`]; `shape.c != g * fc` →
/// [`Error::ShapeMismatch`]; an input too small →
/// [`Error::InputTooSmall`]; lengths of `input`, `weights`, `bias`, `out`,
/// then `q.rescale` (1 or `g * k`) → [`Error::BufferLength`].
pub fn conv2d(
    input: &[i8],
    shape: Shape,
    weights: &[i8],
    bias: Option<&[i32]>,
    conv: Conv,
    q: &Requant<'_>,
    out: &mut [i8],
) -> Result<Shape, Error> {
    let params = q.check_params();
    let geometry = Geometry::conv2d(input, shape, weights, bias, conv, params, out)?;
    multiply_add(&geometry, input, weights, bias, q, out)
}

/// TFLite int8 `DEPTHWISE_CONV_2D` with per-channel (or per-tensor)
/// weights (`reference_integer_ops::DepthwiseConvPerChannel`) on one NHWC
/// image of `C` channels. Returns the output shape `(out_h, out_w, C *
/// multiplier)`.
///
/// Arguments as [`crate::reference::depthwise_conv2d`]: `weights`
/// `[1][fh][fw][C * multiplier]`, output channel `o = c * multiplier + m`
/// reads input channel `c`. Each output: `Σ w * (x - q.input_zero_point)`
/// over `(ky, kx)` inside the input, plus `bias[o]`, then the output stage
/// with `q.rescale[o]`.
///
/// Errors (in this order): a zero filter size, stride or `multiplier`,
/// `C = 0`, or unsupported quantization parameters →
/// [`Error::Unsupported`]; an input too small →
/// [`Error::InputTooSmall`]; lengths of `input`, `weights`, `bias`, `out`,
/// then `q.rescale` (1 or `C * multiplier`) → [`Error::BufferLength`].
#[allow(clippy::too_many_arguments)] // the f32 layer's arguments plus `q`
pub fn depthwise_conv2d(
    input: &[i8],
    shape: Shape,
    weights: &[i8],
    bias: Option<&[i32]>,
    window: Window,
    multiplier: usize,
    q: &Requant<'_>,
    out: &mut [i8],
) -> Result<Shape, Error> {
    let params = q.check_params();
    let geometry =
        Geometry::depthwise_conv2d(input, shape, weights, bias, window, multiplier, params, out)?;
    multiply_add(&geometry, input, weights, bias, q, out)
}

/// TFLite int8 `FULLY_CONNECTED` (`reference_integer_ops::FullyConnected`,
/// or `FullyConnectedPerChannel` with one rescale per output):
/// `W` row-major `[outputs][inputs]`, `inputs = input.len()`, `outputs =
/// out.len()`. Output `o`: `Σ_i W[o][i] * (x[i] - q.input_zero_point)`
/// plus `bias[o]`, then the output stage (LiteRT:
/// [`Rescale::fully_connected`](super::Rescale::fully_connected), which
/// rounds in `f64`).
///
/// Errors: an empty `input` or `out` or unsupported quantization
/// parameters → [`Error::Unsupported`]; lengths of `weights` (`outputs *
/// inputs`), `bias` (`outputs`), then `q.rescale` (1 or `outputs`) →
/// [`Error::BufferLength`].
pub fn fully_connected(
    input: &[i8],
    weights: &[i8],
    bias: Option<&[i32]>,
    q: &Requant<'_>,
    out: &mut [i8],
) -> Result<(), Error> {
    let params = q.check_params();
    let geometry = Geometry::fully_connected(input, weights, bias, params, out)?;
    multiply_add(&geometry, input, weights, bias, q, out)?;
    Ok(())
}

/// Checks `q.rescale` (1 or one per output channel), then computes
/// every output of `geometry`: the `i32` sum of `w * (x -
/// q.input_zero_point)` over its taps, plus the bias, through `q`'s
/// output stage. Returns the output shape.
fn multiply_add(
    geometry: &Geometry,
    input: &[i8],
    weights: &[i8],
    bias: Option<&[i32]>,
    q: &Requant<'_>,
    out: &mut [i8],
) -> Result<Shape, Error> {
    q.check_rescale(geometry.output.c)?;
    let zp = q.input_zero_point;
    geometry.walk(
        out,
        0i32,
        |acc, i, w| mac(acc, weights[w], input[i], zp),
        |o, acc| q.output(o, bias.map_or(acc, |b| acc.wrapping_add(b[o]))),
    );
    Ok(geometry.output)
}
