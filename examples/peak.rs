//! This machine's single-core FMA peak per arch, the ceiling the main job
//! (`% of FMA peak`) and the bench (its table and roofline) quote speed
//! against. Not part of the library: a measurement fixture shared by the
//! two programs that report against it.
//!
//! The loop is generated per registered arch by `small_macros::fma_probe!`,
//! with the arch's own `Simd::fma` and target features, and as many
//! independent chains as its `Machine` numbers need to hide the FMA
//! latency ([`fma_chains`]), so a new arch gets its probe by registration
//! alone. Each chain is `acc = acc * a + b`: it runs through the
//! multiplicand, so no part of the FMA is loop-invariant (with
//! `acc + a * b` and constant `a * b` a compiler may hoist the multiply
//! and time adds). The rate is the best of many short runs ([`best_rate`]):
//! on a loaded 2-core machine a few long runs can all include preemption.
//! A portable arch (the reference) has no probe: it is scalar code for the
//! target's baseline ISA, which on x86-64 has no FMA, so it has no FMA
//! ceiling.

use small_core::Arch;
use std::time::Instant;

small_macros::fma_probe!();

/// The best rate of `run(reps)`, which does `reps` repetitions and
/// returns the work they did: `reps` grows until one run takes `min_run`
/// seconds, then runs repeat for `total` seconds (5 runs at least). The
/// best of many short runs keeps preemption (a loaded 2-core machine) and
/// clock ramps out of the result.
pub fn best_rate(min_run: f64, total: f64, mut run: impl FnMut(u64) -> f64) -> f64 {
    let mut reps = 1u64;
    loop {
        let t = Instant::now();
        run(reps);
        if t.elapsed().as_secs_f64() >= min_run || reps >= 1 << 40 {
            break;
        }
        reps *= 2;
    }
    let mut best = 0.0f64;
    let start = Instant::now();
    let mut n = 0;
    while n < 5 || start.elapsed().as_secs_f64() < total {
        let t = Instant::now();
        let work = run(reps);
        best = best.max(work / t.elapsed().as_secs_f64());
        n += 1;
    }
    best
}

/// Measured single-core FMA peak of `arch` in GFLOP/s (an FMA is 2
/// FLOPs): [`fma_chains`] independent chains with the arch's own
/// `Simd::fma`, the best of many ~0.1 ms runs over `total` seconds.
/// `None` if the arch cannot run here or has no FMA ceiling (the
/// reference).
pub fn fma_peak(arch: Arch, total: f64) -> Option<f64> {
    fma_run(arch, 1)?;
    let run = |iters: u64| -> f64 {
        let (v, flops) = fma_run(arch, iters).unwrap_or_default();
        std::hint::black_box(v);
        flops as f64 / 1e9
    };
    Some(best_rate(1e-4, total, run))
}
