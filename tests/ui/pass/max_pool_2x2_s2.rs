use small_core::{Blocked, Dims, layer};

#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 8, stride = 2, reduction = max)]
struct MaxPool;

fn main() {
    let pool = MaxPool::new().unwrap();
    let input: Vec<f32> = (0..4 * 6 * 8).map(|i| i as f32).collect();
    let x = Blocked::from_nhwc(Dims { c: 8, h: 4, w: 6 }, &input).unwrap();
    let mut y = pool.alloc_output(&x).unwrap();
    pool.forward(&x, &mut y).unwrap();
    assert_eq!((y.c(), y.h(), y.w()), (8, 2, 3));
    // Input grows with y and x: each window's max is its bottom-right tap.
    assert_eq!(y.get(0, 0, 0), x.get(0, 1, 1));
}
