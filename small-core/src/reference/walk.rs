//! The sliding-window walk of the reference layers, written once for the
//! `f32` layers ([`super`]) and the int8 ones ([`super::int8`]): a
//! convolution, a depthwise convolution and a pooling layer are the same
//! loop nest that differs only in its arithmetic.
//!
//! A layer first builds its [`Geometry`], which runs the argument checks
//! in the documented order and computes the output shape and padding;
//! then [`Geometry::walk`] visits every output, in NHWC order, and folds
//! in the window's taps inside the input. What is left to each layer is
//! what really differs per type: the accumulator and its start value,
//! what one tap adds to it (`f32` `acc + x * w`, int8 `acc + w * (x -
//! zp)` in `i32`, a maximum, a sum and count) and the output stage (a
//! bias, the int8 requantization and clamp, the average's division).

use super::{Conv, Shape, Window, at_least_one, check_shape};
use crate::{Dim, Error, Padding, check_dim, check_len};

/// Where filter tap `(ky, kx)` of output channel `o` starts in the
/// weights (TFLite's layouts).
#[derive(Debug, Clone, Copy)]
enum Weights {
    /// `CONV_2D`, OHWI: `[oc][fh][fw][fc]`.
    Ohwi,
    /// `DEPTHWISE_CONV_2D`, channel last: `[1][fh][fw][oc]`.
    ChannelLast,
    /// Pooling: no weights (the walk passes index 0).
    None,
}

impl Weights {
    /// Length of the weights of `oc` output channels of `fc` input
    /// channels each (saturating: see [`super`]).
    fn len(self, window: Window, fc: usize, oc: usize) -> usize {
        let taps = window.fh.saturating_mul(window.fw);
        match self {
            Weights::Ohwi => oc.saturating_mul(taps.saturating_mul(fc)),
            Weights::ChannelLast => taps.saturating_mul(oc),
            Weights::None => 0,
        }
    }

    /// Index of the first weight (input channel 0 of the group) of tap
    /// `(ky, kx)` of output channel `o`.
    fn first(self, o: usize, ky: usize, kx: usize, window: Window, fc: usize, oc: usize) -> usize {
        let Window { fh, fw, .. } = window;
        match self {
            Weights::Ohwi => ((o * fh + ky) * fw + kx) * fc,
            Weights::ChannelLast => (ky * fw + kx) * oc + o,
            Weights::None => 0,
        }
    }
}

/// The checked geometry of a sliding-window layer on one NHWC image, as
/// a (group) convolution in [`Conv`]'s terms: output channel `o` reads
/// the `fc` input channels from `(o / k) * fc` on. A depthwise
/// convolution has `fc = 1`, `k = multiplier`; a pooling layer `fc = 1`,
/// `k = 1`.
///
/// Built only by the constructors, which check every buffer length, so
/// every index [`Geometry::walk`] computes is in bounds.
#[derive(Debug, Clone, Copy)]
pub(super) struct Geometry {
    /// The input's shape.
    input: Shape,
    /// The output's shape.
    pub(super) output: Shape,
    /// Output height and the padding above / below.
    dh: Dim,
    /// Output width and the padding left / right.
    dw: Dim,
    window: Window,
    /// Input channels per group.
    fc: usize,
    /// Output channels per group.
    k: usize,
    weights: Weights,
}

/// The lengths of a layer's buffers, checked in this order.
struct Lengths {
    input: usize,
    /// `None` for a layer without weights (pooling).
    weights: Option<usize>,
    bias: Option<usize>,
    output: usize,
}

impl Lengths {
    /// The lengths of these buffers.
    fn of<T, B>(input: &[T], weights: Option<&[T]>, bias: Option<&[B]>, out: &[T]) -> Self {
        Lengths {
            input: input.len(),
            weights: weights.map(<[T]>::len),
            bias: bias.map(<[B]>::len),
            output: out.len(),
        }
    }
}

impl Geometry {
    /// The checks of `conv2d` (`f32` and int8), in their documented
    /// order: zero sizes, then `params` (the int8 quantization
    /// parameters' check; `Ok(())` for `f32`), the input channels, the
    /// spatial sizes and the buffer lengths.
    pub(super) fn conv2d<T, B>(
        input: &[T],
        shape: Shape,
        weights: &[T],
        bias: Option<&[B]>,
        conv: Conv,
        params: Result<(), Error>,
        out: &[T],
    ) -> Result<Self, Error> {
        let Conv { window, fc, k, g } = conv;
        window.validate()?;
        at_least_one("input channels per group", fc)?;
        at_least_one("output channels per group", k)?;
        at_least_one("groups", g)?;
        params?;
        check_dim("input channels", g.saturating_mul(fc), shape.c)?;
        let lengths = Lengths::of(input, Some(weights), bias, out);
        let oc = g.saturating_mul(k);
        Self::new(shape, window, fc, k, oc, Weights::Ohwi, lengths)
    }

    /// The checks of `depthwise_conv2d` (`f32` and int8), in their
    /// documented order, `params` after the zero sizes.
    #[allow(clippy::too_many_arguments)] // conv2d's, with the window and multiplier apart
    pub(super) fn depthwise_conv2d<T, B>(
        input: &[T],
        shape: Shape,
        weights: &[T],
        bias: Option<&[B]>,
        window: Window,
        multiplier: usize,
        params: Result<(), Error>,
        out: &[T],
    ) -> Result<Self, Error> {
        window.validate()?;
        at_least_one("depth multiplier", multiplier)?;
        at_least_one("channels", shape.c)?;
        params?;
        let lengths = Lengths::of(input, Some(weights), bias, out);
        let oc = shape.c.saturating_mul(multiplier);
        Self::new(
            shape,
            window,
            1,
            multiplier,
            oc,
            Weights::ChannelLast,
            lengths,
        )
    }

    /// The checks of the pooling layers (`f32` and int8), in their
    /// documented order, `params` (int8: the activation range) after the
    /// zero sizes.
    pub(super) fn pool<T>(
        input: &[T],
        shape: Shape,
        window: Window,
        params: Result<(), Error>,
        out: &[T],
    ) -> Result<Self, Error> {
        window.validate()?;
        check_shape(shape)?;
        params?;
        let lengths = Lengths {
            input: input.len(),
            weights: None,
            bias: None,
            output: out.len(),
        };
        Self::new(shape, window, 1, 1, shape.c, Weights::None, lengths)
    }

    /// The checks of `fully_connected` (`f32` and int8), in their
    /// documented order, `params` after the zero sizes. A fully
    /// connected layer is a `1 x 1` convolution of a `1 x 1` image of
    /// `inputs` channels to `outputs` channels: its OHWI weights are
    /// `[outputs][inputs]`, and the spatial and `input` / `output` length
    /// checks cannot fail.
    pub(super) fn fully_connected<T, B>(
        input: &[T],
        weights: &[T],
        bias: Option<&[B]>,
        params: Result<(), Error>,
        out: &[T],
    ) -> Result<Self, Error> {
        let (inputs, outputs) = (input.len(), out.len());
        at_least_one("inputs", inputs)?;
        at_least_one("outputs", outputs)?;
        params?;
        let shape = Shape {
            h: 1,
            w: 1,
            c: inputs,
        };
        let window = Window::new(1, 1, 1, 1, Padding::Valid);
        let lengths = Lengths::of(input, Some(weights), bias, out);
        Self::new(
            shape,
            window,
            inputs,
            outputs,
            outputs,
            Weights::Ohwi,
            lengths,
        )
    }

    /// The checks every layer ends with: the spatial sizes
    /// ([`Window::dims`]), then the buffer lengths in argument order.
    fn new(
        input: Shape,
        window: Window,
        fc: usize,
        k: usize,
        oc: usize,
        weights: Weights,
        lengths: Lengths,
    ) -> Result<Self, Error> {
        let (dh, dw) = window.dims(input.h, input.w)?;
        let output = Shape {
            h: dh.out,
            w: dw.out,
            c: oc,
        };
        check_len("input", input.len(), lengths.input)?;
        if let Some(actual) = lengths.weights {
            check_len("weights", weights.len(window, fc, oc), actual)?;
        }
        if let Some(actual) = lengths.bias {
            check_len("bias", oc, actual)?;
        }
        check_len("output", output.len(), lengths.output)?;
        Ok(Geometry {
            input,
            output,
            dh,
            dw,
            window,
            fc,
            k,
            weights,
        })
    }

    /// Computes every output, in NHWC order: its accumulator starts at
    /// `zero`, `tap(acc, input index, weight index)` folds in each filter
    /// tap inside the input, in `(ky, kx, ci)` order (taps in the padding
    /// are skipped), and `finish(output channel, acc)` is stored in
    /// `out`. A pooling layer's weight index is always 0.
    ///
    /// `out` is the slice the geometry was checked with.
    pub(super) fn walk<A: Copy, T>(
        &self,
        out: &mut [T],
        zero: A,
        mut tap: impl FnMut(A, usize, usize) -> A,
        mut finish: impl FnMut(usize, A) -> T,
    ) {
        let (input, output, dh, dw) = (self.input, self.output, self.dh, self.dw);
        let (window, fc, k) = (self.window, self.fc, self.k);
        let Window { fh, fw, sh, sw, .. } = window;
        for oy in 0..dh.out {
            for ox in 0..dw.out {
                for o in 0..output.c {
                    let first_in = (o / k) * fc; // first input channel of o's group
                    let mut acc = zero;
                    for ky in 0..fh {
                        let Some(iy) = position(oy, ky, sh, dh, input.h) else {
                            continue;
                        };
                        for kx in 0..fw {
                            let Some(ix) = position(ox, kx, sw, dw, input.w) else {
                                continue;
                            };
                            let pixel = (iy * input.w + ix) * input.c + first_in;
                            let filter = self.weights.first(o, ky, kx, window, fc, output.c);
                            for ci in 0..fc {
                                acc = tap(acc, pixel + ci, filter + ci);
                            }
                        }
                    }
                    out[(oy * dw.out + ox) * output.c + o] = finish(o, acc);
                }
            }
        }
    }
}

/// Index into the unpadded input read by filter tap `k` of output
/// position `o` along one dimension (stride `s`, padding `dim.before`,
/// input size `n`), or `None` if the tap falls in the padding.
///
/// `o * s + k` is the position in the padded input; it cannot overflow
/// because `o < dim.out` and `k < f`, so it is below `n + f`, which
/// [`Window::dims`] checked.
fn position(o: usize, k: usize, s: usize, dim: Dim, n: usize) -> Option<usize> {
    let i = (o * s + k).checked_sub(dim.before)?;
    (i < n).then_some(i)
}
