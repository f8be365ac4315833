use small_core::{Blocked, Dims, Filter, layer};

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 16, padding = same, activation = relu6)]
struct Depthwise;

fn main() {
    let weights = vec![1.0; Depthwise::WEIGHTS_LEN];
    let dw = Depthwise::new(Filter::depthwise(&weights), None).unwrap();
    let x = Blocked::from_nhwc(Dims { c: 16, h: 3, w: 3 }, &vec![1.0; 3 * 3 * 16]).unwrap();
    let mut y = dw.alloc_output(&x).unwrap();
    dw.forward(&x, &mut y).unwrap();
    assert_eq!((y.c(), y.h(), y.w()), (16, 3, 3));
    // Centre sums 9 taps, clamped to 6; a corner sums 4.
    assert_eq!(y.get(5, 1, 1), Some(6.0));
    assert_eq!(y.get(5, 0, 0), Some(4.0));
}
