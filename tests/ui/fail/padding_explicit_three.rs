use small_core::layer;

#[layer(fh = 3, fw = 3, fc = 16, k = 32, padding = (1, 1, 2))]
struct Conv;

fn main() {}
