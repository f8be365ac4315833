use small_core::layer;

#[layer(fh = 1, fw = 40, fc = 1, k = 1, g = 8)]
struct Wide;

fn main() {}
