//! `small-bench`: measures this machine (FMA peak per arch, L1 / L2 / DRAM
//! read bandwidth), times the SMaLL paper's layer set and the MLPerf Tiny
//! networks on every arch it runs, prints a table and one JSON line per
//! case, and draws the roofline. `--help` lists the options.

use small_bench::cases::{self, CHANNELS, CaseDef, DEFAULT_SHAPES, Shape};
use small_bench::machine::{self, Cpu};
use small_bench::report::{Row, json_str};
use small_bench::roofline::{Point, Roofline};
use small_bench::timing::{self, Timing};
use small_core::Arch;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo run --release -p small-bench -- [OPTIONS] [CASE ...]

Measures this machine (single-core FMA peak of each arch, L1 / L2 / DRAM read
bandwidth), then times each case on each arch (one thread, float32, one image:
warm-up >= 0.2 s, then >= 1 s and >= 10 runs; median and minimum), prints a
table and one JSON line per case, and writes a roofline SVG.

Cases: the SMaLL paper's layer set - conv 3x3 C->C SAME + bias, conv 1x1 C->C
+ bias, dw 3x3 SAME + bias, maxpool 2x2/2, relu - at 48x48x16 and 6x6x512
(\"conv 3x3 48x48x16\", ...), and the networks resnet8, vww_0.25, vww_1.0,
ds-cnn and ad (Generated { seed: 1 } weights; one `infer` each).

  CASE ...           only cases whose name contains one of these words
                     (case-insensitive); `layer` and `model` select a group
  --arch all|NAME[,NAME...]
                     arches to run (default: all this CPU runs, e.g. avx512,
                     avx2 and reference)
  --shape HxW[xC]    run the layer set at this input height and width
                     (repeatable; replaces 48x48x16 and 6x6x512). Channel
                     counts ({channels}) and filters are compile-time
                     (#[layer] in benches/cases.rs): HxW runs both channel
                     sets, HxWxC one of them. Height and width are run-time.
  --json FILE        also write the JSON lines (machine line first) to FILE
  --svg PATH         roofline SVG path (default: target/roofline.svg under
                     the workspace); --no-svg to skip it
  --threads N        also time every case with N threads (small_core::threads)
                     and print its speed-up over one thread, and the pool's
                     fork-join cost; without it everything runs on one thread
  --quick            short timing and probes: a smoke test, not a measurement
  -h, --help         this text";

fn usage() -> String {
    USAGE.replace("{channels}", &format!("{CHANNELS:?}"))
}

/// Parsed command line.
#[derive(Debug, Clone, PartialEq)]
struct Options {
    /// `None`: every available arch.
    arches: Option<Vec<Arch>>,
    filters: Vec<String>,
    shapes: Vec<Shape>,
    json: Option<PathBuf>,
    svg: Option<PathBuf>,
    quick: bool,
    /// Threads for the second timing of each case (1: none).
    threads: usize,
}

/// `--help` or a bad argument: the text to print.
#[derive(Debug, Clone, PartialEq)]
enum Exit {
    Help,
    Bad(String),
}

fn default_svg() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d).join("roofline.svg"),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../target/roofline.svg"
        )),
    }
}

/// `24x24` (both channel sets) or `24x24x16`.
fn parse_shape(s: &str) -> Result<Vec<Shape>, String> {
    let dims: Vec<usize> = s
        .split('x')
        .map(|d| d.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("--shape `{s}`: expected HxW or HxWxC (e.g. 24x24 or 24x24x16)"))?;
    let (h, w, cs) = match dims[..] {
        [h, w] => (h, w, CHANNELS.to_vec()),
        [h, w, c] if CHANNELS.contains(&c) => (h, w, vec![c]),
        [_, _, c] => {
            return Err(format!(
                "--shape `{s}`: the layer set is compiled for {CHANNELS:?} channels, not {c}; \
                 channel counts and filters are compile-time (#[layer] in benches/cases.rs)"
            ));
        }
        _ => return Err(format!("--shape `{s}`: expected HxW or HxWxC")),
    };
    if h < 2 || w < 2 {
        return Err(format!(
            "--shape `{s}`: height and width must be >= 2 (max pool 2x2)"
        ));
    }
    Ok(cs.into_iter().map(|c| Shape { h, w, c }).collect())
}

fn parse_arches(s: &str) -> Result<Option<Vec<Arch>>, String> {
    if s == "all" {
        return Ok(None);
    }
    let mut out = Vec::new();
    for name in s.split(',') {
        let a = small_core::arch::parse(name).map_err(|e| format!("--arch `{name}`: {e}"))?;
        if !out.contains(&a) {
            out.push(a);
        }
    }
    Ok(Some(out))
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Options, Exit> {
    let mut o = Options {
        arches: None,
        filters: Vec::new(),
        shapes: Vec::new(),
        json: None,
        svg: Some(default_svg()),
        quick: false,
        threads: 1,
    };
    let mut args = args.into_iter();
    let value = |flag: &str, args: &mut dyn Iterator<Item = String>| {
        args.next()
            .ok_or_else(|| Exit::Bad(format!("{flag} needs a value")))
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "-h" | "--help" => return Err(Exit::Help),
            "--arch" => o.arches = parse_arches(&value("--arch", &mut args)?).map_err(Exit::Bad)?,
            "--shape" => o
                .shapes
                .extend(parse_shape(&value("--shape", &mut args)?).map_err(Exit::Bad)?),
            "--json" => o.json = Some(value("--json", &mut args)?.into()),
            "--svg" => o.svg = Some(value("--svg", &mut args)?.into()),
            "--no-svg" => o.svg = None,
            "--quick" => o.quick = true,
            "--threads" => {
                let v = value("--threads", &mut args)?;
                o.threads =
                    v.parse().ok().filter(|&n| n >= 1).ok_or_else(|| {
                        Exit::Bad(format!("--threads {v}: expected a count >= 1"))
                    })?;
            }
            // `cargo bench` passes this to every bench target.
            "--bench" => {}
            s if s.starts_with('-') => return Err(Exit::Bad(format!("unknown option `{s}`"))),
            s => o.filters.push(s.to_lowercase()),
        }
    }
    if o.shapes.is_empty() {
        o.shapes = DEFAULT_SHAPES.to_vec();
    }
    Ok(o)
}

/// True if `def` passes the filter words (none: everything).
fn selected(def: &CaseDef, filters: &[String]) -> bool {
    let name = def.name.to_lowercase();
    filters.is_empty()
        || filters
            .iter()
            .any(|f| name.contains(f.as_str()) || def.group() == f.as_str())
}

fn kib(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

fn run(o: &Options) -> Result<(), Box<dyn std::error::Error>> {
    let cpu = Cpu::detect();
    let date = machine::today();
    let available: Vec<Arch> = small_core::arch::available().collect();
    let arches = o.arches.clone().unwrap_or_else(|| available.clone());
    let timing = if o.quick { Timing::QUICK } else { Timing::FULL };
    small_core::threads::set_threads(1);

    println!(
        "small-bench {date}: {}, one thread, float32, batch 1",
        cpu.describe()
    );
    if o.quick {
        println!("--quick: short timing, numbers are not measurements");
    }
    // The machine: every available arch's peak (the roofline's ceilings).
    let probe_secs = if o.quick { 0.02 } else { 0.3 };
    let peaks: Vec<(Arch, f64)> = available
        .iter()
        .filter_map(|&a| Some((a, machine::fma_peak(a, probe_secs)?)))
        .collect();
    let peak_of = |a: Arch| peaks.iter().find(|p| p.0 == a).map(|p| p.1);
    let list: Vec<String> = peaks
        .iter()
        .map(|(a, p)| {
            let chains = machine::fma_chains(*a).unwrap_or_default();
            format!("{} {p:.1} ({chains} chains)", a.name())
        })
        .collect();
    // Portable arches (no `cfg`) have no FMA ceiling.
    let portable: Vec<&str> = available
        .iter()
        .filter(|a| machine::fma_chains(**a).is_none())
        .map(|a| a.name())
        .collect();
    println!(
        "FMA peak, GFLOP/s (single core): {}; none for {} (portable scalar code)",
        list.join(", "),
        portable.join(", ")
    );
    let bws = machine::bandwidths(if o.quick { 0.02 } else { 0.3 });
    let list: Vec<String> = bws
        .iter()
        .map(|b| format!("{} ({}) {:.1}", b.level, kib(b.bytes), b.gbps))
        .collect();
    println!(
        "read bandwidth, GB/s ({} loads, single core): {}",
        machine::read_arch().name(),
        list.join(", ")
    );
    println!(
        "GB/s below = compulsory traffic (input + output + weights) / median; AI = FLOPs per \
         compulsory byte; % peak = of the case's arch's FMA peak"
    );

    let defs: Vec<CaseDef> = cases::layer_defs(&o.shapes)
        .into_iter()
        .chain(cases::model_defs())
        .filter(|d| selected(d, &o.filters))
        .collect();
    if defs.is_empty() {
        return Err(format!("no case matches {:?}", o.filters).into());
    }
    if o.threads > 1 {
        // Before the pool starts, whose spinning workers would share the
        // cores with the probe's threads.
        match small_examples::peak::cross_core_round_trip(2000) {
            Some(d) => println!(
                "cross-core round trip of a cache line: median {} ns (two-thread times move with it)",
                d.as_nanos()
            ),
            None => println!("cross-core round trip: the second thread did not answer"),
        }
        // What every core gives at once: a threaded case's ceiling.
        if let Some(arch) = small_core::arch::available().next() {
            println!(
                "{} threads running the probes at once ({}): {}",
                o.threads,
                arch.name(),
                small_examples::peak::at_once_report(arch, o.threads, 0.3)
            );
        }
        // The pool's fork and join with no work: the floor of a threaded call.
        small_core::threads::set_threads(o.threads);
        let pool = small_core::threads::pool();
        let fj = timing::time(timing, || {
            pool.run(o.threads, &|_| {});
            Ok::<(), small_core::Error>(())
        })?;
        println!(
            "fork-join of {} threads (empty job): median {:.2} µs, min {:.2} µs",
            o.threads,
            fj.median * 1e6,
            fj.min * 1e6
        );
        drop(pool);
        small_core::threads::set_threads(1);
    }
    // The cost model's machine numbers, per arch with a peak, calibrated
    // on its probe layers (none of them a bench case).
    let rates: Vec<_> = peaks
        .iter()
        .filter_map(|&(a, p)| {
            let base = small_examples::peak::rates_from(a, p * 1e9, &bws)?;
            let c = small_examples::calibrate::calibrated(a, &base);
            println!("{}: {c}", a.name());
            Some((a, c.rates))
        })
        .collect();
    println!();
    println!("{}", Row::header());
    let mut rows = Vec::new();
    let mut threaded: Vec<String> = Vec::new();
    let mut modelled: Vec<(f64, f64)> = Vec::new();
    for def in &defs {
        for &arch in &arches {
            let mut case = cases::build(def, arch)?;
            let stats = timing::time(timing, || case.run())
                .map_err(|e| format!("{} on {}: {e}", def.name, arch.name()))?;
            let row = Row::new(&case, def.group(), stats, peak_of(arch));
            println!("{}", row.line());
            // The cost model beside the measurement (single layers; the
            // networks' layers: `mlperf_tiny --per-layer`).
            let rates = rates.iter().find(|r| r.0 == arch).map(|r| r.1);
            if let (Some(r), Some((spec, tile, x, y))) = (rates, case.layer) {
                let e = small_core::ir::cost::estimate(&spec, &tile, x, y, &r);
                let measured = row.stats.quiet;
                modelled.push((e.seconds, measured));
                println!(
                    "{:<20} {:<9} cost model: {:.1} µs, bound: {} ({:+.0}% against the 10th percentile run)",
                    "",
                    "",
                    e.seconds * 1e6,
                    e.bound.name(),
                    100.0 * (e.seconds - measured) / measured
                );
            }
            if o.threads > 1 {
                small_core::threads::set_threads(o.threads);
                let multi = timing::time(timing, || case.run())
                    .map_err(|e| format!("{} on {}: {e}", def.name, arch.name()))?;
                small_core::threads::set_threads(1);
                let speedup = row.stats.median / multi.median;
                println!(
                    "{:<20} {:<9} {} threads: median {:.1} µs, min {:.1} µs, speed-up {speedup:.2}x",
                    "",
                    "",
                    o.threads,
                    multi.median * 1e6,
                    multi.min * 1e6
                );
                threaded.push(format!(
                    "{{\"threads_of\":{},\"arch\":\"{}\",\"threads\":{},\"median_us\":{:.3},\"min_us\":{:.3},\"speedup\":{speedup:.3}}}",
                    json_str(&row.case),
                    row.arch,
                    o.threads,
                    multi.median * 1e6,
                    multi.min * 1e6
                ));
            }
            std::io::stdout().flush().ok();
            rows.push(row);
        }
    }

    if !modelled.is_empty() {
        println!(
            "cost model (small_core::ir::cost): median |model - quiet| / quiet {:.0}% over {} layer cases (quiet: each case's 10th percentile run)",
            100.0 * small_examples::peak::median_relative_error(modelled.iter().copied()),
            modelled.len()
        );
    }

    // JSON lines: the machine, then one per case and arch.
    let machine_json = {
        let peaks: Vec<String> = peaks
            .iter()
            .map(|(a, p)| format!("\"{}\":{p:.2}", a.name()))
            .collect();
        let bw: Vec<String> = bws
            .iter()
            .map(|b| {
                format!(
                    "\"{}\":{{\"bytes\":{},\"gbps\":{:.2}}}",
                    b.level, b.bytes, b.gbps
                )
            })
            .collect();
        let num = |v: Option<u32>| v.map_or_else(|| "null".into(), |v| v.to_string());
        format!(
            "{{\"machine\":{},\"family\":{},\"model\":{},\"stepping\":{},\"date\":\"{date}\",\
             \"quick\":{},\"peak_gflops\":{{{}}},\"read_arch\":\"{}\",\"read_bandwidth\":{{{}}}}}",
            json_str(&cpu.name),
            num(cpu.family),
            num(cpu.model),
            num(cpu.stepping),
            o.quick,
            peaks.join(","),
            machine::read_arch().name(),
            bw.join(",")
        )
    };
    let lines: Vec<String> = std::iter::once(machine_json)
        .chain(rows.iter().map(Row::json))
        .chain(threaded)
        .collect();
    println!();
    for l in &lines {
        println!("{l}");
    }
    if let Some(path) = &o.json {
        std::fs::write(path, lines.join("\n") + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("JSON lines written to {}", path.display());
    }

    if let Some(path) = &o.svg {
        let plot = Roofline {
            title: format!(
                "small-rs roofline: {}, one thread, {date}{}",
                cpu.describe(),
                if o.quick { " (--quick)" } else { "" }
            ),
            peaks: peaks.iter().map(|(a, p)| (a.name(), *p)).collect(),
            bandwidths: bws
                .iter()
                .map(|b| (b.level, kib(b.bytes), b.gbps))
                .collect(),
            points: rows
                .iter()
                .map(|r| Point {
                    case: r.case.clone(),
                    arch: r.arch,
                    intensity: r.intensity(),
                    gflops: r.gflops(),
                })
                .collect(),
        };
        plot.write_svg(path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let shown = path.canonicalize().unwrap_or_else(|_| path.clone());
        println!("roofline written to {}", shown.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    let o = match parse_args(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(Exit::Help) => {
            println!("{}", usage());
            return ExitCode::SUCCESS;
        }
        Err(Exit::Bad(msg)) => {
            eprintln!("small-bench: {msg} (--help lists the options)");
            return ExitCode::from(2);
        }
    };
    match run(&o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("small-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Result<Options, Exit> {
        parse_args(s.split_whitespace().map(String::from))
    }

    #[test]
    fn defaults() {
        let o = args("").unwrap();
        assert_eq!(o.arches, None);
        assert_eq!(o.shapes, DEFAULT_SHAPES.to_vec());
        assert!(o.svg.unwrap().ends_with("roofline.svg"));
        assert!(!o.quick && o.json.is_none() && o.filters.is_empty());
    }

    #[test]
    fn options() {
        let o = args("--arch reference --shape 24x24 --shape 9x7x16 --json x.json --no-svg --quick Conv resnet")
            .unwrap();
        assert_eq!(o.arches, Some(vec![Arch::Reference]));
        assert_eq!(
            o.shapes,
            vec![
                Shape {
                    h: 24,
                    w: 24,
                    c: 16
                },
                Shape {
                    h: 24,
                    w: 24,
                    c: 512
                },
                Shape { h: 9, w: 7, c: 16 }
            ]
        );
        assert_eq!(o.json, Some(PathBuf::from("x.json")));
        assert_eq!(o.svg, None);
        assert!(o.quick);
        assert_eq!(o.filters, ["conv", "resnet"]);
        assert_eq!(args("--arch all").unwrap().arches, None);
        assert_eq!(args("-h"), Err(Exit::Help));
    }

    #[test]
    fn bad_arguments_explain() {
        let bad = |s: &str| match args(s) {
            Err(Exit::Bad(m)) => m,
            other => panic!("{s}: {other:?}"),
        };
        assert!(bad("--shape 8x8x24").contains("compile-time"));
        assert!(bad("--shape 8").contains("HxW"));
        assert!(bad("--shape 1x8").contains(">= 2"));
        assert!(bad("--arch avx9").contains("avx9"));
        assert!(bad("--frobnicate").contains("unknown option"));
        assert!(bad("--json").contains("needs a value"));
        assert!(usage().contains("[16, 512]") && usage().contains("compile-time"));
    }

    #[test]
    fn filters_match_names_and_groups() {
        let defs: Vec<CaseDef> = cases::layer_defs(&DEFAULT_SHAPES)
            .into_iter()
            .chain(cases::model_defs())
            .collect();
        let pick = |f: &[&str]| {
            let f: Vec<String> = f.iter().map(|s| s.to_string()).collect();
            defs.iter().filter(|d| selected(d, &f)).count()
        };
        assert_eq!(pick(&[]), 15);
        assert_eq!(pick(&["conv 3x3"]), 2);
        assert_eq!(pick(&["model"]), 5);
        assert_eq!(pick(&["layer"]), 10);
        assert_eq!(pick(&["vww", "relu"]), 4);
    }
}
