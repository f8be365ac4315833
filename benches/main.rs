//! `small-bench`: times layers against this machine's measured FMA peak.
//!
//! `cargo run --release -p small-bench` measures each available arch's
//! single-core FMA peak, then times the SMaLL paper's layer set at
//! 48x48x16 (median and minimum of >= 10 runs over >= 1 s after a 0.2 s
//! warm-up) on every arch, printing GFLOP/s, % of that arch's peak and the
//! blocking chosen. The full case list of the `perf` issue grows here.

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

fn main() -> Result<(), Error> {
    let (h, w, c) = (48, 48, 16);
    let input: Vec<f32> = (0..h * w * c)
        .map(|i| ((i * 5 % 11) as f32 - 5.0) / 5.0)
        .collect();
    let x = Blocked::from_nhwc(h, w, c, &input)?;
    let px = (h * w) as f64;
    println!("layers at {h}x{w}x{c}, stride 1 SAME unless noted; one thread");
    println!(
        "{:<16} {:<10} {:>10} {:>10} {:>9} {:>8}   blocking",
        "case", "arch", "median us", "min us", "GFLOP/s", "% peak"
    );
    for arch in small_core::arch::available() {
        let peak = small_core::probe::fma_peak_gflops(arch).unwrap_or(f64::NAN);
        println!("-- {}: measured FMA peak {peak:.1} GFLOP/s", arch.name());
        let l = Conv3x3::with_arch(arch, &weights(Conv3x3::WEIGHTS_LEN), None)?;
        let mut y = l.alloc_output(&x)?;
        let t = time(|| l.forward(&x, &mut y))?;
        report(
            "conv 3x3",
            arch,
            peak,
            2.0 * px * 16.0 * 16.0 * 9.0,
            t,
            l.blocking(),
        );
        let l = Conv1x1::with_arch(arch, &weights(Conv1x1::WEIGHTS_LEN), None)?;
        let t = time(|| l.forward(&x, &mut y))?;
        report(
            "conv 1x1",
            arch,
            peak,
            2.0 * px * 16.0 * 16.0,
            t,
            l.blocking(),
        );
        let l = Depthwise::with_arch(arch, &weights(Depthwise::WEIGHTS_LEN), None)?;
        let t = time(|| l.forward(&x, &mut y))?;
        report(
            "depthwise 3x3",
            arch,
            peak,
            2.0 * px * 16.0 * 9.0,
            t,
            l.blocking(),
        );
        let l = MaxPool::with_arch(arch)?;
        let mut p = l.alloc_output(&x)?;
        let t = time(|| l.forward(&x, &mut p))?;
        report(
            "max pool 2x2/2",
            arch,
            peak,
            px / 4.0 * 16.0 * 4.0,
            t,
            l.blocking(),
        );
        let l = Relu::with_arch(arch)?;
        let t = time(|| l.forward(&x, &mut y))?;
        report("relu", arch, peak, px * 16.0, t, l.blocking());
    }
    Ok(())
}
