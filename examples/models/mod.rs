//! The MLPerf Tiny networks as small-rs programs: every layer a `#[layer]`
//! declaration, wired with `small_core::model!`, one arena planned at
//! compile time. Each implements `small_core::model::Model`; with `std`,
//! [`Network`] adds the name, trained file and head the main job, the
//! tests and the bench use; without it only the declarations build
//! (`no_std`, for the firmware).

pub mod ad;
pub mod dscnn;
pub mod resnet8;
pub mod sweep;
pub mod vww;

#[cfg(feature = "std")]
mod network;
#[cfg(feature = "std")]
pub use network::*;
