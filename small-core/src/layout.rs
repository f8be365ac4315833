//! The blocked activation layout shared by every layer (SMaLL, Fig. 2).
//!
//! A tensor of `C` channels and `H x W` pixels is stored as
//! `[C / CB][H][W][CB]`: channels are split into blocks of [`CB`]
//! (fastest), then width, height, and the block index (slowest). Element
//! `(c, y, x)` lives at `(c / CB) * H * W * CB + (y * W + x) * CB + c % CB`.
//! A tensor of fewer than `CB` channels has one block, whose pixels are
//! [`Dims::width`] lanes apart: the channels rounded up to 4 on Cortex-M
//! and AArch64, and on x86-64 for a tensor of at most 4 channels; `CB`
//! otherwise ([`crate::ir::geometry::NARROW`]).
//!
//! **Invariant:** when `C` is not a multiple of `CB`, the lanes from `C`
//! to the end of the last block's pixel are zero in every pixel. Kernels
//! rely on it: a convolution reads whole blocks (padded weights are zero
//! too, so padding adds nothing), and every layer writes zeros there
//! again, so layers chain without repacking. Every constructor checks or
//! establishes it. Padding of H and W is never stored; kernels handle
//! borders.
//!
//! Every constructor takes the shape as a [`Dims`], by name, whatever the
//! order of the data it converts:
//!
//! ```
//! use small_core::{Blocked, Dims};
//! let dims = Dims { c: 3, h: 2, w: 5 };
//! let t = Blocked::<Vec<f32>>::zeros(dims)?;
//! assert_eq!((t.c(), t.h(), t.w()), (3, 2, 5));
//! assert_eq!(t.dims(), dims);
//! assert_eq!(t.as_slice().len(), dims.len()); // 2 x 5 pixels x dims.width() lanes
//! # Ok::<(), small_core::Error>(())
//! ```

use crate::{CB, Dims, Element, Error};
#[cfg(feature = "alloc")]
use alloc::vec::Vec;
use core::marker::PhantomData;
use small_ir::geometry::blocked_at;

pub(crate) use small_ir::geometry::tensor_len;

/// An activation tensor in the blocked layout, owning (`Vec<E>`) or
/// borrowing (`&mut [E]`, `&[E]`) its buffer of elements `E` (`f32`, the
/// default, or `i8`).
///
/// ```
/// use small_core::{Blocked, Dims};
/// // 2x2 pixels, 3 channels, NHWC order: pixel-major.
/// let nhwc: Vec<f32> = (0..12).map(|v| v as f32).collect();
/// let t = Blocked::from_nhwc(Dims { c: 3, h: 2, w: 2 }, &nhwc)?;
/// assert_eq!(t.get(2, 1, 0), Some(8.0)); // channel 2 of pixel (y=1, x=0)
/// assert_eq!(t.as_slice().len(), 2 * 2 * Dims { c: 3, h: 2, w: 2 }.width()); // one block
/// assert_eq!(t.to_nhwc(), nhwc);
/// # Ok::<(), small_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Blocked<B, E: Element = f32> {
    dims: Dims,
    data: B,
    elem: PhantomData<E>,
}

impl<E: Element, B: AsRef<[E]>> Blocked<B, E> {
    /// A tensor over `data`, whose length the caller checked.
    fn new(dims: Dims, data: B) -> Self {
        Blocked {
            dims,
            data,
            elem: PhantomData,
        }
    }

    /// Wraps a buffer already in the blocked layout. Fails if its length is
    /// not [`dims.len()`](Dims::len) or a padding lane is not zero.
    pub fn from_buffer(dims: Dims, data: B) -> Result<Self, Error> {
        crate::check_len("blocked tensor", dims.checked_len()?, data.as_ref().len())?;
        let t = Blocked::new(dims, data);
        let zero = E::default();
        if let Some(index) = t.padding_indices().find(|&i| t.data.as_ref()[i] != zero) {
            return Err(Error::NonZeroPadding { index });
        }
        Ok(t)
    }

    /// Wraps a buffer that a generated layer wrote (or will write) whole,
    /// checking only its length: for a model's arena, where scanning the
    /// padding lanes at every step would cost more than small layers do.
    #[inline]
    pub(crate) fn assume_padded(dims: Dims, data: B) -> Result<Self, Error> {
        crate::check_len("blocked tensor", dims.checked_len()?, data.as_ref().len())?;
        Ok(Blocked::new(dims, data))
    }

    /// The shape: channels, height and width.
    pub fn dims(&self) -> Dims {
        self.dims
    }
    /// Logical channels.
    pub fn c(&self) -> usize {
        self.dims.c
    }
    /// Height.
    pub fn h(&self) -> usize {
        self.dims.h
    }
    /// Width.
    pub fn w(&self) -> usize {
        self.dims.w
    }
    /// Number of channel blocks, `ceil(C / CB)`.
    pub fn blocks(&self) -> usize {
        self.dims.c.div_ceil(CB)
    }
    /// The blocked buffer.
    pub fn as_slice(&self) -> &[E] {
        self.data.as_ref()
    }
    /// The tensor borrowed: a `Blocked` over `&[E]`.
    pub fn view(&self) -> Blocked<&[E], E> {
        Blocked::new(self.dims, self.data.as_ref())
    }
    /// Gives the buffer back.
    pub fn into_inner(self) -> B {
        self.data
    }

    /// Element `(channel, y, x)`, or `None` outside the tensor.
    pub fn get(&self, c: usize, y: usize, x: usize) -> Option<E> {
        let Dims { c: cs, h, w } = self.dims;
        (c < cs && y < h && x < w).then(|| self.as_slice()[self.index(c, y, x)])
    }

    fn index(&self, c: usize, y: usize, x: usize) -> usize {
        let width = self.dims.width();
        let (block, offset) = blocked_at(c, y * self.dims.w + x, width);
        block * (self.dims.h * self.dims.w * width) + offset
    }

    /// Indices of every padding lane (empty when `C % CB == 0`).
    fn padding_indices(&self) -> impl Iterator<Item = usize> + '_ {
        // The plane first: `blocks * h * w * CB` fits (checked by every
        // constructor), but `(blocks - 1) * h` alone need not when the
        // plane is empty.
        let Dims { c, h, w } = self.dims;
        let (pixels, width) = (h * w, self.dims.width());
        let last = self.blocks().saturating_sub(1) * (pixels * width);
        let used = c - self.blocks().saturating_sub(1) * CB;
        // No padding lane, no pixel to visit: a tensor of 0 channels may
        // have 2^40 of them.
        let (lanes, pixels) = if c.is_multiple_of(CB) {
            (width..width, 0)
        } else {
            (used..width, pixels)
        };
        (0..pixels).flat_map(move |p| lanes.clone().map(move |l| last + p * width + l))
    }

    /// Writes the tensor in NHWC order (`[H][W][C]`, TFLite's) into `dst`.
    pub fn write_nhwc(&self, dst: &mut [E]) -> Result<(), Error> {
        let Dims { c, h, w } = self.dims;
        crate::check_len("NHWC output", self.dims.elements(), dst.len())?;
        // Pixel-major, a block's lanes at a time: element by element (an
        // index, a division and a bounds check each) AD's 640 outputs
        // took about 1 µs of a 22 µs int8 inference (AMD EPYC Zen 1).
        let (width, data) = (self.dims.width(), self.as_slice());
        if h * w == 1 && c >= CB {
            // One pixel of whole blocks: the channels lie in order, padding
            // at the end (a fully connected layer's output).
            dst.copy_from_slice(&data[..c]);
            return Ok(());
        }
        let plane = h * w * width;
        for (p, px) in dst.chunks_exact_mut(c.max(1)).enumerate() {
            for (b, lanes) in px.chunks_mut(CB).enumerate() {
                let at = b * plane + p * width;
                copy_lanes(lanes, &data[at..at + lanes.len()]);
            }
        }
        Ok(())
    }

    /// Writes the tensor in NCHW order (`[C][H][W]`) into `dst`.
    pub fn write_nchw(&self, dst: &mut [E]) -> Result<(), Error> {
        let Dims { c, h, w } = self.dims;
        let plane = h * w;
        crate::check_len("NCHW output", c * plane, dst.len())?;
        for (c, ch) in dst.chunks_exact_mut(plane.max(1)).enumerate() {
            for (p, v) in ch.iter_mut().enumerate() {
                *v = self.as_slice()[self.index(c, p / w, p % w)];
            }
        }
        Ok(())
    }

    /// The tensor in NHWC order.
    #[cfg(feature = "alloc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
    pub fn to_nhwc(&self) -> Vec<E> {
        let mut v = alloc::vec![E::default(); self.dims.elements()];
        self.write_nhwc(&mut v).expect("length computed above");
        v
    }

    /// The tensor in NCHW order.
    #[cfg(feature = "alloc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
    pub fn to_nchw(&self) -> Vec<E> {
        let mut v = alloc::vec![E::default(); self.dims.elements()];
        self.write_nchw(&mut v).expect("length computed above");
        v
    }
}

impl<E: Element, B: AsRef<[E]> + AsMut<[E]>> Blocked<B, E> {
    /// Takes a buffer of [`dims.len()`](Dims::len) elements and zeroes it: a
    /// tensor ready to be written by a layer, with no allocation.
    pub fn zeroed_in(dims: Dims, mut data: B) -> Result<Self, Error> {
        crate::check_len("blocked tensor", dims.checked_len()?, data.as_ref().len())?;
        data.as_mut().fill(E::default());
        Ok(Blocked::new(dims, data))
    }

    /// Overwrites the tensor from NHWC data of the same shape, padding
    /// lanes included (zeroed), so any buffer becomes a valid tensor.
    /// With feature `std` and two threads or more, a tensor of fewer than
    /// [`CB`] channels (a network's input) is filled half by each of two
    /// threads, row halves, as the first layer's parts will read it.
    pub fn fill_from_nhwc(&mut self, src: &[E]) -> Result<(), Error> {
        let Dims { c, h, w } = self.dims;
        crate::check_len("NHWC input", self.dims.elements(), src.len())?;
        // Pixel-major copy: pixel p of channel block b is at
        // (b * H * W + p) * width.
        let width = self.dims.width();
        let data = self.data.as_mut();
        if c < CB {
            // One block: a fixed-size pixel each.
            let fill = match width {
                4 => Some(fill_one_block::<E, 4> as fn(&mut [E], &[E], usize)),
                CB => Some(fill_one_block::<E, CB> as fn(&mut [E], &[E], usize)),
                _ => None,
            };
            if let Some(fill) = fill {
                fill_rows(data, src, (c, h, w, width), fill);
                return Ok(());
            }
        }
        if h * w == 1 && c >= CB {
            // One pixel of whole blocks: the channels in order, then the
            // last block's padding lanes. Block by block (a copy and a
            // zero-length fill each), AD's 640 inputs took a fifth of the
            // int8 network's 3.7 µs (Intel Xeon VM, Emerald Rapids class).
            let (head, pad) = data[..c.div_ceil(CB) * CB].split_at_mut(c);
            head.copy_from_slice(src);
            pad.fill(E::default());
            return Ok(());
        }
        // Pixel-major copy: pixel p of channel block b is at
        // (b * H * W + p) * width.
        let plane = h * w * width;
        for (p, px) in src.chunks_exact(c.max(1)).enumerate() {
            for (b, lanes) in px.chunks(CB).enumerate() {
                let at = b * plane + p * width;
                let block = &mut data[at..at + width];
                copy_lanes(&mut block[..lanes.len()], lanes);
                // Padding lanes too: the buffer may hold anything (an arena).
                if lanes.len() < width {
                    block[lanes.len()..].fill(E::default());
                }
            }
        }
        Ok(())
    }

    /// Overwrites the tensor from NCHW data of the same shape.
    pub fn fill_from_nchw(&mut self, src: &[E]) -> Result<(), Error> {
        let Dims { c, h, w } = self.dims;
        let plane = h * w;
        crate::check_len("NCHW input", c * plane, src.len())?;
        for (c, ch) in src.chunks_exact(plane.max(1)).enumerate() {
            for (p, &v) in ch.iter().enumerate() {
                let i = self.index(c, p / w, p % w);
                self.data.as_mut()[i] = v;
            }
        }
        Ok(())
    }

    /// The tensor borrowed mutably: a `Blocked` over `&mut [E]`.
    pub fn view_mut(&mut self) -> Blocked<&mut [E], E> {
        Blocked::new(self.dims, self.data.as_mut())
    }

    /// The raw buffer, for kernels. Writing a non-zero value into a padding
    /// lane breaks the layout invariant (module docs); generated layers
    /// never do.
    #[doc(hidden)]
    pub fn as_mut_slice(&mut self) -> &mut [E] {
        self.data.as_mut()
    }
}

#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl<E: Element> Blocked<Vec<E>, E> {
    /// A zero tensor of shape `dims`. [`Error::TooLarge`] if its size
    /// exceeds the address space or cannot be allocated.
    pub fn zeros(dims: Dims) -> Result<Self, Error> {
        let n = dims.checked_len()?;
        let mut data = Vec::new();
        data.try_reserve_exact(n).map_err(|_| Error::TooLarge {
            what: "blocked tensor (channels x height x width)",
            dims: [dims.c, dims.h, dims.w],
            // At most isize::MAX: n <= MAX_ELEMENTS.
            refused: Some(n * core::mem::size_of::<E>()),
        })?;
        data.resize(n, E::default());
        Ok(Blocked::new(dims, data))
    }

    /// Converts NHWC data (`[H][W][C]`, TFLite's order) of one image of
    /// shape `dims`. The length of `src` is checked before anything is
    /// allocated.
    pub fn from_nhwc(dims: Dims, src: &[E]) -> Result<Self, Error> {
        crate::check_len("NHWC input", Self::logical_len(dims)?, src.len())?;
        let mut t = Self::zeros(dims)?;
        t.fill_from_nhwc(src)?;
        Ok(t)
    }

    /// Converts NCHW data (`[C][H][W]`) of one image of shape `dims`. The
    /// length of `src` is checked before anything is allocated.
    pub fn from_nchw(dims: Dims, src: &[E]) -> Result<Self, Error> {
        crate::check_len("NCHW input", Self::logical_len(dims)?, src.len())?;
        let mut t = Self::zeros(dims)?;
        t.fill_from_nchw(src)?;
        Ok(t)
    }

    /// `c * (h * w)`, checked like the blocked size, which is never smaller
    /// (`c * h` alone may overflow when `w` is 0).
    fn logical_len(dims: Dims) -> Result<usize, Error> {
        dims.checked_len()?;
        Ok(dims.elements())
    }
}

/// `dst = src` for one block's lanes: a fixed-size copy for a whole
/// block (a few vector moves), a plain one for a last partial block (a
/// run-time length is a `memcpy` call).
#[inline(always)]
fn copy_lanes<E: Element>(dst: &mut [E], src: &[E]) {
    match (
        <&mut [E; CB]>::try_from(&mut *dst),
        <&[E; CB]>::try_from(src),
    ) {
        (Ok(d), Ok(s)) => *d = *s,
        _ => dst.copy_from_slice(src),
    }
}

/// `fill` over a one-block tensor of `(c, h, w)`; with threads, each of
/// two threads fills half the rows, about the halves the first layer's
/// two parts read (its parts split the output rows alike), so the
/// worker's part reads input its own core wrote, and the copy itself is
/// halved. On AMD EPYC Zen 4 at two threads, VWW 0.25 int8 (96x96x3
/// input) 78-85 -> 74-75.5 µs, the other networks unchanged
/// (`mlperf_tiny --threads 2`, six alternated rounds).
fn fill_rows<E: Element>(
    data: &mut [E],
    src: &[E],
    (c, h, w, width): (usize, usize, usize, usize),
    fill: fn(&mut [E], &[E], usize),
) {
    #[cfg(feature = "std")]
    if h >= 2 && !cfg!(miri) {
        let pool = crate::threads::pool();
        // The first pixel of the lower half, in both buffers.
        let (mid, mid_src) = (h / 2 * w * width, h / 2 * w * c.max(1));
        if pool.threads() >= 2 && mid <= data.len() && mid_src <= src.len() {
            let (lo, hi) = data.split_at_mut(mid);
            let (src_lo, src_hi) = src.split_at(mid_src);
            let halves = [
                std::sync::Mutex::new((lo, src_lo)),
                std::sync::Mutex::new((hi, src_hi)),
            ];
            pool.run(2, &|k| {
                let mut half = halves[k].lock().unwrap_or_else(|e| e.into_inner());
                let (dst, src) = &mut *half;
                fill(dst, src, c);
            });
            return;
        }
    }
    let _ = (h, w, width);
    fill(data, src, c);
}

/// [`Blocked::fill_from_nhwc`] of a tensor of `c <= W` channels stored `W`
/// lanes per pixel: each pixel's channels, then zeros.
fn fill_one_block<E: Element, const W: usize>(data: &mut [E], src: &[E], c: usize) {
    // The networks' inputs (an image's 3 channels, an audio feature map's
    // 1) with their channel count a constant too: VWW 0.25's 96x96x3
    // input took 6.4 µs of a 118 µs `f32` inference with `c` a run-time
    // value, 5.1 µs with `c = 3` (Intel Xeon VM, family 6 model 167, one
    // thread; ResNet-8's 32x32x3 0.77 -> 0.49 µs).
    match c {
        1 => return fill_pixels::<E, 1, W>(data, src),
        3 if W >= 3 => return fill_pixels::<E, 3, W>(data, src),
        _ => {}
    }
    for (block, px) in data.chunks_exact_mut(W).zip(src.chunks_exact(c.max(1))) {
        // A fixed-size pixel built lane by lane and stored whole: a copy of
        // `c` channels (a run-time length) became a `memcpy` call per
        // pixel, 6x slower on VWW's 96x96x3 input (Xeon VM).
        let mut lanes = [E::default(); W];
        for (i, lane) in lanes.iter_mut().enumerate() {
            if i < c {
                *lane = px[i];
            }
        }
        if let Ok(block) = <&mut [E; W]>::try_from(block) {
            *block = lanes;
        }
    }
}

/// [`fill_one_block`] of `C <= W` channels.
fn fill_pixels<E: Element, const C: usize, const W: usize>(data: &mut [E], src: &[E]) {
    let (blocks, _) = data.as_chunks_mut::<W>();
    let (pixels, _) = src.as_chunks::<C>();
    for (block, px) in blocks.iter_mut().zip(pixels) {
        let mut lanes = [E::default(); W];
        lanes[..C].copy_from_slice(px);
        *block = lanes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MAX_ELEMENTS, blocked_len, checked_blocked_len};
    use alloc::string::ToString;
    use alloc::vec::Vec;

    /// Small deterministic generator so the tests need no dependency.
    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    }

    #[test]
    fn round_trips_random_shapes_exactly() {
        let mut s = 7;
        for _ in 0..200 {
            let (c, h, w) = (
                1 + lcg(&mut s) as usize % 40,
                1 + lcg(&mut s) as usize % 9,
                1 + lcg(&mut s) as usize % 9,
            );
            let src: Vec<f32> = (0..c * h * w).map(|_| lcg(&mut s) as f32 - 1e9).collect();
            let t = Blocked::from_nhwc(Dims { c, h, w }, &src).unwrap();
            assert_eq!(t.to_nhwc(), src, "NHWC round trip c={c} h={h} w={w}");
            let nchw = t.to_nchw();
            assert_eq!(
                Blocked::from_nchw(Dims { c, h, w }, &nchw).unwrap(),
                t,
                "NCHW round trip"
            );
            for i in t.padding_indices() {
                assert_eq!(t.as_slice()[i], 0.0);
            }
        }
    }

    /// A one-pixel tensor of whole blocks (a fully connected layer's) is
    /// copied in and out whole: into a buffer full of other values, every
    /// channel lands where `get` reads it and the last block's padding
    /// lanes become zero.
    #[test]
    fn one_pixel_fills_over_old_values_and_writes_back() {
        for c in [16, 17, 31, 32, 40, 640] {
            let dims = Dims { c, h: 1, w: 1 };
            let src: Vec<f32> = (0..c).map(|i| i as f32 + 0.5).collect();
            let mut t = Blocked::from_buffer(dims, alloc::vec![0.0; dims.len()]).unwrap();
            t.data.iter_mut().for_each(|v| *v = -7.0);
            t.fill_from_nhwc(&src).unwrap();
            for (ch, &v) in src.iter().enumerate() {
                assert_eq!(t.get(ch, 0, 0), Some(v), "c={c} channel {ch}");
            }
            assert!(t.padding_indices().all(|i| t.as_slice()[i] == 0.0), "c={c}");
            let mut back = alloc::vec![0.0; c];
            t.write_nhwc(&mut back).unwrap();
            assert_eq!(back, src, "c={c}");
            assert!(t.fill_from_nhwc(&src[1..]).is_err(), "c={c}: short input");
            assert!(t.write_nhwc(&mut back[1..]).is_err(), "c={c}: short output");
        }
    }

    /// The shape is named, so NHWC and NCHW data of one tensor give the
    /// same tensor, each element `(c, y, x)` where the index computation of
    /// its order put it. No two of `c`, `h` and `w` are equal, so a swapped
    /// height and width, or channels taken for a spatial size, would read
    /// other values (or fail).
    #[test]
    fn nhwc_and_nchw_of_a_non_square_shape_agree_with_their_indices() {
        let dims = Dims { c: 3, h: 2, w: 5 };
        let Dims { c, h, w } = dims;
        let value = |ch: usize, y: usize, x: usize| (100 * ch + 10 * y + x) as f32;
        let mut nhwc = alloc::vec![0.0; c * h * w];
        let mut nchw = alloc::vec![0.0; c * h * w];
        for ch in 0..c {
            for y in 0..h {
                for x in 0..w {
                    nhwc[(y * w + x) * c + ch] = value(ch, y, x);
                    nchw[(ch * h + y) * w + x] = value(ch, y, x);
                }
            }
        }
        let a = Blocked::from_nhwc(dims, &nhwc).unwrap();
        let b = Blocked::from_nchw(dims, &nchw).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.dims(), dims);
        assert_eq!((a.c(), a.h(), a.w()), (3, 2, 5));
        for ch in 0..c {
            for y in 0..h {
                for x in 0..w {
                    assert_eq!(a.get(ch, y, x), Some(value(ch, y, x)), "({ch}, {y}, {x})");
                    // One block (c < CB): lane `ch` of pixel `y * w + x`,
                    // pixels `width` lanes apart.
                    let px = (y * w + x) * dims.width();
                    assert_eq!(a.as_slice()[px + ch], value(ch, y, x));
                }
            }
        }
        assert_eq!(a.get(c, 0, 0), None);
        assert_eq!(a.get(0, h, 0), None);
        assert_eq!(a.get(0, 0, w), None);
        assert_eq!(a.to_nhwc(), nhwc);
        assert_eq!(a.to_nchw(), nchw);
        // The same data read as 5 x 2: another tensor, not silently this one.
        let swapped = Blocked::from_nhwc(Dims { c, h: w, w: h }, &nhwc).unwrap();
        assert_ne!(swapped, a);
        assert_ne!(swapped.get(0, 1, 0), a.get(0, 1, 0));
    }

    #[test]
    fn layout_places_elements_as_documented() {
        // c = 17: two blocks; channel 16 is lane 0 of block 1.
        let (c, h, w) = (17, 2, 3);
        let src: Vec<f32> = (0..c * h * w).map(|v| v as f32 + 1.0).collect();
        let t = Blocked::from_nhwc(Dims { c, h, w }, &src).unwrap();
        assert_eq!(t.as_slice().len(), 2 * h * w * CB);
        // pixel (y=1, x=2) is pixel 5; NHWC index of channel 16 is 5*17+16.
        assert_eq!(
            t.as_slice()[h * w * CB + 5 * CB],
            (5 * 17 + 16) as f32 + 1.0
        );
        assert_eq!(t.as_slice()[5 * CB + 3], (5 * 17 + 3) as f32 + 1.0);
        // Lanes 1..16 of the last block are padding: zero, and 6 pixels * 15 of them.
        assert_eq!(t.padding_indices().count(), h * w * 15);
        assert!(t.padding_indices().all(|i| t.as_slice()[i] == 0.0));
        // c = 3: the pixel's other lanes (13, or 1 where it is 4 lanes
        // wide); c = 32: none.
        assert_eq!(
            Blocked::<Vec<f32>>::zeros(Dims { c: 3, h: 1, w: 1 })
                .unwrap()
                .padding_indices()
                .count(),
            Dims { c: 3, h: 1, w: 1 }.width() - 3
        );
        assert_eq!(
            Blocked::<Vec<f32>>::zeros(Dims { c: 32, h: 2, w: 2 })
                .unwrap()
                .padding_indices()
                .count(),
            0
        );
    }

    #[test]
    fn bad_input_names_expected_and_actual() {
        let e = Blocked::from_nhwc(Dims { c: 3, h: 2, w: 2 }, &[0.0; 11]).unwrap_err();
        assert_eq!(
            e,
            Error::BufferLength {
                what: "NHWC input",
                expected: 12,
                actual: 11
            }
        );
        assert_eq!(
            e.to_string(),
            "NHWC input buffer has 11 elements, expected 12"
        );
        let mut buf = alloc::vec![0.0; blocked_len(3, 1, 2)];
        let padding = Dims { c: 3, h: 1, w: 2 }.width() + 3; // lane 3 of pixel 1
        buf[padding] = 1.0;
        assert_eq!(
            Blocked::from_buffer(Dims { c: 3, h: 1, w: 2 }, &buf[..]).unwrap_err(),
            Error::NonZeroPadding { index: padding }
        );
        assert_eq!(
            Blocked::from_buffer(Dims { c: 3, h: 1, w: 2 }, &buf[1..]).unwrap_err(),
            Error::BufferLength {
                what: "blocked tensor",
                expected: blocked_len(3, 1, 2),
                actual: blocked_len(3, 1, 2) - 1
            }
        );
        let t = Blocked::<Vec<f32>>::zeros(Dims { c: 3, h: 1, w: 2 }).unwrap();
        let mut out = [0.0; 5];
        assert_eq!(
            t.write_nhwc(&mut out),
            Err(Error::BufferLength {
                what: "NHWC output",
                expected: 6,
                actual: 5
            })
        );
    }

    #[test]
    fn sizes_are_checked_before_anything_is_allocated_or_scanned() {
        // 16 x (2^60 + 1) x 16 lanes wrapped to 16 elements.
        let wraps = (1 << 60) + 1;
        let wrapped = Dims {
            c: 16,
            h: wraps,
            w: 1,
        };
        assert_eq!(checked_blocked_len(16, wraps, 1), None);
        let e = Error::TooLarge {
            what: "blocked tensor (channels x height x width)",
            dims: [16, wraps, 1],
            refused: None,
        };
        assert_eq!(Blocked::<Vec<f32>>::zeros(wrapped).unwrap_err(), e);
        assert_eq!(Blocked::from_nhwc(wrapped, &[0.0; 16]).unwrap_err(), e);
        assert_eq!(
            Blocked::from_buffer(wrapped, &[0.0; 16][..]).unwrap_err(),
            e
        );
        // The slice's length before the 1 PiB allocation.
        let huge = Dims {
            c: 16,
            h: 1 << 22,
            w: 1 << 22,
        };
        assert!(matches!(
            Blocked::from_nhwc(huge, &[0.0; 10]),
            Err(Error::BufferLength { actual: 10, .. })
        ));
        // isize::MAX bytes: MAX_ELEMENTS fits, one block more does not.
        assert_eq!(
            checked_blocked_len(CB, MAX_ELEMENTS / CB, 1),
            Some(MAX_ELEMENTS / CB * CB)
        );
        assert_eq!(checked_blocked_len(CB + 1, MAX_ELEMENTS / CB, 1), None);
        // An empty tensor of huge planes: its plane is still indexed.
        assert_eq!(checked_blocked_len(0, usize::MAX, 1), None);
        assert_eq!(checked_blocked_len(0, 1 << 40, 1), Some(0));
        // No padding lane to scan in 2^40 pixels of 0 channels; c * h
        // overflowing while w = 0.
        let empty = Dims {
            c: 0,
            h: 1 << 40,
            w: 1,
        };
        assert!(Blocked::<&[f32]>::from_buffer(empty, &[][..]).is_ok());
        let t = Blocked::<Vec<f32>>::zeros(Dims {
            c: usize::MAX,
            h: 1 << 40,
            w: 0,
        })
        .unwrap();
        assert!(t.to_nhwc().is_empty() && t.to_nchw().is_empty());
        assert!(
            Blocked::<Vec<f32>>::zeros(Dims { c: 0, h: 3, w: 2 })
                .unwrap()
                .to_nhwc()
                .is_empty()
        );
    }

    #[test]
    fn borrowed_buffers_need_no_allocation() {
        let mut arena = [1.0f32; 64];
        let dims = Dims { c: 3, h: 2, w: 2 };
        let mut t = Blocked::zeroed_in(dims, &mut arena[..dims.len()]).unwrap();
        t.fill_from_nhwc(&[1.0; 12]).unwrap();
        assert_eq!(t.get(2, 1, 1), Some(1.0));
        assert_eq!(t.get(3, 0, 0), None);
        assert_eq!(arena[3], 0.0, "padding lane zeroed");
    }

    #[test]
    fn fill_from_nhwc_makes_any_buffer_valid() {
        // An arena slot full of NaN: filling must also zero the padding lanes.
        let (c, h, w) = (19, 2, 3);
        let mut buf = alloc::vec![f32::NAN; blocked_len(c, h, w)];
        let src: Vec<f32> = (0..c * h * w).map(|v| v as f32).collect();
        Blocked::assume_padded(Dims { c, h, w }, &mut buf[..])
            .unwrap()
            .fill_from_nhwc(&src)
            .unwrap();
        let t = Blocked::from_buffer(Dims { c, h, w }, &buf[..]).unwrap();
        assert_eq!(t.to_nhwc(), src);
    }

    /// The one-block fill splits its rows between two threads (`fill_rows`):
    /// every element and padding lane as one thread writes them, for odd
    /// and even heights, one row, and both element types.
    #[cfg(feature = "std")]
    #[cfg_attr(miri, ignore = "threads: the fill runs on one thread under Miri")]
    #[test]
    fn narrow_fill_on_two_threads_equals_one_thread() {
        fn check<E: Element>(value: impl Fn(usize) -> E, poison: E) {
            for (c, h, w) in [
                (1, 49, 10),
                (3, 7, 5),
                (4, 2, 3),
                (3, 1, 6),
                (2, 96, 96),
                (16, 5, 3),
            ] {
                let src: Vec<E> = (0..c * h * w).map(&value).collect();
                let filled = |threads: usize| {
                    crate::threads::set_pool(crate::threads::Pool::new(threads));
                    let mut buf = alloc::vec![poison; blocked_len(c, h, w)];
                    Blocked::assume_padded(Dims { c, h, w }, &mut buf[..])
                        .unwrap()
                        .fill_from_nhwc(&src)
                        .unwrap();
                    buf
                };
                let (one, two) = (filled(1), filled(2));
                assert_eq!(one, two, "{c}x{h}x{w}");
                let t = Blocked::from_buffer(Dims { c, h, w }, &one[..]).unwrap();
                assert_eq!(t.to_nhwc(), src, "{c}x{h}x{w}");
            }
            crate::threads::set_pool(crate::threads::Pool::new(crate::threads::default_threads()));
        }
        check(|v| v as f32 - 7.5, f32::NAN);
        check(|v| (v % 251) as i8, i8::MIN);
    }
}
