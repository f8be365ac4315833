//! The MLPerf Tiny networks as small-rs programs: every layer a `#[layer]`
//! declaration, wired with `small_core::model!`, one arena planned at
//! compile time. [`Network`] gives them one interface for the main job,
//! the tests and the bench.

pub mod ad;
pub mod dscnn;
pub mod resnet8;
pub mod vww;
pub mod vww1;

use small_core::load::{LayerWeights, LoadError, WeightSource};
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

network!(resnet8::Resnet8, "resnet8", Some("pretrainedResnet.tflite"), Softmax);
network!(vww::Vww, "vww_0.25", Some("vww_96_float.tflite"), Softmax);
network!(dscnn::DsCnn, "ds-cnn", Some("kws_ref_model_float32.tflite"), Softmax);
network!(ad::Autoencoder, "ad", Some("ad01_fp32.tflite"), Reconstruction);
network!(vww1::Vww1, "vww_1.0", None, Softmax);

/// A source that hands out the absolute values of another's weights (for
/// error bounds).
pub struct Abs<'a>(pub &'a dyn WeightSource);

impl WeightSource for Abs<'_> {
    fn layer(
        &self,
        layer: small_core::load::LayerRef,
        spec: &small_core::LayerSpec,
    ) -> Result<LayerWeights, LoadError> {
        let w = self.0.layer(layer, spec)?;
        let abs = |v: Vec<f32>| v.into_iter().map(f32::abs).collect::<Vec<_>>();
        Ok(LayerWeights {
            weights: abs(w.weights),
            bias: w.bias.map(abs),
        })
    }
}
