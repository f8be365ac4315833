//! `fma_probe!()`: an FMA-bound loop per registered arch, for measuring
//! the machine's peak with the same primitives the kernels use (so a new
//! arch-def gets its probe by registration alone).

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

/// Expands to `pub fn fma_chains(arch, iters) -> Option<(f32, u64)>`:
/// runs `iters` rounds of independent FMA chains on `arch` and returns a
/// value derived from the result (to keep the work alive) and the number
/// of floating-point operations done, or `None` if `arch` is not compiled.
pub fn expand() -> TokenStream {
    let arms = arch_defs::ARCHS.iter().map(|a| {
        let cfg = crate::emit::cfg_of(a);
        let (module, ident) = (format_ident!("{}", a.name), format_ident!("{}", a.ident));
        let m = &a.machine;
        // Twice the chains needed to hide the latency, within the register file.
        let chains = (2 * m.fma_latency * m.fma_per_cycle).min(m.vector_regs - 2);
        let accs: Vec<_> = (0..chains).map(|i| format_ident!("c{}", i)).collect();
        let features = crate::emit::features_of(a);
        let flops = Literal::u64_unsuffixed((chains * m.lanes * 2) as u64);
        quote! {
            #cfg
            ::small_core::Arch::#ident => {
                #features
                unsafe fn chains(iters: u64) -> f32 {
                    use ::small_core::arch_defs::Simd as _;
                    type A = ::small_core::arch_defs::#module::#ident;
                    unsafe {
                        let a = A::splat(::core::hint::black_box(0.999_f32));
                        let b = A::splat(::core::hint::black_box(1e-3_f32));
                        #(let mut #accs = A::splat(1.0);)*
                        for _ in 0..iters {
                            #(#accs = A::fma(#accs, a, b);)*
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
        }
    });
    quote! {
        /// Runs `iters` rounds of independent FMA chains on `arch`; returns a
        /// value to keep the work alive and the floating-point operations
        /// done, or `None` if the arch cannot run here.
        pub fn fma_chains(arch: ::small_core::Arch, iters: u64) -> Option<(f32, u64)> {
            if !arch.available() {
                return None;
            }
            match arch {
                #(#arms)*
                #[allow(unreachable_patterns)]
                _ => None,
            }
        }
    }
}
