//! Running one band (feature `std`): the job, each part's rows, and the
//! per-thread buffers of the lines inside the band.

use super::{MAX_LINES, band_rows};
use crate::model::{Call, LayerInfo};
use crate::{Dims, Element, Error};
use small_ir::plan::NONE;
use std::any::Any;
use std::boxed::Box;
use std::cell::RefCell;
use std::sync::Mutex;
use std::vec::Vec;

/// Bytes the per-thread buffers are aligned to (a cache line, an
/// AVX-512 vector).
const ALIGN: usize = 64;

std::thread_local! {
    /// This thread's buffers for the tensors inside a band: a `Vec<E>` of
    /// the last band's element type, grown to the largest band run on
    /// this thread (allocated once per thread and size, not per call).
    static BUFFERS: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// A line of a band, as [`run`] calls it: line `i` on input `x` into the
/// output `y` (pointer, length), rows (or a pointwise walk's columns)
/// `band` of its walk only (`Problem::shaped_band`).
pub type Line<'a, E> =
    dyn Fn(usize, &[E], (*mut E, usize), (usize, usize)) -> Result<(), Error> + Sync + 'a;

/// A line run whole, as [`forward`] calls it: line `i` on the arena.
pub type Whole<'a, E> = dyn Fn(usize, &mut [E]) -> Result<(), Error> + 'a;

/// The arena as every part sees it: read in the band's input, written in
/// its last output's rows of each part.
struct Arena<E>(*mut E);

// SAFETY: the parts of a band only read the band's input range and write
// disjoint rows of its output range, which lies apart from the input
// (`bands` checked it); `run` holds the arena's `&mut` meanwhile.
unsafe impl<E: Send> Sync for Arena<E> {}

/// What [`run`] reads of a model: its lines, tensor dims and calls.
#[derive(Clone, Copy)]
pub struct Lines<'a, const T: usize> {
    /// Every line.
    pub layers: &'a [LayerInfo],
    /// Every tensor's dims.
    pub dims: &'a [Dims; T],
    /// Every line's call.
    pub calls: &'a [Option<Call>],
}

/// Multiply-accumulates below which a band runs line by line: a part
/// of it would be under [`MIN_PART_MACS`](crate::nest::MIN_PART_MACS).
fn worth_a_fork(layers: &[LayerInfo]) -> bool {
    let macs = layers.iter().fold(0usize, |m, l| m.saturating_add(l.macs));
    macs >= 2 * crate::nest::MIN_PART_MACS
}

/// Runs every line of a model on `arena`: each band of `bands` (from
/// [`bands`](super::bands)) as one job ([`run`]) when the pool has two
/// threads or more for it, every other line through `whole(i, arena)`.
/// `o_wb(i)` is line `i`'s tile width; `line` runs a line of a band.
///
/// # Errors
/// The first error of a line or band.
pub fn forward<E: Element, const T: usize>(
    model: Lines<'_, T>,
    bands: &[usize],
    arena: &mut [E],
    o_wb: &dyn Fn(usize) -> usize,
    whole: &Whole<'_, E>,
    line: &Line<'_, E>,
) -> Result<(), Error> {
    let parts = crate::threads::pool().width();
    let mut i = 0;
    while i < bands.len() {
        let end = bands[i];
        if end != NONE && end < bands.len() && parts > 1 && worth_a_fork(&model.layers[i..=end]) {
            run(model, (i, end), arena, o_wb(end), parts, line)?;
            i = end + 1;
        } else {
            whole(i, arena)?;
            i += 1;
        }
    }
    Ok(())
}

/// Runs the lines `first..=last` (a band from [`bands`](super::bands))
/// on `arena` in `parts` parts on the thread pool, each part owning a
/// range of the last line's units (rows; column tiles, `o_wb` columns
/// each, when its walk is one row) and computing every line's rows they
/// need. `line` runs one line (`model!`'s `forward_band`). Each output
/// is computed by the same tile as when the lines run one after another,
/// whichever part computes it: the same bits.
///
/// # Errors
/// [`Error::BufferLength`] if the band's tensors leave `arena`; the
/// first error of a line (none for a band from `bands`).
pub fn run<E: Element, const T: usize>(
    model: Lines<'_, T>,
    (first, last): (usize, usize),
    arena: &mut [E],
    o_wb: usize,
    parts: usize,
    line: &Line<'_, E>,
) -> Result<(), Error> {
    let (Some(c_first), Some(c_last)) = (&model.calls[first], &model.calls[last]) else {
        return Err(Error::Unsupported {
            what: "band",
            detail: "a line of it has no call worked out",
        });
    };
    if last < first || last - first >= MAX_LINES {
        return Err(Error::TooLarge {
            what: "band (lines)",
            dims: [last.wrapping_sub(first).wrapping_add(1), 1, 1],
            refused: Some(MAX_LINES),
        });
    }
    let end = (c_first.x.0 + c_first.x.1).max(c_last.y.0 + c_last.y.1);
    if end > arena.len() {
        return Err(Error::BufferLength {
            what: "arena (a band's tensors)",
            expected: end,
            actual: arena.len(),
        });
    }
    // The largest tensor inside the band, in elements.
    let inner = model.calls[first..last]
        .iter()
        .flatten()
        .map(|c| c.y.1)
        .max()
        .unwrap_or(0);
    let shared = Arena(arena.as_mut_ptr());
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    let ends = Ends::of(
        &c_last.shapes,
        model.dims[model.layers[last].step.y].h,
        o_wb,
    );
    let pool = crate::threads::pool();
    // `Pool::run` runs at most its thread count of parts.
    let parts = parts.clamp(1, pool.threads());
    pool.run(parts, &|k| {
        let bound = |k: usize| ends.bound(k, parts);
        let (u0, u1) = (bound(k), bound(k + 1));
        if u0 >= u1 {
            return;
        }
        if let Err(e) = part(
            model,
            (first, last),
            ends.of_units(u0, u1),
            inner,
            &shared,
            line,
        ) {
            failed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(e);
        }
    });
    match failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The units of a band's last line, which its parts split: column tiles
/// of a one-row walk (pointwise), else output rows.
struct Ends {
    units: usize,
    /// The output's width if the walk is one row, else 0.
    flat_width: usize,
    /// Columns of the one-row walk.
    columns: usize,
    o_wb: usize,
}

impl Ends {
    fn of(shapes: &crate::nest::Shapes, height: usize, o_wb: usize) -> Ends {
        let o_wb = o_wb.max(1);
        let (flat_width, columns) = (shapes.flat_width(), shapes.walk_columns());
        let units = if flat_width > 0 {
            columns.div_ceil(o_wb)
        } else {
            height
        };
        Ends {
            units,
            flat_width,
            columns,
            o_wb,
        }
    }

    /// The last line's walk band of units `u0..u1`, and the output rows
    /// it covers.
    fn of_units(&self, u0: usize, u1: usize) -> ((usize, usize), (usize, usize)) {
        let c0 = u0 * self.o_wb;
        match c0.checked_div(self.flat_width) {
            Some(r0) => {
                let c1 = (u1 * self.o_wb).min(self.columns);
                ((c0, c1), (r0, c1.div_ceil(self.flat_width)))
            }
            None => ((u0, u1), (u0, u1)),
        }
    }

    /// The first unit of part `k` of `parts` (`k = parts`: the end).
    fn bound(&self, k: usize, parts: usize) -> usize {
        self.units * k / parts
    }
}

/// One part of [`run`]: every line of the band over the rows its end
/// rows need; the tensors inside the band in this thread's buffers, two
/// halves taken in turn.
fn part<E: Element, const T: usize>(
    model: Lines<'_, T>,
    (first, last): (usize, usize),
    (end_band, end_rows): ((usize, usize), (usize, usize)),
    inner: usize,
    arena: &Arena<E>,
    line: &Line<'_, E>,
) -> Result<(), Error> {
    let mut rows = [(0, 0); MAX_LINES];
    band_rows(model.layers, model.dims, (first, last), end_rows, &mut rows);
    BUFFERS.with(|cell| {
        let mut cell = cell.borrow_mut();
        let Some((half, buf)) = buffers::<E>(&mut cell, inner) else {
            return Err(Error::Unsupported {
                what: "band",
                detail: "its buffers could not be set up",
            });
        };
        let (lo, hi) = buf.split_at_mut(half);
        for i in first..=last {
            let Some(c) = &model.calls[i] else {
                return Err(Error::Unsupported {
                    what: "band",
                    detail: "a line of it has no call worked out",
                });
            };
            // Line `first + j` writes half `j % 2` and reads the other.
            let (out, inp) = if (i - first) % 2 == 0 {
                (&mut *lo, &*hi)
            } else {
                (&mut *hi, &*lo)
            };
            let x: &[E] = if i == first {
                // SAFETY: `run` checked that the input range lies in the
                // arena; no part writes it while the band runs.
                unsafe { core::slice::from_raw_parts(arena.0.add(c.x.0), c.x.1) }
            } else {
                &inp[..c.x.1]
            };
            let (y, band) = if i == last {
                // SAFETY: `run` checked that the output range lies in the
                // arena; this part writes only its units of it.
                (unsafe { arena.0.add(c.y.0) }, end_band)
            } else {
                (out.as_mut_ptr(), c.shapes.walk_band(rows[i - first]))
            };
            let y_len = if i == last {
                c.y.1
            } else {
                c.y.1.min(out.len())
            };
            line(i, x, (y, y_len), band)?;
        }
        Ok(())
    })
}

/// This thread's two buffers of at least `inner` elements each, aligned:
/// `(half, buf)`, the second starting at `buf[half]`.
fn buffers<E: Element>(cell: &mut Option<Box<dyn Any>>, inner: usize) -> Option<(usize, &mut [E])> {
    let lanes = (ALIGN / core::mem::size_of::<E>().max(1)).max(1);
    let half = inner.div_ceil(lanes) * lanes;
    let want = 2 * half + lanes;
    let fits = cell
        .as_ref()
        .and_then(|b| b.downcast_ref::<Vec<E>>())
        .is_some_and(|v| v.len() >= want);
    if !fits {
        *cell = Some(Box::new(std::vec![E::default(); want]));
    }
    let v = cell.as_mut()?.downcast_mut::<Vec<E>>()?;
    let skip = v.as_ptr().align_offset(ALIGN).min(lanes);
    Some((half, v.get_mut(skip..skip + 2 * half)?))
}
