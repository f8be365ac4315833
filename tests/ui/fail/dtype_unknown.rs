use small_core::layer;

#[layer(fh = 3, fw = 3, fc = 16, k = 16, dtype = f16)]
pub struct HalfConv;

fn main() {}
