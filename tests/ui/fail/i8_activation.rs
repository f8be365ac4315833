use small_core::layer;

// An `i8` layer's activation is the clamp its constructor takes.
#[layer(fh = 3, fw = 3, fc = 8, k = 8, dtype = i8, activation = relu)]
pub struct Conv;

fn main() {}
