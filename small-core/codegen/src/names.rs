//! Names of the generated source: each layer's field after its kind
//! (`conv`, `dw3`, `pw3`, `fc`), each distinct declaration's struct after
//! its geometry (`Conv10x4S2C1To64`, `Dw3x3C64`, `Pw64To64`,
//! `PadT0B1L0R1C8`), so that the
//! printed program reads like a hand-written one.

use crate::program::{Layer, Program};
use small_ir::{LayerSpec, Padding, Reduction};

/// The names of one layer in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    /// The `model!` field (`dw3`).
    pub field: String,
    /// The `#[layer]` struct it uses (`Dw3x3C64`), shared by every layer
    /// of the same declaration; `concat` for a concatenation.
    pub ty: String,
}

/// What a layer computes, as a field prefix.
fn kind(l: &Layer) -> &'static str {
    let Some(s) = &l.spec else {
        return "concat";
    };
    if l.operators.starts_with("ADD") {
        "add"
    } else if l.operators.starts_with("RELU") {
        "relu"
    } else if l.operators.starts_with("LOGISTIC") {
        "logistic"
    } else if l.operators.starts_with("PAD") {
        "pad"
    } else if l.operators.starts_with("MEAN") {
        "mean"
    } else if s.reduction == Reduction::Max {
        "maxpool"
    } else if s.reduction == Reduction::Avg {
        "avgpool"
    } else if s.g > 1 && s.fc == 1 && s.k == 1 {
        "dw"
    } else if s.g > 1 {
        "gconv"
    } else if s.fh == 1 && s.fw == 1 && l.input.h == 1 && l.input.w == 1 {
        "fc"
    } else if s.fh == 1 && s.fw == 1 {
        "pw"
    } else {
        "conv"
    }
}

/// `S2`, `S2x1`, or nothing for stride 1 (and for a pool whose stride
/// is its window: non-overlapping, the usual).
fn stride(s: &LayerSpec, pool: bool) -> String {
    match (s.sh, s.sw) {
        (1, 1) => String::new(),
        (h, w) if pool && (h, w) == (s.fh, s.fw) => String::new(),
        (h, w) if h == w => format!("S{h}"),
        (h, w) => format!("S{h}x{w}"),
    }
}

/// The struct name of declaration `s`, a layer of kind `kind`, before
/// collisions are resolved.
fn type_name(l: &Layer, s: &LayerSpec, kind: &str) -> String {
    let window = format!("{}x{}", s.fh, s.fw);
    let base = match kind {
        "add" => format!("AddC{}", s.g),
        "relu" => format!("{}C{}", capitalized(&l.operators), s.g),
        "pad" => format!("Pad{}C{}", amounts(s), s.g),
        "logistic" => format!("LogisticC{}", s.g),
        "mean" => format!("Mean{window}C{}", s.g),
        "maxpool" => format!("MaxPool{window}{}C{}", stride(s, true), s.g),
        "avgpool" => format!("AvgPool{window}{}C{}", stride(s, true), s.g),
        "dw" => format!("Dw{window}{}C{}", stride(s, false), s.g),
        "gconv" => format!(
            "GroupConv{window}{}G{}To{}",
            stride(s, false),
            s.g,
            s.out_channels()
        ),
        "fc" => format!("Fc{}To{}", s.fc, s.k),
        "pw" => format!("Pw{}To{}{}", s.fc, s.k, stride(s, false)),
        _ => format!("Conv{window}{}C{}To{}", stride(s, false), s.fc, s.k),
    };
    // A folded PAD and a fused residual ADD are part of what the layer is.
    let base = match (kind, s.padding) {
        ("pad", _) | (_, Padding::Same | Padding::Valid) => base,
        _ => base + "Pad" + &amounts(s),
    };
    if s.residual && kind != "add" {
        base + "Add"
    } else {
        base
    }
}

/// `T1B2L0R1`: an explicit padding's rows above and below and columns
/// left and right; nothing for SAME or VALID.
fn amounts(s: &LayerSpec) -> String {
    match s.padding {
        Padding::Explicit {
            top,
            bottom,
            left,
            right,
        } => format!("T{top}B{bottom}L{left}R{right}"),
        _ => String::new(),
    }
}

/// `RELU6` -> `Relu6`.
fn capitalized(op: &str) -> String {
    let op = op
        .split_whitespace()
        .next()
        .unwrap_or(op)
        .to_ascii_lowercase();
    let mut c = op.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

impl Program {
    /// The field and struct name of every layer. Fields are numbered per
    /// kind when the kind occurs more than once (`dw1`, `dw2`, ...); a
    /// struct name two different declarations would share gets `V2`,
    /// `V3`, ... on the later ones.
    pub fn names(&self) -> Vec<Names> {
        let kinds: Vec<&str> = self.layers.iter().map(kind).collect();
        let mut seen: Vec<(&LayerSpec, String)> = Vec::new();
        let mut names = Vec::with_capacity(self.layers.len());
        for (i, l) in self.layers.iter().enumerate() {
            let k = kinds[i];
            let field = if kinds.iter().filter(|&&o| o == k).count() == 1 {
                k.to_string()
            } else {
                format!("{k}{}", kinds[..=i].iter().filter(|&&o| o == k).count())
            };
            // A concatenation's "type" is the `model!` line's keyword.
            let Some(spec) = &l.spec else {
                names.push(Names {
                    field,
                    ty: "concat".into(),
                });
                continue;
            };
            let ty = match seen.iter().find(|(s, _)| *s == spec) {
                Some((_, ty)) => ty.clone(),
                None => {
                    let base = type_name(l, spec, k);
                    let mut ty = base.clone();
                    let mut n = 1;
                    while seen.iter().any(|(_, t)| *t == ty) {
                        n += 1;
                        ty = format!("{base}V{n}");
                    }
                    seen.push((spec, ty.clone()));
                    ty
                }
            };
            names.push(Names { field, ty });
        }
        names
    }
}
