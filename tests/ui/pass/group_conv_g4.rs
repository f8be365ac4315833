use small_core::{Blocked, Dims, Filter, layer};

#[layer(fh = 3, fw = 3, fc = 2, k = 3, g = 4, padding = same)]
struct Group;

fn main() {
    assert_eq!((Group::IN_CHANNELS, Group::OUT_CHANNELS), (8, 12));
    let weights = vec![1.0; Group::WEIGHTS_LEN];
    let conv = Group::new(Filter::ohwi(&weights), None).unwrap();
    let x = Blocked::from_nhwc(Dims { c: 8, h: 4, w: 4 }, &vec![1.0; 4 * 4 * 8]).unwrap();
    let mut y = conv.alloc_output(&x).unwrap();
    conv.forward(&x, &mut y).unwrap();
    assert_eq!((y.c(), y.h(), y.w()), (12, 4, 4));
    // Centre pixel: all 3x3 taps inside, 2 input channels per group.
    assert_eq!(y.get(0, 1, 1), Some(18.0));
}
