//! Run-time descriptions of a generated layer: its reduction, its fused
//! activation and the register blocking the proc macro chose for each arch.

use crate::Arch;

/// How a layer reduces its window (SMaLL Table 2's reduction function).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// Multiply by weights and sum (convolution, depthwise, FC).
    Fma,
    /// Maximum (max pool; ReLU is a 1x1 max with a ReLU epilogue).
    Max,
    /// Mean over the valid (non-padded) positions of the window, as
    /// TensorFlow's average pool: padding is not counted.
    Avg,
}

/// Activation fused into a layer's STORE phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Activation {
    /// Identity.
    #[default]
    None,
    /// `max(x, 0)`.
    Relu,
    /// `min(max(x, 0), 6)`.
    Relu6,
}

impl Activation {
    /// Applies the activation to one value.
    ///
    /// ```
    /// use small_core::Activation;
    /// assert_eq!(Activation::Relu6.apply(7.5), 6.0);
    /// assert_eq!(Activation::Relu.apply(-1.0), 0.0);
    /// ```
    pub fn apply(self, x: f32) -> f32 {
        match self {
            Activation::None => x,
            Activation::Relu => x.max(0.0),
            Activation::Relu6 => x.clamp(0.0, 6.0),
        }
    }
}

/// Which micro-kernel family a layer uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelKind {
    /// Channel-mixing reductions (convolution, group convolution,
    /// pointwise, FC): an input scalar is broadcast and multiplied into a
    /// vector of `K_b` output channels' weights.
    Broadcast,
    /// Per-channel reductions (`fc = 1, k = 1`: depthwise, pooling, ReLU):
    /// a vector of `G_b` channels of the input meets a vector of weights
    /// of the same channels.
    Channelwise,
}

/// The register blocking chosen for one arch (SMaLL §4.2.1): each kernel
/// call updates an `O_wb x (G_b * K_b)` tile of the output held in
/// `accumulators` vector registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocking {
    /// The arch this blocking is for.
    pub arch: Arch,
    /// Kernel family.
    pub kind: KernelKind,
    /// Output pixels along the width per tile, `O_wb`.
    pub o_wb: usize,
    /// Groups per tile, `G_b` (channelwise kernels: channels per tile).
    pub g_b: usize,
    /// Output channels per group per tile, `K_b`.
    pub k_b: usize,
    /// Input channels per kernel step, `F_Cb`.
    pub f_cb: usize,
    /// Output channels per tile, `TC` (`G_b * K_b` for ungrouped layers).
    pub tc: usize,
    /// Vector registers across the tile's channels.
    pub vectors: usize,
    /// Accumulator registers (`o_wb * vectors`).
    pub accumulators: usize,
    /// Registers the tile uses in total (accumulators, weights, inputs).
    pub registers: usize,
}

/// A layer in SMaLL's abstract-layer terms, as declared with `#[layer]`.
/// Generated layers expose theirs as `SPEC`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerSpec {
    /// Filter height `F_H`.
    pub fh: usize,
    /// Filter width `F_W`.
    pub fw: usize,
    /// Input channels per group `F_C`.
    pub fc: usize,
    /// Output channels per group `K`.
    pub k: usize,
    /// Groups `G`.
    pub g: usize,
    /// Vertical stride `S_H`.
    pub sh: usize,
    /// Horizontal stride `S_W`.
    pub sw: usize,
    /// Border handling.
    pub padding: crate::Padding,
    /// Reduction function.
    pub reduction: Reduction,
    /// Activation fused into STORE.
    pub activation: Activation,
    /// A residual tensor of the output's shape is added in STORE, before the
    /// activation (`y = act(layer(x) + skip)`, ResNet's ADD with fused ReLU).
    pub residual: bool,
}

impl LayerSpec {
    /// Input channels, `G * F_C`.
    pub const fn in_channels(&self) -> usize {
        self.g * self.fc
    }
    /// Output channels, `G * K`.
    pub const fn out_channels(&self) -> usize {
        self.g * self.k
    }
    /// Input and output channels, or [`Error::TooLarge`](crate::Error::TooLarge)
    /// if either overflows: for a spec built at run time.
    pub const fn checked_channels(&self) -> Result<(usize, usize), crate::Error> {
        match (self.g.checked_mul(self.fc), self.g.checked_mul(self.k)) {
            (Some(i), Some(o)) => Ok((i, o)),
            _ => Err(crate::Error::TooLarge {
                what: "channels (groups x input x output channels per group)",
                dims: [self.g, self.fc, self.k],
                refused: None,
            }),
        }
    }
    /// The kernel family this layer uses.
    pub const fn kind(&self) -> KernelKind {
        if self.fc == 1 && self.k == 1 {
            KernelKind::Channelwise
        } else {
            KernelKind::Broadcast
        }
    }
    /// True if the layer has weights (FMA reduction).
    pub const fn has_weights(&self) -> bool {
        matches!(self.reduction, Reduction::Fma)
    }
    /// Number of weights in TFLite order: OHWI `[G*K][F_H][F_W][F_C]` for
    /// channel-mixing layers, `[F_H][F_W][G]` (TFLite depthwise, multiplier
    /// 1) for channelwise ones; 0 without weights.
    ///
    /// # Panics
    /// If the count overflows (a compile error for a declared layer's
    /// constant); [`Self::checked_weights_len`] returns an error instead.
    pub const fn weights_len(&self) -> usize {
        match self.checked_weights_len() {
            Ok(n) => n,
            Err(_) => panic!("a layer's weights exceed the address space (isize::MAX bytes)"),
        }
    }
    /// [`Self::weights_len`] with every product checked:
    /// [`Error::TooLarge`](crate::Error::TooLarge) if it exceeds
    /// [`MAX_ELEMENTS`](crate::MAX_ELEMENTS).
    pub const fn checked_weights_len(&self) -> Result<usize, crate::Error> {
        if !self.has_weights() {
            return Ok(0);
        }
        let out = match self.checked_channels() {
            Ok((_, out)) => out,
            Err(e) => return Err(e),
        };
        // Saturated taps overflow the product unless another factor is 0,
        // when the count is 0 anyway.
        crate::checked_elements(
            "weights (output channels x filter taps x input channels per group)",
            out,
            self.fh.saturating_mul(self.fw),
            self.fc,
        )
    }
    /// Output height and width for an input of `h x w`.
    pub fn output_dims(
        &self,
        h: usize,
        w: usize,
    ) -> Result<(crate::Dim, crate::Dim), crate::Error> {
        Ok((
            self.padding.dim("height", h, self.fh, self.sh)?,
            self.padding.dim("width", w, self.fw, self.sw)?,
        ))
    }
}
