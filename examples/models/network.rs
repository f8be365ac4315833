//! [`Network`]: a generated network ([`Model`]) with its name, trained
//! file and head, and [`verify_wiring`] of any [`Model`] against a
//! `.tflite` file (std only).

use super::{ad, dscnn, resnet8, sweep, vww, vww1};
use small_core::Error;
use small_core::load::LoadError;
use small_core::load::tflite::{self, OpKind};
use small_core::model::{LayerInfo, Model};

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

/// Checks a network's wiring against a `.tflite` file and maps each of its
/// tensors to the file's tensor index: every layer must read the tensor
/// the file's operator reads (looking through RESHAPE, a no-op in the
/// blocked layout), a residual layer's ADD must add the layer's
/// convolution and its skip tensor, and the activation declared must be
/// the one the file fuses into the layer's last operator. The weights'
/// shapes, strides and padding are checked when they load.
pub fn verify_wiring<N: Model>(model: &tflite::Model) -> Result<Vec<usize>, LoadError> {
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
        while let Some(r) = ops
            .iter()
            .find(|o| o.kind == OpKind::Reshape && o.outputs.first() == Some(&t))
        {
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
            if last.kind != OpKind::Add || adds != want {
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
