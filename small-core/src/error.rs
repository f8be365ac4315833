//! The one error type of small-rs. Every check on run-time input returns
//! one of these instead of panicking; each message names the expected and
//! the actual value.

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
    /// A parameter value that this operation does not support.
    Unsupported {
        /// Which parameter.
        what: &'static str,
        /// Why, and what would be supported.
        detail: &'static str,
    },
    /// `SMALL_ARCH` or an explicit request named an arch that is not registered.
    UnknownArch,
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
            } => small_ir::Error::BufferLength {
                what,
                expected: *expected,
                actual: *actual,
            }
            .fmt(f),
            Error::ShapeMismatch {
                what,
                expected,
                actual,
            } => small_ir::Error::ShapeMismatch {
                what,
                expected: *expected,
                actual: *actual,
            }
            .fmt(f),
            Error::InputTooSmall {
                what,
                minimum,
                actual,
            } => small_ir::Error::InputTooSmall {
                what,
                minimum: *minimum,
                actual: *actual,
            }
            .fmt(f),
            Error::NonZeroPadding { index } => write!(
                f,
                "element {index} lies in the zero padding of the last channel block but is not 0"
            ),
            Error::Unsupported { what, detail } => {
                small_ir::Error::Unsupported { what, detail }.fmt(f)
            }
            Error::UnknownArch => {
                f.write_str("unknown arch; registered arches are:")?;
                for a in arch_defs::ArchId::ALL {
                    write!(f, " {}", a.name())?;
                }
                Ok(())
            }
            Error::ArchUnavailable { name } => {
                write!(f, "arch `{name}` is not available on this target or CPU")
            }
            Error::ArchVar {
                var,
                value,
                unavailable,
            } => {
                let (problem, list, arches) = if *unavailable {
                    (
                        "arch not available on this target or CPU",
                        "available here",
                        true,
                    )
                } else {
                    ("unknown arch", "valid", false)
                };
                write!(f, "{var}={value}: {problem}; {list}:")?;
                for a in arch_defs::ArchId::ALL {
                    if !arches || a.available() {
                        write!(f, " {}", a.name())?;
                    }
                }
                Ok(())
            }
            Error::TooLarge {
                what,
                dims,
                refused,
            } => small_ir::Error::TooLarge {
                what,
                dims: *dims,
                refused: *refused,
            }
            .fmt(f),
        }
    }
}

#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
impl std::error::Error for Error {}

impl From<small_ir::Error> for Error {
    fn from(e: small_ir::Error) -> Self {
        Error::from_ir(e)
    }
}

impl Error {
    /// The variant of the same name and fields as `e` (`From`, in a
    /// `const fn`).
    pub const fn from_ir(e: small_ir::Error) -> Self {
        use small_ir::Error as E;
        match e {
            E::BufferLength {
                what,
                expected,
                actual,
            } => Error::BufferLength {
                what,
                expected,
                actual,
            },
            E::ShapeMismatch {
                what,
                expected,
                actual,
            } => Error::ShapeMismatch {
                what,
                expected,
                actual,
            },
            E::InputTooSmall {
                what,
                minimum,
                actual,
            } => Error::InputTooSmall {
                what,
                minimum,
                actual,
            },
            E::Unsupported { what, detail } => Error::Unsupported { what, detail },
            E::TooLarge {
                what,
                dims,
                refused,
            } => Error::TooLarge {
                what,
                dims,
                refused,
            },
        }
    }
}
