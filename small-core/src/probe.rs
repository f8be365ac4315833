//! Measuring this machine's single-core FMA peak per arch, so that speed
//! can be quoted as a fraction of it (`std` only).

use crate::Arch;
use std::time::Instant;

small_macros::fma_probe!();

/// Single-core peak of `arch` in GFLOP/s (an FMA counts as 2), measured
/// with independent FMA chains; the best of several ~20 ms runs. `None`
/// if the arch cannot run here.
pub fn fma_peak_gflops(arch: Arch) -> Option<f64> {
    let mut iters = 1u64 << 16;
    // Grow the run until it takes ~20 ms.
    loop {
        let t = Instant::now();
        std::hint::black_box(fma_chains(arch, iters)?);
        if t.elapsed().as_secs_f64() > 0.02 {
            break;
        }
        iters *= 2;
    }
    let mut best = 0.0f64;
    for _ in 0..5 {
        let t = Instant::now();
        let (v, flops) = fma_chains(arch, iters)?;
        std::hint::black_box(v);
        best = best.max(flops as f64 / t.elapsed().as_secs_f64() / 1e9);
    }
    Some(best)
}
