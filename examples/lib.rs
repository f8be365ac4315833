//! The MLPerf Tiny networks as small-rs programs, and the checks and
//! timing the main job (`cargo run --release --example mlperf_tiny`), the
//! tests and the bench share.

pub mod check;
pub mod golden;
pub mod models;
