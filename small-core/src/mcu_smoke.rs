//! Layers compiled only for 32-bit Arm, so that the `thumbv7em-none-eabihf`
//! stage of `scripts/test` builds real `#[layer]` kernels for the
//! `cortex_m4` arch (and checks their assembly for `vfma.f32`). Not API.

use crate::layer;

/// Conv 3x3 16 -> 16, `same` padding, ReLU: the broadcast kernel.
#[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same, activation = relu)]
pub struct Conv3x3;

/// Depthwise 3x3 over 16 channels: the channelwise kernel.
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 16, padding = same)]
pub struct Depthwise3x3;
