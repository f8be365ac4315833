use small_core::layer;

#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 8, stride = 2, reduction = max, padding = (1, 0, 1, 0))]
struct MaxPool;

fn main() {}
