//! Multiply-and-sum layers: (group) convolution, depthwise convolution and
//! fully connected.

use super::{Conv, Shape, Window, at_least_one, tap};
use crate::{Error, check_dim, check_len};

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
    let Conv { window, fc, k, g } = conv;
    window.validate()?;
    at_least_one("input channels per group", fc)?;
    at_least_one("output channels per group", k)?;
    at_least_one("groups", g)?;
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

    let Window { fh, fw, sh, sw, .. } = window;
    for oy in 0..dh.out {
        for ox in 0..dw.out {
            for o in 0..oc {
                let first_in = (o / k) * fc; // first input channel of o's group
                let mut acc = 0.0f32;
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
                            acc += input[pixel + ci] * weights[filter + ci];
                        }
                    }
                }
                if let Some(b) = bias {
                    acc += b[o];
                }
                out[(oy * dw.out + ox) * oc + o] = acc;
            }
        }
    }
    Ok(out_shape)
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
    window.validate()?;
    at_least_one("depth multiplier", multiplier)?;
    at_least_one("channels", shape.c)?;
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

    let Window { fh, fw, sh, sw, .. } = window;
    for oy in 0..dh.out {
        for ox in 0..dw.out {
            for o in 0..oc {
                let c = o / multiplier;
                let mut acc = 0.0f32;
                for ky in 0..fh {
                    let Some(iy) = tap(oy, ky, sh, dh, shape.h) else {
                        continue;
                    };
                    for kx in 0..fw {
                        let Some(ix) = tap(ox, kx, sw, dw, shape.w) else {
                            continue;
                        };
                        let x = input[(iy * shape.w + ix) * shape.c + c];
                        acc += x * weights[(ky * fw + kx) * oc + o];
                    }
                }
                if let Some(b) = bias {
                    acc += b[o];
                }
                out[(oy * dw.out + ox) * oc + o] = acc;
            }
        }
    }
    Ok(out_shape)
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
    let (inputs, outputs) = (input.len(), out.len());
    at_least_one("inputs", inputs)?;
    at_least_one("outputs", outputs)?;
    check_len("weights", outputs.saturating_mul(inputs), weights.len())?;
    if let Some(b) = bias {
        check_len("bias", outputs, b.len())?;
    }
    for (o, (y, row)) in out.iter_mut().zip(weights.chunks_exact(inputs)).enumerate() {
        let mut acc = 0.0f32;
        for (x, w) in input.iter().zip(row) {
            acc += x * w;
        }
        if let Some(b) = bias {
            acc += b[o];
        }
        *y = acc;
    }
    Ok(())
}
