//! CI fixture, not part of small-rs: layers compiled only for 32-bit Arm,
//! so that the `thumbv7em` stage of `scripts/test` builds real `#[layer]`
//! kernels for the `cortex_m4` arch (`no_std`, core only) and checks
//! their assembly: `vfma.f32` in the f32 kernels, `smlad` and no
//! per-element multiply in the int8 ones. Kernels are monomorphised in the crate
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

    /// int8 conv 3x3 20 -> 24 (a partial input block), `same`: the int8
    /// broadcast kernel, whose dot product must be `smlad`.
    #[layer(fh = 3, fw = 3, fc = 20, k = 24, padding = same, dtype = i8)]
    pub struct Conv3x3I8;

    /// int8 pointwise 32 -> 16.
    #[layer(fh = 1, fw = 1, fc = 32, k = 16, dtype = i8)]
    pub struct PointwiseI8;
}
#[cfg(target_arch = "arm")]
pub use layers::{Conv3x3, Conv3x3I8, Depthwise3x3, PointwiseI8};
