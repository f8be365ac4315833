use small_core::{Blocked, Dims, Filter, Padding, layer};

// A PAD's zeros before a convolution: 1 row above, 2 below, none left,
// 3 columns right.
#[layer(fh = 3, fw = 3, fc = 4, k = 4, padding = (1, 2, 0, 3))]
struct Conv;

fn main() {
    let want = Padding::Explicit { top: 1, bottom: 2, left: 0, right: 3 };
    assert_eq!(Conv::SPEC.padding, want);
    let weights = vec![0.1; Conv::WEIGHTS_LEN];
    let conv = Conv::new(Filter::ohwi(&weights), None).unwrap();
    let x = Blocked::from_nhwc(Dims { c: 4, h: 6, w: 5 }, &vec![1.0; 6 * 5 * 4]).unwrap();
    let mut y = conv.alloc_output(&x).unwrap();
    conv.forward(&x, &mut y).unwrap();
    // (6 + 1 + 2 - 3) + 1 rows, (5 + 0 + 3 - 3) + 1 columns.
    assert_eq!((y.c(), y.h(), y.w()), (4, 7, 6));
}
