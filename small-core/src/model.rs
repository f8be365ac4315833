//! Whole networks: a list of generated layers wired by named tensors, with
//! every tensor's shape, its lifetime and its place in one arena computed
//! at compile time ([`model!`](crate::model!)).
//!
//! A model's input size is fixed, so the shapes follow from the layers'
//! specs in a `const` evaluation; a miswired model (a layer fed the wrong
//! number of channels, a residual of another shape, an input smaller than
//! a VALID filter, a concatenation of tensors of other heights or widths)
//! fails to compile. The arena size is a constant, so a
//! microcontroller can hold it in one `static`.

use crate::plan::{Plan, Tensor};
use crate::{Arch, Blocked, Blocking, Element, Error, LayerSpec};

/// The shape of a tensor, re-exported here for `model!`'s users; it is
/// [`small_core::Dims`](crate::Dims).
#[doc(no_inline)]
pub use crate::Dims;

/// Output dims of `spec` on `x`; a compile-time error in a `const` if the
/// layer cannot take `x`.
pub const fn output_dims(spec: &LayerSpec, x: Dims) -> Dims {
    assert!(
        spec.in_channels() == x.c,
        "a layer's input channels differ from the tensor it reads"
    );
    let h = match spec.padding.height(x.h, spec.fh, spec.sh) {
        Ok(d) => d.out,
        Err(_) => panic!("input height smaller than a VALID filter"),
    };
    let w = match spec.padding.width(x.w, spec.fw, spec.sw) {
        Ok(d) => d.out,
        Err(_) => panic!("input width smaller than a VALID filter"),
    };
    Dims {
        c: spec.out_channels(),
        h,
        w,
    }
}

#[doc(hidden)]
/// Dims of every tensor of a model: `input`, then each step's output in
/// order (`specs[s]` is `None` for a concatenation, whose output has its
/// first input's height and width and the sum of its inputs' channels).
/// Lenient where [`output_dims`] panics (a miswired layer still gets an
/// output), so that [`check_layer`] can name what is wrong.
pub const fn dims<const T: usize, const S: usize>(
    specs: &[Option<LayerSpec>; S],
    steps: &[Step; S],
    input: Dims,
) -> [Dims; T] {
    let mut d = [Dims { c: 0, h: 0, w: 0 }; T];
    d[0] = input;
    let mut s = 0;
    while s < S {
        let st = steps[s];
        let x = if st.x < T { d[st.x] } else { d[0] };
        let out = match &specs[s] {
            Some(spec) => Dims {
                c: spec.out_channels(),
                h: match spec.padding.height(x.h, spec.fh, spec.sh) {
                    Ok(d) => d.out,
                    Err(_) => 0,
                },
                w: match spec.padding.width(x.w, spec.fw, spec.sw) {
                    Ok(d) => d.out,
                    Err(_) => 0,
                },
            },
            None => {
                let mut c = 0usize;
                let mut i = 0;
                while i < st.concat.len() {
                    if st.concat[i] < T {
                        c = c.saturating_add(d[st.concat[i]].c);
                    }
                    i += 1;
                }
                Dims { c, h: x.h, w: x.w }
            }
        };
        if st.y < T {
            d[st.y] = out;
        }
        s += 1;
    }
    d
}

/// What is wrong with a layer of a `model!` (see [`miswiring`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Miswiring {
    /// It reads a tensor no earlier line writes (`skip`: its residual).
    ReadsUnwritten {
        /// The residual input, not the main one.
        skip: bool,
    },
    /// Its input channels differ from the tensor it reads.
    Channels,
    /// The tensor it reads is lower or narrower than its VALID filter (or empty).
    TooSmall {
        /// Height, else width.
        height: bool,
        /// Least size the layer takes.
        minimum: usize,
    },
    /// Declared `residual` without a skip tensor, or the other way round.
    ResidualDeclaration,
    /// Its residual tensor's shape differs from its output's.
    ResidualShape,
    /// A concatenation's input `input` (its position in the list) is no
    /// earlier line's output.
    ConcatReadsUnwritten {
        /// Position of the input in the concatenation's list.
        input: usize,
    },
    /// A concatenation's input `input` has another height or width than
    /// its first.
    ConcatShape {
        /// Position of the input in the concatenation's list.
        input: usize,
    },
}

/// The first miswired line of a model and what is wrong with it: every
/// compile-time check of `model!`. `specs[s]` is `None` for a
/// concatenation; `d` are the model's dims (from [`dims`]).
pub const fn miswiring<const T: usize, const S: usize>(
    specs: &[Option<LayerSpec>; S],
    steps: &[Step; S],
    d: &[Dims; T],
) -> Option<(usize, Miswiring)> {
    let mut s = 0;
    while s < S {
        let st = steps[s];
        // Tensor ids follow the lines that write them: the input is 0.
        let Some(spec) = &specs[s] else {
            let mut i = 0;
            while i < st.concat.len() {
                if st.concat[i] >= st.y {
                    return Some((s, Miswiring::ConcatReadsUnwritten { input: i }));
                }
                i += 1;
            }
            let mut i = 1;
            while i < st.concat.len() {
                let (a, b) = (d[st.concat[0]], d[st.concat[i]]);
                if a.h != b.h || a.w != b.w {
                    return Some((s, Miswiring::ConcatShape { input: i }));
                }
                i += 1;
            }
            s += 1;
            continue;
        };
        if st.x >= st.y {
            return Some((s, Miswiring::ReadsUnwritten { skip: false }));
        }
        if st.skip != NONE && st.skip >= st.y {
            return Some((s, Miswiring::ReadsUnwritten { skip: true }));
        }
        let x = d[st.x];
        if spec.in_channels() != x.c {
            return Some((s, Miswiring::Channels));
        }
        if let Err(Error::InputTooSmall { minimum, .. }) =
            spec.padding.height(x.h, spec.fh, spec.sh)
        {
            let height = true;
            return Some((s, Miswiring::TooSmall { height, minimum }));
        }
        if let Err(Error::InputTooSmall { minimum, .. }) = spec.padding.width(x.w, spec.fw, spec.sw)
        {
            let height = false;
            return Some((s, Miswiring::TooSmall { height, minimum }));
        }
        if spec.residual != (st.skip != NONE) {
            return Some((s, Miswiring::ResidualDeclaration));
        }
        if st.skip != NONE && !d[st.skip].same(&d[st.y]) {
            return Some((s, Miswiring::ResidualShape));
        }
        s += 1;
    }
    None
}

/// A compile-time error message: text and numbers appended in a `const`
/// evaluation (a `const` panic cannot format).
struct Message {
    buf: [u8; 512],
    len: usize,
}

impl Message {
    const fn new() -> Message {
        Message {
            buf: [0; 512],
            len: 0,
        }
    }

    /// Appends `s`, or `...` if it does not fit (never half a character).
    const fn s(mut self, s: &str) -> Message {
        let b = s.as_bytes();
        let fits = self.len + b.len() <= self.buf.len() - 3;
        let b = if fits { b } else { b"...".as_slice() };
        let mut i = 0;
        while i < b.len() && self.len < self.buf.len() {
            self.buf[self.len] = b[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    const fn n(self, mut v: usize) -> Message {
        let mut digits = [0u8; 20];
        let mut k = digits.len();
        loop {
            k -= 1;
            digits[k] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        let (_, d) = digits.split_at(k);
        match core::str::from_utf8(d) {
            Ok(d) => self.s(d),
            Err(_) => self,
        }
    }

    /// `[h, w, c]`, as `model!` declares its input.
    const fn shape(self, d: Dims) -> Message {
        self.s("[").n(d.h).s(", ").n(d.w).s(", ").n(d.c).s("]")
    }

    /// "layer `field: Type`", or "concatenation `field`" (`Type` is
    /// `concat`).
    const fn layer(self, name: &str, ty: &str, concat: bool) -> Message {
        if concat {
            self.s("concatenation `").s(name).s("`")
        } else {
            self.s("layer `").s(name).s(": ").s(ty).s("`")
        }
    }

    /// "tensor `x` [h, w, c]".
    const fn tensor(self, name: &str, d: Dims) -> Message {
        self.s("tensor `").s(name).s("` ").shape(d)
    }

    #[track_caller]
    const fn fail(&self) -> ! {
        let (b, _) = self.buf.split_at(self.len);
        match core::str::from_utf8(b) {
            Ok(m) => panic!("{}", m),
            Err(_) => panic!("a layer of this model! is miswired"),
        }
    }
}

#[doc(hidden)]
/// Fails compilation with a message naming line `k`, the tensors it reads
/// and their shapes, if `k` is the first miswired line ([`miswiring`]).
/// `model!` calls it once per line, from a `const` named after the line.
#[track_caller]
pub const fn check_layer<const T: usize, const S: usize>(
    k: usize,
    names: &[&str; S],
    types: &[&str; S],
    tensors: &[&str; T],
    specs: &[Option<LayerSpec>; S],
    steps: &[Step; S],
    d: &[Dims; T],
) {
    let Some((bad, what)) = miswiring(specs, steps, d) else {
        return;
    };
    if bad != k {
        return;
    }
    let st = steps[k];
    let m = Message::new().layer(names[k], types[k], specs[k].is_none());
    let later = "which a later line writes; a line reads the input or tensors written above it";
    let m = match (what, &specs[k]) {
        (Miswiring::ConcatReadsUnwritten { input }, _) => {
            let t = st.concat[input];
            let m = m.s(" reads tensor `").s(tensors[t]).s("`, ");
            if t == st.y {
                m.s("its own output")
            } else {
                m.s(later)
            }
        }
        (Miswiring::ConcatShape { input }, _) => {
            let (a, b) = (st.concat[0], st.concat[input]);
            let height = d[a].h != d[b].h;
            m.s(" joins ")
                .tensor(tensors[a], d[a])
                .s(" and ")
                .tensor(tensors[b], d[b])
                .s(if height {
                    ", of another height"
                } else {
                    ", of another width"
                })
                .s("; a concatenation joins tensors of one height and width along channels")
        }
        (_, None) => m.s(" is miswired"),
        (Miswiring::ReadsUnwritten { skip }, Some(_)) => {
            let t = if skip { st.skip } else { st.x };
            let m = m.s(if skip {
                " adds tensor `"
            } else {
                " reads tensor `"
            });
            let m = m.s(tensors[t]).s("`, ");
            if t == st.y {
                m.s("its own output")
            } else {
                m.s(later)
            }
        }
        (Miswiring::Channels, Some(spec)) => m
            .s(" reads ")
            .tensor(tensors[st.x], d[st.x])
            .s(" of ")
            .n(d[st.x].c)
            .s(" channels, but `")
            .s(types[k])
            .s("` takes ")
            .n(spec.in_channels())
            .s(" (g * fc)"),
        (Miswiring::TooSmall { height, minimum }, Some(spec)) => {
            let (what, x, f) = if height {
                ("height", d[st.x].h, spec.fh)
            } else {
                ("width", d[st.x].w, spec.fw)
            };
            let m = m
                .s(" reads ")
                .tensor(tensors[st.x], d[st.x])
                .s(" of ")
                .s(what)
                .s(" ")
                .n(x)
                .s(", but it needs at least ")
                .n(minimum);
            match spec.padding {
                crate::Padding::Valid if x > 0 => m
                    .s(" (VALID padding, a filter ")
                    .n(f)
                    .s(if height { " high)" } else { " wide)" }),
                _ => m,
            }
        }
        (Miswiring::ResidualDeclaration, Some(spec)) => {
            if spec.residual {
                m.s(" is declared `residual` but its line adds no tensor: write `(")
                    .s(tensors[st.x])
                    .s(", + skip)`")
            } else {
                m.s(" adds tensor `")
                    .s(tensors[st.skip])
                    .s("`, but `")
                    .s(types[k])
                    .s("` is not declared `residual`")
            }
        }
        (Miswiring::ResidualShape, Some(_)) => m
            .s(" adds ")
            .tensor(tensors[st.skip], d[st.skip])
            .s(" to its output `")
            .s(tensors[st.y])
            .s("` ")
            .shape(d[st.y])
            .s("; a residual needs the output's shape"),
    };
    m.fail()
}

#[doc(hidden)]
/// Multiply-accumulates of `spec` producing `y` (comparisons for max pool).
pub const fn macs(spec: &LayerSpec, y: Dims) -> usize {
    y.h * y.w * spec.out_channels() * spec.fh * spec.fw * spec.fc
}

#[doc(hidden)]
/// [`macs`] of a model's line: none for a concatenation (`None`).
pub const fn step_macs(spec: Option<LayerSpec>, y: Dims) -> usize {
    match spec {
        Some(spec) => macs(&spec, y),
        None => 0,
    }
}

#[doc(hidden)]
/// An error unless an arena of `len` elements holds `need`.
#[inline]
pub fn check_arena(len: usize, need: usize) -> Result<(), Error> {
    if len < need {
        return Err(Error::BufferLength {
            what: "arena (at least)",
            expected: need,
            actual: len,
        });
    }
    Ok(())
}

#[doc(hidden)]
pub use small_ir::plan::{NONE, Step};

#[doc(hidden)]
/// Lifetimes of `T` tensors used by `steps` ([`small_ir::plan::lifetimes_into`]).
pub const fn lifetimes<const T: usize, const S: usize>(
    dims: &[Dims; T],
    steps: &[Step; S],
) -> [Tensor; T] {
    let mut t = [Tensor {
        size: 0,
        first: 0,
        last: 0,
    }; T];
    small_ir::plan::lifetimes_into(dims, steps, &mut t);
    t
}

#[doc(hidden)]
/// Which steps write their output over their residual input
/// ([`small_ir::plan::in_place_into`]).
pub const fn in_place<const T: usize, const S: usize>(
    dims: &[Dims; T],
    steps: &[Step; S],
) -> [bool; S] {
    let t = lifetimes(dims, steps);
    let mut r = [false; S];
    small_ir::plan::in_place_into(&t, steps, &mut r);
    r
}

/// True if a model runs a layer whose input nothing else reads in place,
/// its output overlapping its input ([`small_ir::plan::in_place_shift`]):
/// without `std` (a microcontroller), where a layer runs on one thread.
/// Such a layer's walk cannot be split among threads, so a build with
/// threads keeps every output apart.
pub const IN_PLACE_LAYERS: bool = cfg!(not(feature = "std"));

/// Expands to its first block without `std` ([`IN_PLACE_LAYERS`]), to its
/// second with it.
#[cfg(not(feature = "std"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __in_place_or {
    ({ $($a:tt)* } { $($b:tt)* }) => { $($a)* };
}

/// See the version without `std`.
#[cfg(feature = "std")]
#[doc(hidden)]
#[macro_export]
macro_rules! __in_place_or {
    ({ $($a:tt)* } { $($b:tt)* }) => { $($b)* };
}

#[doc(hidden)]
/// How far below its input each step's output starts
/// ([`small_ir::plan::shifts_into`]); all [`NONE`] (apart) unless
/// [`IN_PLACE_LAYERS`], or if running layers in place does not make the
/// arena smaller (a chain of them is placed as one block, its headroom
/// included, for as long as any of it lives).
pub const fn shifts<const T: usize, const S: usize>(
    dims: &[Dims; T],
    specs: &[Option<LayerSpec>; S],
    tiles: &[(usize, usize); S],
    steps: &[Step; S],
) -> [usize; S] {
    let apart = [NONE; S];
    if !IN_PLACE_LAYERS {
        return apart;
    }
    let mut r = [NONE; S];
    let t = lifetimes(dims, steps);
    small_ir::plan::shifts_into(dims, specs, tiles, steps, &t, &mut r);
    if plan(dims, steps, &r).arena < plan(dims, steps, &apart).arena {
        r
    } else {
        apart
    }
}

#[doc(hidden)]
/// The arena plan of a model ([`small_ir::plan::plan_program`]); an
/// in-place step's output shares its residual's offset, or starts
/// `shifts[s]` elements below its input.
pub const fn plan<const T: usize, const S: usize>(
    dims: &[Dims; T],
    steps: &[Step; S],
    shifts: &[usize; S],
) -> Plan<T> {
    let mut offsets = [0usize; T];
    let mut t = [Tensor {
        size: 0,
        first: 0,
        last: 0,
    }; T];
    let mut root = [0usize; T];
    let mut rel = [0isize; T];
    let mut placed = [false; T];
    let mut aliased = [false; S];
    match small_ir::plan::plan_program(
        dims,
        steps,
        shifts,
        &mut offsets,
        &mut t,
        &mut root,
        &mut rel,
        &mut placed,
        &mut aliased,
    ) {
        Ok((arena, lower_bound)) => Plan {
            offsets,
            arena,
            lower_bound,
        },
        Err(_) => panic!("the planned tensors exceed the address space (isize::MAX bytes)"),
    }
}

#[doc(hidden)]
/// The tensor `dims` at `offset` of `arena` (read-only), for a model's runner.
pub fn view<E: Element>(arena: &[E], offset: usize, dims: Dims) -> Result<Blocked<&[E], E>, Error> {
    let end = offset.saturating_add(dims.checked_len()?);
    check_arena(arena.len(), end)?;
    Blocked::assume_padded(dims, &arena[offset..end])
}

#[doc(hidden)]
/// Splits `arena` into the output tensor of a step (mutable) and up to two
/// inputs, which the plan placed apart from it. An overlap (a plan bug) is
/// an error, not aliasing.
#[allow(clippy::type_complexity)]
#[inline]
pub fn step_views<E: Element>(
    arena: &mut [E],
    inputs: [(usize, Dims); 2],
    out: (usize, Dims),
) -> Result<([Blocked<&[E], E>; 2], Blocked<&mut [E], E>), Error> {
    let len = |(off, d): (usize, Dims)| d.checked_len().map(|n| (off, n));
    let (xs, y) = step_slices(arena, [len(inputs[0])?, len(inputs[1])?], len(out)?)?;
    Ok((
        [
            Blocked::assume_padded(inputs[0].1, xs[0])?,
            Blocked::assume_padded(inputs[1].1, xs[1])?,
        ],
        Blocked::assume_padded(out.1, y)?,
    ))
}

#[doc(hidden)]
/// [`step_views`] as slices: the ranges `(offset, length)` of up to two
/// inputs and of the output, which the plan placed apart from them.
#[allow(clippy::type_complexity)]
#[inline(always)]
pub fn step_slices<E>(
    arena: &mut [E],
    inputs: [(usize, usize); 2],
    (o, olen): (usize, usize),
) -> Result<([&[E]; 2], &mut [E]), Error> {
    // Sums saturated: a sum past the arena is an error.
    check_arena(arena.len(), o.saturating_add(olen))?;
    let (head, rest) = arena.split_at_mut(o);
    let (y, tail) = rest.split_at_mut(olen);
    let (head, tail): (&[E], &[E]) = (head, tail);
    let pick = |(off, n): (usize, usize)| {
        let end = off.saturating_add(n);
        if end <= o {
            Ok(&head[off..end])
        } else if off >= o + olen && end - (o + olen) <= tail.len() {
            Ok(&tail[off - (o + olen)..end - (o + olen)])
        } else {
            Err(Error::ShapeMismatch {
                what: "arena plan: input overlapping the output at offset",
                expected: o + olen,
                actual: off,
            })
        }
    };
    Ok(([pick(inputs[0])?, pick(inputs[1])?], y))
}

#[doc(hidden)]
/// A layer line's call as `model!`'s `forward` makes it, worked out when
/// the program compiles ([`calls`]): its shapes and the arena ranges
/// `(offset, length)` of its input, residual and output.
#[derive(Debug, Clone, Copy)]
pub struct Call {
    /// The shapes, checked against the layer.
    pub shapes: crate::__rt::Shapes,
    /// The input.
    pub x: (usize, usize),
    /// The residual, if the layer has one apart from its output.
    pub skip: Option<(usize, usize)>,
    /// The output.
    pub y: (usize, usize),
    /// The residual already is in the output.
    pub in_place: bool,
}

#[doc(hidden)]
/// The [`Call`] of every line of `layers` (tensors of `dims` at `offsets`;
/// `in_place` and `shifts` as [`in_place`] and [`shifts`] give them);
/// `None` for a concatenation, a line that runs shifted, or one whose
/// shapes do not fit (the call through the views returns the error).
pub const fn calls<const T: usize, const S: usize>(
    layers: &[LayerInfo; S],
    dims: &[Dims; T],
    offsets: &[usize; T],
    in_place: &[bool; S],
    shifts: &[usize; S],
) -> [Option<Call>; S] {
    let mut out = [None; S];
    let mut i = 0;
    while i < S {
        let st = layers[i].step;
        if let Some(spec) = &layers[i].spec
            && shifts[i] == NONE
            && st.x < T
            && st.y < T
            && (!spec.residual || in_place[i] || st.skip < T)
            && let Ok(shapes) = crate::__rt::Shapes::of(spec, dims[st.x], dims[st.y])
        {
            out[i] = Some(Call {
                shapes,
                x: (offsets[st.x], dims[st.x].len()),
                skip: if spec.residual && !in_place[i] {
                    Some((offsets[st.skip], dims[st.skip].len()))
                } else {
                    None
                },
                y: (offsets[st.y], dims[st.y].len()),
                in_place: spec.residual && in_place[i],
            });
        }
        i += 1;
    }
    out
}

#[doc(hidden)]
/// Runs the concatenation `step` on `arena` (tensor `i` at `offsets[i]`,
/// of `dims[i]`): each input copied into its channels of the output
/// ([`ops::copy_channels`](crate::ops::copy_channels)), then the output's
/// padding lanes zeroed. No allocation.
pub fn run_concat<E: Element>(
    arena: &mut [E],
    offsets: &[usize],
    dims: &[Dims],
    step: Step<'_>,
) -> Result<(), Error> {
    let at = |id: usize| match (offsets.get(id), dims.get(id)) {
        (Some(&o), Some(&d)) => Ok((o, d)),
        _ => Err(Error::ShapeMismatch {
            what: "tensor id below",
            expected: dims.len(),
            actual: id,
        }),
    };
    let out = at(step.y)?;
    let mut channels = 0usize;
    for &i in step.concat {
        channels = channels.saturating_add(at(i)?.1.c);
    }
    crate::check_dim(
        "concatenation output channels (its inputs' sum)",
        channels,
        out.1.c,
    )?;
    let mut offset = 0;
    for &i in step.concat {
        let x = at(i)?;
        let ([x, _], mut y) = step_views(arena, [x, x], out)?;
        crate::ops::copy_channels(&x, offset, &mut y)?;
        offset += x.c();
    }
    let len = out.1.checked_len()?;
    check_arena(arena.len(), out.0.saturating_add(len))?;
    let mut y = Blocked::assume_padded(out.1, &mut arena[out.0..out.0 + len])?;
    crate::ops::zero_padding(&mut y);
    Ok(())
}

/// The field of a concatenation line of a [`model!`](crate::model!)
/// (`cat: concat @ op (a, b) -> y;`): no weights, no state. The copy is
/// [`ops::concat`](crate::ops::concat)'s, run in the model's arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Concat;

/// One line of a model, as listed in its `LAYERS` constant: a layer, or
/// a concatenation (`spec` is `None`, `step.concat` lists its inputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerInfo {
    /// Field name.
    pub name: &'static str,
    /// The layer's declaration; `None` for a concatenation.
    pub spec: Option<LayerSpec>,
    /// TFLite operator holding its weights (a concatenation's operator).
    pub op: usize,
    /// TFLite operator whose output equals this layer's (the fused ADD of
    /// a residual layer, else `op`).
    pub out_op: usize,
    /// Tensors read and written.
    pub step: Step<'static>,
    /// Multiply-accumulates per inference (0 for a concatenation).
    pub macs: usize,
}

/// What every [`model!`](crate::model!) network is, for code generic over
/// networks (a benchmark, a test harness, a firmware builder): its
/// compile-time shapes and arena plan, its layers, loading from a
/// `WeightSource` (`small_core::load`, feature `alloc`), packing ahead of
/// time, and running. `model!` implements it by delegating to the struct's inherent
/// items, which stay usable without this trait in scope (and, for the
/// arrays, with their lengths in the type).
///
/// ```
/// use small_core::model::Model;
/// use small_core::{Arch, layer, load::Generated, model};
/// #[layer(fh = 1, fw = 1, fc = 4, k = 2)]
/// struct Dense;
/// model! {
///     struct Tiny {
///         input x: [1, 1, 4];
///         dense: Dense @ 0 (x) -> y;
///     }
/// }
/// /// Any network: loads it and returns its output for one NHWC input.
/// fn run<N: Model<Elem = f32>>(input: &[f32]) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
///     let net = N::load(&Generated { seed: 1 }, Arch::best_available())?;
///     // On a cache line (a `vec!` works too, slower where it lands off one).
///     let mut arena = small_core::Aligned::zeroed(N::ARENA)?;
///     N::input(&mut arena)?.fill_from_nhwc(input)?;
///     net.forward(&mut arena)?;
///     Ok(N::output(&arena)?.to_nhwc())
/// }
/// assert_eq!(run::<Tiny>(&[1.0; 4])?.len(), 2);
/// assert_eq!(<Tiny as Model>::PARAMETERS, 4 * 2 + 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Model: Sized {
    /// The element type of the arena and every tensor in it: its layers'
    /// [`Layer::Elem`](crate::Layer::Elem) (`f32`, or `i8` for int8
    /// networks), one for the whole network.
    type Elem: Element;
    /// Dims of every tensor: the input, then each line's output.
    const DIMS: &'static [Dims];
    /// Every line (layers and concatenations), in execution order.
    const LAYERS: &'static [LayerInfo];
    /// Which layers write their output over their residual input.
    const IN_PLACE: &'static [bool];
    /// Offset of every tensor in the arena (indexed like [`Self::DIMS`]).
    const OFFSETS: &'static [usize];
    /// Arena size in elements: all activations, input included.
    const ARENA: usize;
    /// The most elements live at one step: no arena plan can use less.
    const LOWER_BOUND: usize;
    /// Id of the output tensor.
    const OUTPUT: usize;
    /// Multiply-accumulates per inference.
    const MACS: usize;
    /// For each line, the last line of the band that starts there
    /// ([`crate::band::bands`]), or `usize::MAX`.
    const BANDS: &'static [usize];
    /// Weights and biases (`f32`s) as a file holds them, before packing.
    const PARAMETERS: usize = parameters(Self::LAYERS);

    /// Loads every layer's weights from `source` and packs them for `arch`.
    #[cfg(feature = "alloc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
    fn load<W: crate::load::WeightSource + ?Sized>(
        source: &W,
        arch: Arch,
    ) -> Result<Self, crate::load::LoadError>;

    /// Packs every layer's weights from `source` for `arch` (which need
    /// not run here) into `out` ([`Self::packed_len`] words: an `i8`
    /// layer's hold its rows and tiles, [`crate::words`]), the buffer
    /// [`Self::from_packed`] takes.
    #[cfg(feature = "alloc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
    fn pack<W: crate::load::WeightSource + ?Sized>(
        source: &W,
        arch: Arch,
        out: &mut [f32],
    ) -> Result<(), crate::load::LoadError>;

    /// The network on the reference layers (NHWC, weights from `source`):
    /// every tensor, indexed like [`Self::DIMS`].
    #[cfg(feature = "alloc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
    fn reference<W: crate::load::WeightSource + ?Sized>(
        source: &W,
        input_nhwc: &[f32],
    ) -> Result<alloc::vec::Vec<alloc::vec::Vec<f32>>, crate::load::LoadError> {
        reference_run(source, Self::LAYERS, Self::DIMS, input_nhwc)
    }

    /// Words of all layers' packed weights for `arch` (0 if the layers
    /// were not generated for it).
    fn packed_len(arch: Arch) -> usize;

    /// The network on weights `pack` packed for `arch`, borrowed:
    /// no copy and no allocation.
    fn from_packed(arch: Arch, packed: &'static [f32]) -> Result<Self, Error>;

    /// The input tensor in `arena`, to fill before [`Self::forward`].
    #[allow(clippy::type_complexity)]
    fn input(arena: &mut [Self::Elem]) -> Result<Blocked<&mut [Self::Elem], Self::Elem>, Error>;

    /// Tensor `id` (see [`Self::DIMS`]) in `arena`.
    fn tensor(arena: &[Self::Elem], id: usize)
    -> Result<Blocked<&[Self::Elem], Self::Elem>, Error>;

    /// Tensor `id` in `arena`, writable (to run one layer on chosen inputs).
    #[allow(clippy::type_complexity)]
    fn tensor_mut(
        arena: &mut [Self::Elem],
        id: usize,
    ) -> Result<Blocked<&mut [Self::Elem], Self::Elem>, Error>;

    /// The output tensor in `arena` after [`Self::forward`].
    fn output(arena: &[Self::Elem]) -> Result<Blocked<&[Self::Elem], Self::Elem>, Error> {
        Self::tensor(arena, Self::OUTPUT)
    }

    /// `f32`s of packed weights and biases, all layers.
    fn packed_weights(&self) -> usize;

    /// Bytes of all layers' packed weights and per-channel data.
    fn weight_bytes(&self) -> usize;

    /// The arch every layer runs on.
    fn arch(&self) -> Arch;

    /// The blocking each line runs with, in execution order (`None` for a
    /// concatenation, which copies).
    fn blockings(&self) -> impl Iterator<Item = Option<&'static Blocking>>;

    /// Runs line `i` of [`Self::LAYERS`] on the arena.
    fn forward_layer(&self, i: usize, arena: &mut [Self::Elem]) -> Result<(), Error>;

    /// Runs every layer: the input must have been written with
    /// [`Self::input`]; the result is [`Self::output`]. No allocation.
    fn forward(&self, arena: &mut [Self::Elem]) -> Result<(), Error>;
}

/// Weights and biases of `layers` (`f32`s) as a file holds them.
pub const fn parameters(layers: &[LayerInfo]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < layers.len() {
        if let Some(s) = &layers[i].spec
            && s.has_weights()
        {
            n += s.weights_len() + s.out_channels();
        }
        i += 1;
    }
    n
}

/// Declares a network: a struct holding its generated layers, implementing
/// [`Model`], and in `impl` the compile-time tensor shapes (`DIMS`), the layer wiring
/// (`LAYERS`), the arena plan (`PLAN`, `ARENA` elements), `load` (weights
/// from any `load::WeightSource`, feature `alloc`), `pack` and
/// `from_packed` (weights packed ahead of time for any arch, then used in
/// place: a microcontroller's flash), `forward` (no allocation) and
/// `reference` (the same network on the reference layers).
///
/// Each layer line is `field: Type @ op (x) -> y;` where `Type` is a
/// `#[layer]` struct, `op` the TFLite operator holding its weights, `x` the
/// tensor it reads and `y` the one it writes. A residual layer reads a
/// second tensor, `(x, + skip)`, and names the operator of the fused ADD:
/// `@ op => add_op`. Tensors are named by the lines that write them; the
/// first is the model input with its NHWC dims.
///
/// A concatenation line, `field: concat @ op (a, b, ...) -> y;`, joins two
/// or more tensors of one height and width along channels (TFLite's
/// CONCATENATION on the last axis, operator `op`, no `=> out_op`): `y`
/// holds `a`'s channels, then `b`'s, and so on. It has no weights (its
/// field is a [`Concat`], which loads nothing), runs as a copy into the
/// arena ([`ops::copy_channels`](crate::ops::copy_channels)), and keeps
/// each input live until it runs. Inputs of other heights or widths fail to
/// compile, naming the line and the tensors; its output's channels are
/// the sum of its inputs'.
///
/// ```
/// use small_core::{layer, model, load::Generated, Arch};
/// #[layer(fh = 3, fw = 3, fc = 3, k = 8, padding = same, activation = relu)]
/// struct Conv;
/// #[layer(fh = 3, fw = 3, fc = 8, k = 8, padding = same, activation = relu, residual)]
/// struct Res;
/// model! {
///     /// conv, then conv + skip.
///     struct Tiny {
///         input x: [8, 8, 3];
///         conv: Conv @ 0 (x) -> a;
///         res: Res @ 1 => 2 (a, + a) -> b;
///     }
/// }
/// assert_eq!(Tiny::DIMS[2].c, 8);
/// let net = Tiny::load(&Generated { seed: 1 }, small_core::arch::selected()?)?;
/// let mut arena = vec![0.0; Tiny::ARENA];
/// let input: Vec<f32> = (0..8 * 8 * 3).map(|i| i as f32 / 100.0).collect();
/// Tiny::input(&mut arena)?.fill_from_nhwc(&input)?;
/// net.forward(&mut arena)?;
/// let want = Tiny::reference(&Generated { seed: 1 }, &input)?;
/// let got = Tiny::output(&arena)?.to_nhwc();
/// assert!(got.iter().zip(&want[2]).all(|(g, w)| (g - w).abs() < 1e-4));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Two branches joined along channels (an inception block; 8 + 8 channels,
/// then a 1x1 layer over all 16):
///
/// ```
/// use small_core::{layer, model, load::Generated};
/// #[layer(fh = 1, fw = 1, fc = 3, k = 8, activation = relu)]
/// struct Narrow;
/// #[layer(fh = 3, fw = 3, fc = 3, k = 8, padding = same, activation = relu)]
/// struct Wide;
/// #[layer(fh = 1, fw = 1, fc = 16, k = 4)]
/// struct Mix;
/// model! {
///     struct Inception {
///         input x: [6, 6, 3];
///         narrow: Narrow @ 0 (x) -> a;
///         wide: Wide @ 1 (x) -> b;
///         cat: concat @ 2 (a, b) -> ab;
///         mix: Mix @ 3 (ab) -> y;
///     }
/// }
/// assert_eq!(Inception::DIMS[3].c, 16);
/// assert!(Inception::LAYERS[2].spec.is_none()); // the concatenation: no layer
/// let net = Inception::load(&Generated { seed: 3 }, small_core::arch::selected()?)?;
/// let mut arena = vec![0.0; Inception::ARENA];
/// let input: Vec<f32> = (0..6 * 6 * 3).map(|i| (i % 7) as f32 / 7.0).collect();
/// Inception::input(&mut arena)?.fill_from_nhwc(&input)?;
/// net.forward(&mut arena)?;
/// let want = Inception::reference(&Generated { seed: 3 }, &input)?;
/// let got = Inception::output(&arena)?.to_nhwc();
/// assert!(got.iter().zip(&want[4]).all(|(g, w)| (g - w).abs() < 1e-4));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[macro_export]
macro_rules! model {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            input $input:ident : [$ih:expr, $iw:expr, $ic:expr] $($dt:ident)?;
            $( $field:ident : $ty:ident @ $op:literal $(=> $out_op:literal)?
                ( $($args:tt)+ ) -> $y:ident ; )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        $vis struct $name {
            $( $field: $crate::model!(@ty $ty), )+
        }

        const _: () = {
            #[allow(non_camel_case_types, dead_code, clippy::upper_case_acronyms)]
            #[derive(Clone, Copy)]
            enum Id { $input, $( $y, )+ __Count }
            // The arena's element type: the first layer's (every layer's,
            // or the views below do not type-check; concatenations copy
            // any).
            type E = $crate::model!(@elem $($ty),+);
            const T: usize = Id::__Count as usize;
            const S: usize = [$( stringify!($field) ),+].len();

            // What the compile-time checks name (associated with `Id`, so
            // that no layer or tensor name can shadow them).
            impl Id {
                const __LAYERS: [&'static str; S] = [$( stringify!($field) ),+];
                const __TYPES: [&'static str; S] = [$( stringify!($ty) ),+];
                const __TENSORS: [&'static str; T] = [stringify!($input), $( stringify!($y) ),+];
                const __SPECS: [::core::option::Option<$crate::LayerSpec>; S] =
                    [$( $crate::model!(@spec $ty) ),+];
                const __STEPS: [$crate::__rt::Step<'static>; S] =
                    [$( $crate::model!(@step $field: $ty [$($out_op)?] ($($args)+) -> $y) ),+];
                const __TILES: [(usize, usize); S] = [$( $crate::model!(@tile $ty) ),+];
            }

            // One check per line, named after it: a miswired model fails
            // to compile with the line, its tensors and their shapes.
            const _: () = { $(
                #[allow(non_upper_case_globals, dead_code)]
                const $field: () = $crate::__rt::check_layer(
                    Id::$y as usize - 1,
                    &Id::__LAYERS,
                    &Id::__TYPES,
                    &Id::__TENSORS,
                    &Id::__SPECS,
                    &Id::__STEPS,
                    &$name::DIMS,
                );
            )+ };

            #[allow(clippy::modulo_one)]
            impl $name {
                /// Dims of every tensor: the input, then each line's output.
                pub const DIMS: [$crate::Dims; T] = $crate::__rt::dims(
                    &Id::__SPECS,
                    &Id::__STEPS,
                    $crate::Dims { c: $ic, h: $ih, w: $iw },
                );
                /// Every line (layers and concatenations), in execution order.
                pub const LAYERS: [$crate::model::LayerInfo; S] = [$(
                    $crate::model::LayerInfo {
                        name: stringify!($field),
                        spec: Id::__SPECS[Id::$y as usize - 1],
                        op: $op,
                        out_op: $crate::model!(@or $($out_op)? ; $op),
                        step: Id::__STEPS[Id::$y as usize - 1],
                        macs: $crate::__rt::step_macs(
                            Id::__SPECS[Id::$y as usize - 1],
                            Self::DIMS[Id::$y as usize],
                        ),
                    }
                ),+];
                const STEPS: [$crate::__rt::Step<'static>; S] = Id::__STEPS;
                /// Each line's call, for `forward` and `forward_layer` (`None`:
                /// through `forward_line_checked`).
                const CALLS: [::core::option::Option<$crate::model::Call>; S] = $crate::__rt::calls(
                    &Self::LAYERS, &Self::DIMS, &Self::PLAN.offsets, &Self::IN_PLACE, &Self::SHIFTS,
                );
                /// Steps whose output overwrites their residual input.
                pub const IN_PLACE: [bool; S] = $crate::__rt::in_place(&Self::DIMS, &Self::STEPS);
                /// How far below its input each step's output starts in
                /// the arena, overlapping it (`usize::MAX`: apart; see
                /// `small_core::model::IN_PLACE_LAYERS`).
                pub const SHIFTS: [usize; S] =
                    $crate::__rt::shifts(&Self::DIMS, &Id::__SPECS, &Id::__TILES, &Self::STEPS);
                /// Where each tensor lives in the arena.
                pub const PLAN: $crate::plan::Plan<T> = $crate::__rt::plan(&Self::DIMS, &Self::STEPS, &Self::SHIFTS);
                /// Arena size in elements: all activations, input included.
                pub const ARENA: usize = Self::PLAN.arena;
                /// Id of the output tensor.
                pub const OUTPUT: usize = Self::STEPS[S - 1].y;
                /// The bands of lines that threads run as one job, each a
                /// band of rows through all of them (`small_core::band`):
                /// the last line of the band starting at each line, or
                /// `usize::MAX`.
                pub const BANDS: [usize; S] =
                    $crate::band::bands(&Self::LAYERS, &Self::DIMS, &Self::CALLS, Self::OUTPUT);
                /// Multiply-accumulates per inference.
                pub const MACS: usize = {
                    let mut m = 0;
                    let mut i = 0;
                    while i < S {
                        m += Self::LAYERS[i].macs;
                        i += 1;
                    }
                    m
                };

                $crate::__rt::if_alloc! {
                    /// Loads every layer's weights from `source` and packs them
                    /// for `arch`, then checks the program's wiring against
                    /// the source's graph, if it has one
                    /// ([`WeightSource::check_wiring`]($crate::load::WeightSource::check_wiring)).
                    pub fn load<W: $crate::load::WeightSource + ?Sized>(
                        source: &W,
                        arch: $crate::Arch,
                    ) -> Result<Self, $crate::load::LoadError> {
                        let net = Self { $(
                            $field: $crate::model!(
                                @load $ty, source, arch, stringify!($field), $op,
                                $crate::model!(@or $($out_op)? ; $op)
                            ),
                        )+ };
                        source.check_wiring(Self::DIMS.len(), &Self::LAYERS)?;
                        Ok(net)
                    }
                }

                /// Bytes of all layers' packed weights and per-channel data.
                pub fn weight_bytes(&self) -> usize {
                    0 $( + $crate::model!(@weight_bytes $ty, self.$field) )+
                }

                /// The input tensor in `arena`, to fill before [`Self::forward`].
                pub fn input(arena: &mut [E]) -> Result<$crate::Blocked<&mut [E], E>, $crate::Error> {
                    let d = Self::DIMS[0];
                    let off = Self::PLAN.offsets[0];
                    $crate::__rt::check_arena(arena.len(), Self::ARENA)?;
                    $crate::__rt::assume_padded(d, &mut arena[off..off + d.len()])
                }

                /// Tensor `id` (see [`Self::DIMS`]) in `arena`; valid after the
                /// step writing it and until the plan reuses its space.
                pub fn tensor(arena: &[E], id: usize) -> Result<$crate::Blocked<&[E], E>, $crate::Error> {
                    $crate::__rt::check_arena(arena.len(), Self::ARENA)?;
                    if id >= T {
                        return Err($crate::Error::ShapeMismatch { what: "tensor id below", expected: T, actual: id });
                    }
                    $crate::__rt::view(arena, Self::PLAN.offsets[id], Self::DIMS[id])
                }

                /// Tensor `id` in `arena`, writable: to run one layer on chosen
                /// inputs with [`Self::forward_layer`] (checks, debugging).
                pub fn tensor_mut(arena: &mut [E], id: usize) -> Result<$crate::Blocked<&mut [E], E>, $crate::Error> {
                    $crate::__rt::check_arena(arena.len(), Self::ARENA)?;
                    if id >= T {
                        return Err($crate::Error::ShapeMismatch { what: "tensor id below", expected: T, actual: id });
                    }
                    let (d, off) = (Self::DIMS[id], Self::PLAN.offsets[id]);
                    $crate::__rt::assume_padded(d, &mut arena[off..off + d.len()])
                }

                /// The arch every layer runs on.
                pub fn arch(&self) -> $crate::Arch {
                    $crate::model!(@arch self $(, $field $ty)+)
                }

                /// The blocking each line runs with, in execution order
                /// (`None` for a concatenation, which copies).
                pub fn blockings(&self) -> [::core::option::Option<&'static $crate::Blocking>; S] {
                    [$( $crate::model!(@blocking $ty, self.$field) ),+]
                }

                /// The output tensor in `arena` after [`Self::forward`].
                pub fn output(arena: &[E]) -> Result<$crate::Blocked<&[E], E>, $crate::Error> {
                    Self::tensor(arena, Self::OUTPUT)
                }

                /// Runs line `i` of [`Self::LAYERS`] on the arena.
                pub fn forward_layer(&self, i: usize, arena: &mut [E]) -> Result<(), $crate::Error> {
                    $crate::__rt::check_arena(arena.len(), Self::ARENA)?;
                    $(
                        if i == Id::$y as usize - 1 {
                            return $crate::model!(@fast $ty ($($args)+) self, $field, Id::$y as usize - 1, arena);
                        }
                    )+
                    Err($crate::Error::ShapeMismatch { what: "layer index below", expected: S, actual: i })
                }

                /// Line `i` through views checked at run time: a concatenation,
                /// a line that runs shifted, or one without a `CALLS` entry.
                fn forward_line_checked(&self, i: usize, arena: &mut [E]) -> Result<(), $crate::Error> {
                    let mut k = 0;
                    $(
                        if k == i {
                            return $crate::model!(@run $ty ($($args)+) self, $field, k, arena);
                        }
                        k += 1;
                    )+
                    Err($crate::Error::ShapeMismatch { what: "layer index below", expected: k, actual: i })
                }

                /// Runs every layer: the input must have been written with
                /// [`Self::input`]; the result is [`Self::output`]. No allocation.
                ///
                /// The layers run in line, each with its call worked out when the
                /// program compiled (`CALLS`; [`Self::forward_layer`] takes the
                /// same path): only lengths are checked here. Through views and
                /// shape checks at run time, the calls were a fifth of AD int8's
                /// 3.7 µs (Intel Xeon VM, Emerald Rapids class).
                pub fn forward(&self, arena: &mut [E]) -> Result<(), $crate::Error> {
                    $crate::__rt::check_arena(arena.len(), Self::ARENA)?;
                    $crate::__rt::in_place_or!({} {
                        let banded = Self::BANDS.iter().any(|&b| b != $crate::__rt::NONE);
                        if banded && $crate::threads::pool().width() > 1 {
                            let blockings = self.blockings();
                            return $crate::band::forward(
                                $crate::band::Lines {
                                    layers: &Self::LAYERS,
                                    dims: &Self::DIMS,
                                    calls: &Self::CALLS,
                                },
                                &Self::BANDS,
                                arena,
                                &|i| blockings.get(i).copied().flatten().map_or(1, |b| b.o_wb),
                                &|i, a| self.forward_layer(i, a),
                                // SAFETY: `band::run` calls it with an output
                                // as `Problem::shaped_band` requires.
                                &|i, x, y, band| unsafe { self.forward_band_line(i, x, y, band) },
                            );
                        }
                    });
                    $( $crate::model!(@fast $ty ($($args)+) self, $field, Id::$y as usize - 1, arena)?; )+
                    Ok(())
                }

                /// Runs rows `band` of line `i`'s walk from `x` into `y`, in
                /// a band (`small_core::band::run`).
                ///
                /// # Safety
                /// As `small_core::__rt::Problem::shaped_band`.
                #[allow(dead_code)]
                unsafe fn forward_band_line(
                    &self,
                    i: usize,
                    x: &[E],
                    y: (*mut E, usize),
                    band: (usize, usize),
                ) -> Result<(), $crate::Error> {
                    $(
                        if i == Id::$y as usize - 1 {
                            // SAFETY: forwarded from the caller.
                            return unsafe {
                                $crate::model!(@band $ty self, $field, Id::$y as usize - 1, x, y, band)
                            };
                        }
                    )+
                    Err($crate::Error::ShapeMismatch { what: "layer index below", expected: S, actual: i })
                }
            }

            $crate::model!(@packing [$($dt)?] $name; $( $field : $ty @ $op [$($out_op)?] ),+);

            // For generic callers: the inherent items above (which take
            // precedence in `Self::` paths), behind one trait.
            impl $crate::model::Model for $name {
                type Elem = E;
                const DIMS: &'static [$crate::Dims] = &Self::DIMS;
                const LAYERS: &'static [$crate::model::LayerInfo] = &Self::LAYERS;
                const IN_PLACE: &'static [bool] = &Self::IN_PLACE;
                const OFFSETS: &'static [usize] = &Self::PLAN.offsets;
                const ARENA: usize = Self::ARENA;
                const LOWER_BOUND: usize = Self::PLAN.lower_bound;
                const OUTPUT: usize = Self::OUTPUT;
                const MACS: usize = Self::MACS;
                const BANDS: &'static [usize] = &Self::BANDS;

                $crate::__rt::if_alloc! {
                    fn load<W: $crate::load::WeightSource + ?Sized>(
                        source: &W,
                        arch: $crate::Arch,
                    ) -> Result<Self, $crate::load::LoadError> {
                        Self::load(source, arch)
                    }
                    fn pack<W: $crate::load::WeightSource + ?Sized>(
                        source: &W,
                        arch: $crate::Arch,
                        out: &mut [f32],
                    ) -> Result<(), $crate::load::LoadError> {
                        Self::pack(source, arch, out)
                    }
                }
                fn packed_len(arch: $crate::Arch) -> usize {
                    Self::packed_len(arch)
                }
                fn from_packed(arch: $crate::Arch, packed: &'static [f32]) -> Result<Self, $crate::Error> {
                    Self::from_packed(arch, packed)
                }
                fn input(arena: &mut [E]) -> Result<$crate::Blocked<&mut [E], E>, $crate::Error> {
                    Self::input(arena)
                }
                fn tensor(arena: &[E], id: usize) -> Result<$crate::Blocked<&[E], E>, $crate::Error> {
                    Self::tensor(arena, id)
                }
                fn tensor_mut(arena: &mut [E], id: usize) -> Result<$crate::Blocked<&mut [E], E>, $crate::Error> {
                    Self::tensor_mut(arena, id)
                }
                fn packed_weights(&self) -> usize {
                    Self::packed_weights(self)
                }
                fn weight_bytes(&self) -> usize {
                    Self::weight_bytes(self)
                }
                fn arch(&self) -> $crate::Arch {
                    Self::arch(self)
                }
                fn blockings(&self) -> impl Iterator<Item = ::core::option::Option<&'static $crate::Blocking>> {
                    Self::blockings(self).into_iter()
                }
                fn forward_layer(&self, i: usize, arena: &mut [E]) -> Result<(), $crate::Error> {
                    Self::forward_layer(self, i, arena)
                }
                fn forward(&self, arena: &mut [E]) -> Result<(), $crate::Error> {
                    Self::forward(self, arena)
                }
            }
        };
    };
    (@packing [$($dt:ident)?] $name:ident; $( $field:ident : $ty:ident @ $op:literal [$($out_op:literal)?] ),+) => {
        impl $name {
            $crate::__rt::if_alloc! {
                    /// Packs every layer's weights from `source` for `arch` into
                    /// `out` ([`Self::packed_len`]`(arch)` words), layer after
                    /// layer: the buffer [`Self::from_packed`] takes. `arch` need
                    /// not run here: a build script packs a microcontroller's
                    /// weights on the host and embeds them in its flash. (An
                    /// `i8` layer's words hold its rows and tiles:
                    /// [`small_core::words`]($crate::words).)
                    pub fn pack<W: $crate::load::WeightSource + ?Sized>(
                        source: &W,
                        arch: $crate::Arch,
                        out: &mut [f32],
                    ) -> Result<(), $crate::load::LoadError> {
                        $crate::__rt::check_len("packed model weights", Self::packed_len(arch), out.len())?;
                        let mut at = 0;
                        $(
                            $crate::model!(
                                @pack $ty, source, arch, out, at, stringify!($field), $op,
                                $crate::model!(@or $($out_op)? ; $op)
                            );
                        )+
                        let _ = at;
                        source.check_wiring(Self::DIMS.len(), &Self::LAYERS)
                    }

                    $crate::model!(@reference [$($dt)?]);
                }

                /// Words of all layers' packed weights for `arch` (0 if the
                /// layers were not generated for it), for sizing static storage.
                pub const fn packed_len(arch: $crate::Arch) -> usize {
                    0 $( + $crate::model!(@packed_len $ty, arch) )+
                }

                /// The network on weights [`Self::pack`] packed for `arch`,
                /// borrowed for the program's lifetime (a microcontroller's
                /// flash): no copy and no allocation.
                pub fn from_packed(arch: $crate::Arch, packed: &'static [f32]) -> Result<Self, $crate::Error> {
                    $crate::__rt::check_len("packed model weights", Self::packed_len(arch), packed.len())?;
                    let mut at = 0;
                    let net = Self { $(
                        $field: $crate::model!(@from_packed $ty, arch, packed, at),
                    )+ };
                    let _ = at;
                    Ok(net)
                }

                /// Words of packed weights and per-channel data, all layers.
                pub fn packed_weights(&self) -> usize {
                    Self::packed_len(self.arch())
                }
        }
    };
    (@reference []) => {
        /// The network on the reference layers (NHWC, weights from
        /// `source`): every tensor, indexed like [`Self::DIMS`].
        pub fn reference<W: $crate::load::WeightSource + ?Sized>(
            source: &W,
            input_nhwc: &[f32],
        ) -> Result<$crate::__rt::Vec<$crate::__rt::Vec<f32>>, $crate::load::LoadError> {
            $crate::model::reference_run(source, &Self::LAYERS, &Self::DIMS, input_nhwc)
        }
    };
    (@reference [i8]) => {
        /// Not for an `i8` network (an error): the `f32` reference layers
        /// run `f32` networks only (`small_core::model::reference_run_i8`
        /// runs the `i8` ones).
        pub fn reference<W: $crate::load::WeightSource + ?Sized>(
            _source: &W,
            _input_nhwc: &[f32],
        ) -> Result<$crate::__rt::Vec<$crate::__rt::Vec<f32>>, $crate::load::LoadError> {
            Err($crate::__rt::no_f32_reference_i8().into())
        }
    };
    // One line form, two kinds: a layer (`Type`) or a concatenation
    // (`concat`). Each arm below expands one line's part by its kind.
    (@ty concat) => { $crate::model::Concat };
    (@ty $t:ident) => { $t };
    (@spec concat) => { ::core::option::Option::None };
    (@tile concat) => { (0, 0) };
    (@tile $t:ident) => { $crate::__rt::largest_tile($t::BLOCKING) };
    (@spec $t:ident) => { ::core::option::Option::Some($t::SPEC) };
    (@step $f:ident: concat [$o:literal] ($($args:tt)*) -> $y:ident) => {
        ::core::compile_error!(::core::concat!(
            "line `", stringify!($f), ": concat` fuses no operator: `=> op` names a \
             residual layer's ADD"
        ))
    };
    (@step $f:ident: concat [] ($a:ident $(, $b:ident)+) -> $y:ident) => {
        $crate::__rt::Step::concat(&[Id::$a as usize $(, Id::$b as usize)+], Id::$y as usize)
    };
    (@step $f:ident: concat [] ($($args:tt)*) -> $y:ident) => {
        ::core::compile_error!(::core::concat!(
            "line `", stringify!($f), ": concat` joins two or more tensors, \
             `(a, b, ...)`, along channels (no residual `+`)"
        ))
    };
    (@step $f:ident: $t:ident [$($o:literal)?] ($x:ident) -> $y:ident) => {
        $crate::__rt::Step::layer(Id::$x as usize, $crate::__rt::NONE, Id::$y as usize)
    };
    (@step $f:ident: $t:ident [$($o:literal)?] ($x:ident, + $skip:ident) -> $y:ident) => {
        $crate::__rt::Step::layer(Id::$x as usize, Id::$skip as usize, Id::$y as usize)
    };
    (@step $f:ident: $t:ident [$($o:literal)?] ($($args:tt)*) -> $y:ident) => {
        ::core::compile_error!(::core::concat!(
            "layer `", stringify!($f), ": ", stringify!($t), "` reads one tensor, `(x)`, \
             or adds a residual, `(x, + skip)`; to join tensors along channels, write \
             `", stringify!($f), ": concat @ op (a, b, ...) -> y;`"
        ))
    };
    (@load concat, $source:ident, $arch:ident, $name:expr, $op:expr, $out_op:expr) => {
        $crate::model::Concat
    };
    (@load $t:ident, $source:ident, $arch:ident, $name:expr, $op:expr, $out_op:expr) => {
        $t::__load($source, $crate::load::LayerRef { name: $name, op: $op }, $out_op, $arch)?
    };
    (@pack concat, $source:ident, $arch:ident, $out:ident, $at:ident, $name:expr, $op:expr, $out_op:expr) => {
        ()
    };
    (@pack $t:ident, $source:ident, $arch:ident, $out:ident, $at:ident, $name:expr, $op:expr, $out_op:expr) => {{
        let n = $t::packed_len($arch);
        let r = $crate::load::LayerRef { name: $name, op: $op };
        $t::__pack($source, r, $out_op, $arch, &mut $out[$at..$at + n])?;
        $at += n;
    }};
    (@packed_len concat, $arch:ident) => { 0 };
    (@packed_len $t:ident, $arch:ident) => { $t::packed_len($arch) };
    (@from_packed concat, $arch:ident, $packed:ident, $at:ident) => { $crate::model::Concat };
    (@from_packed $t:ident, $arch:ident, $packed:ident, $at:ident) => {{
        let n = $t::packed_len($arch);
        $at += n;
        $t::from_packed($arch, &$packed[$at - n..$at])?
    }};
    (@weight_bytes concat, $l:expr) => { 0 };
    (@weight_bytes $t:ident, $l:expr) => { $l.weight_bytes() };
    (@blocking concat, $l:expr) => { ::core::option::Option::None };
    (@blocking $t:ident, $l:expr) => { ::core::option::Option::Some($l.blocking()) };
    // The first layer's arch (a model has one: see `@elem`).
    (@arch $s:ident, $f:ident concat $(, $rf:ident $rt:ident)*) => {
        $crate::model!(@arch $s $(, $rf $rt)*)
    };
    (@arch $s:ident, $f:ident $t:ident $(, $rf:ident $rt:ident)*) => { $s.$f.arch() };
    (@arch $s:ident) => { $crate::Arch::Reference };
    // `forward`'s call of line `$k` (a constant): its `CALLS` entry, the
    // tensors sliced from the arena; a line without one goes through
    // `forward_line_checked` (`@run`).
    (@fast concat ($($args:tt)*) $s:ident, $f:ident, $k:expr, $arena:ident) => {
        $s.forward_line_checked($k, $arena)
    };
    (@fast $t:ident ($($args:tt)*) $s:ident, $f:ident, $k:expr, $arena:ident) => {{
        match &Self::CALLS[$k] {
            Some(c) => {
                let inputs = [c.x, match c.skip { Some(r) => r, None => c.x }];
                let ([x, skip], y) = $crate::__rt::step_slices($arena, inputs, c.y)?;
                $s.$f.forward_shaped(&c.shapes, x, c.skip.map(|_| skip), y, c.in_place)
            }
            None => $s.forward_line_checked($k, $arena),
        }
    }};
    // A line of a band (`forward_band_line`): a layer with its call.
    (@band concat $s:ident, $f:ident, $k:expr, $x:ident, $y:ident, $b:ident) => {
        ::core::result::Result::Err($crate::Error::Unsupported {
            what: "band",
            detail: "a concatenation runs whole",
        })
    };
    (@band $t:ident $s:ident, $f:ident, $k:expr, $x:ident, $y:ident, $b:ident) => {
        match &Self::CALLS[$k] {
            Some(c) => $s.$f.forward_band(&c.shapes, $x, $y, $b),
            None => ::core::result::Result::Err($crate::Error::Unsupported {
                what: "band",
                detail: "a line without a call worked out runs whole",
            }),
        }
    };
    (@run concat ($($args:tt)*) $s:ident, $f:ident, $k:ident, $arena:ident) => {{
        let $crate::model::Concat = $s.$f;
        $crate::__rt::run_concat($arena, &Self::PLAN.offsets, &Self::DIMS, Self::LAYERS[$k].step)
    }};
    (@run $t:ident ($x:ident $(, + $skip:ident)?) $s:ident, $f:ident, $k:ident, $arena:ident) => {{
        let st = Self::LAYERS[$k].step;
        let at = |id: usize| if id == $crate::__rt::NONE {
            (Self::PLAN.offsets[st.x], Self::DIMS[st.x])
        } else {
            (Self::PLAN.offsets[id], Self::DIMS[id])
        };
        if Self::SHIFTS[$k] != $crate::__rt::NONE {
            // The output overlaps the input, below it: one buffer.
            $crate::model!(@shifted $s.$f, $arena, at(st.x), at(st.y) $(, $skip)?)
        } else {
            // In place, the residual already is in `y`.
            let skip = if Self::IN_PLACE[$k] { st.x } else { st.skip };
            let ([x, _skip], mut y) =
                $crate::__rt::step_views($arena, [at(st.x), at(skip)], at(st.y))?;
            $crate::model!(@call $s.$f, Self::IN_PLACE[$k], x, _skip, y $(, $skip)?)
        }
    }};
    // A malformed line: `@step` already failed to compile, with why.
    (@run $t:ident ($($args:tt)*) $s:ident, $f:ident, $k:ident, $arena:ident) => {
        ::core::result::Result::Ok(())
    };
    // The element type: the first layer's.
    (@elem concat $(, $rest:ident)*) => { $crate::model!(@elem $($rest),*) };
    (@elem $first:ident $(, $rest:ident)*) => { <$first as $crate::Layer>::Elem };
    (@elem) => {
        ::core::compile_error!(
            "a model! has at least one layer line, `field: Type @ op (x) -> y;`"
        )
    };
    (@or $a:expr ; $b:expr) => { $a };
    (@or ; $b:expr) => { $b };
    // Only without `std` (`IN_PLACE_LAYERS`; with it, `SHIFTS` are all
    // `NONE`): a build with threads then never names `forward_in_buffer`,
    // and does not build the in-buffer walk of every layer.
    (@shifted $l:expr, $a:ident, $x:expr, $y:expr) => {
        $crate::__rt::in_place_or!({ $l.forward_in_buffer($a, $x, $y) } {
            ::core::result::Result::Err($crate::Error::Unsupported {
                what: "layer in place",
                detail: "runs only in a build without std",
            })
        })
    };
    // A residual layer never runs shifted (`in_place_shift` is `None`).
    (@shifted $l:expr, $a:ident, $x:expr, $y:expr, $skip:ident) => {
        ::core::result::Result::Err($crate::Error::Unsupported {
            what: "residual layer",
            detail: "runs with its output apart from its input",
        })
    };
    (@call $l:expr, $ip:expr, $x:ident, $s:ident, $y:ident) => { $l.forward(&$x, &mut $y) };
    (@call $l:expr, $ip:expr, $x:ident, $s:ident, $y:ident, $skip:ident) => {
        if $ip { $l.forward_add_in_place(&$x, &mut $y) } else { $l.forward_add(&$x, &$s, &mut $y) }
    };
}

/// Runs `layers` on the reference layers (NHWC); see `model!`'s `reference`.
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub fn reference_run<W: crate::load::WeightSource + ?Sized>(
    source: &W,
    layers: &[LayerInfo],
    dims: &[Dims],
    input_nhwc: &[f32],
) -> Result<alloc::vec::Vec<alloc::vec::Vec<f32>>, crate::load::LoadError> {
    use crate::reference::Shape;
    let d0 = dims.first().copied().unwrap_or(Dims { c: 0, h: 0, w: 0 });
    d0.checked_len()?; // c * h * w is at most the blocked length
    crate::check_len("NHWC input", d0.elements(), input_nhwc.len())?;
    let mut t = alloc::vec![alloc::vec::Vec::new(); dims.len()];
    t[0] = input_nhwc.to_vec();
    for l in layers {
        let Some(spec) = &l.spec else {
            t[l.step.y] = concat_nhwc(&t, dims, l)?;
            continue;
        };
        let w = if spec.has_weights() {
            Some(source.layer(
                crate::load::LayerRef {
                    name: l.name,
                    op: l.op,
                },
                spec,
            )?)
        } else {
            None
        };
        let skip = (l.step.skip != NONE).then(|| t[l.step.skip].as_slice());
        let (out, _) = crate::reference::layer(
            spec,
            &t[l.step.x],
            Shape::from(dims[l.step.x]),
            w.as_ref().map_or(crate::Filter::none(), |w| w.filter()),
            w.as_ref().and_then(|w| w.bias.as_deref()),
            skip,
        )?;
        t[l.step.y] = out;
    }
    Ok(t)
}

/// The concatenation `l` of tensors `t` (NHWC, of `dims`), on the
/// reference [`concat`](crate::reference::concat).
#[cfg(feature = "alloc")]
fn concat_nhwc<T: Copy + Default>(
    t: &[alloc::vec::Vec<T>],
    dims: &[Dims],
    l: &LayerInfo,
) -> Result<alloc::vec::Vec<T>, crate::load::LoadError> {
    let tensor = |i: usize| -> Result<(&[T], crate::reference::Shape), Error> {
        match (t.get(i), dims.get(i)) {
            (Some(v), Some(&d)) => Ok((v.as_slice(), d.into())),
            _ => Err(Error::ShapeMismatch {
                what: "tensor id below",
                expected: dims.len(),
                actual: i,
            }),
        }
    };
    let inputs = (l.step.concat.iter())
        .map(|&i| tensor(i))
        .collect::<Result<alloc::vec::Vec<_>, Error>>()?;
    let out = dims.get(l.step.y).copied().ok_or(Error::ShapeMismatch {
        what: "tensor id below",
        expected: dims.len(),
        actual: l.step.y,
    })?;
    out.checked_len()?; // c * h * w is at most the blocked length
    let mut y = alloc::vec![T::default(); out.elements()];
    crate::reference::concat(&inputs, &mut y)?;
    Ok(y)
}

/// Runs `layers` on the int8 reference operators (NHWC,
/// `crate::reference::int8`, TFLite's reference kernels), weights and
/// quantization from `source` ([`WeightSource::layer_i8`]): every tensor,
/// indexed like `dims`. The oracle of an `i8` network, layer by layer.
///
/// [`WeightSource::layer_i8`]: crate::load::WeightSource::layer_i8
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub fn reference_run_i8<W: crate::load::WeightSource + ?Sized>(
    source: &W,
    layers: &[LayerInfo],
    dims: &[Dims],
    input_nhwc: &[i8],
) -> Result<alloc::vec::Vec<alloc::vec::Vec<i8>>, crate::load::LoadError> {
    use crate::reference::{Conv, Shape, Window, int8};
    use crate::{Reduction, load::LayerRef};
    let d0 = dims.first().copied().unwrap_or(Dims { c: 0, h: 0, w: 0 });
    d0.checked_len()?;
    crate::check_len("NHWC input", d0.elements(), input_nhwc.len())?;
    let mut t = alloc::vec![alloc::vec::Vec::new(); dims.len()];
    t[0] = input_nhwc.to_vec();
    for l in layers {
        let Some(s) = &l.spec else {
            t[l.step.y] = concat_nhwc(&t, dims, l)?;
            continue;
        };
        let r = LayerRef {
            name: l.name,
            op: l.op,
        };
        let w = source.layer_i8(r, l.out_op, s)?;
        let shape = Shape::from(dims[l.step.x]);
        let window = Window {
            fh: s.fh,
            fw: s.fw,
            sh: s.sh,
            sw: s.sw,
            padding: s.padding,
        };
        let mut out = alloc::vec![0i8; dims[l.step.y].elements()];
        let x = &t[l.step.x];
        match s.reduction {
            Reduction::Fma => {
                let f = w.filter();
                f.check(s)?;
                // The reference convolution reads OHWI.
                let taps = s.fh * s.fw;
                let mut ohwi = alloc::vec![0i8; f.values.len()];
                for o in 0..s.out_channels() {
                    for tap in 0..taps {
                        for i in 0..s.fc {
                            ohwi[(o * taps + tap) * s.fc + i] =
                                f.values[f.order.index(s, o, tap, i)];
                        }
                    }
                }
                let conv = Conv {
                    window,
                    fc: s.fc,
                    k: s.k,
                    g: s.g,
                };
                int8::conv2d(
                    x,
                    shape,
                    &ohwi,
                    w.bias.as_deref(),
                    conv,
                    &w.requant(),
                    &mut out,
                )?;
                if s.residual {
                    let add = w.add.as_ref().ok_or_else(|| crate::__rt::missing_add(r))?;
                    let conv_out = out.clone();
                    int8::add(&conv_out, &t[l.step.skip], add, &mut out)?;
                }
            }
            Reduction::Max => {
                int8::max_pool(x, shape, window, (w.min, w.max), &mut out)?;
            }
            Reduction::Avg => {
                int8::avg_pool(x, shape, window, (w.min, w.max), &mut out)?;
            }
        }
        t[l.step.y] = out;
    }
    Ok(t)
}
