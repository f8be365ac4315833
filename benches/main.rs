//! `small-bench`: times layers against this machine's measured FMA peak.
//! (The full case list of the `perf` issue grows here.)

use small_core::{Arch, Blocked, layer};
use std::time::Instant;

#[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same)]
pub struct Conv3x3;

/// Median and minimum seconds of `f` after a warm-up of >= 0.2 s, over
/// >= 1 s and >= 10 runs.
fn time(mut f: impl FnMut()) -> (f64, f64) {
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < 0.2 {
        f();
    }
    let mut runs = Vec::new();
    let start = Instant::now();
    while runs.len() < 10 || start.elapsed().as_secs_f64() < 1.0 {
        let t = Instant::now();
        f();
        runs.push(t.elapsed().as_secs_f64());
    }
    runs.sort_by(f64::total_cmp);
    (runs[runs.len() / 2], runs[0])
}

fn main() -> Result<(), small_core::Error> {
    let (h, w, c) = (48, 48, 16);
    let weights: Vec<f32> = (0..Conv3x3::WEIGHTS_LEN)
        .map(|i| ((i * 7 % 13) as f32 - 6.0) / 10.0)
        .collect();
    let input: Vec<f32> = (0..h * w * c)
        .map(|i| ((i * 5 % 11) as f32 - 5.0) / 5.0)
        .collect();
    let x = Blocked::from_nhwc(h, w, c, &input)?;
    let flops = 2.0 * (h * w * c * 16 * 9) as f64;
    println!("case: conv 3x3 {h}x{w}x{c} -> 16, stride 1, same");
    println!(
        "{:<10} {:>12} {:>10} {:>10} {:>10} {:>8}",
        "arch", "peak GF/s", "median us", "min us", "GFLOP/s", "% peak"
    );
    for arch in small_core::arch::available() {
        let peak = small_core::probe::fma_peak_gflops(arch).unwrap_or(f64::NAN);
        let conv = Conv3x3::with_arch(arch, &weights, None)?;
        let mut y = conv.alloc_output(&x)?;
        let (med, min) = time(|| conv.forward(&x, &mut y).unwrap());
        let gf = flops / med / 1e9;
        println!(
            "{:<10} {:>12.1} {:>10.1} {:>10.1} {:>10.1} {:>7.1}%",
            arch.name(),
            peak,
            med * 1e6,
            min * 1e6,
            gf,
            100.0 * gf / peak
        );
    }
    let _ = Arch::Reference;
    Ok(())
}
