use small_core::{Blocked, Dims, Filter, layer};

#[layer(fh = 3, fw = 3, fc = 4, k = 8, stride = 2, padding = same, activation = relu)]
struct Conv;

fn main() {
    let weights = vec![0.5; Conv::WEIGHTS_LEN];
    let bias = vec![-100.0; Conv::OUT_CHANNELS];
    let conv = Conv::new(Filter::ohwi(&weights), Some(&bias)).unwrap();
    let x = Blocked::from_nhwc(Dims { c: 4, h: 5, w: 7 }, &vec![1.0; 5 * 7 * 4]).unwrap();
    let mut y = conv.alloc_output(&x).unwrap();
    conv.forward(&x, &mut y).unwrap();
    // `same` with stride 2: ceil(5 / 2) x ceil(7 / 2).
    assert_eq!((y.c(), y.h(), y.w()), (8, 3, 4));
    // The bias drives every sum negative; relu clamps it to 0.
    assert!(y.to_nhwc().iter().all(|&v| v == 0.0));
}
