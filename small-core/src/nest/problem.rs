//! A layer call checked: shapes and buffers validated against the layer
//! ([`Problem::new`], [`Problem::with_residual`],
//! [`Problem::with_residual_in_place`]), and pointwise and elementwise
//! layers flattened into one row.

use crate::layout::tensor_len;
use crate::pack::{checked_packed_len, out_padded};
use crate::{Blocked, CB, Dtype, Element, Error, KernelKind, LayerSpec, check_dim, check_len};
use small_ir::geometry::{acc_rows, width};

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

/// A checked call of a layer: shapes validated, buffers borrowed.
pub struct Problem<'a, E: Element = f32> {
    /// Output channels per tile, to count the units of work.
    pub(super) tc: usize,
    pub(super) spec: &'a LayerSpec,
    pub(super) inp: &'a [E],
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
    /// An elementwise layer without weights (ReLU): every channel block's
    /// plane, one after another, is one row of one block.
    pub(super) elementwise: bool,
}

// SAFETY: a Problem is shared by the threads of one layer call, and each
// part writes only the output rows of its own units (see `run`); the
// input, weights and residual are only read.
unsafe impl<E: Element> Sync for Problem<'_, E> {}

impl<'a, E: Element> Problem<'a, E> {
    /// Checks `x`, `y` and the packed weights against the layer and `tc`.
    pub fn new<X: AsRef<[E]>, Y: AsRef<[E]> + AsMut<[E]>>(
        spec: &'a LayerSpec,
        tc: usize,
        x: &'a Blocked<X, E>,
        y: &'a mut Blocked<Y, E>,
        packed: Packed<'a, E>,
    ) -> Result<Self, Error> {
        Self::with_residual::<X, Y, X>(spec, tc, x, None, y, packed)
    }

    /// As [`Problem::new`], plus a residual tensor `skip` of the output's
    /// shape, added before the activation.
    pub fn with_residual<X: AsRef<[E]>, Y: AsRef<[E]> + AsMut<[E]>, S: AsRef<[E]>>(
        spec: &'a LayerSpec,
        tc: usize,
        x: &'a Blocked<X, E>,
        skip: Option<&'a Blocked<S, E>>,
        y: &'a mut Blocked<Y, E>,
        packed: Packed<'a, E>,
    ) -> Result<Self, Error> {
        if tc == 0 {
            return Err(Error::Unsupported {
                what: "channel tile",
                detail: "must hold at least 1 channel",
            });
        }
        let (in_channels, out_channels) = spec.checked_channels()?;
        check_dim("input channels", in_channels, x.c())?;
        check_dim("output channels", out_channels, y.c())?;
        let (dh, dw) = spec.output_dims(x.h(), x.w())?;
        check_dim("output height", dh.out, y.h())?;
        check_dim("output width", dw.out, y.w())?;
        // `checked_packed_len` counts an `f32` layer's bias and tiles (one
        // buffer), checked; the tiles are the same for every dtype, and
        // an `i8` layer's per-channel rows are a few times the bias.
        let total = checked_packed_len(spec, tc)?;
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
        if let Some(s) = skip {
            check_dim("residual channels", y.c(), s.c())?;
            check_dim("residual height", y.h(), s.h())?;
            check_dim("residual width", y.w(), s.w())?;
        }
        // Every `Blocked` constructor checked its shape's size and its
        // buffer's length, but a buffer type's `AsRef` may hand out another
        // slice later: the kernels index by the shape, so check the very
        // slices they will read and write.
        let (inp, res) = (x.as_slice(), skip.map(|s| s.as_slice()));
        check_len("input tensor", tensor_len(x.c(), x.h(), x.w())?, inp.len())?;
        let y_len = tensor_len(y.c(), y.h(), y.w())?;
        if let Some(r) = res {
            check_len("residual tensor", y_len, r.len())?;
        }
        // A 1x1 stride-1 layer maps each pixel to itself, and a channel
        // block's plane is contiguous: one row of H*W pixels is the same
        // problem with full tiles instead of a partial one per row.
        // Without weights (ReLU) every block is alike, and the blocks'
        // planes are contiguous too: one row of one block holds them all.
        let pointwise = spec.pointwise();
        let elementwise =
            pointwise && spec.kind() == KernelKind::Channelwise && !spec.has_weights();
        let (ih, iw, oh, ow) = if elementwise {
            let n = x.c().div_ceil(CB) * x.h() * x.w();
            (1, n, 1, n)
        } else if pointwise {
            (1, x.h() * x.w(), 1, dh.out * dw.out)
        } else {
            (x.h(), x.w(), dh.out, dw.out)
        };
        let out = y.as_mut_slice();
        check_len("output tensor", y_len, out.len())?;
        Ok(Problem {
            tc,
            spec,
            inp,
            ih,
            iw,
            oh,
            ow,
            out: out.as_mut_ptr(),
            out_life: core::marker::PhantomData,
            pad_top: dh.before,
            pad_left: dw.before,
            packed,
            res,
            in_place: false,
            elementwise,
        })
    }

    /// As [`Problem::with_residual`] with the residual already in `y`:
    /// `y = activation(layer(x) + y)`. Each output element reads its own
    /// residual before it is written, so the output can replace it (a
    /// residual's buffer reused in place, as DORY plans ResNet's adds).
    pub fn with_residual_in_place<X: AsRef<[E]>, Y: AsRef<[E]> + AsMut<[E]>>(
        spec: &'a LayerSpec,
        tc: usize,
        x: &'a Blocked<X, E>,
        y: &'a mut Blocked<Y, E>,
        packed: Packed<'a, E>,
    ) -> Result<Self, Error> {
        let mut p = Self::new(spec, tc, x, y, packed)?;
        p.in_place = true;
        Ok(p)
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
