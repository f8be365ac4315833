use small_core::{Blocked, Dims, Filter, layer};

#[layer(fh = 1, fw = 1, fc = 8, k = 2, g = 4, channels = 32)]
struct Grouped;

fn main() {
    assert_eq!(Grouped::IN_CHANNELS, 32);
    let weights = vec![1.0; Grouped::WEIGHTS_LEN];
    let conv = Grouped::new(Filter::ohwi(&weights), None).unwrap();
    let x = Blocked::from_nhwc(Dims { c: 32, h: 2, w: 2 }, &vec![1.0; 2 * 2 * 32]).unwrap();
    let mut y = conv.alloc_output(&x).unwrap();
    conv.forward(&x, &mut y).unwrap();
    assert_eq!((y.c(), y.h(), y.w()), (8, 2, 2));
    assert!(y.to_nhwc().iter().all(|&v| v == 8.0));
}
