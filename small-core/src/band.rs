//! Bands: a chain of layers run as one job, each thread taking a band of
//! output rows through the whole chain (fused-layer tiling, as DORY and
//! Zhang et al. fuse a depthwise layer with the pointwise one after it).
//!
//! Split layer by layer, each layer of a small network forks and joins
//! once, and its parts read the rows the other core wrote the layer
//! before: on 2-vCPU VMs a DS-CNN depthwise part took twice its one-thread
//! time for that (book, "where two threads lose on DS-CNN"). In a band,
//! a part computes the rows of every layer's output that its rows of the
//! chain's last output need, halo rows included (recomputed by each part
//! that needs them), in buffers of its own thread; only the chain's input
//! (read) and last output (each part its own rows) are shared. One fork
//! per chain, no line written by one core and read by the other inside it.
//!
//! [`bands`] picks the chains when a `model!` compiles; `run` (feature
//! `std`) runs one.

use crate::model::{Call, LayerInfo};
use crate::{Dims, KernelKind, LayerSpec};
use small_ir::plan::NONE;

/// Most halo a band may add: the parts together compute at most this
/// percentage of the chain's work (at two parts), counted in output rows
/// weighted by each layer's multiply-accumulates. On a Xeon VM (family 6
/// model 167, 2 threads, medians of 0.7 s of `forward`, two alternated
/// rounds): 110 cut DS-CNN into two bands, 27-29 µs against 22-23 with
/// 135, and VWW 0.25 into three, 96-107 µs against 81-84; 160 gave VWW
/// 0.25 four bands, 84-87 µs; no limit, two, 92-95 µs (its 6x6 and 3x3
/// stages then recompute most of their rows).
pub const MAX_OVERHEAD_PERCENT: usize = 135;

/// Most lines in a band (a part keeps each line's rows on its stack).
pub const MAX_LINES: usize = 64;

/// The input rows `(first, end)` that output rows `rows.0..rows.1` of
/// `spec` read from an input of dims `x` (padding rows left out).
///
/// ```
/// use small_core::{Dims, LayerSpec, Padding, band::input_rows};
/// let dw = LayerSpec { padding: Padding::Same, ..LayerSpec::new(3, 3, 1, 1, 64) };
/// let x = Dims { c: 64, h: 25, w: 5 };
/// assert_eq!(input_rows(&dw, x, (0, 12)), (0, 13));
/// assert_eq!(input_rows(&dw, x, (12, 25)), (11, 25));
/// ```
pub const fn input_rows(spec: &LayerSpec, x: Dims, rows: (usize, usize)) -> (usize, usize) {
    if rows.0 >= rows.1 {
        return (0, 0);
    }
    let pad = match spec.padding.height(x.h, spec.fh, spec.sh) {
        Ok(d) => d.before,
        Err(_) => 0,
    };
    let first = (rows.0 * spec.sh).saturating_sub(pad);
    let end = ((rows.1 - 1) * spec.sh + spec.fh).saturating_sub(pad);
    (first, if end < x.h { end } else { x.h })
}

/// True if line `k` can be in a band: a layer (not a concatenation) with
/// its call worked out, no residual, not elementwise, no LOGISTIC, and an
/// output of more than one row.
const fn bandable(layer: &LayerInfo, call: &Option<Call>, y: Dims) -> bool {
    let Some(spec) = &layer.spec else {
        return false;
    };
    let elementwise =
        spec.pointwise() && matches!(spec.kind(), KernelKind::Channelwise) && !spec.has_weights();
    call.is_some()
        && !spec.residual
        && !elementwise
        && !matches!(spec.activation, crate::Activation::Logistic)
        && y.h > 1
}

/// True if tensor `t` is read by a step other than `reader`.
const fn read_elsewhere(layers: &[LayerInfo], t: usize, reader: usize) -> bool {
    let mut j = 0;
    while j < layers.len() {
        let st = layers[j].step;
        let mut reads = j != reader && (st.x == t || st.skip == t);
        let mut c = 0;
        while c < st.concat.len() {
            reads = reads || (j != reader && st.concat[c] == t);
            c += 1;
        }
        if reads {
            return true;
        }
        j += 1;
    }
    false
}

/// True if arena ranges `(offset, length)` `a` and `b` overlap.
const fn overlap(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.0 + b.1 && b.0 < a.0 + a.1
}

/// Output rows of each line `first..=last` that a part computes, given
/// the rows `end_rows` of the last line's output it owns: line `i`'s into
/// `rows[i - first]`.
pub const fn band_rows<const T: usize>(
    layers: &[LayerInfo],
    dims: &[Dims; T],
    (first, last): (usize, usize),
    end_rows: (usize, usize),
    rows: &mut [(usize, usize)],
) {
    let mut need = end_rows;
    let mut i = last + 1;
    while i > first {
        i -= 1;
        rows[i - first] = need;
        let st = layers[i].step;
        if let Some(spec) = &layers[i].spec {
            need = input_rows(spec, dims[st.x], need);
        }
    }
}

/// Multiply-accumulates of one output row of line `i`.
const fn row_macs<const T: usize>(layers: &[LayerInfo], dims: &[Dims; T], i: usize) -> usize {
    let h = dims[layers[i].step.y].h;
    match layers[i].macs.checked_div(h) {
        Some(m) => m,
        None => 0,
    }
}

/// True if the chain `first..=last` computes at most
/// [`MAX_OVERHEAD_PERCENT`] of its work at two parts (split by output
/// rows of the last line; [`run`] splits its column tiles, alike to a
/// tile).
const fn worth_it<const T: usize, const S: usize>(
    layers: &[LayerInfo; S],
    dims: &[Dims; T],
    (first, last): (usize, usize),
) -> bool {
    let h = dims[layers[last].step.y].h;
    let mut rows = [(0, 0); S];
    let (mut total, mut split) = (0usize, 0usize);
    let mut part = 0;
    while part < 2 {
        band_rows(
            layers,
            dims,
            (first, last),
            (h * part / 2, h * (part + 1) / 2),
            &mut rows,
        );
        let mut i = first;
        while i <= last {
            let r = rows[i - first];
            split += (r.1 - r.0) * row_macs(layers, dims, i);
            if part == 0 {
                total += layers[i].macs;
            }
            i += 1;
        }
        part += 1;
    }
    total > 0 && split * 100 <= total * MAX_OVERHEAD_PERCENT
}

/// The bands of a model: `ends[k]` is the last line of the band that
/// starts at line `k`, or [`NONE`]. A band is a longest run of two or
/// more bandable lines (see `bandable`) each reading the one before's
/// output, which nothing else reads; cut short until its last output
/// lies apart from its input in the arena (a part may still read the
/// input while another writes the output) and its halo rows cost at most
/// [`MAX_OVERHEAD_PERCENT`].
pub const fn bands<const T: usize, const S: usize>(
    layers: &[LayerInfo; S],
    dims: &[Dims; T],
    calls: &[Option<Call>; S],
    output: usize,
) -> [usize; S] {
    let mut ends = [NONE; S];
    let mut k = 0;
    while k < S {
        let mut last = k;
        while last + 1 < S
            && last + 1 - k < MAX_LINES
            && bandable(&layers[last], &calls[last], dims[layers[last].step.y])
            && bandable(
                &layers[last + 1],
                &calls[last + 1],
                dims[layers[last + 1].step.y],
            )
            && layers[last + 1].step.x == layers[last].step.y
            && layers[last].step.y != output
            && !read_elsewhere(layers, layers[last].step.y, last + 1)
        {
            last += 1;
        }
        while last > k {
            let (Some(a), Some(b)) = (&calls[k], &calls[last]) else {
                break;
            };
            if !overlap(a.x, b.y) && worth_it(layers, dims, (k, last)) {
                break;
            }
            last -= 1;
        }
        if last > k {
            ends[k] = last;
            k = last + 1;
        } else {
            k += 1;
        }
    }
    ends
}

#[cfg(test)]
mod tests {
    use super::input_rows;
    use crate::{Dims, LayerSpec, Padding};

    /// Halo rows: stride 1 and 2, SAME and VALID, 1x1 and 5x5, and the
    /// clipping at both ends.
    #[test]
    fn input_rows_of_output_rows() {
        let same = |fh, sh| LayerSpec {
            padding: Padding::Same,
            sh,
            sw: sh,
            ..LayerSpec::new(fh, fh, 1, 1, 16)
        };
        let x = |h| Dims { c: 16, h, w: 9 };
        // 3x3 stride 2 on 41 rows: 21 outputs, one padding row on top.
        assert_eq!(input_rows(&same(3, 2), x(41), (0, 11)), (0, 22));
        assert_eq!(input_rows(&same(3, 2), x(41), (11, 21)), (21, 41));
        // 5x5 stride 1: two rows each side.
        assert_eq!(input_rows(&same(5, 1), x(21), (10, 21)), (8, 21));
        assert_eq!(input_rows(&same(5, 1), x(21), (0, 1)), (0, 3));
        // 1x1: the same rows.
        assert_eq!(input_rows(&same(1, 1), x(21), (4, 9)), (4, 9));
        // VALID 3x3: no padding, two more rows.
        let valid = LayerSpec::new(3, 3, 1, 1, 16);
        assert_eq!(input_rows(&valid, x(10), (2, 5)), (2, 7));
        // No rows.
        assert_eq!(input_rows(&valid, x(10), (5, 5)), (0, 0));
    }
}

#[cfg(feature = "std")]
mod exec;
#[cfg(feature = "std")]
pub use exec::{Line, Lines, Whole, forward, run};
