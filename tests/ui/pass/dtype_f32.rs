use small_core::{Arch, Blocked, Dims, Dtype, Filter, layer};

#[layer(fh = 1, fw = 1, fc = 4, k = 4, dtype = f32, archs(reference))]
pub struct Pointwise;

fn main() {
    assert_eq!(Pointwise::SPEC.dtype, Dtype::F32);
    let l = Pointwise::with_arch(Arch::Reference, Filter::ohwi(&[1.0; 16]), None).unwrap();
    let x = Blocked::from_nhwc(Dims { c: 4, h: 1, w: 1 }, &[1.0f32; 4]).unwrap();
    let mut y = l.alloc_output(&x).unwrap();
    l.forward(&x, &mut y).unwrap();
    assert_eq!(y.to_nhwc(), [4.0; 4]);
}
