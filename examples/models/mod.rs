//! The MLPerf Tiny networks as small-rs programs: every layer a `#[layer]`
//! declaration, wired with `small_core::model!`, one arena planned at
//! compile time. With `std`, [`Network`] gives them one interface for the
//! main job, the tests and the bench; without it only the declarations
//! build (`no_std`, for the firmware).

pub mod ad;
pub mod dscnn;
pub mod resnet8;
pub mod sweep;
pub mod vww;
pub mod vww1;

#[cfg(feature = "std")]
mod network;
#[cfg(feature = "std")]
pub use network::*;
