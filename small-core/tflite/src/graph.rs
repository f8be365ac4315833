//! Questions about the graph that both the loader (`small_core::load`)
//! and the generator (`small-codegen`) ask, answered once: which tensor a
//! view stands for, who reads a tensor, and which operators fold into a
//! layer (a PAD into the next convolution's padding, a MEAN as a global
//! average pool).

use crate::{DType, Model, OpKind, Operator};
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

    /// For a convolution `op` with VALID padding that reads the output of
    /// a PAD, the tensor the PAD reads, when the PAD is exactly the SAME
    /// padding of `op` on it: zeros (the zero point: input and output
    /// quantized alike) on height and width only, `before = total / 2`
    /// and `after = total - before`, `total` as TensorFlow computes it;
    /// and nothing else reads the padded tensor. Then `op` on the PAD's
    /// input with SAME padding computes the same values. (Pools are left
    /// out: a max pool's SAME border is not zero, and an average pool's
    /// does not count.)
    pub fn folded_pad(&self, op: &Operator) -> Option<usize> {
        if !matches!(op.kind, OpKind::Conv2d | OpKind::DepthwiseConv2d)
            || op.options.padding != Some(Padding::Valid)
        {
            return None;
        }
        let padded = op.input(0)?;
        let pad = self.writer(padded).filter(|p| p.kind == OpKind::Pad)?;
        let (x, amounts) = (pad.input(0)?, pad.input(1)?);
        if pad.inputs.len() != 2 || self.readers(padded) != 1 {
            return None;
        }
        let (tx, ty) = (self.tensor(x)?, self.tensor(padded)?);
        if tx.dtype != ty.dtype || (tx.dtype == DType::Int8 && tx.quantization != ty.quantization) {
            return None;
        }
        let p = self.tensor_i32(amounts).ok()?;
        let [1, h, w, _] = tx.shape[..] else {
            return None;
        };
        let filter = self.tensor(op.input(1)?)?;
        let (fh, fw) = match filter.shape[..] {
            [_, fh, fw, _] => (fh, fw),
            _ => return None,
        };
        let (sh, sw) = op.options.stride?;
        let same = |n: usize, f: usize, s: usize| {
            let d = Padding::Same.dim("", n, f, s).ok()?;
            Some([d.before as i32, d.after as i32])
        };
        let want = [[0, 0], same(h, fh, sh)?, same(w, fw, sw)?, [0, 0]];
        (p.len() == 8 && p.chunks(2).zip(want).all(|(a, b)| a == b)).then_some(x)
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
