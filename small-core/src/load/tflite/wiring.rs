//! The graph check: does a program (its layers, which tensors each reads
//! and writes) compute what a `.tflite` file's graph computes?
//! [`WeightSource::check_wiring`](crate::load::WeightSource::check_wiring)
//! runs it whenever a program loads or packs its weights from a file, so
//! a `model!` wired differently from its file is an error, not a network
//! that runs and answers something else.

use super::{DType, FusedActivation, Model, OpKind, Operator};
use crate::load::LoadError;
use crate::model::{self, LayerInfo};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

/// Checks the wiring of the program `N` against `file`
/// ([`wiring`] with `N`'s tensors and layers) and returns the file's
/// tensor index of each of `N`'s tensors (indexed like
/// [`Model::DIMS`](crate::model::Model::DIMS)).
///
/// ```no_run
/// # #[cfg(feature = "std")]
/// # fn main() -> Result<(), small_core::load::LoadError> {
/// # use small_core::{layer, model};
/// # #[layer(fh = 1, fw = 1, fc = 64, k = 10, archs(reference))]
/// # struct Fc;
/// # model! { struct Head { input x: [1, 1, 64]; fc: Fc @ 0 (x) -> y; } }
/// use small_core::load::tflite::{Model, verify_wiring};
/// let file = Model::from_file("head.tflite")?;
/// let tensors = verify_wiring::<Head>(&file)?;
/// println!("the output is the file's tensor {}", tensors[1]);
/// # Ok(())
/// # }
/// # #[cfg(not(feature = "std"))]
/// # fn main() {}
/// ```
pub fn verify_wiring<N: model::Model>(file: &Model) -> Result<Vec<usize>, LoadError> {
    wiring(file, N::DIMS.len(), N::LAYERS)
}

/// Checks that `layers` (a program of `tensors` tensors: the input, then
/// each layer's output) are wired as `file`'s operators, and maps each
/// tensor to the file's tensor index. Every layer must read the tensor
/// the file's operator reads (looking through RESHAPE, a no-op in the
/// blocked layout), a residual layer's ADD must add the layer's
/// convolution and its skip tensor, and the activation declared must be
/// the one the file fuses into the layer's last operator. A
/// concatenation's operator must be a CONCATENATION along channels (the
/// last axis), with no fused activation, of exactly the tensors it joins
/// in their order, and, int8, with every input quantized as its output
/// (as LiteRT requires). The weights' shapes, strides and padding are
/// checked when they load
/// ([`WeightSource::layer`](crate::load::WeightSource::layer)).
pub fn wiring(file: &Model, tensors: usize, layers: &[LayerInfo]) -> Result<Vec<usize>, LoadError> {
    let ops = file.operators();
    let op = |i: usize, layer: &str| {
        ops.get(i).ok_or_else(|| LoadError::Missing {
            what: format!(
                "operator {i} (layer `{layer}`) in a file of {} operators",
                ops.len()
            ),
        })
    };
    let mismatch =
        |l: &LayerInfo, what: &'static str, expected: String, actual: String| LoadError::Mismatch {
            layer: format!("layer `{}` (op {})", l.name, l.op),
            what,
            expected,
            actual,
        };
    let mut tensor = vec![usize::MAX; tensors];
    let input = *file.inputs().first().ok_or(LoadError::Missing {
        what: "model input".into(),
    })?;
    let slot = |t: usize, l: &LayerInfo| {
        if t < tensors {
            Ok(t)
        } else {
            Err(mismatch(
                l,
                "tensor",
                format!("one of {tensors}"),
                format!("tensor {t}"),
            ))
        }
    };
    *tensor.first_mut().ok_or(LoadError::Missing {
        what: "the program's input tensor".into(),
    })? = input;
    for l in layers {
        let main = op(l.op, l.name)?;
        let Some(spec) = &l.spec else {
            let inputs = (l.step.concat.iter())
                .map(|&t| slot(t, l).map(|t| tensor[t]))
                .collect::<Result<Vec<usize>, _>>()?;
            let y = concatenation(file, main, &inputs)
                .map_err(|(what, expected, actual)| mismatch(l, what, expected, actual))?;
            tensor[slot(l.step.y, l)?] = y;
            continue;
        };
        // A folded PAD is the layer's padding: it reads the PAD's input.
        let read = file.main_input(main).map(|t| file.view_source(t));
        let x = tensor[slot(l.step.x, l)?];
        if read != Some(x) {
            return Err(mismatch(
                l,
                "input tensor",
                format!("t{x}"),
                format!("{read:?}"),
            ));
        }
        let last = op(l.out_op, l.name)?;
        if l.step.skip != model::NONE {
            // A standalone ADD is its own layer: it adds its inputs.
            let conv = if main.kind == OpKind::Add {
                main.input(0)
            } else {
                main.outputs.first().copied()
            };
            let mut adds: Vec<Option<usize>> = last.inputs.clone();
            adds.sort();
            let mut want = vec![conv, Some(tensor[slot(l.step.skip, l)?])];
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
        if act != spec.activation {
            return Err(mismatch(
                l,
                "activation",
                format!("{:?}", spec.activation),
                format!("{act:?}"),
            ));
        }
        tensor[slot(l.step.y, l)?] = *last.outputs.first().ok_or_else(|| LoadError::Missing {
            what: format!("output of operator {}", l.out_op),
        })?;
    }
    Ok(tensor)
}

/// Checks that `op` is a CONCATENATION along channels of the file's
/// tensors `inputs`, in order (through RESHAPE), with no fused activation
/// and, for int8 tensors, every input quantized as the output; returns its
/// output tensor, or what differs: `(what, expected, actual)`.
fn concatenation(
    file: &Model,
    op: &Operator,
    inputs: &[usize],
) -> Result<usize, (&'static str, String, String)> {
    if op.kind != OpKind::Concatenation {
        return Err(("operator", "CONCATENATION".into(), op.kind.to_string()));
    }
    let reads: Vec<Option<usize>> = (op.inputs.iter())
        .map(|t| t.map(|t| file.view_source(t)))
        .collect();
    let want: Vec<Option<usize>> = inputs.iter().map(|&t| Some(t)).collect();
    if reads != want {
        let show = |ts: &[Option<usize>]| -> String {
            let ts: Vec<String> = (ts.iter())
                .map(|t| t.map_or("-".into(), |t| format!("t{t}")))
                .collect();
            format!("[{}]", ts.join(", "))
        };
        return Err(("input tensors", show(&want), show(&reads)));
    }
    let y = *op
        .outputs
        .first()
        .ok_or(("output", "a tensor".into(), "none".into()))?;
    let out = file
        .tensor(y)
        .ok_or(("output", format!("t{y}"), "no such tensor".into()))?;
    let rank = out.shape.len() as i32;
    let axis = op.options.axis.unwrap_or(0);
    if rank == 0 || (axis != -1 && axis != rank - 1) {
        return Err((
            "axis",
            format!("{} or -1 (channels)", rank - 1),
            axis.to_string(),
        ));
    }
    match op.options.fused_activation {
        None | Some(FusedActivation::None) => {}
        Some(a) => return Err(("activation", "NONE".into(), a.to_string())),
    }
    if out.dtype == DType::Int8 {
        for t in op.inputs.iter().flatten() {
            let q = file.tensor(*t).and_then(|t| t.quantization.as_ref());
            if q != out.quantization.as_ref() {
                return Err((
                    "int8 input quantization (LiteRT's int8 CONCATENATION copies)",
                    format!("the output's, {:?}", out.quantization),
                    format!("t{t}: {q:?}"),
                ));
            }
        }
    }
    Ok(y)
}
