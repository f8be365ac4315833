//! The generated Rust source: one `#[layer]` struct per distinct
//! declaration and the `model!` block that wires them as the file does.

use crate::program::Program;
use small_ir::{Activation, Dtype, LayerSpec, Padding, Reduction};
use std::fmt::Write;

/// The arguments of `#[layer(...)]` that declare `spec`, defaults left
/// out: `fh = 3, fw = 3, fc = 16, k = 32, stride = 2, padding = same,
/// activation = relu`.
pub fn declaration(spec: &LayerSpec) -> String {
    let mut s = format!(
        "fh = {}, fw = {}, fc = {}, k = {}",
        spec.fh, spec.fw, spec.fc, spec.k
    );
    if spec.g != 1 {
        let _ = write!(s, ", g = {}", spec.g);
    }
    match (spec.sh, spec.sw) {
        (1, 1) => {}
        (h, w) if h == w => {
            let _ = write!(s, ", stride = {h}");
        }
        (h, w) => {
            let _ = write!(s, ", stride = ({h}, {w})");
        }
    }
    if spec.padding == Padding::Same {
        s.push_str(", padding = same");
    }
    match spec.reduction {
        Reduction::Fma => {}
        Reduction::Max => s.push_str(", reduction = max"),
        Reduction::Avg => s.push_str(", reduction = avg"),
    }
    match spec.activation {
        Activation::None => {}
        Activation::Relu => s.push_str(", activation = relu"),
        Activation::Relu6 => s.push_str(", activation = relu6"),
    }
    if spec.residual {
        s.push_str(", residual");
    }
    if spec.dtype == Dtype::I8 {
        s.push_str(", dtype = i8");
    }
    s
}

impl Program {
    /// The Rust source of the program as the struct `name`: the
    /// `#[layer]` structs (`L<i>`, one per distinct declaration, named
    /// after its first layer) and the `model!` block (a concatenation is
    /// a `concat` line), each tensor named `t<index>` after the file's
    /// tensor. It compiles in a crate that depends on `small-core`; its
    /// `load` takes the same file.
    pub fn source(&self, name: &str) -> String {
        let mut s = String::from("use small_core::{layer, model};\n\n");
        // The struct of each layer: the first layer's of its declaration.
        let mut types: Vec<String> = Vec::new();
        for (i, l) in self.layers.iter().enumerate() {
            let Some(spec) = &l.spec else {
                types.push("concat".into());
                continue;
            };
            match self.layers[..i].iter().position(|e| e.spec == l.spec) {
                Some(first) => types.push(types[first].clone()),
                None => {
                    let ty = format!("L{i}");
                    let _ = writeln!(
                        s,
                        "/// {} (operator {}).\n#[layer({})]\npub struct {ty};\n",
                        l.operators,
                        l.op,
                        declaration(spec)
                    );
                    types.push(ty);
                }
            }
        }
        let tensor = |id: usize| format!("t{}", self.tensors[id]);
        let dtype = match self.dtype {
            Dtype::F32 => "",
            Dtype::I8 => " i8",
        };
        let _ = writeln!(s, "model! {{\n    pub struct {name} {{");
        let d = self.input;
        let _ = writeln!(
            s,
            "        input {}: [{}, {}, {}]{dtype};",
            tensor(0),
            d.h,
            d.w,
            d.c
        );
        for (i, (l, ty)) in self.layers.iter().zip(&types).enumerate() {
            let out = if l.out_op == l.op {
                String::new()
            } else {
                format!(" => {}", l.out_op)
            };
            let skip = l
                .skip
                .map(|k| format!(", + {}", tensor(k)))
                .unwrap_or_default();
            let reads = if l.spec.is_none() {
                let ts: Vec<String> = l.concat.iter().map(|&t| tensor(t)).collect();
                ts.join(", ")
            } else {
                format!("{}{skip}", tensor(l.x))
            };
            let _ = writeln!(
                s,
                "        l{i}: {ty} @ {}{out} ({reads}) -> {};",
                l.op,
                tensor(i + 1)
            );
        }
        s.push_str("    }\n}\n");
        s
    }
}
