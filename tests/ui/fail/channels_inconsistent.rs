use small_core::layer;

#[layer(fh = 3, fw = 3, fc = 8, k = 8, g = 4, channels = 30)]
struct Conv;

fn main() {}
