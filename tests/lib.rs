//! Helpers shared by the integration tests: a seeded generator, random
//! tensors, the reference oracle for a generated layer's spec, and the
//! tolerance derived from the reduction length.

use small_core::reference::{self, Conv, Shape, Window};
use small_core::{Error, KernelKind, LayerSpec, Reduction};

/// Small seeded generator (PCG-style LCG): reproducible, no dependency.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.next_u32() as usize % (hi - lo + 1)
    }
    /// Uniform in `[-1, 1)`.
    pub fn unit(&mut self) -> f32 {
        self.next_u32() as f32 / (1u64 << 31) as f32 - 1.0
    }
    /// `n` values uniform in `[-1, 1)`.
    pub fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.unit()).collect()
    }
}

/// The reference layers' result for `spec` on an NHWC input, the
/// residual `skip` (NHWC, output shape) added and the activation applied:
/// the oracle every generated kernel is compared with.
pub fn reference_forward(
    spec: &LayerSpec,
    input: &[f32],
    shape: Shape,
    weights: &[f32],
    bias: Option<&[f32]>,
    skip: Option<&[f32]>,
) -> Result<(Vec<f32>, Shape), Error> {
    let window = Window::new(spec.fh, spec.fw, spec.sh, spec.sw, spec.padding);
    let (dh, dw) = window.dims(shape.h, shape.w)?;
    let out_shape = Shape::new(dh.out, dw.out, spec.out_channels());
    let mut out = vec![0.0; out_shape.len()];
    match (spec.reduction, spec.kind()) {
        (Reduction::Max, _) => {
            reference::max_pool(input, shape, window, &mut out)?;
        }
        (Reduction::Avg, _) => {
            reference::avg_pool(input, shape, window, &mut out)?;
        }
        (Reduction::Fma, KernelKind::Channelwise) => {
            reference::depthwise_conv2d(input, shape, weights, bias, window, 1, &mut out)?;
        }
        (Reduction::Fma, KernelKind::Broadcast) => {
            let conv = Conv {
                window,
                fc: spec.fc,
                k: spec.k,
                g: spec.g,
            };
            reference::conv2d(input, shape, weights, bias, conv, &mut out)?;
        }
    }
    if let Some(skip) = skip {
        let sum = out.clone();
        reference::add(&sum, skip, &mut out)?;
    }
    reference::activation(&mut out, spec.activation);
    Ok((out, out_shape))
}

/// Per-element error bound of an FMA or average layer computed in a
/// different order than the reference: both sums of `F_H F_W F_C` products,
/// the bias and the residual (`n = F_H F_W F_C + 2` terms) are within
/// `gamma(n) * sum|terms|` of the exact value (Higham, recursive
/// summation), so they differ by at most twice that. `sum|terms|` is the
/// reference layer run on absolute values. Max layers must match exactly.
pub fn tolerances(
    spec: &LayerSpec,
    input: &[f32],
    shape: Shape,
    weights: &[f32],
    bias: Option<&[f32]>,
    skip: Option<&[f32]>,
) -> Vec<f32> {
    let abs = |v: &[f32]| v.iter().map(|x| x.abs()).collect::<Vec<f32>>();
    let n = (spec.fh * spec.fw * spec.fc + 2) as f32;
    let gamma = n * f32::EPSILON / (1.0 - n * f32::EPSILON);
    let mut plain = *spec;
    plain.activation = small_core::Activation::None;
    let abs_bias = bias.map(abs);
    // The residual is one more term of the sum.
    let abs_skip = skip.map(abs);
    let (sums, _) = reference_forward(
        &plain,
        &abs(input),
        shape,
        &abs(weights),
        abs_bias.as_deref(),
        abs_skip.as_deref(),
    )
    .expect("shape already accepted by the reference");
    match spec.reduction {
        Reduction::Max => vec![0.0; sums.len()],
        // An average is the sum times 1/count: one more rounding.
        Reduction::Fma | Reduction::Avg => sums
            .iter()
            .map(|s| 2.0 * (gamma + f32::EPSILON) * s + f32::MIN_POSITIVE)
            .collect(),
    }
}

/// Index and values of the first element outside its tolerance.
pub fn first_mismatch(got: &[f32], want: &[f32], tol: &[f32]) -> Option<(usize, f32, f32, f32)> {
    (0..want.len())
        .find(|&i| {
            // NaN on either side is a mismatch.
            let within = matches!(
                (got[i] - want[i]).abs().partial_cmp(&tol[i]),
                Some(core::cmp::Ordering::Less | core::cmp::Ordering::Equal)
            );
            !within
        })
        .map(|i| (i, got[i], want[i], tol[i]))
}

/// The README's code blocks, compiled and run as doctests so they cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
