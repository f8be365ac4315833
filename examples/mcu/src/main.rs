//! small-rs on a Cortex-M4F, bare metal: one MLPerf Tiny network (chosen
//! by a Cargo feature) runs once on the `cortex_m4` kernels, its weights
//! packed at build time and read straight from flash, its activations in
//! one static arena sized by `model!` at compile time. No allocator.
//!
//! Output, over semihosting: the case, the output tensor as `f32` bit
//! patterns (`y <first index> <hex>...`, so the host can compare exactly),
//! the class or reconstruction error, each layer's tile (`O_wb x TC`) and
//! the stack high-water mark. The
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

#[cfg(feature = "ad")]
use small_examples::models::ad::Autoencoder as Net;
#[cfg(feature = "dscnn")]
use small_examples::models::dscnn::DsCnn as Net;
#[cfg(feature = "resnet8")]
use small_examples::models::resnet8::Resnet8 as Net;
#[cfg(feature = "vww")]
use small_examples::models::vww::Vww as Net;

mod stack;

/// Byte data with the alignment of `f32`, so that it can be viewed as one.
#[repr(C, align(4))]
struct Aligned<B: ?Sized>(B);

/// Weights packed for cortex_m4 by the build script (little-endian `f32`).
static WEIGHTS: &Aligned<[u8]> =
    &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/weights.bin")));
/// The NHWC input.
static INPUT: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/input.bin")));
/// Which network, weights and input.
const CASE: &str = include_str!(concat!(env!("OUT_DIR"), "/case.txt"));

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
    static mut ARENA: [f32; Net::ARENA] = [0.0; Net::ARENA];
    let code = match run(ARENA) {
        Ok(()) => debug::EXIT_SUCCESS,
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

fn floats(bytes: &'static Aligned<[u8]>, what: &'static str) -> Result<&'static [f32], Fail> {
    bytemuck::try_cast_slice(&bytes.0).map_err(|_| Fail::Embedded(what))
}

// ANCHOR: run
fn run(arena: &mut [f32]) -> Result<(), Fail> {
    hprintln!("small-rs firmware: {}", CASE);
    let weights = floats(WEIGHTS, "weights")?;
    let input = floats(INPUT, "input")?;
    let net = Net::from_packed(Arch::CortexM4, weights)?;
    Net::input(arena)?.fill_from_nhwc(input)?;

    let painted = stack::paint();
    mark_start();
    net.forward(arena)?;
    mark_stop();
    let stack_bytes = stack::used(painted);
    // ANCHOR_END: run

    let y = Net::output(arena)?;
    let out = &y.as_slice()[..y.c()];
    for (i, chunk) in out.chunks(8).enumerate() {
        hprint!("y {}", i * 8);
        for v in chunk {
            hprint!(" {:08x}", v.to_bits());
        }
        hprintln!();
    }
    summary(input, out);
    for (layer, b) in Net::LAYERS.iter().zip(net.blockings()) {
        hprintln!("blocking {} {}x{}", layer.name, b.o_wb, b.tc);
    }
    hprintln!(
        "memory: weights {} B (flash), arena {} B, stack high-water {} B",
        weights.len() * 4,
        Net::ARENA * 4,
        stack_bytes
    );
    hprintln!("ok");
    Ok(())
}

/// The reconstruction's mean squared error (the anomaly score of one window).
#[cfg(feature = "ad")]
fn summary(input: &[f32], out: &[f32]) {
    let mse = input
        .iter()
        .zip(out)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f32>()
        / out.len() as f32;
    hprintln!("reconstruction mse {}", mse);
}

/// The class: the largest logit (softmax keeps the order).
#[cfg(not(feature = "ad"))]
fn summary(_input: &[f32], out: &[f32]) {
    let mut best = 0;
    for (i, v) in out.iter().enumerate() {
        if *v > out[best] {
            best = i;
        }
    }
    hprintln!("class {} (logit {})", best, out[best]);
}
