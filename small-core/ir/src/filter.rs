//! A layer's weights as a user hands them over, tagged with their order.
//!
//! A grouped layer with one input and one output channel per group
//! (`fc = k = 1`) is both a depthwise convolution and a grouped
//! convolution, and TFLite stores the two differently: DEPTHWISE_CONV_2D
//! as `[1][F_H][F_W][G]`, CONV_2D with groups as `[G][F_H][F_W][1]`. A
//! bare slice cannot say which, so every constructor takes a [`Filter`]:
//! the values and their [`Order`]. The packer reads either order.

use crate::{Error, LayerSpec};

/// The order of a layer's weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    /// `[G*K][F_H][F_W][F_C]`: TFLite CONV_2D (grouped too: TensorFlow's
    /// converter writes grouped convolutions this way) and
    /// FULLY_CONNECTED (`[K][F_C]`); PyTorch's `[O][I][KH][KW]` after
    /// `permute(0, 2, 3, 1)`.
    Ohwi,
    /// `[F_H][F_W][G*K]`: TFLite DEPTHWISE_CONV_2D (`[1][F_H][F_W][C*M]`,
    /// output channel `c * M + m` for depth multiplier `M = K`). Only for
    /// layers with one input channel per group (`F_C = 1`).
    Depthwise,
}

impl Order {
    /// Index, in this order, of the weight joining output channel `o`,
    /// filter tap `tap` (`row * F_W + column`) and input channel `i` of
    /// `o`'s group (`i < F_C`; depthwise order has `F_C = 1`, so `i = 0`:
    /// [`Filter::check`]).
    ///
    /// ```
    /// use small_ir::{LayerSpec, filter::Order};
    /// let dw = LayerSpec::new(3, 3, 1, 1, 8); // depthwise 3x3, 8 channels
    /// assert_eq!(Order::Ohwi.index(&dw, 5, 4, 0), 5 * 9 + 4);
    /// assert_eq!(Order::Depthwise.index(&dw, 5, 4, 0), 4 * 8 + 5);
    /// ```
    pub const fn index(self, spec: &LayerSpec, o: usize, tap: usize, i: usize) -> usize {
        match self {
            Order::Ohwi => (o * spec.fh * spec.fw + tap) * spec.fc + i,
            Order::Depthwise => tap * spec.out_channels() + o,
        }
    }
}

/// A layer's weights: the values, in TFLite's element type (`f32`, or
/// `i8` for int8 layers), and their [`Order`].
///
/// ```
/// use small_ir::filter::{Filter, Order};
/// let w = [0.5f32; 9 * 8];
/// let f = Filter::depthwise(&w);
/// assert_eq!((f.order, f.values.len()), (Order::Depthwise, 72));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Filter<'a, T = f32> {
    /// Which order `values` are in.
    pub order: Order,
    /// The weights, [`LayerSpec::weights_len`] of them.
    pub values: &'a [T],
}

impl<'a, T> Filter<'a, T> {
    /// Weights in [`Order::Ohwi`] (CONV_2D, FULLY_CONNECTED).
    pub const fn ohwi(values: &'a [T]) -> Self {
        Filter {
            order: Order::Ohwi,
            values,
        }
    }

    /// Weights in [`Order::Depthwise`] (DEPTHWISE_CONV_2D).
    pub const fn depthwise(values: &'a [T]) -> Self {
        Filter {
            order: Order::Depthwise,
            values,
        }
    }

    /// No weights: the filter of layers without any (pooling).
    pub const fn none() -> Self {
        Filter {
            order: Order::Ohwi,
            values: &[],
        }
    }

    /// `Ok` if these weights fit `spec`: [`Error::BufferLength`] unless
    /// there are [`LayerSpec::weights_len`] of them, [`Error::ShapeMismatch`]
    /// for depthwise order on a layer with more than one input channel per
    /// group.
    pub const fn check(&self, spec: &LayerSpec) -> Result<(), Error> {
        let n = match spec.checked_weights_len() {
            Ok(n) => n,
            Err(e) => return Err(e),
        };
        if let Err(e) = crate::error::check_len("weights", n, self.values.len()) {
            return Err(e);
        }
        match self.order {
            Order::Depthwise if spec.has_weights() => crate::error::check_dim(
                "input channels per group (depthwise-order weights need F_C = 1)",
                1,
                spec.fc,
            ),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both orders name every weight of a layer exactly once.
    #[test]
    fn each_order_is_a_permutation() {
        for (fh, fw, fc, k, g) in [(3, 3, 1, 1, 5), (2, 3, 1, 3, 4), (3, 1, 2, 2, 3)] {
            let spec = LayerSpec::new(fh, fw, fc, k, g);
            let n = spec.weights_len();
            for order in [Order::Ohwi, Order::Depthwise] {
                if order == Order::Depthwise && fc != 1 {
                    continue;
                }
                let mut seen = [false; 128];
                for o in 0..spec.out_channels() {
                    for tap in 0..fh * fw {
                        for i in 0..fc {
                            let at = order.index(&spec, o, tap, i);
                            assert!(at < n && !seen[at], "{order:?} {spec:?} {o} {tap} {i}");
                            seen[at] = true;
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn depthwise_order_needs_one_input_channel_per_group() {
        let w = [0.0f32; 3 * 3 * 2 * 2 * 3];
        let spec = LayerSpec::new(3, 3, 2, 2, 3);
        assert_eq!(Filter::ohwi(&w).check(&spec), Ok(()));
        assert!(matches!(
            Filter::depthwise(&w).check(&spec),
            Err(Error::ShapeMismatch {
                expected: 1,
                actual: 2,
                ..
            })
        ));
        assert!(matches!(
            Filter::ohwi(&w[1..]).check(&spec),
            Err(Error::BufferLength {
                expected: 108,
                actual: 107,
                ..
            })
        ));
    }
}
