use small_core::{layer, model};

#[layer(fh = 3, fw = 3, fc = 8, k = 8, stride = 2, padding = same)]
struct Down;
#[layer(fh = 3, fw = 3, fc = 8, k = 8, padding = same, residual)]
struct Res;

model! {
    struct Net {
        input x: [8, 8, 8];
        down: Down @ 0 (x) -> a;
        res: Res @ 1 => 2 (a, + x) -> b;
    }
}

fn main() {}
