//! `#[layer]`: turns a one-line layer declaration into fully unrolled
//! kernels for every registered arch plus the loop nest that drives them.
//!
//! Pipeline, one module per step: `spec` parses and validates the
//! attribute into the layer IR (`small_ir::LayerSpec`; every error
//! spanned at its argument), `small_ir::blocking` derives the register
//! tile from each arch-def's numbers, `emit` writes the code. See the small-rs README for the user-facing contract.

use proc_macro::TokenStream;

mod emit;
mod probe;
mod spec;
mod tflite;

/// A `.tflite` file's graph as a `model!` program, generated at compile
/// time: `tflite_model!(pub Resnet8 = "models/pretrainedResnet.tflite");`
/// declares one `#[layer]` per operator (a residual ADD fused into its
/// convolution) and the struct `Resnet8` wiring them as the file does,
/// exactly what `small-codegen FILE --rust Resnet8` prints. The path is
/// relative to the crate's `Cargo.toml`; the crate rebuilds when the file
/// changes. The weights load at run time (`Resnet8::load(&file, arch)`,
/// which checks the graph again), from the file or from the copy the
/// program embeds, `Resnet8::FILE` (no file system needed:
/// `Model::parse(Resnet8::FILE)`). A file that cannot be read or mapped is
/// a compile error at the path, naming the operator, its tensors and
/// what is supported.
#[proc_macro]
pub fn tflite_model(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as tflite::Input);
    tflite::expand(input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Declares a layer in SMaLL's abstract-layer terms on a unit struct.
///
/// ```ignore
/// #[layer(fh = 3, fw = 3, fc = 16, k = 32, stride = 2, padding = same, activation = relu)]
/// pub struct Conv3x3s2;
/// ```
///
/// Arguments (the README's table; `small_core::layer` has a tested example):
///
/// | argument | meaning | default |
/// | --- | --- | --- |
/// | `fh`, `fw` | filter height and width (`fw` ≤ 32: its taps are unrolled) | required |
/// | `fc` | input channels per group | required |
/// | `k` | output channels per group | required |
/// | `g` | groups; input channels = `g * fc`, output channels = `g * k` | 1 |
/// | `stride` | `2` or `(sh, sw)` | 1 |
/// | `padding` | `same` or `valid`, exactly TensorFlow's semantics | `valid` |
/// | `reduction` | `fma` (weighted sum), `max` or `avg` (within one channel; `avg` divides by the valid taps, as TensorFlow) | `fma` |
/// | `activation` | `none`, `relu`, `relu6`, fused into the kernel's store | `none` |
/// | `channels` | optional check that `g * fc` equals it | — |
/// | `residual` | add a tensor of the output's shape before the activation: `forward_add(x, skip, y)` (and `forward_add_in_place(x, y)`) | off |
/// | `archs(...)` | generate only these arches (must include `reference`) | all |
/// | `dtype` | element type: `f32`, or `i8` (TFLite's int8 scheme, bit-exact) | `f32` |
///
/// Every invalid declaration is a compile error at the argument, saying
/// what would be valid. The struct gets `SPEC`, `IN_CHANNELS`,
/// `OUT_CHANNELS`, `WEIGHTS_LEN`, `BLOCKING`, `explain()`, `new` /
/// `with_arch` (with `alloc`), `with_arch_in` (caller-provided storage,
/// sized by `packed_len`), `output_shape`, `alloc_output` and `forward`
/// (`forward_add` for residual layers); layers without weights (`max`,
/// `avg`) take none.
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

/// Expands to `fma_chains(arch)` and `fma_run(arch, iters)`: the chain
/// count derived from each registered arch's `Machine` and an FMA-bound
/// loop per arch with its primitives and target features. The machine's
/// FMA peak probe (`small_examples::peak`, used by the main job and the
/// bench) times it. Not part of the library's API.
#[doc(hidden)]
#[proc_macro]
pub fn fma_probe(_input: TokenStream) -> TokenStream {
    probe::fma_probe().into()
}

/// Expands to a trait `SimdFn` (code generic over the arch's `Simd`) and
/// `simd_dispatch(arch, f)`, which runs it on any registered arch inside
/// a function compiled with the arch's target features (the bench's
/// bandwidth probe). Not part of the library's API.
#[doc(hidden)]
#[proc_macro]
pub fn simd_dispatch(_input: TokenStream) -> TokenStream {
    probe::simd_dispatch().into()
}
