//! Static memory planning: where each activation tensor of a network
//! lives in one arena, computed at compile time (`const fn`) so that a
//! microcontroller build can declare the arena as a `static` of known size
//! and an oversize model fails to compile instead of failing on the device.
//!
//! Each tensor has a size and a lifetime `[first, last]` in layer steps
//! (produced at `first`, read for the last time at `last`; a residual
//! connection simply has a long lifetime). Tensors are placed largest
//! first, each at the lowest offset where it overlaps no already placed
//! tensor whose lifetime overlaps its own (greedy by size, the strategy of
//! TFLite's arena planner; DORY §4.4.1 uses a bidirectional stack), and
//! again in the order they are written; the smaller arena wins. The
//! arena can never be smaller than the largest sum of tensors live at one
//! step, which [`Plan::lower_bound`] reports so a plan can be judged.

use crate::geometry::{CB, width};
use crate::{Dims, Error, KernelKind, LayerSpec};

/// One tensor to place: `size` elements, live from step `first` to `last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tensor {
    /// Elements (`f32`s) it needs.
    pub size: usize,
    /// Step that writes it.
    pub first: usize,
    /// Last step that reads it.
    pub last: usize,
}

/// Offsets of `N` tensors in one arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan<const N: usize> {
    /// Offset of each tensor, in elements.
    pub offsets: [usize; N],
    /// Arena size, in elements.
    pub arena: usize,
    /// Largest sum of sizes of tensors live at the same step: no plan can
    /// use less.
    pub lower_bound: usize,
}

const fn overlaps(a: &Tensor, b: &Tensor) -> bool {
    a.first <= b.last && b.first <= a.last
}

/// Plans `tensors` (see the module docs), for constant tensors (a
/// model's, planned at compile time).
///
/// # Panics
/// If [`try_plan`] fails: in a `const`, a compile error.
///
/// ```
/// use small_ir::plan::{plan, Tensor};
/// // A chain a -> b -> c -> d: b and d can reuse a's space.
/// const P: small_ir::plan::Plan<4> = plan([
///     Tensor { size: 100, first: 0, last: 1 },
///     Tensor { size: 50, first: 1, last: 2 },
///     Tensor { size: 100, first: 2, last: 3 },
///     Tensor { size: 10, first: 3, last: 4 },
/// ]);
/// assert_eq!(P.arena, 150);
/// assert_eq!(P.lower_bound, 150);
/// static ARENA: [f32; P.arena] = [0.0; P.arena]; // sized at compile time
/// # let _ = &ARENA;
/// ```
pub const fn plan<const N: usize>(tensors: [Tensor; N]) -> Plan<N> {
    match try_plan(tensors) {
        Ok(p) => p,
        Err(_) => panic!("the planned tensors exceed the address space (isize::MAX bytes)"),
    }
}

/// [`plan`], or [`Error::TooLarge`] if the tensors' sizes sum past
/// [`MAX_ELEMENTS`](crate::MAX_ELEMENTS). No offset, end or sum the plan
/// computes exceeds that sum (each tensor goes at 0 or at the end of one
/// placed before it), so checking it makes every other sum safe.
///
/// ```
/// use small_ir::plan::{try_plan, Tensor};
/// let huge = Tensor { size: usize::MAX / 2, first: 0, last: 1 };
/// assert!(try_plan([huge, huge]).is_err());
/// ```
pub const fn try_plan<const N: usize>(tensors: [Tensor; N]) -> Result<Plan<N>, Error> {
    let mut offsets = [0usize; N];
    let mut placed = [false; N];
    match place(&tensors, &mut offsets, &mut placed) {
        Ok(arena) => Ok(Plan {
            offsets,
            arena,
            lower_bound: lower_bound(&tensors),
        }),
        Err(e) => Err(e),
    }
}

/// The planner on slices (for a plan whose size is known at run time
/// only, such as `small-codegen`'s table): writes each tensor's offset
/// to `offsets` and returns the arena size. `offsets` and `placed` (all
/// `false`) have one entry per tensor. Errors as [`try_plan`].
///
/// It places the tensors twice, largest first (TFLite's order) and in
/// the order they are written, and keeps the smaller arena: neither
/// order is best for every network. Largest first put VWW 0.25's
/// 48x48x8 depthwise output of a Cortex-M (two 8-channel tensors beside
/// two 16-channel ones, in turn) above both, 73,728 bytes where the
/// written order fits the lower bound, 55,296.
///
/// ```
/// use small_ir::plan::{place, Tensor};
/// let t = |size, first, last| Tensor { size, first, last };
/// // VWW 0.25's first four tensors (int8 bytes on a Cortex-M).
/// let ts = [t(36864, 0, 1), t(18432, 1, 2), t(18432, 2, 3), t(36864, 3, 4)];
/// let (mut offsets, mut placed) = ([0; 4], [false; 4]);
/// assert_eq!(place(&ts, &mut offsets, &mut placed), Ok(55296));
/// ```
pub const fn place(
    tensors: &[Tensor],
    offsets: &mut [usize],
    placed: &mut [bool],
) -> Result<usize, Error> {
    let n = tensors.len();
    assert!(offsets.len() == n && placed.len() == n);
    let mut total: usize = 0;
    let mut i = 0;
    while i < n {
        total = match total.checked_add(tensors[i].size) {
            Some(t) if t <= crate::MAX_ELEMENTS => t,
            _ => {
                return Err(Error::TooLarge {
                    what: "arena plan (tensors x elements before tensor i x its elements)",
                    dims: [n, total, tensors[i].size],
                    refused: None,
                });
            }
        };
        i += 1;
    }
    let by_size = place_in(Order::Size, tensors, offsets, placed);
    let in_time = place_in(Order::Time, tensors, offsets, placed);
    if in_time <= by_size {
        return Ok(in_time);
    }
    Ok(place_in(Order::Size, tensors, offsets, placed))
}

/// The order in which [`place`] places tensors.
#[derive(Clone, Copy)]
enum Order {
    /// Largest first, earliest on ties.
    Size,
    /// Earliest written first, largest on ties.
    Time,
}

/// `a` goes before `b` in `order`.
const fn before(order: Order, a: &Tensor, b: &Tensor) -> bool {
    match order {
        Order::Size => a.size > b.size,
        Order::Time => a.first < b.first || (a.first == b.first && a.size > b.size),
    }
}

/// One greedy placement in `order`: each tensor at the lowest offset
/// clear of every placed tensor live with it. Returns the arena size.
const fn place_in(
    order: Order,
    tensors: &[Tensor],
    offsets: &mut [usize],
    placed: &mut [bool],
) -> usize {
    let n = tensors.len();
    let mut i = 0;
    while i < n {
        placed[i] = false;
        i += 1;
    }
    let mut arena = 0;
    let mut round = 0;
    while round < n {
        // The first tensor in `order` not yet placed (lowest index on ties).
        let mut pick = n;
        let mut i = 0;
        while i < n {
            if !placed[i] && (pick == n || before(order, &tensors[i], &tensors[pick])) {
                pick = i;
            }
            i += 1;
        }
        // Lowest offset clear of every placed tensor that is live with it:
        // try 0 and the end of each such tensor.
        let t = &tensors[pick];
        let mut best = usize::MAX;
        let mut c = 0;
        while c <= n {
            let candidate = if c == n {
                0
            } else if placed[c] && overlaps(t, &tensors[c]) {
                offsets[c] + tensors[c].size
            } else {
                usize::MAX
            };
            if candidate < best && fits(tensors, offsets, placed, pick, candidate) {
                best = candidate;
            }
            c += 1;
        }
        offsets[pick] = best;
        placed[pick] = true;
        if best + t.size > arena {
            arena = best + t.size;
        }
        round += 1;
    }
    arena
}

const fn fits(ts: &[Tensor], offsets: &[usize], placed: &[bool], t: usize, at: usize) -> bool {
    let mut i = 0;
    while i < ts.len() {
        if placed[i]
            && overlaps(&ts[t], &ts[i])
            && at < offsets[i] + ts[i].size
            && offsets[i] < at + ts[t].size
        {
            return false;
        }
        i += 1;
    }
    true
}

/// Largest sum of sizes of tensors live at the same step: no plan can use
/// less.
pub const fn lower_bound(ts: &[Tensor]) -> usize {
    let n = ts.len();
    let mut best = 0;
    let mut s = 0;
    while s < n {
        // Every peak is at the start of some tensor's lifetime.
        let step = ts[s].first;
        let mut live = 0;
        let mut i = 0;
        while i < n {
            if ts[i].first <= step && step <= ts[i].last {
                live += ts[i].size;
            }
            i += 1;
        }
        if live > best {
            best = live;
        }
        s += 1;
    }
    best
}

// ---- a program's tensors ----------------------------------------------------

/// One step of a program: a layer call, or a concatenation of tensors
/// along channels, with the tensor ids it reads and writes.
///
/// A layer reads `x` and, if residual, `skip` (else [`NONE`]); `concat`
/// is empty. A concatenation reads every tensor of `concat`, in channel
/// order (`x` is the first, `skip` is [`NONE`]), and writes them side by
/// side into `y`: it has no weights, and never runs in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step<'a> {
    /// Main input (a concatenation's first).
    pub x: usize,
    /// Residual input or [`NONE`].
    pub skip: usize,
    /// Output.
    pub y: usize,
    /// A concatenation's inputs, in channel order; empty for a layer.
    pub concat: &'a [usize],
}

/// A step without a residual input.
pub const NONE: usize = usize::MAX;

impl<'a> Step<'a> {
    /// A layer reading `x` and `skip` (or [`NONE`]), writing `y`.
    pub const fn layer(x: usize, skip: usize, y: usize) -> Step<'a> {
        Step {
            x,
            skip,
            y,
            concat: &[],
        }
    }

    /// A concatenation of `inputs` (at least one) along channels into `y`.
    ///
    /// # Panics
    /// If `inputs` is empty (in a `const`, a compile error).
    pub const fn concat(inputs: &'a [usize], y: usize) -> Step<'a> {
        assert!(!inputs.is_empty(), "a concatenation reads tensors");
        Step {
            x: inputs[0],
            skip: NONE,
            y,
            concat: inputs,
        }
    }

    /// Whether the step is a concatenation.
    pub const fn is_concat(&self) -> bool {
        !self.concat.is_empty()
    }

    /// Every tensor the step reads: a layer's `x`, then its `skip`; a
    /// concatenation's inputs in order.
    ///
    /// ```
    /// use small_ir::plan::{NONE, Step};
    /// assert_eq!(Step::layer(1, NONE, 2).reads().collect::<Vec<_>>(), [1]);
    /// assert_eq!(Step::layer(1, 0, 2).reads().collect::<Vec<_>>(), [1, 0]);
    /// assert_eq!(Step::concat(&[2, 0, 1], 3).reads().collect::<Vec<_>>(), [2, 0, 1]);
    /// ```
    pub fn reads(&self) -> impl Iterator<Item = usize> + 'a {
        let layer = !self.is_concat();
        let x = layer.then_some(self.x);
        let skip = (layer && self.skip != NONE).then_some(self.skip);
        x.into_iter().chain(skip).chain(self.concat.iter().copied())
    }
}

/// Lifetimes of the tensors (`dims`, in elements of `Dims::len`) used by
/// `steps`, into `t`: time units where the input (tensor 0) is written at
/// 0, step `s` runs at `s + 1`, and the output (the last step's `y`) is
/// read after the last step.
///
/// # Panics
/// If a tensor is written twice or `t` is not as long as `dims`.
pub const fn lifetimes_into(dims: &[Dims], steps: &[Step], t: &mut [Tensor]) {
    assert!(t.len() == dims.len());
    let mut i = 0;
    while i < dims.len() {
        t[i] = Tensor {
            size: dims[i].len(),
            first: 0,
            last: 0,
        };
        i += 1;
    }
    let mut s = 0;
    while s < steps.len() {
        let st = steps[s];
        assert!(st.y != 0 && t[st.y].first == 0, "a tensor is written twice");
        t[st.y].first = s + 1;
        t[st.y].last = s + 1;
        t[st.x].last = s + 1;
        if st.skip != NONE {
            t[st.skip].last = s + 1;
        }
        // Every input of a concatenation is live until it runs.
        let mut i = 0;
        while i < st.concat.len() {
            t[st.concat[i]].last = s + 1;
            i += 1;
        }
        s += 1;
    }
    if !steps.is_empty() {
        t[steps[steps.len() - 1].y].last = steps.len() + 1;
    }
}

/// Which steps write their output over their residual input, into `r`:
/// those whose residual no later step reads (ResNet's adds), so the
/// residual's buffer serves as the output's and the two never need space
/// at once. `t` are the tensors' [`lifetimes_into`]. A concatenation
/// (no residual) never runs in place.
pub const fn in_place_into(t: &[Tensor], steps: &[Step], r: &mut [bool]) {
    let mut s = 0;
    while s < steps.len() {
        let skip = steps[s].skip;
        r[s] = skip != NONE && skip != steps[s].x && !steps[s].is_concat() && t[skip].last == s + 1;
        s += 1;
    }
}

/// Elements of the stack buffer a pointwise layer run in place
/// ([`in_place_shift`]) holds one column tile's outputs in: `O_wb` pixels
/// of every output channel block.
pub const TILE_BUFFER: usize = 1024;

/// How many elements below its input `x` a layer's output `y` may start
/// in one buffer, overlapping it, when the layer runs in place (the
/// loop nest's order for it); `None` if it cannot run so: a residual
/// layer, a channel count that changes, a channelwise output plane
/// larger than its input's, an element-wise layer without weights, a
/// broadcast layer other than an ungrouped 1x1 stride-1 one, or one
/// whose column tile of every output channel exceeds [`TILE_BUFFER`].
/// `o_wb` and `tc` are the tile's columns and channels (a plan takes the
/// largest of the arches compiled in).
///
/// - Channelwise layers run channel block by channel block, each
///   block's rows in order with all its channel tiles per column tile.
///   Output row `j` ends `(j + 1) x O_W` pixels into its block, and the
///   rows from `j x S_H - pad` on are still to be read, so the shift is
///   the largest difference (DS-CNN's 25x5 depthwise 3x3: two rows); a
///   tile of `n > 1` blocks writes its last block while its first is
///   read, `n - 1` output planes more. Further below is safe too.
/// - Pointwise layers run column tile by column tile, every output
///   channel of a tile into a stack buffer first, then over the input's
///   pixels that no later tile reads: `Some(0)`, exactly in place (any
///   other overlap would land an early block's outputs on a later
///   block's unread pixels).
///
/// ```
/// use small_ir::{Dims, LayerSpec, Padding, geometry::width, plan::in_place_shift};
/// let d = Dims { c: 64, h: 25, w: 5 };
/// let dw = LayerSpec { padding: Padding::Same, ..LayerSpec::new(3, 3, 1, 1, 64) };
/// assert_eq!(in_place_shift(&dw, d, d, 8, 1), Some(2 * 5 * width(64)));
/// let pw = LayerSpec::new(1, 1, 64, 64, 1);
/// assert_eq!(in_place_shift(&pw, d, d, 2, 2), Some(0));
/// let wider = LayerSpec::new(1, 1, 64, 128, 1);
/// assert_eq!(in_place_shift(&wider, d, Dims { c: 128, ..d }, 2, 2), None);
/// ```
pub const fn in_place_shift(
    spec: &LayerSpec,
    x: Dims,
    y: Dims,
    o_wb: usize,
    tc: usize,
) -> Option<usize> {
    if spec.residual || x.c != y.c || x.c == 0 || y.h * y.w == 0 || o_wb == 0 || tc == 0 {
        return None;
    }
    let lanes = width(x.c);
    let more_planes = (tc.div_ceil(CB) - 1) * y.h * y.w * lanes;
    match spec.kind() {
        KernelKind::Broadcast if spec.g == 1 && spec.pointwise() => {
            if o_wb * x.c.div_ceil(CB) * lanes <= TILE_BUFFER {
                Some(0)
            } else {
                None
            }
        }
        KernelKind::Broadcast => None,
        // An element-wise layer runs as one row of every block (its
        // blocks are not walked one by one): left out.
        KernelKind::Channelwise if spec.pointwise() && !spec.has_weights() => None,
        KernelKind::Channelwise if spec.pointwise() => Some(x.h * x.w * lanes + more_planes),
        KernelKind::Channelwise => {
            let (dh, dw) = match spec.output_dims(x.h, x.w) {
                Ok(d) => d,
                Err(_) => return None,
            };
            if dh.out != y.h || dw.out != y.w || y.h * y.w > x.h * x.w {
                return None;
            }
            let row_out = (y.w * lanes) as isize;
            let row_in = (x.w * lanes) as isize;
            let mut most: isize = 1;
            let mut j = 0;
            while j < y.h {
                let first_read = (j * spec.sh) as isize - dh.before as isize;
                let d = (j as isize + 1) * row_out - first_read * row_in;
                if d > most {
                    most = d;
                }
                j += 1;
            }
            Some(most as usize + more_planes)
        }
    }
}

/// True if a layer's output at `y` may overlap its input at `x` (offsets
/// in one buffer) given its [`in_place_shift`] `shift`: a channelwise
/// output at least `shift` below, a pointwise one exactly on it.
pub const fn may_overlap(shift: Option<usize>, x: usize, y: usize) -> bool {
    match shift {
        Some(0) => x == y,
        Some(s) => y <= x && x - y >= s,
        None => false,
    }
}

/// The shift of every step of a program that runs in place
/// ([`in_place_shift`] with `tiles[s]`, the largest `(O_wb, TC)` of the
/// arches compiled in), into `shifts` ([`NONE`]: apart): a layer
/// (`specs[s]`, `None` for a concatenation) whose input no later step
/// reads, and not a residual add ([`in_place_into`]). `t` are the
/// tensors' [`lifetimes_into`].
pub const fn shifts_into(
    dims: &[Dims],
    specs: &[Option<LayerSpec>],
    tiles: &[(usize, usize)],
    steps: &[Step],
    t: &[Tensor],
    shifts: &mut [usize],
) {
    let mut s = 0;
    while s < steps.len() {
        let st = steps[s];
        let (o_wb, tc) = tiles[s];
        let shift = match specs[s] {
            Some(spec) if !st.is_concat() && st.skip == NONE && t[st.x].last == s + 1 => {
                in_place_shift(&spec, dims[st.x], dims[st.y], o_wb, tc)
            }
            _ => None,
        };
        shifts[s] = match shift {
            Some(d) => d,
            None => NONE,
        };
        s += 1;
    }
}

/// The arena plan of a program (`dims` of its tensors, `steps`), into
/// `offsets` (one per tensor); returns the arena size and its lower
/// bound. An in-place step's output shares its residual's offset, and a
/// step with a shift (`shifts`, see [`shifts_into`]; [`NONE`] for none)
/// starts its output that many elements below its input: the two, and
/// every tensor chained so, are placed as one block. The scratch slices
/// hold one entry per tensor (`t`, `root`, `rel`, `placed`) or step
/// (`aliased`).
///
/// # Errors
/// As [`try_plan`].
#[allow(clippy::too_many_arguments)]
pub const fn plan_program(
    dims: &[Dims],
    steps: &[Step],
    shifts: &[usize],
    offsets: &mut [usize],
    t: &mut [Tensor],
    root: &mut [usize],
    rel: &mut [isize],
    placed: &mut [bool],
    aliased: &mut [bool],
) -> Result<(usize, usize), Error> {
    lifetimes_into(dims, steps, t);
    in_place_into(t, steps, aliased);
    let mut i = 0;
    while i < dims.len() {
        root[i] = i;
        rel[i] = 0;
        i += 1;
    }
    // Each tensor's place relative to its root's: the same as its
    // residual's, or `shift` below its input.
    let mut s = 0;
    while s < steps.len() {
        let y = steps[s].y;
        let from = if aliased[s] {
            Some((steps[s].skip, 0))
        } else if shifts[s] != NONE {
            Some((steps[s].x, shifts[s] as isize))
        } else {
            None
        };
        if let Some((x, shift)) = from {
            let r = root[x];
            root[y] = r;
            rel[y] = rel[x] - shift;
            if t[y].last > t[r].last {
                t[r].last = t[y].last;
            }
        }
        s += 1;
    }
    // A root's block spans its members: from the lowest `rel` (`-lo`
    // kept in `offsets` until the block is placed) to the highest end
    // (`hi`, in the root's size).
    let mut i = 0;
    while i < dims.len() {
        offsets[i] = 0;
        i += 1;
    }
    let mut i = 0;
    while i < dims.len() {
        let r = root[i];
        if r != i {
            if rel[i] < -(offsets[r] as isize) {
                offsets[r] = (-rel[i]) as usize;
            }
            let end = rel[i] + t[i].size as isize;
            if end > t[r].size as isize {
                t[r].size = end as usize;
            }
        }
        i += 1;
    }
    // Places relative to the block's start; a member takes no space.
    let mut i = 0;
    while i < dims.len() {
        let r = root[i];
        let lo = offsets[r] as isize;
        if r == i {
            t[i].size += offsets[i];
            rel[i] = lo;
        } else {
            rel[i] += lo;
            t[i].size = 0;
        }
        i += 1;
    }
    let arena = match place(t, offsets, placed) {
        Ok(a) => a,
        Err(e) => return Err(e),
    };
    // Members first: a root's offset is its block's start until then.
    let mut i = 0;
    while i < dims.len() {
        if root[i] != i {
            offsets[i] = offsets[root[i]] + rel[i] as usize;
        }
        i += 1;
    }
    let mut i = 0;
    while i < dims.len() {
        if root[i] == i {
            offsets[i] += rel[i] as usize;
        }
        i += 1;
    }
    Ok((arena, lower_bound(t)))
}

#[cfg(test)]
mod tests {
    extern crate alloc;
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;

    fn check<const N: usize>(ts: [Tensor; N]) -> Plan<N> {
        let p = plan(ts);
        for i in 0..N {
            assert!(p.offsets[i] + ts[i].size <= p.arena);
            for j in 0..i {
                if overlaps(&ts[i], &ts[j]) {
                    let apart = p.offsets[i] + ts[i].size <= p.offsets[j]
                        || p.offsets[j] + ts[j].size <= p.offsets[i];
                    assert!(
                        apart,
                        "tensors {i} and {j} are live together and overlap: {p:?}"
                    );
                }
            }
        }
        assert!(p.arena >= p.lower_bound);
        p
    }

    #[test]
    fn sizes_summing_past_the_address_space_are_errors() {
        let t = |size, first, last| Tensor { size, first, last };
        // Disjoint lifetimes would fit, but the check is on the sum (the
        // bound of every offset the plan computes).
        assert_eq!(
            try_plan([t(usize::MAX, 0, 1), t(1, 2, 3)]),
            Err(Error::TooLarge {
                what: "arena plan (tensors x elements before tensor i x its elements)",
                dims: [2, 0, usize::MAX],
                refused: None,
            })
        );
        let half = crate::MAX_ELEMENTS / 2 + 1;
        assert!(try_plan([t(half, 0, 1), t(half, 1, 2)]).is_err());
        let p = try_plan([t(half, 0, 1), t(half - 1, 1, 2)]).unwrap();
        assert_eq!(p.arena, crate::MAX_ELEMENTS);
        assert_eq!(try_plan::<0>([]).unwrap().arena, 0);
    }

    #[test]
    fn residual_block_keeps_the_skip_alive() {
        // x(0..3) -> conv a (1..2) -> conv b (2..3, + x) -> out (3..4).
        let p = check([
            Tensor {
                size: 64,
                first: 0,
                last: 3,
            },
            Tensor {
                size: 64,
                first: 1,
                last: 2,
            },
            Tensor {
                size: 64,
                first: 2,
                last: 3,
            },
            Tensor {
                size: 64,
                first: 3,
                last: 4,
            },
        ]);
        // At step 2 x, a and b are live: 192 is the minimum, and reached.
        assert_eq!((p.arena, p.lower_bound), (192, 192));
    }

    /// A program's plan: every pair of tensors live at one time lies apart.
    fn program(dims: &[Dims], steps: &[Step]) -> (Vec<usize>, Vec<Tensor>, usize, usize) {
        let n = dims.len();
        let zero = Tensor {
            size: 0,
            first: 0,
            last: 0,
        };
        let (mut offsets, mut t, mut root) = (vec![0; n], vec![zero; n], vec![0; n]);
        let (mut placed, mut aliased) = (vec![false; n], vec![false; steps.len()]);
        let (mut rel, shifts) = (vec![0; n], vec![NONE; steps.len()]);
        let (arena, bound) = plan_program(
            dims,
            steps,
            &shifts,
            &mut offsets,
            &mut t,
            &mut root,
            &mut rel,
            &mut placed,
            &mut aliased,
        )
        .unwrap();
        let mut life = vec![zero; n];
        lifetimes_into(dims, steps, &mut life);
        for i in 0..n {
            assert!(offsets[i] + life[i].size <= arena);
            for j in 0..i {
                if overlaps(&life[i], &life[j]) {
                    let apart = offsets[i] + life[i].size <= offsets[j]
                        || offsets[j] + life[j].size <= offsets[i];
                    assert!(apart, "tensors {i} and {j} are live together: {offsets:?}");
                }
            }
        }
        (offsets, life, arena, bound)
    }

    #[test]
    fn a_concatenation_keeps_every_input_live_until_it_runs() {
        let d = |c| Dims { c, h: 4, w: 4 };
        // 0 -> 1 -> 2 -> 3, then concat(1, 3, 0) -> 4: tensors 1 and 0 are
        // read again at the last step, long after their layers.
        let dims = [d(16), d(16), d(16), d(16), d(48)];
        let cat = [1, 3, 0];
        let steps = [
            Step::layer(0, NONE, 1),
            Step::layer(1, NONE, 2),
            Step::layer(2, NONE, 3),
            Step::concat(&cat, 4),
        ];
        let (offsets, life, arena, bound) = program(&dims, &steps);
        // Time units: step s runs at s + 1; the output is read after.
        assert_eq!([life[0].last, life[1].last, life[3].last], [4, 4, 4]);
        assert_eq!(life[2].last, 3, "not an input of the concatenation");
        assert_eq!((life[4].first, life[4].last), (4, 5));
        // At the concatenation its three inputs and its output are live.
        let block = 16 * 16;
        assert_eq!(bound, 6 * block);
        assert_eq!(arena, bound);
        // Nothing in place: the output has its own space.
        let mut r = [true; 4];
        in_place_into(&life, &steps, &mut r);
        assert_eq!(r, [false; 4]);
        assert!(
            cat.iter()
                .all(|&i| offsets[i] + block <= offsets[4] || offsets[4] + 3 * block <= offsets[i])
        );
    }

    #[test]
    fn a_concatenation_is_never_in_place() {
        // concat(1, 0) with skip set by mistake would alias; the planner
        // takes `concat`, not `skip`, for a concatenation.
        let dims = [Dims { c: 8, h: 2, w: 2 }; 3];
        let cat = [1, 0];
        let mut bad = Step::concat(&cat, 2);
        bad.skip = 0;
        let steps = [Step::layer(0, NONE, 1), bad];
        let mut life = [Tensor {
            size: 0,
            first: 0,
            last: 0,
        }; 3];
        lifetimes_into(&dims, &steps, &mut life);
        let mut r = [true; 2];
        in_place_into(&life, &steps, &mut r);
        assert_eq!(r, [false, false]);
        let (offsets, ..) = program(&dims, &steps);
        assert_ne!(offsets[2], offsets[0]);
    }

    #[test]
    fn steps_list_what_they_read() {
        assert!(!Step::layer(0, NONE, 1).is_concat());
        let s = Step::concat(&[3, 1], 4);
        assert!(s.is_concat());
        assert_eq!((s.x, s.skip, s.y), (3, NONE, 4));
    }

    #[test]
    fn random_graphs_never_overlap_and_stay_near_the_bound() {
        let mut s = 12345u64;
        let mut next = |m: usize| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as usize % m
        };
        for _ in 0..200 {
            let mut ts = [Tensor {
                size: 0,
                first: 0,
                last: 0,
            }; 8];
            for (i, t) in ts.iter_mut().enumerate() {
                let len = 1 + next(3);
                *t = Tensor {
                    size: 1 + next(100),
                    first: i,
                    last: i + len,
                };
            }
            let p = check(ts);
            // Greedy by size is not optimal in general, but never far off here.
            assert!(p.arena <= 2 * p.lower_bound, "{p:?}");
        }
    }

    /// DS-CNN's middle: a stem changing the channels, then depthwise and
    /// pointwise layers of 25x5x64 that nothing else reads.
    fn ds_cnn() -> ([Dims; 6], [Step<'static>; 5], [Option<LayerSpec>; 5]) {
        let d = Dims { c: 64, h: 25, w: 5 };
        let same = crate::Padding::Same;
        let stem = LayerSpec {
            sh: 2,
            sw: 2,
            padding: same,
            ..LayerSpec::new(10, 4, 1, 64, 1)
        };
        let dw = LayerSpec {
            padding: same,
            ..LayerSpec::new(3, 3, 1, 1, 64)
        };
        let pw = LayerSpec::new(1, 1, 64, 64, 1);
        let dims = [Dims { c: 1, h: 49, w: 10 }, d, d, d, d, d];
        let steps = [0, 1, 2, 3, 4].map(|i| Step::layer(i, NONE, i + 1));
        (
            dims,
            steps,
            [Some(stem), Some(dw), Some(pw), Some(dw), Some(pw)],
        )
    }

    #[test]
    fn layers_in_place_overlap_only_their_own_input() {
        let (dims, steps, specs) = ds_cnn();
        let zero = Tensor {
            size: 0,
            first: 0,
            last: 0,
        };
        let mut life = [zero; 6];
        lifetimes_into(&dims, &steps, &mut life);
        let mut shifts = [0; 5];
        shifts_into(&dims, &specs, &[(2, 2); 5], &steps, &life, &mut shifts);
        // Depthwise 3x3 same: two rows of 5 pixels; pointwise: exactly.
        let row = 5 * width(64);
        assert_eq!(shifts, [NONE, 2 * row, 0, 2 * row, 0]);
        let (mut offsets, mut t, mut root, mut rel) = ([0; 6], [zero; 6], [0; 6], [0; 6]);
        let (mut placed, mut aliased) = ([false; 6], [false; 5]);
        let (arena, _) = plan_program(
            &dims,
            &steps,
            &shifts,
            &mut offsets,
            &mut t,
            &mut root,
            &mut rel,
            &mut placed,
            &mut aliased,
        )
        .unwrap();
        for (s, st) in steps.iter().enumerate() {
            if shifts[s] != NONE {
                assert_eq!(offsets[st.y] + shifts[s], offsets[st.x], "step {s}");
            }
        }
        // Every other pair live at once lies apart.
        for i in 0..6 {
            assert!(offsets[i] + life[i].size <= arena);
            for j in 0..i {
                let pair = steps
                    .iter()
                    .enumerate()
                    .any(|(s, st)| shifts[s] != NONE && (st.x, st.y) == (j.min(i), j.max(i)));
                if overlaps(&life[i], &life[j]) && !pair {
                    let apart = offsets[i] + life[i].size <= offsets[j]
                        || offsets[j] + life[j].size <= offsets[i];
                    assert!(apart, "tensors {i} and {j}: {offsets:?}");
                }
            }
        }
        // One 25x5x64 tensor and its two depthwise shifts beside the input,
        // against two 25x5x64 tensors apart.
        assert_eq!(arena, dims[0].len() + dims[1].len() + 4 * row);
    }

    #[test]
    fn a_layer_whose_input_is_read_again_runs_apart() {
        let (dims, mut steps, specs) = ds_cnn();
        // Step 4 also reads tensor 2 (a residual): step 2 may not overwrite it.
        steps[3] = Step::layer(3, 2, 4);
        let mut life = [Tensor {
            size: 0,
            first: 0,
            last: 0,
        }; 6];
        lifetimes_into(&dims, &steps, &mut life);
        let mut shifts = [0; 5];
        shifts_into(&dims, &specs, &[(2, 2); 5], &steps, &life, &mut shifts);
        assert_eq!(shifts[2], NONE);
        assert_eq!(shifts[3], NONE, "a residual layer");
        assert_ne!(shifts[1], NONE);
    }

    #[test]
    fn overlap_is_allowed_only_where_the_walk_reads_first() {
        assert!(may_overlap(Some(0), 100, 100));
        assert!(!may_overlap(Some(0), 100, 99));
        assert!(may_overlap(Some(10), 100, 90));
        assert!(may_overlap(Some(10), 100, 50));
        assert!(!may_overlap(Some(10), 100, 91));
        assert!(!may_overlap(Some(10), 100, 110));
        assert!(!may_overlap(None, 100, 0));
    }
}
