//! The operator table: one row per layer, with its operators, shapes,
//! declaration, MACs and the register tile each arch derives for it.

use crate::program::{Head, Program};
use crate::source::{declaration, dims};
use arch_defs::ARCHS;
use small_ir::Dtype;
use small_ir::blocking;
use std::fmt::Write;

impl Program {
    /// The operator table of the program named `name` (what the
    /// `small-codegen` binary prints): a header with the dtype, the input
    /// and the totals, then per layer its operator(s) (`@ op`, `=> out_op`
    /// for a fused ADD), input and output dims, MACs, the tile `O_wb x
    /// TC` each registered arch derives, and the `#[layer]` arguments; a
    /// concatenation shows its inputs' channels (`8x8x(4+12)`), no tile
    /// and `concat`.
    pub fn table(&self, name: &str) -> String {
        let mut s = String::new();
        let dtype = match self.dtype {
            Dtype::F32 => "f32",
            Dtype::I8 => "i8",
        };
        let head = match self.head {
            Head::None => "none".to_string(),
            Head::Softmax(op) => format!("SOFTMAX (operator {op}, applied by the caller)"),
            Head::Logistic(op) => format!("LOGISTIC (operator {op}, applied by the caller)"),
        };
        let _ = writeln!(
            s,
            "{name}: {dtype}, input {}, {}, {} MACs, head {head}",
            dims(self.input),
            self.count(),
            self.macs(),
        );
        let archs: String = ARCHS.iter().map(|a| format!(" {:>10}", a.name)).collect();
        let _ = writeln!(
            s,
            "{:<8} {:<9} {:<20} {:<13} {:<11} {:>9} {archs}  #[layer(...)]",
            "layer", "op", "operator", "input", "output", "MACs"
        );
        let all = self.dims();
        for (l, n) in self.layers.iter().zip(self.names()) {
            let op = if l.out_op == l.op {
                format!("@ {}", l.op)
            } else {
                format!("@ {} => {}", l.op, l.out_op)
            };
            // The tile each arch derives: O_wb x TC (a concatenation
            // copies: none).
            let tiles: String = ARCHS
                .iter()
                .map(|a| match &l.spec {
                    Some(spec) => {
                        let b = blocking::derive(a.name, &a.machine, spec);
                        format!(" {:>10}", format!("{}x{}", b.o_wb, b.tc))
                    }
                    None => format!(" {:>10}", "-"),
                })
                .collect();
            // A concatenation: its inputs' channels.
            let (input, declaration) = match &l.spec {
                Some(spec) => (dims(l.input), declaration(spec)),
                None => {
                    let c: Vec<String> = (l.concat.iter()).map(|&t| all[t].c.to_string()).collect();
                    let input = format!("{}x{}x({})", l.input.h, l.input.w, c.join("+"));
                    (input, "concat".to_string())
                }
            };
            let _ = writeln!(
                s,
                "{:<8} {op:<9} {:<20} {:<13} {:<11} {:>9} {tiles}  {declaration}",
                n.field,
                l.operators,
                input,
                dims(l.output),
                l.macs,
            );
        }
        let _ = writeln!(
            s,
            "tiles: O_wb x TC (output columns x channels per register tile)"
        );
        let m4 = ARCHS
            .iter()
            .find(|a| a.name == "cortex_m4")
            .map(|a| &a.machine);
        let (a, mcu) = (self.arena(None), self.arena(m4));
        let _ = writeln!(
            s,
            "arena: {:.1} KiB for every activation, input included (lower bound {:.1} KiB), \
             planned at compile time; {:.1} KiB on a Cortex-M4 (no std: layers in place)",
            a.bytes as f64 / 1024.0,
            a.lower_bound as f64 / 1024.0,
            mcu.bytes as f64 / 1024.0
        );
        s
    }
}
