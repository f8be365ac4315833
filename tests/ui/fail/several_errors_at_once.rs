use small_core::layer;

#[layer(fh = 0, fw = 3, fc = 16, k = 32, padding = sme, activation = gelu)]
struct Conv;

fn main() {}
