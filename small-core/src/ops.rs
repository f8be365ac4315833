//! Layers that do not fit SMaLL's abstract layer naturally (two inputs, or
//! an output larger than the input), in the simplest fast form on the
//! blocked layout. Each keeps the zero padding of the last channel block.

use crate::{Activation, Blocked, CB, Error, check_dim, check_len};

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
    let (h, w, ow) = (x.h(), x.w(), out.w());
    let (src, dst) = (x.as_slice(), out.as_mut_slice());
    for (blk, plane) in dst.chunks_exact_mut(out_plane(ow, h * sh)).enumerate() {
        for (p, px) in plane.chunks_exact_mut(CB).enumerate() {
            let (oy, ox) = (p / ow, p % ow);
            let at = (blk * h * w + (oy / sh) * w + ox / sw) * CB;
            px.copy_from_slice(&src[at..at + CB]);
        }
    }
    Ok(())
}

fn out_plane(w: usize, h: usize) -> usize {
    (w * h * CB).max(CB)
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
    let mut sums = [0.0f32; CB];
    for (blk, chans) in out.chunks_mut(CB).enumerate() {
        sums.fill(0.0);
        for px in x.as_slice()[blk * plane * CB..(blk + 1) * plane * CB].chunks_exact(CB) {
            sums.iter_mut().zip(px).for_each(|(s, v)| *s += v);
        }
        chans
            .iter_mut()
            .zip(&sums)
            .for_each(|(o, s)| *o = s / plane as f32);
    }
    Ok(())
}

/// Softmax of the final small vector of a classifier (numerically stable).
pub use crate::reference::softmax;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dims;
    use crate::reference::{self, Shape};
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
