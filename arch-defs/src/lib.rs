//! Architecture descriptions for small-rs.
//!
//! An architecture is one file in this crate. It holds two things and no
//! kernel logic:
//!
//! 1. `MACHINE`, a [`Machine`]: plain numbers (vector registers, `f32`
//!    lanes, FMA latency and issue rate) that the `#[layer]` proc macro
//!    reads at expansion time to derive the register blocking, plus the
//!    `cfg` and target features under which the arch's code may compile.
//! 2. An implementation of [`Simd`]: the handful of primitive operations
//!    (zero, load, store, broadcast, fma, max, ...) that the generated
//!    kernels call, as `#[inline(always)]` wrappers over `core::arch`,
//!    and `available()`, whether the running CPU has them.
//!
//! Porting small-rs to a new chip means adding one such file and one line
//! to the list at the end of this file, `module: Type`. The list
//! generates the module declaration, the [`ArchId`] variant, [`ARCHS`],
//! [`ArchId::ALL`], [`ArchId::params`] and [`ArchId::available`]; the
//! emitter in `small-macros` produces every kernel for every listed arch
//! from the same code path.
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

pub use small_ir::{CB, Element, Machine};

mod int8;
mod pixel;
pub use int8::{Dot, RowsAt};

/// A registered arch: its names, from the list at the end of this file,
/// and its numbers, from its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchParams {
    /// Short name, as used by `SMALL_ARCH`, `archs(...)` and `explain()`;
    /// also the arch's module in this crate.
    pub name: &'static str,
    /// The type implementing [`Simd`] in that module, also the [`ArchId`]
    /// variant.
    pub ident: &'static str,
    /// The blocking model's numbers, `cfg` and target features.
    pub machine: Machine,
}

/// Declares the registered arches, one `module: Type` line each, in order
/// of preference (best first) for run-time selection.
macro_rules! archs {
    ($($module:ident: $ty:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every registered architecture, in order of preference (best
        /// first) for run-time selection. `reference` is last: it runs
        /// everywhere.
        pub const ARCHS: &[ArchParams] = &[$(ArchParams {
            name: stringify!($module),
            ident: stringify!($ty),
            machine: $module::MACHINE,
        }),*];

        /// The registered arches' names, in the order of [`ARCHS`], each
        /// followed by a space.
        pub const NAMES: &str = concat!($(stringify!($module), " "),*);

        /// Identity of a registered architecture, one variant per entry of
        /// [`ARCHS`], in the same order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum ArchId {
            $($ty),*
        }

        impl ArchId {
            /// All registered arches, in the order of [`ARCHS`].
            pub const ALL: &'static [ArchId] = &[$(ArchId::$ty),*];

            /// True if this arch's code is compiled for the current target
            /// and the running CPU can execute it.
            pub fn available(self) -> bool {
                match self {
                    $(ArchId::$ty => $module::available()),*
                }
            }
        }
    };
}

impl ArchId {
    /// The arch's names and numbers.
    pub const fn params(self) -> &'static ArchParams {
        &ARCHS[self as usize]
    }

    /// Short name (`"avx2"`, ...).
    pub const fn name(self) -> &'static str {
        self.params().name
    }

    /// Looks an arch up by its short name.
    pub fn from_name(name: &str) -> Option<ArchId> {
        Self::ALL.iter().copied().find(|a| a.name() == name)
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

/// True where an arch with [`Machine::excludes_reference`] is available
/// (fixed at compile time for such an arch): the generated layers then
/// carry no `reference` kernels.
pub fn reference_excluded() -> bool {
    ArchId::ALL
        .iter()
        .any(|&a| a.params().machine.excludes_reference && a.available())
}

/// The primitive operations an arch offers to generated kernels, for one
/// element type ([`Simd::Elem`]): `f32` on the arch's own type (`Avx2`),
/// `i8` on [`Int8`] of it (`Int8<Avx2>`), so that a kernel names one type
/// `A` and calls `A::load`, `A::fma`, ... whatever its element type.
///
/// Accumulators (the output tile, the bias, partial sums) are vectors of
/// `LANES` [`Acc`]`<Self>`; activations and weights are [`Simd::Elem`]s.
/// For `f32` both are `f32`. Integer kernels need more than this common
/// part (a dot product of several `i8` pairs per lane, requantization in
/// STORE): those primitives are the trait [`Dot`] over it.
///
/// # Safety
///
/// All functions are `unsafe`, with one contract: the caller guarantees that the CPU supports
/// the arch (the generated code only calls them from a function compiled
/// with the arch's target features, entered after [`ArchId::available`])
/// and that every pointer is valid for `LANES` values of its type (one
/// for [`Simd::broadcast`]). No alignment beyond that of the type is
/// required.
#[allow(clippy::missing_safety_doc)] // one contract for all: see the trait docs
pub trait Simd {
    /// The element type of activations and weights.
    type Elem: Element;
    /// One vector register of `LANES` accumulators.
    type V: Copy;
    /// Accumulator lanes per vector.
    const LANES: usize;
    /// All lanes zero.
    unsafe fn zero() -> Self::V;
    /// All lanes `x`.
    unsafe fn splat(x: Acc<Self>) -> Self::V;
    /// Loads `LANES` consecutive accumulators.
    unsafe fn load(p: *const Acc<Self>) -> Self::V;
    /// Stores `LANES` consecutive accumulators.
    unsafe fn store(p: *mut Acc<Self>, v: Self::V);
    /// Loads one element into every lane.
    unsafe fn broadcast(p: *const Self::Elem) -> Self::V;
    /// `acc + a * b` (`f32`: fused, one rounding).
    unsafe fn fma(acc: Self::V, a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise maximum.
    unsafe fn max(a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise minimum.
    unsafe fn min(a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise sum.
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise product.
    unsafe fn mul(a: Self::V, b: Self::V) -> Self::V;
    /// [`Simd::load`] of the first lanes of a pixel `width` lanes wide:
    /// where that is less than `LANES` (a narrow tensor on x86-64, see
    /// `small_ir::geometry::NARROW`), its `width` values, then zeros, and
    /// nothing of the next pixel.
    #[inline(always)]
    unsafe fn load_px(p: *const Acc<Self>, width: usize) -> Self::V {
        if width >= Self::LANES {
            // SAFETY: the pixel holds the vector (the caller's guarantee).
            return unsafe { Self::load(p) };
        }
        const { assert!(Self::LANES <= crate::pixel::SCRATCH) };
        // SAFETY: the pixel holds `width` values; the scratch `LANES`.
        unsafe { Self::load(crate::pixel::gather(p, width).as_ptr()) }
    }
    /// [`Simd::store`] of a pixel `width` lanes wide: where that is less
    /// than `LANES`, only its `width` lanes.
    #[inline(always)]
    unsafe fn store_px(p: *mut Acc<Self>, v: Self::V, width: usize) {
        if width >= Self::LANES {
            // SAFETY: the pixel holds the vector (the caller's guarantee).
            return unsafe { Self::store(p, v) };
        }
        const { assert!(Self::LANES <= crate::pixel::SCRATCH) };
        // SAFETY: the scratch holds `LANES`, the pixel `width` values.
        unsafe { crate::pixel::write_through(p, width, |q| Self::store(q, v)) }
    }
    /// Each lane through `f`, one at a time: an activation without a
    /// vector form (LOGISTIC's `exp`), so the same bits on every arch.
    #[inline(always)]
    unsafe fn map(v: Self::V, f: fn(Acc<Self>) -> Acc<Self>) -> Self::V {
        const { assert!(Self::LANES <= 16, "a vector of at most 16 lanes") };
        let mut lanes = [Acc::<Self>::default(); 16];
        // SAFETY: `lanes` holds 16 >= LANES accumulators; the CPU supports
        // the arch (the caller's guarantee).
        unsafe { Self::store(lanes.as_mut_ptr(), v) };
        for x in &mut lanes[..Self::LANES] {
            *x = f(*x);
        }
        // SAFETY: as above.
        unsafe { Self::load(lanes.as_ptr()) }
    }
}

/// The accumulator type of arch primitives `S`.
pub type Acc<S> = <<S as Simd>::Elem as Element>::Acc;

/// The `i8` primitives of arch `A`: `Int8<Avx2>` implements [`Simd`] with
/// `Elem = i8` where `Avx2` implements it for `f32`. Never constructed; a
/// kernel only names the type.
#[derive(Debug, Clone, Copy)]
pub struct Int8<A>(core::marker::PhantomData<A>);

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

/// Compile-time check that an arch's `i8` primitives agree with the
/// numbers its `MACHINE` gives the packer and the blocking model.
macro_rules! check_dot {
    ($params:expr, $ty:ty) => {
        $crate::check_arch!($params, $ty);
        const _: () = {
            assert!(
                $params.int8_dot == <$ty as $crate::Dot>::DOT,
                "MACHINE.int8_dot must equal the Dot impl's DOT"
            );
            assert!(
                $params.int8_x_offset == <$ty as $crate::Dot>::X_OFFSET,
                "MACHINE.int8_x_offset must equal the Dot impl's X_OFFSET"
            );
            assert!(
                $params.int8_thin_dot == <$ty as $crate::Dot>::THIN_DOT,
                "MACHINE.int8_thin_dot must equal the Dot impl's THIN_DOT"
            );
            assert!(
                $params.int8_weight_min == <$ty as $crate::Dot>::WEIGHT_MIN,
                "MACHINE.int8_weight_min must equal the Dot impl's WEIGHT_MIN"
            );
        };
    };
}
pub(crate) use check_dot;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_consistent() {
        assert_eq!(ARCHS.len(), ArchId::ALL.len());
        for (p, id) in ARCHS.iter().zip(ArchId::ALL) {
            assert_eq!(p, id.params());
            assert_eq!(ArchId::from_name(p.name), Some(*id));
            assert_eq!(CB % p.machine.lanes, 0);
        }
        // `reference` runs everywhere but where NEON is the baseline.
        let here = !cfg!(target_arch = "aarch64");
        assert_eq!(ArchId::Reference.available(), here);
        assert_eq!(reference_excluded(), !here);
        assert!(ArchId::best_available().available());
    }
}

archs! {
    avx512: Avx512,
    avx2: Avx2,
    neon: Neon,
    cortex_m4: CortexM4,
    reference: Reference,
}
