use small_core::layer;

#[layer(fh = 3, fw = 3, fc = 16, k = 32)]
struct Conv
where
    u8: Copy;

fn main() {}
