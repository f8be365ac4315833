//! The bench cases: the SMaLL paper's layer set (compile-time channels and
//! filters, run-time height and width) and the MLPerf Tiny networks, built
//! for one arch into a closure that runs one inference.
//!
//! Shared by the bench binary (`main.rs`) and the criterion benches
//! (`criterion.rs`).

use small_bench_layers::vww1::Vww1;
use small_core::Filter;
use small_core::ir::cost::Tile;
use small_core::load::Generated;
use small_core::{Arch, Blocked, Blocking, Dims, Error, LayerSpec};
use small_examples::models::Network;
use small_examples::models::{ad::Autoencoder, dscnn::DsCnn, resnet8::Resnet8, vww::Vww};
use std::error::Error as StdError;

pub use small_bench_layers::CHANNELS;
use small_bench_layers::{c16, c512};

/// Input height, width and channels of a layer case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Height.
    pub h: usize,
    /// Width.
    pub w: usize,
    /// Channels: one of [`CHANNELS`].
    pub c: usize,
}

impl Shape {
    /// `48x48x16`.
    pub fn tag(&self) -> String {
        format!("{}x{}x{}", self.h, self.w, self.c)
    }
}

/// The paper's shapes: 48x48x16 and 6x6x512.
pub const DEFAULT_SHAPES: [Shape; 2] = [
    Shape {
        h: 48,
        w: 48,
        c: 16,
    },
    Shape { h: 6, w: 6, c: 512 },
];

/// One layer of the set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Conv 3x3, C -> C, stride 1, SAME, with bias.
    Conv3x3,
    /// Conv 1x1, C -> C, with bias.
    Conv1x1,
    /// Depthwise 3x3, stride 1, SAME, with bias.
    Dw3x3,
    /// Max pool 2x2, stride 2, VALID.
    MaxPool,
    /// ReLU.
    Relu,
}

impl Op {
    /// The set, in table order.
    pub const ALL: [Op; 5] = [Op::Conv3x3, Op::Conv1x1, Op::Dw3x3, Op::MaxPool, Op::Relu];

    /// Case name prefix, as `benches/peers/peers.py` matches it.
    pub fn label(self) -> &'static str {
        match self {
            Op::Conv3x3 => "conv 3x3",
            Op::Conv1x1 => "conv 1x1",
            Op::Dw3x3 => "dw 3x3",
            Op::MaxPool => "maxpool",
            Op::Relu => "relu",
        }
    }
}

/// One MLPerf Tiny network (`small_examples::models`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// ResNet-8 (image classification, 32x32x3).
    Resnet8,
    /// MobileNetV1 0.25 (visual wake words, 96x96x3).
    Vww,
    /// MobileNetV1 1.0 on the VWW input.
    Vww1,
    /// DS-CNN (keyword spotting, 49x10x1).
    DsCnn,
    /// The anomaly-detection autoencoder (640 inputs).
    Ad,
}

impl Model {
    /// The networks, in table order.
    pub const ALL: [Model; 5] = [
        Model::Resnet8,
        Model::Vww,
        Model::Vww1,
        Model::DsCnn,
        Model::Ad,
    ];

    /// Case name: the network's `Network::NAME` (`"vww_0.25"`).
    pub fn name(self) -> &'static str {
        match self {
            Model::Resnet8 => Resnet8::NAME,
            Model::Vww => Vww::NAME,
            Model::Vww1 => Vww1::NAME,
            Model::DsCnn => DsCnn::NAME,
            Model::Ad => Autoencoder::NAME,
        }
    }
}

/// What a case runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One layer of the set on an input of `shape`.
    Layer(Op, Shape),
    /// One inference of a network (NHWC input in, output out).
    Model(Model),
}

/// A case before it is built for an arch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseDef {
    /// `conv 3x3 48x48x16`, `resnet8`, ...
    pub name: String,
    /// What it runs.
    pub kind: Kind,
}

impl CaseDef {
    /// `"layer"` or `"model"`.
    pub fn group(&self) -> &'static str {
        match self.kind {
            Kind::Layer(..) => "layer",
            Kind::Model(_) => "model",
        }
    }
}

/// The layer set at each of `shapes`, shape by shape.
pub fn layer_defs(shapes: &[Shape]) -> Vec<CaseDef> {
    shapes
        .iter()
        .flat_map(|&s| {
            Op::ALL.into_iter().map(move |op| CaseDef {
                name: format!("{} {}", op.label(), s.tag()),
                kind: Kind::Layer(op, s),
            })
        })
        .collect()
}

/// The five networks.
pub fn model_defs() -> Vec<CaseDef> {
    Model::ALL
        .into_iter()
        .map(|m| CaseDef {
            name: m.name().to_string(),
            kind: Kind::Model(m),
        })
        .collect()
}

/// A single layer as the cost model (`small_core::ir::cost`) sees it:
/// spec, tile, input and output `(h, w)`.
pub type Modelled = (LayerSpec, Tile, (usize, usize), (usize, usize));

/// A case built for one arch: its work, its compulsory traffic and a
/// closure running it once.
pub struct Case {
    /// Case name.
    pub name: String,
    /// The arch it runs on.
    pub arch: Arch,
    /// Multiply-accumulates per run (comparisons for max pool and ReLU).
    pub macs: u64,
    /// True if the work is FMAs (convolutions, networks): then FLOPs are
    /// `2 * macs` and a fraction of the FMA peak means something. Pooling
    /// and ReLU count one FLOP per comparison.
    pub fma: bool,
    /// Compulsory traffic: input + output + weights and biases, bytes.
    pub bytes: u64,
    /// The register blocking (one layer), or a summary (networks).
    pub blocking: String,
    /// Output tile width and channels of a single layer.
    pub tile: Option<(usize, usize)>,
    /// What the cost model needs of a single layer.
    pub layer: Option<Modelled>,
    run: Box<dyn FnMut() -> Result<(), Error>>,
}

impl Case {
    /// Floating-point operations per run.
    pub fn flops(&self) -> f64 {
        if self.fma {
            2.0 * self.macs as f64
        } else {
            self.macs as f64
        }
    }

    /// Arithmetic intensity: FLOPs per compulsory byte.
    pub fn intensity(&self) -> f64 {
        self.flops() / self.bytes as f64
    }

    /// Runs the case once.
    pub fn run(&mut self) -> Result<(), Error> {
        (self.run)()
    }
}

/// `O_wb=8 TC=16 (8 acc, 10 regs)`.
fn describe(b: &Blocking) -> String {
    format!(
        "O_wb={} TC={} ({} acc, {} regs)",
        b.o_wb, b.tc, b.accumulators, b.registers
    )
}

/// `9 layers, O_wb x TC: 8x16 (5), 4x16 (3), 1x16 (1)`: the tiles of a
/// network's layers, most used first.
fn summarize(bs: &[&Blocking]) -> String {
    let mut tiles: Vec<((usize, usize), usize)> = Vec::new();
    for b in bs {
        match tiles.iter_mut().find(|(t, _)| *t == (b.o_wb, b.tc)) {
            Some((_, n)) => *n += 1,
            None => tiles.push(((b.o_wb, b.tc), 1)),
        }
    }
    tiles.sort_by_key(|t| std::cmp::Reverse(t.1));
    let list: Vec<String> = tiles
        .iter()
        .map(|((o, t), n)| format!("{o}x{t} ({n})"))
        .collect();
    format!("{} layers, O_wb x TC: {}", bs.len(), list.join(", "))
}

/// A copy of `t` in a buffer that starts on a 64-byte boundary
/// ([`small_core::Aligned`]). Misaligned by 16 bytes, every AVX-512 load
/// of a channelwise layer splits a cache line: depthwise 48x48x16 took 4.7
/// instead of 3.4 us (Zen 5), depending only on where earlier allocations
/// left the heap.
fn aligned(t: Blocked<Vec<f32>>) -> Result<Blocked<small_core::Aligned<f32>>, small_core::Error> {
    Blocked::from_buffer(t.dims(), small_core::Aligned::from_slice(t.as_slice())?)
}

/// Builds a layer case: `$ty` from the layer set on a `$shape` input.
macro_rules! layer_case {
    ($ty:ty, $name:expr, $arch:expr, $shape:expr) => {{
        let (name, arch, s): (String, Arch, Shape) = ($name, $arch, $shape);
        let spec = <$ty>::SPEC;
        let input = Generated::values(17, s.h * s.w * s.c, 1.0);
        let dims = Dims {
            c: s.c,
            h: s.h,
            w: s.w,
        };
        let x = Blocked::from_nhwc(dims, &input)?;
        let weights = Generated::values(3, spec.weights_len(), 0.1);
        let bias = spec
            .has_weights()
            .then(|| Generated::values(5, spec.out_channels(), 0.1));
        let layer = <$ty>::from_weights(arch, Filter::ohwi(&weights), bias.as_deref())?;
        let y = layer.alloc_output(&x)?;
        // The kernels read and write whole 64-byte lines when the buffers
        // start on one; wherever the allocator puts a Vec, the case runs on
        // such a copy, so its time does not depend on allocation order.
        let (x, mut y) = (aligned(x)?, aligned(y)?);
        let out = y.dims();
        let traffic = x.c() * x.h() * x.w() + out.elements() + weights.len();
        let b = layer.blocking();
        Case {
            name,
            arch,
            macs: small_core::model::macs(&spec, out) as u64,
            fma: spec.has_weights(),
            bytes: 4 * (traffic + bias.map_or(0, |b| b.len())) as u64,
            blocking: describe(b),
            tile: Some((b.o_wb, b.tc)),
            layer: Some((
                spec,
                Tile::of(b, &arch.params().machine, &spec),
                (s.h, s.w),
                (out.h, out.w),
            )),
            run: Box::new(move || layer.forward(&x, &mut y)),
        }
    }};
}

/// The layer `op` with `c` channels on an `h x w` input, for `arch`.
fn build_layer(name: String, arch: Arch, op: Op, s: Shape) -> Result<Case, Box<dyn StdError>> {
    macro_rules! pick {
        ($m:ident) => {
            match op {
                Op::Conv3x3 => layer_case!($m::Conv3x3, name, arch, s),
                Op::Conv1x1 => layer_case!($m::Conv1x1, name, arch, s),
                Op::Dw3x3 => layer_case!($m::Dw3x3, name, arch, s),
                Op::MaxPool => layer_case!($m::MaxPool, name, arch, s),
                Op::Relu => layer_case!($m::Relu, name, arch, s),
            }
        };
    }
    Ok(match s.c {
        16 => pick!(c16),
        512 => pick!(c512),
        c => {
            return Err(format!(
                "{name}: the layer set is compiled for {CHANNELS:?} channels, not {c} \
                 (channel counts and filters are compile-time: add a layer_set! line in benches/cases.rs)"
            )
            .into());
        }
    })
}

/// The network `N` with `Generated { seed: 1 }` weights, for `arch`.
fn build_model<N: Network + 'static>(arch: Arch) -> Result<Case, Box<dyn StdError>> {
    let net = N::load(&Generated { seed: 1 }, arch)?;
    let input = Generated::values(17, N::DIMS[0].elements(), 1.0);
    let mut out = vec![0.0f32; N::DIMS[N::OUTPUT].c];
    let mut arena = small_core::Aligned::filled(N::ARENA, 0.0f32)?;
    let traffic = input.len() + out.len() + N::PARAMETERS;
    Ok(Case {
        name: N::NAME.to_string(),
        arch,
        macs: N::MACS as u64,
        fma: true,
        bytes: 4 * traffic as u64,
        blocking: summarize(&net.blockings().flatten().collect::<Vec<_>>()),
        tile: None,
        layer: None,
        run: Box::new(move || net.infer(&mut arena, &input, &mut out)),
    })
}

/// Builds `def` for `arch` (packs the weights, allocates the tensors).
pub fn build(def: &CaseDef, arch: Arch) -> Result<Case, Box<dyn StdError>> {
    let case = match def.kind {
        Kind::Layer(op, s) => build_layer(def.name.clone(), arch, op, s),
        Kind::Model(Model::Resnet8) => build_model::<Resnet8>(arch),
        Kind::Model(Model::Vww) => build_model::<Vww>(arch),
        Kind::Model(Model::Vww1) => build_model::<Vww1>(arch),
        Kind::Model(Model::DsCnn) => build_model::<DsCnn>(arch),
        Kind::Model(Model::Ad) => build_model::<Autoencoder>(arch),
    };
    case.map_err(|e| format!("{} on {}: {e}", def.name, arch.name()).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_peer_script() {
        let names: Vec<String> = layer_defs(&DEFAULT_SHAPES)
            .into_iter()
            .chain(model_defs())
            .map(|d| d.name)
            .collect();
        for want in [
            "conv 3x3 48x48x16",
            "conv 1x1 48x48x16",
            "dw 3x3 48x48x16",
            "maxpool 48x48x16",
            "relu 48x48x16",
            "conv 3x3 6x6x512",
            "relu 6x6x512",
            "resnet8",
            "vww_0.25",
            "vww_1.0",
            "ds-cnn",
            "ad",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} missing");
        }
        assert_eq!(names.len(), 15);
    }

    #[test]
    fn layer_work_and_traffic() {
        let s = Shape { h: 8, w: 6, c: 16 };
        let arch = Arch::Reference;
        let mut conv = build_layer("c".into(), arch, Op::Conv3x3, s).unwrap();
        assert_eq!(conv.macs, 8 * 6 * 16 * 16 * 9);
        let traffic = 2 * 8 * 6 * 16 + 16 * 9 * 16 + 16;
        assert_eq!(conv.bytes, 4 * traffic as u64);
        assert_eq!(conv.flops(), 2.0 * conv.macs as f64);
        conv.run().unwrap();
        let pool = build_layer("p".into(), arch, Op::MaxPool, s).unwrap();
        assert_eq!(pool.macs, 4 * 3 * 16 * 4);
        assert_eq!(pool.bytes, 4 * (8 * 6 * 16 + 4 * 3 * 16));
        assert!(!pool.fma);
        let bad = Shape { h: 8, w: 8, c: 24 };
        let e = build_layer("x".into(), arch, Op::Relu, bad).err().unwrap();
        assert!(e.to_string().contains("compile-time"), "{e}");
    }

    /// On built-in weights, every layer of VWW at width 1.0 within the
    /// bound of the reference (`small_examples::check::check_builtin`), on
    /// the arch this CPU runs.
    #[test]
    fn vww1_matches_the_reference() {
        small_examples::check::check_builtin::<Vww1>(small_core::arch::selected().unwrap());
    }

    #[test]
    fn models_build_and_run() {
        for def in model_defs() {
            let mut case = build(&def, small_core::arch::selected().unwrap()).unwrap();
            assert!(case.macs > 0 && case.bytes > 0, "{}", def.name);
            case.run().unwrap();
        }
    }
}
