use small_core::layer;

#[layer(fh = 3, fw = 3, fc = 16, k = 32, archs(reference, avx2, reference))]
struct Conv;

fn main() {}
