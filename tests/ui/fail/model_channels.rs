use small_core::{layer, model};

#[layer(fh = 3, fw = 3, fc = 3, k = 16, padding = same)]
struct Conv;
#[layer(fh = 1, fw = 1, fc = 32, k = 8)]
struct Pointwise;

model! {
    struct Net {
        input x: [8, 8, 3];
        conv: Conv @ 0 (x) -> a;
        pw: Pointwise @ 1 (a) -> b;
    }
}

fn main() {}
