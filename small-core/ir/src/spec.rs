//! The abstract layer (SMaLL Table 2): what `#[layer(...)]` declares and
//! generated layers expose as `SPEC`.

use crate::{Error, Padding};

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
    /// `1 / (1 + e^-x)` ([`crate::math::logistic`]): TFLite's LOGISTIC as
    /// a layer's activation. int8: the layer's requantization computes it
    /// ([`crate::quant::Rescale::Logistic`]), no clamp.
    Logistic,
}

impl Activation {
    /// Applies the activation to one value.
    ///
    /// ```
    /// use small_ir::Activation;
    /// assert_eq!(Activation::Relu6.apply(7.5), 6.0);
    /// assert_eq!(Activation::Relu.apply(-1.0), 0.0);
    /// assert_eq!(Activation::Logistic.apply(0.0), 0.5);
    /// ```
    pub fn apply(self, x: f32) -> f32 {
        match self {
            Activation::None => x,
            Activation::Relu => x.max(0.0),
            Activation::Relu6 => x.clamp(0.0, 6.0),
            Activation::Logistic => crate::math::logistic(x),
        }
    }
}

/// The element type of a layer's activations and weights.
///
/// Each has an accumulator type, which LOAD fills from the bias, COMPUTE
/// reduces into and STORE turns back into elements (int8: requantized).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Dtype {
    /// `f32` activations, weights, bias and accumulators.
    #[default]
    F32,
    /// `i8` activations and weights (TFLite's int8 scheme), `i32` bias and
    /// accumulators, requantized per output channel in STORE.
    I8,
}

impl Dtype {
    /// The name `#[layer(dtype = ..)]` takes: `"f32"`, `"i8"`.
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::I8 => "i8",
        }
    }
}

/// A Rust type a layer computes in: `f32`, or `i8` with `i32`
/// accumulators. Tensors, packed weights and the arch primitives are typed
/// by it; [`Element::DTYPE`] is the [`Dtype`] a [`LayerSpec`] carries.
/// `Send + Sync`: threads fill and compute disjoint parts of one tensor.
pub trait Element: Copy + Default + PartialEq + core::fmt::Debug + Send + Sync + 'static {
    /// This type's [`Dtype`].
    const DTYPE: Dtype;
    /// The accumulator of a reduction over this type, also the bias's type.
    type Acc: Copy + Default + PartialEq + core::fmt::Debug + 'static;
}

impl Element for f32 {
    const DTYPE: Dtype = Dtype::F32;
    type Acc = f32;
}

impl Element for i8 {
    const DTYPE: Dtype = Dtype::I8;
    type Acc = i32;
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

/// A layer in SMaLL's abstract-layer terms, as declared with `#[layer]`.
/// Generated layers expose theirs as `SPEC`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    pub padding: Padding,
    /// Reduction function.
    pub reduction: Reduction,
    /// Activation fused into STORE.
    pub activation: Activation,
    /// A residual tensor of the output's shape is added in STORE, before the
    /// activation (`y = act(layer(x) + skip)`, ResNet's ADD with fused ReLU).
    pub residual: bool,
    /// Element type of activations and weights.
    pub dtype: Dtype,
}

impl LayerSpec {
    /// A `fh x fw` layer of `g` groups of `fc` input and `k` output
    /// channels: stride 1, VALID padding, FMA reduction, no activation, no
    /// residual, `f32` (the defaults of `#[layer]`). Change the rest with
    /// struct update syntax:
    ///
    /// ```
    /// use small_ir::{LayerSpec, Padding};
    /// let conv = LayerSpec { sh: 2, sw: 2, padding: Padding::Same, ..LayerSpec::new(3, 3, 16, 32, 1) };
    /// assert_eq!((conv.in_channels(), conv.out_channels()), (16, 32));
    /// ```
    pub const fn new(fh: usize, fw: usize, fc: usize, k: usize, g: usize) -> Self {
        LayerSpec {
            fh,
            fw,
            fc,
            k,
            g,
            sh: 1,
            sw: 1,
            padding: Padding::Valid,
            reduction: Reduction::Fma,
            activation: Activation::None,
            residual: false,
            dtype: Dtype::F32,
        }
    }
    /// Input channels, `G * F_C`.
    pub const fn in_channels(&self) -> usize {
        self.g * self.fc
    }
    /// Output channels, `G * K`.
    pub const fn out_channels(&self) -> usize {
        self.g * self.k
    }
    /// Input and output channels, or [`Error::TooLarge`] if either
    /// overflows: for a spec built at run time.
    #[inline]
    pub const fn checked_channels(&self) -> Result<(usize, usize), Error> {
        match (self.g.checked_mul(self.fc), self.g.checked_mul(self.k)) {
            (Some(i), Some(o)) => Ok((i, o)),
            _ => Err(Error::TooLarge {
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
    /// True for a 1x1 filter at stride 1 without padding: each output
    /// pixel reads only the input pixel at its place, so the plane can be
    /// walked as one row.
    pub const fn pointwise(&self) -> bool {
        self.fh == 1 && self.fw == 1 && self.sh == 1 && self.sw == 1 && self.padding.is_none(1, 1)
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
    /// [`Error::TooLarge`] if it exceeds [`MAX_ELEMENTS`](crate::MAX_ELEMENTS).
    pub const fn checked_weights_len(&self) -> Result<usize, Error> {
        if !self.has_weights() {
            return Ok(0);
        }
        let out = match self.checked_channels() {
            Ok((_, out)) => out,
            Err(e) => return Err(e),
        };
        // Saturated taps overflow the product unless another factor is 0,
        // when the count is 0 anyway.
        crate::error::checked_elements(
            "weights (output channels x filter taps x input channels per group)",
            out,
            self.fh.saturating_mul(self.fw),
            self.fc,
        )
    }
    /// Output height and width for an input of `h x w`.
    #[inline]
    pub const fn output_dims(&self, h: usize, w: usize) -> Result<(crate::Dim, crate::Dim), Error> {
        let dh = match self.padding.height(h, self.fh, self.sh) {
            Ok(d) => d,
            Err(e) => return Err(e),
        };
        match self.padding.width(w, self.fw, self.sw) {
            Ok(dw) => Ok((dh, dw)),
            Err(e) => Err(e),
        }
    }
}
