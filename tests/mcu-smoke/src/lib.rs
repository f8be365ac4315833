//! CI fixture, not part of small-rs: layers compiled only for 32-bit Arm,
//! so that the `thumbv7em` stage of `scripts/test` builds real `#[layer]`
//! kernels for the `cortex_m4` arch (`no_std`, core only) and checks
//! their assembly for `vfma.f32`. Kernels are monomorphised in the crate
//! that declares the layer, so they are in this crate's assembly. On
//! other targets the crate is empty.
#![no_std]

#[cfg(target_arch = "arm")]
mod layers {
    use small_core::layer;

    /// Conv 3x3 16 -> 16, `same` padding, ReLU: the broadcast kernel.
    #[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same, activation = relu)]
    pub struct Conv3x3;

    /// Depthwise 3x3 over 16 channels: the channelwise kernel.
    #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 16, padding = same)]
    pub struct Depthwise3x3;
}
#[cfg(target_arch = "arm")]
pub use layers::{Conv3x3, Depthwise3x3};
