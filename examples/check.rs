//! How close two correct evaluations of a network must be.
//!
//! Each layer computed in `f32` in another order than a second
//! implementation differs from it by at most `2 γ(n) Σ|terms|`
//! ([`small_core::reference::tolerances`], `n` the reduction length); a
//! difference `e` already in its input reaches the output through the
//! layer's absolute weights (ReLU and max pool are 1-Lipschitz, so they
//! never enlarge it, and a ReLU whose input is below `-bound` outputs 0
//! on both sides, which stops the difference). [`bounds`] carries both
//! through the network, layer by layer, so the bound of the output follows
//! from every reduction length and weight of the network, not from a
//! chosen constant; for trained weights the worst case is far too loose
//! and [`Propagation::Probable`] carries it the way rounding errors really
//! add up. [`layer_bounds`] is the local version: each layer fed
//! the same input, so a failure names the layer. A concatenation copies:
//! its output's bound is its inputs', channel by channel, and alone it is
//! exact.

use crate::models::Head;
use small_core::load::{LayerRef, LoadError, WeightSource};
use small_core::model::{LayerInfo, NONE};
/// Re-exported: the networks' checks and the kernel suites share it.
pub use small_core::reference::first_mismatch;
use small_core::reference::{self, Shape};
use small_core::{Activation, Dims, Filter};

/// How differences are carried from layer to layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Propagation {
    /// Worst case: input differences add up through `|W|`, each layer's
    /// rounding is `2 γ(n) Σ|terms|`. A true bound, but it grows like the
    /// product of the layers' `Σ|w|`, so it is tight only for weights
    /// with `Σ|w| ≈ 1` (the built-in ones).
    WorstCase,
    /// Probabilistic (Higham & Mary, "A new approach to probabilistic
    /// rounding error analysis", 2019): each layer's rounding is within
    /// `2 λ √n u Σ|terms|` with probability at least
    /// `1 - 2n exp(-λ²(1-u)²/2)` (λ = 8: 1 - 3e-14 n), and differences
    /// of independent roundings add in quadrature through `W²`. For
    /// trained networks, whose `Σ|w|` make the worst case astronomically
    /// loose.
    Probable {
        /// Confidence parameter λ.
        lambda: f32,
    },
}

/// Per-element bound on `|ours - theirs|` for every tensor (NHWC, indexed
/// like `dims`), given `values`, one evaluation of every tensor (e.g.
/// `Model::reference`).
pub fn bounds(
    layers: &[LayerInfo],
    dims: &[Dims],
    source: &dyn WeightSource,
    values: &[Vec<f32>],
    how: Propagation,
) -> Result<Vec<Vec<f32>>, LoadError> {
    let quadrature = matches!(how, Propagation::Probable { .. });
    // Worst case: e holds bounds. Probable: e holds squared bounds.
    let mut e: Vec<Vec<f32>> = dims.iter().map(|d| vec![0.0; d.elements()]).collect();
    let root = |v: f32| if quadrature { v.sqrt() } else { v };
    for l in layers {
        let Some(layer_spec) = l.spec else {
            // A copy: each output carries its input's difference.
            e[l.step.y] = concat_nhwc(l, dims, &e)?;
            continue;
        };
        let mut lin = layer_spec;
        lin.activation = Activation::None;
        lin.residual = false;
        // Loaded once: the signed weights for the pre-activation, their
        // magnitudes for the bounds.
        let w = signed(source, l)?;
        let (signed_w, signed_b) = match &w {
            Some(w) => (w.filter(), w.bias.as_deref()),
            None => (Filter::none(), None),
        };
        let abs = |v: &[f32]| v.iter().map(|x| x.abs()).collect::<Vec<f32>>();
        let (abs_w, bias) = (abs(signed_w.values), signed_b.map(abs));
        let (wts, bias) = (
            Filter {
                values: &abs_w,
                ..signed_w
            },
            bias.as_deref(),
        );
        let (x, ex) = (&values[l.step.x], &e[l.step.x]);
        let s = Shape::from(dims[l.step.x]);
        // The input's difference through |W| (or W² on squares); no bias:
        // it is exact on both sides.
        let (mut out, _) = if quadrature {
            let w2: Vec<f32> = wts.values.iter().map(|w| w * w).collect();
            let w2 = Filter { values: &w2, ..wts };
            let (mut o, sh) = reference::layer(&lin, ex, s, w2, None, None)?;
            if layer_spec.reduction == small_core::Reduction::Avg
                && layer_spec.padding == small_core::Padding::Valid
            {
                // An average of n independent differences: 1/n² Σ e².
                let n = (layer_spec.fh * layer_spec.fw) as f32;
                o.iter_mut().for_each(|v| *v /= n);
            }
            (o, sh)
        } else {
            reference::layer(&lin, ex, s, wts, None, None)?
        };
        // This layer's own rounding, on magnitudes that include the difference.
        let mag: Vec<f32> = x.iter().zip(ex).map(|(v, d)| v.abs() + root(*d)).collect();
        let skip = (l.step.skip != NONE).then(|| {
            let (v, d) = (&values[l.step.skip], &e[l.step.skip]);
            v.iter()
                .zip(d)
                .map(|(v, d)| v.abs() + root(*d))
                .collect::<Vec<f32>>()
        });
        let mut spec = lin;
        spec.residual = skip.is_some();
        let rnd = reference::tolerances(&spec, &mag, s, wts, bias, skip.as_deref());
        // tolerances() uses γ(n) ≈ n u; the probabilistic constant is λ √n u.
        let n = (layer_spec.fh * layer_spec.fw * layer_spec.fc + 2) as f32;
        let scale = match how {
            Propagation::WorstCase => 1.0,
            Propagation::Probable { lambda } => (lambda / n.sqrt()).min(1.0),
        };
        for (i, o) in out.iter_mut().enumerate() {
            let r = rnd[i] * scale;
            *o += if quadrature { r * r } else { r };
            if l.step.skip != NONE {
                *o += e[l.step.skip][i];
            }
        }
        if layer_spec.activation == Activation::Logistic {
            // 1/4-Lipschitz, and its own evaluation (`exp`, an add, a
            // division: a few ulps of a value at most 1) against another
            // library's.
            for o in out.iter_mut() {
                let d = root(*o) / 4.0 + 4.0 * f32::EPSILON;
                *o = if quadrature { d * d } else { d };
            }
        } else if layer_spec.activation != Activation::None {
            // Where the activation clamps on both sides, the difference ends.
            let (pre, _) = reference::layer(
                &spec,
                x,
                s,
                signed_w,
                signed_b,
                (l.step.skip != NONE).then(|| values[l.step.skip].as_slice()),
            )?;
            for (o, p) in out.iter_mut().zip(pre) {
                let d = root(*o);
                let clamped_low = p < -d;
                let clamped_high = layer_spec.activation == Activation::Relu6 && p > 6.0 + d;
                if clamped_low || clamped_high {
                    *o = 0.0;
                }
            }
        }
        e[l.step.y] = out;
    }
    if quadrature {
        e.iter_mut().flatten().for_each(|v| *v = v.sqrt());
    }
    Ok(e)
}

/// The concatenation `l` of `t` (NHWC tensors of `dims`).
fn concat_nhwc(l: &LayerInfo, dims: &[Dims], t: &[Vec<f32>]) -> Result<Vec<f32>, LoadError> {
    let inputs: Vec<(&[f32], Shape)> = (l.step.concat.iter())
        .map(|&i| (t[i].as_slice(), Shape::from(dims[i])))
        .collect();
    let mut out = vec![0.0; dims[l.step.y].elements()];
    reference::concat(&inputs, &mut out)?;
    Ok(out)
}

fn signed(
    source: &dyn WeightSource,
    l: &LayerInfo,
) -> Result<Option<small_core::load::LayerWeights>, LoadError> {
    let Some(spec) = l.spec.filter(|s| s.has_weights()) else {
        return Ok(None);
    };
    let r = LayerRef {
        name: l.name,
        op: l.op,
    };
    source.layer(r, &spec).map(Some)
}

/// Per-element bound of each layer alone, every layer fed `values` (its
/// input from one evaluation, e.g. the reference or LiteRT's tensors):
/// `2 γ(n) Σ|terms|`, `n` its reduction length; 0 for a concatenation,
/// a copy.
pub fn layer_bounds(
    l: &LayerInfo,
    dims: &[Dims],
    source: &dyn WeightSource,
    values: &[Vec<f32>],
) -> Result<Vec<f32>, LoadError> {
    let Some(spec) = &l.spec else {
        return Ok(vec![0.0; dims[l.step.y].elements()]);
    };
    let w = signed(source, l)?;
    let (wts, bias) = match &w {
        Some(w) => (w.filter(), w.bias.as_deref()),
        None => (Filter::none(), None),
    };
    let skip = (l.step.skip != NONE).then(|| values[l.step.skip].as_slice());
    Ok(reference::tolerances(
        spec,
        &values[l.step.x],
        Shape::from(dims[l.step.x]),
        wts,
        bias,
        skip,
    ))
}

/// Bound on each output of a network's head given the bound `e` of its
/// last tensor: itself for a reconstruction; for softmax, a logit error of
/// at most `d = max e` changes each probability by at most `e^(2d) - 1`,
/// plus the softmax's own rounding (`n + 4` roundings of values ≤ 1).
pub fn head_bound(head: Head, e: &[f32]) -> Vec<f32> {
    match head {
        Head::Reconstruction => e.to_vec(),
        Head::Softmax => {
            let d = e.iter().copied().fold(0.0f32, f32::max) as f64;
            let b = (2.0 * d).exp_m1() as f32 + (e.len() + 4) as f32 * f32::EPSILON;
            vec![b; e.len()]
        }
    }
}

/// Softmax of `v` in place.
pub fn softmax(v: &mut [f32]) {
    let logits = v.to_vec();
    // Same length: cannot fail.
    let _ = small_core::ops::softmax(&logits, v);
}

/// Index of the largest value (first on ties).
pub fn argmax(v: &[f32]) -> usize {
    let mut best = 0;
    for (i, x) in v.iter().enumerate() {
        if *x > v[best] {
            best = i;
        }
    }
    best
}

/// Largest `|got - want|`.
pub fn max_diff(got: &[f32], want: &[f32]) -> f32 {
    got.iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0, f32::max)
}

/// Runs each layer of `net` alone on `values`' input tensors (NHWC, one
/// evaluation of every tensor) and compares it with `values`' output
/// within [`layer_bounds`]. Returns the first layer outside its bound,
/// described.
pub fn check_layers<N: crate::models::Network>(
    net: &N,
    source: &dyn WeightSource,
    values: &[Vec<f32>],
    arena: &mut [f32],
) -> Result<Option<String>, String> {
    let err = |e: small_core::Error| e.to_string();
    for (i, l) in N::LAYERS.iter().enumerate() {
        for t in l.step.reads() {
            N::tensor_mut(arena, t)
                .map_err(err)?
                .fill_from_nhwc(&values[t])
                .map_err(err)?;
        }
        net.forward_layer(i, arena).map_err(err)?;
        let got = N::tensor(arena, l.step.y).map_err(err)?.to_nhwc();
        let tol = layer_bounds(l, N::DIMS, source, values).map_err(|e| e.to_string())?;
        if let Some((j, g, w, t)) = first_mismatch(&got, &values[l.step.y], &tol) {
            let what = if [g, w, t].iter().any(|v| v.is_nan()) {
                let cause = nan_cause(l, source, values).map_err(|e| e.to_string())?;
                describe_nan(j, g, w, t, &cause)
            } else {
                format!("element {j}: got {g}, expected {w} within {t:.2e}")
            };
            return Ok(Some(format!("layer {i} `{}` (op {}) {what}", l.name, l.op)));
        }
    }
    Ok(None)
}

/// Runs every layer of an int8 network alone on the reference's inputs
/// (`values`, from `small_core::model::reference_run_i8`) and compares its
/// output bit for bit: the first difference, naming the layer and the
/// element, or `None`.
pub fn check_layers_i8<N: small_core::model::Model<Elem = i8>>(
    net: &N,
    values: &[Vec<i8>],
    arena: &mut [i8],
) -> Result<Option<String>, String> {
    let err = |e: small_core::Error| e.to_string();
    for (i, l) in N::LAYERS.iter().enumerate() {
        for t in l.step.reads() {
            N::tensor_mut(arena, t)
                .map_err(err)?
                .fill_from_nhwc(&values[t])
                .map_err(err)?;
        }
        net.forward_layer(i, arena).map_err(err)?;
        let got = N::tensor(arena, l.step.y).map_err(err)?.to_nhwc();
        let want = &values[l.step.y];
        if let Some(j) = (0..want.len()).find(|&j| got[j] != want[j]) {
            let c = N::DIMS[l.step.y].c;
            return Ok(Some(format!(
                "layer {i} `{}` (op {}) element {j} (pixel {}, channel {}): got {}, expected {}",
                l.name,
                l.op,
                j / c,
                j % c,
                got[j],
                want[j]
            )));
        }
    }
    Ok(None)
}

/// Element `j` of a layer's output outside its bound, where the output,
/// the expected value or the bound is NaN: says so, and why (`cause`, from
/// [`nan_cause`]), instead of `got 0, expected 0 within NaN`.
pub fn describe_nan(j: usize, got: f32, want: f32, bound: f32, cause: &str) -> String {
    let what = if bound.is_nan() {
        format!("element {j}: bound is NaN (got {got}, expected {want})")
    } else if want.is_nan() {
        format!("element {j}: the expected value is NaN (got {got})")
    } else {
        format!("element {j} is NaN, expected {want} within {bound:.2e}")
    };
    format!("{what}: {cause}")
}

/// The first NaN among layer `l`'s weights, bias and inputs in `values`,
/// named, else that none of them is NaN.
pub fn nan_cause(
    l: &LayerInfo,
    source: &dyn WeightSource,
    values: &[Vec<f32>],
) -> Result<String, LoadError> {
    let first = |v: &[f32]| v.iter().position(|x| x.is_nan());
    if let Some(w) = signed(source, l)? {
        if let Some(k) = first(&w.weights) {
            return Ok(format!("weight {k} of {} is NaN", w.weights.len()));
        }
        if let Some(k) = w.bias.as_deref().and_then(first) {
            return Ok(format!("bias {k} is NaN"));
        }
    }
    for (i, t) in l.step.reads().enumerate() {
        let role = match (l.spec, i) {
            (Some(_), 0) => "input",
            (Some(_), _) => "residual input",
            (None, _) => "concatenation input",
        };
        if let Some(k) = first(&values[t]) {
            return Ok(format!("{role} (tensor {t}) element {k} is NaN"));
        }
    }
    Ok("the weights, bias and inputs hold no NaN: the layer made it".into())
}

/// `N` on built-in (generated) weights for `arch` against the reference
/// layers, every layer's output within the worst-case bound propagated
/// through the layers, from an arena full of NaN (a read of an unwritten
/// element cannot pass); then the head (`infer`). Panics naming the
/// network, arch, layer and element.
pub fn check_builtin<N: crate::models::Network>(arch: small_core::Arch) {
    use small_core::load::Generated;
    let source = Generated { seed: 3 };
    let net = N::load(&source, arch).expect("generated weights fit");
    let input = Generated::values(11, N::DIMS[0].elements(), 1.0);
    let values = small_core::model::reference_run(&source, N::LAYERS, N::DIMS, &input).unwrap();
    let bounds = bounds(N::LAYERS, N::DIMS, &source, &values, Propagation::WorstCase).unwrap();
    let mut arena = vec![f32::NAN; N::ARENA];
    small_core::model::check_arena(arena.len(), N::ARENA).unwrap();
    N::tensor_mut(&mut arena, 0)
        .unwrap()
        .fill_from_nhwc(&input)
        .unwrap();
    for (i, l) in N::LAYERS.iter().enumerate() {
        net.forward_layer(i, &mut arena).unwrap();
        let got = N::tensor(&arena, l.step.y).unwrap().to_nhwc();
        if let Some((j, g, w, t)) = first_mismatch(&got, &values[l.step.y], &bounds[l.step.y]) {
            panic!(
                "{} on {}: layer {i} `{}` element {j}: got {g}, reference {w}, bound {t}",
                N::NAME,
                arch.name(),
                l.name
            );
        }
    }
    let d = N::DIMS[N::OUTPUT];
    if d.h * d.w != 1 {
        return; // `infer` returns a vector; the layers were all checked above.
    }
    let mut want = values[N::OUTPUT].clone();
    if N::HEAD == Head::Softmax {
        softmax(&mut want);
    }
    let mut got = vec![0.0; want.len()];
    net.infer(&mut arena, &input, &mut got).unwrap();
    let tol = head_bound(N::HEAD, &bounds[N::OUTPUT]);
    assert_eq!(
        first_mismatch(&got, &want, &tol),
        None,
        "{} head on {}",
        N::NAME,
        arch.name()
    );
}
