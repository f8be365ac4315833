use small_core::layer;

#[layer(fh = 2, fw = 2, fc = 1, k = 2, g = 8, reduction = max)]
struct Pool;

fn main() {}
