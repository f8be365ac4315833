use small_core::{layer, model};

#[layer(fh = 3, fw = 3, fc = 4, k = 8, stride = 2, padding = same)]
struct Down;
#[layer(fh = 1, fw = 1, fc = 12, k = 4)]
struct Mix;

// A concatenation joins tensors of one height and width: `a` is 4x4, the
// input 8x8.
model! {
    struct Net {
        input x: [8, 8, 4];
        down: Down @ 0 (x) -> a;
        cat: concat @ 1 (x, a) -> b;
        mix: Mix @ 2 (b) -> y;
    }
}

fn main() {}
