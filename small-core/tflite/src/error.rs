//! What can be wrong with a file.

use alloc::string::String;
use core::fmt;

/// A `.tflite` file that cannot be read, or data it does not hold in the
/// form asked for. `small_core::load::LoadError` converts from it
/// variant by variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The file is not a valid model: `what` was being read, `detail`
    /// says what is wrong with it.
    Malformed {
        /// The part of the file.
        what: String,
        /// What is wrong.
        detail: String,
    },
    /// A tensor has an element type that cannot be used here.
    DType {
        /// Tensor name.
        tensor: String,
        /// Types accepted.
        expected: &'static str,
        /// Type in the file.
        actual: String,
    },
    /// An operator's option differs from what is asked of it
    /// ([`Operator::activation`](crate::Operator::activation)).
    Mismatch {
        /// The operator (`op 3 CONV_2D`).
        layer: String,
        /// Which property.
        what: &'static str,
        /// What is supported.
        expected: String,
        /// Value in the file.
        actual: String,
    },
    /// A tensor or operator is absent.
    Missing {
        /// What is missing.
        what: String,
    },
    /// Reading the file failed.
    Io {
        /// Path.
        path: String,
        /// The OS error.
        detail: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Malformed { what, detail } => write!(f, "malformed {what}: {detail}"),
            Error::DType {
                tensor,
                expected,
                actual,
            } => write!(f, "tensor `{tensor}`: expected {expected}, found {actual}"),
            Error::Mismatch {
                layer,
                what,
                expected,
                actual,
            } => write!(f, "{layer}: {what} declared {expected}, file has {actual}"),
            Error::Missing { what } => write!(f, "missing {what}"),
            Error::Io { path, detail } => write!(f, "cannot read {path}: {detail}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}
