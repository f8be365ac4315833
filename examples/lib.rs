//! The MLPerf Tiny networks as small-rs programs, and the checks, timing
//! and FMA-peak probe ([`peak`]) the main job (`cargo run --release
//! --example mlperf_tiny`), the tests and the bench share.

//!
//! Without the default `std` feature only the network declarations in
//! [`models`] build, with no allocator: the Cortex-M4 firmware
//! (`examples/mcu`) uses them so that it runs the very networks the host
//! checks.

#![cfg_attr(not(feature = "std"), no_std)]

#[cfg(feature = "std")]
pub mod calibrate;
#[cfg(feature = "std")]
pub mod check;
#[cfg(feature = "std")]
pub mod firmware;
#[cfg(feature = "std")]
pub mod golden;
pub mod models;
#[cfg(feature = "std")]
pub mod peak;
