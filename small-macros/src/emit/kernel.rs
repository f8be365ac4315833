//! Emission of the micro-kernels (SMaLL Algorithm 2): LOAD the output tile
//! into named accumulators, COMPUTE the reduction fully unrolled over
//! filter columns, input lanes, tile columns and vectors, STORE it back
//! through the fused activation. One code path for every arch: an arch
//! only changes the numbers (`lanes`, the tile) and the type `A` whose
//! primitives are called.

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};
use small_ir::geometry::{self, CB};
use small_ir::{Activation, Blocking, Dtype, KernelKind, LayerSpec, Reduction};

/// Everything the emitter needs about one (layer, arch) kernel.
pub struct Shape {
    /// The layer.
    pub spec: LayerSpec,
    pub lanes: usize,
    pub nv: usize,
    pub o_wb: usize,
    /// Lanes of a partial last input block (broadcast kernels), 0 if none.
    pub tail: usize,
    /// The layer has fewer input channels than one block: no full blocks.
    pub only_tail: bool,
    pub channelwise: bool,
    /// Broadcast kernels: stream each input column once per filter row and
    /// lane through every tap that reads it (see [`columns_compute`]).
    pub columns: bool,
    /// Input lanes one step of a broadcast kernel reduces: 1 for `f32` and
    /// channelwise kernels, the arch's integer dot width for an `i8`
    /// broadcast kernel (`Machine::int8_dot_for`). The weights are packed
    /// in groups of it.
    pub dot: usize,
    /// An `i8` broadcast kernel of a thin layer in the arch's narrower dot
    /// product (`Machine::int8_thin_dot`): `A::thin_group`,
    /// `A::thin_weights`, `A::thin_dot`.
    pub thin: bool,
    /// An `i8` broadcast kernel that multiplies one input lane per step
    /// (`small_ir::blocking::int8_lane_steps`), its weights still packed in
    /// groups of `dot`.
    pub lane_steps: bool,
    /// An `f32` multiply-add is one `A::fma` (else `A::add(c, A::mul(i,
    /// w))`: [`small_ir::Machine::fuses`]); always for `i8`.
    pub fused: bool,
    /// An `i8` kernel of one input channel that folds each filter row's
    /// columns into its dot-product groups ([`folded_compute`]).
    pub folds: bool,
}

impl Shape {
    /// The kernel of `spec` with blocking `b` on an arch of `lanes` lanes.
    pub fn new(spec: &LayerSpec, m: &small_ir::Machine, b: &Blocking) -> Self {
        let lanes = m.lanes;
        let channelwise = spec.kind() == KernelKind::Channelwise;
        // A channelwise kernel's weights are `[tap][TC]` (no dot groups).
        let dot = match spec.dtype {
            Dtype::I8 if !channelwise => m.int8_dot_for(spec),
            _ => 1,
        };
        Shape {
            spec: *spec,
            lanes,
            nv: b.vectors,
            o_wb: b.o_wb,
            tail: if channelwise {
                0
            } else {
                spec.in_channels() % CB
            },
            only_tail: !channelwise && spec.in_channels() < CB,
            channelwise,
            columns: b.columns,
            dot,
            thin: spec.dtype == Dtype::I8 && !channelwise && dot != m.int8_dot,
            lane_steps: small_ir::blocking::int8_lane_steps(m, spec),
            fused: b.fused,
            folds: small_ir::blocking::int8_folds_columns(m, spec),
        }
    }
    /// `c = c + i * w` with the arch `a`'s multiply-add, fused or not.
    fn fma(&self, a: TokenStream, c: &Ident, i: TokenStream, w: TokenStream) -> TokenStream {
        if self.fused {
            quote!(#c = #a::fma(#c, #i, #w);)
        } else {
            quote!(#c = #a::add(#c, #a::mul(#i, #w));)
        }
    }
    fn int8(&self) -> bool {
        self.spec.dtype == Dtype::I8
    }
    /// True for an `f32` max reduction whose activation floors at 0 (ReLU,
    /// ReLU6) and that adds no residual: `relu(max(x..)) = max(0, x..)`,
    /// so its accumulators start at 0 instead of -inf and STORE skips the
    /// floor. A 1x1 ReLU then takes one `max` per vector, not two (AVX2:
    /// the kernel's only arithmetic).
    fn floor_first(&self) -> bool {
        !self.int8()
            && self.spec.reduction == Reduction::Max
            && matches!(self.spec.activation, Activation::Relu | Activation::Relu6)
            && !self.spec.residual
    }
    /// The first lane of every step over `lanes` input lanes.
    fn steps(&self, lanes: usize) -> impl Iterator<Item = usize> {
        let step = if self.lane_steps { 1 } else { self.dot };
        (0..lanes.div_ceil(step)).map(move |g| g * step)
    }
    /// True for an `i8` kernel that reduces in dot-product groups.
    fn groups(&self) -> bool {
        self.int8() && !self.lane_steps
    }
    /// The arch's dot-product primitive `name` (`group`, `weights`,
    /// `dot`), or its `thin_` form for a thin layer.
    fn dot_op(&self, name: &str) -> Ident {
        if self.thin {
            format_ident!("thin_{}", name)
        } else {
            format_ident!("{}", name)
        }
    }
    /// The input operand of a broadcast step at `p`.
    fn broadcast(&self, p: TokenStream) -> TokenStream {
        if self.groups() {
            let group = self.dot_op("group");
            quote!(A::#group(#p))
        } else {
            quote!(A::broadcast(#p))
        }
    }
    /// The input operand of a broadcast step at `p` in a window row that
    /// went through [`offset_ahead`] (`group_offset`, or `group` where the
    /// arch offsets no row ahead).
    fn broadcast_row(&self, p: TokenStream, guarded: bool) -> TokenStream {
        if offsets_ahead(self) || (guarded && pads_thin(self)) {
            self.group_read(p)
        } else {
            self.broadcast(p)
        }
    }
    /// The group at `p` of activations written ahead as
    /// `Dot::offset_word` / `offset_pixels` write them: `group_offset`
    /// where the arch offsets ahead, else `group` (`thin_group` for a
    /// thin kernel, which the arches offset as they read).
    fn group_read(&self, p: TokenStream) -> TokenStream {
        if self.thin {
            let group = self.dot_op("group");
            quote!(A::#group(#p))
        } else {
            quote!(if A::OFFSET_AHEAD { A::group_offset(#p) } else { A::group(#p) })
        }
    }
    /// The weight vector of a broadcast step at `p`.
    fn weights(&self, p: TokenStream) -> TokenStream {
        if self.groups() {
            let weights = self.dot_op("weights");
            quote!(A::#weights(#p))
        } else if self.int8() {
            quote!(A::widen(#p))
        } else {
            quote!(A::load(#p))
        }
    }
    /// `c += i * w` of a broadcast step.
    fn mac(&self, c: &Ident, i: TokenStream, w: TokenStream) -> TokenStream {
        if self.groups() {
            let dot = self.dot_op("dot");
            quote!(#c = A::#dot(#c, #i, #w);)
        } else {
            self.fma(quote!(A), c, i, w)
        }
    }
    /// An `i8` depthwise layer (channelwise with weights): its inputs are
    /// widened minus the input zero point (`nzp`, see [`channelwise_compute`]).
    fn centered(&self) -> bool {
        self.int8() && self.channelwise && self.spec.reduction == Reduction::Fma
    }
    /// An `i8` depthwise kernel that multiplies and sums in the arch's
    /// `Dot::Mac` (named `M`), exactly: at most
    /// [`MAC_TAPS`](small_ir::quant::MAC_TAPS) taps.
    pub fn in_mac(&self) -> bool {
        self.centered() && self.spec.fh * self.spec.fw <= small_ir::quant::MAC_TAPS
    }
    /// The type a channelwise kernel multiplies and sums in.
    fn m(&self) -> TokenStream {
        if self.in_mac() { quote!(M) } else { quote!(A) }
    }
    /// A channelwise kernel's input vector at `p`, in a pixel.
    fn inputs(&self, p: TokenStream) -> TokenStream {
        let x = self.in_stride().call(self.operand_op(), p);
        if self.centered() {
            let m = self.m();
            quote!(#m::add(#x, nzp))
        } else {
            x
        }
    }
    /// The primitive reading a channelwise kernel's input or weight
    /// vector as it multiplies.
    fn operand_op(&self) -> &'static str {
        if self.in_mac() {
            "widen_mac"
        } else {
            self.elems_op()
        }
    }
    /// The primitive reading a channelwise kernel's weight vector once
    /// per filter row: in `Dot::Mac`, the form its multiply-add takes.
    fn weight_op(&self) -> &'static str {
        if self.in_mac() {
            "widen_mac_weights"
        } else {
            self.operand_op()
        }
    }
    /// The primitive reading a vector of elements (a channelwise
    /// kernel's inputs and weights).
    fn elems_op(&self) -> &'static str {
        if self.int8() { "widen" } else { "load" }
    }
    fn tc(&self) -> usize {
        self.nv * self.lanes
    }
    /// The input's pixel stride: `CB`, or for fewer channels the target's
    /// `width` (a `const` the kernel declares, see [`strides`]).
    fn in_stride(&self) -> Stride {
        Stride::of(self.spec.in_channels(), "IN_W")
    }
    /// The output's (and residual's) pixel stride.
    fn out_stride(&self) -> Stride {
        Stride::of(self.spec.out_channels(), "OUT_W")
    }
    /// Window columns one tile reads.
    fn span(&self) -> usize {
        (self.o_wb - 1) * self.spec.sw + self.spec.fw
    }
}

/// Lanes between neighbouring pixels of a tensor: [`CB`] for a tensor of
/// at least `CB` channels; for fewer, the target's
/// `small_ir::geometry::width`, which the host running this macro does
/// not know (a Cortex-M stores them narrower), so a named `const`.
#[derive(Clone, Copy)]
pub enum Stride {
    Block,
    Target(&'static str),
}

impl Stride {
    fn of(channels: usize, name: &'static str) -> Stride {
        if channels >= CB {
            Stride::Block
        } else {
            Stride::Target(name)
        }
    }
    /// The stride as an expression: `CB` (the kernel's `const`) or the
    /// target's.
    fn tokens(self) -> TokenStream {
        match self {
            Stride::Block => quote!(CB),
            Stride::Target(name) => {
                let name = format_ident!("{}", name);
                quote!(#name)
            }
        }
    }
    /// `p` advanced to lane `lane` of pixel `pixel`: a literal offset, or
    /// `pixel * W + lane` with the target's `W`.
    fn at(self, p: &Ident, pixel: usize, lane: usize) -> TokenStream {
        match self {
            Stride::Block => at(p, pixel * CB + lane),
            Stride::Target(_) if pixel == 0 => at(p, lane),
            Stride::Target(name) => {
                let w = format_ident!("{}", name);
                let px = if pixel == 1 {
                    quote!(#w)
                } else {
                    let px = lit(pixel);
                    quote!(#px * #w)
                };
                if lane == 0 {
                    quote!(#p.wrapping_add(#px))
                } else {
                    let lane = lit(lane);
                    quote!(#p.wrapping_add(#px + #lane))
                }
            }
        }
    }
    /// `A::op(args)`, an access of a vector in a pixel of this stride
    /// (or of packed weights: `Block`): `A::op_px(args, W)` where the
    /// target may store the pixel narrower than a vector (the `_px`
    /// primitives of `arch_defs`: on x86-64 a tensor of at most 4 channels
    /// has 4 lanes per pixel).
    fn call(self, op: &str, args: TokenStream) -> TokenStream {
        match self {
            Stride::Block => {
                let op = format_ident!("{}", op);
                quote!(A::#op(#args))
            }
            Stride::Target(name) => {
                let (op, w) = (format_ident!("{}_px", op), format_ident!("{}", name));
                quote!(A::#op(#args, #w))
            }
        }
    }
}

/// The `const`s of the pixel strides a kernel names (see [`Stride`]).
fn strides(s: &Shape) -> TokenStream {
    let decl = |st: Stride, c: usize| match st {
        Stride::Block => quote!(),
        Stride::Target(name) => {
            let (name, c) = (format_ident!("{}", name), lit(c));
            quote!(const #name: usize = ::small_core::__rt::width(#c);)
        }
    };
    let i = decl(s.in_stride(), s.spec.in_channels());
    let o = decl(s.out_stride(), s.spec.out_channels());
    quote!(#i #o)
}

fn lit(n: usize) -> Literal {
    Literal::usize_unsuffixed(n)
}

fn acc(ll: usize, v: usize) -> Ident {
    format_ident!("c{}_{}", ll, v)
}

/// `p.wrapping_add(n)`, or `p` for 0.
fn at(p: &Ident, n: usize) -> TokenStream {
    if n == 0 {
        quote!(#p)
    } else {
        let n = lit(n);
        quote!(#p.wrapping_add(#n))
    }
}

/// Which kernel body to emit.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `Kernel::full`: an interior tile.
    Full,
    /// `Kernel::edge`: guarded taps and columns.
    Edge,
    /// `Kernel::narrow`: a one-column output whose window starts inside
    /// the input. The `O_wb` accumulator columns hold partial sums, folded
    /// at the end, so the chains stay as many as in a wide tile: over the
    /// input lanes (lane `ii` into column `ii % O_wb`) in a fully connected
    /// layer (`F_W = 1`), over the window columns (column `y` into
    /// `y % O_wb`) in a channelwise one (global pooling), which would
    /// otherwise test every column of a mostly empty `O_wb`-wide span.
    Narrow,
}

/// True if a layer gets a `narrow` kernel (see [`Mode::Narrow`]).
///
/// Channelwise: pooling wider than one column only (a 1x1 window has one
/// partial sum to keep). Global pooling is where one-column outputs
/// occur; a depthwise layer keeps `edge` for them, as its generated code
/// with a narrow kernel beside ran 5-8 % slower on depthwise 48x48x16
/// (Zen 4, same run), where no tile is narrow.
pub fn has_narrow(s: &Shape) -> bool {
    let fma = s.spec.reduction == Reduction::Fma;
    s.o_wb > 1
        && if s.channelwise {
            !fma && s.spec.fw > 1
        } else {
            fma && s.spec.fw == 1
        }
}

/// The body of `Kernel::full`, `Kernel::edge` or `Kernel::narrow`.
pub fn body(s: &Shape, mode: Mode) -> TokenStream {
    let guarded = mode == Mode::Edge;
    let load = load_phase(s, mode);
    let compute = if s.channelwise && mode == Mode::Narrow {
        channelwise_narrow_compute(s)
    } else if s.channelwise {
        channelwise_compute(s, guarded)
    } else if s.folds {
        folded_compute(s, mode)
    } else if s.columns && mode != Mode::Narrow {
        columns_compute(s, guarded)
    } else {
        broadcast_compute(s, mode)
    };
    let store = store_phase(s, mode);
    let strides = strides(s);
    quote! {
        unsafe {
            #strides
            #load
            #compute
            #store
        }
    }
}

/// LOAD: every accumulator starts from the bias (FMA), -inf (max) or 0 (avg).
fn load_phase(s: &Shape, mode: Mode) -> TokenStream {
    let mut init = Vec::new();
    for v in 0..s.nv {
        let b = format_ident!("b{}", v);
        init.push(match s.spec.reduction {
            Reduction::Fma => {
                let p = at(&format_ident!("bias"), v * s.lanes);
                quote!(let #b = A::load(#p);)
            }
            Reduction::Max if s.int8() => quote!(let #b = A::splat(i32::MIN);),
            Reduction::Max if s.floor_first() => quote!(let #b = A::zero();),
            Reduction::Max => quote!(let #b = A::splat(f32::NEG_INFINITY);),
            Reduction::Avg => quote!(let #b = A::zero();),
        });
    }
    if chunked(s, mode) {
        // A later chunk of input blocks continues from the partial sums.
        let names: Vec<Ident> = (0..s.o_wb)
            .flat_map(|ll| (0..s.nv).map(move |v| acc(ll, v)))
            .collect();
        let loads = (0..s.o_wb).flat_map(|ll| {
            (0..s.nv).map(move |v| {
                let load = s.out_stride().call("load", out_at(s, "out", ll, v));
                if mode == Mode::Edge && ll > 0 {
                    let l = lit(ll);
                    quote!(if #l < t.w { #load } else { A::zero() })
                } else {
                    load
                }
            })
        });
        let biases = (0..s.o_wb).flat_map(|_| (0..s.nv).map(|v| format_ident!("b{}", v)));
        return quote! {
            let bias = t.bias;
            #(#init)*
            let out = t.out;
            let (#(mut #names),*) = if t.partial_in {
                (#(#loads),*)
            } else {
                (#(#biases),*)
            };
        };
    }
    let accs: Vec<TokenStream> = (0..s.o_wb)
        .flat_map(|ll| {
            (0..s.nv).map(move |v| {
                let (c, b) = (acc(ll, v), format_ident!("b{}", v));
                if s.in_mac() {
                    // The bias joins at STORE, after the exact sum.
                    quote!(let mut #c = M::zero();)
                } else if mode == Mode::Narrow && ll > 0 && s.spec.reduction == Reduction::Fma {
                    quote!(let mut #c = A::zero();)
                } else {
                    quote!(let mut #c = #b;)
                }
            })
        })
        .collect();
    let bias = match s.spec.reduction {
        Reduction::Fma => quote!(let bias = t.bias;),
        Reduction::Max | Reduction::Avg => quote!(),
    };
    quote! { #bias #(#init)* #(#accs)* }
}

/// True if the kernel can run one chunk of a split reduction
/// (`Tile::partial_in` / `partial_out`): broadcast FMA kernels.
fn chunked(s: &Shape, mode: Mode) -> bool {
    !s.channelwise && s.spec.reduction == Reduction::Fma && mode != Mode::Narrow && !s.int8()
}

/// Address of accumulator `(ll, v)`'s place in the tensor at `base`: its
/// channel `v * lanes` of the tile at pixel `ll` of the row.
fn out_at(s: &Shape, base: &str, ll: usize, v: usize) -> TokenStream {
    let base = format_ident!("{}", base);
    let c = v * s.lanes;
    match (c / CB, s.out_stride()) {
        (0, stride) => stride.at(&base, ll, c),
        // Several blocks: the tensor has at least `CB` channels.
        (blk, _) => {
            let (_, off) = geometry::blocked_at(c, ll, CB);
            let (blk, off) = (lit(blk), lit(off));
            quote!(#base.wrapping_add(#blk * t.out_plane + #off))
        }
    }
}

/// `body` of output column `ll`, run only if the tile stores that column:
/// an edge tile stores its first `t.w` columns (always column 0).
fn if_stored(mode: Mode, ll: usize, body: TokenStream) -> TokenStream {
    if mode == Mode::Edge && ll > 0 {
        let ll = lit(ll);
        quote!(if #ll < t.w { #body })
    } else {
        body
    }
}

/// The steps `(col, step)` of an edge tile's window columns (in order),
/// each run only if its column lies inside the input (`t.lo <= col <
/// t.hi`). In a tile of at least [`NESTED_FROM`] columns the guards nest
/// on `t.hi`: the first column at or past `hi` skips the rest in one
/// branch. With a flat guard per column, a tile past the row's end (a
/// 6-column row under a 12-column tile) took one taken branch per skipped
/// column.
fn guarded_columns(s: &Shape, cols: &[(usize, TokenStream)]) -> TokenStream {
    let max_left = s.spec.padding.max_left(s.spec.fw);
    let guards = cols.iter().map(|(col, step)| {
        let c = lit(*col);
        let lo = match *col {
            col if col >= max_left => None,
            0 => Some(quote!(t.lo == 0)),
            _ => Some(quote!(t.lo <= #c)),
        };
        Guard {
            stored: quote!(),
            lo,
            hi: quote!(#c < t.hi),
            step: step.clone(),
        }
    });
    guarded(s, guards.collect())
}

/// One guarded step of an edge tile: run `step` if `stored` (empty, or
/// `ll < t.w &&`), `lo` and `hi` hold. `stored && hi` fails for every
/// step after the first that fails it (the columns ascend); `lo` holds
/// for every step after the first that passes it, and is `None` (not
/// tested) on a column at or past the layer's `Padding::max_left`, where
/// it always holds: a 3x3 SAME tile tests it on its first column only.
struct Guard {
    stored: TokenStream,
    lo: Option<TokenStream>,
    hi: TokenStream,
    step: TokenStream,
}

/// `guards` in order: each step in a flat `if` of its own under
/// [`NESTED_FROM`] columns; from it nested on `stored && hi`, so the
/// first guard that fails that skips the rest in one branch.
fn guarded(s: &Shape, guards: Vec<Guard>) -> TokenStream {
    if s.o_wb < NESTED_FROM {
        let steps = guards.into_iter().map(|g| {
            let (stored, hi, step) = (g.stored, g.hi, g.step);
            match g.lo {
                Some(lo) => quote! { if #stored #lo && #hi { #step } },
                None => quote! { if #stored #hi { #step } },
            }
        });
        return quote!(#(#steps)*);
    }
    guards.into_iter().rev().fold(quote!(), |rest, g| {
        let (stored, hi, step) = (g.stored, g.hi, g.step);
        let step = match g.lo {
            Some(lo) => quote! { if #lo { #step } },
            None => step,
        };
        quote! { if #stored #hi { #step #rest } }
    })
}

/// The narrowest tile whose edge guards nest ([`guarded`]). Only a row
/// narrower than the tile leaves more than the padding's columns to skip
/// (a last tile that fits shifts left instead), which a narrow tile
/// rarely meets; and nested, the spilling 4-column `i8` tile of
/// ResNet-8's 16x16x32 residual layer took 10 % longer (AMD EPYC Zen 1),
/// its branches laid out anew for nothing. The 8- and 12-column tiles
/// gained 8-22 % (depthwise on 5- and 6-column rows, conv 3x3 6x6x512).
const NESTED_FROM: usize = 6;

/// COMPUTE for channel-mixing layers: for every valid filter tap (x, y),
/// and every input lane (unrolled), load `nv` weight vectors and broadcast
/// each of the `O_wb` input pixels into them.
///
/// The taps are a run-time loop on purpose: with `y` unrolled, the same
/// input pixel is read by taps `(ll, y)` and `(ll + 1, y - S_W)`, the
/// compiler merges those loads and keeps them live across taps, and the
/// tile spills (measured: 40 % slower on AVX2).
fn broadcast_compute(s: &Shape, mode: Mode) -> TokenStream {
    let block = |lanes: usize| {
        let steps = |guarded: bool| {
            let mut steps = Vec::new();
            for (n, ii) in s.steps(lanes).enumerate() {
                if mode == Mode::Narrow {
                    // One input pixel: step n into partial-sum column n % O_wb.
                    let ll = n % s.o_wb;
                    let i = s.broadcast(at(&format_ident!("row"), ii));
                    let fmas = (0..s.nv).map(|v| {
                        let c = acc(ll, v);
                        let w = s.weights(at(&format_ident!("wr"), w_at(s, 0, ii, v)));
                        s.mac(&c, quote!(i), w)
                    });
                    steps.push(quote! { let i = #i; #(#fmas)* });
                    continue;
                }
                for v in 0..s.nv {
                    let (w, p) = (
                        format_ident!("w{}", v),
                        s.weights(at(&format_ident!("wr"), w_at(s, 0, ii, v))),
                    );
                    steps.push(quote!(let #w = #p;));
                }
                let columns = (0..s.o_wb).map(|ll| {
                    let row = format_ident!("row");
                    let i = s.broadcast(s.in_stride().at(&row, ll * s.spec.sw, ii));
                    let fmas = (0..s.nv).map(|v| {
                        let (c, w) = (acc(ll, v), format_ident!("w{}", v));
                        s.mac(&c, quote!(i), quote!(#w))
                    });
                    quote! { let i = #i; #(#fmas)* }
                });
                if guarded {
                    steps.push(guarded_taps(s, columns.collect()));
                } else {
                    steps.extend(columns);
                }
            }
            quote!(#(#steps)*)
        };
        let (wtap, fw, w) = (lit(wtap_len(s)), lit(s.spec.fw), s.in_stride().tokens());
        // In an edge tile most taps are still valid for every column (all
        // but one of a 3x3 filter's at a SAME border): those run the
        // unguarded steps, and only the others test each column. (Columns
        // past `t.w` then sum in-bounds inputs that are never stored.)
        let taps = if mode == Mode::Edge {
            let (fast, slow) = (steps(false), steps(true));
            let last = lit((s.o_wb - 1) * s.spec.sw);
            quote! {
                if t.lo <= y && #last + y < t.hi { #fast } else { #slow }
            }
        } else {
            steps(false)
        };
        quote! {
            for x in t.x0..t.x1 {
                for y in 0..#fw {
                    let row = blk.wrapping_add(x * t.in_row + y * #w);
                    let wr = wb.wrapping_add((x * #fw + y) * #wtap);
                    #taps
                }
            }
        }
    };
    reduce_blocks(s, block)
}

/// COMPUTE for channel-mixing layers whose filter row stays in registers:
/// per input block, filter row and input lane (unrolled), load the row's
/// `F_W x nv` weight vectors, then broadcast each of the tile's window
/// columns once and apply it to every output column whose window holds
/// it. A column serves up to `F_W` taps, so a 3x3 tile does about three
/// FMAs per load where the per-tap form does one, and the FMAs take
/// register operands only. In an edge tile a column outside `lo..hi` is
/// skipped whole: one test per column, none per FMA.
fn columns_compute(s: &Shape, guarded: bool) -> TokenStream {
    let tc = s.tc();
    let block = |lanes: usize| {
        // Each step with the window column it reads (`None`: weights).
        let mut steps = Vec::new();
        for ii in s.steps(lanes) {
            for y in 0..s.spec.fw {
                for v in 0..s.nv {
                    let (w, p) = (
                        format_ident!("w{}_{}", y, v),
                        s.weights(at(&format_ident!("wr"), w_at(s, y, ii, v))),
                    );
                    steps.push((None, quote!(let #w = #p;)));
                }
            }
            for col in 0..s.span() {
                let taps = column_taps(s, col);
                if taps.is_empty() {
                    continue;
                }
                let i = s.broadcast_row(s.in_stride().at(&format_ident!("row"), col, ii), guarded);
                let fmas = taps.iter().flat_map(|&(ll, y)| {
                    (0..s.nv).map(move |v| {
                        let (c, w) = (acc(ll, v), format_ident!("w{}_{}", y, v));
                        s.mac(&c, quote!(i), quote!(#w))
                    })
                });
                steps.push((Some(col), quote! { let i = #i; #(#fmas)* }));
            }
        }
        let render = |guarded: bool| {
            if !guarded {
                let steps = steps.iter().map(|(_, step)| step);
                return quote!(#(#steps)*);
            }
            // Each lane's weight loads, then its columns' guarded chain.
            let (mut out, mut cols) = (Vec::new(), Vec::new());
            for (col, step) in &steps {
                match col {
                    Some(col) => cols.push((*col, step.clone())),
                    None => {
                        out.push(guarded_columns(s, &cols));
                        cols.clear();
                        out.push(step.clone());
                    }
                }
            }
            out.push(guarded_columns(s, &cols));
            quote!(#(#out)*)
        };
        let wrow = lit(geometry::row_len(&s.spec, tc));
        let offset = if guarded && pads_thin(s) {
            pad_thin_row(s)
        } else {
            offset_ahead(s, guarded)
        };
        // An edge tile whose buffer holds the padding value outside the
        // input runs the interior tile's steps, unguarded.
        let steps = if guarded && (pads_ahead(s) || pads_thin(s)) {
            let (plain, checked) = (render(false), render(true));
            quote!(if A::OFFSET_AHEAD { #plain } else { #checked })
        } else {
            render(guarded)
        };
        quote! {
            for x in t.x0..t.x1 {
                let row = blk.wrapping_add(x * t.in_row);
                #offset
                let wr = wb.wrapping_add(x * #wrow);
                #steps
            }
        }
    };
    let blocks = reduce_blocks(s, block);
    match offset_buffer(s, guarded).or_else(|| thin_buffer(s, guarded)) {
        Some(buffer) => quote! { #buffer #blocks },
        None => blocks,
    }
}

/// COMPUTE of a layer whose filter columns fold into dot-product groups
/// ([`small_ir::blocking::int8_folds_columns`]: one input channel), per
/// filter row: the row's `ceil(F_W / dot) x nv` weight vectors
/// ([`small_ir::geometry::folded_at`]), then for every output column and
/// group its `dot` neighbouring window columns (`A::group_strided`, or
/// [`folded_word`] for a group past the input or the filter row) and one
/// dot product per accumulator. An edge tile reads the input zero point
/// for the columns outside the input, so its border correction covers
/// only the skipped filter rows; it skips the columns it does not store.
fn folded_compute(s: &Shape, mode: Mode) -> TokenStream {
    let guarded = mode == Mode::Edge;
    let (dot, fw, sw, tc) = (s.dot, s.spec.fw, s.spec.sw, s.tc());
    let groups = fw.div_ceil(dot);
    let mut weights = Vec::new();
    for g in 0..groups {
        for v in 0..s.nv {
            let w = format_ident!("w{}_{}", g, v);
            let p = s.weights(at(&format_ident!("wr"), g * tc * dot + v * s.lanes * dot));
            weights.push(quote!(let #w = #p;));
        }
    }
    let mut steps = Vec::new();
    for ll in 0..s.o_wb {
        for g in 0..groups {
            let first = ll * sw + g * dot;
            let word = || folded_word(s, guarded, first, fw - g * dot, ll * groups + g);
            let vector = {
                let (first, strided) = (lit(first), s.dot_op("group_strided"));
                quote!(A::#strided(row.wrapping_add(#first * IN_W), IN_W))
            };
            // A group of whole taps inside the input reads its pixels
            // directly; one past the input or the filter row builds its
            // word from the bytes it may read.
            let i = match ((g + 1) * dot <= fw, guarded) {
                (true, false) => vector,
                (true, true) => {
                    let (first, end, word) = (lit(first), lit(first + dot), word());
                    quote!(if t.lo <= #first && #end <= t.hi { #vector } else { #word })
                }
                (false, _) => word(),
            };
            let dots = (0..s.nv).map(|v| {
                let (c, w) = (acc(ll, v), format_ident!("w{}_{}", g, v));
                s.mac(&c, quote!(i), quote!(#w))
            });
            steps.push(if_stored(mode, ll, quote! { let i = #i; #(#dots)* }));
        }
    }
    let wrow = lit(geometry::row_len(&s.spec, tc));
    let block = |_lanes: usize| {
        quote! {
            for x in t.x0..t.x1 {
                let row = blk.wrapping_add(x * t.in_row);
                let wr = wb.wrapping_add(x * #wrow);
                #(#weights)*
                #(#steps)*
            }
        }
    };
    let blocks = reduce_blocks(s, block);
    let (n, zp) = (lit(s.o_wb * groups), input_zero_point(s));
    let words = if guarded || fw % dot != 0 {
        quote!(let mut words = [0u32; #n];)
    } else {
        quote!()
    };
    let zp = if guarded {
        quote!(let zp = #zp as u8 as u32;)
    } else {
        quote!()
    };
    quote! {
        #words
        #zp
        #blocks
    }
}

/// A folded group's word of `taps` (at most `dot`) window columns from
/// `first`, as a group of [`folded_compute`] reads it: each column's byte
/// (in an edge tile, the input zero point for a column outside the
/// input), offset as the arch's `group_offset` reads it, stored in
/// `words[k]` (one store: the group's read right after forwards from
/// it). The bytes past `taps` are zero, multiplied by zero weights.
fn folded_word(s: &Shape, guarded: bool, first: usize, taps: usize, k: usize) -> TokenStream {
    let parts = (0..s.dot.min(taps)).map(|j| {
        let (c, shift) = (lit(first + j), lit(8 * j));
        let read = quote!(row.wrapping_add(#c * IN_W).read() as u8 as u32);
        let byte = if guarded {
            quote!((if t.lo <= #c && #c < t.hi { #read } else { zp }))
        } else {
            quote!((#read))
        };
        quote!((#byte << #shift))
    });
    let (k, read) = (lit(k), s.group_read(quote!(p)));
    let offset = if s.thin {
        quote!(word)
    } else {
        quote!(if A::OFFSET_AHEAD {
            A::offset_word(word)
        } else {
            word
        })
    };
    quote! {{
        let word = 0 #(| #parts)*;
        let p = words.as_mut_ptr().wrapping_add(#k);
        ::core::ptr::write_volatile(p, #offset);
        let p = p.cast::<i8>();
        #read
    }}
}

/// True if an edge tile of a thin `i8` layer (an input of fewer channels
/// than a block, whose pixels are narrower than a vector) copies each
/// window row into [`thin_buffer`], filled with the input zero point
/// where the window leaves the input, where the arch offsets ahead
/// (`Dot::OFFSET_AHEAD`), and so runs the interior tile's steps. Its
/// guarded steps test every column at every tap, and with 16
/// accumulators, 8 weight vectors and the offset constant live the
/// compiler kept an accumulator in memory. VWW 0.25 int8's 3x3 stem 14.7
/// -> 12.9 µs, DS-CNN int8's 10x4 one 13.0 -> 12.4 (Ice Lake VM, one
/// thread); the latter is still 3x its `f32` twin, for reasons that are
/// not the guards.
fn pads_thin(s: &Shape) -> bool {
    s.columns
        && !s.folds
        && s.groups()
        && !s.thin
        && s.spec.reduction == Reduction::Fma
        && matches!(s.in_stride(), Stride::Target(_))
}

/// The layer's input zero point, as an `i32` expression read from its
/// per-channel rows (the padding value of a border tile's buffer).
fn input_zero_point(s: &Shape) -> TokenStream {
    let r = lit(neg_zero_point_row(&s.spec));
    quote!(t.bias.wrapping_add(#r).read().wrapping_neg())
}

/// [`pads_thin`]'s buffer, one window row of the input's pixels as
/// `u32` words, filled with the input zero point (offset as
/// `Dot::group_offset` reads it; the packer's bias compensation assumes
/// that value at every tap).
fn thin_buffer(s: &Shape, guarded: bool) -> Option<TokenStream> {
    if !(guarded && pads_thin(s)) {
        return None;
    }
    let (span, zp) = (lit(s.span()), input_zero_point(s));
    Some(quote! {
        let mut padded = [0u32; #span * IN_W / 4];
        if A::OFFSET_AHEAD {
            let zp = #zp as u8;
            let fill = A::offset_word(u32::from_ne_bytes([zp; 4]));
            for w in padded.iter_mut() {
                ::core::ptr::write_volatile(w, fill);
            }
        }
    })
}

/// [`pads_thin`]: the window row's pixels inside the input (`lo..hi`)
/// offset into [`thin_buffer`] (`Dot::offset_word`), which `row` then
/// points at. Word by word, each a separate store: the 4-byte reads right
/// after forward from a store of the same word, and from none of the
/// wider stores a copy of the row compiles to (the tile ran 20 % slower
/// than with the guards, Ice Lake VM).
///
/// Safe as the guarded steps were: it reads only the pixels `lo..hi`,
/// the window columns the tile's bounds declare inside the input, and
/// writes words below `span * IN_W / 4`, the buffer's length (`IN_W`, a
/// thin input's lanes per pixel, is 4, 8 or 12 on every target).
fn pad_thin_row(s: &Shape) -> TokenStream {
    let span = lit(s.span());
    quote! {
        let row = if A::OFFSET_AHEAD {
            let (lo, hi) = (t.lo.min(#span), t.hi.min(#span));
            let words = padded.as_mut_ptr();
            for k in lo * (IN_W / 4)..hi.max(lo) * (IN_W / 4) {
                let w = row.cast::<u32>().wrapping_add(k).read_unaligned();
                ::core::ptr::write_volatile(words.wrapping_add(k), A::offset_word(w));
            }
            padded.as_ptr().cast::<i8>()
        } else {
            row
        };
    }
}

/// True if a broadcast kernel reads its input through [`offset_ahead`]'s
/// buffer where the arch says so: `i8` dot-product groups from whole
/// pixel blocks (an input of at least `CB` channels).
fn offsets_ahead(s: &Shape) -> bool {
    s.groups() && !s.thin && matches!(s.in_stride(), Stride::Block)
}

/// True if an edge tile of the layer fills [`offset_ahead`]'s buffer
/// with the padding value where the window leaves the input, and so runs
/// the interior tile's steps: a broadcast `i8` layer with weights, whose
/// padding is the input zero point (TFLite's), the value the packer's
/// bias compensation assumes at every tap.
fn pads_ahead(s: &Shape) -> bool {
    s.columns && offsets_ahead(s) && s.spec.reduction == Reduction::Fma
}

/// The buffer of [`offset_ahead`], one window row of pixel blocks; in an
/// edge tile (see [`pads_ahead`]) filled with the padding value, which the
/// columns inside the input then overwrite row by row.
fn offset_buffer(s: &Shape, guarded: bool) -> Option<TokenStream> {
    if !offsets_ahead(s) {
        return None;
    }
    let (span, len) = (lit(s.span()), lit(s.span() * CB));
    let pad = if guarded && pads_ahead(s) {
        let zp = input_zero_point(s);
        quote! {
            if A::OFFSET_AHEAD {
                let zp = #zp as i8;
                A::offset_fill(ahead.as_mut_ptr(), zp, #span);
            }
        }
    } else {
        quote!()
    };
    Some(quote! {
        let mut ahead = [0i8; #len];
        #pad
    })
}

/// Where the arch's `Dot::OFFSET_AHEAD` says its `group` spends an ALU
/// operation per read on the activation offset: the window row's pixels
/// (those inside the input, `lo..hi`, in an edge tile) offset once each
/// into `ahead`, which `row` then points at (read with `group_offset`).
fn offset_ahead(s: &Shape, guarded: bool) -> TokenStream {
    if !offsets_ahead(s) {
        return quote!();
    }
    let span = lit(s.span());
    let (first, n) = if guarded {
        (quote!(t.lo), quote!(t.hi.min(#span).saturating_sub(t.lo)))
    } else {
        (quote!(0), quote!(#span))
    };
    quote! {
        let row = if A::OFFSET_AHEAD {
            let at = #first * CB;
            A::offset_pixels(ahead.as_mut_ptr().wrapping_add(at), row.wrapping_add(at), #n);
            ahead.as_ptr()
        } else {
            row
        };
    }
}

/// The `(output column, filter column)` pairs that read window column `col`.
fn column_taps(s: &Shape, col: usize) -> Vec<(usize, usize)> {
    (0..s.o_wb)
        .filter_map(|ll| {
            col.checked_sub(ll * s.spec.sw)
                .filter(|y| *y < s.spec.fw)
                .map(|y| (ll, y))
        })
        .collect()
}

/// Packed weights per filter tap (`small_ir::geometry::tap_len`).
fn wtap_len(s: &Shape) -> usize {
    geometry::tap_len(&s.spec, s.tc())
}

/// Offset of vector `v`'s weights for input lane `lane` at filter tap `tap`
/// from the weight pointer `wr` (`small_ir::geometry::in_block_at`).
fn w_at(s: &Shape, tap: usize, lane: usize, v: usize) -> usize {
    geometry::in_block_at_dot(&s.spec, s.tc(), s.dot, tap, lane, v * s.lanes)
}

/// The reduction over input blocks: `block(CB)` for every full block, then
/// `block(TAIL)` for a partial last one.
fn reduce_blocks(s: &Shape, block: impl Fn(usize) -> TokenStream) -> TokenStream {
    let wblock = lit(geometry::block_len(&s.spec, s.tc()));
    // Layers with fewer input channels than one block only ever run the tail.
    let full = if s.only_tail {
        quote!()
    } else {
        let body = block(CB);
        quote! {
            for _ in 0..t.in_blocks {
                #body
                blk = blk.wrapping_add(t.in_plane);
                wb = wb.wrapping_add(#wblock);
            }
        }
    };
    let tail = if s.tail > 0 {
        let t = block(s.tail);
        quote! { if t.tail { #t } }
    } else {
        quote!()
    };
    let cb = lit(CB);
    quote! {
        const CB: usize = #cb;
        let mut blk = t.inp;
        let mut wb = t.wts;
        #full
        #tail
    }
}

/// The steps of output columns `0..O_wb` (in order) at one tap of an
/// edge tile, each run only if the column is stored (`ll < t.w`) and its
/// window column `ll * S_W + y` (run-time `y`) lies inside the input;
/// from [`NESTED_FROM`] columns nested on the two upper bounds, which
/// fail for every column after the first that fails them (see
/// [`guarded_columns`]).
fn guarded_taps(s: &Shape, steps: Vec<TokenStream>) -> TokenStream {
    let max_left = s.spec.padding.max_left(s.spec.fw);
    let guards = steps.into_iter().enumerate().map(|(ll, step)| {
        let col = match ll * s.spec.sw {
            0 => quote!(y),
            base => {
                let b = lit(base);
                quote!((#b + y))
            }
        };
        let stored = if ll > 0 {
            let ll = lit(ll);
            quote!(#ll < t.w &&)
        } else {
            quote!()
        };
        Guard {
            stored,
            // `y >= 0`: a column at or past `max_left` at `y = 0` is at every `y`.
            lo: (ll * s.spec.sw < max_left).then(|| quote!(t.lo <= #col)),
            hi: quote!(#col < t.hi),
            step,
        }
    });
    guarded(s, guards.collect())
}

/// COMPUTE for per-channel layers: for every filter row, keep the row's
/// weights in registers, stream each window column through once and apply
/// it to every output column whose window contains it.
fn channelwise_compute(s: &Shape, guarded: bool) -> TokenStream {
    let mut weights = Vec::new();
    if s.spec.reduction == Reduction::Fma {
        for y in 0..s.spec.fw {
            for v in 0..s.nv {
                let (w, p) = (
                    format_ident!("w{}_{}", y, v),
                    Stride::Block.call(s.weight_op(), at(&format_ident!("wr"), w_at(s, y, 0, v))),
                );
                weights.push(quote!(let #w = #p;));
            }
        }
    }
    let mut cols = Vec::new();
    for col in 0..s.span() {
        let taps = column_taps(s, col);
        if taps.is_empty() {
            continue;
        }
        let mut group = Vec::new();
        for v in 0..s.nv {
            let i = s.inputs(s.in_stride().at(&format_ident!("row"), col, v * s.lanes));
            group.push(quote!(let i = #i;));
            for &(ll, y) in &taps {
                let w = format_ident!("w{}_{}", y, v);
                group.push(reduce_step(s, &acc(ll, v), quote!(#w)));
            }
        }
        cols.push((col, quote!(#(#group)*)));
    }
    let steps = if guarded {
        guarded_columns(s, &cols)
    } else {
        let steps = cols.iter().map(|(_, step)| step);
        quote!(#(#steps)*)
    };
    // An i8 depthwise layer subtracts the input zero point from every
    // input vector (all lanes of its row hold the same value).
    let nzp = if s.centered() {
        let r = lit(neg_zero_point_row(&s.spec));
        let nzp = quote!(A::load(t.bias.wrapping_add(#r)));
        if s.in_mac() {
            quote!(let nzp = A::to_mac(#nzp);)
        } else {
            quote!(let nzp = #nzp;)
        }
    } else {
        quote!()
    };
    let rows = channelwise_rows(s, quote!(#(#weights)* #steps));
    quote! { #nzp #rows }
}

/// Offset in the per-channel rows (`t.bias`) of an `i8` depthwise
/// layer's negated input zero point, one value per output channel.
pub fn neg_zero_point_row(spec: &LayerSpec) -> usize {
    small_ir::quant::row::NEG_INPUT_ZERO_POINT * geometry::out_padded(spec)
}

/// The loop over the valid filter rows of a per-channel kernel, with the
/// row's input (`row`) and, for FMA, its weights (`wr`) in scope of `body`.
fn channelwise_rows(s: &Shape, body: TokenStream) -> TokenStream {
    let wrow = lit(geometry::row_len(&s.spec, s.tc()));
    let wr = if s.spec.reduction == Reduction::Fma {
        quote!(let wr = t.wts.wrapping_add(x * #wrow);)
    } else {
        quote!()
    };
    quote! {
        for x in t.x0..t.x1 {
            let row = t.inp.wrapping_add(x * t.in_row);
            #wr
            #body
        }
    }
}

/// `c = c (+) i` for the layer's reduction; `w` is the weight operand (FMA).
fn reduce_step(s: &Shape, c: &Ident, w: TokenStream) -> TokenStream {
    let m = s.m();
    match s.spec.reduction {
        Reduction::Fma => s.fma(m, c, quote!(i), w),
        // From 0, the input first: a NaN tap is skipped (`max` returns its
        // second operand if either is NaN on x86), so ReLU of NaN is 0, as
        // with the floor at STORE.
        Reduction::Max if s.floor_first() => quote!(#c = A::max(i, #c);),
        Reduction::Max => quote!(#c = A::max(#c, i);),
        Reduction::Avg => quote!(#c = A::add(#c, i);),
    }
}

/// Partial-sum columns a [`Mode::Narrow`] kernel uses: `O_wb`, or the
/// filter's columns if fewer (channelwise).
fn narrow_columns(s: &Shape) -> usize {
    if s.channelwise {
        s.o_wb.min(s.spec.fw)
    } else {
        s.o_wb
    }
}

/// COMPUTE of [`Mode::Narrow`] for per-channel layers: output column 0
/// only, window column `y` into partial-sum column `y % O_wb`. The window
/// starts inside the input (`lo == 0`); a column past `hi` (SAME padding
/// on the right) is skipped.
fn channelwise_narrow_compute(s: &Shape) -> TokenStream {
    let (row, wr) = (format_ident!("row"), format_ident!("wr"));
    let steps = (0..s.spec.fw).map(|y| {
        let group = (0..s.nv).map(|v| {
            let i = s
                .in_stride()
                .call(s.elems_op(), s.in_stride().at(&row, y, v * s.lanes));
            let w = Stride::Block.call(s.elems_op(), at(&wr, w_at(s, y, 0, v)));
            let step = reduce_step(s, &acc(y % s.o_wb, v), w);
            quote! { let i = #i; #step }
        });
        let group = quote!(#(#group)*);
        if y == 0 {
            group
        } else {
            let y = lit(y);
            quote! { if #y < t.hi { #group } }
        }
    });
    channelwise_rows(s, quote!(#(#steps)*))
}

/// STORE: divide averages by their count of valid taps, add the residual,
/// apply the fused activation and write the tile back.
fn store_phase(s: &Shape, mode: Mode) -> TokenStream {
    let mut out = Vec::new();
    if mode == Mode::Narrow {
        // Fold the partial sums into column 0, in a fixed order.
        for ll in 1..narrow_columns(s) {
            for v in 0..s.nv {
                let (c0, c) = (acc(0, v), acc(ll, v));
                out.push(match s.spec.reduction {
                    Reduction::Max => quote!(#c0 = A::max(#c0, #c);),
                    Reduction::Fma | Reduction::Avg => quote!(#c0 = A::add(#c0, #c);),
                });
            }
        }
    }
    let columns = if mode == Mode::Narrow { 1 } else { s.o_wb };
    if s.int8() {
        return int8_store(s, mode, out);
    }
    if s.spec.reduction == Reduction::Avg {
        out.push(quote!(let rows = (t.x1 - t.x0) as f32;));
    }
    match s.spec.activation {
        _ if s.floor_first() => {
            if s.spec.activation == Activation::Relu6 {
                out.push(quote!(let six = A::splat(6.0);));
            }
        }
        Activation::None => {}
        Activation::Relu => out.push(quote!(let zero = A::zero();)),
        Activation::Relu6 => out.push(quote!(let zero = A::zero(); let six = A::splat(6.0);)),
        Activation::Logistic => {}
    }
    for ll in 0..columns {
        let mut col = Vec::new();
        if s.spec.reduction == Reduction::Avg {
            // A narrow tile's window may end past the input (`hi`).
            col.push(avg_scale(s, ll, mode != Mode::Full));
        }
        for v in 0..s.nv {
            let c = acc(ll, v);
            if s.spec.reduction == Reduction::Avg {
                col.push(quote!(#c = A::mul(#c, scale);));
            }
            let at_of = |base: &str| out_at(s, base, ll, v);
            if s.spec.residual {
                let r = s.out_stride().call("load", at_of("res"));
                col.push(quote!(#c = A::add(#c, #r);));
            }
            match s.spec.activation {
                // Floored from the start (LOAD).
                Activation::Relu if s.floor_first() => {}
                Activation::Relu6 if s.floor_first() => col.push(quote!(#c = A::min(#c, six);)),
                Activation::None => {}
                Activation::Relu => col.push(quote!(#c = A::max(#c, zero);)),
                Activation::Relu6 => col.push(quote!(#c = A::min(A::max(#c, zero), six);)),
                Activation::Logistic => {
                    col.push(quote!(#c = A::map(#c, ::small_core::__rt::logistic);))
                }
            }
            col.push(store_value(s, at_of("out"), &c));
        }
        out.push(if_stored(mode, ll, quote!(#(#col)*)));
    }
    let res = if s.spec.residual {
        quote!(let res = t.res;)
    } else {
        quote!()
    };
    let epilogue = quote! { #res #(#out)* };
    if !chunked(s, mode) {
        return quote! { let out = t.out; #epilogue };
    }
    // More chunks follow: store the raw sums, no epilogue.
    let raw = (0..s.o_wb).map(|ll| {
        let stores = (0..s.nv).map(|v| {
            let (p, c) = (out_at(s, "out", ll, v), acc(ll, v));
            store_value(s, p, &c)
        });
        if_stored(mode, ll, quote!(#(#stores)*))
    });
    quote! {
        let out = t.out;
        if t.partial_out {
            #(#raw)*
        } else {
            #epilogue
        }
    }
}

/// The end of STORE: accumulator vector `c`, its epilogue applied, into
/// the output at `p` (`f32`: the accumulator is the output).
fn store_value(s: &Shape, p: TokenStream, c: &Ident) -> TokenStream {
    let store = s.out_stride().call("store", quote!(#p, #c));
    quote!(#store;)
}

/// STORE of an `i8` layer: `fold` (a narrow tile's partial sums), the
/// border correction of the skipped taps (with weights), then each
/// vector through its output stage, which reads the layer's per-channel
/// rows (`small_ir::quant::row`) from `q`: requantized (FMA), averaged
/// (avg) or clamped (max).
fn int8_store(s: &Shape, mode: Mode, fold: Vec<TokenStream>) -> TokenStream {
    let columns = if mode == Mode::Narrow { 1 } else { s.o_wb };
    // Only broadcast kernels skip taps whose products the bias took out.
    let correction = if s.spec.reduction == Reduction::Fma && !s.channelwise {
        if mode == Mode::Edge && s.folds {
            // The folded groups read the input zero point outside the input.
            border_correction(s, Mode::Full, columns)
        } else if mode == Mode::Edge && (pads_ahead(s) || pads_thin(s)) {
            // The window columns outside the input read the padding
            // value: only the rows outside `x0..x1` were skipped.
            let correction = border_correction(s, mode, columns);
            let rows = border_correction(s, Mode::Full, columns);
            quote!(if A::OFFSET_AHEAD { #rows } else { #correction })
        } else {
            border_correction(s, mode, columns)
        }
    } else {
        quote!()
    };
    let out = if s.spec.reduction == Reduction::Fma {
        requantize_columns(s, mode, columns)
    } else {
        pool_columns(s, mode, columns)
    };
    let res = if s.spec.residual {
        quote!(let res = t.res;)
    } else {
        quote!()
    };
    let sums = if s.in_mac() {
        mac_sums(s, columns)
    } else {
        quote!()
    };
    quote! {
        let out = t.out;
        let q = t.bias;
        #res
        #(#fold)*
        #sums
        #correction
        #(#out)*
    }
}

/// The exact `Dot::Mac` sums of a depthwise tile as `i32`, plus the bias.
fn mac_sums(s: &Shape, columns: usize) -> TokenStream {
    let sums = (0..columns).flat_map(|ll| {
        (0..s.nv).map(move |v| {
            let (c, b) = (acc(ll, v), format_ident!("b{}", v));
            quote!(let #c = A::add(A::from_mac(#c), #b);)
        })
    });
    quote!(#(#sums)*)
}

/// The output stage of a pooling tile, column by column: each vector
/// averaged (avg, over the column's valid taps) or clamped (max).
fn pool_columns(s: &Shape, mode: Mode, columns: usize) -> Vec<TokenStream> {
    let stride = lit(geometry::out_padded(&s.spec));
    let mut out = Vec::new();
    if s.spec.reduction == Reduction::Avg {
        out.push(quote!(let rows = (t.x1 - t.x0) as i32;));
    }
    for ll in 0..columns {
        let mut col = Vec::new();
        if s.spec.reduction == Reduction::Avg {
            let fw = lit(s.spec.fw);
            col.push(if mode == Mode::Full {
                quote!(let count = rows * #fw;)
            } else {
                let (first, end) = (lit(ll * s.spec.sw), lit(ll * s.spec.sw + s.spec.fw));
                quote! {
                    let count = rows * t.hi.min(#end).saturating_sub(t.lo.max(#first)) as i32;
                }
            });
        }
        for v in 0..s.nv {
            let (c, p, r) = (
                acc(ll, v),
                out_at(s, "out", ll, v),
                at(&format_ident!("q"), v * s.lanes),
            );
            let stage = if s.spec.reduction == Reduction::Max {
                s.out_stride().call("clamp", quote!(#p, #c, #r, #stride))
            } else {
                s.out_stride()
                    .call("average", quote!(#p, #c, count, #r, #stride))
            };
            col.push(quote!(#stage;));
        }
        out.push(if_stored(mode, ll, quote!(#(#col)*)));
    }
    out
}

/// The requantization of a multiply-and-sum tile, channel vector by
/// channel vector: the vector's rows staged once (`A::stage`, or
/// `A::add_stage` with the ADD's rows), then each column's output
/// (`A::requantize_narrow` in a narrow tile).
fn requantize_columns(s: &Shape, mode: Mode, columns: usize) -> Vec<TokenStream> {
    if pairs(s) {
        return requantize_pairs(s, mode, columns);
    }
    let stride = lit(geometry::out_padded(&s.spec));
    let mut out = Vec::new();
    for v in 0..s.nv {
        let (st, r) = (
            format_ident!("st{}", v),
            at(&format_ident!("q"), v * s.lanes),
        );
        out.push(if s.spec.residual {
            quote!(let #st = A::add_stage(#r, #stride);)
        } else {
            quote!(let #st = A::stage(#r, #stride);)
        });
        for ll in 0..columns {
            let (c, p) = (acc(ll, v), out_at(s, "out", ll, v));
            let call = if s.spec.residual {
                let skip = out_at(s, "res", ll, v);
                s.out_stride()
                    .call("requantize_add_staged", quote!(#p, #c, #skip, #st))
            } else if mode == Mode::Narrow {
                s.out_stride()
                    .call("requantize_narrow", quote!(#p, #c, #st))
            } else {
                s.out_stride()
                    .call("requantize_staged", quote!(#p, #c, #st))
            };
            out.push(if_stored(mode, ll, quote!(#call;)));
        }
    }
    out
}

/// True if STORE requantizes the tile's columns two at a time
/// (`Dot::requantize_pair`): a plain (not residual) layer of at most half
/// a vector of output channels, in one vector of `CB` lanes, so that the
/// two pixels' real lanes fill one vector. VWW 0.25's 8-channel stem and
/// first depthwise layer on AVX-512.
fn pairs(s: &Shape) -> bool {
    s.int8() && !s.spec.residual && s.nv == 1 && s.lanes == CB && 2 * s.spec.out_channels() <= CB
}

/// [`requantize_columns`] of a [`pairs`] layer: columns `2j` and `2j + 1`
/// through one `requantize_pair` where the target stores the output
/// `LANES` lanes wide (`OUT_W`; else two `requantize_staged_px`), an odd
/// last column alone. An edge tile stores only its `t.w` columns.
fn requantize_pairs(s: &Shape, mode: Mode, columns: usize) -> Vec<TokenStream> {
    let stride = lit(geometry::out_padded(&s.spec));
    let st = format_ident!("st0");
    let single = |ll: usize| {
        let (c, p) = (acc(ll, 0), out_at(s, "out", ll, 0));
        let call = s
            .out_stride()
            .call("requantize_staged", quote!(#p, #c, #st));
        quote!(#call;)
    };
    let mut out = vec![quote!(let #st = A::stage(q, #stride);)];
    for ll in (0..columns).step_by(2) {
        if ll + 1 == columns {
            out.push(if_stored(mode, ll, single(ll)));
            continue;
        }
        let (ca, cb) = (acc(ll, 0), acc(ll + 1, 0));
        let (pa, pb) = (out_at(s, "out", ll, 0), out_at(s, "out", ll + 1, 0));
        let (a, b) = (single(ll), single(ll + 1));
        let pair = quote! {
            if OUT_W == A::LANES {
                A::requantize_pair(#pa, #pb, #ca, #cb, #st);
            } else {
                #a
                #b
            }
        };
        out.push(if mode == Mode::Edge {
            let next = lit(ll + 1);
            if_stored(mode, ll, quote!(if #next < t.w { #pair } else { #a }))
        } else {
            pair
        });
    }
    out
}

/// The taps a border tile skipped, added back from their correction rows
/// (`small_ir::quant::row::CORRECTION`): the packer took every tap's
/// `(zp_in + offset) * Σ w` from the bias, and a skipped tap read no
/// input, so the sum is `Σ (x - zp_in) * w` over the taps inside. A tap
/// `(x, y)` of output column `ll` was skipped if its filter row is outside
/// `x0..x1` or (edge, narrow) its window column outside `lo..hi`.
fn border_correction(s: &Shape, mode: Mode, columns: usize) -> TokenStream {
    if mode != Mode::Full && s.spec.fh * s.spec.fw > PER_COLUMN_TAPS {
        return per_column_correction(s, mode, columns);
    }
    let (fh, fw, stride) = (
        lit(s.spec.fh),
        lit(s.spec.fw),
        lit(geometry::out_padded(&s.spec)),
    );
    let first_row = lit(small_ir::quant::row::CORRECTION);
    let cols = (0..columns).map(|ll| {
        let skipped = if mode == Mode::Full {
            quote!(!row_in)
        } else {
            let first = lit(ll * s.spec.sw);
            quote!(!(row_in && t.lo <= #first + y && #first + y < t.hi))
        };
        let adds = correction_adds(s, ll);
        quote! { if #skipped { #adds } }
    });
    let any = if mode == Mode::Full {
        quote!(t.x0 != 0 || t.x1 != #fh)
    } else {
        quote!(true)
    };
    quote! {
        if #any {
            let corr = q.wrapping_add(#first_row * #stride);
            for x in 0..#fh {
                let row_in = t.x0 <= x && x < t.x1;
                for y in 0..#fw {
                    let cp = corr.wrapping_add((x * #fw + y) * #stride);
                    #(#cols)*
                }
            }
        }
    }
}

/// Filter taps above which an edge or narrow tile's border correction
/// visits only each column's skipped taps ([`per_column_correction`])
/// instead of testing every tap of every column. At 3x3 the unrolled tests
/// compile to compact straight-line code and the per-column form spilled
/// (ResNet-8 int8's `Conv16` edge kernel: 4061 instructions against 1849,
/// its 3x3 layers 4-18 % slower); at DS-CNN's 10x4 stem, 40 taps x 8
/// columns of tests per tile, the per-column form took the layer from
/// 13.5 to 10.4 µs (Ice Lake VM, avx512, minimum of 5 runs).
const PER_COLUMN_TAPS: usize = 9;

/// [`border_correction`] of an edge or narrow tile, column by column.
fn per_column_correction(s: &Shape, mode: Mode, columns: usize) -> TokenStream {
    let (fh, stride) = (lit(s.spec.fh), lit(geometry::out_padded(&s.spec)));
    let first_row = lit(small_ir::quant::row::CORRECTION);
    let cols = (0..columns).map(|ll| column_correction(s, mode, ll));
    quote! {
        let corr = q.wrapping_add(#first_row * #stride);
        let rows_out = t.x0 != 0 || t.x1 != #fh;
        #(#cols)*
    }
}

/// Adds the correction row at `cp` (one skipped tap) to output column
/// `ll`'s accumulators.
fn correction_adds(s: &Shape, ll: usize) -> TokenStream {
    let adds = (0..s.nv).map(|v| {
        let (c, p) = (acc(ll, v), at(&format_ident!("cp"), v * s.lanes));
        quote!(#c = A::add(#c, A::load(#p));)
    });
    quote!(#(#adds)*)
}

/// [`border_correction`] of output column `ll` of an edge or narrow tile:
/// its window's columns
/// `y` inside the input are `ylo..yhi`, so the taps skipped are every row
/// of the columns outside, then the rows outside `x0..x1` of the columns
/// inside. Only those taps are visited: testing every tap of every column
/// cost as many compare-and-branches as the edge kernel's own guards.
fn column_correction(s: &Shape, mode: Mode, ll: usize) -> TokenStream {
    let add = correction_adds(s, ll);
    let (fh, fw, stride) = (
        lit(s.spec.fh),
        lit(s.spec.fw),
        lit(geometry::out_padded(&s.spec)),
    );
    let (lo, hi) = match ll * s.spec.sw {
        0 => (quote!(t.lo), quote!(t.hi)),
        first => {
            let first = lit(first);
            (
                quote!(t.lo.saturating_sub(#first)),
                quote!(t.hi.saturating_sub(#first)),
            )
        }
    };
    let tap = quote! {
        let cp = corr.wrapping_add((x * #fw + y) * #stride);
        #add
    };
    // `x0 <= x1` and `lo <= hi` (the Tile's bounds): no tap twice.
    let body = quote! {
        let ylo = #lo.min(#fw);
        let yhi = #hi.min(#fw).max(ylo);
        if ylo > 0 || yhi < #fw {
            for y in 0..#fw {
                if ylo <= y && y < yhi {
                    continue;
                }
                for x in 0..#fh {
                    #tap
                }
            }
        }
        if rows_out {
            for x in 0..#fh {
                if t.x0 <= x && x < t.x1 {
                    continue;
                }
                for y in ylo..yhi {
                    #tap
                }
            }
        }
    };
    // A column the tile does not store needs no correction.
    if_stored(mode, ll, quote!({ #body }))
}

/// `let scale = 1 / (valid taps of output column ll)`: TensorFlow's
/// average pool counts only the positions inside the input.
fn avg_scale(s: &Shape, ll: usize, guarded: bool) -> TokenStream {
    let fw = lit(s.spec.fw);
    if !guarded {
        return quote!(let scale = A::splat(1.0 / (rows * #fw as f32)););
    }
    let (first, end) = (lit(ll * s.spec.sw), lit(ll * s.spec.sw + s.spec.fw));
    quote! {
        let cols = t.hi.min(#end).saturating_sub(t.lo.max(#first)) as f32;
        let scale = A::splat(1.0 / (rows * cols));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A depthwise `i8` kernel of several one-lane vectors on an arch whose
    /// dot product sums 4 lanes (Cortex-M4) reads each channel's weight
    /// where the packer (`small_core::pack`: `dot = 1` for channelwise
    /// layers) writes it. It once scaled the channel by the dot width,
    /// which only a tile of several vectors shows.
    #[test]
    fn depthwise_weights_are_where_the_packer_puts_them() {
        let spec = LayerSpec {
            dtype: Dtype::I8,
            ..LayerSpec::new(3, 3, 1, 1, 16)
        };
        assert_eq!(spec.kind(), KernelKind::Channelwise);
        let m = arch_defs::cortex_m4::MACHINE;
        let b = Blocking {
            vectors: 4,
            ..small_ir::blocking::derive("cortex_m4", &m, &spec)
        };
        let s = Shape::new(&spec, &m, &b);
        for tap in 0..spec.fh * spec.fw {
            for v in 0..s.nv {
                let packed = geometry::tiles_at(&spec, s.tc(), 1, 0, 0, tap, 0, v * s.lanes);
                assert_eq!(w_at(&s, tap, 0, v), packed, "tap {tap}, vector {v}");
            }
        }
    }
}
