//! A small network on blocked tensors, layer after layer, against the
//! reference layers: conv (ReLU6) -> depthwise (ReLU) -> pointwise -> max
//! pool -> 1x1 conv with the residual added (ReLU) -> add -> global average
//! pool -> FC -> softmax. No layer repacks: each output feeds the next.
//!
//! Each stage is compared with the reference layer applied to the previous
//! *generated* output, within the bound derived from that stage's reduction
//! length (`small_kernel_tests::tolerances`), so an error names the stage; the
//! end-to-end class must also match the reference chain's.

use small_core::Filter;
use small_core::reference::{self, Shape};
use small_core::{Activation, Arch, Blocked, Dims, Error, LayerSpec, layer, ops};
use small_kernel_tests::{Rng, first_mismatch, reference_forward, tolerances};

#[layer(fh = 3, fw = 3, fc = 3, k = 16, stride = 2, padding = same, activation = relu6)]
struct Conv;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 16, padding = same, activation = relu)]
struct Depthwise;
#[layer(fh = 1, fw = 1, fc = 16, k = 24)]
struct Pointwise;
#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 24, stride = 2, padding = same, reduction = max)]
struct Pool;
#[layer(fh = 1, fw = 1, fc = 24, k = 24, residual, activation = relu)]
struct Residual;
#[layer(fh = 1, fw = 1, fc = 24, k = 10)]
struct Fc;

/// Checks one stage: `got` (blocked) against the reference of `spec` on `input`.
#[allow(clippy::too_many_arguments)]
fn stage(
    name: &str,
    arch: Arch,
    spec: &LayerSpec,
    input: &Blocked<Vec<f32>>,
    w: &[f32],
    b: Option<&[f32]>,
    skip: Option<&Blocked<Vec<f32>>>,
    got: &Blocked<Vec<f32>>,
) {
    let shape = Shape::from(input.dims());
    let x = input.to_nhwc();
    let skip = skip.map(|s| s.to_nhwc());
    let w = Filter::ohwi(w);
    let (want, _) = reference_forward(spec, &x, shape, w, b, skip.as_deref()).unwrap();
    let tol = tolerances(spec, &x, shape, w, b, skip.as_deref());
    if let Some((i, g, r, t)) = first_mismatch(&got.to_nhwc(), &want, &tol) {
        panic!("stage {name} on {arch:?}: element {i} is {g}, reference {r}, tolerance {t}");
    }
}

#[test]
fn chain_matches_the_reference_layer_by_layer() -> Result<(), Error> {
    let mut rng = Rng::new(99);
    let (h, w) = (13, 11);
    let input = rng.vec(h * w * 3);
    let wc = (rng.vec(Conv::WEIGHTS_LEN), rng.vec(16));
    let wd = (rng.vec(Depthwise::WEIGHTS_LEN), rng.vec(16));
    let wp = (rng.vec(Pointwise::WEIGHTS_LEN), rng.vec(24));
    let wr = (rng.vec(Residual::WEIGHTS_LEN), rng.vec(24));
    let wf = (rng.vec(Fc::WEIGHTS_LEN), rng.vec(10));
    for arch in small_core::arch::available() {
        let x = Blocked::from_nhwc(Dims { c: 3, h, w }, &input)?;
        let conv = Conv::with_arch(arch, Filter::ohwi(&wc.0), Some(&wc.1))?;
        let mut a = conv.alloc_output(&x)?;
        conv.forward(&x, &mut a)?;
        stage("conv", arch, &Conv::SPEC, &x, &wc.0, Some(&wc.1), None, &a);

        let dw = Depthwise::with_arch(arch, Filter::ohwi(&wd.0), Some(&wd.1))?;
        let mut b = dw.alloc_output(&a)?;
        dw.forward(&a, &mut b)?;
        stage(
            "depthwise",
            arch,
            &Depthwise::SPEC,
            &a,
            &wd.0,
            Some(&wd.1),
            None,
            &b,
        );

        let pw = Pointwise::with_arch(arch, Filter::ohwi(&wp.0), Some(&wp.1))?;
        let mut c = pw.alloc_output(&b)?;
        pw.forward(&b, &mut c)?;
        stage(
            "pointwise",
            arch,
            &Pointwise::SPEC,
            &b,
            &wp.0,
            Some(&wp.1),
            None,
            &c,
        );

        let pool = Pool::with_arch(arch)?;
        let mut d = pool.alloc_output(&c)?;
        pool.forward(&c, &mut d)?;
        stage("max pool", arch, &Pool::SPEC, &c, &[], None, None, &d);

        let res = Residual::with_arch(arch, Filter::ohwi(&wr.0), Some(&wr.1))?;
        let mut e = res.alloc_output(&d)?;
        res.forward_add(&d, &d, &mut e)?;
        stage(
            "residual",
            arch,
            &Residual::SPEC,
            &d,
            &wr.0,
            Some(&wr.1),
            Some(&d),
            &e,
        );

        // Standalone add: exact (one rounding each side, same operands).
        let mut f = Blocked::zeros(Dims { c: 24, ..e.dims() })?;
        ops::add(&e, &d, &mut f, Activation::None)?;
        let mut want = vec![0.0; f.c() * f.h() * f.w()];
        reference::add(&e.to_nhwc(), &d.to_nhwc(), &mut want)?;
        assert_eq!(f.to_nhwc(), want, "add on {arch:?}");

        let mut pooled = vec![0.0; 24];
        ops::global_avg_pool(&f, &mut pooled)?;
        let mut want = vec![0.0; 24];
        reference::global_avg_pool(&f.to_nhwc(), Shape::from(f.dims()), &mut want)?;
        assert_eq!(
            pooled, want,
            "global average pool on {arch:?}: same order, same rounding"
        );

        let v = Blocked::from_nhwc(Dims { c: 24, h: 1, w: 1 }, &pooled)?;
        let fc = Fc::with_arch(arch, Filter::ohwi(&wf.0), Some(&wf.1))?;
        let mut logits = fc.alloc_output(&v)?;
        fc.forward(&v, &mut logits)?;
        stage("fc", arch, &Fc::SPEC, &v, &wf.0, Some(&wf.1), None, &logits);

        let mut probs = vec![0.0; 10];
        ops::softmax(&logits.to_nhwc(), &mut probs)?;
        let total: f32 = probs.iter().sum();
        assert!(
            (total - 1.0).abs() <= 10.0 * f32::EPSILON,
            "softmax sums to {total}"
        );

        // The whole chain in the reference layers alone: same class.
        let want = reference_chain(&input, h, w, [&wc, &wd, &wp, &wr, &wf])?;
        let argmax = |v: &[f32]| (0..v.len()).max_by(|&i, &j| v[i].total_cmp(&v[j])).unwrap();
        assert_eq!(argmax(&probs), argmax(&want), "class on {arch:?}");
    }
    Ok(())
}

type Params<'a> = &'a (Vec<f32>, Vec<f32>);

fn reference_chain(input: &[f32], h: usize, w: usize, p: [Params; 5]) -> Result<Vec<f32>, Error> {
    let run = |spec: &LayerSpec, x: &[f32], s: Shape, p: Params, skip: Option<&[f32]>| {
        reference_forward(spec, x, s, Filter::ohwi(&p.0), Some(&p.1), skip)
    };
    let (a, sa) = run(&Conv::SPEC, input, Shape { h, w, c: 3 }, p[0], None)?;
    let (b, sb) = run(&Depthwise::SPEC, &a, sa, p[1], None)?;
    let (c, sc) = run(&Pointwise::SPEC, &b, sb, p[2], None)?;
    let (d, sd) = reference_forward(&Pool::SPEC, &c, sc, Filter::none(), None, None)?;
    let (e, se) = run(&Residual::SPEC, &d, sd, p[3], Some(&d))?;
    let mut f = vec![0.0; e.len()];
    reference::add(&e, &d, &mut f)?;
    let mut pooled = vec![0.0; 24];
    reference::global_avg_pool(&f, se, &mut pooled)?;
    let (logits, _) = run(&Fc::SPEC, &pooled, Shape { h: 1, w: 1, c: 24 }, p[4], None)?;
    let mut probs = vec![0.0; 10];
    reference::softmax(&logits, &mut probs)?;
    Ok(probs)
}
