//! Run-time helpers shared by every generated layer: choosing the
//! blocking of an arch and packing weights. Generated code calls these so
//! that each expansion stays small.

use crate::pack::pack;
use crate::{Arch, Blocking, Error, LayerSpec, Weights};

/// The blocking of `arch` in a layer's list, if the layer was generated for
/// it and the CPU can run it.
pub fn blocking_for(list: &'static [Blocking], arch: Arch) -> Result<&'static Blocking, Error> {
    let b = list
        .iter()
        .find(|b| b.arch == arch)
        .ok_or(Error::ArchUnavailable { name: arch.name() })?;
    crate::arch::require(arch)?;
    Ok(b)
}

/// Packs weights into a new buffer.
#[cfg(feature = "alloc")]
pub fn pack_owned(
    spec: &LayerSpec,
    b: &Blocking,
    weights: &[f32],
    bias: Option<&[f32]>,
) -> Result<Weights, Error> {
    let mut buf = alloc::vec![0.0; crate::pack::packed_len(spec, b.tc)];
    pack(spec, b.tc, weights, bias, &mut buf)?;
    Ok(Weights::Owned(buf))
}

/// Packs weights into caller-provided static storage (no allocation).
pub fn pack_static(
    spec: &LayerSpec,
    b: &Blocking,
    weights: &[f32],
    bias: Option<&[f32]>,
    storage: &'static mut [f32],
) -> Result<Weights, Error> {
    pack(spec, b.tc, weights, bias, storage)?;
    Ok(Weights::Static(storage))
}
