//! Criterion benches of small-rs, for regression tracking: the layer set
//! at 48x48x16 and 6x6x512 and the five MLPerf Tiny networks, on the
//! default arch (`SMALL_ARCH` or the best the CPU has).
//!
//! ```text
//! cargo bench -p small-bench --bench criterion                          # all
//! cargo bench -p small-bench --bench criterion -- 'layers/conv 3x3'     # a filter
//! cargo bench -p small-bench --bench criterion -- --save-baseline main  # then --baseline main
//! ```

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use small_bench::cases::{self, CaseDef, DEFAULT_SHAPES};
use std::time::Duration;

/// One criterion group of `defs`, each case built for the default arch;
/// throughput in multiply-accumulates.
fn group(c: &mut Criterion, name: &str, defs: Vec<CaseDef>) {
    let arch = small_core::arch::selected().expect("SMALL_ARCH names an arch this CPU runs");
    let mut g = c.benchmark_group(name);
    g.warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for def in defs {
        let mut case = cases::build(&def, arch).expect("case builds");
        g.throughput(Throughput::Elements(case.macs));
        g.bench_function(format!("{} {}", def.name, arch.name()), |b| {
            b.iter(|| case.run().expect("case runs"))
        });
    }
    g.finish();
}

fn layers(c: &mut Criterion) {
    group(c, "layers", cases::layer_defs(&DEFAULT_SHAPES));
}

fn models(c: &mut Criterion) {
    group(c, "models", cases::model_defs());
}

criterion_group!(benches, layers, models);
criterion_main!(benches);
