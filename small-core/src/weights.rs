//! Storage of a layer's packed weights: owned (with `alloc`) or a
//! `'static` slice (microcontrollers: a `static` buffer, no allocator).

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

/// Packed weights and bias of a generated layer (laid out as [`crate::ir::geometry`] describes).
#[derive(Debug, Clone)]
pub enum Weights {
    /// The layer has no weights (max pool, ReLU).
    None,
    /// Owned buffer.
    #[cfg(feature = "alloc")]
    Owned(Vec<f32>),
    /// Borrowed for the program's lifetime.
    Static(&'static [f32]),
}

impl Weights {
    /// The packed buffer.
    pub fn as_slice(&self) -> &[f32] {
        match self {
            Weights::None => &[],
            #[cfg(feature = "alloc")]
            Weights::Owned(v) => v,
            Weights::Static(s) => s,
        }
    }
}

/// Expands its input only when small-core has the `alloc` feature, so
/// generated code can offer allocating constructors without knowing the
/// features of the crate it expands in.
#[cfg(feature = "alloc")]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_alloc {
    ($($t:tt)*) => { $($t)* };
}

/// See the `alloc` version.
#[cfg(not(feature = "alloc"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_alloc {
    ($($t:tt)*) => {};
}
