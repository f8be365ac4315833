//! Batch normalisation (inference) folded into weights, so that it costs
//! nothing at run time: either into the convolution before it, or, when it
//! stands alone, as a 1x1 depthwise layer (`fh = 1, fw = 1, fc = 1, k = 1,
//! g = C`) whose weights are the scale and whose bias is the shift.

use crate::{Error, check_len};

/// Per-channel `scale = gamma / sqrt(var + eps)` and
/// `shift = beta - mean * scale`, so that `bn(x) = scale * x + shift`.
/// `scale` and `shift` must have the channels' length.
///
/// ```
/// let (mut scale, mut shift) = ([0.0; 1], [0.0; 1]);
/// small_core::fold::batch_norm_scale_shift(&[1.0], &[3.0], &[2.0], &[0.5], 1.0, &mut scale, &mut shift)?;
/// assert_eq!((scale[0], shift[0]), (1.0, -0.5)); // 2 / sqrt(4), 0.5 - 1 * 1
/// # Ok::<(), small_core::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_scale_shift(
    mean: &[f32],
    var: &[f32],
    gamma: &[f32],
    beta: &[f32],
    eps: f32,
    scale: &mut [f32],
    shift: &mut [f32],
) -> Result<(), Error> {
    let c = mean.len();
    for (what, len) in [
        ("variance", var.len()),
        ("gamma", gamma.len()),
        ("beta", beta.len()),
    ] {
        check_len(what, c, len)?;
    }
    check_len("scale", c, scale.len())?;
    check_len("shift", c, shift.len())?;
    for i in 0..c {
        scale[i] = gamma[i] / crate::reference::math::sqrt(var[i] + eps);
        shift[i] = beta[i] - mean[i] * scale[i];
    }
    Ok(())
}

/// Folds `bn(conv(x))` into the convolution: multiplies each output
/// channel's weights (OHWI, `[O][...]`, `O = scale.len()`) by its scale and
/// sets `bias = scale * bias + shift` (`bias` starts as the conv's bias, or
/// zeros).
pub fn fold_into_conv(
    weights: &mut [f32],
    bias: &mut [f32],
    scale: &[f32],
    shift: &[f32],
) -> Result<(), Error> {
    let o = scale.len();
    check_len("shift", o, shift.len())?;
    check_len("bias", o, bias.len())?;
    if o == 0 || !weights.len().is_multiple_of(o) {
        return Err(Error::BufferLength {
            what: "weights",
            expected: weights.len() / o.max(1) * o,
            actual: weights.len(),
        });
    }
    for (ch, w) in weights.chunks_exact_mut(weights.len() / o).enumerate() {
        w.iter_mut().for_each(|v| *v *= scale[ch]);
        bias[ch] = scale[ch] * bias[ch] + shift[ch];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_conv_equals_conv_then_batch_norm() {
        use crate::Padding;
        use crate::reference::{self, Conv, Shape, Window};
        // 1x1 conv, 2 in -> 2 out, on one pixel [1, 2]: w = [[1, 1], [2, -1]], b = [0.5, 0]
        // -> [3.5, 0]; bn with mean [1, 0], var [3, 0], gamma [2, 1], beta [0, 1], eps 1
        // -> scale [1, 1], shift [-1, 1] -> [2.5, 1].
        let (mut w, mut b) = ([1.0, 1.0, 2.0, -1.0], [0.5, 0.0]);
        let (mut scale, mut shift) = ([0.0; 2], [0.0; 2]);
        batch_norm_scale_shift(
            &[1.0, 0.0],
            &[3.0, 0.0],
            &[2.0, 1.0],
            &[0.0, 1.0],
            1.0,
            &mut scale,
            &mut shift,
        )
        .unwrap();
        assert_eq!((scale, shift), ([1.0, 1.0], [-1.0, 1.0]));
        fold_into_conv(&mut w, &mut b, &scale, &shift).unwrap();
        let conv = Conv {
            window: Window::new(1, 1, 1, 1, Padding::Valid),
            fc: 2,
            k: 2,
            g: 1,
        };
        let mut out = [0.0; 2];
        reference::conv2d(
            &[1.0, 2.0],
            Shape { h: 1, w: 1, c: 2 },
            &w,
            Some(&b),
            conv,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, [2.5, 1.0]);
        assert_eq!(
            fold_into_conv(&mut [0.0; 5], &mut b, &scale, &shift),
            Err(Error::BufferLength {
                what: "weights",
                expected: 4,
                actual: 5
            })
        );
    }
}
