//! The main job: the four MLPerf Tiny networks on small-rs.
//!
//! ```text
//! cargo run --release --example mlperf_tiny                 # built-in weights, checked against the reference layers
//! cargo run --release --example mlperf_tiny -- --models ../shared/models   # real weights, checked against LiteRT's golden data
//! cargo run --release --example mlperf_tiny -- --per-layer  # time of every layer
//! cargo run --release --example mlperf_tiny -- --latency    # p50/p99/max per call, idle and loaded
//! ```
//!
//! `SMALL_MODELS=DIR` works like `--models DIR`; `SMALL_ARCH` picks the arch.

use small_core::load::tflite;
use small_core::load::{Generated, WeightSource};
use small_core::model::Model;
use small_core::reference::int8;
use small_core::{Aligned, Arch, Dims};
use small_examples::check::{self, Propagation, argmax, first_mismatch, head_bound, max_diff};
use small_examples::golden::{int8_softmax, read_f32, read_i8};
use small_examples::models::{Head, Int8Network, Network, ad, dscnn, resnet8, vww};
use small_examples::peak::{Measured, Spread};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const USAGE: &str = "usage: mlperf_tiny [--models DIR] [--per-layer] [--fit] [--threads N] [--latency] [--load N]
  --models DIR   load the trained .tflite files from DIR (MLPerf Tiny, see ../shared/models/README.md)
                 and check every golden input; also SMALL_MODELS=DIR
  --per-layer    print the time of every layer of every network, and with one thread the
                 cost model's prediction beside it (calibrated on probe layers first); with
                 two threads or more, how each split layer's time divides between the
                 caller, the worker and the fork and join, beside the same parts on one thread
  --fit          with --per-layer and one thread: fit the cost model's calibration to this
                 machine's layer times (small_examples::peak::fit) and print it, with a
                 hold-out check
  --threads N    threads per layer (default: SMALL_THREADS, else every core available)
  --latency      per-call latency percentiles (p50, p99, max over at least 1000 calls) of
                 every network with 1 thread and the default count, on the machine as it
                 is and with --load busy threads beside it
  --load N       busy threads --latency starts for its loaded runs (default: one per core)
  -h, --help     this text
environment: SMALL_ARCH picks the arch (avx512, avx2, neon, cortex_m4, reference),
             SMALL_THREADS the default thread count, SMALL_MODELS the models directory";

struct Options {
    models: Option<PathBuf>,
    per_layer: bool,
    /// `--fit`: refit the cost model's calibration (implies `per_layer`).
    fit: bool,
    /// `--latency`: the busy threads of its loaded runs.
    latency: Option<usize>,
    /// The thread count of the "default" runs.
    threads: usize,
    /// This machine's numbers for the per-layer cost model (with
    /// `--per-layer`): its measured peak and bandwidths with the stock
    /// calibration (what `--fit` refits), and calibrated on the probe
    /// layers (what the tables predict with).
    base_rates: Option<small_core::ir::cost::Rates>,
    /// See [`Options::base_rates`].
    rates: Option<small_core::ir::cost::Rates>,
}

/// What the command line asks for: options, or `--help`.
enum Command {
    Run(Box<Options>),
    Help,
}

fn options() -> Result<Command, String> {
    parse(std::env::args().skip(1))
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Command, String> {
    let mut o = Options {
        models: std::env::var_os("SMALL_MODELS").map(PathBuf::from),
        per_layer: false,
        fit: false,
        base_rates: None,
        rates: None,
        latency: None,
        threads: small_core::threads::default_threads(),
    };
    let mut latency = false;
    let mut load = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--models" => o.models = Some(args.next().ok_or("--models needs a directory")?.into()),
            "--per-layer" => o.per_layer = true,
            "--fit" => (o.per_layer, o.fit) = (true, true),
            "--threads" => {
                let v = args.next().ok_or("--threads needs a count")?;
                let n: usize = v
                    .parse()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or(format!("--threads {v}: expected a count >= 1"))?;
                o.threads = small_core::threads::set_threads(n);
            }
            "--latency" => latency = true,
            "--load" => {
                let v = args.next().ok_or("--load needs a count")?;
                load = Some(
                    v.parse::<usize>()
                        .ok()
                        .filter(|&n| n <= 1024)
                        .ok_or(format!(
                            "--load {v}: expected a count of busy threads, 0 to 1024"
                        ))?,
                );
            }
            "-h" | "--help" => return Ok(Command::Help),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    if latency {
        o.latency = Some(load.unwrap_or_else(small_core::threads::available));
    } else if load.is_some() {
        return Err("--load applies to --latency runs: add --latency".into());
    }
    Ok(Command::Run(Box::new(o)))
}

/// One row of the table.
struct Row {
    name: &'static str,
    /// `f32` or `i8`.
    dtype: &'static str,
    macs: usize,
    median: Duration,
    /// What the thread pool did while `median` was timed.
    pool: small_core::threads::Stats,
    weights_kb: f64,
    packed_kb: f64,
    arena_kb: f64,
    bound_kb: f64,
    check: String,
    ok: bool,
    /// The real sample's result (KWS class, AD score) and whether it passed.
    sample: Option<(String, bool)>,
    /// `--latency`: idle and loaded, 1 thread and the default.
    latency: Vec<Latency>,
    /// `--per-layer`: each layer's cost-model estimate (seconds) and
    /// measured call.
    model: Vec<(f64, Measured)>,
}

/// Per-call latency of one configuration of `--latency`.
struct Latency {
    /// Busy threads running beside the calls.
    load: usize,
    threads: usize,
    calls: usize,
    p50: Duration,
    p99: Duration,
    max: Duration,
}

/// Threads that spin until dropped: the other work of `--latency`'s
/// loaded runs, like `while :; do :; done` in a shell.
struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start(n: usize) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..n)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_add(1));
                    }
                })
            })
            .collect();
        Load { stop, threads }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Latency percentiles of `f` over at least 1000 calls and 0.5 s, after a
/// warm-up.
fn percentiles(f: &mut dyn FnMut(), load: usize, threads: usize) -> Latency {
    let warm = Instant::now();
    while warm.elapsed() < Duration::from_millis(50) {
        f();
    }
    let mut runs = Vec::new();
    let start = Instant::now();
    while runs.len() < 1000 || start.elapsed() < Duration::from_millis(500) {
        let t = Instant::now();
        f();
        runs.push(t.elapsed());
    }
    runs.sort();
    let n = runs.len();
    Latency {
        load,
        threads,
        calls: n,
        p50: runs[n / 2],
        p99: runs[(n * 99).div_ceil(100) - 1],
        max: runs[n - 1],
    }
}

/// `f`'s latency idle and beside `load` busy threads, with one thread and
/// with `threads`; leaves the pool at `threads`.
fn latencies(f: &mut dyn FnMut(), load: usize, threads: usize) -> Vec<Latency> {
    let (mut loads, mut counts) = (vec![0, load], vec![1, threads]);
    loads.dedup();
    counts.dedup();
    let mut out = Vec::new();
    for &busy in &loads {
        let _load = Load::start(busy);
        for &t in &counts {
            small_core::threads::set_threads(t);
            out.push(percentiles(f, busy, t));
        }
    }
    small_core::threads::set_threads(threads);
    out
}

/// Median time of `f` after a warm-up, over at least `min_runs` runs and
/// `min_time`.
fn time(f: impl FnMut(), min_time: Duration, min_runs: usize) -> Duration {
    small_examples::peak::median_time(f, Duration::from_millis(100), min_time, min_runs)
}

/// Runs `input` through the network and checks it against `want` with the
/// bound propagated through the reference run of `source`'s weights.
/// Returns (max |diff|, max bound, first mismatch).
fn check_one<N: Network>(
    net: &N,
    source: &dyn WeightSource,
    arena: &mut [f32],
    input: &[f32],
    want: Option<&[f32]>,
    how: Propagation,
) -> Result<(Vec<f32>, f32, f32, Option<String>), String> {
    let e = |x: small_core::load::LoadError| x.to_string();
    let values = small_core::model::reference_run(source, N::LAYERS, N::DIMS, input).map_err(e)?;
    // Every layer alone first: a failure names the layer.
    if let Some(m) = check::check_layers(net, source, &values, arena)? {
        return Ok((Vec::new(), f32::NAN, f32::NAN, Some(m)));
    }
    let bounds = check::bounds(N::LAYERS, N::DIMS, source, &values, how).map_err(e)?;
    let mut reference = values[N::OUTPUT].clone();
    if N::HEAD == Head::Softmax {
        check::softmax(&mut reference);
    }
    let tol = head_bound(N::HEAD, &bounds[N::OUTPUT]);
    let mut got = vec![0.0; N::DIMS[N::OUTPUT].c];
    net.infer(arena, input, &mut got)
        .map_err(|x| x.to_string())?;
    let want = want.unwrap_or(&reference);
    let bad = first_mismatch(&got, want, &tol).map(|(i, g, w, t)| {
        if [g, w, t].iter().any(|v| v.is_nan()) {
            format!(
                "output {i} is NaN (got {g}, expected {w}, bound {t}): NaN in the weights or input"
            )
        } else {
            format!("output {i}: got {g}, expected {w} within {t:.2e}")
        }
    });
    let max_tol = tol.iter().copied().fold(0.0, f32::max);
    Ok((got.clone(), max_diff(&got, want), max_tol, bad))
}

fn random_input(dims: Dims, seed: u32) -> Vec<f32> {
    Generated::values(seed, dims.elements(), 1.0)
}

/// Built-in weights: the network against the reference layers.
fn builtin<N: Network>(arch: Arch, seed: u32, o: &Options) -> Result<Row, String> {
    let source = Generated { seed };
    let net = N::load(&source, arch).map_err(|e| e.to_string())?;
    let mut arena = Aligned::filled(N::ARENA, f32::NAN).map_err(|e| e.to_string())?;
    let input = random_input(N::DIMS[0], seed + 100);
    let (_, diff, tol, bad) = check_one(
        &net,
        &source,
        &mut arena,
        &input,
        None,
        Propagation::WorstCase,
    )?;
    let check = match &bad {
        None => format!("ok: every layer, and output diff {diff:.1e} <= bound {tol:.1e}"),
        Some(m) => format!("FAILED vs reference: {m}"),
    };
    finish_f32(&net, &mut arena, &input, check, bad.is_none(), o)
}

/// Sizes of a network in bytes, for the table.
struct Sizes {
    /// Weights and biases as the file holds them.
    weights: usize,
    /// Packed for this arch (with an int8 layer's per-channel data).
    packed: usize,
    arena: usize,
    bound: usize,
}

impl Sizes {
    /// An `f32` network's sizes.
    fn of_f32<N: Network>(net: &N) -> Self {
        Sizes {
            weights: 4 * N::PARAMETERS,
            packed: net.weight_bytes(),
            arena: 4 * N::ARENA,
            bound: 4 * N::LOWER_BOUND,
        }
    }

    /// An int8 network's sizes: int8 weights, int32 biases.
    fn of_i8<N: Int8Network>(net: &N) -> Self {
        let file = N::LAYERS
            .iter()
            .filter_map(|l| l.spec.filter(|s| s.has_weights()))
            .map(|s| s.weights_len() + 4 * s.out_channels())
            .sum();
        Sizes {
            weights: file,
            packed: net.weight_bytes(),
            arena: N::ARENA,
            bound: N::LOWER_BOUND,
        }
    }
}

/// One inference of a network on its arena and input.
type Infer<'a, N> = &'a mut dyn FnMut(&N, &mut [<N as Model>::Elem], &[<N as Model>::Elem]);

/// Times `infer` (one inference on `arena`), prints the layers with
/// `--per-layer` and the latency with `--latency`: the network's row.
#[allow(clippy::too_many_arguments)]
fn finish<N: Model>(
    (name, dtype): (&'static str, &'static str),
    net: &N,
    arena: &mut [N::Elem],
    input: &[N::Elem],
    infer: Infer<'_, N>,
    (check, ok): (String, bool),
    sizes: Sizes,
    o: &Options,
) -> Result<Row, String> {
    let pool = small_core::threads::pool();
    let before = pool.stats();
    let median = time(|| infer(net, arena, input), Duration::from_millis(300), 20);
    let pool = pool.stats().since(&before);
    let model = if o.per_layer {
        // What one pass touches: every layer's weights and the arena.
        let pass_bytes = sizes.packed + sizes.arena;
        print_layers(name, net, arena, input, o.rates.as_ref(), pass_bytes)?
    } else {
        Vec::new()
    };
    let latency = match o.latency {
        Some(load) => {
            eprintln!("  {name} {dtype}: latency, idle and beside {load} busy threads ...");
            let mut call = || infer(net, arena, input);
            latencies(&mut call, load, o.threads)
        }
        None => Vec::new(),
    };
    let kb = |bytes: usize| bytes as f64 / 1024.0;
    Ok(Row {
        name,
        dtype,
        macs: N::MACS,
        median,
        pool,
        weights_kb: kb(sizes.weights),
        packed_kb: kb(sizes.packed),
        arena_kb: kb(sizes.arena),
        bound_kb: kb(sizes.bound),
        check,
        ok,
        sample: None,
        latency,
        model,
    })
}

/// `finish` of an `f32` network.
fn finish_f32<N: Network>(
    net: &N,
    arena: &mut [f32],
    input: &[f32],
    check: String,
    ok: bool,
    o: &Options,
) -> Result<Row, String> {
    let mut out = vec![0.0; N::DIMS[N::OUTPUT].c];
    let mut infer =
        |n: &N, a: &mut [f32], x: &[f32]| n.infer(a, x, &mut out).expect("checked above");
    let sizes = Sizes::of_f32(net);
    finish(
        (N::NAME, "f32"),
        net,
        arena,
        input,
        &mut infer,
        (check, ok),
        sizes,
        o,
    )
}

/// `finish` of an int8 network.
fn finish_i8<N: Int8Network>(
    net: &N,
    arena: &mut [i8],
    input: &[i8],
    check: String,
    ok: bool,
    o: &Options,
) -> Result<Row, String> {
    let mut out = vec![0; N::DIMS[N::OUTPUT].c];
    let mut infer = |n: &N, a: &mut [i8], x: &[i8]| n.infer(a, x, &mut out).expect("checked above");
    let sizes = Sizes::of_i8(net);
    finish(
        (N::NAME, "i8"),
        net,
        arena,
        input,
        &mut infer,
        (check, ok),
        sizes,
        o,
    )
}

/// Built-in int8 weights (`Generated::layer_i8`): every layer alone and the
/// whole network against the int8 reference operators, bit for bit.
fn builtin_i8<N: Int8Network>(arch: Arch, seed: u32, o: &Options) -> Result<Row, String> {
    let source = Generated { seed };
    let net = N::load(&source, arch).map_err(|e| e.to_string())?;
    let mut arena = Aligned::filled(N::ARENA, 0i8).map_err(|e| e.to_string())?;
    let input: Vec<i8> = Generated::values_i8(seed + 100, N::DIMS[0].elements());
    let values = small_core::model::reference_run_i8(&source, N::LAYERS, N::DIMS, &input)
        .map_err(|e| e.to_string())?;
    let mut bad = check::check_layers_i8(&net, &values, &mut arena)?;
    let mut out = vec![0; N::DIMS[N::OUTPUT].c];
    net.infer(&mut arena, &input, &mut out)
        .map_err(|e| e.to_string())?;
    if bad.is_none() && out != values[N::OUTPUT] {
        bad = Some("the whole network's output differs from the reference's".into());
    }
    let check = match &bad {
        None => "ok: every layer and the output bit-exact vs the int8 reference".to_string(),
        Some(m) => format!("FAILED vs int8 reference: {m}"),
    };
    finish_i8(&net, &mut arena, &input, check, bad.is_none(), o)
}

/// Trained int8 weights from `dir`: every golden input, bit for bit, the
/// output through TFLite's int8 SOFTMAX where the file ends in one.
fn trained_i8<N: Int8Network>(arch: Arch, dir: &Path, o: &Options) -> Result<Row, String> {
    let path = dir.join(N::FILE);
    let model = tflite::Model::from_file(&path).map_err(|e| e.to_string())?;
    let net = N::load(&model, arch).map_err(|e| format!("{}: {e}", path.display()))?;
    let softmax = int8_softmax(&model).map_err(|e| format!("{}: {e}", path.display()))?;
    let golden = dir.join(format!("{}.golden", N::FILE.trim_end_matches(".tflite")));
    let mut arena = Aligned::filled(N::ARENA, 0i8).map_err(|e| e.to_string())?;
    let mut out = vec![0i8; N::DIMS[N::OUTPUT].c];
    let (mut n, mut bad, mut first_input) = (0, None, None);
    while golden.join(format!("{n}.input.bin")).exists() {
        let input = read_i8(&golden.join(format!("{n}.input.bin")))?;
        let want = read_i8(&golden.join(format!("{n}.output.bin")))?;
        net.infer(&mut arena, &input, &mut out)
            .map_err(|e| format!("input {n}: {e}"))?;
        let got = match &softmax {
            Some(p) => {
                let mut y = vec![0i8; out.len()];
                int8::softmax(&out, out.len(), p, &mut y).map_err(|e| e.to_string())?;
                y
            }
            None => out.clone(),
        };
        if let Some(i) = (0..want.len().max(got.len())).find(|&i| got.get(i) != want.get(i)) {
            bad.get_or_insert(format!(
                "input {n}: output {i} is {:?}, LiteRT {:?}",
                got.get(i),
                want.get(i)
            ));
        }
        first_input.get_or_insert(input);
        n += 1;
    }
    if n == 0 {
        return Err(format!("no golden inputs in {}", golden.display()));
    }
    let check = match &bad {
        None => format!("ok: {n} golden inputs bit-exact"),
        Some(m) => format!("FAILED vs LiteRT golden: {m}"),
    };
    let input = first_input.unwrap_or_default();
    finish_i8(&net, &mut arena, &input, check, bad.is_none(), o)
}

fn print_layers<N: Model>(
    name: &str,
    net: &N,
    arena: &mut [N::Elem],
    input: &[N::Elem],
    rates: Option<&small_core::ir::cost::Rates>,
    pass_bytes: usize,
) -> Result<Vec<(f64, Measured)>, String> {
    use small_core::ir::cost::{Tile, estimate, estimate_in};
    use small_examples::peak::median_relative_error;
    let err = |e: small_core::Error| e.to_string();
    println!("\n{name} per layer ({}):", net.arch().name());
    println!(
        "{:>3} {:<8} {:<34} {:>14} {:>10} {:>10} {:>8} {:>9} {:>8} {:>9} {:<6}  blocking",
        "#",
        "layer",
        "declaration",
        "output",
        "MACs",
        "median us",
        "GFLOP/s",
        "in net us",
        "quiet us",
        "model us",
        "bound"
    );
    let blockings: Vec<_> = net.blockings().collect();
    let machine = &net.arch().params().machine;
    // Whole passes in short windows between the layers timed alone, so
    // that a stretch of seconds in which the host slows this core (they
    // come and go on a shared VM) moves every layer's median a little,
    // not one network's whole column.
    let mut passes = vec![Vec::new(); N::LAYERS.len()];
    let mut alone = Vec::new();
    for i in 0..N::LAYERS.len() {
        in_sequence(net, arena, input, &mut passes)?;
        // Bring the arena to the state layer i expects, then time it alone.
        N::tensor_mut(arena, 0)
            .map_err(err)?
            .fill_from_nhwc(input)
            .map_err(err)?;
        for k in 0..i {
            net.forward_layer(k, arena).map_err(err)?;
        }
        alone.push(time(
            || net.forward_layer(i, arena).expect("ran above"),
            Duration::from_millis(50),
            10,
        ));
    }
    in_sequence(net, arena, input, &mut passes)?;
    // The median, and the 10th percentile: the layer when the host leaves
    // the core alone, the machine the model's peak and bandwidths (each
    // the best of many short runs) describe. On the shared VMs the same
    // layer's median moves by up to 1.7x between stretches of a second
    // (`peak::l1_read_spread` moves with it, the FMA rate does not).
    let (in_net, quiet): (Vec<Duration>, Vec<Duration>) = passes
        .iter_mut()
        .map(|r| {
            r.sort();
            (r[r.len() / 2], r[r.len() / 10])
        })
        .unzip();
    let (mut pairs, mut medians, mut repeated) = (Vec::new(), Vec::new(), Vec::new());
    for (i, l) in N::LAYERS.iter().enumerate() {
        let t = alone[i];
        let decl = match &l.spec {
            Some(s) => format!(
                "{}x{} {}->{} g{} s{} {:?}{}",
                s.fh,
                s.fw,
                s.in_channels(),
                s.out_channels(),
                s.g,
                s.sh,
                s.reduction,
                if s.residual { " +res" } else { "" }
            ),
            None => format!("concat of {} tensors", l.step.concat.len()),
        };
        let d = N::DIMS[l.step.y];
        let blocking = match blockings[i] {
            Some(b) => format!("O_wb={} TC={}", b.o_wb, b.tc),
            None => "copy".into(),
        };
        let x = N::DIMS[l.step.x];
        let model = match (rates, &l.spec, blockings[i]) {
            (Some(r), Some(spec), Some(b)) => {
                let tile = Tile::of(b, machine, spec);
                let (input, output) = ((x.h, x.w), (d.h, d.w));
                let e = estimate_in(spec, &tile, input, output, r, pass_bytes);
                let seconds = quiet[i].as_secs_f64();
                let spec = *spec;
                let own = estimate(&spec, &tile, input, output, r).seconds;
                repeated.push((own, t.as_secs_f64()));
                medians.push((e.seconds, in_net[i].as_secs_f64()));
                pairs.push((
                    e.seconds,
                    Measured {
                        spec,
                        tile,
                        input,
                        output,
                        pass_bytes,
                        seconds,
                    },
                ));
                (format!("{:.2}", e.seconds * 1e6), e.bound.name())
            }
            _ => ("-".into(), ""),
        };
        println!(
            "{:>3} {:<8} {:<34} {:>14} {:>10} {:>10.2} {:>8.1} {:>9.2} {:>8.2} {:>9} {:<6}  {blocking}",
            i,
            l.name,
            decl,
            format!("{}x{}x{}", d.h, d.w, d.c),
            l.macs,
            t.as_secs_f64() * 1e6,
            2.0 * l.macs as f64 / t.as_secs_f64() / 1e9,
            in_net[i].as_secs_f64() * 1e6,
            quiet[i].as_secs_f64() * 1e6,
            model.0,
            model.1,
        );
    }
    print_forks(net, arena, input)?;
    if !pairs.is_empty() {
        println!(
            "    cost model (small_core::ir::cost): median |model - quiet| / quiet {:.0}% over {} layers (against the in-net median: {:.0}%; each repeated alone, its weights cached: {:.0}%)",
            100.0 * median_relative_error(pairs.iter().map(|(p, m)| (*p, m.seconds))),
            pairs.len(),
            100.0 * median_relative_error(medians.iter().copied()),
            100.0 * median_relative_error(repeated.iter().copied()),
        );
    }
    Ok(pairs)
}

/// With two threads or more, the split calls of each layer while whole
/// forward passes run back to back, traced (`threads::Pool::set_trace`):
/// per call, the caller's share, how late the worker starts, its share,
/// and how long the caller takes to see it finish; beside them the same
/// parts run one after the other on the calling thread. Means over about
/// 100 ms of passes per mode.
fn print_forks<N: Model>(net: &N, arena: &mut [N::Elem], input: &[N::Elem]) -> Result<(), String> {
    use small_core::threads::{ForkTimes, TraceMode};
    let pool = small_core::threads::pool();
    if pool.threads() < 2 {
        return Ok(());
    }
    let err = |e: small_core::Error| e.to_string();
    // One forward pass, each layer's forks in its own slot.
    let pass = |arena: &mut [N::Elem]| -> Result<(), String> {
        for i in 0..N::LAYERS.len() {
            pool.trace_slot(i);
            net.forward_layer(i, arena).map_err(err)?;
        }
        Ok(())
    };
    let mut traced: Vec<(Vec<ForkTimes>, u64)> = Vec::new();
    for mode in [TraceMode::Threads, TraceMode::Serial] {
        N::tensor_mut(arena, 0)
            .map_err(err)?
            .fill_from_nhwc(input)
            .map_err(err)?;
        for _ in 0..20 {
            pass(arena)?;
        }
        pool.set_trace(mode);
        let (start, mut passes) = (Instant::now(), 0);
        while passes < 20 || start.elapsed() < Duration::from_millis(100) {
            pass(arena)?;
            passes += 1;
        }
        traced.push((pool.trace(), passes));
    }
    pool.set_trace(TraceMode::Off);
    let [(threads, passes), (serial, _)] = &traced[..] else {
        return Ok(());
    };
    println!(
        "    split calls on {} threads, mean µs per call (tracing on): caller part | worker start, worker part, join seen | the same parts on one thread: part 0, the rest",
        pool.threads()
    );
    let us = |sum: u64, n: u64| sum as f64 / n.max(1) as f64 / 1e3;
    // How much longer a part takes while the other core runs its own:
    // per layer, both parts' times over the same parts' one after the
    // other on one core.
    let mut slower = Vec::new();
    for (i, (t, s)) in threads.iter().zip(serial).enumerate().take(N::LAYERS.len()) {
        if t.forks == 0 {
            continue;
        }
        let together = us(t.caller_part, t.forks) + us(t.worker_part, t.worker_forks);
        let alone = us(s.caller_part, s.forks) + us(s.worker_part, s.worker_forks);
        if t.worker_forks > 0 && s.worker_forks > 0 && alone > 0.0 {
            slower.push(together / alone);
        }
        println!(
            "    {:>3} {:<8} {:>5.2} calls/pass  {:>7.2} | {:>6.2} {:>7.2} {:>6.2} | {:>7.2} {:>7.2}",
            i,
            N::LAYERS[i].name,
            t.forks as f64 / *passes as f64,
            us(t.caller_part, t.forks),
            us(t.worker_start, t.worker_forks),
            us(t.worker_part, t.worker_forks),
            us(t.join_seen, t.worker_forks),
            us(s.caller_part, s.forks),
            us(s.worker_part, s.worker_forks),
        );
    }
    if !slower.is_empty() {
        slower.sort_unstable_by(f64::total_cmp);
        println!(
            "    parts run at once took {:.2}x as long as one after the other on one core (median over {} split layers; caller part + worker parts against part 0 + the rest): {} threads gain at most {} / that, less the fork and join",
            slower[slower.len() / 2],
            slower.len(),
            pool.threads(),
            pool.threads()
        );
    }
    Ok(())
}

/// Adds to `runs[i]` the times of layer `i` in whole forward passes run
/// back to back for about 10 ms (the layers before it having just run, on
/// whichever core wrote their rows), unlike the "median us" column, which
/// repeats one layer.
fn in_sequence<N: Model>(
    net: &N,
    arena: &mut [N::Elem],
    input: &[N::Elem],
    runs: &mut [Vec<Duration>],
) -> Result<(), String> {
    let err = |e: small_core::Error| e.to_string();
    N::tensor_mut(arena, 0)
        .map_err(err)?
        .fill_from_nhwc(input)
        .map_err(err)?;
    let start = Instant::now();
    let mut passes = 0;
    while passes < 4 || start.elapsed() < Duration::from_millis(10) {
        let mut t = Instant::now();
        for (i, r) in runs.iter_mut().enumerate() {
            net.forward_layer(i, arena).map_err(err)?;
            let now = Instant::now();
            r.push(now - t);
            t = now;
        }
        passes += 1;
    }
    Ok(())
}

/// `--fit`: the cost model's calibration fitted to every network's
/// layers, per element type, and a hold-out check: fitted to ResNet-8 and
/// AD alone, its error on VWW 0.25 and DS-CNN.
fn print_fit(rows: &[Row], r: &small_core::ir::cost::Rates) {
    use small_examples::peak::{CALL_CYCLES, EFFICIENCY, TILE_CYCLES, fit};
    println!(
        "cost model calibration now (small_examples::peak): CALL_CYCLES {CALL_CYCLES}, TILE_CYCLES {TILE_CYCLES:?}, EFFICIENCY {EFFICIENCY:?}"
    );
    for dtype in ["f32", "i8"] {
        let layers = |nets: &[&str]| -> Vec<Measured> {
            rows.iter()
                .filter(|row| row.dtype == dtype && (nets.is_empty() || nets.contains(&row.name)))
                .flat_map(|row| row.model.iter().map(|(_, m)| *m))
                .collect()
        };
        let (all, train, test) = (
            layers(&[]),
            layers(&["resnet8", "ad"]),
            layers(&["vww_0.25", "ds-cnn"]),
        );
        let Some(f) = fit(&all, r) else { continue };
        print!(
            "fitted, {dtype}: call {} cycles, tile {} cycles per accumulator, efficiency {:.2}: median error {:.0}% over {} layers",
            f.call_cycles,
            f.tile_cycles,
            f.efficiency,
            100.0 * f.error,
            all.len()
        );
        if let Some(h) = fit(&train, r) {
            let held = h.rates(r);
            let e = small_examples::peak::median_relative_error(
                test.iter().map(|m| (m.predicted(&held), m.seconds)),
            );
            print!(
                "; fitted to ResNet-8 and AD, {:.0}% on VWW 0.25 and DS-CNN",
                100.0 * e
            );
        }
        println!();
    }
}

/// Real weights from `dir`: every golden input, plus the real samples.
fn trained<N: Sample>(arch: Arch, dir: &Path, o: &Options) -> Result<Row, String> {
    let file = N::FILE.ok_or("no trained file")?;
    let path = dir.join(file);
    let model = tflite::Model::from_file(&path).map_err(|e| e.to_string())?; // names the path
    let net = N::load(&model, arch).map_err(|e| format!("{}: {e}", path.display()))?;
    let golden = dir.join(format!("{}.golden", file.trim_end_matches(".tflite")));
    let mut arena = Aligned::filled(N::ARENA, f32::NAN).map_err(|e| e.to_string())?;
    let (mut worst, mut worst_tol, mut n, mut bad) = (0.0f32, 0.0f32, 0, None);
    let mut first_input = None;
    while golden.join(format!("{n}.input.bin")).exists() {
        let input = read_f32(&golden.join(format!("{n}.input.bin")))?;
        let litert = read_f32(&golden.join(format!("{n}.output.bin")))?;
        // The hybrid KWS model: compare with LiteRT on dequantized weights.
        let dq = golden.join(format!("{n}.output.dequantized_weights.bin"));
        let want = if dq.exists() {
            read_f32(&dq)?
        } else {
            litert.clone()
        };
        let (got, diff, tol, m) = check_one(
            &net,
            &model,
            &mut arena,
            &input,
            Some(&want),
            Propagation::Probable { lambda: 8.0 },
        )?;
        if let Some(m) = m {
            bad.get_or_insert(format!("input {n}: {m}"));
        }
        if N::HEAD == Head::Softmax && argmax(&got) != argmax(&litert) {
            bad.get_or_insert(format!(
                "input {n}: class {} but LiteRT says {}",
                argmax(&got),
                argmax(&litert)
            ));
        }
        worst = worst.max(diff);
        worst_tol = worst_tol.max(tol);
        first_input.get_or_insert(input);
        n += 1;
    }
    if n == 0 {
        return Err(format!("no golden inputs in {}", golden.display()));
    }
    let check = match &bad {
        None => {
            format!("ok: {n} golden inputs (max diff {worst:.1e}, bound up to {worst_tol:.1e})")
        }
        Some(m) => format!("FAILED vs LiteRT golden: {m}"),
    };
    let input = first_input.unwrap_or_default();
    let mut row = finish_f32(&net, &mut arena, &input, check, bad.is_none(), o)?;
    row.sample = net.sample(dir)?;
    Ok(row)
}

/// A network's real sample beside the golden inputs, run on the network
/// already loaded: `(line, passed)`.
trait Sample: Network {
    fn sample(&self, _dir: &Path) -> Result<Option<(String, bool)>, String> {
        Ok(None)
    }
}

impl Sample for resnet8::Resnet8 {}
impl Sample for vww::Vww {}

/// The KWS sample (golden input 8) and its class.
impl Sample for dscnn::DsCnn {
    fn sample(&self, dir: &Path) -> Result<Option<(String, bool)>, String> {
        const LABELS: [&str; 12] = [
            "Down", "Go", "Left", "No", "Off", "On", "Right", "Stop", "Up", "Yes", "Silence",
            "Unknown",
        ];
        let input = read_f32(&dir.join("kws_ref_model_float32.golden/8.input.bin"))?;
        let mut arena = Aligned::filled(dscnn::DsCnn::ARENA, 0.0).map_err(|e| e.to_string())?;
        let mut p = vec![0.0; 12];
        self.infer(&mut arena, &input, &mut p)
            .map_err(|e| e.to_string())?;
        let c = argmax(&p);
        let line = format!(
            "KWS sample (kws_sample_input_int8.bin): class {c} \"{}\" (p = {:.3})",
            LABELS[c], p[c]
        );
        Ok(Some((line, true)))
    }
}

/// The AD sample clip's anomaly score: mean over its 196 windows of the
/// reconstruction's mean squared error; it must be LiteRT's to 4 decimals.
impl Sample for ad::Autoencoder {
    fn sample(&self, dir: &Path) -> Result<Option<(String, bool)>, String> {
        let clip = read_f32(&dir.join("normal_id_01_00000000_hist_librosa.bin"))?;
        let (score, windows) = ad::anomaly_score(self, &clip)?;
        let ok = format!("{score:.4}") == "9.7071";
        let mut line = format!(
            "AD sample clip ({windows} windows): anomaly score {score:.4} (LiteRT 9.707087)"
        );
        if !ok {
            line.push_str("\nAD score check FAILED: expected 9.7071 to 4 decimals");
        }
        Ok(Some((line, ok)))
    }
}

fn print_table(arch: Arch, peak: f64, rows: &[Row]) {
    println!(
        "\n{:<9} {:<4} {:>10} {:>10} {:>9} {:>8} {:>7} {:>10} {:>10} {:>9}  check",
        "model",
        "type",
        "MACs",
        "median us",
        "inf/s",
        "GFLOP/s",
        "%pk/core",
        "weights KB",
        "arena KB",
        "total KB"
    );
    for r in rows {
        let s = r.median.as_secs_f64();
        let gflops = 2.0 * r.macs as f64 / s / 1e9;
        println!(
            "{:<9} {:<4} {:>10} {:>10.1} {:>9.0} {:>8.1} {:>6.1}% {:>10.1} {:>10.1} {:>9.1}  {}",
            r.name,
            r.dtype,
            r.macs,
            s * 1e6,
            1.0 / s,
            gflops,
            100.0 * gflops / peak,
            r.weights_kb,
            r.arena_kb,
            r.weights_kb + r.arena_kb,
            r.check
        );
    }
    println!(
        "\narch {} (FMA peak {peak:.1} GFLOP/s per core, {} thread(s)). weights = the file's (f32, or int8 and int32 biases); packed for this arch:",
        arch.name(),
        small_core::threads::threads()
    );
    for r in rows {
        println!(
            "  {:<9} {:<4} packed weights {:>8.1} KB; arena {:>7.1} KB (no plan can go below {:.1} KB)",
            r.name, r.dtype, r.packed_kb, r.arena_kb, r.bound_kb
        );
    }
}

/// One core's FMA rate and L1 read bandwidth before and after the
/// networks (`small_examples::peak::Spread`): a low 10th percentile, or
/// a change between the two, says the host slowed this VM during the
/// run, so its times compare only as ratios of builds alternated in it.
fn print_spread(before: (Option<Spread>, Spread), after: (Option<Spread>, Spread)) {
    let show = |s: Option<Spread>| match s {
        Some(s) => format!("{:.0} / {:.0} / {:.0}", s.best, s.median, s.low),
        None => "-".into(),
    };
    println!(
        "steadiness (one core, 0.1 ms runs over 0.3 s, best / median / 10th percentile): FMA GFLOP/s {} before the networks, {} after; L1 read GB/s {} before, {} after",
        show(before.0),
        show(after.0),
        show(Some(before.1)),
        show(Some(after.1))
    );
}

/// What the pool did while each network was timed: a second thread pays
/// off only if most layer calls fork and few joins are late (each late
/// join runs the next calls on one thread for a while).
fn print_pool(rows: &[Row]) {
    println!(
        "\nthread pool while timing (small_core::threads::Stats): calls split / late joins / run alone (solo, pool busy):"
    );
    for r in rows {
        let p = &r.pool;
        println!(
            "  {:<9} {:<4} {:>7} split {:>5} late {:>7} solo {:>5} busy",
            r.name, r.dtype, p.forks, p.late, p.solo, p.busy
        );
    }
}

fn print_latency(rows: &[Row]) {
    println!("\nlatency per call, µs (busy = threads spinning beside the calls):");
    println!(
        "{:<9} {:<4} {:>5} {:>8} {:>6} {:>9} {:>9} {:>9}  p50 / 1-thread p50",
        "model", "type", "busy", "threads", "calls", "p50", "p99", "max"
    );
    for r in rows {
        for l in &r.latency {
            let one = r
                .latency
                .iter()
                .find(|b| b.load == l.load && b.threads == 1)
                .map_or(f64::NAN, |b| b.p50.as_secs_f64());
            println!(
                "{:<9} {:<4} {:>5} {:>8} {:>6} {:>9.1} {:>9.1} {:>9.1}  {:.2}x",
                r.name,
                r.dtype,
                l.load,
                l.threads,
                l.calls,
                l.p50.as_secs_f64() * 1e6,
                l.p99.as_secs_f64() * 1e6,
                l.max.as_secs_f64() * 1e6,
                l.p50.as_secs_f64() / one
            );
        }
    }
}

fn run() -> Result<bool, String> {
    let mut o = match options()? {
        Command::Run(o) => *o,
        Command::Help => {
            println!("{USAGE}");
            return Ok(true);
        }
    };
    if let Some(dir) = &o.models
        && !dir.is_dir()
    {
        return Err(format!("--models {}: not a directory", dir.display()));
    }
    let arch = small_core::arch::selected().map_err(|e| e.to_string())?;
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    eprintln!("measuring the FMA peak of {} ...", arch.name());
    // The bench's probe (small_examples::peak); NaN for the reference,
    // which has no FMA ceiling.
    let spread_before = small_examples::peak::fma_spread(arch, 0.3);
    let peak = spread_before.map_or(f64::NAN, |s| s.best);
    let l1_before = small_examples::peak::l1_read_spread(0.3);
    if o.per_layer && small_core::threads::threads() > 1 {
        // The model predicts one core's time: beside a split layer's its
        // error would be the split's speed-up, not the model's.
        println!(
            "cost model: left out of the per-layer tables, as it predicts one thread's time (--threads 1 shows it)"
        );
    } else if o.per_layer {
        eprintln!("measuring L1, L2 and memory read bandwidth for the cost model ...");
        o.base_rates = small_examples::peak::rates(arch, peak * 1e9, 0.1);
        if let Some(base) = &o.base_rates {
            eprintln!("timing the cost model's probe layers ...");
            let c = small_examples::calibrate::calibrated(arch, base);
            println!("{c}");
            o.rates = Some(c.rates);
        }
    }
    let threads = small_core::threads::threads();
    println!(
        "small-rs MLPerf Tiny, arch {} on {cpu}, {threads} thread{}",
        arch.name(),
        if threads == 1 { "" } else { "s" }
    );
    // Two-thread times depend on how far apart the cores are (see
    // `cross_core_round_trip`); measured before and after, as it can move.
    let round_trip = || (threads > 1).then(|| small_examples::peak::cross_core_round_trip(2000));
    let trip_before = round_trip();
    let at_once = || small_examples::peak::at_once_report(arch, threads, 0.3);
    let together_before = at_once();
    let mut rows = Vec::new();
    let mut step = |name: &str, run: &dyn Fn() -> Result<Row, String>| -> Result<(), String> {
        eprintln!("  {name}: checking and timing ...");
        let t = Instant::now();
        rows.push(run().map_err(|e| format!("{name}: {e}"))?);
        eprintln!("  {name}: done in {:.1} s", t.elapsed().as_secs_f64());
        Ok(())
    };
    match &o.models {
        None => {
            println!(
                "weights: built-in (generated, seed 1); check: against the small-core reference layers"
            );
            step("resnet8", &|| builtin::<resnet8::Resnet8>(arch, 1, &o))?;
            step("vww_0.25", &|| builtin::<vww::Vww>(arch, 1, &o))?;
            step("ds-cnn", &|| builtin::<dscnn::DsCnn>(arch, 1, &o))?;
            step("ad", &|| builtin::<ad::Autoencoder>(arch, 1, &o))?;
            step("resnet8 i8", &|| {
                builtin_i8::<resnet8::int8::Resnet8>(arch, 1, &o)
            })?;
            step("vww_0.25 i8", &|| builtin_i8::<vww::int8::Vww>(arch, 1, &o))?;
            step("ds-cnn i8", &|| {
                builtin_i8::<dscnn::int8::DsCnn>(arch, 1, &o)
            })?;
            step("ad i8", &|| {
                builtin_i8::<ad::int8::Autoencoder>(arch, 1, &o)
            })?;
        }
        Some(dir) => {
            println!(
                "weights: trained, from {}; check: against LiteRT's golden outputs",
                dir.display()
            );
            step("resnet8", &|| trained::<resnet8::Resnet8>(arch, dir, &o))?;
            step("vww_0.25", &|| trained::<vww::Vww>(arch, dir, &o))?;
            step("ds-cnn", &|| trained::<dscnn::DsCnn>(arch, dir, &o))?;
            step("ad", &|| trained::<ad::Autoencoder>(arch, dir, &o))?;
            step("resnet8 i8", &|| {
                trained_i8::<resnet8::int8::Resnet8>(arch, dir, &o)
            })?;
            step("vww_0.25 i8", &|| {
                trained_i8::<vww::int8::Vww>(arch, dir, &o)
            })?;
            step("ds-cnn i8", &|| {
                trained_i8::<dscnn::int8::DsCnn>(arch, dir, &o)
            })?;
            step("ad i8", &|| {
                trained_i8::<ad::int8::Autoencoder>(arch, dir, &o)
            })?;
        }
    }
    print_table(arch, peak, &rows);
    if small_core::threads::threads() > 1 {
        print_pool(&rows);
        let ns = |t: Option<Option<Duration>>| match t.flatten() {
            Some(d) => format!("{} ns", d.as_nanos()),
            None => "no answer".into(),
        };
        println!(
            "cross-core round trip of a cache line (small_examples::peak::cross_core_round_trip): {} before the networks, {} after",
            ns(trip_before),
            ns({
                // Until the pool's workers stop spinning (`threads::SPIN`).
                std::thread::sleep(Duration::from_millis(20));
                round_trip()
            })
        );
        println!(
            "{threads} threads running the probes at once (small_examples::peak::fma_together, l1_read_together, l2_read_together; medians of 0.1 ms runs over 0.3 s, against one core's alone just before): {} before the networks; {} after. The most a layer can gain from its threads",
            together_before,
            at_once()
        );
    }
    print_spread(
        (spread_before, l1_before),
        (
            small_examples::peak::fma_spread(arch, 0.3),
            small_examples::peak::l1_read_spread(0.3),
        ),
    );
    for dtype in ["f32", "i8"] {
        let pairs: Vec<_> = rows
            .iter()
            .filter(|r| r.dtype == dtype)
            .flat_map(|r| r.model.iter().map(|(p, m)| (*p, m.seconds)))
            .collect();
        if !pairs.is_empty() {
            println!(
                "cost model, {dtype}: median |model - quiet| / quiet {:.0}% over the {} layers of the networks (quiet: a layer's 10th percentile in whole passes)",
                100.0 * small_examples::peak::median_relative_error(pairs.iter().copied()),
                pairs.len()
            );
        }
    }
    if let (true, Some(r)) = (o.fit, &o.base_rates) {
        print_fit(&rows, r);
    }
    if o.latency.is_some() {
        print_latency(&rows);
    }
    let mut ok = rows.iter().all(|r| r.ok);
    let samples: Vec<&(String, bool)> = rows.iter().filter_map(|r| r.sample.as_ref()).collect();
    if !samples.is_empty() {
        println!();
    }
    for (line, passed) in samples {
        println!("{line}");
        ok &= passed;
    }
    Ok(ok)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("mlperf_tiny: a check FAILED (see the table)");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("mlperf_tiny: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_of(args: &[&str]) -> Result<Command, String> {
        parse(args.iter().map(|a| a.to_string()))
    }

    #[test]
    fn help_is_a_command_not_an_error() {
        for a in ["--help", "-h"] {
            assert!(matches!(parse_of(&[a]), Ok(Command::Help)));
        }
        assert!(USAGE.contains("--latency") && USAGE.contains("SMALL_THREADS"));
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        let err = |args: &[&str]| match parse_of(args) {
            Err(e) => e,
            Ok(_) => panic!("{args:?} parsed"),
        };
        assert!(err(&["--threads", "0"]).contains("--threads 0: expected a count >= 1"));
        assert!(err(&["--threads", "abc"]).contains("--threads abc"));
        assert!(err(&["--load", "-1"]).contains("--load -1"));
        assert!(err(&["--load", "2"]).contains("add --latency"));
        assert!(err(&["--bogus"]).contains("unknown argument `--bogus`"));
        match parse_of(&["--latency", "--load", "3"]) {
            Ok(Command::Run(o)) => assert_eq!(o.latency, Some(3)),
            _ => panic!("--latency --load 3"),
        }
    }
}
