//! small-rs on a Cortex-M4F, bare metal: one MLPerf Tiny network, or the
//! kernel sweep's small networks (f32), or the int8 test graphs of
//! `tests/data/tflite` (`sweep,int8`), chosen by a Cargo feature, run once on
//! the `cortex_m4` kernels, their weights packed at build time and read
//! straight from flash, their activations in one static arena sized by
//! `model!` at compile time. No allocator.
//!
//! Output per network, over semihosting: the case, the output tensor in
//! its blocked layout as `f32` bit patterns (`y <first index> <hex>...`,
//! so the host can compare exactly), the class or reconstruction error,
//! each layer's tile (`O_wb x TC`) and the stack high-water mark. The
//! exit status is QEMU's: failure if any step returns an error.
//! `mark_start` and `mark_stop` bracket the inference for the
//! instruction-counting QEMU plugin.

#![no_std]
#![no_main]

use core::fmt;
use core::hint::black_box;
use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprint, hprintln};
use panic_semihosting as _;
use small_core::Arch;

#[cfg(not(all(feature = "sweep", feature = "int8")))]
use small_examples::models;

mod stack;

/// Byte data with the alignment of `f32`, so that it can be viewed as one.
#[repr(C, align(4))]
struct Aligned<B: ?Sized>(B);

/// The packed weights, the NHWC input (little-endian `f32`) and the
/// description the build script wrote for network `$name` (the int8
/// sweep embeds its files itself).
#[cfg(not(all(feature = "sweep", feature = "int8")))]
macro_rules! embedded {
    ($name:literal) => {{
        static WEIGHTS: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(
            env!("OUT_DIR"),
            "/",
            $name,
            ".weights"
        )));
        static INPUT: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(
            env!("OUT_DIR"),
            "/",
            $name,
            ".input"
        )));
        (
            WEIGHTS,
            INPUT,
            include_str!(concat!(env!("OUT_DIR"), "/", $name, ".case")),
        )
    }};
}

/// What can go wrong.
enum Fail {
    Core(small_core::Error),
    #[cfg_attr(all(feature = "sweep", feature = "int8"), allow(dead_code))]
    Embedded(&'static str),
    #[cfg_attr(not(all(feature = "sweep", feature = "int8")), allow(dead_code))]
    Short(&'static str),
}

impl From<small_core::Error> for Fail {
    fn from(e: small_core::Error) -> Self {
        Fail::Core(e)
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fail::Core(e) => write!(f, "{e}"),
            Fail::Embedded(what) => write!(f, "embedded {what} is not a whole, aligned f32 array"),
            Fail::Short(what) => write!(f, "embedded {what} is shorter than the program's"),
        }
    }
}

/// Marks the start of the inference for the instruction counter.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn mark_start() {
    // An opaque value: the call cannot be removed, nor the two folded.
    black_box(1u32);
}

/// Marks the end of the inference for the instruction counter.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn mark_stop() {
    black_box(2u32);
}

// ANCHOR: main
#[entry]
fn main() -> ! {
    // cortex-m-rt makes this a `&'static mut` owned by `main` alone.
    static mut ARENA: Aligned<[Elem; ARENA_LEN]> = Aligned([ZERO; ARENA_LEN]);
    let code = match run(&mut ARENA.0) {
        Ok(()) => {
            hprintln!("ok");
            debug::EXIT_SUCCESS
        }
        Err(e) => {
            hprintln!("error: {}", e);
            debug::EXIT_FAILURE
        }
    };
    debug::exit(code);
    // Only reached without a semihosting host.
    loop {
        cortex_m::asm::wfi();
    }
}
// ANCHOR_END: main

/// The arena's element type: `i8` in an int8 image, else `f32`.
#[cfg(feature = "int8")]
type Elem = i8;
#[cfg(feature = "int8")]
const ZERO: i8 = 0;
#[cfg(not(feature = "int8"))]
type Elem = f32;
#[cfg(not(feature = "int8"))]
const ZERO: f32 = 0.0;

#[cfg(not(all(feature = "sweep", feature = "int8")))]
fn floats(bytes: &'static Aligned<[u8]>, what: &'static str) -> Result<&'static [f32], Fail> {
    bytemuck::try_cast_slice(&bytes.0).map_err(|_| Fail::Embedded(what))
}

// ANCHOR: run
/// Runs network `$net` once on its embedded weights and input and prints
/// the output, `$summary` of it, each layer's tile and the memory it took.
#[cfg(not(feature = "int8"))]
macro_rules! run_net {
    ($net:ty, $name:literal, $arena:expr, $summary:ident) => {{
        let (weights, input, case) = embedded!($name);
        hprintln!("small-rs firmware: {}", case);
        let weights = floats(weights, "weights")?;
        let input = floats(input, "input")?;
        let net = <$net>::from_packed(Arch::CortexM4, weights)?;
        let arena = &mut $arena[..<$net>::ARENA];
        <$net>::input(arena)?.fill_from_nhwc(input)?;

        let painted = stack::paint();
        mark_start();
        net.forward(arena)?;
        mark_stop();
        let stack_bytes = stack::used(painted);
        // ANCHOR_END: run

        let y = <$net>::output(arena)?;
        print_blocked(None, y.as_slice());
        $summary(input, &y.as_slice()[..y.c()]);
        for (layer, b) in <$net>::LAYERS.iter().zip(net.blockings()) {
            // A concatenation copies: no blocking.
            if let Some(b) = b {
                hprintln!("blocking {} {}x{}", layer.name, b.o_wb, b.tc);
            }
        }
        hprintln!(
            "memory: weights {} B (flash), arena {} B, stack high-water {} B",
            weights.len() * 4,
            <$net>::ARENA * 4,
            stack_bytes
        );
    }};
}

/// Runs the int8 network `$net` once on its embedded words and `i8`
/// input and prints its NHWC output (`q <first index> <values>...`),
/// each layer's tile and the memory it took: [`run_net`] for int8.
#[cfg(all(feature = "int8", not(feature = "sweep")))]
macro_rules! run_i8 {
    ($net:ty, $name:literal, $arena:expr) => {{
        let (weights, input, case) = embedded!($name);
        hprintln!("small-rs firmware: {}", case);
        let weights = floats(weights, "weights")?;
        // Every byte pattern is an `i8`: the view cannot fail.
        let input: &[i8] = bytemuck::cast_slice(&input.0);
        let net = <$net>::from_packed(Arch::CortexM4, weights)?;
        let arena = &mut $arena[..<$net>::ARENA];
        <$net>::input(arena)?.fill_from_nhwc(input)?;

        let painted = stack::paint();
        mark_start();
        net.forward(arena)?;
        mark_stop();
        let stack_bytes = stack::used(painted);

        let mut y = [0i8; <$net>::DIMS[<$net>::OUTPUT].elements()];
        print_i8::<$net>(&net, arena, &mut y, weights.len() * 4, stack_bytes)?;
    }};
}

/// An int8 program's NHWC output (`q <first index> <values>...`, through
/// `nhwc`, its size), each layer's tile and the memory it took.
#[cfg(feature = "int8")]
fn print_i8<N: small_core::model::Model<Elem = i8>>(
    net: &N,
    arena: &[i8],
    nhwc: &mut [i8],
    weight_bytes: usize,
    stack_bytes: usize,
) -> Result<(), Fail> {
    N::output(arena)?.write_nhwc(nhwc)?;
    for (i, chunk) in nhwc.chunks(16).enumerate() {
        hprint!("q {}", i * 16);
        for v in chunk {
            hprint!(" {}", v);
        }
        hprintln!();
    }
    for (layer, b) in N::LAYERS.iter().zip(net.blockings()) {
        if let Some(b) = b {
            hprintln!("blocking {} {}x{}", layer.name, b.o_wb, b.tc);
        }
    }
    hprintln!(
        "memory: weights {} B (flash), arena {} B, stack high-water {} B",
        weight_bytes,
        N::ARENA,
        stack_bytes
    );
    Ok(())
}

#[cfg(all(feature = "dscnn", feature = "int8"))]
const ARENA_LEN: usize = models::dscnn::int8::DsCnn::ARENA;
#[cfg(all(feature = "dscnn", feature = "int8"))]
fn run(arena: &mut [i8]) -> Result<(), Fail> {
    run_i8!(models::dscnn::int8::DsCnn, "ds-cnn", arena);
    Ok(())
}

#[cfg(all(feature = "dscnn", not(feature = "int8")))]
const ARENA_LEN: usize = models::dscnn::DsCnn::ARENA;
#[cfg(all(feature = "dscnn", not(feature = "int8")))]
fn run(arena: &mut [f32]) -> Result<(), Fail> {
    run_net!(models::dscnn::DsCnn, "ds-cnn", arena, class);
    Ok(())
}

#[cfg(all(feature = "ad", feature = "int8"))]
const ARENA_LEN: usize = models::ad::int8::Autoencoder::ARENA;
#[cfg(all(feature = "ad", feature = "int8"))]
fn run(arena: &mut [i8]) -> Result<(), Fail> {
    run_i8!(models::ad::int8::Autoencoder, "ad", arena);
    Ok(())
}

#[cfg(all(feature = "ad", not(feature = "int8")))]
const ARENA_LEN: usize = models::ad::Autoencoder::ARENA;
#[cfg(all(feature = "ad", not(feature = "int8")))]
fn run(arena: &mut [f32]) -> Result<(), Fail> {
    run_net!(models::ad::Autoencoder, "ad", arena, mse);
    Ok(())
}

#[cfg(all(feature = "resnet8", feature = "int8"))]
const ARENA_LEN: usize = models::resnet8::int8::Resnet8::ARENA;
#[cfg(all(feature = "resnet8", feature = "int8"))]
fn run(arena: &mut [i8]) -> Result<(), Fail> {
    run_i8!(models::resnet8::int8::Resnet8, "resnet8", arena);
    Ok(())
}

#[cfg(all(feature = "resnet8", not(feature = "int8")))]
const ARENA_LEN: usize = models::resnet8::Resnet8::ARENA;
#[cfg(all(feature = "resnet8", not(feature = "int8")))]
fn run(arena: &mut [f32]) -> Result<(), Fail> {
    run_net!(models::resnet8::Resnet8, "resnet8", arena, class);
    Ok(())
}

#[cfg(all(feature = "vww", feature = "int8"))]
const ARENA_LEN: usize = models::vww::int8::Vww::ARENA;
#[cfg(all(feature = "vww", feature = "int8"))]
fn run(arena: &mut [i8]) -> Result<(), Fail> {
    run_i8!(models::vww::int8::Vww, "vww_0.25", arena);
    Ok(())
}

#[cfg(all(feature = "vww", not(feature = "int8")))]
const ARENA_LEN: usize = models::vww::Vww::ARENA;
#[cfg(all(feature = "vww", not(feature = "int8")))]
fn run(arena: &mut [f32]) -> Result<(), Fail> {
    run_net!(models::vww::Vww, "vww_0.25", arena, class);
    Ok(())
}

/// The int8 sweep's programs: `small_examples::firmware::INT8_GRAPHS`,
/// generated from their files at compile time.
#[cfg(all(feature = "sweep", feature = "int8"))]
mod graphs {
    small_core::tflite_model!(pub EveryOp = "../../tests/data/tflite/every_op_int8.tflite");
    small_core::tflite_model!(pub Pad = "../../tests/data/tflite/pad_int8.tflite");
    small_core::tflite_model!(pub LogisticMid = "../../tests/data/tflite/logistic_mid_int8.tflite");
    small_core::tflite_model!(pub LogisticHead = "../../tests/data/tflite/logistic_head_int8.tflite");
    small_core::tflite_model!(pub Mean = "../../tests/data/tflite/mean_int8.tflite");
    small_core::tflite_model!(pub MeanKeepdims = "../../tests/data/tflite/mean_keepdims_int8.tflite");
    small_core::tflite_model!(pub Random01 = "../../tests/data/tflite/random_01.tflite");
    small_core::tflite_model!(pub Random03 = "../../tests/data/tflite/random_03.tflite");
    small_core::tflite_model!(pub Random05 = "../../tests/data/tflite/random_05.tflite");
    small_core::tflite_model!(pub Random07 = "../../tests/data/tflite/random_07.tflite");
    small_core::tflite_model!(pub Random09 = "../../tests/data/tflite/random_09.tflite");
    small_core::tflite_model!(pub Random11 = "../../tests/data/tflite/random_11.tflite");
    small_core::tflite_model!(pub Random13 = "../../tests/data/tflite/random_13.tflite");
    small_core::tflite_model!(pub Random15 = "../../tests/data/tflite/random_15.tflite");
    small_core::tflite_model!(pub Random17 = "../../tests/data/tflite/random_17.tflite");
    small_core::tflite_model!(pub Random19 = "../../tests/data/tflite/random_19.tflite");
    small_core::tflite_model!(pub Random21 = "../../tests/data/tflite/random_21.tflite");
    small_core::tflite_model!(pub Random23 = "../../tests/data/tflite/random_23.tflite");
}

/// Calls `$m!(Program, "file stem", "file name")` for every int8 graph.
#[cfg(all(feature = "sweep", feature = "int8"))]
macro_rules! each_graph {
    ($m:ident $(, $arg:expr)?) => {
        $m!(graphs::EveryOp, "every_op_int8", "every_op_int8.tflite" $(, $arg)?);
        $m!(graphs::Pad, "pad_int8", "pad_int8.tflite" $(, $arg)?);
        $m!(graphs::LogisticMid, "logistic_mid_int8", "logistic_mid_int8.tflite" $(, $arg)?);
        $m!(graphs::LogisticHead, "logistic_head_int8", "logistic_head_int8.tflite" $(, $arg)?);
        $m!(graphs::Mean, "mean_int8", "mean_int8.tflite" $(, $arg)?);
        $m!(graphs::MeanKeepdims, "mean_keepdims_int8", "mean_keepdims_int8.tflite" $(, $arg)?);
        $m!(graphs::Random01, "random_01", "random_01.tflite" $(, $arg)?);
        $m!(graphs::Random03, "random_03", "random_03.tflite" $(, $arg)?);
        $m!(graphs::Random05, "random_05", "random_05.tflite" $(, $arg)?);
        $m!(graphs::Random07, "random_07", "random_07.tflite" $(, $arg)?);
        $m!(graphs::Random09, "random_09", "random_09.tflite" $(, $arg)?);
        $m!(graphs::Random11, "random_11", "random_11.tflite" $(, $arg)?);
        $m!(graphs::Random13, "random_13", "random_13.tflite" $(, $arg)?);
        $m!(graphs::Random15, "random_15", "random_15.tflite" $(, $arg)?);
        $m!(graphs::Random17, "random_17", "random_17.tflite" $(, $arg)?);
        $m!(graphs::Random19, "random_19", "random_19.tflite" $(, $arg)?);
        $m!(graphs::Random21, "random_21", "random_21.tflite" $(, $arg)?);
        $m!(graphs::Random23, "random_23", "random_23.tflite" $(, $arg)?);
    };
}

#[cfg(all(feature = "sweep", feature = "int8"))]
const ARENA_LEN: usize = {
    let mut most = 0;
    macro_rules! arena {
        ($net:ty, $stem:literal, $file:literal) => {
            if <$net>::ARENA > most {
                most = <$net>::ARENA;
            }
        };
    }
    each_graph!(arena);
    most
};

/// Runs the int8 graph `$net` once on its first saved input
/// (`<stem>.in` holds LiteRT's inputs one after another) and prints its
/// output as [`run_i8`] does.
#[cfg(all(feature = "sweep", feature = "int8"))]
macro_rules! run_graph {
    ($net:ty, $stem:literal, $file:literal, $arena:expr) => {{
        static WEIGHTS: [f32; <$net>::packed_len(Arch::CortexM4)] =
            small_core::packed_weights!($net, CortexM4, $file);
        static INPUTS: &[u8] = include_bytes!(concat!("../../../tests/data/tflite/", $stem, ".in"));
        hprintln!("small-rs firmware: {} int8 graph on cortex_m4", $stem);
        let net = <$net>::from_packed(Arch::CortexM4, &WEIGHTS)?;
        let arena = &mut $arena[..<$net>::ARENA];
        let input = INPUTS
            .get(..<$net>::DIMS[0].elements())
            .ok_or(Fail::Short("input"))?;
        <$net>::input(arena)?.fill_from_nhwc(bytemuck::cast_slice(input))?;
        let painted = stack::paint();
        net.forward(arena)?;
        let stack_bytes = stack::used(painted);
        let mut y = [0i8; <$net>::DIMS[<$net>::OUTPUT].elements()];
        print_i8::<$net>(&net, arena, &mut y, WEIGHTS.len() * 4, stack_bytes)?;
    }};
}

#[cfg(all(feature = "sweep", feature = "int8"))]
fn run(arena: &mut [i8]) -> Result<(), Fail> {
    // The markers (which the stage's instruction counter looks up) bracket
    // the whole sweep.
    mark_start();
    each_graph!(run_graph, arena);
    mark_stop();
    Ok(())
}

#[cfg(all(feature = "sweep", not(feature = "int8")))]
const ARENA_LEN: usize = max(
    max(
        models::sweep::SweepConv::ARENA,
        models::sweep::SweepChannelwise::ARENA,
    ),
    max(
        models::sweep::SweepResidual::ARENA,
        models::sweep::SweepGroupFc::ARENA,
    ),
);
/// Runs `$net` again one layer at a time and prints each layer's output
/// (`t<layer> <first index> <hex>...`) before a later layer can reuse its
/// space: the sweep checks every layer, not only the last.
#[cfg(all(feature = "sweep", not(feature = "int8")))]
macro_rules! each_layer {
    ($net:ty, $name:literal, $arena:expr) => {{
        let (weights, input, _) = embedded!($name);
        let net = <$net>::from_packed(Arch::CortexM4, floats(weights, "weights")?)?;
        let arena = &mut $arena[..<$net>::ARENA];
        <$net>::input(arena)?.fill_from_nhwc(floats(input, "input")?)?;
        for (i, layer) in <$net>::LAYERS.iter().enumerate() {
            net.forward_layer(i, arena)?;
            print_blocked(Some(i), <$net>::tensor(arena, layer.step.y)?.as_slice());
        }
    }};
}

#[cfg(all(feature = "sweep", not(feature = "int8")))]
fn run(arena: &mut [f32]) -> Result<(), Fail> {
    run_net!(models::sweep::SweepConv, "sweep-conv", arena, nothing);
    each_layer!(models::sweep::SweepConv, "sweep-conv", arena);
    run_net!(
        models::sweep::SweepChannelwise,
        "sweep-channelwise",
        arena,
        nothing
    );
    each_layer!(models::sweep::SweepChannelwise, "sweep-channelwise", arena);
    run_net!(
        models::sweep::SweepResidual,
        "sweep-residual",
        arena,
        nothing
    );
    each_layer!(models::sweep::SweepResidual, "sweep-residual", arena);
    run_net!(
        models::sweep::SweepGroupFc,
        "sweep-group-fc",
        arena,
        nothing
    );
    each_layer!(models::sweep::SweepGroupFc, "sweep-group-fc", arena);
    Ok(())
}

#[cfg(all(feature = "sweep", not(feature = "int8")))]
const fn max(a: usize, b: usize) -> usize {
    if a > b { a } else { b }
}

/// A tensor in its blocked layout (padding lanes included, which must be
/// zero), as `f32` bit patterns, 8 a line, each line `y <first index>` for
/// the output or `t<layer> <first index>` for a layer's.
#[cfg(not(feature = "int8"))]
fn print_blocked(layer: Option<usize>, y: &[f32]) {
    for (i, chunk) in y.chunks(8).enumerate() {
        match layer {
            Some(l) => hprint!("t{} {}", l, i * 8),
            None => hprint!("y {}", i * 8),
        }
        for v in chunk {
            hprint!(" {:08x}", v.to_bits());
        }
        hprintln!();
    }
}

/// No summary (the sweep's layers).
#[cfg(all(feature = "sweep", not(feature = "int8")))]
fn nothing(_input: &[f32], _out: &[f32]) {}

/// The reconstruction's mean squared error (the anomaly score of one window).
#[cfg(all(feature = "ad", not(feature = "int8")))]
fn mse(input: &[f32], out: &[f32]) {
    let mse = input
        .iter()
        .zip(out)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f32>()
        / out.len() as f32;
    hprintln!("reconstruction mse {}", mse);
}

/// The class: the largest logit (softmax keeps the order).
#[cfg(all(
    any(feature = "dscnn", feature = "resnet8", feature = "vww"),
    not(feature = "int8")
))]
fn class(_input: &[f32], out: &[f32]) {
    let mut best = 0;
    for (i, v) in out.iter().enumerate() {
        if *v > out[best] {
            best = i;
        }
    }
    hprintln!("class {} (logit {})", best, out[best]);
}
