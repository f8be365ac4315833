use small_core::layer;

// TFLite's int8 ADD rescales both inputs: not fused yet.
#[layer(fh = 1, fw = 1, fc = 8, k = 8, dtype = i8, residual)]
pub struct Skip;

fn main() {}
