use small_core::{layer, model};

#[layer(fh = 1, fw = 1, fc = 8, k = 8, residual)]
struct Res;

model! {
    struct Net {
        input x: [4, 4, 8];
        res: Res @ 0 (x) -> a;
    }
}

fn main() {}
