//! A layer call checked: shapes and buffers validated against the layer
//! ([`Problem::new`], [`Problem::with_residual`],
//! [`Problem::with_residual_in_place`]), and pointwise and elementwise
//! layers flattened into one row.

use crate::layout::tensor_len;
use crate::pack::{checked_packed_len, out_padded};
use crate::{Blocked, CB, Dtype, Element, Error, KernelKind, LayerSpec, check_dim, check_len};
use small_ir::geometry::{acc_rows, run_rows, width};

/// A layer's packed weights as the loop nest reads them: the bias, one
/// value of the accumulator type per output channel (padded to whole
/// channel blocks), and the tiles of weights
/// ([`crate::ir::geometry`]).
#[derive(Debug, Clone, Copy)]
pub struct Packed<'a, E: Element = f32> {
    /// [`out_padded`] values, or none for a layer without weights.
    pub bias: &'a [E::Acc],
    /// Every output-channel tile's weights.
    pub tiles: &'a [E],
}

impl<'a> Packed<'a, f32> {
    /// An `f32` layer's buffer `[bias][tiles]`, as `pack` writes it, split
    /// where the tiles start (for any `spec`: [`Problem::new`] checks both
    /// lengths).
    pub fn split(spec: &LayerSpec, packed: &'a [f32]) -> Self {
        let bias_len = match spec.checked_channels() {
            Ok((_, out)) if spec.has_weights() => out.div_ceil(CB).saturating_mul(CB),
            _ => 0,
        };
        let (bias, tiles) = packed.split_at(packed.len().min(bias_len));
        Packed { bias, tiles }
    }
}

/// A layer and the channel tile it runs with, with the packed length they
/// imply ([`checked_packed_len`]) worked out once, by [`Tiling::new`]:
/// a generated layer keeps one per arch in a `const`, so a call checks its
/// weights' length without walking the layer's tiles again (a loop of
/// divisions per call, 6 % of AD int8's time on an Ice Lake VM). The
/// fields are private, so the length always belongs to the spec and tile
/// beside it.
///
/// ```
/// use small_core::LayerSpec;
/// use small_core::__rt::Tiling;
/// const SPEC: LayerSpec = LayerSpec::new(3, 3, 16, 32, 1);
/// const T: Tiling<'static> = Tiling::new(&SPEC, 16);
/// assert_eq!(T.tc(), 16);
/// // The bias (32) and two tiles of 3 x 3 taps x 16 lanes x 16 channels.
/// assert_eq!(T.packed_len(), Ok(32 + 2 * 9 * 16 * 16));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Tiling<'a> {
    spec: &'a LayerSpec,
    tc: usize,
    /// `None` where it is an error, which the call works out again.
    packed_len: Option<usize>,
}

impl<'a> Tiling<'a> {
    /// `spec` in tiles of `tc` output channels.
    pub const fn new(spec: &'a LayerSpec, tc: usize) -> Self {
        Tiling {
            spec,
            tc,
            packed_len: match checked_packed_len(spec, tc) {
                Ok(n) => Some(n),
                Err(_) => None,
            },
        }
    }

    /// The layer.
    pub const fn spec(&self) -> &'a LayerSpec {
        self.spec
    }

    /// Output channels per tile.
    pub const fn tc(&self) -> usize {
        self.tc
    }

    /// [`checked_packed_len`] of the layer and tile.
    pub const fn packed_len(&self) -> Result<usize, Error> {
        match self.packed_len {
            Some(n) => Ok(n),
            None => checked_packed_len(self.spec, self.tc),
        }
    }
}

/// A checked call of a layer: shapes validated, buffers borrowed.
pub struct Problem<'a, E: Element = f32> {
    /// Output channels per tile, to count the units of work.
    pub(super) tc: usize,
    pub(super) spec: &'a LayerSpec,
    /// The input, read by every part; borrowed for `'a` (shared, or with
    /// the output from one mutable buffer: [`Problem::in_buffer`]).
    pub(super) inp: *const E,
    in_life: core::marker::PhantomData<&'a [E]>,
    pub(super) ih: usize,
    pub(super) iw: usize,
    /// The output, written through by every part of the call (disjoint
    /// rows); borrowed mutably for `'a`.
    pub(super) out: *mut E,
    out_life: core::marker::PhantomData<&'a mut [E]>,
    pub(super) oh: usize,
    pub(super) ow: usize,
    pub(super) pad_top: usize,
    pub(super) pad_left: usize,
    pub(super) packed: Packed<'a, E>,
    res: Option<&'a [E]>,
    /// The residual is `out` itself (see [`Problem::with_residual_in_place`]).
    pub(super) in_place: bool,
    /// The output overlaps the input, below it ([`Problem::in_buffer`]):
    /// the walk takes the order that reads every input before an output
    /// lands on it, in one part.
    pub(super) shifted: bool,
    /// An elementwise layer without weights (ReLU): every channel block's
    /// plane, one after another, is one row of one block.
    pub(super) elementwise: bool,
    /// Only the walk's rows (or, in a one-row problem, its columns)
    /// `band.0..band.1` of the output, in one part
    /// ([`Problem::shaped_band`]).
    pub(super) band: Option<(usize, usize)>,
}

// SAFETY: a Problem is shared by the threads of one layer call, and each
// part writes only the output rows of its own units (see `run`); the
// input, weights and residual are only read.
unsafe impl<E: Element> Sync for Problem<'_, E> {}

/// A layer call's shapes, checked against its layer once: the input's
/// and output's dims agree with the spec, and the walk's rows, columns
/// and padding and the tensors' lengths follow from them. A `model!`
/// works them out for every line in a `const`, so that its `forward`
/// checks only lengths ([`Problem::shaped`]): through the views and
/// [`Problem::new`] the checks were a fifth of AD int8's time (Intel
/// Xeon VM, Emerald Rapids class). The fields are private: a `Shapes`
/// always comes from [`Shapes::of`].
#[derive(Debug, Clone, Copy)]
pub struct Shapes {
    spec: LayerSpec,
    ih: usize,
    iw: usize,
    oh: usize,
    ow: usize,
    pad_top: usize,
    pad_left: usize,
    elementwise: bool,
    /// The output's width if the walk runs its rows as one row (a
    /// pointwise layer), else 0.
    flat_width: usize,
    in_len: usize,
    out_len: usize,
}

/// `?` for a `const fn`.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Err(e),
        }
    };
}

impl Shapes {
    /// A call of `spec` from an input of dims `x` to an output of dims
    /// `y`, or the first mismatch.
    ///
    /// ```
    /// use small_core::{Dims, LayerSpec, Padding};
    /// use small_core::__rt::Shapes;
    /// let spec = LayerSpec { padding: Padding::Same, ..LayerSpec::new(3, 3, 8, 16, 1) };
    /// let (x, y) = (Dims { c: 8, h: 5, w: 7 }, Dims { c: 16, h: 5, w: 7 });
    /// assert!(Shapes::of(&spec, x, y).is_ok());
    /// assert!(Shapes::of(&spec, x, Dims { c: 16, h: 5, w: 6 }).is_err());
    /// ```
    pub const fn of(spec: &LayerSpec, x: crate::Dims, y: crate::Dims) -> Result<Shapes, Error> {
        let (in_channels, out_channels) = tri!(spec.checked_channels());
        tri!(check_dim("input channels", in_channels, x.c));
        tri!(check_dim("output channels", out_channels, y.c));
        let (dh, dw) = tri!(spec.output_dims(x.h, x.w));
        tri!(check_dim("output height", dh.out, y.h));
        tri!(check_dim("output width", dw.out, y.w));
        let in_len = tri!(tensor_len(x.c, x.h, x.w));
        let out_len = tri!(tensor_len(y.c, y.h, y.w));
        // A 1x1 stride-1 layer runs as one row of H*W pixels (`run_rows`).
        // Without weights (ReLU) every block is alike, and the blocks'
        // planes are contiguous too: one row of one block holds them all.
        let pointwise = spec.pointwise();
        let elementwise =
            pointwise && matches!(spec.kind(), KernelKind::Channelwise) && !spec.has_weights();
        let (oh, ow) = run_rows(spec, (dh.out, dw.out));
        let (ih, iw, oh, ow) = if elementwise {
            let n = x.c.div_ceil(CB) * x.h * x.w;
            (1, n, 1, n)
        } else if pointwise {
            (1, x.h * x.w, oh, ow)
        } else {
            (x.h, x.w, oh, ow)
        };
        Ok(Shapes {
            spec: *spec,
            ih,
            iw,
            oh,
            ow,
            pad_top: dh.before,
            pad_left: dw.before,
            elementwise,
            flat_width: if pointwise && !elementwise && oh == 1 {
                dw.out
            } else {
                0
            },
            in_len,
            out_len,
        })
    }
}

impl Shapes {
    /// The band of the walk ([`Problem::shaped_band`]) that holds output
    /// rows `rows`: the same rows, or of a pointwise layer's one-row walk,
    /// their pixels.
    pub const fn walk_band(&self, rows: (usize, usize)) -> (usize, usize) {
        if self.flat_width > 0 {
            (rows.0 * self.flat_width, rows.1 * self.flat_width)
        } else {
            rows
        }
    }

    /// The output's width if the walk runs all its rows as one row (a
    /// pointwise layer), else 0.
    pub const fn flat_width(&self) -> usize {
        self.flat_width
    }

    /// Columns of the walk's one row if [`Shapes::flat_width`] is not 0.
    pub const fn walk_columns(&self) -> usize {
        self.ow
    }
}

impl<'a, E: Element> Problem<'a, E> {
    /// Checks `x`, `y` and the packed weights against the layer and its
    /// tile.
    pub fn new<X: AsRef<[E]>, Y: AsRef<[E]> + AsMut<[E]>>(
        tiling: Tiling<'a>,
        x: &'a Blocked<X, E>,
        y: &'a mut Blocked<Y, E>,
        packed: Packed<'a, E>,
    ) -> Result<Self, Error> {
        Self::with_residual::<X, Y, X>(tiling, x, None, y, packed)
    }

    /// As [`Problem::new`], plus a residual tensor `skip` of the output's
    /// shape, added before the activation.
    #[inline(always)]
    pub fn with_residual<X: AsRef<[E]>, Y: AsRef<[E]> + AsMut<[E]>, S: AsRef<[E]>>(
        tiling: Tiling<'a>,
        x: &'a Blocked<X, E>,
        skip: Option<&'a Blocked<S, E>>,
        y: &'a mut Blocked<Y, E>,
        packed: Packed<'a, E>,
    ) -> Result<Self, Error> {
        let (x_dims, y_dims) = (x.dims(), y.dims());
        // Every `Blocked` constructor checked its shape's size and its
        // buffer's length, but a buffer type's `AsRef` may hand out another
        // slice later: the kernels index by the shape, so check the very
        // slices they will read and write.
        let inp = x.as_slice();
        let res = skip.map(|s| (s.dims(), s.as_slice()));
        let out = y.as_mut_slice();
        Self::checked(
            tiling,
            (x_dims, inp.as_ptr(), inp.len()),
            res,
            (y_dims, out.as_mut_ptr(), out.len()),
            packed,
        )
    }

    /// The checks and the flattening of [`Problem::with_residual`], on
    /// the input's and output's dims, first elements and lengths.
    #[inline(always)]
    fn checked(
        tiling: Tiling<'a>,
        x: (crate::Dims, *const E, usize),
        skip: Option<(crate::Dims, &'a [E])>,
        y: (crate::Dims, *mut E, usize),
        packed: Packed<'a, E>,
    ) -> Result<Self, Error> {
        let ((xd, inp, in_len), (yd, out, out_len)) = (x, y);
        let shapes = Shapes::of(tiling.spec, xd, yd)?;
        if let Some((s, _)) = skip {
            check_dim("residual channels", yd.c, s.c)?;
            check_dim("residual height", yd.h, s.h)?;
            check_dim("residual width", yd.w, s.w)?;
        }
        Self::assemble(
            tiling,
            &shapes,
            (inp, in_len),
            skip.map(|(_, r)| r),
            (out, out_len),
            packed,
        )
    }

    /// A call of a `model!` line, whose shapes were checked when the
    /// program compiled ([`Shapes::of`] in a `const`): only the buffers'
    /// and weights' lengths are checked here. `shapes` must be of this
    /// layer (else an error); `skip`, if any, has the output's shape, and
    /// `in_place` says the residual is `y` itself (see
    /// [`Problem::with_residual_in_place`]).
    #[inline(always)]
    pub fn shaped(
        tiling: Tiling<'a>,
        shapes: &Shapes,
        x: &'a [E],
        skip: Option<&'a [E]>,
        y: &'a mut [E],
        in_place: bool,
        packed: Packed<'a, E>,
    ) -> Result<Self, Error> {
        if shapes.spec != *tiling.spec {
            return Err(Error::Unsupported {
                what: "layer call",
                detail: "its shapes were checked for another layer",
            });
        }
        // A residual layer reads its residual from `skip` or `y`; any
        // other layer from neither.
        let residual = shapes.spec.residual;
        if residual != (skip.is_some() || in_place) || (skip.is_some() && in_place) {
            return Err(crate::layer::skip_mismatch(residual));
        }
        let mut p = Self::assemble(
            tiling,
            shapes,
            (x.as_ptr(), x.len()),
            skip,
            (y.as_mut_ptr(), y.len()),
            packed,
        )?;
        p.in_place = in_place;
        Ok(p)
    }

    /// The length checks every call makes, and the problem of `shapes`.
    #[inline(always)]
    fn assemble(
        tiling: Tiling<'a>,
        shapes: &Shapes,
        (inp, in_len): (*const E, usize),
        skip: Option<&'a [E]>,
        (out, out_len): (*mut E, usize),
        packed: Packed<'a, E>,
    ) -> Result<Self, Error> {
        let (spec, tc) = (tiling.spec, tiling.tc);
        if tc == 0 {
            return Err(Error::Unsupported {
                what: "channel tile",
                detail: "must hold at least 1 channel",
            });
        }
        // `checked_packed_len` counts an `f32` layer's bias and tiles (one
        // buffer), checked; the tiles are the same for every dtype, and
        // an `i8` layer's per-channel rows are a few times the bias.
        let total = tiling.packed_len()?;
        let f32_bias = if spec.has_weights() {
            out_padded(spec)
        } else {
            0
        };
        let acc_len = match spec.dtype {
            Dtype::F32 => f32_bias,
            Dtype::I8 => out_padded(spec)
                .checked_mul(acc_rows(spec))
                .ok_or(Error::TooLarge {
                    what: "per-channel data (rows x channels x 1)",
                    dims: [acc_rows(spec), out_padded(spec), 1],
                    refused: None,
                })?,
        };
        check_len("packed bias", acc_len, packed.bias.len())?;
        check_len("packed weights", total - f32_bias, packed.tiles.len())?;
        check_len("input tensor", shapes.in_len, in_len)?;
        if let Some(r) = skip {
            check_len("residual tensor", shapes.out_len, r.len())?;
        }
        check_len("output tensor", shapes.out_len, out_len)?;
        Ok(Problem {
            tc,
            spec,
            inp,
            in_life: core::marker::PhantomData,
            ih: shapes.ih,
            iw: shapes.iw,
            oh: shapes.oh,
            ow: shapes.ow,
            out,
            out_life: core::marker::PhantomData,
            pad_top: shapes.pad_top,
            pad_left: shapes.pad_left,
            packed,
            res: skip,
            in_place: false,
            shifted: false,
            elementwise: shapes.elementwise,
            band: None,
        })
    }

    /// As [`Problem::shaped`] (no residual), for the output rows (or, of a
    /// one-row walk, the output columns) `band.0..band.1` of the walk
    /// only, in one part: a part of a band of layers
    /// ([`band`](crate::band)). The rows are the walk's: a pointwise
    /// layer's walk has one row of all its pixels ([`Shapes::walk_band`]
    /// converts output rows), and computes whole column tiles of it, so
    /// the outputs it writes run from the column tile holding `band.0` to
    /// the one holding `band.1 - 1`.
    ///
    /// # Errors
    /// As [`Problem::shaped`]; and [`Error::Unsupported`] for a residual
    /// or elementwise layer.
    ///
    /// # Safety
    /// `y` is valid for reads and writes of `y_len` elements for `'a`, and
    /// while the call runs no other thread reads or writes the outputs it
    /// writes (above), nor writes `x`.
    #[inline(always)]
    pub unsafe fn shaped_band(
        tiling: Tiling<'a>,
        shapes: &Shapes,
        x: &'a [E],
        (y, y_len): (*mut E, usize),
        packed: Packed<'a, E>,
        band: (usize, usize),
    ) -> Result<Self, Error> {
        // A residual layer's residual, an elementwise layer's walk (every
        // channel block as one row) and LOGISTIC's clearing of the padding
        // lanes afterwards all span the whole output.
        let whole = shapes.spec.residual
            || shapes.elementwise
            || shapes.spec.activation == crate::Activation::Logistic;
        if whole {
            return Err(Error::Unsupported {
                what: "layer in a band",
                detail: "residual, elementwise and LOGISTIC layers run whole",
            });
        }
        let mut p = Self::assemble(
            tiling,
            shapes,
            (x.as_ptr(), x.len()),
            None,
            (y, y_len),
            packed,
        )?;
        let end = if p.oh == 1 { p.ow } else { p.oh };
        p.band = Some((band.0.min(end), band.1.min(end)));
        Ok(p)
    }

    /// As [`Problem::new`] with the input and the output in one buffer
    /// `buf`, at the offsets `x.0` and `y.0` (of dims `x.1` and `y.1`).
    /// They may overlap as
    /// [`in_place_shift`](small_ir::plan::in_place_shift)`(spec, x, y,
    /// o_wb, tc)` allows (`o_wb`, `tc`: the tile's columns and channels;
    /// [`may_overlap`](small_ir::plan::may_overlap)): the walk then reads
    /// every input before an output lands on it (see [`run`](super::run)),
    /// and the call runs as one part. `model!` runs
    /// a layer so when nothing else reads its input, to save its input's
    /// space (without `std`: [`crate::model::IN_PLACE_LAYERS`]).
    ///
    /// # Errors
    /// As [`Problem::new`]; and [`Error::BufferLength`] if a tensor
    /// leaves `buf`, [`Error::ShapeMismatch`] if the output overlaps the
    /// input other than so.
    pub fn in_buffer(
        tiling: Tiling<'a>,
        o_wb: usize,
        buf: &'a mut [E],
        x: (usize, crate::Dims),
        y: (usize, crate::Dims),
        packed: Packed<'a, E>,
    ) -> Result<Self, Error> {
        let (x_len, y_len) = (x.1.checked_len()?, y.1.checked_len()?);
        let x_end = x.0.saturating_add(x_len);
        let y_end = y.0.saturating_add(y_len);
        for (what, end) in [
            ("buffer (at least the input's end)", x_end),
            ("buffer (at least the output's end)", y_end),
        ] {
            if end > buf.len() {
                return Err(Error::BufferLength {
                    what,
                    expected: end,
                    actual: buf.len(),
                });
            }
        }
        let overlap = x.0 < y_end && y.0 < x_end;
        let shift = small_ir::plan::in_place_shift(tiling.spec, x.1, y.1, o_wb, tiling.tc);
        if overlap && !small_ir::plan::may_overlap(shift, x.0, y.0) {
            let (what, expected) = match shift {
                Some(0) => ("output offset over the input (the input's, or apart)", x.0),
                Some(s) => (
                    "output offset below the input (at most, or apart)",
                    x.0.saturating_sub(s),
                ),
                None => ("output offset (apart from the input: at least)", x_end),
            };
            return Err(Error::ShapeMismatch {
                what,
                expected,
                actual: y.0,
            });
        }
        // Both pointers derive from `buf` alone (no views of it), so the
        // kernels' reads and writes share one provenance.
        let base = buf.as_mut_ptr();
        let mut p = Self::checked(
            tiling,
            (x.1, base.wrapping_add(x.0), x_len),
            None,
            (y.1, base.wrapping_add(y.0), y_len),
            packed,
        )?;
        p.shifted = overlap;
        Ok(p)
    }

    /// As [`Problem::with_residual`] with the residual already in `y`:
    /// `y = activation(layer(x) + y)`. Each output element reads its own
    /// residual before it is written, so the output can replace it (a
    /// residual's buffer reused in place, as DORY plans ResNet's adds).
    pub fn with_residual_in_place<X: AsRef<[E]>, Y: AsRef<[E]> + AsMut<[E]>>(
        tiling: Tiling<'a>,
        x: &'a Blocked<X, E>,
        y: &'a mut Blocked<Y, E>,
        packed: Packed<'a, E>,
    ) -> Result<Self, Error> {
        let mut p = Self::new(tiling, x, y, packed)?;
        p.in_place = true;
        Ok(p)
    }

    /// True if the output overlaps the input ([`Problem::in_buffer`]):
    /// the call runs in one part, through
    /// [`run_in_buffer`](super::run_in_buffer).
    pub fn overlaps(&self) -> bool {
        self.shifted
    }

    /// Zeroes the padding lanes of the output's last channel block, which
    /// an activation that does not map 0 to 0 (LOGISTIC: 0.5) wrote; the
    /// layout keeps them zero.
    pub fn clear_padding_lanes(&self) {
        let c = self.spec.out_channels();
        let (first, pixels, width) = (c % CB, self.oh * self.ow, width(c));
        if first == 0 {
            return;
        }
        let last = (c / CB) * pixels * width;
        for px in 0..pixels {
            for lane in first..width {
                // SAFETY: the output holds `ceil(c / CB)` blocks of
                // `pixels` pixels (its length was checked in `new`: `oh x
                // ow` is the plane, or one row of it), and nothing else
                // writes it now: the kernels have returned.
                unsafe { *self.out.add(last + px * width + lane) = E::default() };
            }
        }
    }

    /// The residual's pointer, null without one. In place it derives from
    /// the output's own pointer, so reads and writes share one provenance.
    pub(super) fn residual(&self) -> *const E {
        match (self.in_place, self.res) {
            (true, _) => self.out as *const E,
            (false, Some(r)) => r.as_ptr(),
            (false, None) => core::ptr::null(),
        }
    }
}
