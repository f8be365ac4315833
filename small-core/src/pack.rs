//! Packing weights from TFLite order into the order the kernels walk,
//! the packed layout of `small_ir::geometry` (every address comes from
//! its `packed_at`). Zeros fill every place where an input channel does
//! not feed an output channel (another group, or padding): they keep the
//! padding lanes of every output zero.

pub(crate) use small_ir::geometry::{
    block_len, checked_packed_len, out_padded, tile_blocks, tile_len,
};
use small_ir::geometry::{packed_at, tap_len};

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
