use small_core::layer;

#[layer(fh = 2, fw = 2, fc = 4, k = 1, g = 8, reduction = avg)]
struct Pool;

fn main() {}
