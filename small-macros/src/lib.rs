//! `#[layer]`: turns a one-line layer declaration into fully unrolled
//! kernels for every registered arch plus the loop nest that drives them.
//!
//! Pipeline, one module per step: `spec` parses and validates the
//! attribute (every error spanned at its argument), `blocking` derives
//! the register tile from each arch-def's numbers, `emit` writes the
//! code. See the small-rs README for the user-facing contract.

use proc_macro::TokenStream;

mod blocking;
mod emit;
mod probe;
mod spec;

/// Declares a layer in SMaLL's abstract-layer terms on a unit struct.
///
/// ```ignore
/// #[layer(fh = 3, fw = 3, fc = 16, k = 32, stride = 2, padding = same, activation = relu)]
/// pub struct Conv3x3s2;
/// ```
///
/// Arguments: `fh`, `fw`, `fc`, `k` (required), `g` (groups, default 1),
/// `stride` (`2` or `(sh, sw)`, default 1), `padding` (`same` | `valid`,
/// default `valid`), `reduction` (`fma` | `max`, default `fma`),
/// `activation` (`none` | `relu` | `relu6`, default `none`), `channels`
/// (optional check that `g * fc` equals it), `archs(...)` (restrict the
/// arches generated; must include `reference`).
#[proc_macro_attribute]
pub fn layer(args: TokenStream, item: TokenStream) -> TokenStream {
    let attr_span = proc_macro2::Span::call_site();
    let item = match syn::parse::<syn::Item>(item) {
        Ok(item) => item,
        Err(e) => return e.to_compile_error().into(),
    };
    let parsed = spec::parse(args.into(), attr_span);
    let checked = spec::check_item(&item);
    match (parsed, checked) {
        (Ok(spec), Ok(s)) => emit::layer(&spec, s).into(),
        (p, c) => {
            let mut errors = darling::Error::accumulator();
            errors.handle(p);
            errors.handle(c);
            match errors.finish() {
                Err(e) => e.write_errors().into(),
                Ok(()) => TokenStream::new(),
            }
        }
    }
}

/// Expands to `fma_chains(arch, iters)`, an FMA-bound loop per registered
/// arch, used by `small_core::probe` to measure the machine's peak.
#[proc_macro]
pub fn fma_probe(_input: TokenStream) -> TokenStream {
    probe::expand().into()
}
