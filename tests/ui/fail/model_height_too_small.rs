use small_core::{layer, model};

#[layer(fh = 5, fw = 1, fc = 4, k = 4, padding = valid)]
struct Tall;

model! {
    struct Net {
        input x: [3, 8, 4];
        tall: Tall @ 0 (x) -> a;
    }
}

fn main() {}
