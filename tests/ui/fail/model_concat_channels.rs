use small_core::{layer, model};

#[layer(fh = 3, fw = 3, fc = 4, k = 8, padding = same)]
struct Conv;
#[layer(fh = 1, fw = 1, fc = 8, k = 4)]
struct Mix;

// The concatenation's output has 4 + 8 = 12 channels: `mix` takes 8.
model! {
    struct Net {
        input x: [8, 8, 4];
        conv: Conv @ 0 (x) -> a;
        cat: concat @ 1 (x, a) -> b;
        mix: Mix @ 2 (b) -> y;
    }
}

fn main() {}
