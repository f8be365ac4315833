//! Packing weights from TFLite order into the order the kernels walk,
//! the packed layout of `small_ir::geometry` (every address comes from
//! its `packed_at`). Zeros fill every place where an input channel does
//! not feed an output channel (another group, or padding): they keep the
//! padding lanes of every output zero.

use small_ir::Machine;
use small_ir::geometry::{DOT_PACK, acc_len, folded_at, packed_at, tap_len, tiles_at};
pub(crate) use small_ir::geometry::{
    block_len, checked_packed_len, out_padded, tile_blocks, tile_len,
};
use small_ir::quant::row;
use small_ir::step::derive_steps;

use crate::{CB, Error, Filter, KernelKind, LayerSpec, check_len};

/// Packs `filter` (either [`Order`](crate::Order)) and an optional bias
/// into `out`, which must hold [`packed_len`](crate::ir::geometry::packed_len) elements.
pub fn pack(
    spec: &LayerSpec,
    tc: usize,
    filter: Filter<'_, f32>,
    bias: Option<&[f32]>,
    out: &mut [f32],
) -> Result<(), Error> {
    filter.check(spec)?;
    check_len("packed weights", checked_packed_len(spec, tc)?, out.len())?;
    if let Some(b) = bias {
        let expected = if spec.has_weights() {
            spec.out_channels()
        } else {
            0
        };
        check_len("bias", expected, b.len())?;
    }
    if !spec.has_weights() {
        return Ok(());
    }
    out.fill(0.0);
    let (oc, taps) = (spec.out_channels(), spec.fh * spec.fw);
    let weight = |o, tap, i| filter.values[filter.order.index(spec, o, tap, i)];
    if let Some(b) = bias {
        out[..b.len()].copy_from_slice(b);
    }
    for ot in 0..out_padded(spec) / tc {
        match spec.kind() {
            KernelKind::Channelwise => {
                for tap in 0..taps {
                    for t in 0..tc.min(oc.saturating_sub(ot * tc)) {
                        out[packed_at(spec, tc, ot, 0, tap, 0, t)] = weight(ot * tc + t, tap, 0);
                    }
                }
            }
            KernelKind::Broadcast => {
                // The input lanes of the blocks this tile reads.
                let (first, end) = tile_blocks(spec, tc, ot);
                let lanes = tap_len(spec, tc) / tc;
                for b in 0..end - first {
                    for tap in 0..taps {
                        for lane in 0..lanes {
                            let ci = (first + b) * CB + lane;
                            for t in 0..tc {
                                let o = ot * tc + t;
                                if o < oc && ci < spec.in_channels() && ci / spec.fc == o / spec.k {
                                    out[packed_at(spec, tc, ot, b, tap, lane, t)] =
                                        weight(o, tap, ci % spec.fc);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// The quantization of an `i8` layer with weights, folded at pack time.
pub use crate::reference::int8::{AddParams, Requant};

/// Packs an `i8` layer for arch `m`, whose integer dot product sums
/// [`Machine::int8_dot_for`] input lanes per step and adds
/// `int8_x_offset` to each activation (`arch_defs::Dot`): the weights
/// into `tiles` ([`tiles_at`]), the per-channel rows of
/// [`small_ir::quant::row`] into `acc`. A weight below
/// [`Machine::int8_weight_min_for`] is an [`Error::WeightRange`].
///
/// Broadcast kernels (convolution, FC): the bias row holds `bias -
/// (zp_in + x_offset) * Σ w` over every tap and input channel, so the
/// kernels sum raw products `(x + x_offset) * w` and never subtract a
/// zero point. A border tile skips the taps outside the input; it adds
/// their `(zp_in + x_offset) * Σ_c w` back from the tap's correction row,
/// which makes the sum `Σ (x - zp_in) * w` over the taps inside, as
/// TFLite's. Channelwise kernels (depthwise) widen each input and add
/// `-zp_in` to it (one add per input vector, reused by every tap that
/// reads it): the bias row is the bias.
#[allow(clippy::too_many_arguments)]
pub fn pack_i8(
    spec: &LayerSpec,
    tc: usize,
    m: &Machine,
    filter: Filter<'_, i8>,
    bias: Option<&[i32]>,
    q: &Requant<'_>,
    add: Option<&AddParams>,
    acc: &mut [i32],
    tiles: &mut [i8],
) -> Result<(), Error> {
    filter.check(spec)?;
    let (dot, x_offset, min) = (
        m.int8_dot_for(spec),
        m.int8_x_offset,
        m.int8_weight_min_for(spec),
    );
    if let Some(index) = filter.values.iter().position(|&w| w < min) {
        let value = filter.values[index];
        return Err(Error::WeightRange { index, value, min });
    }
    q.check(spec.out_channels())?;
    check_add(spec, add)?;
    check_activation(spec, q, add)?;
    let total = checked_packed_len(spec, tc)?;
    let f32_bias = if spec.has_weights() {
        out_padded(spec)
    } else {
        0
    };
    check_len("packed weights", total - f32_bias, tiles.len())?;
    check_len("per-channel data", acc_len(spec), acc.len())?;
    if let Some(b) = bias {
        let expected = if spec.has_weights() {
            spec.out_channels()
        } else {
            0
        };
        check_len("bias", expected, b.len())?;
    }
    if dot == 0 || !DOT_PACK.is_multiple_of(dot) {
        return Err(Error::Unsupported {
            what: "dot width",
            detail: "an arch's integer dot product must sum 1, 2 or 4 lanes",
        });
    }
    let (oc, stride, taps) = (spec.out_channels(), out_padded(spec), spec.fh * spec.fw);
    acc.fill(0);
    tiles.fill(0);
    for o in 0..stride {
        let r = q.rescale[if q.rescale.len() == 1 {
            0
        } else {
            padding_source(o, oc)
        }];
        // Padding channels take a real channel's: their sums are 0, so
        // they output the zero point whatever the rescale, and a vector
        // of channels takes one path through the output stage.
        for (i, w) in r.to_words().into_iter().enumerate() {
            acc[(row::RESCALE + i) * stride + o] = w;
        }
        acc[row::ZERO_POINT * stride + o] = q.output_zero_point;
        acc[row::MIN * stride + o] = i32::from(q.min);
        acc[row::MAX * stride + o] = i32::from(q.max);
        if let Some(a) = add {
            acc[row::CONV_ZERO_POINT * stride + o] = a.input1_zero_point;
            acc[row::SKIP_ZERO_POINT * stride + o] = a.input2_zero_point;
            acc[row::ADD_ZERO_POINT * stride + o] = a.output_zero_point;
            acc[row::ADD_MIN * stride + o] = i32::from(a.min);
            acc[row::ADD_MAX * stride + o] = i32::from(a.max);
            for (i, w) in row::add_words(a.rescale).into_iter().enumerate() {
                acc[(row::ADD_RESCALE + i) * stride + o] = w;
            }
        }
    }
    derive_steps(acc, stride, stride, add.is_some());
    if !spec.has_weights() {
        return Ok(());
    }
    acc[row::NEG_INPUT_ZERO_POINT * stride..][..stride].fill(q.input_zero_point.wrapping_neg());
    let weight = |o, tap, i| filter.values[filter.order.index(spec, o, tap, i)];
    let zp = q.input_zero_point.wrapping_add(x_offset);
    for o in 0..oc {
        let mut sum = bias.map_or(0, |b| b[o]);
        // A channelwise kernel subtracts the zero point from each input
        // (`NEG_INPUT_ZERO_POINT`); a broadcast one sums raw products.
        if spec.kind() == KernelKind::Broadcast {
            for tap in 0..taps {
                let s =
                    (0..spec.fc).fold(0i32, |s, i| s.wrapping_add(i32::from(weight(o, tap, i))));
                let c = zp.wrapping_mul(s);
                acc[(row::CORRECTION + tap) * stride + o] = c;
                sum = sum.wrapping_sub(c);
            }
        }
        acc[row::BIAS * stride + o] = sum;
    }
    for ot in 0..stride / tc {
        match spec.kind() {
            KernelKind::Channelwise => {
                for tap in 0..taps {
                    for t in 0..tc.min(oc.saturating_sub(ot * tc)) {
                        tiles[tiles_at(spec, tc, 1, ot, 0, tap, 0, t)] =
                            weight(ot * tc + t, tap, 0);
                    }
                }
            }
            KernelKind::Broadcast => {
                let (first, end) = tile_blocks(spec, tc, ot);
                let lanes = tap_len(spec, tc) / tc;
                let folds = small_ir::blocking::int8_folds_columns(m, spec);
                for b in 0..end - first {
                    for tap in 0..taps {
                        for lane in 0..lanes {
                            let ci = (first + b) * CB + lane;
                            for t in 0..tc {
                                let o = ot * tc + t;
                                if o < oc && ci < spec.in_channels() && ci / spec.fc == o / spec.k {
                                    let at = if folds {
                                        ot * tile_len(spec, tc) + folded_at(spec, tc, dot, tap, t)
                                    } else {
                                        tiles_at(spec, tc, dot, ot, b, tap, lane, t)
                                    };
                                    tiles[at] = weight(o, tap, ci % spec.fc);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// A residual layer needs its ADD's parameters, any other none; their
/// zero points and range are checked.
fn check_add(spec: &LayerSpec, add: Option<&AddParams>) -> Result<(), Error> {
    match (spec.residual, add) {
        (true, Some(a)) => {
            let zps = [
                a.input1_zero_point,
                a.input2_zero_point,
                a.output_zero_point,
            ];
            if zps.iter().any(|z| i8::try_from(*z).is_err()) {
                return Err(Error::Unsupported {
                    what: "ADD zero point",
                    detail: "an int8 zero point must be in -128..=127",
                });
            }
            if a.min > a.max {
                return Err(Error::Unsupported {
                    what: "ADD activation range",
                    detail: "min must not exceed max",
                });
            }
            Ok(())
        }
        (false, None) => Ok(()),
        (true, None) => Err(Error::Unsupported {
            what: "residual layer",
            detail: "needs the ADD's quantization (`AddParams`)",
        }),
        (false, Some(_)) => Err(Error::Unsupported {
            what: "ADD parameters",
            detail: "only a residual layer takes them",
        }),
    }
}

/// An `i8` layer's declared activation is its clamp: with `relu` or
/// `relu6` the clamp (the ADD's, for a residual layer) must cut every
/// value below the output zero point, TFLite's range for both.
fn check_activation(
    spec: &LayerSpec,
    q: &Requant<'_>,
    add: Option<&AddParams>,
) -> Result<(), Error> {
    let (min, zp) = match add {
        Some(a) => (a.min, a.output_zero_point),
        None => (q.min, q.output_zero_point),
    };
    // A LOGISTIC is the requantization itself: declared and given alike.
    let logistic =
        |r: &small_ir::quant::Rescale| matches!(r, small_ir::quant::Rescale::Logistic { .. });
    let declared = spec.activation == crate::Activation::Logistic;
    if q.rescale.iter().any(|r| logistic(r) != declared) {
        return Err(Error::Unsupported {
            what: "activation",
            detail: "an int8 layer declares `activation = logistic` exactly when its \
                     requantization is `Rescale::Logistic` (LiteRT's int8 LOGISTIC)",
        });
    }
    clamp_matches(spec.activation, min, zp)
}

/// See [`check_activation`]: `min` against the output zero point `zp`.
fn clamp_matches(act: crate::Activation, min: i8, zp: i32) -> Result<(), Error> {
    use crate::Activation::{Logistic, None};
    if matches!(act, None | Logistic) || i32::from(min) >= zp {
        return Ok(());
    }
    Err(Error::Unsupported {
        what: "activation",
        detail: "the layer declares relu or relu6, but its int8 clamp lets values below \
                 the output zero point (negative reals) through: its `min` must be at least \
                 the zero point (`small_core::ir::quant::activation_range`)",
    })
}

/// The per-channel rows of an `i8` layer without weights (pooling): the
/// clamp `min..=max` of its fused activation.
pub fn pack_i8_clamp(spec: &LayerSpec, min: i8, max: i8, acc: &mut [i32]) -> Result<(), Error> {
    if min > max {
        return Err(Error::Unsupported {
            what: "activation range",
            detail: "min must not exceed max",
        });
    }
    check_len("per-channel data", acc_len(spec), acc.len())?;
    let stride = out_padded(spec);
    acc.fill(0);
    acc[row::MIN * stride..][..stride].fill(i32::from(min));
    acc[row::MAX * stride..][..stride].fill(i32::from(max));
    Ok(())
}

/// The channel whose rescale output channel `o` of `oc` takes: itself,
/// or for a padding channel (`o >= oc`) the one `CB / 2` below when that
/// is a real channel, else the last. So a layer of at most `CB / 2`
/// channels has rows whose upper half repeats the lower, which
/// `Dot::requantize_pair` relies on.
fn padding_source(o: usize, oc: usize) -> usize {
    let half = CB / 2;
    if o < oc {
        o
    } else if o >= half && o - half < oc {
        o - half
    } else {
        oc - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Padding;
    use alloc::vec::Vec;

    fn spec(fh: usize, fw: usize, fc: usize, k: usize, g: usize) -> LayerSpec {
        LayerSpec {
            padding: Padding::Same,
            ..LayerSpec::new(fh, fw, fc, k, g)
        }
    }

    #[test]
    fn sizes_past_the_address_space_are_errors() {
        for s in [
            spec(3, 3, 16, 16, usize::MAX),
            spec(3, 3, 16, 1 << 62, 1),
            spec(usize::MAX, 2, 16, 16, 1),
            spec(1 << 40, 1 << 40, 16, 16, 1),
            spec(3, 3, 1, 1, 1 << 60),
        ] {
            assert!(
                matches!(
                    checked_packed_len(&s, 16),
                    Err(crate::ir::Error::TooLarge { .. })
                ),
                "{s:?}"
            );
            assert!(s.checked_weights_len().is_err(), "{s:?}");
            assert!(
                pack(&s, 16, Filter::none(), None, &mut []).is_err(),
                "{s:?}"
            );
        }
        // Tiles of 0 channels divided by 0; a filter of 0 taps walked its
        // tiles in chunks of 0 (a panic).
        assert!(matches!(
            checked_packed_len(&spec(3, 3, 16, 16, 1), 0),
            Err(crate::ir::Error::Unsupported { .. })
        ));
        let empty = spec(0, 3, 16, 16, 1);
        assert_eq!(checked_packed_len(&empty, 16), Ok(16));
        let mut out = [1.0; 16];
        pack(&empty, 16, Filter::none(), Some(&[2.0; 16]), &mut out).unwrap();
        assert_eq!(out, [2.0; 16]);
    }

    /// TFLite writes the same grouped layer as DEPTHWISE_CONV_2D
    /// (`[F_H][F_W][G*K]`) or as CONV_2D with groups (`[G*K][F_H][F_W][1]`):
    /// packed from either order, the buffers are the same.
    #[test]
    fn both_orders_pack_alike() {
        for (k, g, tc) in [(1, 20, 16), (1, 5, 16), (2, 9, 16), (3, 4, 8)] {
            let s = spec(3, 2, 1, k, g);
            let (oc, taps) = (s.out_channels(), 6);
            let ohwi: Vec<f32> = (0..oc * taps).map(|v| v as f32 + 1.0).collect();
            let mut dw = alloc::vec![0.0; ohwi.len()];
            for o in 0..oc {
                for tap in 0..taps {
                    dw[tap * oc + o] = ohwi[o * taps + tap];
                }
            }
            let bias: Vec<f32> = (0..oc).map(|v| -(v as f32)).collect();
            let n = checked_packed_len(&s, tc).unwrap();
            let (mut a, mut b) = (alloc::vec![0.0; n], alloc::vec![0.0; n]);
            pack(&s, tc, Filter::ohwi(&ohwi), Some(&bias), &mut a).unwrap();
            pack(&s, tc, Filter::depthwise(&dw), Some(&bias), &mut b).unwrap();
            assert_eq!(a, b, "{s:?}");
            // Every weight landed somewhere.
            assert_eq!(a.iter().filter(|v| **v > 0.0).count(), oc * taps, "{s:?}");
        }
        // Depthwise order with several input channels per group is refused.
        let s = spec(1, 1, 2, 1, 4);
        let mut out = alloc::vec![0.0; checked_packed_len(&s, 16).unwrap()];
        assert!(matches!(
            pack(&s, 16, Filter::depthwise(&[0.0; 8]), None, &mut out),
            Err(Error::ShapeMismatch {
                expected: 1,
                actual: 2,
                ..
            })
        ));
    }
}
