//! Per-arch code for measuring the machine, generated from the registered
//! arch list (`arch_defs::ARCHS`) so that a new arch-def gets it by
//! registration alone, with the same primitives and target features as
//! its kernels:
//!
//! - `fma_probe!()`: an FMA-bound loop per arch, for its single-core peak;
//! - `simd_dispatch!()`: runs code generic over `Simd` on any arch.

use arch_defs::ArchParams;
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

/// Independent FMA chains the peak probe runs on `a`, or `None` for a
/// portable arch (no `cfg`: the reference, compiled for the target's
/// baseline ISA, which on x86-64 has no FMA, so it has no FMA ceiling).
///
/// Enough chains for the latency three times over (latency x pipes FMAs
/// are in flight at the peak; more hides the loop and any issue jitter),
/// within the register file less the two operands: AVX-512 24, AVX2 14,
/// NEON 24. On Zen 5 (latency 4, 2 pipes) 8 chains already reach the peak
/// and 4 reach half of it.
fn chains(a: &ArchParams) -> Option<usize> {
    let m = &a.machine;
    if m.cfg.is_empty() {
        return None;
    }
    Some((3 * m.fma_latency * m.fma_per_cycle).min(m.vector_regs.saturating_sub(2)))
}

/// Expands to `pub fn fma_chains(arch) -> Option<usize>` and
/// `pub fn fma_run(arch, iters) -> Option<(f32, u64)>`: `fma_run` runs
/// `iters` rounds of `fma_chains(arch)` independent chains
/// `acc = acc * a + b` with the arch's `Simd::fma` and returns a value
/// that depends on every chain (to keep the work alive) and the number of
/// floating-point operations done (an FMA is 2), or `None` if `arch`
/// cannot run here or has no FMA probe.
pub fn fma_probe() -> TokenStream {
    let counts = arch_defs::ARCHS.iter().map(|a| {
        let ident = format_ident!("{}", a.ident);
        match chains(a) {
            Some(n) => quote!(::small_core::Arch::#ident => Some(#n),),
            None => quote!(::small_core::Arch::#ident => None,),
        }
    });
    let arms = arch_defs::ARCHS.iter().filter_map(|a| {
        let chains = chains(a)?;
        let cfg = crate::emit::cfg_of(a);
        let features = crate::emit::features_of(a);
        let (module, ident) = (format_ident!("{}", a.name), format_ident!("{}", a.ident));
        let accs: Vec<_> = (0..chains).map(|i| format_ident!("c{}", i)).collect();
        let flops = Literal::u64_unsuffixed((chains * a.machine.lanes * 2) as u64);
        Some(quote! {
            #cfg
            ::small_core::Arch::#ident => {
                // Safety: the CPU supports the arch.
                #features
                unsafe fn chains(iters: u64) -> f32 {
                    use ::small_core::arch_defs::Simd as _;
                    type A = ::small_core::arch_defs::#module::#ident;
                    // SAFETY: the caller guarantees the arch runs here;
                    // `out` holds 64 lanes, more than any arch's vector.
                    unsafe {
                        let a = A::splat(::core::hint::black_box(0.999_f32));
                        let b = A::splat(::core::hint::black_box(1e-3_f32));
                        #(let mut #accs = A::splat(1.0);)*
                        for _ in 0..iters {
                            // `b + acc * a`: the chain runs through the
                            // multiplicand, so no part of the FMA is
                            // loop-invariant.
                            #(#accs = A::fma(b, #accs, a);)*
                        }
                        let mut sum = A::zero();
                        #(sum = A::add(sum, #accs);)*
                        let mut out = [0.0f32; 64];
                        A::store(out.as_mut_ptr(), sum);
                        out[0]
                    }
                }
                // SAFETY: `arch` was checked available above.
                Some((unsafe { chains(iters) }, iters * #flops))
            }
        })
    });
    quote! {
        /// Independent FMA chains [`fma_run`] runs on `arch` (derived from
        /// its `Machine`: 3 x latency x pipes, within the registers), or
        /// `None` for a portable arch, which has no FMA ceiling.
        pub fn fma_chains(arch: ::small_core::Arch) -> Option<usize> {
            match arch {
                #(#counts)*
            }
        }

        /// Runs `iters` rounds of [`fma_chains`] independent chains
        /// `acc = acc * a + b` on `arch`; returns a value that depends on
        /// every chain and the floating-point operations done, or `None`
        /// if the arch cannot run here or has no FMA probe.
        pub fn fma_run(arch: ::small_core::Arch, iters: u64) -> Option<(f32, u64)> {
            if !arch.available() {
                return None;
            }
            match arch {
                #(#arms)*
                // The arms of other targets' arches are cfg'd out.
                #[allow(unreachable_patterns)]
                _ => {
                    let _ = iters;
                    None
                }
            }
        }
    }
}

/// Expands to a trait `SimdFn` (code generic over the arch's `Simd`) and
/// `pub fn simd_dispatch(arch, f) -> Option<F::Output>`, which runs `f`
/// on `arch` inside a function compiled with the arch's target features,
/// or returns `None` if `arch` cannot run here.
pub fn simd_dispatch() -> TokenStream {
    let arms = arch_defs::ARCHS.iter().map(|a| {
        let cfg = crate::emit::cfg_of(a);
        let features = crate::emit::features_of(a);
        let (module, ident) = (format_ident!("{}", a.name), format_ident!("{}", a.ident));
        quote! {
            #cfg
            ::small_core::Arch::#ident => {
                // Safety: the CPU supports the arch.
                #features
                unsafe fn run<F: SimdFn>(f: F) -> F::Output {
                    // SAFETY: the caller guarantees the arch runs here.
                    unsafe { f.run::<::small_core::arch_defs::#module::#ident>() }
                }
                // SAFETY: `arch` was checked available above.
                Some(unsafe { run(f) })
            }
        }
    });
    quote! {
        /// Code generic over an arch's primitives, run by
        /// [`simd_dispatch`] on any registered arch.
        pub trait SimdFn {
            /// What the code returns.
            type Output;
            /// Runs the code with arch `A`'s primitives. Implementations
            /// should be `#[inline(always)]`, so that they are compiled
            /// with the arch's target features, and must check any
            /// precondition of their own.
            ///
            /// # Safety
            /// The CPU supports `A`.
            unsafe fn run<A: ::small_core::arch_defs::Simd<Elem = f32>>(self) -> Self::Output;
        }

        /// Runs `f` with `arch`'s primitives, inside a function compiled
        /// with its target features; `None` if the arch cannot run here.
        pub fn simd_dispatch<F: SimdFn>(arch: ::small_core::Arch, f: F) -> Option<F::Output> {
            if !arch.available() {
                return None;
            }
            match arch {
                #(#arms)*
                // The arms of other targets' arches are cfg'd out.
                #[allow(unreachable_patterns)]
                _ => {
                    let _ = f;
                    None
                }
            }
        }
    }
}
