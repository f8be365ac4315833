//! Run-time helpers shared by every generated layer: choosing the
//! blocking of an arch and packing weights. Generated code calls these so
//! that each expansion stays small.

use crate::pack::pack;
use crate::{Arch, Blocking, Error, LayerSpec, Weights};

/// The blocking of `arch` in a layer's list, if the layer was generated for
/// it and the CPU can run it.
pub fn blocking_for(list: &'static [Blocking], arch: Arch) -> Result<&'static Blocking, Error> {
    let b = blocking_of(list, arch)?;
    crate::arch::require(arch)?;
    Ok(b)
}

/// The blocking of `arch` in a layer's list, whether or not this CPU can
/// run it (packing for another target).
pub fn blocking_of(list: &'static [Blocking], arch: Arch) -> Result<&'static Blocking, Error> {
    list.iter()
        .find(|b| b.arch == arch)
        .ok_or(Error::ArchUnavailable { name: arch.name() })
}

/// Packs weights for `arch` into `out` (see [`crate::pack::pack`]); `arch`
/// need not run here, so a build script can pack for a microcontroller.
pub fn pack_for(
    spec: &LayerSpec,
    list: &'static [Blocking],
    arch: Arch,
    weights: &[f32],
    bias: Option<&[f32]>,
    out: &mut [f32],
) -> Result<(), Error> {
    let b = blocking_of(list, arch)?;
    pack(spec, b.tc, weights, bias, out)
}

/// Weights already packed for `arch` by [`pack_for`], e.g. in flash. Only
/// the length can be checked: a buffer packed for another blocking gives
/// wrong outputs, never an out-of-bounds read.
pub fn from_packed(
    spec: &LayerSpec,
    list: &'static [Blocking],
    arch: Arch,
    packed: &'static [f32],
) -> Result<Weights, Error> {
    let b = blocking_for(list, arch)?;
    crate::check_len(
        "packed weights",
        crate::pack::checked_packed_len(spec, b.tc)?,
        packed.len(),
    )?;
    Ok(if packed.is_empty() {
        Weights::None
    } else {
        Weights::Static(packed)
    })
}

/// Packs weights into a new buffer.
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub fn pack_owned(
    spec: &LayerSpec,
    b: &Blocking,
    weights: &[f32],
    bias: Option<&[f32]>,
) -> Result<Weights, Error> {
    // The weights' length before the allocation: a bad one is an error
    // whatever the packed size, and the packed size is checked too.
    crate::check_len("weights", spec.checked_weights_len()?, weights.len())?;
    let n = crate::pack::checked_packed_len(spec, b.tc)?;
    let mut buf = alloc::vec::Vec::new();
    buf.try_reserve_exact(n).map_err(|_| Error::TooLarge {
        what: "packed weights (elements x 1 x 1)",
        dims: [n, 1, 1],
        // At most isize::MAX: n <= MAX_ELEMENTS.
        refused: Some(n * core::mem::size_of::<f32>()),
    })?;
    buf.resize(n, 0.0);
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
