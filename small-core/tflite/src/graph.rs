//! Questions about the graph that both the loader (`small_core::load`)
//! and the generator (`small-codegen`) ask, answered once: which tensor a
//! view stands for, who reads a tensor, and which operators fold into a
//! layer (a PAD into the next convolution's padding, a MEAN as a global
//! average pool).

use crate::{DType, Model, OpKind, Operator};
use alloc::vec::Vec;
use small_ir::Padding;

impl Model {
    /// The tensor `t` views: through RESHAPE and SQUEEZE outputs (the same
    /// data in the blocked layout when the dims agree, which the
    /// generator checks) back to the tensor they read.
    pub fn view_source(&self, mut t: usize) -> usize {
        // Bounded: a well-formed graph is acyclic, but a file need not be.
        for _ in 0..self.operators().len() {
            let Some(v) = self.operators().iter().find(|o| {
                matches!(o.kind, OpKind::Reshape | OpKind::Squeeze) && o.outputs.first() == Some(&t)
            }) else {
                break;
            };
            match v.input(0) {
                Some(i) => t = i,
                None => break,
            }
        }
        t
    }

    /// How many operators read tensor `t` (an operator reading it twice
    /// counts once), plus one if it is a graph output.
    pub fn readers(&self, t: usize) -> usize {
        let ops = self
            .operators()
            .iter()
            .filter(|o| o.inputs.contains(&Some(t)))
            .count();
        ops + usize::from(self.outputs().contains(&t))
    }

    /// The operator that writes tensor `t`, if any.
    pub fn writer(&self, t: usize) -> Option<&Operator> {
        self.operators().iter().find(|o| o.outputs.contains(&t))
    }

    /// A PAD's amounts as an explicit padding, if it pads height and
    /// width only, with zeros (int8: the zero point, input and output
    /// quantized alike): a PAD of two inputs (no constant) whose amounts
    /// are a constant `[4, 2]` tensor with zero batch and channel rows.
    pub fn pad_amounts(&self, pad: &Operator) -> Option<Padding> {
        let (x, amounts, y) = (pad.input(0)?, pad.input(1)?, *pad.outputs.first()?);
        if pad.kind != OpKind::Pad || pad.inputs.len() != 2 {
            return None;
        }
        let (tx, ty) = (self.tensor(x)?, self.tensor(y)?);
        if tx.dtype != ty.dtype || (tx.dtype == DType::Int8 && tx.quantization != ty.quantization) {
            return None;
        }
        let p = self.tensor_i32(amounts).ok()?;
        let p: Vec<usize> = p
            .iter()
            .map(|&a| usize::try_from(a).ok())
            .collect::<Option<_>>()?;
        match p[..] {
            [0, 0, top, bottom, left, right, 0, 0] if tx.shape.len() == 4 => {
                Some(Padding::Explicit {
                    top,
                    bottom,
                    left,
                    right,
                })
            }
            _ => None,
        }
    }

    /// For a CONV_2D or DEPTHWISE_CONV_2D `op` that reads the output of a
    /// PAD of zeros ([`Model::pad_amounts`]) that nothing else reads: the
    /// tensor the PAD reads, and `op`'s padding on it, the PAD's amounts
    /// plus `op`'s own; `Padding::Same` where the sum is exactly the SAME
    /// padding (TensorFlow's split), so that such a pair declares as the
    /// convolution with SAME padding. A sum treats padded positions as
    /// zero, so `op` on the PAD's input with that padding computes the same
    /// values. (Pools are left out: a max pool's padding is not zero, and
    /// an average pool's does not count.)
    pub fn folded_pad(&self, op: &Operator) -> Option<(usize, Padding)> {
        if !matches!(op.kind, OpKind::Conv2d | OpKind::DepthwiseConv2d) {
            return None;
        }
        let padded = op.input(0)?;
        let pad = self.writer(padded).filter(|p| p.kind == OpKind::Pad)?;
        let Padding::Explicit {
            top,
            bottom,
            left,
            right,
        } = self.pad_amounts(pad)?
        else {
            return None;
        };
        if self.readers(padded) != 1 {
            return None;
        }
        let x = pad.input(0)?;
        let [1, h, w, _] = self.tensor(x)?.shape[..] else {
            return None;
        };
        let (fh, fw) = match self.tensor(op.input(1)?)?.shape[..] {
            [_, fh, fw, _] => (fh, fw),
            _ => return None,
        };
        let (sh, sw) = op.options.stride?;
        let own = op.options.padding?;
        // `op`'s own padding on the padded plane.
        let (ph, pw) = (h + top + bottom, w + left + right);
        let (oh, ow) = (own.height(ph, fh, sh).ok()?, own.width(pw, fw, sw).ok()?);
        let sums = [
            top + oh.before,
            bottom + oh.after,
            left + ow.before,
            right + ow.after,
        ];
        let (same_h, same_w) = (
            Padding::Same.height(h, fh, sh).ok()?,
            Padding::Same.width(w, fw, sw).ok()?,
        );
        let padding = match sums {
            s if s == [same_h.before, same_h.after, same_w.before, same_w.after] => Padding::Same,
            [0, 0, 0, 0] => Padding::Valid,
            [top, bottom, left, right] => Padding::Explicit {
                top,
                bottom,
                left,
                right,
            },
        };
        Some((x, padding))
    }

    /// The padding `op` (a convolution or pool) applies to the tensor it
    /// reads, a folded PAD's included ([`Model::folded_pad`]).
    pub fn padding(&self, op: &Operator) -> Option<Padding> {
        match self.folded_pad(op) {
            Some((_, p)) => Some(p),
            None => op.options.padding,
        }
    }

    /// The tensor `op` reads as its input `0`: a folded PAD's input
    /// ([`Model::folded_pad`]) in place of the PAD's output.
    pub fn main_input(&self, op: &Operator) -> Option<usize> {
        match self.folded_pad(op) {
            Some((x, _)) => Some(x),
            None => op.input(0),
        }
    }

    /// For a MEAN, whether it averages height and width of an `[1, H, W,
    /// C]` tensor (its axes `[1, 2]`, in either order), a global average
    /// pool.
    pub fn is_spatial_mean(&self, op: &Operator) -> bool {
        let axes = op.input(1).and_then(|a| self.tensor_i32(a).ok());
        let rank4 = op
            .input(0)
            .and_then(|x| self.tensor(x))
            .is_some_and(|t| t.shape.len() == 4);
        op.kind == OpKind::Mean
            && rank4
            && matches!(axes.as_deref(), Some([1, 2] | [2, 1] | [-3, -2] | [-2, -3]))
    }
}
