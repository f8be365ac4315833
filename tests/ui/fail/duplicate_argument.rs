use small_core::layer;

#[layer(fh = 3, fw = 3, fh = 5, fc = 16, k = 32)]
struct Conv;

fn main() {}
