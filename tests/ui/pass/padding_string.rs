use small_core::{Blocked, Dims, Filter, Padding, layer};

#[layer(fh = 3, fw = 3, fc = 4, k = 4, padding = "same", activation = "relu")]
struct Conv;

fn main() {
    assert_eq!(Conv::SPEC.padding, Padding::Same);
    let weights = vec![0.1; Conv::WEIGHTS_LEN];
    let conv = Conv::new(Filter::ohwi(&weights), None).unwrap();
    let x = Blocked::from_nhwc(Dims { c: 4, h: 6, w: 5 }, &vec![1.0; 6 * 5 * 4]).unwrap();
    let mut y = conv.alloc_output(&x).unwrap();
    conv.forward(&x, &mut y).unwrap();
    assert_eq!((y.c(), y.h(), y.w()), (4, 6, 5));
}
