//! `small-bench`: speed of small-rs on this machine, against its measured
//! FMA peaks and read bandwidths.
//!
//! The bench binary (`main.rs`, `cargo run --release -p small-bench --
//! --help`) and the criterion benches (`criterion.rs`, `cargo bench -p
//! small-bench`) share these modules:
//!
//! - [`machine`]: CPU name, FMA peak per arch, L1 / L2 / DRAM read bandwidth;
//! - [`timing`]: the timing rule (warm-up, >= 1 s and >= 10 runs, median);
//! - [`cases`]: the layer set and the MLPerf Tiny networks, built per arch;
//! - [`report`]: table rows and JSON lines;
//! - [`roofline`]: the roofline SVG;
//! - [`vww1`]: VWW at width 1.0, the largest network case.

pub mod cases;
pub mod machine;
pub mod report;
pub mod roofline;
pub mod timing;
pub use small_bench_layers::vww1;
