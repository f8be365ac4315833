//! Storage of a layer's packed weights: owned (with `alloc`) or a
//! `'static` slice (microcontrollers: a `static` buffer, no allocator).

#[cfg(feature = "alloc")]
use crate::Aligned;

/// Packed weights and bias of a generated layer (laid out as [`crate::ir::geometry`] describes).
#[derive(Debug, Clone)]
pub enum Weights {
    /// The layer has no weights (max pool, ReLU).
    None,
    /// Owned buffer, on a cache line (see [`Aligned`]).
    #[cfg(feature = "alloc")]
    Owned(Aligned<f32>),
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

/// Packed weights and per-channel rows of a generated `i8` layer: the
/// tiles ([`crate::ir::geometry::tiles_at`]) and the rows of
/// [`crate::ir::quant::row`].
#[derive(Debug, Clone)]
pub enum Int8Weights {
    /// Owned buffers.
    #[cfg(feature = "alloc")]
    Owned {
        /// Per-channel rows, on a cache line (see [`Aligned`]).
        acc: Aligned<i32>,
        /// Weight tiles, on a cache line.
        tiles: Aligned<i8>,
    },
    /// Borrowed for the program's lifetime.
    Static {
        /// Per-channel rows.
        acc: &'static [i32],
        /// Weight tiles.
        tiles: &'static [i8],
    },
}

impl Int8Weights {
    /// The buffers as the loop nest reads them.
    pub fn packed(&self) -> crate::nest::Packed<'_, i8> {
        match self {
            #[cfg(feature = "alloc")]
            Int8Weights::Owned { acc, tiles } => crate::nest::Packed { bias: acc, tiles },
            Int8Weights::Static { acc, tiles } => crate::nest::Packed { bias: acc, tiles },
        }
    }

    /// Bytes of weights and per-channel data.
    pub fn bytes(&self) -> usize {
        let p = self.packed();
        p.tiles.len() + 4 * p.bias.len()
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
