//! Parsing and validation of `#[layer(...)]` into a typed [`Spec`].
//!
//! Every problem is collected (not just the first) and reported as a
//! compile error spanned at the offending argument, saying what is valid.
//! Nothing here emits code.

use darling::ast::NestedMeta;
use darling::{Error, FromMeta};
use proc_macro2::Span;
use small_ir::{Activation, Dtype, LayerSpec, Padding, Reduction};
use syn::spanned::Spanned;
use syn::{Expr, Lit, UnOp};

/// A validated layer declaration: the layer, in the IR the runtime
/// shares, and the arches to generate kernels for.
#[derive(Debug, Clone)]
pub struct Spec {
    pub layer: LayerSpec,
    pub archs: Vec<&'static arch_defs::ArchParams>,
}

/// Widest filter the emitter unrolls (taps along the width are unrolled).
pub const MAX_FW: usize = 32;

/// Every argument `#[layer]` takes, with an example of each: the list
/// that unknown arguments are checked against, and the example that
/// error messages show. Keep in step with [`Args`].
const ARGS: [(&str, &str); 13] = [
    ("fh", "fh = 3"),
    ("fw", "fw = 3"),
    ("fc", "fc = 16"),
    ("k", "k = 32"),
    ("g", "g = 4"),
    ("stride", "stride = 2"),
    ("padding", "padding = same"),
    ("reduction", "reduction = max"),
    ("activation", "activation = relu"),
    ("channels", "channels = 64"),
    ("archs", "archs(reference, avx2)"),
    ("residual", "residual"),
    ("dtype", "dtype = f32"),
];

/// The example of argument `name`, e.g. "`fh = 3`".
fn example(name: &str) -> String {
    let e = ARGS.iter().find(|(n, _)| *n == name).map_or("", |(_, e)| e);
    format!("`{e}`")
}

/// The name of a meta item (`fh` in `fh = 3`), as written.
fn name_of(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// The value of `name = value`, or an error showing that form.
fn value_of(item: &syn::Meta) -> darling::Result<&Expr> {
    match item {
        syn::Meta::NameValue(nv) => Ok(&nv.value),
        _ => {
            let name = name_of(item.path());
            Err(
                Error::custom(format!("`{name}` takes a value: {}", example(&name)))
                    .with_span(item),
            )
        }
    }
}

/// A positive integer argument, with the span of its value.
#[derive(Debug, Clone, Copy)]
struct Size(usize, Span);

impl Size {
    /// Parses the value of argument `name` (named in the messages).
    fn parse(name: &str, expr: &Expr) -> darling::Result<Self> {
        let expected = || {
            Error::custom(format!(
                "`{name}` takes a positive integer literal, e.g. {}",
                example(name)
            ))
            .with_span(expr)
        };
        match expr {
            Expr::Lit(l) => match &l.lit {
                Lit::Int(i) => match i.base10_parse::<usize>() {
                    Ok(0) => Err(Error::custom(format!(
                        "`{name}` must be at least 1, e.g. {}",
                        example(name)
                    ))
                    .with_span(expr)),
                    Ok(v) => Ok(Size(v, expr.span())),
                    Err(_) => Err(Error::custom(format!(
                        "`{name}` must be a positive integer that fits in usize, e.g. {}",
                        example(name)
                    ))
                    .with_span(expr)),
                },
                _ => Err(expected()),
            },
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => Err(Error::custom(format!(
                "`{name}` cannot be negative: it takes a positive integer, e.g. {}",
                example(name)
            ))
            .with_span(expr)),
            Expr::Group(g) => Self::parse(name, &g.expr),
            _ => Err(expected()),
        }
    }
}

impl FromMeta for Size {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        Self::parse(&name_of(item.path()), value_of(item)?)
    }
}

/// `stride = 2` or `stride = (2, 1)` (height, width).
#[derive(Debug, Clone, Copy)]
struct Stride(Size, Size);

impl Stride {
    fn parse(name: &str, expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Tuple(t) if t.elems.len() == 2 => {
                let mut errors = Error::accumulator();
                let h = errors.handle(Size::parse(name, &t.elems[0]));
                let w = errors.handle(Size::parse(name, &t.elems[1]));
                errors.finish()?;
                Ok(Stride(h.unwrap(), w.unwrap()))
            }
            Expr::Tuple(t) => Err(Error::custom(format!(
                "`{name}` takes one stride, `{name} = 2`, or a (height, width) pair, \
                 `{name} = (2, 1)`; not {} values",
                t.elems.len()
            ))
            .with_span(expr)),
            Expr::Paren(p) => Self::parse(name, &p.expr),
            _ => {
                let s = Size::parse(name, expr)?;
                Ok(Stride(s, s))
            }
        }
    }
}

impl FromMeta for Stride {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        Self::parse(&name_of(item.path()), value_of(item)?)
    }
}

/// An identifier (or string) chosen from a fixed list: the word, its
/// span, and the argument it was given to.
#[derive(Debug, Clone)]
struct Word(String, Span, String);

impl Word {
    fn parse(name: &str, expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Path(p) if p.path.get_ident().is_some() => Ok(Word(
                p.path.get_ident().unwrap().to_string(),
                expr.span(),
                name.to_string(),
            )),
            Expr::Lit(l) => match &l.lit {
                Lit::Str(s) => Ok(Word(s.value(), expr.span(), name.to_string())),
                _ => Err(Self::expected(name, expr)),
            },
            Expr::Group(g) => Self::parse(name, &g.expr),
            _ => Err(Self::expected(name, expr)),
        }
    }

    fn expected(name: &str, expr: &Expr) -> Error {
        Error::custom(format!("`{name}` takes a name, e.g. {}", example(name))).with_span(expr)
    }

    /// The entry of `choices` this word names (case-insensitive), or an
    /// error listing the choices and suggesting the closest.
    fn pick<T: Copy>(&self, choices: &[(&str, T)]) -> darling::Result<T> {
        let lower = self.0.to_ascii_lowercase();
        if let Some((_, v)) = choices.iter().find(|(n, _)| *n == lower) {
            return Ok(*v);
        }
        let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
        Err(Error::custom(unknown_message(&self.2, &self.0, &names)).with_span(&self.1))
    }
}

/// A word argument's choices: `(name, value)`, names in lower case.
trait Choices: Copy + 'static {
    const CHOICES: &'static [(&'static str, Self)];
}

impl Choices for Padding {
    const CHOICES: &'static [(&'static str, Self)] =
        &[("same", Padding::Same), ("valid", Padding::Valid)];
}

/// `padding = same`, `padding = valid`, or explicit rows and columns,
/// `padding = (top, bottom, left, right)` (a TFLite PAD's order).
#[derive(Debug, Clone, Copy)]
struct PaddingArg(Padding, Span);

impl PaddingArg {
    fn parse(name: &str, expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Tuple(t) if t.elems.len() == 4 => {
                let mut errors = Error::accumulator();
                let v: Vec<usize> = (t.elems.iter())
                    .filter_map(|e| errors.handle(Self::amount(name, e)))
                    .collect();
                errors.finish()?;
                let p = Padding::Explicit {
                    top: v[0],
                    bottom: v[1],
                    left: v[2],
                    right: v[3],
                };
                Ok(PaddingArg(p, expr.span()))
            }
            Expr::Tuple(t) => Err(Error::custom(format!(
                "`{name}` takes `same`, `valid` or four amounts, \
                 `{name} = (top, bottom, left, right)`; not {} values",
                t.elems.len()
            ))
            .with_span(expr)),
            Expr::Group(g) => Self::parse(name, &g.expr),
            _ => match Word::parse(name, expr) {
                Ok(word) => word
                    .pick(Padding::CHOICES)
                    .map(|p| PaddingArg(p, expr.span())),
                Err(_) => Err(Error::custom(format!(
                    "`{name}` takes `same`, `valid` or explicit amounts \
                     `{name} = (top, bottom, left, right)`, e.g. `{name} = same`"
                ))
                .with_span(expr)),
            },
        }
    }

    /// One explicit amount: an integer literal, 0 allowed.
    fn amount(name: &str, expr: &Expr) -> darling::Result<usize> {
        match expr {
            Expr::Lit(syn::ExprLit {
                lit: Lit::Int(i), ..
            }) => i.base10_parse::<usize>().map_err(|_| {
                Error::custom(format!("`{name}` amounts must fit in usize")).with_span(expr)
            }),
            Expr::Group(g) => Self::amount(name, &g.expr),
            _ => Err(Error::custom(format!(
                "`{name}` amounts are integer literals of 0 or more, \
                 e.g. `{name} = (1, 1, 0, 2)` (top, bottom, left, right)"
            ))
            .with_span(expr)),
        }
    }
}

impl FromMeta for PaddingArg {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        Self::parse(&name_of(item.path()), value_of(item)?)
    }
}

impl Choices for Reduction {
    const CHOICES: &'static [(&'static str, Self)] = &[
        ("fma", Reduction::Fma),
        ("max", Reduction::Max),
        ("avg", Reduction::Avg),
    ];
}

impl Choices for Dtype {
    const CHOICES: &'static [(&'static str, Self)] = &[("f32", Dtype::F32), ("i8", Dtype::I8)];
}

impl Choices for Activation {
    const CHOICES: &'static [(&'static str, Self)] = &[
        ("none", Activation::None),
        ("relu", Activation::Relu),
        ("relu6", Activation::Relu6),
        ("logistic", Activation::Logistic),
    ];
}

/// A word argument resolved to its choice while darling reads the
/// arguments, so that an unknown word is reported together with every
/// other malformed argument.
#[derive(Debug, Clone, Copy)]
struct Choice<T>(T, Span);

impl<T: Choices> FromMeta for Choice<T> {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        let word = Word::parse(&name_of(item.path()), value_of(item)?)?;
        word.pick(T::CHOICES).map(|v| Choice(v, word.1))
    }
}

/// `archs(reference, avx2)`: the listed paths and the span of `archs`.
#[derive(Debug, Clone)]
struct Archs(Vec<syn::Path>, Span);

impl FromMeta for Archs {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        match item {
            syn::Meta::List(_) => {
                let list = darling::util::PathList::from_meta(item)?;
                Ok(Archs(list.to_vec(), item.path().span()))
            }
            _ => Err(Error::custom(format!(
                "`archs` takes a list of arch names, e.g. {}",
                example("archs")
            ))
            .with_span(item)),
        }
    }
}

/// "unknown reduction `fam`; did you mean `fma`? valid: `fma`, `max`", or
/// without a close match "unknown reduction `x`; valid: `fma`, `max`".
fn unknown_message(what: &str, given: &str, valid: &[&str]) -> String {
    let list = valid
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let closest = valid
        .iter()
        .map(|v| (edit_distance(&given.to_ascii_lowercase(), v), *v))
        .min()
        .filter(|(d, _)| *d <= 2)
        .map(|(_, v)| format!("; did you mean `{v}`? valid:"))
        .unwrap_or_else(|| "; valid:".to_string());
    format!("unknown {what} `{given}`{closest} {list}")
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + (ca != *cb) as usize)
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A bare argument such as `residual`, which takes no value.
#[derive(Debug, Clone, Copy)]
struct Bare;

impl FromMeta for Bare {
    fn from_word() -> darling::Result<Self> {
        Ok(Bare)
    }
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        match item {
            syn::Meta::Path(_) => Ok(Bare),
            other => {
                let name = name_of(other.path());
                Err(
                    Error::custom(format!("`{name}` takes no value: write just `{name}`"))
                        .with_span(other),
                )
            }
        }
    }
}

/// The raw arguments, as darling reads them. Unknown and repeated names
/// are reported by [`check_names`] first, with the list of valid ones.
#[derive(Debug, FromMeta)]
struct Args {
    fh: Option<Size>,
    fw: Option<Size>,
    fc: Option<Size>,
    k: Option<Size>,
    g: Option<Size>,
    stride: Option<Stride>,
    padding: Option<PaddingArg>,
    reduction: Option<Choice<Reduction>>,
    activation: Option<Choice<Activation>>,
    channels: Option<Size>,
    archs: Option<Archs>,
    residual: Option<Bare>,
    dtype: Option<Choice<Dtype>>,
}

/// Reports bare literals, unknown argument names (suggesting the closest
/// and listing all) and arguments given twice; returns the items darling
/// should read: each known argument's first occurrence.
fn check_names(items: &[NestedMeta], errors: &mut darling::error::Accumulator) -> Vec<NestedMeta> {
    let valid: Vec<&str> = ARGS.iter().map(|(n, _)| *n).collect();
    let mut seen: Vec<String> = Vec::new();
    let mut kept = Vec::new();
    for item in items {
        let path = match item {
            NestedMeta::Meta(m) => m.path(),
            NestedMeta::NameValueInvalidExpr(v) => &v.path,
            NestedMeta::Lit(l) => {
                errors.push(
                    Error::custom("expected `name = value` arguments, e.g. `fh = 3, fw = 3`")
                        .with_span(l),
                );
                continue;
            }
        };
        let name = name_of(path);
        if !valid.contains(&name.as_str()) {
            errors.push(Error::custom(unknown_message("argument", &name, &valid)).with_span(path));
        } else if seen.contains(&name) {
            errors.push(
                Error::custom(format!("`{name}` is given twice; give each argument once"))
                    .with_span(path),
            );
        } else if let NestedMeta::NameValueInvalidExpr(v) = item {
            errors.push(
                Error::custom(format!("`{name}` takes a value like {}", example(&name)))
                    .with_span(&v.value),
            );
        } else {
            seen.push(name);
            kept.push(item.clone());
        }
    }
    kept
}

const REQUIRED: [(&str, &str); 4] = [
    ("fh", "filter height, e.g. `fh = 3`"),
    ("fw", "filter width, e.g. `fw = 3`"),
    (
        "fc",
        "input channels per group, e.g. `fc = 16` (1 for depthwise and pooling)",
    ),
    (
        "k",
        "output channels per group, e.g. `k = 32` (1 for depthwise and pooling)",
    ),
];

/// Parses and validates the attribute's arguments.
pub fn parse(args: proc_macro2::TokenStream, attr_span: Span) -> darling::Result<Spec> {
    let items = NestedMeta::parse_meta_list(args)?;
    // Malformed arguments first: validating the rest would only cascade.
    let mut errors = Error::accumulator();
    let items = check_names(&items, &mut errors);
    let a = errors.handle(Args::from_list(&items));
    errors.finish()?;
    // `finish` returned no error, so `handle` kept the parsed arguments.
    let Some(a) = a else {
        return Err(Error::custom("the arguments could not be read").with_span(&attr_span));
    };
    let mut errors = Error::accumulator();

    let given = [a.fh, a.fw, a.fc, a.k];
    for ((name, help), v) in REQUIRED.iter().zip(given) {
        if v.is_none() {
            errors.push(Error::custom(format!("missing `{name}`: {help}")).with_span(&attr_span));
        }
    }
    let val = |s: Option<Size>, d: usize| s.map_or(d, |s| s.0);
    let (fh, fw, fc, k, g) = (
        val(a.fh, 1),
        val(a.fw, 1),
        val(a.fc, 1),
        val(a.k, 1),
        val(a.g, 1),
    );
    let (sh, sw) = a.stride.map_or((1, 1), |s| (s.0.0, s.1.0));

    let padding = a.padding.map_or(Padding::Valid, |c| c.0);
    let reduction = a.reduction.map_or(Reduction::Fma, |c| c.0);
    let activation = a.activation.map_or(Activation::None, |c| c.0);
    let dtype = a.dtype.map_or(Dtype::F32, |c| c.0);
    if let Some(fw) = a.fw.filter(|s| s.0 > MAX_FW) {
        errors.push(
            Error::custom(format!(
                "`fw = {}` is wider than the kernel unrolls: `fw` must be at most {MAX_FW}",
                fw.0
            ))
            .with_span(&fw.1),
        );
    }
    if let Some(PaddingArg(p @ Padding::Explicit { .. }, span)) = a.padding
        && reduction != Reduction::Fma
        && !p.is_none(fh, fw)
    {
        errors.push(
            Error::custom(
                "explicit padding is for layers with weights (a PAD's zeros before a \
                     convolution); a pool takes `padding = same` or `padding = valid`, and a \
                     PAD before a pool is a padding step of its own (`fh = 1, fw = 1, fc = 1, \
                     k = 1, g = <channels>, padding = (top, bottom, left, right)`)",
            )
            .with_span(&span),
        );
    }
    if let Some(Choice(Activation::Logistic, span)) = a.activation
        && (reduction != Reduction::Fma || a.residual.is_some())
    {
        errors.push(
            Error::custom(
                "`activation = logistic` is for layers with weights and no residual (TFLite's \
                 LOGISTIC is a 1x1 depthwise layer of weight 1 here: `fh = 1, fw = 1, fc = 1, \
                 k = 1, g = <channels>, activation = logistic`); valid here: `none`, `relu`, \
                 `relu6`",
            )
            .with_span(&span),
        );
    }
    if reduction != Reduction::Fma {
        for (name, v) in [("fc", a.fc), ("k", a.k)] {
            if let Some(s) = v.filter(|s| s.0 != 1) {
                errors.push(
                    Error::custom(format!(
                        "`reduction = {}` reduces within one channel: `{name}` must be 1 \
                         (use `fc = 1, k = 1, g = <channels>`)",
                        if reduction == Reduction::Max {
                            "max"
                        } else {
                            "avg"
                        }
                    ))
                    .with_span(&s.1),
                );
            }
        }
    }
    if let Some(c) = a.channels.filter(|c| c.0 != g * fc) {
        errors.push(
            Error::custom(format!(
                "`channels = {}` disagrees with `g * fc` = {g} * {fc} = {}: \
                 write `channels = {}` or change `g` or `fc`",
                c.0,
                g * fc,
                g * fc
            ))
            .with_span(&c.1),
        );
    }
    let archs = match &a.archs {
        None => arch_defs::ARCHS.iter().collect(),
        Some(Archs(list, archs_span)) => {
            let names: Vec<&str> = arch_defs::ARCHS.iter().map(|p| p.name).collect();
            let mut picked = Vec::new();
            let mut unknown = false;
            for path in list {
                let name = name_of(path);
                match arch_defs::ARCHS.iter().find(|p| p.name == name) {
                    Some(p) if !picked.contains(&p) => picked.push(p),
                    Some(_) => errors.push(
                        Error::custom(format!("arch `{name}` is listed twice; list it once"))
                            .with_span(path),
                    ),
                    None => {
                        unknown = true;
                        errors.push(
                            Error::custom(unknown_message("arch", &name, &names)).with_span(path),
                        )
                    }
                }
            }
            // An unknown name may have been meant as `reference`: don't pile on.
            if !unknown && !picked.iter().any(|p| p.name == "reference") {
                let fixed = std::iter::once("reference")
                    .chain(picked.iter().map(|p| p.name))
                    .collect::<Vec<_>>()
                    .join(", ");
                errors.push(
                    Error::custom(format!(
                        "`archs` must include `reference`, the fallback that runs everywhere: \
                         `archs({fixed})`"
                    ))
                    .with_span(archs_span),
                );
            }
            picked
        }
    };
    errors.finish()?;
    let layer = LayerSpec {
        fh,
        fw,
        fc,
        k,
        g,
        sh,
        sw,
        padding,
        reduction,
        activation,
        residual: a.residual.is_some(),
        dtype,
    };
    Ok(Spec { layer, archs })
}

/// Checks that the item is a unit struct without generics.
pub fn check_item(item: &syn::Item) -> darling::Result<&syn::ItemStruct> {
    const HELP: &str =
        "`#[layer]` goes on a unit struct, e.g. `pub struct Conv3x3;`: it generates the fields";
    match item {
        syn::Item::Struct(s) => {
            if !matches!(s.fields, syn::Fields::Unit) {
                return Err(
                    Error::custom(format!("{HELP}; remove these fields")).with_span(&s.fields)
                );
            }
            if let Some(p) = s.generics.params.first() {
                // Spanned at the parameter's name (`T`, `'a`, `N`): a span
                // covering `<...>` would show only `<` on stable.
                let span = match p {
                    syn::GenericParam::Type(t) => t.ident.span(),
                    syn::GenericParam::Lifetime(l) => l.lifetime.span(),
                    syn::GenericParam::Const(c) => c.ident.span(),
                };
                return Err(Error::custom(format!(
                    "{HELP}; generic parameters are not supported, remove them"
                ))
                .with_span(&span));
            }
            if let Some(w) = &s.generics.where_clause {
                return Err(Error::custom(format!(
                    "{HELP}; `where` clauses are not supported, remove it"
                ))
                .with_span(&w.where_token));
            }
            Ok(s)
        }
        syn::Item::Enum(e) => {
            Err(Error::custom(format!("{HELP}, not an enum")).with_span(&e.enum_token))
        }
        syn::Item::Union(u) => {
            Err(Error::custom(format!("{HELP}, not a union")).with_span(&u.union_token))
        }
        other => Err(Error::custom(HELP).with_span(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn every_listed_argument_is_read() {
        let spec = parse(
            quote!(
                fh = 2,
                fw = 2,
                fc = 1,
                k = 1,
                g = 4,
                stride = (2, 1),
                padding = "SAME",
                reduction = max,
                activation = relu6,
                channels = 4,
                archs(reference),
                residual,
                dtype = f32
            ),
            Span::call_site(),
        )
        .expect("valid");
        let (archs, spec) = (spec.archs, spec.layer);
        assert_eq!(
            (spec.fh, spec.fw, spec.g, spec.sh, spec.sw),
            (2, 2, 4, 2, 1)
        );
        assert_eq!(spec.padding, Padding::Same);
        assert_eq!(spec.reduction, Reduction::Max);
        assert_eq!(spec.activation, Activation::Relu6);
        assert_eq!(spec.dtype, Dtype::F32);
        assert_eq!(archs.len(), 1);
        assert!(spec.residual);
        // The same names as `ARGS`, so the unknown-argument check and
        // `Args` agree.
        let used = [
            "fh",
            "fw",
            "fc",
            "k",
            "g",
            "stride",
            "padding",
            "reduction",
            "activation",
            "channels",
            "archs",
            "residual",
            "dtype",
        ];
        assert_eq!(ARGS.map(|(n, _)| n), used);
    }

    #[test]
    fn unknown_words_suggest_only_close_matches() {
        assert_eq!(
            unknown_message("reduction", "fam", &["fma", "max", "avg"]),
            "unknown reduction `fam`; did you mean `fma`? valid: `fma`, `max`, `avg`"
        );
        assert_eq!(
            unknown_message("reduction", "sum", &["fma", "max"]),
            "unknown reduction `sum`; valid: `fma`, `max`"
        );
    }

    #[test]
    fn malformed_arguments_are_all_reported() {
        let err = parse(
            quote!(
                fh = 0,
                fw = 3,
                fw = 4,
                fc = x,
                k = 1,
                bogus = 1,
                padding = sme
            ),
            Span::call_site(),
        )
        .unwrap_err();
        assert_eq!(err.len(), 5, "{err}");
    }
}
