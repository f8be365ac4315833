use small_core::layer;

#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 8, reduction = max, archs())]
struct Pool;

fn main() {}
