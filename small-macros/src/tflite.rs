//! `tflite_model!`: a `.tflite` file's graph as a `model!` program, at
//! compile time. The mapping and the source are `small-codegen`'s (the
//! same the `small-codegen` binary prints); this module reads the file,
//! turns its errors into compile errors spanned at the path, and makes
//! the build depend on the file.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Ident, LitStr, Token, Visibility};

/// `#[attrs] vis Name = "path.tflite"`.
pub struct Input {
    attrs: Vec<Attribute>,
    vis: Visibility,
    name: Ident,
    path: LitStr,
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let name = input.parse()?;
        input.parse::<Token![=]>()?;
        let path = input.parse()?;
        let _ = input.parse::<Option<Token![;]>>()?;
        Ok(Input {
            attrs,
            vis,
            name,
            path,
        })
    }
}

pub fn expand(input: Input) -> syn::Result<TokenStream> {
    let Input {
        attrs,
        vis,
        name,
        path,
    } = input;
    let error = |msg: String| syn::Error::new(path.span(), msg);
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let full = std::path::Path::new(&dir).join(path.value());
    // Messages name the path as written: the directory is the user's.
    let shown = path.value();
    let bytes = std::fs::read(&full).map_err(|e| {
        error(format!(
            "cannot read `{shown}` ({e}); the path is relative to the crate's Cargo.toml"
        ))
    })?;
    let file = small_tflite::Model::parse(&bytes).map_err(|e| error(format!("`{shown}`: {e}")))?;
    let program =
        small_codegen::Program::from_file(&file).map_err(|e| error(format!("`{shown}`: {e}")))?;
    let source: TokenStream = program
        .source(&name.to_string())
        .parse()
        .map_err(|e| error(format!("generated source does not parse: {e}")))?;
    let module = format_ident!("__small_tflite_{}", name);
    let full = full.to_string_lossy().into_owned();
    Ok(quote! {
        #[doc(hidden)]
        #[allow(non_snake_case)]
        mod #module {
            #source
        }
        #(#attrs)*
        #vis use #module::#name;
        impl #name {
            /// The `.tflite` file this program was generated from, embedded
            /// (in the binary only if used): weights without a file system,
            /// `small_core::load::tflite::Model::parse(Self::FILE)`. Also
            /// what makes the crate rebuild when the file changes.
            pub const FILE: &'static [u8] = include_bytes!(#full);
        }
    })
}
