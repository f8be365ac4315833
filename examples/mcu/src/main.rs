//! small-rs on a Cortex-M4F, bare metal: one MLPerf Tiny network, or the
//! kernel sweep's small networks (chosen by a Cargo feature), run once on
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

use small_examples::models;

mod stack;

/// Byte data with the alignment of `f32`, so that it can be viewed as one.
#[repr(C, align(4))]
struct Aligned<B: ?Sized>(B);

/// The packed weights, the NHWC input (little-endian `f32`) and the
/// description the build script wrote for network `$name`.
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
    Embedded(&'static str),
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
#[cfg(feature = "int8")]
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

        const OUT: usize = <$net>::DIMS[<$net>::OUTPUT].elements();
        let mut y = [0i8; OUT];
        <$net>::output(arena)?.write_nhwc(&mut y)?;
        for (i, chunk) in y.chunks(16).enumerate() {
            hprint!("q {}", i * 16);
            for v in chunk {
                hprint!(" {}", v);
            }
            hprintln!();
        }
        for (layer, b) in <$net>::LAYERS.iter().zip(net.blockings()) {
            if let Some(b) = b {
                hprintln!("blocking {} {}x{}", layer.name, b.o_wb, b.tc);
            }
        }
        hprintln!(
            "memory: weights {} B (flash), arena {} B, stack high-water {} B",
            weights.len() * 4,
            <$net>::ARENA,
            stack_bytes
        );
    }};
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

#[cfg(feature = "sweep")]
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
#[cfg(feature = "sweep")]
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

#[cfg(feature = "sweep")]
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

#[cfg(feature = "sweep")]
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
#[cfg(feature = "sweep")]
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
