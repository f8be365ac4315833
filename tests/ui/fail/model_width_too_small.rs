use small_core::{layer, model};

#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 8, stride = 2, reduction = max)]
struct Pool;
#[layer(fh = 1, fw = 3, fc = 8, k = 8, padding = valid)]
struct Wide;

model! {
    struct Net {
        input x: [8, 4, 8];
        pool: Pool @ 0 (x) -> a;
        wide: Wide @ 1 (a) -> b;
    }
}

fn main() {}
