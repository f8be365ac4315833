use small_core::{Arch, Blocked, Dims, Error, Filter, layer};

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 8, padding = same, archs(reference, avx2))]
struct Depthwise;

fn main() {
    let generated: Vec<Arch> = Depthwise::BLOCKING.iter().map(|b| b.arch).collect();
    assert!(
        generated
            .iter()
            .all(|a| matches!(a, Arch::Reference | Arch::Avx2))
    );
    assert!(generated.contains(&Arch::Reference));
    let weights = vec![1.0; Depthwise::WEIGHTS_LEN];
    assert_eq!(
        Depthwise::with_arch(Arch::Avx512, Filter::depthwise(&weights), None).unwrap_err(),
        Error::ArchUnavailable { name: "avx512" }
    );
    let dw = Depthwise::with_arch(Arch::Reference, Filter::depthwise(&weights), None).unwrap();
    let x = Blocked::from_nhwc(Dims { c: 8, h: 4, w: 4 }, &vec![1.0; 4 * 4 * 8]).unwrap();
    let mut y = dw.alloc_output(&x).unwrap();
    dw.forward(&x, &mut y).unwrap();
    assert_eq!((y.c(), y.h(), y.w()), (8, 4, 4));
    assert_eq!(y.get(3, 1, 1), Some(9.0));
}
