//! [`Network`]: one interface over the generated networks, and
//! [`verify_wiring`] against a `.tflite` file (std only).

use super::{ad, dscnn, resnet8, sweep, vww, vww1};
use small_core::load::{LoadError, WeightSource};
use small_core::model::{Dims, LayerInfo};
use small_core::{Arch, Blocked, Blocking, Error};

/// What a network's output means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// Logits; the published model ends in SOFTMAX.
    Softmax,
    /// A reconstruction of the input (autoencoder).
    Reconstruction,
}

/// One interface over the generated networks.
pub trait Network: Sized {
    /// Short name (`"resnet8"`).
    const NAME: &'static str;
    /// The trained `.tflite` file in the MLPerf Tiny models directory, if any.
    const FILE: Option<&'static str>;
    /// The task's output.
    const HEAD: Head;
    /// Layers in execution order.
    const LAYERS: &'static [LayerInfo];
    /// Tensor dims (input first).
    const DIMS: &'static [Dims];
    /// Arena size in `f32`s.
    const ARENA: usize;
    /// Sum of the tensor sizes live at once at the busiest step: no plan can
    /// use less.
    const LOWER_BOUND: usize;
    /// Id of the output tensor.
    const OUTPUT: usize;
    /// Multiply-accumulates per inference.
    const MACS: usize;
    /// Loads and packs every layer's weights.
    fn load(source: &dyn WeightSource, arch: Arch) -> Result<Self, LoadError>;
    /// Packed weight `f32`s of every layer for `arch`.
    fn packed_len(arch: Arch) -> usize;
    /// Packs every layer's weights for `arch` (which need not run here)
    /// into one buffer, for `from_packed` on the target.
    fn pack(source: &dyn WeightSource, arch: Arch, out: &mut [f32]) -> Result<(), LoadError>;
    /// Runs the network on the arena.
    fn forward(&self, arena: &mut [f32]) -> Result<(), Error>;
    /// Runs layer `i`.
    fn forward_layer(&self, i: usize, arena: &mut [f32]) -> Result<(), Error>;
    /// Tensor `id` in the arena.
    fn tensor(arena: &[f32], id: usize) -> Result<Blocked<&[f32]>, Error>;
    /// Tensor `id` in the arena, writable.
    fn tensor_mut(arena: &mut [f32], id: usize) -> Result<Blocked<&mut [f32]>, Error>;
    /// Packed weight `f32`s.
    fn packed_weights(&self) -> usize;
    /// The arch in use.
    fn arch(&self) -> Arch;
    /// The blocking of each layer.
    fn blockings(&self) -> Vec<&'static Blocking>;

    /// Raw weights and biases (`f32`s) as published: what the file holds.
    fn raw_weights() -> usize {
        Self::LAYERS
            .iter()
            .filter(|l| l.spec.has_weights())
            .map(|l| l.spec.weights_len() + l.spec.out_channels())
            .sum()
    }

    /// Writes an NHWC input, runs the network and returns its output
    /// (probabilities for classifiers, the reconstruction for the AD model).
    fn infer(&self, arena: &mut [f32], input_nhwc: &[f32], out: &mut [f32]) -> Result<(), Error> {
        Self::tensor_mut(arena, 0)?.fill_from_nhwc(input_nhwc)?;
        self.forward(arena)?;
        let y = Self::tensor(arena, Self::OUTPUT)?;
        small_core::check_len("output", y.c(), out.len())?;
        // A 1x1 tensor's blocked layout is its channels in order.
        out.copy_from_slice(&y.as_slice()[..y.c()]);
        if Self::HEAD == Head::Softmax {
            crate::check::softmax(out);
        }
        Ok(())
    }
}

macro_rules! network {
    ($ty:ty, $name:literal, $file:expr, $head:ident) => {
        impl Network for $ty {
            const NAME: &'static str = $name;
            const FILE: Option<&'static str> = $file;
            const HEAD: Head = Head::$head;
            const LAYERS: &'static [LayerInfo] = &<$ty>::LAYERS;
            const DIMS: &'static [Dims] = &<$ty>::DIMS;
            const ARENA: usize = <$ty>::ARENA;
            const LOWER_BOUND: usize = <$ty>::PLAN.lower_bound;
            const OUTPUT: usize = <$ty>::OUTPUT;
            const MACS: usize = <$ty>::MACS;
            fn load(source: &dyn WeightSource, arch: Arch) -> Result<Self, LoadError> {
                <$ty>::load(source, arch)
            }
            fn packed_len(arch: Arch) -> usize {
                <$ty>::packed_len(arch)
            }
            fn pack(
                source: &dyn WeightSource,
                arch: Arch,
                out: &mut [f32],
            ) -> Result<(), LoadError> {
                <$ty>::pack(source, arch, out)
            }
            fn forward(&self, arena: &mut [f32]) -> Result<(), Error> {
                <$ty>::forward(self, arena)
            }
            fn forward_layer(&self, i: usize, arena: &mut [f32]) -> Result<(), Error> {
                <$ty>::forward_layer(self, i, arena)
            }
            fn tensor(arena: &[f32], id: usize) -> Result<Blocked<&[f32]>, Error> {
                <$ty>::tensor(arena, id)
            }
            fn tensor_mut(arena: &mut [f32], id: usize) -> Result<Blocked<&mut [f32]>, Error> {
                <$ty>::tensor_mut(arena, id)
            }
            fn packed_weights(&self) -> usize {
                <$ty>::packed_weights(self)
            }
            fn arch(&self) -> Arch {
                <$ty>::arch(self)
            }
            fn blockings(&self) -> Vec<&'static Blocking> {
                <$ty>::blockings(self).to_vec()
            }
        }
    };
}

network!(
    resnet8::Resnet8,
    "resnet8",
    Some("pretrainedResnet.tflite"),
    Softmax
);
network!(vww::Vww, "vww_0.25", Some("vww_96_float.tflite"), Softmax);
network!(
    dscnn::DsCnn,
    "ds-cnn",
    Some("kws_ref_model_float32.tflite"),
    Softmax
);
network!(
    ad::Autoencoder,
    "ad",
    Some("ad01_fp32.tflite"),
    Reconstruction
);
network!(vww1::Vww1, "vww_1.0", None, Softmax);
network!(sweep::SweepConv, "sweep-conv", None, Reconstruction);
network!(
    sweep::SweepChannelwise,
    "sweep-channelwise",
    None,
    Reconstruction
);
network!(sweep::SweepResidual, "sweep-residual", None, Reconstruction);
network!(sweep::SweepGroupFc, "sweep-group-fc", None, Reconstruction);

/// Checks a network's wiring against a `.tflite` file and maps each of its
/// tensors to the file's tensor index: every layer must read the tensor
/// the file's operator reads (looking through RESHAPE, a no-op in the
/// blocked layout), a residual layer's ADD must add the layer's
/// convolution and its skip tensor, and the activation declared must be
/// the one the file fuses into the layer's last operator. The weights'
/// shapes, strides and padding are checked when they load.
pub fn verify_wiring<N: Network>(
    model: &small_core::load::tflite::Model,
) -> Result<Vec<usize>, LoadError> {
    let ops = model.operators();
    let op = |i: usize, layer: &str| {
        ops.get(i).ok_or_else(|| LoadError::Missing {
            what: format!(
                "operator {i} (layer `{layer}`) in a file of {} operators",
                ops.len()
            ),
        })
    };
    // Follow RESHAPE outputs back to the tensor they view.
    let source_of = |mut t: usize| {
        while let Some(r) = ops.iter().find(|o| {
            o.kind == small_core::load::tflite::OpKind::Reshape && o.outputs.first() == Some(&t)
        }) {
            match r.input(0) {
                Some(i) => t = i,
                None => break,
            }
        }
        t
    };
    let mismatch =
        |l: &LayerInfo, what: &'static str, expected: String, actual: String| LoadError::Mismatch {
            layer: format!("layer `{}` (op {})", l.name, l.op),
            what,
            expected,
            actual,
        };
    let mut tensor = vec![usize::MAX; N::DIMS.len()];
    tensor[0] = *model.inputs().first().ok_or(LoadError::Missing {
        what: "model input".into(),
    })?;
    for l in N::LAYERS {
        let main = op(l.op, l.name)?;
        let read = main.input(0).map(source_of);
        if read != Some(tensor[l.step.x]) {
            return Err(mismatch(
                l,
                "input tensor",
                format!("t{}", tensor[l.step.x]),
                format!("{read:?}"),
            ));
        }
        let last = op(l.out_op, l.name)?;
        if l.step.skip != small_core::model::NONE {
            let conv = main.outputs.first().copied();
            let mut adds: Vec<Option<usize>> = last.inputs.clone();
            adds.sort();
            let mut want = vec![conv, Some(tensor[l.step.skip])];
            want.sort();
            if last.kind != small_core::load::tflite::OpKind::Add || adds != want {
                return Err(mismatch(
                    l,
                    "residual ADD",
                    format!("ADD of {want:?}"),
                    format!("{} of {:?}", last.kind, last.inputs),
                ));
            }
        }
        let act = last.activation()?;
        if act != l.spec.activation {
            return Err(mismatch(
                l,
                "activation",
                format!("{:?}", l.spec.activation),
                format!("{act:?}"),
            ));
        }
        tensor[l.step.y] = *last.outputs.first().ok_or_else(|| LoadError::Missing {
            what: format!("output of operator {}", l.out_op),
        })?;
    }
    Ok(tensor)
}
