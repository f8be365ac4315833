use small_core::{layer, model};

#[layer(fh = 1, fw = 1, fc = 8, k = 8)]
struct Pointwise;

model! {
    struct Net {
        input x: [4, 4, 8];
        first: Pointwise @ 0 (b) -> a;
        second: Pointwise @ 1 (x) -> b;
    }
}

fn main() {}
