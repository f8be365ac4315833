// `dtype = i8` is a valid word whose kernels do not exist yet: the error
// points at it and says which dtype is generated.
use small_core::layer;

#[layer(fh = 3, fw = 3, fc = 16, k = 16, dtype = i8)]
pub struct Int8Conv;

fn main() {}
