//! How close two correct evaluations of a network must be.
//!
//! Each layer computed in `f32` in another order than a second
//! implementation differs from it by at most `2 γ(n) Σ|terms|`
//! ([`small_core::reference::tolerances`], `n` the reduction length); a
//! difference `e` already in its input reaches the output through the
//! layer's absolute weights (ReLU and max pool are 1-Lipschitz, so they
//! never enlarge it). [`bounds`] carries both through the network, layer
//! by layer, so the bound of the output follows from every reduction
//! length and weight of the network, not from a chosen constant.

use crate::models::{Abs, Head};
use small_core::load::{LayerRef, LoadError, WeightSource};
use small_core::model::{Dims, LayerInfo, NONE};
use small_core::reference::{self, Shape};
use small_core::{Activation, Reduction};

fn shape(d: Dims) -> Shape {
    Shape::new(d.h, d.w, d.c)
}

/// Per-element bound on `|ours - theirs|` for every tensor (NHWC, indexed
/// like `dims`), given `values`, one evaluation of every tensor (e.g.
/// `Model::reference`).
pub fn bounds(
    layers: &[LayerInfo],
    dims: &[Dims],
    source: &dyn WeightSource,
    values: &[Vec<f32>],
) -> Result<Vec<Vec<f32>>, LoadError> {
    let mut e: Vec<Vec<f32>> = dims.iter().map(|d| vec![0.0; d.elements()]).collect();
    for l in layers {
        let mut lin = l.spec;
        lin.activation = Activation::None;
        lin.residual = false;
        let w = if l.spec.has_weights() {
            Some(Abs(source).layer(
                LayerRef {
                    name: l.name,
                    op: l.op,
                },
                &l.spec,
            )?)
        } else {
            None
        };
        let (wts, bias) = match &w {
            Some(w) => (&w.weights[..], w.bias.as_deref()),
            None => (&[][..], None),
        };
        let (x, ex) = (&values[l.step.x], &e[l.step.x]);
        let s = shape(dims[l.step.x]);
        // The input's error through |W| (no bias: it is exact on both sides).
        let (mut out, _) = reference::layer(&lin, ex, s, wts, None, None)?;
        // This layer's own rounding, on magnitudes that include the error.
        let mag: Vec<f32> = x.iter().zip(ex).map(|(v, d)| v.abs() + d).collect();
        let skip = (l.step.skip != NONE).then(|| {
            let (v, d) = (&values[l.step.skip], &e[l.step.skip]);
            v.iter().zip(d).map(|(v, d)| v.abs() + d).collect::<Vec<f32>>()
        });
        let mut spec = lin;
        spec.residual = skip.is_some();
        let rnd = reference::tolerances(&spec, &mag, s, wts, bias, skip.as_deref());
        for (i, o) in out.iter_mut().enumerate() {
            *o += rnd[i];
            if l.step.skip != NONE {
                *o += e[l.step.skip][i];
            }
        }
        if l.spec.reduction == Reduction::Max {
            // Max picks one input: its error, no rounding (already `out`).
        }
        e[l.step.y] = out;
    }
    Ok(e)
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

/// The first element of `got` farther than `tol` from `want` (NaN counts
/// as far): `(index, got, want, tol)`.
pub fn first_mismatch(got: &[f32], want: &[f32], tol: &[f32]) -> Option<(usize, f32, f32, f32)> {
    (0..want.len().max(got.len()))
        .find(|&i| match (got.get(i), want.get(i), tol.get(i)) {
            // NaN compares false: a mismatch.
            (Some(g), Some(w), Some(t)) => !((g - w).abs() <= *t),
            _ => true,
        })
        .map(|i| {
            let at = |v: &[f32]| v.get(i).copied().unwrap_or(f32::NAN);
            (i, at(got), at(want), at(tol))
        })
}

/// Largest `|got - want|`.
pub fn max_diff(got: &[f32], want: &[f32]) -> f32 {
    got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(0.0, f32::max)
}
