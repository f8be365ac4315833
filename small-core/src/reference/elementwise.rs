//! Per-element and per-channel layers: activation, batch norm, bias, add,
//! concatenation, nearest-neighbour upsampling, softmax.

use super::{Shape, at_least_one, check_shape, math};
use crate::{Activation, Error, check_len};

/// Applies `act` (`None`, `Relu` = `max(x, 0)`, `Relu6` =
/// `min(max(x, 0), 6)`) to every element of `data` in place, with
/// [`Activation::apply`].
pub fn activation(data: &mut [f32], act: Activation) {
    for x in data {
        *x = act.apply(*x);
    }
}

/// The length check shared by the per-channel layers: `len` must be a
/// whole number of pixels of `c` channels. On failure `expected` is the
/// largest such length not above `len`.
fn check_pixels(what: &'static str, c: usize, len: usize) -> Result<(), Error> {
    check_len(what, len - len % c, len)
}

/// Batch normalisation (inference) in place on NHWC data of `c`
/// channels: `y = gamma[c] * (x - mean[c]) / sqrt(var[c] + eps) + beta[c]`,
/// evaluated in exactly that order in `f32` (`sqrt` correctly rounded),
/// i.e. `((gamma * (x - mean)) / sqrt(var + eps)) + beta`. Kernels that
/// fold this into one scale and shift round differently.
///
/// Errors (in this order): `c = 0` → [`Error::Unsupported`];
/// `data.len()` not a multiple of `c` → [`Error::BufferLength`]
/// (`"data"`, expected = `data.len()` rounded down to a multiple of `c`);
/// `mean`, `var`, `gamma`, `beta` not of length `c` →
/// [`Error::BufferLength`] (named after the argument).
pub fn batch_norm(
    data: &mut [f32],
    c: usize,
    mean: &[f32],
    var: &[f32],
    gamma: &[f32],
    beta: &[f32],
    eps: f32,
) -> Result<(), Error> {
    at_least_one("channels", c)?;
    check_pixels("data", c, data.len())?;
    check_len("mean", c, mean.len())?;
    check_len("var", c, var.len())?;
    check_len("gamma", c, gamma.len())?;
    check_len("beta", c, beta.len())?;
    for pixel in data.chunks_exact_mut(c) {
        for (ch, x) in pixel.iter_mut().enumerate() {
            *x = gamma[ch] * (*x - mean[ch]) / math::sqrt(var[ch] + eps) + beta[ch];
        }
    }
    Ok(())
}

/// Adds `bias[ch]` to channel `ch` of every pixel of NHWC `data` in
/// place; the channel count is `bias.len()`.
///
/// Errors: an empty `bias` → [`Error::Unsupported`] (`"channels"`);
/// `data.len()` not a multiple of `bias.len()` →
/// [`Error::BufferLength`] (`"data"`, expected as in [`batch_norm`]).
pub fn bias_add(data: &mut [f32], bias: &[f32]) -> Result<(), Error> {
    at_least_one("channels", bias.len())?;
    check_pixels("data", bias.len(), data.len())?;
    for pixel in data.chunks_exact_mut(bias.len()) {
        for (x, b) in pixel.iter_mut().zip(bias) {
            *x += b;
        }
    }
    Ok(())
}

/// Element-wise `out[i] = a[i] + b[i]` (TFLite `ADD` without
/// broadcasting).
///
/// Errors: `b` or `out` not as long as `a` → [`Error::BufferLength`]
/// (`"b"`, `"output"`, expected `a.len()`).
pub fn add(a: &[f32], b: &[f32], out: &mut [f32]) -> Result<(), Error> {
    check_len("b", a.len(), b.len())?;
    check_len("output", a.len(), out.len())?;
    for ((y, x), z) in out.iter_mut().zip(a).zip(b) {
        *y = x + z;
    }
    Ok(())
}

/// Nearest-neighbour upsampling of one NHWC image by integer factors `sh`
/// (rows) and `sw` (columns): every pixel is repeated `sh x sw` times, so
/// output pixel `(y, x)` is input pixel `(y / sh, x / sw)`. Returns the
/// output shape `(H * sh, W * sw, C)`.
///
/// This is TensorFlow's `ResizeNearestNeighbor` to `(H * sh, W * sw)`
/// with `align_corners = false` (source `floor(y * H / (H * sh))` =
/// `y / sh`); for integer factors `half_pixel_centers = true` gives the
/// same (`floor((y + 0.5) / sh)` = `y / sh`).
///
/// Errors (in this order): `sh = 0`, `sw = 0` or `C = 0` →
/// [`Error::Unsupported`]; `H = 0` or `W = 0` →
/// [`Error::InputTooSmall`]; lengths of `input`, `out` →
/// [`Error::BufferLength`] (`"input"`, `"output"`).
pub fn upsample_nearest(
    input: &[f32],
    shape: Shape,
    sh: usize,
    sw: usize,
    out: &mut [f32],
) -> Result<Shape, Error> {
    at_least_one("upsampling factor (height)", sh)?;
    at_least_one("upsampling factor (width)", sw)?;
    check_shape(shape)?;
    let out_shape = Shape {
        h: shape.h.saturating_mul(sh),
        w: shape.w.saturating_mul(sw),
        c: shape.c,
    };
    check_len("input", shape.len(), input.len())?;
    check_len("output", out_shape.len(), out.len())?;
    let c = shape.c;
    for (p, pixel) in out.chunks_exact_mut(c).enumerate() {
        let (y, x) = (p / out_shape.w, p % out_shape.w);
        let src = ((y / sh) * shape.w + x / sw) * c;
        pixel.copy_from_slice(&input[src..src + c]);
    }
    Ok(out_shape)
}

/// Concatenation along channels, TFLite's reference `Concatenation` on
/// the last axis: for every pixel, `inputs[0]`'s channels, then
/// `inputs[1]`'s, and so on. Any element type: an int8 CONCATENATION is
/// this copy (LiteRT requires every input quantized as the output).
/// Returns the output's shape.
///
/// Errors (in this order): no input → [`Error::Unsupported`]; an input
/// of another height or width than the first → [`Error::ShapeMismatch`];
/// lengths of each input, then `out` → [`Error::BufferLength`]
/// (`"input"`, `"output"`).
///
/// ```
/// use small_core::reference::{Shape, concat};
/// let (a, b) = ([1, 2], [3, 4, 5, 6]);
/// let mut y = [0; 6];
/// let s = concat(&[(&a[..], Shape { h: 1, w: 2, c: 1 }), (&b[..], Shape { h: 1, w: 2, c: 2 })], &mut y)?;
/// assert_eq!((y, s), ([1, 3, 4, 2, 5, 6], Shape { h: 1, w: 2, c: 3 }));
/// # Ok::<(), small_core::Error>(())
/// ```
pub fn concat<T: Copy>(inputs: &[(&[T], Shape)], out: &mut [T]) -> Result<Shape, Error> {
    let Some(&(_, first)) = inputs.first() else {
        return Err(Error::Unsupported {
            what: "concatenation",
            detail: "it needs at least one input",
        });
    };
    let mut c = 0usize;
    for &(_, s) in inputs {
        crate::check_dim("input height", first.h, s.h)?;
        crate::check_dim("input width", first.w, s.w)?;
        c = c.saturating_add(s.c);
    }
    for &(x, s) in inputs {
        check_len("input", s.len(), x.len())?;
    }
    let shape = Shape { c, ..first };
    check_len("output", shape.len(), out.len())?;
    // No channel, nothing to copy (and `h * w` need not fit).
    let pixels = if c == 0 { 0 } else { first.h * first.w };
    let mut at = 0;
    for p in 0..pixels {
        for &(x, s) in inputs {
            out[at..at + s.c].copy_from_slice(&x[p * s.c..(p + 1) * s.c]);
            at += s.c;
        }
    }
    Ok(shape)
}

/// Softmax over the whole of `input` (TFLite `SOFTMAX` with `beta = 1`
/// on one row), numerically stable: `out[i] = exp(x[i] - max) / sum`,
/// where `max` is the largest input and `sum` the `f32` sum of the
/// exponentials in index order. `exp` is accurate to about half an ulp
/// (see the private `math` module), so large inputs never overflow. An
/// empty input gives an empty output.
///
/// Errors: `out.len() != input.len()` → [`Error::BufferLength`]
/// (`"output"`).
pub fn softmax(input: &[f32], out: &mut [f32]) -> Result<(), Error> {
    check_len("output", input.len(), out.len())?;
    let max = input.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x));
    let mut sum = 0.0f32;
    for (y, &x) in out.iter_mut().zip(input) {
        *y = math::exp(x - max);
        sum += *y;
    }
    for y in out.iter_mut() {
        *y /= sum;
    }
    Ok(())
}
