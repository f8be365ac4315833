use small_core::{layer, model};

#[layer(fh = 1, fw = 1, fc = 4, k = 4)]
struct Pointwise;

// A concatenation joins two or more tensors, adds none and fuses no
// operator; a layer reads one (and a residual): each line form is its own
// error.
model! {
    struct Net {
        input x: [4, 4, 4];
        pw: Pointwise @ 0 (x) -> a;
        cat: concat @ 1 (a, + x) -> b;
        two: Pointwise @ 2 (a, x) -> c;
        one: concat @ 3 (a) -> d;
        fused: concat @ 4 => 5 (a, x) -> e;
    }
}

fn main() {}
