use small_core::{Blocked, Dims, layer};

#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 5, reduction = max, activation = relu)]
struct Relu;

fn main() {
    let relu = Relu::new().unwrap();
    let input: Vec<f32> = (0..3 * 3 * 5).map(|i| i as f32 - 20.0).collect();
    let x = Blocked::from_nhwc(Dims { c: 5, h: 3, w: 3 }, &input).unwrap();
    let mut y = relu.alloc_output(&x).unwrap();
    relu.forward(&x, &mut y).unwrap();
    assert_eq!((y.c(), y.h(), y.w()), (5, 3, 3));
    let want: Vec<f32> = input.iter().map(|v| v.max(0.0)).collect();
    assert_eq!(y.to_nhwc(), want);
}
