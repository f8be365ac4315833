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
use small_core::arch_defs::Simd;
use std::time::{Duration, Instant};

small_macros::fma_probe!();

/// The best rate of `run(reps)`, which does `reps` repetitions and
/// returns the work they did: `reps` grows until one run takes `min_run`
/// seconds, then runs repeat for `total` seconds (5 runs at least). The
/// best of many short runs keeps preemption (a loaded 2-core machine) and
/// clock ramps out of the result.
pub fn best_rate(min_run: f64, total: f64, run: impl FnMut(u64) -> f64) -> f64 {
    run_rates(min_run, total, run)
        .into_iter()
        .fold(0.0, f64::max)
}

/// The rate of every run of [`best_rate`]'s loop, in run order.
pub fn run_rates(min_run: f64, total: f64, mut run: impl FnMut(u64) -> f64) -> Vec<f64> {
    let mut reps = 1u64;
    loop {
        let t = Instant::now();
        run(reps);
        if t.elapsed().as_secs_f64() >= min_run || reps >= 1 << 40 {
            break;
        }
        reps *= 2;
    }
    let mut rates = Vec::new();
    let start = Instant::now();
    while rates.len() < 5 || start.elapsed().as_secs_f64() < total {
        let t = Instant::now();
        let work = run(reps);
        rates.push(work / t.elapsed().as_secs_f64());
    }
    rates
}

/// How steady one core's speed is: a rate (FMA GFLOP/s, L1 GB/s) in
/// ~0.1 ms runs over a fraction of a second, as its best, median and
/// 10th percentile. On a shared VM the low percentile shows the
/// stretches the host slows this core (on an Intel Xeon VM of the
/// Emerald Rapids class, 2026-12-03, a burst of FMAs on L1-resident
/// weights flipped between 6.7 and 9.5 µs from one second to the next,
/// while register-only FMAs kept their peak); times from such a run
/// compare only as ratios of builds alternated in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Fastest run: the peak.
    pub best: f64,
    /// Median run.
    pub median: f64,
    /// 10th percentile run (slow).
    pub low: f64,
}

/// [`Spread`] of `arch`'s FMA rate over `total` seconds; `None` as for
/// [`fma_peak`].
pub fn fma_spread(arch: Arch, total: f64) -> Option<Spread> {
    fma_run(arch, 1)?;
    let rates = run_rates(1e-4, total, |iters| {
        let (v, flops) = fma_run(arch, iters).unwrap_or_default();
        std::hint::black_box(v);
        flops as f64 / 1e9
    });
    Some(Spread::of(rates))
}

/// Each thread's [`fma_spread`] while `threads` threads (this one among
/// them) run the probe at the same time, over the same `total` seconds:
/// what the machine gives every core at once, the ceiling of a layer's
/// speed-up from more threads. On a VM the host decides it: on a 2-vCPU
/// Intel Xeon VM (Emerald Rapids class, 2026-12-03) the two medians
/// summed to between 1.0x and 2.0x one core's alone from one minute to
/// the next. `None` for fewer than two threads, as for [`fma_peak`], or
/// if a thread cannot start.
pub fn fma_together(arch: Arch, threads: usize, total: f64) -> Option<Vec<Spread>> {
    fma_run(arch, 1)?;
    at_once(threads, || fma_spread(arch, total))
}

/// [`l1_read_spread`] on `threads` threads at once, as [`fma_together`]:
/// whether the cores' caches keep their speed while the others load too.
pub fn l1_read_together(threads: usize, total: f64) -> Option<Vec<Spread>> {
    at_once(threads, || Some(l1_read_spread(total)))
}

/// [`l2_read_spread`] on `threads` threads at once, as [`fma_together`].
pub fn l2_read_together(threads: usize, total: f64) -> Option<Vec<Spread>> {
    at_once(threads, || Some(l2_read_spread(total)))
}

/// Each thread's FMA rate ([`fma_together`]) and L1 and L2 read
/// bandwidth while `threads` threads run the probes at once for `total`
/// seconds each, summed and against one core's alone measured just
/// before, e.g. "FMA 91 + 84 GFLOP/s = 0.98x one core (179), L1 read
/// 330 + 328 GB/s = 1.97x one core (334), L2 read ..."; "-" with one
/// thread (and for a probe that gives nothing: the reference arch's
/// FMA).
pub fn at_once_report(arch: Arch, threads: usize, total: f64) -> String {
    if threads < 2 {
        return "-".into();
    }
    let show = |alone: Option<Spread>, each: Option<Vec<Spread>>, unit: &str| match (alone, each) {
        (Some(alone), Some(each)) => {
            let sum: f64 = each.iter().map(|s| s.median).sum();
            let parts: Vec<String> = each.iter().map(|s| format!("{:.0}", s.median)).collect();
            format!(
                "{} {unit} = {:.2}x one core ({:.0})",
                parts.join(" + "),
                sum / alone.median,
                alone.median
            )
        }
        _ => "-".into(),
    };
    let fma = show(
        fma_spread(arch, total),
        fma_together(arch, threads, total),
        "GFLOP/s",
    );
    let l1 = show(
        Some(l1_read_spread(total)),
        l1_read_together(threads, total),
        "GB/s",
    );
    let l2 = show(
        Some(l2_read_spread(total)),
        l2_read_together(threads, total),
        "GB/s",
    );
    format!("FMA {fma}, L1 read {l1}, L2 read {l2}")
}

/// `probe` on `threads` threads (this one among them) started together
/// once all are running; this thread's result first. `None` for fewer
/// than two threads, if a thread cannot start, or if a probe gives none.
fn at_once(threads: usize, probe: impl Fn() -> Option<Spread> + Sync) -> Option<Vec<Spread>> {
    use std::sync::atomic::{AtomicBool, Ordering};
    if threads < 2 {
        return None;
    }
    // A thread that cannot start leaves the others unstarted instead of
    // waiting for it.
    let go = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let started: Vec<_> = (1..threads)
            .map(|_| {
                std::thread::Builder::new().spawn_scoped(s, || {
                    while !go.load(Ordering::Acquire) {
                        if stop.load(Ordering::Acquire) {
                            return None;
                        }
                        std::hint::spin_loop();
                    }
                    probe()
                })
            })
            .collect();
        if started.iter().any(|t| t.is_err()) {
            stop.store(true, Ordering::Release);
            return None;
        }
        go.store(true, Ordering::Release);
        let mine = probe();
        let others = started
            .into_iter()
            .flatten()
            .map(|t| t.join().ok().flatten());
        core::iter::once(mine).chain(others).collect()
    })
}

/// [`Spread`] of the L1 read bandwidth (GB/s; [`bandwidths`]' loop over
/// its L1 buffer) over `total` seconds. A host that shares this core's
/// caches with other work (an SMT sibling) slows the loads of every
/// kernel while leaving [`fma_spread`]'s register-only FMAs at speed.
pub fn l1_read_spread(total: f64) -> Spread {
    read_spread(0, total)
}

/// [`l1_read_spread`] of the L2 buffer of [`bandwidth_levels`].
pub fn l2_read_spread(total: f64) -> Spread {
    read_spread(1, total)
}

/// [`Spread`] of the read bandwidth of level `level` of
/// [`bandwidth_levels`] over `total` seconds.
fn read_spread(level: usize, total: f64) -> Spread {
    let buf = read_buffer(bandwidth_levels()[level].1);
    Spread::of(run_rates(1e-4, total, read_passes(read_arch(), &buf)))
}

impl Spread {
    /// The spread of `rates` (at least one).
    fn of(mut rates: Vec<f64>) -> Spread {
        rates.sort_unstable_by(f64::total_cmp);
        let at = |q: f64| rates[((rates.len() - 1) as f64 * q) as usize];
        Spread {
            best: at(1.0),
            median: at(0.5),
            low: at(0.1),
        }
    }
}

/// Median time of one call of `f`: after `warm_up` of calls, over at
/// least `min_runs` calls and `min_time`. The main job's per-network and
/// per-layer times.
pub fn median_time(
    f: impl FnMut(),
    warm_up: Duration,
    min_time: Duration,
    min_runs: usize,
) -> Duration {
    let runs = call_times(f, warm_up, min_time, min_runs);
    runs[runs.len() / 2]
}

/// The calls of [`median_time`], sorted. Their 10th percentile is `f`
/// while the host leaves the core alone, the machine that [`fma_peak`]
/// and [`bandwidths`] (each the best of many short runs) describe: the
/// cost model's probes ([`crate::calibrate`]).
pub fn call_times(
    mut f: impl FnMut(),
    warm_up: Duration,
    min_time: Duration,
    min_runs: usize,
) -> Vec<Duration> {
    let warm = Instant::now();
    while warm.elapsed() < warm_up {
        f();
    }
    let mut runs = Vec::new();
    let start = Instant::now();
    while runs.len() < min_runs.max(1) || start.elapsed() < min_time {
        let t = Instant::now();
        f();
        runs.push(t.elapsed());
    }
    runs.sort_unstable();
    runs
}

/// Measured single-core FMA peak of `arch` in GFLOP/s (an FMA is 2
/// FLOPs): [`fma_chains`] independent chains with the arch's own
/// `Simd::fma`, the best of many ~0.1 ms runs over `total` seconds.
/// `None` if the arch cannot run here or has no FMA ceiling (the
/// reference).
pub fn fma_peak(arch: Arch, total: f64) -> Option<f64> {
    fma_spread(arch, total).map(|s| s.best)
}

/// One level of the memory hierarchy as the bench measures it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bandwidth {
    /// `L1`, `L2` or `DRAM`.
    pub level: &'static str,
    /// Size of the buffer read over and over.
    pub bytes: usize,
    /// Best read bandwidth, GB/s (1e9 bytes).
    pub gbps: f64,
}

/// Buffer sizes: well inside L1 (>= 32 KiB on every x86 and Arm core of
/// interest), inside L2 (>= 1 MiB), and at least 4x the last-level cache
/// (64 MiB at least) for DRAM.
pub fn bandwidth_levels() -> [(&'static str, usize); 3] {
    let llc = last_level_cache_bytes().unwrap_or(0);
    [
        ("L1", 16 << 10),
        ("L2", 512 << 10),
        ("DRAM", (64usize << 20).max(4 * llc)),
    ]
}

/// cpu0's caches (sysfs): `(level, type, bytes)`, e.g. `(2, "Unified",
/// 2 MiB)`; empty where sysfs has none.
fn caches() -> Vec<(u32, String, usize)> {
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let path = e.ok()?.path();
        let read = |f: &str| std::fs::read_to_string(path.join(f)).ok();
        Some((
            read("level")?.trim().parse().ok()?,
            read("type")?.trim().to_string(),
            parse_size(read("size")?.trim())?,
        ))
    })
    .collect()
}

/// The largest cache of cpu0, in bytes.
fn last_level_cache_bytes() -> Option<usize> {
    caches().into_iter().map(|c| c.2).max()
}

/// `32768K`, `2M`, `512` -> bytes.
pub fn parse_size(s: &str) -> Option<usize> {
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    Some(num.trim().parse::<usize>().ok()? * mult)
}

/// The SIMD the read loop uses: the widest vector arch available.
pub fn read_arch() -> Arch {
    small_core::arch::available()
        .find(|a| a.params().machine.lanes > 1)
        .unwrap_or(Arch::Reference)
}

/// Read bandwidth of each level (see [`bandwidth_levels`]) with
/// [`read_arch`]'s loads: the best of many runs of a read-and-sum loop
/// (runs of >= 0.1 ms, for `total` seconds per level).
pub fn bandwidths(total: f64) -> Vec<Bandwidth> {
    let arch = read_arch();
    bandwidth_levels()
        .into_iter()
        .map(|(level, bytes)| {
            let buf = read_buffer(bytes);
            Bandwidth {
                level,
                bytes: buf.len() * 4,
                gbps: best_rate(1e-4, total, read_passes(arch, &buf)),
            }
        })
        .collect()
}

/// At least `bytes` of values for the read loop (a multiple of
/// [`STEP`]), their first on a cache line ([`small_core::Aligned`]). From a `Vec`, 16 bytes into a line where
/// `malloc` put it, every 64-byte load spanned two lines: the L1
/// bandwidth read 156 GB/s in one probe and 340 in the next of the same
/// run (Intel Xeon VM, Emerald Rapids class, 2026-12-03), and the cost
/// model calibrated on whichever it got.
fn read_buffer(bytes: usize) -> small_core::Aligned<f32> {
    let n = (bytes / 4).div_ceil(STEP) * STEP;
    let values: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    small_core::Aligned::from_slice(&values).expect("a read buffer of a few MiB")
}

/// A run for [`run_rates`]: `passes` reads of `buf` with `arch`'s
/// loads, returning the GB they read.
fn read_passes(arch: Arch, buf: &[f32]) -> impl FnMut(u64) -> f64 + '_ {
    move |passes| {
        std::hint::black_box(read_sum(arch, buf, passes as usize));
        (buf.len() * 4) as f64 * passes as f64 / 1e9
    }
}

/// `f32`s the read loop consumes per iteration: 8 vectors of the widest
/// registered arch, so every buffer size is a multiple of it.
pub const STEP: usize = 8 * widest();

/// The most lanes of any registered arch.
const fn widest() -> usize {
    let (archs, mut i, mut lanes) = (small_core::arch_defs::ARCHS, 0, 1);
    while i < archs.len() {
        if archs[i].machine.lanes > lanes {
            lanes = archs[i].machine.lanes;
        }
        i += 1;
    }
    lanes
}

small_macros::simd_dispatch!();

/// Sum of `passes` reads of `buf` (its length a multiple of [`STEP`]) with
/// `arch`'s vector loads and adds; the reference arch if `arch` is not
/// available here.
pub fn read_sum(arch: Arch, buf: &[f32], passes: usize) -> f32 {
    assert_eq!(
        buf.len() % STEP,
        0,
        "read_sum: length not a multiple of STEP"
    );
    let sum = Sum {
        buf: std::hint::black_box(buf),
        passes,
    };
    simd_dispatch(arch, sum)
        .or_else(|| simd_dispatch(Arch::Reference, sum))
        .expect("the reference arch runs everywhere")
}

/// `passes` sums of `buf` into 8 independent vector accumulators (enough
/// to keep two loads per cycle busy behind a 3-cycle add).
#[derive(Clone, Copy)]
struct Sum<'a> {
    buf: &'a [f32],
    passes: usize,
}

impl SimdFn for Sum<'_> {
    type Output = f32;

    #[inline(always)]
    unsafe fn run<A: Simd<Elem = f32>>(self) -> f32 {
        let (buf, l) = (self.buf, A::LANES);
        // 8 vectors of any arch divide STEP (lane counts divide CB).
        assert_eq!(buf.len() % (8 * l), 0);
        let p = buf.as_ptr();
        // SAFETY: the caller guarantees `A` runs here; every load reads
        // `p[i + k * l .. i + (k + 1) * l]` with `i + 8 * l <= buf.len()`.
        unsafe {
            let (mut a0, mut a1, mut a2, mut a3) = (A::zero(), A::zero(), A::zero(), A::zero());
            let (mut a4, mut a5, mut a6, mut a7) = (A::zero(), A::zero(), A::zero(), A::zero());
            for _ in 0..self.passes {
                let mut i = 0;
                while i + 8 * l <= buf.len() {
                    a0 = A::add(a0, A::load(p.add(i)));
                    a1 = A::add(a1, A::load(p.add(i + l)));
                    a2 = A::add(a2, A::load(p.add(i + 2 * l)));
                    a3 = A::add(a3, A::load(p.add(i + 3 * l)));
                    a4 = A::add(a4, A::load(p.add(i + 4 * l)));
                    a5 = A::add(a5, A::load(p.add(i + 5 * l)));
                    a6 = A::add(a6, A::load(p.add(i + 6 * l)));
                    a7 = A::add(a7, A::load(p.add(i + 7 * l)));
                    i += 8 * l;
                }
            }
            let s = A::add(
                A::add(A::add(a0, a1), A::add(a2, a3)),
                A::add(A::add(a4, a5), A::add(a6, a7)),
            );
            let mut out = [0.0f32; 64];
            A::store(out.as_mut_ptr(), s);
            out[..l].iter().sum()
        }
    }
}

/// Size of cpu0's data or unified cache of `level` (1, 2, ...), bytes.
pub fn cache_bytes(level: u32) -> Option<usize> {
    caches()
        .into_iter()
        .find(|(l, kind, _)| *l == level && matches!(kind.as_str(), "Data" | "Unified"))
        .map(|c| c.2)
}

/// Median time for one cache line to go from this thread to another
/// thread and back (two threads spinning on one atomic, `rounds` round
/// trips, the median of batches): the price of each line a fork, a join
/// or a layer's input moves between cores. On a 2-vCPU KVM guest (AMD
/// EPYC Zen 1, 2026-11-30) it flipped between about 70 ns and 470 ns
/// within minutes as the host placed the two vCPUs (near, then on
/// different core complexes), and VWW 0.25 `f32` on two threads between
/// 277 and 380 µs with it; so the main job and the bench print it beside
/// every two-thread figure. `None` with fewer than two usable cores
/// (`threads::available`: the two threads would take turns), if the
/// second thread cannot start, or if it stops answering for 0.1 s.
pub fn cross_core_round_trip(rounds: u32) -> Option<Duration> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    if small_core::threads::available() < 2 {
        return None;
    }
    let rounds = rounds.max(1);
    let flag = Arc::new(AtomicU32::new(0));
    let theirs = Arc::clone(&flag);
    let limit = Duration::from_millis(100);
    // Waits until `flag` reads `want`; false after `limit` without it.
    let wait = move |flag: &AtomicU32, want: u32| {
        let start = Instant::now();
        while flag.load(Ordering::Acquire) != want {
            if start.elapsed() > limit {
                return false;
            }
            std::hint::spin_loop();
        }
        true
    };
    let echo = std::thread::Builder::new()
        .spawn(move || {
            for i in 0..rounds {
                if !wait(&theirs, 2 * i + 1) {
                    return;
                }
                theirs.store(2 * i + 2, Ordering::Release);
            }
        })
        .ok()?;
    // Batches of `BATCH` round trips, timed whole: a clock read per round
    // trip would cost about as much as one on a VM.
    const BATCH: u32 = 100;
    let mut times = Vec::new();
    let mut answered = true;
    let mut i = 0;
    while answered && i < rounds {
        let t = Instant::now();
        let n = BATCH.min(rounds - i);
        for _ in 0..n {
            flag.store(2 * i + 1, Ordering::Release);
            if !wait(&flag, 2 * i + 2) {
                answered = false;
                break;
            }
            i += 1;
        }
        times.push(t.elapsed() / n);
    }
    // The echo thread gives up on its own after `limit` if we stopped.
    echo.join().ok()?;
    if !answered {
        return None;
    }
    times.sort_unstable();
    Some(times[times.len() / 2])
}

/// The cost model's stock calibration (`small_core::ir::cost`, after
/// Ramírez et al.: a model of the data movement and arithmetic,
/// calibrated by a few measurements): cycles of a call outside its tiles,
/// cycles per accumulator of a tile outside its multiply-adds, and the
/// fraction of the load-fed FMA rate the kernels reach, for `f32` and
/// `i8`. What [`rates`] starts from; the main job and the bench replace
/// them by the numbers [`crate::calibrate`] fits to probe layers timed on
/// the running machine. Fitted ([`fit`]; `mlperf_tiny --fit`) to the
/// per-layer times of the four MLPerf Tiny networks on a 2-core Xeon VM
/// with AVX-512 (2026-11-28): median error 8 % (`f32`) and 12 % (`i8`)
/// over those layers in that run. On an AMD EPYC Zen 1 (AVX2, 2026-11-30)
/// the same numbers were 26 % and 18 % off, and the probes' calibration
/// (with the model's one-column rate) 4 % and 10 %: the kernels reach a
/// different share of the peak on each machine.
pub const CALL_CYCLES: f64 = 500.0;

/// See [`CALL_CYCLES`].
pub const TILE_CYCLES: [f64; 2] = [4.0, 12.5];

/// See [`CALL_CYCLES`].
pub const EFFICIENCY: [f64; 2] = [0.87, 0.52];

/// This machine's numbers for the layer cost model
/// (`small_core::ir::cost`): `flops`, the FMA peak of `arch` (FLOP/s,
/// from [`fma_peak`]), the read bandwidths ([`bandwidths`], `seconds` per
/// level), the L1 and L2 sizes, and [`CALL_CYCLES`] at the clock that the
/// peak implies. `None` for an arch without an FMA peak.
pub fn rates(arch: Arch, flops: f64, seconds: f64) -> Option<small_core::ir::cost::Rates> {
    rates_from(arch, flops, &bandwidths(seconds))
}

/// [`rates`] from bandwidths measured already.
pub fn rates_from(arch: Arch, flops: f64, bw: &[Bandwidth]) -> Option<small_core::ir::cost::Rates> {
    let m = arch.params().machine;
    if !flops.is_finite() || m.lanes < 2 {
        return None;
    }
    let hz = flops / (2.0 * (m.lanes * m.fma_per_cycle) as f64);
    let gbps = |level: &str| bw.iter().find(|b| b.level == level).map(|b| b.gbps * 1e9);
    Some(small_core::ir::cost::Rates {
        flops,
        l1: gbps("L1")?,
        l2: gbps("L2")?,
        memory: gbps("DRAM")?,
        l1_bytes: cache_bytes(1).unwrap_or(32 << 10),
        l2_bytes: cache_bytes(2).unwrap_or(1 << 20),
        call: CALL_CYCLES / hz,
        tile: TILE_CYCLES.map(|c| c / hz),
        efficiency: EFFICIENCY,
    })
}

/// Median of `|predicted - measured| / measured` over `(predicted,
/// measured)` pairs: the cost model's error figure (0 for none).
///
/// ```
/// use small_examples::peak::median_relative_error;
/// assert!((median_relative_error([(1.1, 1.0), (0.5, 1.0), (2.0, 2.0)]) - 0.1).abs() < 1e-12);
/// assert_eq!(median_relative_error([]), 0.0);
/// assert!((median_relative_error([(1.0, 2.0), (3.0, 2.0)]) - 0.5).abs() < 1e-12);
/// ```
pub fn median_relative_error(pairs: impl IntoIterator<Item = (f64, f64)>) -> f64 {
    let mut e: Vec<f64> = pairs
        .into_iter()
        .map(|(p, m)| ((p - m) / m).abs())
        .collect();
    if e.is_empty() {
        return 0.0;
    }
    e.sort_unstable_by(f64::total_cmp);
    let k = e.len() / 2;
    if e.len() % 2 == 1 {
        e[k]
    } else {
        (e[k - 1] + e[k]) / 2.0
    }
}

/// A layer call the cost model predicts, with its measured time: what
/// [`fit`] calibrates against.
#[derive(Debug, Clone, Copy)]
pub struct Measured {
    /// The layer.
    pub spec: small_core::LayerSpec,
    /// Its blocking, as the model sees it.
    pub tile: small_core::ir::cost::Tile,
    /// Input and output `(height, width)`.
    pub input: (usize, usize),
    /// See [`Measured::input`].
    pub output: (usize, usize),
    /// Bytes a forward pass of the call's network touches (its weights
    /// come from the level that holds them: `cost::estimate_in`), 0 for a
    /// call repeated alone.
    pub pass_bytes: usize,
    /// Time of one call the model is compared with: its quiet time (the
    /// 10th percentile of the calls timed, see [`call_times`]).
    pub seconds: f64,
}

impl Measured {
    /// The model's estimate of this call with rates `r`, seconds.
    pub fn predicted(&self, r: &small_core::ir::cost::Rates) -> f64 {
        small_core::ir::cost::estimate_in(
            &self.spec,
            &self.tile,
            self.input,
            self.output,
            r,
            self.pass_bytes,
        )
        .seconds
    }
}

/// The calibration [`fit`] finds, in cycles at the clock the FMA peak
/// implies (see [`CALL_CYCLES`]), and its median relative error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// Cycles of a call outside its tiles.
    pub call_cycles: f64,
    /// Cycles per accumulator of a tile outside its multiply-adds.
    pub tile_cycles: f64,
    /// Fraction of the load-fed FMA rate the kernels reach.
    pub efficiency: f64,
    /// Median `|predicted - measured| / measured` with these numbers.
    pub error: f64,
}

impl Fit {
    /// `r` (as [`rates`] made it) with this calibration instead.
    pub fn rates(&self, r: &small_core::ir::cost::Rates) -> small_core::ir::cost::Rates {
        calibrated(r, self.call_cycles, self.tile_cycles, self.efficiency)
    }
}

/// `r` (as [`rates`] made it: its call time is [`CALL_CYCLES`] at the
/// clock) with `call` and `tile` cycles and `efficiency` for both element
/// types.
fn calibrated(
    r: &small_core::ir::cost::Rates,
    call: f64,
    tile: f64,
    efficiency: f64,
) -> small_core::ir::cost::Rates {
    let hz = CALL_CYCLES / r.call;
    small_core::ir::cost::Rates {
        call: call / hz,
        tile: [tile / hz; 2],
        efficiency: [efficiency; 2],
        ..*r
    }
}

/// Fits [`CALL_CYCLES`], [`TILE_CYCLES`] and [`EFFICIENCY`] to `layers`
/// (one element type) by grid search for the least median relative
/// error, the machine's measured peak and bandwidths in `r` kept (`r` as
/// [`rates`] made it: its call time is [`CALL_CYCLES`] at the clock).
/// `None` without layers.
pub fn fit(layers: &[Measured], r: &small_core::ir::cost::Rates) -> Option<Fit> {
    search(layers, r, None, |l, r| {
        median_relative_error(l.iter().map(|l| (l.predicted(r), l.seconds)))
    })
}

/// As [`fit`], for a few probe layers (`crate::calibrate`): the least
/// mean relative error, so that every probe counts (a median of five
/// ignores two), with the call's cycles fixed to `call` if given.
pub fn calibrate(
    layers: &[Measured],
    r: &small_core::ir::cost::Rates,
    call: Option<f64>,
) -> Option<Fit> {
    search(layers, r, call, |l, r| {
        let sum: f64 = l
            .iter()
            .map(|l| ((l.predicted(r) - l.seconds) / l.seconds).abs())
            .sum();
        sum / l.len() as f64
    })
}

/// The grid search of [`fit`] and [`calibrate`]: the calibration whose
/// `error(layers, rates)` is least.
fn search(
    layers: &[Measured],
    r: &small_core::ir::cost::Rates,
    call: Option<f64>,
    error: impl Fn(&[Measured], &small_core::ir::cost::Rates) -> f64,
) -> Option<Fit> {
    if layers.is_empty() || r.call <= 0.0 {
        return None;
    }
    let calls: Vec<f64> = match call {
        Some(c) => vec![c],
        None => (2..=30).map(|k| 50.0 * k as f64).collect(),
    };
    let mut best: Option<Fit> = None;
    for &call in &calls {
        for tile in (0..=60).map(|k| 0.5 * k as f64) {
            for efficiency in (10..=100).map(|k| 0.01 * k as f64) {
                let error = error(layers, &calibrated(r, call, tile, efficiency));
                if best.is_none_or(|b| error < b.error) {
                    best = Some(Fit {
                        call_cycles: call,
                        tile_cycles: tile,
                        efficiency,
                        error,
                    });
                }
            }
        }
    }
    best
}
