use small_core::{Blocked, Dims, Filter, layer};

#[layer(fh = 3, fw = 1, fc = 2, k = 4, stride = (2, 1), padding = valid)]
struct Strided;

fn main() {
    assert_eq!((Strided::SPEC.sh, Strided::SPEC.sw), (2, 1));
    let weights = vec![1.0; Strided::WEIGHTS_LEN];
    let conv = Strided::new(Filter::ohwi(&weights), None).unwrap();
    let x = Blocked::from_nhwc(Dims { c: 2, h: 7, w: 5 }, &vec![1.0; 7 * 5 * 2]).unwrap();
    let mut y = conv.alloc_output(&x).unwrap();
    conv.forward(&x, &mut y).unwrap();
    // valid: height (7 - 3) / 2 + 1 = 3, width (5 - 1) / 1 + 1 = 5.
    assert_eq!((y.c(), y.h(), y.w()), (4, 3, 5));
}
