//! Int8 multiply-and-sum operators: (group) convolution, depthwise
//! convolution, fully connected.

use super::Requant;
use crate::reference::{Conv, Shape, Window, at_least_one, tap};
use crate::{Error, check_dim, check_len};

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
    let Conv { window, fc, k, g } = conv;
    window.validate()?;
    at_least_one("input channels per group", fc)?;
    at_least_one("output channels per group", k)?;
    at_least_one("groups", g)?;
    q.check_params()?;
    check_dim("input channels", g.saturating_mul(fc), shape.c)?;
    let (dh, dw) = window.dims(shape.h, shape.w)?;
    let oc = g.saturating_mul(k);
    let out_shape = Shape {
        h: dh.out,
        w: dw.out,
        c: oc,
    };
    check_len("input", shape.len(), input.len())?;
    let taps = window.fh.saturating_mul(window.fw).saturating_mul(fc);
    check_len("weights", oc.saturating_mul(taps), weights.len())?;
    if let Some(b) = bias {
        check_len("bias", oc, b.len())?;
    }
    check_len("output", out_shape.len(), out.len())?;
    q.check_rescale(oc)?;

    let Window { fh, fw, sh, sw, .. } = window;
    let zp = q.input_zero_point;
    for oy in 0..dh.out {
        for ox in 0..dw.out {
            for o in 0..oc {
                let first_in = (o / k) * fc; // first input channel of o's group
                let mut acc = 0i32;
                for ky in 0..fh {
                    let Some(iy) = tap(oy, ky, sh, dh, shape.h) else {
                        continue;
                    };
                    for kx in 0..fw {
                        let Some(ix) = tap(ox, kx, sw, dw, shape.w) else {
                            continue;
                        };
                        let pixel = (iy * shape.w + ix) * shape.c + first_in;
                        let filter = ((o * fh + ky) * fw + kx) * fc;
                        for ci in 0..fc {
                            acc = mac(acc, weights[filter + ci], input[pixel + ci], zp);
                        }
                    }
                }
                if let Some(b) = bias {
                    acc = acc.wrapping_add(b[o]);
                }
                out[(oy * dw.out + ox) * oc + o] = q.output(o, acc);
            }
        }
    }
    Ok(out_shape)
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
    window.validate()?;
    at_least_one("depth multiplier", multiplier)?;
    at_least_one("channels", shape.c)?;
    q.check_params()?;
    let (dh, dw) = window.dims(shape.h, shape.w)?;
    let oc = shape.c.saturating_mul(multiplier);
    let out_shape = Shape {
        h: dh.out,
        w: dw.out,
        c: oc,
    };
    check_len("input", shape.len(), input.len())?;
    let wlen = window.fh.saturating_mul(window.fw).saturating_mul(oc);
    check_len("weights", wlen, weights.len())?;
    if let Some(b) = bias {
        check_len("bias", oc, b.len())?;
    }
    check_len("output", out_shape.len(), out.len())?;
    q.check_rescale(oc)?;

    let Window { fh, fw, sh, sw, .. } = window;
    let zp = q.input_zero_point;
    for oy in 0..dh.out {
        for ox in 0..dw.out {
            for o in 0..oc {
                let c = o / multiplier;
                let mut acc = 0i32;
                for ky in 0..fh {
                    let Some(iy) = tap(oy, ky, sh, dh, shape.h) else {
                        continue;
                    };
                    for kx in 0..fw {
                        let Some(ix) = tap(ox, kx, sw, dw, shape.w) else {
                            continue;
                        };
                        let x = input[(iy * shape.w + ix) * shape.c + c];
                        acc = mac(acc, weights[(ky * fw + kx) * oc + o], x, zp);
                    }
                }
                if let Some(b) = bias {
                    acc = acc.wrapping_add(b[o]);
                }
                out[(oy * dw.out + ox) * oc + o] = q.output(o, acc);
            }
        }
    }
    Ok(out_shape)
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
    let (inputs, outputs) = (input.len(), out.len());
    at_least_one("inputs", inputs)?;
    at_least_one("outputs", outputs)?;
    q.check_params()?;
    check_len("weights", outputs.saturating_mul(inputs), weights.len())?;
    if let Some(b) = bias {
        check_len("bias", outputs, b.len())?;
    }
    q.check_rescale(outputs)?;
    let zp = q.input_zero_point;
    for (o, (y, row)) in out.iter_mut().zip(weights.chunks_exact(inputs)).enumerate() {
        let mut acc = 0i32;
        for (&x, &w) in input.iter().zip(row) {
            acc = mac(acc, w, x, zp);
        }
        if let Some(b) = bias {
            acc = acc.wrapping_add(b[o]);
        }
        *y = q.output(o, acc);
    }
    Ok(())
}
