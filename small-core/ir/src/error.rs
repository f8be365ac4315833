//! The one error type of small-rs (re-exported as `small_core::Error`).
//! Every check on run-time input returns one of these instead of
//! panicking; each message names the expected and the actual value.

use core::fmt;

/// An error from a small-rs operation.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
    /// A lane of the zero-padded last channel block is not zero.
    NonZeroPadding {
        /// Index of the first offending element in the blocked buffer.
        index: usize,
    },
    /// An `i8` weight below the smallest the arch's dot product multiplies
    /// exactly (`Machine::int8_weight_min`: -127 on AVX2). TFLite's int8
    /// weights are in -127..=127, so only a file outside its spec has one.
    WeightRange {
        /// Index of the first such weight in the filter as given.
        index: usize,
        /// Its value.
        value: i8,
        /// The smallest weight the arch takes.
        min: i8,
    },
    /// A parameter value that this operation does not support.
    Unsupported {
        /// Which parameter.
        what: &'static str,
        /// Why, and what would be supported.
        detail: &'static str,
    },
    /// `SMALL_ARCH` or an explicit request named an arch that is not registered.
    UnknownArch {
        /// The registered arches' names, separated by spaces.
        registered: &'static str,
    },
    /// The requested arch is registered but cannot run here.
    ArchUnavailable {
        /// Its name.
        name: &'static str,
    },
    /// An environment variable (`SMALL_ARCH`) names an arch that is not
    /// registered, or one this target or CPU cannot run.
    ArchVar {
        /// The variable, `"SMALL_ARCH"`.
        var: &'static str,
        /// Its value, trimmed (leaked once: the choice is made once per
        /// process).
        value: &'static str,
        /// The value names a registered arch that cannot run here.
        unavailable: bool,
        /// The arches to suggest, separated by spaces: the registered ones,
        /// or (`unavailable`) those that can run here.
        listed: &'static str,
    },
    /// A size computed from run-time dimensions overflows `usize` or
    /// exceeds `isize::MAX` bytes, the most one Rust buffer can hold
    /// ([`MAX_ELEMENTS`](crate::MAX_ELEMENTS) `f32`s), or the allocator
    /// could not provide it.
    TooLarge {
        /// What was being sized, naming its three dimensions (e.g.
        /// `"blocked tensor (channels x height x width)"`).
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
            Error::NonZeroPadding { index } => write!(
                f,
                "element {index} lies in the zero padding of the last channel block but is not 0"
            ),
            Error::WeightRange { index, value, min } => write!(
                f,
                "weight {index} is {value}, below {min}, the smallest this arch's int8 dot product \
                 multiplies exactly (TFLite's int8 weights are in -127..=127); pack the layer for \
                 another arch (e.g. SMALL_ARCH=reference)"
            ),
            Error::Unsupported { what, detail } => write!(f, "unsupported {what}: {detail}"),
            Error::UnknownArch { registered } => write!(
                f,
                "unknown arch; registered arches are: {}",
                registered.trim()
            ),
            Error::ArchUnavailable { name } => {
                write!(f, "arch `{name}` is not available on this target or CPU")
            }
            Error::ArchVar {
                var,
                value,
                unavailable,
                listed,
            } => {
                let (problem, list) = if *unavailable {
                    ("arch not available on this target or CPU", "available here")
                } else {
                    ("unknown arch", "valid")
                };
                write!(f, "{var}={value}: {problem}; {list}: {}", listed.trim())
            }
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
#[inline]
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
#[inline]
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
#[inline]
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
