use small_core::{layer, model};

#[layer(fh = 1, fw = 1, fc = 4, k = 4)]
struct Pointwise;

model! {
    struct Net {
        input x: [4, 4, 4];
        cat: concat @ 0 (x, b) -> a;
        pw: Pointwise @ 1 (x) -> b;
    }
}

fn main() {}
