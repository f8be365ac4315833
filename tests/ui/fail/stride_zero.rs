use small_core::layer;

#[layer(fh = 3, fw = 3, fc = 16, k = 32, stride = 0)]
struct Conv;

fn main() {}
