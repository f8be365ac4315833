//! [`Network`]: a generated network ([`Model`]) with its name, trained
//! file and head; [`Int8Network`] the same for int8 networks.

use super::{ad, dscnn, resnet8, sweep, vww};
use small_core::Error;
use small_core::model::Model;

/// What a network's output means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// Logits; the published model ends in SOFTMAX.
    Softmax,
    /// A reconstruction of the input (autoencoder).
    Reconstruction,
}

/// A generated network ([`Model`], which `model!` implements) with what
/// the main job, the tests and the bench add: a name, the trained file and
/// what the output means.
pub trait Network: Model<Elem = f32> {
    /// Short name (`"resnet8"`).
    const NAME: &'static str;
    /// The trained `.tflite` file in the MLPerf Tiny models directory, if any.
    const FILE: Option<&'static str>;
    /// The task's output.
    const HEAD: Head;

    /// Writes an NHWC input, runs the network and returns its output
    /// (probabilities for classifiers, the reconstruction for the AD model).
    fn infer(&self, arena: &mut [f32], input_nhwc: &[f32], out: &mut [f32]) -> Result<(), Error> {
        Self::input(arena)?.fill_from_nhwc(input_nhwc)?;
        self.forward(arena)?;
        let y = Self::output(arena)?;
        // A 1x1 tensor: NHWC order is its channels in order.
        y.write_nhwc(out)?;
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
network!(sweep::SweepConv, "sweep-conv", None, Reconstruction);
network!(
    sweep::SweepChannelwise,
    "sweep-channelwise",
    None,
    Reconstruction
);
network!(sweep::SweepResidual, "sweep-residual", None, Reconstruction);
network!(sweep::SweepGroupFc, "sweep-group-fc", None, Reconstruction);

/// An int8 network ([`Model`] over `i8`, TFLite's int8 scheme) with its
/// name and trained file.
pub trait Int8Network: Model<Elem = i8> {
    /// Short name (`"resnet8"`).
    const NAME: &'static str;
    /// The trained int8 `.tflite` file in the MLPerf Tiny models directory.
    const FILE: &'static str;

    /// Writes an NHWC int8 input, runs the network and returns its int8
    /// output (for classifiers, the logits before TFLite's SOFTMAX).
    fn infer(&self, arena: &mut [i8], input_nhwc: &[i8], out: &mut [i8]) -> Result<(), Error> {
        Self::input(arena)?.fill_from_nhwc(input_nhwc)?;
        self.forward(arena)?;
        Self::output(arena)?.write_nhwc(out)
    }
}

macro_rules! int8_network {
    ($ty:ty, $name:literal, $file:literal) => {
        impl Int8Network for $ty {
            const NAME: &'static str = $name;
            const FILE: &'static str = $file;
        }
    };
}

int8_network!(
    resnet8::int8::Resnet8,
    "resnet8",
    "pretrainedResnet_quant.tflite"
);
int8_network!(vww::int8::Vww, "vww_0.25", "vww_96_int8.tflite");
int8_network!(dscnn::int8::DsCnn, "ds-cnn", "kws_ref_model.tflite");
int8_network!(ad::int8::Autoencoder, "ad", "ad01_int8.tflite");
