//! Packing weights from TFLite order into the order the kernels walk.
//!
//! A packed buffer is `[bias][weights]`:
//! - bias: `round_up(G*K, CB)` values, zero past the real channels;
//! - broadcast kernels (convolution, group convolution, pointwise, FC): per
//!   output tile of `TC` channels, per input block of `CB` channels the
//!   tile reads, `[F_H][F_W][CB][TC]` (`[F_H][F_W][C][TC]` if the layer has
//!   `C < CB` input channels, see [`block_lanes`]), zero where an input
//!   channel does not feed an output channel (another group, or padding). Every tile has
//!   room for [`max_tile_blocks`] blocks so tiles are a fixed stride apart;
//! - channelwise kernels (depthwise): per tile of `TC` channels
//!   `[F_H][F_W][TC]`, zero past the real channels.
//!
//! The zeros are what keeps the padding lanes of every output zero.

use crate::{CB, Error, KernelKind, LayerSpec, check_len, checked_elements};

/// Output channels rounded up to whole channel blocks.
pub const fn out_padded(spec: &LayerSpec) -> usize {
    spec.out_channels().div_ceil(CB) * CB
}

/// Input channel blocks `[first, end)` that output tile `ot` (of `tc`
/// channels) reads in a broadcast kernel.
pub const fn tile_blocks(spec: &LayerSpec, tc: usize, ot: usize) -> (usize, usize) {
    let blocks = spec.in_channels().div_ceil(CB);
    if spec.g == 1 {
        return (0, blocks);
    }
    let first_out = ot * tc;
    if first_out >= spec.out_channels() {
        return (0, 0);
    }
    let last_out = min(first_out + tc, spec.out_channels()) - 1;
    let first_in = first_out / spec.k * spec.fc;
    let end_in = (last_out / spec.k + 1) * spec.fc;
    (first_in / CB, end_in.div_ceil(CB))
}

const fn min(a: usize, b: usize) -> usize {
    if a < b { a } else { b }
}

/// The largest number of input blocks any output tile reads.
pub const fn max_tile_blocks(spec: &LayerSpec, tc: usize) -> usize {
    let mut ot = 0;
    let mut most = 0;
    while ot * tc < out_padded(spec) {
        let (a, b) = tile_blocks(spec, tc, ot);
        if b - a > most {
            most = b - a;
        }
        ot += 1;
    }
    most
}

/// Lanes of a packed input block of a broadcast tile: `CB`, or the input
/// channels of a layer with fewer than one block, whose only block is
/// packed without the padding lanes its kernel never reads (a 1-channel
/// stem would otherwise store 16 times its weights).
pub const fn block_lanes(spec: &LayerSpec) -> usize {
    if spec.in_channels() < CB {
        spec.in_channels()
    } else {
        CB
    }
}

/// Elements of one packed input block of a broadcast tile.
pub const fn block_len(spec: &LayerSpec, tc: usize) -> usize {
    spec.fh * spec.fw * block_lanes(spec) * tc
}

/// Elements of the weights of one tile.
pub const fn tile_len(spec: &LayerSpec, tc: usize) -> usize {
    match spec.kind() {
        KernelKind::Broadcast => max_tile_blocks(spec, tc) * block_len(spec, tc),
        KernelKind::Channelwise => spec.fh * spec.fw * tc,
    }
}

/// Length of the packed buffer for tiles of `tc` channels (0 without weights).
pub const fn packed_len(spec: &LayerSpec, tc: usize) -> usize {
    if !spec.has_weights() {
        return 0;
    }
    out_padded(spec) + out_padded(spec) / tc * tile_len(spec, tc)
}

/// [`packed_len`] with every size checked: [`Error::TooLarge`] if a count
/// exceeds [`MAX_ELEMENTS`](crate::MAX_ELEMENTS), [`Error::Unsupported`]
/// for tiles of 0 channels. The `const fn`s above assume a valid layer
/// (they size a declared layer's constants, where an overflow is a compile
/// error); a [`LayerSpec`] built at run time goes through this first.
///
/// Its work is linear in the output-channel tiles of grouped layers, which
/// every caller has checked against a buffer that exists (the weights, or
/// an output tensor of that many channels).
pub const fn checked_packed_len(spec: &LayerSpec, tc: usize) -> Result<usize, Error> {
    if !spec.has_weights() {
        return Ok(0);
    }
    if tc == 0 {
        return Err(Error::Unsupported {
            what: "channel tile",
            detail: "must hold at least 1 channel",
        });
    }
    let what = "packed weights (output channels x filter taps x input lanes per tile)";
    let (inp, out) = match spec.checked_channels() {
        Ok(c) => c,
        Err(e) => return Err(e),
    };
    let out_padded = match checked_elements(what, out.div_ceil(CB), CB, 1) {
        Ok(n) => n,
        Err(e) => return Err(e),
    };
    if tc > out_padded {
        // No whole tile: the bias alone (`packed_len` with 0 tiles).
        return Ok(out_padded);
    }
    let taps = spec.fh.saturating_mul(spec.fw);
    // An upper bound of the weights of all tiles, `out_padded / tc` tiles
    // of `taps x lanes x tc` per input block a tile reads: every block
    // (one group), or those of the groups `tc` channels can touch.
    let lanes = match spec.kind() {
        KernelKind::Channelwise => 1,
        KernelKind::Broadcast => {
            let blocks = inp.div_ceil(CB);
            let per_tile = tc
                .div_ceil(if spec.k == 0 { 1 } else { spec.k })
                .saturating_add(1)
                .saturating_mul(spec.fc)
                .div_ceil(CB)
                .saturating_add(1);
            let read = if spec.g == 1 || blocks < per_tile {
                blocks
            } else {
                per_tile
            };
            read.saturating_mul(block_lanes(spec))
        }
    };
    let all = match checked_elements(what, out_padded, taps, lanes) {
        Ok(n) => n,
        Err(e) => return Err(e),
    };
    if all.saturating_add(out_padded) > crate::MAX_ELEMENTS {
        return Err(Error::TooLarge {
            what,
            dims: [out_padded, taps, lanes],
            refused: None,
        });
    }
    // Exact, now that no product can overflow. A tile of no weights needs
    // no walk over the tiles.
    let tile = match spec.kind() {
        KernelKind::Channelwise => taps * tc,
        KernelKind::Broadcast if all == 0 => 0,
        KernelKind::Broadcast => tile_len(spec, tc),
    };
    Ok(out_padded + out_padded / tc * tile)
}

/// Packs TFLite-order `weights` (see [`LayerSpec::weights_len`]) and an
/// optional bias into `out`, which must hold [`packed_len`] elements.
pub fn pack(
    spec: &LayerSpec,
    tc: usize,
    weights: &[f32],
    bias: Option<&[f32]>,
    out: &mut [f32],
) -> Result<(), Error> {
    check_len("weights", spec.checked_weights_len()?, weights.len())?;
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
    let (bias_out, w_out) = out.split_at_mut(out_padded(spec));
    if let Some(b) = bias {
        bias_out[..b.len()].copy_from_slice(b);
    }
    let (fh, fw, fc, oc) = (spec.fh, spec.fw, spec.fc, spec.out_channels());
    let tiles = out_padded(spec) / tc;
    let tile_len = (w_out.len() / tiles.max(1)).max(1);
    for (ot, tile) in w_out.chunks_exact_mut(tile_len).enumerate().take(tiles) {
        match spec.kind() {
            KernelKind::Channelwise => {
                // TFLite depthwise [1][F_H][F_W][C] -> [F_H][F_W][TC].
                for (i, v) in tile.iter_mut().enumerate() {
                    let (tap, t) = (i / tc, i % tc);
                    let c = ot * tc + t;
                    if c < oc {
                        *v = weights[tap * oc + c];
                    }
                }
            }
            KernelKind::Broadcast => {
                // OHWI [G*K][F_H][F_W][F_C] -> per block [F_H][F_W][CB][TC].
                let (first, end) = tile_blocks(spec, tc, ot);
                for (b, block) in tile
                    .chunks_exact_mut(block_len(spec, tc))
                    .take(end - first)
                    .enumerate()
                {
                    let lanes = block_lanes(spec);
                    for (i, v) in block.iter_mut().enumerate() {
                        let (tap, ii, t) = (i / (lanes * tc), i / tc % lanes, i % tc);
                        let (o, ci) = (ot * tc + t, (first + b) * CB + ii);
                        if o < oc && ci < spec.in_channels() && ci / fc == o / spec.k {
                            *v = weights[((o * fh * fw) + tap) * fc + ci % fc];
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
    use crate::{Activation, Padding, Reduction};

    fn spec(fh: usize, fw: usize, fc: usize, k: usize, g: usize) -> LayerSpec {
        LayerSpec {
            fh,
            fw,
            fc,
            k,
            g,
            sh: 1,
            sw: 1,
            padding: Padding::Same,
            reduction: Reduction::Fma,
            activation: Activation::None,
            residual: false,
        }
    }

    #[test]
    fn checked_packed_len_is_packed_len_for_valid_layers() {
        for g in [1, 2, 3, 9, 16, 17, 40] {
            for (fc, k) in [(1, 1), (1, 2), (2, 3), (3, 16), (16, 8), (17, 33)] {
                for (fh, fw) in [(1, 1), (3, 3), (10, 4)] {
                    let s = spec(fh, fw, fc, k, g);
                    for tc in [1, 4, 8, 16, 32, 48, 64] {
                        assert_eq!(
                            checked_packed_len(&s, tc),
                            Ok(packed_len(&s, tc)),
                            "{s:?} tc {tc}"
                        );
                    }
                }
            }
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
                matches!(checked_packed_len(&s, 16), Err(Error::TooLarge { .. })),
                "{s:?}"
            );
            assert!(s.checked_weights_len().is_err(), "{s:?}");
            assert!(pack(&s, 16, &[], None, &mut []).is_err(), "{s:?}");
        }
        // Tiles of 0 channels divided by 0; a filter of 0 taps walked its
        // tiles in chunks of 0 (a panic).
        assert!(matches!(
            checked_packed_len(&spec(3, 3, 16, 16, 1), 0),
            Err(Error::Unsupported { .. })
        ));
        let empty = spec(0, 3, 16, 16, 1);
        assert_eq!(checked_packed_len(&empty, 16), Ok(16));
        let mut out = [1.0; 16];
        pack(&empty, 16, &[], Some(&[2.0; 16]), &mut out).unwrap();
        assert_eq!(out, [2.0; 16]);
    }
}
