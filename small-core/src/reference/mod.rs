//! Reference layers: the oracle that every generated kernel is tested
//! against.
//!
//! Each function here is a plain loop nest written to be obviously
//! correct, not fast. They work on one image in **NHWC** order
//! (`[H][W][C]`, TFLite's), never allocate, write into a caller-provided
//! `out` slice, and follow TensorFlow / TFLite semantics:
//!
//! * **Padding** is [`Padding::height`]'s and [`Padding::width`]'s
//!   (TensorFlow SAME / VALID: the extra row or column of an odd SAME
//!   padding goes at the bottom / right; explicit: the given amounts).
//!   Padded positions are never materialised: a convolution treats them as
//!   0, a max pool ignores them, an average pool does not count them.
//! * **Weight layouts** are TFLite's: `CONV_2D` filters are OHWI,
//!   `DEPTHWISE_CONV_2D` filters are `[1][fh][fw][C * multiplier]`,
//!   `FULLY_CONNECTED` weights are `[outputs][inputs]`.
//! * **Arithmetic** is `f32` throughout. Sums are accumulated in one `f32`
//!   accumulator starting at 0, in the natural loop order (filter row,
//!   filter column, input channel — the NHWC-flattened order of the
//!   window), with a separate multiply and add (Rust never contracts them
//!   into a fused multiply-add); a bias is added after the sum. Generated
//!   kernels block the loops differently and use FMA instructions, so
//!   they agree with the oracle up to rounding: compare with a tolerance
//!   that scales with the number of terms, not bit for bit.
//!
//! The int8 operators, TFLite's integer arithmetic bit for bit, are in
//! [`int8`].
//!
//! Every size is checked before anything is written; nothing panics on
//! bad input. The checks run in this order, and the first failure is
//! returned:
//!
//! 1. zero parameters (filter, stride, channel counts, factors) →
//!    [`Error::Unsupported`];
//! 2. channel counts that disagree → [`Error::ShapeMismatch`];
//! 3. spatial sizes (empty input, input smaller than the filter under
//!    VALID) → [`Error::InputTooSmall`], from [`Padding::height`] / [`Padding::width`];
//! 4. buffer lengths, in argument order (input, weights, bias, output) →
//!    [`Error::BufferLength`].
//!
//! Expected lengths are computed with saturating multiplication: a
//! product that would overflow becomes `usize::MAX`, which no `f32` slice
//! can have, so the length check fails instead of overflowing. Once the
//! lengths are checked, every index used is below a checked length.

use crate::{Dim, Dims, Error, Padding};

mod conv;
mod elementwise;
pub mod int8;
#[cfg(feature = "alloc")]
mod layer;
pub(crate) use small_ir::math;
mod pool;
mod walk;

#[cfg(test)]
mod tests_conv;
#[cfg(test)]
mod tests_elementwise;
#[cfg(test)]
mod tests_pool;

pub use conv::{conv2d, depthwise_conv2d, fully_connected};
pub use elementwise::{activation, add, batch_norm, bias_add, concat, softmax, upsample_nearest};
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use layer::{first_mismatch, layer, tolerances};
pub use pool::{avg_pool, global_avg_pool, max_pool};

/// NHWC shape of one image: `h` rows of `w` pixels of `c` channels.
///
/// Written with its fields named, `Shape { h, w, c }`: like
/// [`Dims`], the shape of a blocked tensor, it deliberately
/// has no positional constructor, so that an NHWC `(h, w, c)` can never be
/// swapped with a blocked tensor's `(c, h, w)` or a transposed `(w, h, c)`
/// without it showing. It converts from and to a `Dims` (the same three
/// sizes, under the same names).
///
/// ```
/// use small_core::{Dims, reference::Shape};
/// // 2 rows of 5 pixels of 3 channels.
/// let s = Shape { h: 2, w: 5, c: 3 };
/// assert_eq!(s.len(), 2 * 5 * 3);
/// let d = Dims { c: 3, h: 2, w: 5 };
/// assert_eq!(Shape::from(d), s);
/// assert_eq!(Dims::from(s), d);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Height (rows).
    pub h: usize,
    /// Width (pixels per row).
    pub w: usize,
    /// Channels per pixel (fastest-varying).
    pub c: usize,
}

impl Shape {
    /// Number of elements, `h * w * c`. Saturates at `usize::MAX` (which
    /// no `f32` slice can have) instead of overflowing.
    pub const fn len(&self) -> usize {
        self.h.saturating_mul(self.w).saturating_mul(self.c)
    }

    /// `true` if the shape has no elements.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl From<Dims> for Shape {
    /// The NHWC shape of a tensor of these dims (the same `c`, `h`, `w`).
    fn from(Dims { c, h, w }: Dims) -> Self {
        Shape { h, w, c }
    }
}

impl From<Shape> for Dims {
    /// The dims of a blocked tensor of this NHWC shape (the same `c`, `h`,
    /// `w`).
    fn from(Shape { h, w, c }: Shape) -> Self {
        Dims { c, h, w }
    }
}

/// Geometry of a sliding window: filter `fh x fw`, strides `sh` (rows)
/// and `sw` (columns), and the border handling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Filter height.
    pub fh: usize,
    /// Filter width.
    pub fw: usize,
    /// Stride along the height.
    pub sh: usize,
    /// Stride along the width.
    pub sw: usize,
    /// SAME or VALID.
    pub padding: Padding,
}

impl Window {
    /// A window of `fh x fw` moved by `sh` rows and `sw` columns.
    pub const fn new(fh: usize, fw: usize, sh: usize, sw: usize, padding: Padding) -> Self {
        Window {
            fh,
            fw,
            sh,
            sw,
            padding,
        }
    }

    /// Output height and width (with their padding) for an input of
    /// `h x w`, from [`Padding::height`] and [`Padding::width`].
    ///
    /// Errors: a zero filter size or stride → [`Error::Unsupported`]; an
    /// empty input or, under VALID, one smaller than the filter →
    /// [`Error::InputTooSmall`].
    ///
    /// ```
    /// use small_core::{Dim, Padding, reference::Window};
    /// // KWS DS-CNN's first layer: 49x10 input, 10x4 filter, stride 2, SAME.
    /// let (h, w) = Window::new(10, 4, 2, 2, Padding::Same).dims(49, 10)?;
    /// assert_eq!(h, Dim { out: 25, before: 4, after: 5 });
    /// assert_eq!(w, Dim { out: 5, before: 1, after: 1 });
    /// # Ok::<(), small_core::Error>(())
    /// ```
    pub fn dims(&self, h: usize, w: usize) -> Result<(Dim, Dim), Error> {
        self.validate()?;
        // Padding::height computes (out - 1) * s + f with (out - 1) * s < input,
        // so input + f not overflowing keeps it from overflowing; it also
        // bounds every padded position `o * s + k` the layers compute.
        if h.checked_add(self.fh).is_none() {
            return Err(Error::Unsupported {
                what: "filter height",
                detail: "filter height plus input height overflows usize",
            });
        }
        if w.checked_add(self.fw).is_none() {
            return Err(Error::Unsupported {
                what: "filter width",
                detail: "filter width plus input width overflows usize",
            });
        }
        Ok((
            self.padding.height(h, self.fh, self.sh)?,
            self.padding.width(w, self.fw, self.sw)?,
        ))
    }

    /// Rejects zero filter sizes and strides.
    fn validate(&self) -> Result<(), Error> {
        at_least_one("filter height", self.fh)?;
        at_least_one("filter width", self.fw)?;
        at_least_one("stride height", self.sh)?;
        at_least_one("stride width", self.sw)
    }
}

/// A (group) convolution in SMaLL's abstract-layer terms: `g` groups,
/// each reading `fc` input channels and writing `k` output channels.
///
/// Input channels = `g * fc`, output channels = `g * k`; output channel
/// `o = gi * k + kk` reads input channels `gi * fc .. (gi + 1) * fc`.
/// An ordinary convolution has `g = 1`; a depthwise one `fc = 1`,
/// `g = C`, `k = multiplier`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conv {
    /// Filter size, strides and padding.
    pub window: Window,
    /// Input channels per group.
    pub fc: usize,
    /// Output channels per group.
    pub k: usize,
    /// Number of groups.
    pub g: usize,
}

impl Conv {
    /// A convolution of `g` groups of `fc` input and `k` output channels.
    pub const fn new(window: Window, fc: usize, k: usize, g: usize) -> Self {
        Conv { window, fc, k, g }
    }
}

/// The `detail` of every [`Error::Unsupported`] for a zero size.
pub(crate) const AT_LEAST_ONE: &str = "must be at least 1";

/// [`Error::Unsupported`] if `value` is 0.
fn at_least_one(what: &'static str, value: usize) -> Result<(), Error> {
    if value == 0 {
        Err(Error::Unsupported {
            what,
            detail: AT_LEAST_ONE,
        })
    } else {
        Ok(())
    }
}

/// Checks a shape for the layers without a channel-count parameter:
/// height and width ≥ 1 ([`Error::InputTooSmall`], as [`Padding::height`]
/// reports it) and channels ≥ 1 ([`Error::Unsupported`]).
fn check_shape(shape: Shape) -> Result<(), Error> {
    at_least_one("channels", shape.c)?;
    for (what, actual) in [("height", shape.h), ("width", shape.w)] {
        if actual == 0 {
            return Err(Error::InputTooSmall {
                what,
                minimum: 1,
                actual,
            });
        }
    }
    Ok(())
}
