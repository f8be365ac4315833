use small_core::layer;

#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 8, stride = 2, reduction = avg, activation = logistic)]
struct AvgPool;

fn main() {}
