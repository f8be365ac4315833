//! The loop nest of SMaLL's Algorithm 1, shared by every generated layer.
//!
//! `#[layer]` generates, per arch, a [`Kernel`]: two fully unrolled tile
//! functions (Algorithm 2) and the layer's compile-time shape as consts.
//! [`run`] walks the output in tiles and calls them. It is
//! `#[inline(always)]` and generic, so each layer gets its own copy,
//! compiled inside the arch's `#[target_feature]` function with every
//! size that is known at compile time folded in.
//!
//! Algorithm 1's loops, outermost first, and where they are here:
//!
//! | Algorithm 1 | loop | here |
//! | --- | --- | --- |
//! | lines 1-2: `g` in steps of `G_b`, `k` in steps of `K_b` (parallel) | output-channel tiles of `TC = G_b x K_b` channels | `'output_channel_tiles` |
//! | line 3: `i` over `F_C` in steps of `F_Cb` | chunks of input blocks whose weights fit L1 ([`L1_WEIGHT_BYTES`]) | `'input_channel_blocks` |
//! | line 4: `j` over `O_H` | output rows | `'output_rows` |
//! | line 5: `l` over `O_W` in steps of `O_Wb` | output column tiles | `'output_column_tiles` |
//! | lines 6-12: the kernel (`x`, `y`, `ii`, `ll`, `gg`, `kk`) | filter rows and columns, the chunk's input lanes, the tile | [`Kernel::full`] / [`Kernel::edge`] / [`Kernel::narrow`] |
//!
//! Channelwise kernels (depthwise, pooling, elementwise) run the
//! output-channel tiles innermost instead, inside each column tile (see
//! [`run`]). The parallel loops of lines 1-2 are split with the output
//! rows into parts for threads ([`execute`]).
//!
//! Borders: the rows of the filter that fall outside the input are cut
//! from the kernel's row loop (`x0..x1`). A column tile whose window
//! leaves the input, or that is narrower than `O_wb` (the right edge),
//! goes to the guarded [`Kernel::edge`], which skips each tap outside
//! `lo..hi` and each output column past `w`; every other tile takes the
//! unguarded [`Kernel::full`].
//!
//! The parts: `problem` checks a call's shapes and buffers into a
//! [`Problem`] (and flattens pointwise and elementwise layers into one
//! row); `schedule` counts the units of work, splits them into parts
//! and chunks the reduction for L1; `walk` is Algorithm 1 itself.

mod problem;
mod schedule;
mod walk;

pub use problem::{Packed, Problem, Shapes, Tiling};

use crate::Element;
#[cfg(feature = "std")]
pub use schedule::MIN_PART_MACS;
pub use walk::{run, run_in_buffer};

/// The operands of one kernel call.
///
/// Input pointers are computed with wrapping arithmetic and may point
/// outside the input for border tiles; a kernel only dereferences the
/// taps that the bounds below declare valid.
#[derive(Debug, Clone, Copy)]
pub struct Tile<E: Element = f32> {
    /// Input at (first input block, row of filter row 0, column of filter column 0).
    pub inp: *const E,
    /// Elements between input rows.
    pub in_row: usize,
    /// Elements between input channel blocks.
    pub in_plane: usize,
    /// Full input blocks to reduce over (broadcast kernels).
    pub in_blocks: usize,
    /// After the full blocks, one more block with `Kernel::TAIL` lanes.
    pub tail: bool,
    /// Valid filter rows `x0..x1`.
    pub x0: usize,
    /// End of the valid filter rows.
    pub x1: usize,
    /// First valid window column (edge tiles).
    pub lo: usize,
    /// End of the valid window columns (edge tiles).
    pub hi: usize,
    /// Output columns to compute (edge tiles), at most `O_WB`.
    pub w: usize,
    /// This tile's packed weights.
    pub wts: *const E,
    /// This tile's bias (`TC` values, of the accumulator type: `i32` for
    /// `i8` layers).
    pub bias: *const E::Acc,
    /// Output at (first channel of the tile, row, first column).
    pub out: *mut E,
    /// Elements between output channel blocks.
    pub out_plane: usize,
    /// Residual input at the same position as `out` (residual layers only).
    pub res: *const E,
    /// Start from the partial sums in `out` instead of the bias (a later
    /// chunk of input blocks; broadcast kernels).
    pub partial_in: bool,
    /// Store the raw sums, without the epilogue: more chunks follow.
    pub partial_out: bool,
}

/// A generated micro-kernel for one layer on one arch.
///
/// # Safety
/// Implementations must only access memory that the [`Tile`] contract
/// declares valid: the input taps inside `x0..x1` and (in `edge`) `lo..hi`,
/// `TC` channels of weights, bias and output for `O_WB` (in `edge`: `w`)
/// columns.
pub unsafe trait Kernel {
    /// The element type of its activations and weights (`SPEC.dtype`'s).
    type Elem: Element;
    /// The layer this kernel was generated for. The loop nest reads its
    /// shape from here rather than from the [`Problem`], so every size
    /// derived from it (strides, filter, packed tile lengths, channel
    /// tiles) is a constant in each layer's copy of the nest.
    const SPEC: crate::LayerSpec;
    /// Output columns per tile `O_wb`.
    const O_WB: usize;
    /// Channels per tile (`G_b * K_b`).
    const TC: usize;
    /// Lanes of the last input block when it is partial (0 if none).
    const TAIL: usize;
    /// An interior tile: `O_WB` columns, every tap inside the input.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn full(t: &Tile<Self::Elem>);
    /// A border or right-edge tile: guarded taps and columns.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn edge(t: &Tile<Self::Elem>);
    /// True if a channelwise layer's border column tiles run
    /// [`Kernel::full`] on a copy of their window whose taps outside the
    /// input are [`Kernel::pad`] (one-lane arches, where the guarded
    /// `edge` kernel costs twice `full`), instead of `edge`.
    const PAD_EDGES: bool = false;
    /// The value of a tap outside the input that leaves the result as if
    /// the tap were skipped: 0 (depthwise `f32`), the input zero point
    /// (depthwise `i8`), the lowest value (max pooling).
    ///
    /// # Safety
    /// `t.bias` holds the layer's rows (`i8`).
    unsafe fn pad(_t: &Tile<Self::Elem>) -> Self::Elem {
        Self::Elem::default()
    }
    /// True if [`Kernel::narrow`] is specialised (one-column outputs).
    const NARROW: bool = false;
    /// A tile of an output one column wide whose window starts inside the
    /// input (fully connected layers, global pooling): same result as
    /// `edge` up to the order of the sum.
    ///
    /// # Safety
    /// As [`Kernel::full`], for a tile with `w == 1` and `lo == 0 < hi`.
    unsafe fn narrow(t: &Tile<Self::Elem>) {
        unsafe { Self::edge(t) }
    }
}

/// Runs `f(part, parts)` for the parts of a layer call: on the pool's
/// threads with `std` (`threads::execute`: `parts = min(threads, p_max)`,
/// `p_max` from the independent units and `MIN_PART_MACS`), else on
/// this thread.
#[inline]
pub fn execute<E: Element>(p: &Problem<'_, E>, f: &(dyn Fn(usize, usize) + Sync)) {
    // A band is a part already.
    if p.band.is_some() {
        return f(0, 1);
    }
    #[cfg(feature = "std")]
    crate::threads::execute(p, f);
    #[cfg(not(feature = "std"))]
    {
        let _ = p;
        f(0, 1);
    }
}
