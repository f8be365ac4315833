use small_core::{Blocked, Dims, Filter, layer};

#[layer(fh = 1, fw = 1, fc = 8, k = 16)]
struct Pointwise;

fn main() {
    let weights = vec![0.25; Pointwise::WEIGHTS_LEN];
    let pw = Pointwise::new(Filter::ohwi(&weights), None).unwrap();
    let x = Blocked::from_nhwc(Dims { c: 8, h: 2, w: 5 }, &vec![1.0; 2 * 5 * 8]).unwrap();
    let mut y = pw.alloc_output(&x).unwrap();
    pw.forward(&x, &mut y).unwrap();
    assert_eq!((y.c(), y.h(), y.w()), (16, 2, 5));
    assert!(y.to_nhwc().iter().all(|&v| v == 2.0));
}
