//! Architecture descriptions for small-rs.
//!
//! An architecture is one file in this crate. It holds two things and no
//! kernel logic:
//!
//! 1. [`ArchParams`]: plain numbers (vector registers, `f32` lanes, FMA
//!    latency and issue rate) that the `#[layer]` proc macro reads at
//!    expansion time to derive the register blocking, plus the `cfg` and
//!    target features under which the arch's code may be compiled.
//! 2. An implementation of [`Simd`]: the handful of primitive operations
//!    (zero, load, store, broadcast, fma, max, ...) that the generated
//!    kernels call, as `#[inline(always)]` wrappers over `core::arch`.
//!
//! Porting small-rs to a new chip means adding one such file and
//! registering it in [`ARCHS`] and [`ArchId`]. Nothing else changes: the
//! emitter in `small-macros` produces every kernel for every registered
//! arch from the same code path.
#![no_std]
#![warn(missing_docs)]
// `cortex_m4`'s fused multiply-add; the condition is its `cfg`, which holds
// only where unstable features are allowed (see `cortex_m4`).
#![cfg_attr(
    all(
        target_arch = "arm",
        target_feature = "mclass",
        target_feature = "fpregs"
    ),
    feature(core_float_math)
)]

#[cfg(feature = "std")]
extern crate std;

pub mod avx2;
pub mod avx512;
pub mod cortex_m4;
pub mod neon;
pub mod reference;

/// Channel block `C_b` of the blocked activation layout `[C/C_b][H][W][C_b]`.
///
/// One value for every target, so that every arch on a target (and the
/// host reference used to check a device) shares one layout and layers
/// never repack between each other. 16 is one AVX-512 register, two AVX2
/// registers and four NEON registers; it is also SMaLL's own choice for
/// AVX2 and NEON. Every arch's lane count must divide it (checked below).
pub const CB: usize = 16;

/// What the blocking model and the emitter need to know about an arch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchParams {
    /// Short name, as used by `SMALL_ARCH` and `explain()`.
    pub name: &'static str,
    /// Identifier of the arch's module in this crate and of its [`ArchId`]
    /// variant and type, e.g. `"avx2"` / `"Avx2"`.
    pub module: &'static str,
    /// Type implementing [`Simd`] inside `module`, also the [`ArchId`] variant.
    pub ident: &'static str,
    /// `cfg` predicate under which the arch's code compiles, as Rust source.
    pub cfg: &'static str,
    /// Comma-separated `#[target_feature(enable = ...)]` list ("" for none).
    pub target_features: &'static str,
    /// Number of architectural vector (or FP) registers.
    pub vector_regs: usize,
    /// `f32` lanes per vector register.
    pub lanes: usize,
    /// Latency of one FMA, in cycles.
    pub fma_latency: usize,
    /// FMAs that can issue per cycle (number of FMA pipes).
    pub fma_per_cycle: usize,
    /// Vector loads (or load-broadcasts) per cycle from L1.
    pub loads_per_cycle: usize,
    /// FMAs and loads together that can issue per cycle. A core with
    /// separate load and FMA ports has `fma_per_cycle + loads_per_cycle`
    /// (the issue width never binds); a single-issue core (Cortex-M) has 1,
    /// so every load takes an FMA's slot.
    pub issue_per_cycle: usize,
    /// True if an FMA can take a broadcast scalar straight from memory
    /// (AVX-512 `{1toN}`), so the broadcast needs no register of its own.
    pub broadcast_from_memory: bool,
}

/// Every registered architecture, in order of preference (best first) for
/// run-time selection. `reference` is last: it runs everywhere.
pub const ARCHS: &[ArchParams] = &[
    avx512::PARAMS,
    avx2::PARAMS,
    neon::PARAMS,
    cortex_m4::PARAMS,
    reference::PARAMS,
];

/// Identity of a registered architecture, one variant per entry of [`ARCHS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum ArchId {
    Avx512,
    Avx2,
    Neon,
    CortexM4,
    Reference,
}

impl ArchId {
    /// All registered arches, in the order of [`ARCHS`].
    pub const ALL: &'static [ArchId] = &[
        ArchId::Avx512,
        ArchId::Avx2,
        ArchId::Neon,
        ArchId::CortexM4,
        ArchId::Reference,
    ];

    /// The arch's parameters.
    pub const fn params(self) -> &'static ArchParams {
        match self {
            ArchId::Avx512 => &avx512::PARAMS,
            ArchId::Avx2 => &avx2::PARAMS,
            ArchId::Neon => &neon::PARAMS,
            ArchId::CortexM4 => &cortex_m4::PARAMS,
            ArchId::Reference => &reference::PARAMS,
        }
    }

    /// Short name (`"avx2"`, ...).
    pub const fn name(self) -> &'static str {
        self.params().name
    }

    /// Looks an arch up by its short name.
    pub fn from_name(name: &str) -> Option<ArchId> {
        Self::ALL.iter().copied().find(|a| a.name() == name)
    }

    /// True if this arch's code is compiled for the current target and the
    /// running CPU can execute it.
    pub fn available(self) -> bool {
        match self {
            ArchId::Avx512 => avx512::available(),
            ArchId::Avx2 => avx2::available(),
            ArchId::Neon => neon::available(),
            ArchId::CortexM4 => cortex_m4::available(),
            ArchId::Reference => reference::available(),
        }
    }

    /// The best available arch (first in [`ARCHS`] order).
    pub fn best_available() -> ArchId {
        Self::ALL
            .iter()
            .copied()
            .find(|a| a.available())
            .unwrap_or(ArchId::Reference)
    }
}

/// The primitive operations an arch offers to generated kernels.
///
/// # Safety
///
/// All functions are `unsafe`, with one contract: the caller guarantees that the CPU supports
/// the arch (the generated code only calls them from a function compiled
/// with the arch's target features, entered after [`ArchId::available`])
/// and that every pointer is valid for `LANES` `f32`s (one for
/// [`Simd::broadcast`]). No alignment beyond that of `f32` is required.
#[allow(clippy::missing_safety_doc)] // one contract for all: see the trait docs
pub trait Simd {
    /// One vector register of `LANES` `f32`s.
    type V: Copy;
    /// `f32` lanes per vector.
    const LANES: usize;
    /// All lanes zero.
    unsafe fn zero() -> Self::V;
    /// All lanes `x`.
    unsafe fn splat(x: f32) -> Self::V;
    /// Loads `LANES` consecutive `f32`s.
    unsafe fn load(p: *const f32) -> Self::V;
    /// Stores `LANES` consecutive `f32`s.
    unsafe fn store(p: *mut f32, v: Self::V);
    /// Loads one `f32` into every lane.
    unsafe fn broadcast(p: *const f32) -> Self::V;
    /// `acc + a * b`, fused (one rounding).
    unsafe fn fma(acc: Self::V, a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise maximum.
    unsafe fn max(a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise minimum.
    unsafe fn min(a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise sum.
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise product.
    unsafe fn mul(a: Self::V, b: Self::V) -> Self::V;
}

/// Compile-time check that an arch's declared lane count matches its
/// vector type and divides the layout's channel block.
macro_rules! check_arch {
    ($params:expr, $ty:ty) => {
        const _: () = {
            assert!($params.lanes == <$ty as $crate::Simd>::LANES);
            assert!(
                core::mem::size_of::<<$ty as $crate::Simd>::V>() == $params.lanes * 4,
                "vector type size must be lanes * 4 bytes"
            );
            assert!(
                $crate::CB / $params.lanes * $params.lanes == $crate::CB,
                "lanes must divide CB"
            );
        };
    };
}
pub(crate) use check_arch;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_consistent() {
        assert_eq!(ARCHS.len(), ArchId::ALL.len());
        for (p, id) in ARCHS.iter().zip(ArchId::ALL) {
            assert_eq!(p, id.params());
            assert_eq!(ArchId::from_name(p.name), Some(*id));
            assert_eq!(CB % p.lanes, 0);
        }
        assert!(ArchId::Reference.available());
        assert!(ArchId::best_available().available());
    }
}
