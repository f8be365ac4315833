//! The errors of geometry computed from run-time values: a buffer or a
//! dimension that does not match, an input too small for its filter, a
//! parameter out of range, a size past the address space. `small-core`'s
//! `Error` has a variant of the same name and fields for each, and
//! converts these with `?`.

use core::fmt;

/// A geometry error; each names the expected and the actual value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// A buffer has the wrong number of elements.
    BufferLength {
        /// Which buffer (e.g. `"input"`, `"weights"`).
        what: &'static str,
        /// Elements required.
        expected: usize,
        /// Elements given.
        actual: usize,
    },
    /// A tensor dimension does not match what the layer needs.
    ShapeMismatch {
        /// Which dimension (e.g. `"input channels"`, `"output height"`).
        what: &'static str,
        /// Value required.
        expected: usize,
        /// Value given.
        actual: usize,
    },
    /// The input is smaller than the filter under VALID padding, or empty.
    InputTooSmall {
        /// Which dimension (`"height"` or `"width"`).
        what: &'static str,
        /// Minimum size.
        minimum: usize,
        /// Size given.
        actual: usize,
    },
    /// A parameter value that this operation does not support.
    Unsupported {
        /// Which parameter.
        what: &'static str,
        /// Why, and what would be supported.
        detail: &'static str,
    },
    /// A size overflows `usize` or exceeds `isize::MAX` bytes, the most one
    /// Rust buffer can hold ([`MAX_ELEMENTS`](crate::MAX_ELEMENTS) `f32`s),
    /// or the allocator could not provide it.
    TooLarge {
        /// What was being sized, naming its three dimensions.
        what: &'static str,
        /// The dimensions, in the order `what` names them.
        dims: [usize; 3],
        /// `Some(bytes)` if the size was valid but allocating that many
        /// bytes failed; `None` if it exceeds the address space.
        refused: Option<usize>,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BufferLength {
                what,
                expected,
                actual,
            } => write!(
                f,
                "{what} buffer has {actual} elements, expected {expected}"
            ),
            Error::ShapeMismatch {
                what,
                expected,
                actual,
            } => write!(f, "{what} is {actual}, expected {expected}"),
            Error::InputTooSmall {
                what,
                minimum,
                actual,
            } => write!(f, "input {what} is {actual}, must be at least {minimum}"),
            Error::Unsupported { what, detail } => write!(f, "unsupported {what}: {detail}"),
            Error::TooLarge {
                what,
                dims: [a, b, c],
                refused,
            } => {
                write!(f, "{what} of {a} x {b} x {c} ")?;
                match refused {
                    None => f.write_str("exceeds the address space (isize::MAX bytes)"),
                    Some(bytes) => write!(f, "needs {bytes} bytes, which could not be allocated"),
                }
            }
        }
    }
}

impl core::error::Error for Error {}

/// `Ok(())` if `actual == expected`, else [`Error::BufferLength`].
pub const fn check_len(what: &'static str, expected: usize, actual: usize) -> Result<(), Error> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::BufferLength {
            what,
            expected,
            actual,
        })
    }
}

/// `Ok(())` if `actual == expected`, else [`Error::ShapeMismatch`].
pub const fn check_dim(what: &'static str, expected: usize, actual: usize) -> Result<(), Error> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::ShapeMismatch {
            what,
            expected,
            actual,
        })
    }
}

/// `Ok(n)` if `a * b * c` is at most [`MAX_ELEMENTS`](crate::MAX_ELEMENTS)
/// (an `f32` buffer of `n` elements can exist), else [`Error::TooLarge`]
/// naming `what` and the three factors.
pub const fn checked_elements(
    what: &'static str,
    a: usize,
    b: usize,
    c: usize,
) -> Result<usize, Error> {
    if let Some(ab) = a.checked_mul(b)
        && let Some(n) = ab.checked_mul(c)
        && n <= crate::MAX_ELEMENTS
    {
        return Ok(n);
    }
    Err(Error::TooLarge {
        what,
        dims: [a, b, c],
        refused: None,
    })
}
