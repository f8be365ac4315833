use small_core::layer;

#[layer(fh, fw = 3, fc = 16, k = 32)]
struct Conv;

fn main() {}
