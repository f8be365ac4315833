//! `small-bench`: times layers against this machine's measured FMA peak.
//!
//! `cargo run --release -p small-bench` measures each available arch's
//! single-core FMA peak, then times the SMaLL paper's layer set (conv 3x3,
//! conv 1x1, depthwise 3x3, max pool 2x2/2, ReLU) at 48x48x16 and 6x6x512
//! (median and minimum of >= 10 runs over >= 1 s after a 0.2 s warm-up) on
//! every arch, printing a table (GFLOP/s, % of that arch's peak, blocking)
//! and then one JSON line per case. The model cases, bandwidth roofline
//! and peer comparison of the `perf` issue grow here.

use small_core::{Arch, Blocked, Blocking, Error, layer};
use std::time::Instant;

#[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same)]
pub struct Conv3x3;

#[layer(fh = 1, fw = 1, fc = 16, k = 16)]
pub struct Conv1x1;

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 16, padding = same)]
pub struct Depthwise;

#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 16, stride = 2, reduction = max)]
pub struct MaxPool;

#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 16, reduction = max, activation = relu)]
pub struct Relu;

#[layer(fh = 3, fw = 3, fc = 512, k = 512, padding = same)]
pub struct Conv3x3Wide;

#[layer(fh = 1, fw = 1, fc = 512, k = 512)]
pub struct Conv1x1Wide;

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 512, padding = same)]
pub struct DepthwiseWide;

#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 512, stride = 2, reduction = max)]
pub struct MaxPoolWide;

#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 512, reduction = max, activation = relu)]
pub struct ReluWide;

/// Median and minimum seconds of `f` after a warm-up of >= 0.2 s, over
/// >= 1 s and >= 10 runs.
fn time(mut f: impl FnMut() -> Result<(), Error>) -> Result<(f64, f64), Error> {
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < 0.2 {
        f()?;
    }
    let mut runs = Vec::new();
    let start = Instant::now();
    while runs.len() < 10 || start.elapsed().as_secs_f64() < 1.0 {
        let t = Instant::now();
        f()?;
        runs.push(t.elapsed().as_secs_f64());
    }
    runs.sort_by(f64::total_cmp);
    Ok((runs[runs.len() / 2], runs[0]))
}

fn weights(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7 % 13) as f32 - 6.0) / 10.0).collect()
}

fn report(case: &str, arch: Arch, peak: f64, flops: f64, (med, min): (f64, f64), b: &Blocking) {
    let gf = flops / med / 1e9;
    JSON.with(|j| {
        j.borrow_mut().push(format!(
            "{{\"case\":\"{case}\",\"arch\":\"{}\",\"median_us\":{:.2},\"min_us\":{:.2},\"gflops\":{gf:.2},\"peak_gflops\":{peak:.1},\"o_wb\":{},\"tc\":{}}}",
            arch.name(),
            med * 1e6,
            min * 1e6,
            b.o_wb,
            b.tc
        ))
    });
    println!(
        "{case:<16} {:<10} {:>10.1} {:>10.1} {:>9.1} {:>7.1}%   O_wb={} TC={} ({} acc, {} regs)",
        arch.name(),
        med * 1e6,
        min * 1e6,
        gf,
        100.0 * gf / peak,
        b.o_wb,
        b.tc,
        b.accumulators,
        b.registers
    );
}

thread_local! {
    static JSON: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Times the paper's five layers at `h x w x 16` (`Small` layers) or
/// `h x w x 512` (`Wide` layers) on `arch`.
macro_rules! layer_set {
    ($tag:expr, $arch:expr, $peak:expr, $h:expr, $w:expr, $c:expr,
     $conv3:ident, $conv1:ident, $dw:ident, $pool:ident, $relu:ident) => {{
        let (arch, peak, h, w, c) = ($arch, $peak, $h, $w, $c);
        let input: Vec<f32> = (0..h * w * c)
            .map(|i| ((i * 5 % 11) as f32 - 5.0) / 5.0)
            .collect();
        let x = Blocked::from_nhwc(h, w, c, &input)?;
        let (px, cf) = ((h * w) as f64, c as f64);
        let l = $conv3::with_arch(arch, &weights($conv3::WEIGHTS_LEN), None)?;
        let mut y = l.alloc_output(&x)?;
        let t = time(|| l.forward(&x, &mut y))?;
        report(
            &format!("conv 3x3 {}", $tag),
            arch,
            peak,
            2.0 * px * cf * cf * 9.0,
            t,
            l.blocking(),
        );
        let l = $conv1::with_arch(arch, &weights($conv1::WEIGHTS_LEN), None)?;
        let t = time(|| l.forward(&x, &mut y))?;
        report(
            &format!("conv 1x1 {}", $tag),
            arch,
            peak,
            2.0 * px * cf * cf,
            t,
            l.blocking(),
        );
        let l = $dw::with_arch(arch, &weights($dw::WEIGHTS_LEN), None)?;
        let t = time(|| l.forward(&x, &mut y))?;
        report(
            &format!("dw 3x3 {}", $tag),
            arch,
            peak,
            2.0 * px * cf * 9.0,
            t,
            l.blocking(),
        );
        let l = $pool::with_arch(arch)?;
        let mut p = l.alloc_output(&x)?;
        let t = time(|| l.forward(&x, &mut p))?;
        report(
            &format!("maxpool {}", $tag),
            arch,
            peak,
            px * cf,
            t,
            l.blocking(),
        );
        let l = $relu::with_arch(arch)?;
        let t = time(|| l.forward(&x, &mut y))?;
        report(
            &format!("relu {}", $tag),
            arch,
            peak,
            px * cf,
            t,
            l.blocking(),
        );
    }};
}

fn main() -> Result<(), Error> {
    println!(
        "the SMaLL paper's layer set at 48x48x16 and 6x6x512, stride 1 SAME (max pool 2x2/2); one thread"
    );
    println!(
        "{:<16} {:<10} {:>10} {:>10} {:>9} {:>8}   blocking",
        "case", "arch", "median us", "min us", "GFLOP/s", "% peak"
    );
    for arch in small_core::arch::available() {
        let peak = small_core::probe::fma_peak_gflops(arch).unwrap_or(f64::NAN);
        println!("-- {}: measured FMA peak {peak:.1} GFLOP/s", arch.name());
        layer_set!(
            "48x48x16", arch, peak, 48, 48, 16, Conv3x3, Conv1x1, Depthwise, MaxPool, Relu
        );
        layer_set!(
            "6x6x512",
            arch,
            peak,
            6,
            6,
            512,
            Conv3x3Wide,
            Conv1x1Wide,
            DepthwiseWide,
            MaxPoolWide,
            ReluWide
        );
    }
    JSON.with(|j| j.borrow().iter().for_each(|l| println!("{l}")));
    Ok(())
}
