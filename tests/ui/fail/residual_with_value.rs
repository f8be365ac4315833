use small_core::layer;

#[layer(fh = 3, fw = 3, fc = 16, k = 16, residual = yes)]
struct Conv;

fn main() {}
