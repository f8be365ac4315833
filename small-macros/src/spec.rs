//! Parsing and validation of `#[layer(...)]` into a typed [`Spec`].
//!
//! Every problem is collected (not just the first) and reported as a
//! compile error spanned at the offending argument, saying what is valid.
//! Nothing here emits code.

use darling::ast::NestedMeta;
use darling::{Error, FromMeta};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, Lit, UnOp};

/// A validated layer declaration.
#[derive(Debug, Clone)]
pub struct Spec {
    pub fh: usize,
    pub fw: usize,
    pub fc: usize,
    pub k: usize,
    pub g: usize,
    pub sh: usize,
    pub sw: usize,
    pub padding: Padding,
    pub reduction: Reduction,
    pub activation: Activation,
    /// Names of the arch-defs to generate kernels for.
    pub archs: Vec<&'static arch_defs::ArchParams>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Padding {
    Same,
    Valid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    Fma,
    Max,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    None,
    Relu,
    Relu6,
}

/// Widest filter the emitter unrolls (taps along the width are unrolled).
pub const MAX_FW: usize = 32;

impl Spec {
    pub fn in_channels(&self) -> usize {
        self.g * self.fc
    }
    pub fn out_channels(&self) -> usize {
        self.g * self.k
    }
    /// Channelwise (depthwise, pooling) rather than channel-mixing.
    pub fn channelwise(&self) -> bool {
        self.fc == 1 && self.k == 1
    }
}

/// A positive integer argument, with the span of its value.
#[derive(Debug, Clone, Copy)]
struct Size(usize, Span);

impl FromMeta for Size {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Lit(l) => match &l.lit {
                Lit::Int(i) => match i.base10_parse::<usize>() {
                    Ok(0) => Err(Error::custom("must be at least 1").with_span(expr)),
                    Ok(v) => Ok(Size(v, expr.span())),
                    Err(_) => Err(
                        Error::custom("must be a positive integer that fits in usize")
                            .with_span(expr),
                    ),
                },
                _ => Err(
                    Error::custom("expected a positive integer literal, e.g. `3`").with_span(expr),
                ),
            },
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => {
                Err(Error::custom("must be a positive integer, not negative").with_span(expr))
            }
            Expr::Group(g) => Self::from_expr(&g.expr),
            _ => {
                Err(Error::custom("expected a positive integer literal, e.g. `3`").with_span(expr))
            }
        }
    }
}

/// `stride = 2` or `stride = (2, 1)` (height, width).
#[derive(Debug, Clone, Copy)]
struct Stride(Size, Size);

impl FromMeta for Stride {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Tuple(t) if t.elems.len() == 2 => Ok(Stride(
                Size::from_expr(&t.elems[0])?,
                Size::from_expr(&t.elems[1])?,
            )),
            Expr::Tuple(_) => Err(Error::custom(
                "expected one stride `stride = 2` or a pair `stride = (2, 1)`",
            )
            .with_span(expr)),
            Expr::Paren(p) => Self::from_expr(&p.expr),
            _ => {
                let s = Size::from_expr(expr)?;
                Ok(Stride(s, s))
            }
        }
    }
}

/// An identifier (or string) chosen from a fixed list.
#[derive(Debug, Clone)]
struct Word(String, Span);

impl FromMeta for Word {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Path(p) if p.path.get_ident().is_some() => {
                Ok(Word(p.path.get_ident().unwrap().to_string(), expr.span()))
            }
            Expr::Lit(l) => match &l.lit {
                Lit::Str(s) => Ok(Word(s.value(), expr.span())),
                _ => Err(Error::custom("expected a name, e.g. `same`").with_span(expr)),
            },
            Expr::Group(g) => Self::from_expr(&g.expr),
            _ => Err(Error::custom("expected a name, e.g. `same`").with_span(expr)),
        }
    }
}

impl Word {
    /// The entry of `choices` this word names (case-insensitive), or an
    /// error listing the choices and suggesting the closest.
    fn pick<T: Copy>(&self, what: &str, choices: &[(&str, T)]) -> darling::Result<T> {
        let lower = self.0.to_ascii_lowercase();
        if let Some((_, v)) = choices.iter().find(|(n, _)| *n == lower) {
            return Ok(*v);
        }
        let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
        Err(Error::custom(unknown_message(what, &self.0, &names)).with_span(&self.1))
    }
}

/// "unknown reduction `fam`; did you mean `fma`? valid: `fma`, `max`".
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
        .map(|(_, v)| format!("; did you mean `{v}`?"))
        .unwrap_or_default();
    format!("unknown {what} `{given}`{closest} valid: {list}")
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

/// The raw arguments, as darling reads them (duplicates and unknown names
/// are reported by darling, with a suggestion).
#[derive(Debug, FromMeta)]
struct Args {
    fh: Option<Size>,
    fw: Option<Size>,
    fc: Option<Size>,
    k: Option<Size>,
    g: Option<Size>,
    stride: Option<Stride>,
    padding: Option<Word>,
    reduction: Option<Word>,
    activation: Option<Word>,
    channels: Option<Size>,
    archs: Option<darling::util::PathList>,
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
    let a = Args::from_list(&items)?;
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

    let padding = a
        .padding
        .as_ref()
        .map(|w| {
            errors.handle(w.pick(
                "padding",
                &[("same", Padding::Same), ("valid", Padding::Valid)],
            ))
        })
        .unwrap_or(Some(Padding::Valid));
    let reduction = a
        .reduction
        .as_ref()
        .map(|w| {
            errors.handle(w.pick(
                "reduction",
                &[("fma", Reduction::Fma), ("max", Reduction::Max)],
            ))
        })
        .unwrap_or(Some(Reduction::Fma));
    let activation = a
        .activation
        .as_ref()
        .map(|w| {
            let choices = [
                ("none", Activation::None),
                ("relu", Activation::Relu),
                ("relu6", Activation::Relu6),
            ];
            errors.handle(w.pick("activation", &choices))
        })
        .unwrap_or(Some(Activation::None));

    if let Some(fw) = a.fw.filter(|s| s.0 > MAX_FW) {
        errors.push(
            Error::custom(format!(
                "`fw = {}` is wider than the {MAX_FW} taps the kernel unrolls",
                fw.0
            ))
            .with_span(&fw.1),
        );
    }
    if reduction == Some(Reduction::Max) {
        for (name, v) in [("fc", a.fc), ("k", a.k)] {
            if let Some(s) = v.filter(|s| s.0 != 1) {
                errors.push(
                    Error::custom(format!(
                        "`reduction = max` reduces within one channel: `{name}` must be 1 \
                         (use `fc = 1, k = 1, g = <channels>`)"
                    ))
                    .with_span(&s.1),
                );
            }
        }
    }
    if let Some(c) = a.channels.filter(|c| c.0 != g * fc) {
        errors.push(
            Error::custom(format!(
                "`channels = {}` but `g * fc` = {g} * {fc} = {}; make them agree",
                c.0,
                g * fc
            ))
            .with_span(&c.1),
        );
    }
    let archs = match &a.archs {
        None => arch_defs::ARCHS.iter().collect(),
        Some(list) => {
            let names: Vec<&str> = arch_defs::ARCHS.iter().map(|p| p.name).collect();
            let mut picked = Vec::new();
            for path in list.iter() {
                let name = path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                match arch_defs::ARCHS.iter().find(|p| p.name == name) {
                    Some(p) if !picked.contains(&p) => picked.push(p),
                    Some(_) => errors
                        .push(Error::custom(format!("arch `{name}` listed twice")).with_span(path)),
                    None => errors.push(
                        Error::custom(unknown_message("arch", &name, &names)).with_span(path),
                    ),
                }
            }
            if !picked.iter().any(|p| p.name == "reference") && !picked.is_empty() {
                errors.push(
                    Error::custom(
                        "`archs` must include `reference`: it is the fallback that runs everywhere",
                    )
                    .with_span(&list.first().map(|p| p.span()).unwrap_or(attr_span)),
                );
            }
            picked
        }
    };
    errors.finish()?;
    Ok(Spec {
        fh,
        fw,
        fc,
        k,
        g,
        sh,
        sw,
        padding: padding.unwrap_or(Padding::Valid),
        reduction: reduction.unwrap_or(Reduction::Fma),
        activation: activation.unwrap_or(Activation::None),
        archs,
    })
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
            if !s.generics.params.is_empty() || s.generics.where_clause.is_some() {
                return Err(
                    Error::custom(format!("{HELP}; generic parameters are not supported"))
                        .with_span(&s.generics),
                );
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
