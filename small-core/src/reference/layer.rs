//! A whole generated layer (spec) on the reference layers: the oracle
//! every generated kernel and model is compared with, and the error bound
//! two correct implementations of it can differ by.

use super::{Conv, Shape, Window};
use crate::{Error, Filter, KernelKind, LayerSpec, Order, Reduction};
use alloc::vec::Vec;

/// `filter`'s values in `order` (a copy; the reference convolutions each
/// read one order).
fn in_order(spec: &LayerSpec, filter: Filter<'_>, order: Order) -> Result<Vec<f32>, Error> {
    filter.check(spec)?;
    if filter.order == order || !spec.has_weights() {
        return Ok(filter.values.to_vec());
    }
    let mut out = alloc::vec![0.0; filter.values.len()];
    for o in 0..spec.out_channels() {
        for tap in 0..spec.fh * spec.fw {
            for i in 0..spec.fc {
                out[order.index(spec, o, tap, i)] =
                    filter.values[filter.order.index(spec, o, tap, i)];
            }
        }
    }
    Ok(out)
}

/// The reference layers' result for `spec` on an NHWC input, the
/// residual `skip` (NHWC, output shape) added and the activation applied:
/// the oracle every generated kernel is compared with.
pub fn layer(
    spec: &LayerSpec,
    input: &[f32],
    shape: Shape,
    filter: Filter<'_>,
    bias: Option<&[f32]>,
    skip: Option<&[f32]>,
) -> Result<(Vec<f32>, Shape), Error> {
    let window = Window::new(spec.fh, spec.fw, spec.sh, spec.sw, spec.padding);
    let (dh, dw) = window.dims(shape.h, shape.w)?;
    let out_shape = Shape {
        h: dh.out,
        w: dw.out,
        c: spec.out_channels(),
    };
    let mut out = alloc::vec![0.0; out_shape.len()];
    match (spec.reduction, spec.kind()) {
        (Reduction::Max, _) => {
            super::max_pool(input, shape, window, &mut out)?;
        }
        (Reduction::Avg, _) => {
            super::avg_pool(input, shape, window, &mut out)?;
        }
        (Reduction::Fma, KernelKind::Channelwise) => {
            let weights = in_order(spec, filter, Order::Depthwise)?;
            super::depthwise_conv2d(input, shape, &weights, bias, window, 1, &mut out)?;
        }
        (Reduction::Fma, KernelKind::Broadcast) => {
            let conv = Conv {
                window,
                fc: spec.fc,
                k: spec.k,
                g: spec.g,
            };
            let weights = in_order(spec, filter, Order::Ohwi)?;
            super::conv2d(input, shape, &weights, bias, conv, &mut out)?;
        }
    }
    if let Some(skip) = skip {
        let sum = out.clone();
        super::add(&sum, skip, &mut out)?;
    }
    super::activation(&mut out, spec.activation);
    Ok((out, out_shape))
}

/// Per-element error bound of an FMA or average layer computed in a
/// different order than the reference: both sums of `F_H F_W F_C` products,
/// the bias and the residual (`n = F_H F_W F_C + 2` terms) are within
/// `gamma(n) * sum|terms|` of the exact value (Higham, recursive
/// summation), so they differ by at most twice that. `sum|terms|` is the
/// reference layer run on absolute values. Max layers must match exactly.
/// A LOGISTIC activation scales the bound by its slope, 1/4, and adds its
/// own evaluation's rounding.
pub fn tolerances(
    spec: &LayerSpec,
    input: &[f32],
    shape: Shape,
    filter: Filter<'_>,
    bias: Option<&[f32]>,
    skip: Option<&[f32]>,
) -> Vec<f32> {
    let abs = |v: &[f32]| v.iter().map(|x| x.abs()).collect::<Vec<f32>>();
    let n = (spec.fh * spec.fw * spec.fc + 2) as f32;
    let gamma = n * f32::EPSILON / (1.0 - n * f32::EPSILON);
    let mut plain = *spec;
    plain.activation = crate::Activation::None;
    let abs_bias = bias.map(abs);
    // The residual is one more term of the sum.
    let abs_skip = skip.map(abs);
    let (sums, _) = layer(
        &plain,
        &abs(input),
        shape,
        Filter {
            values: &abs(filter.values),
            ..filter
        },
        abs_bias.as_deref(),
        abs_skip.as_deref(),
    )
    .expect("shape already accepted by the reference");
    let pre = match spec.reduction {
        Reduction::Max => alloc::vec![0.0; sums.len()],
        // An average is the sum times 1/count: one more rounding.
        Reduction::Fma | Reduction::Avg => sums
            .iter()
            .map(|s| 2.0 * (gamma + f32::EPSILON) * s + f32::MIN_POSITIVE)
            .collect(),
    };
    if spec.activation != crate::Activation::Logistic {
        return pre;
    }
    // LOGISTIC is 1/4-Lipschitz; each side evaluates it (`exp`, an add, a
    // division: three roundings of values at most 1, each within an ulp
    // of 1) on its own sum, so the results differ by a quarter of the
    // sums' difference and at most 4 ulps of 1 more.
    pre.iter().map(|t| t / 4.0 + 4.0 * f32::EPSILON).collect()
}

/// The first element of `got` farther than `tol` from `want` (NaN counts
/// as far, and so does an element only one side has): `(index, got,
/// want, tol)`, with NaN for a missing value. The check of a layer
/// against [`tolerances`].
///
/// ```
/// use small_core::reference::first_mismatch;
/// assert_eq!(first_mismatch(&[1.0, 2.5], &[1.0, 2.0], &[0.0, 0.5]), None);
/// assert_eq!(first_mismatch(&[1.0, 2.6], &[1.0, 2.0], &[0.0, 0.5]), Some((1, 2.6, 2.0, 0.5)));
/// assert!(first_mismatch(&[f32::NAN], &[1.0], &[1.0]).is_some());
/// ```
pub fn first_mismatch(got: &[f32], want: &[f32], tol: &[f32]) -> Option<(usize, f32, f32, f32)> {
    (0..want.len().max(got.len()))
        .find(|&i| match (got.get(i), want.get(i), tol.get(i)) {
            // NaN compares false: a mismatch.
            (Some(g), Some(w), Some(t)) => !matches!(
                (g - w).abs().partial_cmp(t),
                Some(core::cmp::Ordering::Less | core::cmp::Ordering::Equal)
            ),
            _ => true,
        })
        .map(|i| {
            let at = |v: &[f32]| v.get(i).copied().unwrap_or(f32::NAN);
            (i, at(got), at(want), at(tol))
        })
}
