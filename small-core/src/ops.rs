//! Layers that do not fit SMaLL's abstract layer naturally (two or more
//! inputs, or an output larger than the input), in the simplest fast form
//! on the blocked layout. Each keeps the zero padding of the last channel
//! block.

use crate::{Activation, Blocked, CB, Element, Error, check_dim, check_len};

fn check_same<A: AsRef<[f32]>, B: AsRef<[f32]>>(
    a: &Blocked<A>,
    b: &Blocked<B>,
) -> Result<(), Error> {
    check_dim("channels", a.c(), b.c())?;
    check_dim("height", a.h(), b.h())?;
    check_dim("width", a.w(), b.w())
}

/// Element-wise `out = act(a + b)` (residual connections). Prefer a layer
/// declared with `residual`, which adds while the tile is in registers; this
/// is for an add that follows no generated layer. Padding stays 0 (0 + 0,
/// and every activation maps 0 to 0).
///
/// ```
/// use small_core::{Activation, Blocked, Dims, ops};
/// let a = Blocked::from_nhwc(Dims { c: 1, h: 1, w: 2 }, &[1.0, -3.0])?;
/// let b = Blocked::from_nhwc(Dims { c: 1, h: 1, w: 2 }, &[2.0, 1.0])?;
/// let mut y = Blocked::zeros(Dims { c: 1, h: 1, w: 2 })?;
/// ops::add(&a, &b, &mut y, Activation::Relu)?;
/// assert_eq!(y.to_nhwc(), [3.0, 0.0]);
/// # Ok::<(), small_core::Error>(())
/// ```
pub fn add<A: AsRef<[f32]>, B: AsRef<[f32]>, Y: AsRef<[f32]> + AsMut<[f32]>>(
    a: &Blocked<A>,
    b: &Blocked<B>,
    out: &mut Blocked<Y>,
    act: Activation,
) -> Result<(), Error> {
    check_same(a, b)?;
    check_same(a, out)?;
    for ((o, x), y) in out
        .as_mut_slice()
        .iter_mut()
        .zip(a.as_slice())
        .zip(b.as_slice())
    {
        *o = act.apply(x + y);
    }
    Ok(())
}

/// Nearest-neighbour upsampling by integer factors: every pixel repeated
/// `sh x sw` times (TensorFlow's ResizeNearestNeighbor for integer
/// factors). `out` must be `C x (H*sh) x (W*sw)`.
pub fn upsample_nearest<X: AsRef<[f32]>, Y: AsRef<[f32]> + AsMut<[f32]>>(
    x: &Blocked<X>,
    sh: usize,
    sw: usize,
    out: &mut Blocked<Y>,
) -> Result<(), Error> {
    if sh == 0 || sw == 0 {
        return Err(Error::Unsupported {
            what: "upsample factor",
            detail: "must be at least 1",
        });
    }
    check_dim("output channels", x.c(), out.c())?;
    // The products are checked: an overflowing one cannot be `out`'s.
    let too_large = |what, dims| Error::TooLarge {
        what,
        dims,
        refused: None,
    };
    let oh = x.h().checked_mul(sh).ok_or(too_large(
        "upsampled tensor (channels x input height x factor)",
        [x.c(), x.h(), sh],
    ))?;
    let ow = x.w().checked_mul(sw).ok_or(too_large(
        "upsampled tensor (channels x input width x factor)",
        [x.c(), x.w(), sw],
    ))?;
    check_dim("output height", oh, out.h())?;
    check_dim("output width", ow, out.w())?;
    let (h, w, ow, lanes) = (x.h(), x.w(), out.w(), x.dims().width());
    let (src, dst) = (x.as_slice(), out.as_mut_slice());
    let out_plane = (ow * h * sh * lanes).max(lanes);
    for (blk, plane) in dst.chunks_exact_mut(out_plane).enumerate() {
        for (p, px) in plane.chunks_exact_mut(lanes).enumerate() {
            let (oy, ox) = (p / ow, p % ow);
            let at = (blk * h * w + (oy / sh) * w + ox / sw) * lanes;
            px.copy_from_slice(&src[at..at + lanes]);
        }
    }
    Ok(())
}

/// Mean over height and width of every channel, for any input size;
/// `out` has `C` values. (A fixed-size global pool can also be declared
/// with `reduction = avg` and the input's size as the filter.)
pub fn global_avg_pool<X: AsRef<[f32]>>(x: &Blocked<X>, out: &mut [f32]) -> Result<(), Error> {
    check_len("pooled output", x.c(), out.len())?;
    let plane = x.h() * x.w();
    if plane == 0 {
        return Err(Error::InputTooSmall {
            what: "height",
            minimum: 1,
            actual: x.h(),
        });
    }
    let lanes = x.dims().width();
    let mut sums = [0.0f32; CB];
    for (blk, chans) in out.chunks_mut(CB).enumerate() {
        sums.fill(0.0);
        let block = &x.as_slice()[blk * plane * lanes..(blk + 1) * plane * lanes];
        for px in block.chunks_exact(lanes) {
            sums.iter_mut().zip(px).for_each(|(s, v)| *s += v);
        }
        chans
            .iter_mut()
            .zip(&sums)
            .for_each(|(o, s)| *o = s / plane as f32);
    }
    Ok(())
}

/// Concatenation along channels (TFLite's CONCATENATION on the last axis
/// of NHWC tensors): `out` holds `inputs[0]`'s channels, then
/// `inputs[1]`'s, and so on; every input has `out`'s height and width,
/// and their channels add up to `out`'s. A copy in any element type (an
/// int8 CONCATENATION copies too: LiteRT requires its inputs to be
/// quantized as its output). An input at a channel offset that is a
/// multiple of [`CB`] is copied block plane by block plane; any other
/// shifts its lanes ([`copy_channels`]). The padding lanes of `out` end
/// zero, whatever they held.
///
/// ```
/// use small_core::{Blocked, Dims, ops};
/// let a = Blocked::from_nhwc(Dims { c: 1, h: 1, w: 2 }, &[1.0, 2.0])?;
/// let b = Blocked::from_nhwc(Dims { c: 2, h: 1, w: 2 }, &[3.0, 4.0, 5.0, 6.0])?;
/// let mut y = Blocked::zeros(Dims { c: 3, h: 1, w: 2 })?;
/// ops::concat(&[&a, &b], &mut y)?;
/// assert_eq!(y.to_nhwc(), [1.0, 3.0, 4.0, 2.0, 5.0, 6.0]);
/// # Ok::<(), small_core::Error>(())
/// ```
pub fn concat<E: Element, X: AsRef<[E]>, Y: AsRef<[E]> + AsMut<[E]>>(
    inputs: &[&Blocked<X, E>],
    out: &mut Blocked<Y, E>,
) -> Result<(), Error> {
    let mut total = 0usize;
    for x in inputs {
        check_dim("input height", out.h(), x.h())?;
        check_dim("input width", out.w(), x.w())?;
        total = total.saturating_add(x.c());
    }
    check_dim("output channels (the inputs' sum)", total, out.c())?;
    let mut offset = 0;
    for x in inputs {
        copy_channels(x, offset, out)?;
        offset += x.c();
    }
    zero_padding(out);
    Ok(())
}

/// Writes `x` into channels `offset..offset + x.c()` of `out` (of `x`'s
/// height and width) and nothing else: per run of channels that lies in
/// one block of each, a whole block plane at once when the run is a full
/// block (`offset` and the run a multiple of [`CB`]), else the run's lanes
/// pixel by pixel, shifted from their block of `x` to theirs in `out`.
/// [`concat()`] is one call per input, then the padding.
///
/// ```
/// use small_core::{Blocked, Dims, ops};
/// let x = Blocked::from_nhwc(Dims { c: 2, h: 1, w: 1 }, &[7.0, 8.0])?;
/// let mut y = Blocked::zeros(Dims { c: 20, h: 1, w: 1 })?;
/// ops::copy_channels(&x, 15, &mut y)?; // channels 15 and 16: across two blocks
/// assert_eq!((y.get(15, 0, 0), y.get(16, 0, 0)), (Some(7.0), Some(8.0)));
/// # Ok::<(), small_core::Error>(())
/// ```
pub fn copy_channels<E: Element, X: AsRef<[E]>, Y: AsRef<[E]> + AsMut<[E]>>(
    x: &Blocked<X, E>,
    offset: usize,
    out: &mut Blocked<Y, E>,
) -> Result<(), Error> {
    check_dim("input height", out.h(), x.h())?;
    check_dim("input width", out.w(), x.w())?;
    if offset.saturating_add(x.c()) > out.c() {
        return Err(Error::ShapeMismatch {
            what: "output channels (at least offset + input channels)",
            expected: offset.saturating_add(x.c()),
            actual: out.c(),
        });
    }
    // Both tensors' lengths are checked: a block plane fits. A tensor of
    // fewer than CB channels may store fewer lanes per pixel (`width`).
    let pixels = x.h() * x.w();
    let (sw, dw) = (x.dims().width(), out.dims().width());
    let (src, dst) = (x.as_slice(), out.as_mut_slice());
    let mut c = 0;
    while c < x.c() {
        let (sb, sl) = (c / CB, c % CB);
        let (db, dl) = ((offset + c) / CB, (offset + c) % CB);
        let n = (CB - sl).min(CB - dl).min(x.c() - c);
        let from = &src[sb * pixels * sw..][..pixels * sw];
        let to = &mut dst[db * pixels * dw..][..pixels * dw];
        if n == CB {
            to.copy_from_slice(from);
        } else {
            for (t, f) in to.chunks_exact_mut(dw).zip(from.chunks_exact(sw)) {
                t[dl..dl + n].copy_from_slice(&f[sl..sl + n]);
            }
        }
        c += n;
    }
    Ok(())
}

/// Zeroes the padding lanes of `out`'s last channel block.
pub(crate) fn zero_padding<E: Element, Y: AsRef<[E]> + AsMut<[E]>>(out: &mut Blocked<Y, E>) {
    let (c, pixels) = (out.c(), out.h() * out.w());
    if c.is_multiple_of(CB) {
        return;
    }
    let lanes = out.dims().width();
    let plane = pixels * lanes;
    let last = &mut out.as_mut_slice()[(c / CB) * plane..][..plane];
    for px in last.chunks_exact_mut(lanes) {
        px[c % CB..].fill(E::default());
    }
}

/// Softmax of the final small vector of a classifier (numerically stable).
pub use crate::reference::softmax;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dims;
    use crate::reference::{self, Shape};
    use alloc::vec;
    use alloc::vec::Vec;

    fn values(n: usize, seed: u32) -> Vec<f32> {
        (0..n)
            .map(|i| (((i as u32).wrapping_mul(2654435761) ^ seed) % 1000) as f32 / 100.0 - 5.0)
            .collect()
    }

    #[test]
    fn add_upsample_and_pool_match_the_reference() {
        for &(c, h, w) in &[(1, 1, 1), (3, 2, 5), (17, 3, 4), (32, 4, 1)] {
            let n = c * h * w;
            let (a, b) = (values(n, 1), values(n, 2));
            let (ta, tb) = (
                Blocked::from_nhwc(Dims { c, h, w }, &a).unwrap(),
                Blocked::from_nhwc(Dims { c, h, w }, &b).unwrap(),
            );
            let mut want = alloc::vec![0.0; n];
            reference::add(&a, &b, &mut want).unwrap();
            reference::activation(&mut want, Activation::Relu6);
            let mut y = Blocked::zeros(Dims { c, h, w }).unwrap();
            add(&ta, &tb, &mut y, Activation::Relu6).unwrap();
            assert_eq!(y.to_nhwc(), want, "add c={c}");
            assert!(
                Blocked::from_buffer(Dims { c, h, w }, y.as_slice()).is_ok(),
                "padding stays zero"
            );

            let mut up = Blocked::zeros(Dims {
                c,
                h: h * 2,
                w: w * 3,
            })
            .unwrap();
            upsample_nearest(&ta, 2, 3, &mut up).unwrap();
            let mut want = alloc::vec![0.0; n * 6];
            reference::upsample_nearest(&a, Shape { h, w, c }, 2, 3, &mut want).unwrap();
            assert_eq!(up.to_nhwc(), want, "upsample c={c}");

            let mut got = alloc::vec![0.0; c];
            global_avg_pool(&ta, &mut got).unwrap();
            let mut want = alloc::vec![0.0; c];
            reference::global_avg_pool(&a, Shape { h, w, c }, &mut want).unwrap();
            for (g, r) in got.iter().zip(&want) {
                // Both sum h*w values in the same order and divide once.
                assert!(
                    (g - r).abs() <= (h * w) as f32 * f32::EPSILON * 5.0,
                    "pool {g} vs {r}"
                );
            }
        }
    }

    /// A blocked tensor of `c` channels holding `base + index` (NHWC
    /// order), generic over the element type.
    fn ramp<E: Element>(
        c: usize,
        h: usize,
        w: usize,
        of: impl Fn(usize) -> E,
    ) -> Blocked<Vec<E>, E> {
        let v: Vec<E> = (0..c * h * w).map(of).collect();
        Blocked::from_nhwc(Dims { c, h, w }, &v).unwrap()
    }

    #[test]
    fn concat_shifts_lanes_and_ends_with_zero_padding() {
        // Channel counts that are and are not multiples of CB, at offsets
        // that are and are not: whole block planes, lanes shifted within
        // one block and across two, and several inputs in one block.
        let splits: &[&[usize]] = &[
            &[16, 16],
            &[5, 3],
            &[3, 16],
            &[16, 5, 16],
            &[1, 1, 1],
            &[7, 17, 9, 32, 2],
            &[15, 2],
            &[0, 4, 0],
        ];
        for (n, split) in splits.iter().enumerate() {
            for &(h, w) in &[(1, 1), (3, 5), (2, 7)] {
                let xs: Vec<Blocked<Vec<f32>>> = (split.iter().enumerate())
                    .map(|(i, &c)| ramp(c, h, w, |k| (1000 * (i + 1) + k) as f32))
                    .collect();
                let c: usize = split.iter().sum();
                let dims = Dims { c, h, w };
                // Garbage where the output goes: every lane must be written.
                let mut y = Blocked::assume_padded(dims, vec![f32::NAN; dims.len()]).unwrap();
                let refs: Vec<&Blocked<Vec<f32>>> = xs.iter().collect();
                concat(&refs, &mut y).unwrap();
                let nhwc: Vec<Vec<f32>> = xs.iter().map(|x| x.to_nhwc()).collect();
                let inputs: Vec<(&[f32], Shape)> = (nhwc.iter().zip(&xs))
                    .map(|(v, x)| (v.as_slice(), Shape::from(x.dims())))
                    .collect();
                let mut want = vec![0.0; c * h * w];
                reference::concat(&inputs, &mut want).unwrap();
                assert_eq!(y.to_nhwc(), want, "split {n} {split:?} at {h}x{w}");
                assert!(
                    Blocked::from_buffer(dims, y.as_slice()).is_ok(),
                    "split {split:?}: padding lanes are zero"
                );
                // int8: the same copy.
                let xs: Vec<Blocked<Vec<i8>, i8>> = (split.iter().enumerate())
                    .map(|(i, &c)| ramp(c, h, w, |k| (k as i32 * 7 + i as i32 * 31 - 128) as i8))
                    .collect();
                let mut y = Blocked::assume_padded(dims, vec![-1i8; dims.len()]).unwrap();
                let refs: Vec<&Blocked<Vec<i8>, i8>> = xs.iter().collect();
                concat(&refs, &mut y).unwrap();
                let nhwc: Vec<Vec<i8>> = xs.iter().map(|x| x.to_nhwc()).collect();
                let inputs: Vec<(&[i8], Shape)> = (nhwc.iter().zip(&xs))
                    .map(|(v, x)| (v.as_slice(), Shape::from(x.dims())))
                    .collect();
                let mut want = vec![0i8; c * h * w];
                reference::int8::concat(&inputs, &mut want).unwrap();
                assert_eq!(y.to_nhwc(), want, "int8 split {split:?} at {h}x{w}");
                assert!(Blocked::from_buffer(dims, y.as_slice()).is_ok());
            }
        }
    }

    #[test]
    fn copy_channels_writes_its_channels_and_nothing_else() {
        let (h, w) = (2, 3);
        for c in [1, 5, 16, 17, 31] {
            for offset in [0, 1, 11, 15, 16, 20] {
                let out_c = offset + c + 3;
                let x = ramp(c, h, w, |k| k as f32 + 1.0);
                let dims = Dims { c: out_c, h, w };
                let mut y = Blocked::assume_padded(dims, vec![-7.0; dims.len()]).unwrap();
                copy_channels(&x, offset, &mut y).unwrap();
                for ch in 0..out_c {
                    for (py, px) in [(0, 0), (1, 2), (0, 1)] {
                        let got = y.get(ch, py, px).unwrap();
                        let want = if (offset..offset + c).contains(&ch) {
                            x.get(ch - offset, py, px).unwrap()
                        } else {
                            -7.0
                        };
                        assert_eq!(got, want, "c {c} offset {offset} channel {ch}");
                    }
                }
                // Padding lanes untouched, too (concat zeroes them).
                let last = y.as_slice().last().copied();
                assert!(out_c % CB == 0 || last == Some(-7.0));
            }
        }
    }

    #[test]
    fn concat_errors_name_expected_and_actual() {
        let a = Blocked::<Vec<f32>>::zeros(Dims { c: 3, h: 2, w: 2 }).unwrap();
        let b = Blocked::<Vec<f32>>::zeros(Dims { c: 3, h: 2, w: 3 }).unwrap();
        let mut y = Blocked::zeros(Dims { c: 6, h: 2, w: 2 }).unwrap();
        assert_eq!(
            concat(&[&a, &b], &mut y),
            Err(Error::ShapeMismatch {
                what: "input width",
                expected: 2,
                actual: 3
            })
        );
        assert_eq!(
            concat(&[&a, &a, &a], &mut y),
            Err(Error::ShapeMismatch {
                what: "output channels (the inputs' sum)",
                expected: 9,
                actual: 6
            })
        );
        assert_eq!(
            copy_channels(&a, 4, &mut y),
            Err(Error::ShapeMismatch {
                what: "output channels (at least offset + input channels)",
                expected: 7,
                actual: 6
            })
        );
    }

    #[test]
    fn shape_errors_name_expected_and_actual() {
        let a = Blocked::zeros(Dims { c: 3, h: 2, w: 2 }).unwrap();
        let mut y = Blocked::zeros(Dims { c: 3, h: 2, w: 3 }).unwrap();
        assert_eq!(
            add(&a, &a, &mut y, Activation::None),
            Err(Error::ShapeMismatch {
                what: "width",
                expected: 2,
                actual: 3
            })
        );
        assert_eq!(
            upsample_nearest(
                &a,
                2,
                2,
                &mut Blocked::zeros(Dims { c: 3, h: 4, w: 3 }).unwrap()
            ),
            Err(Error::ShapeMismatch {
                what: "output width",
                expected: 4,
                actual: 3
            })
        );
        assert_eq!(
            global_avg_pool(&a, &mut [0.0; 2]),
            Err(Error::BufferLength {
                what: "pooled output",
                expected: 3,
                actual: 2
            })
        );
    }
}
