//! `#[layer]`: placeholder until the generator lands.
use proc_macro::TokenStream;

/// Declares a layer (see the small-rs README).
#[proc_macro_attribute]
pub fn layer(_args: TokenStream, item: TokenStream) -> TokenStream {
    item
}
