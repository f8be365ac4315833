//! Generated layers on small shapes, against the reference layers: the
//! test file of the `miri` stage of `scripts/test`, which runs it under
//! Miri so that an out-of-bounds pointer in the loop nest, the packing or
//! an edge tile is an error rather than a wrong (or lucky) number. It also
//! runs natively with the host tests, where it takes milliseconds.
//!
//! Every layer is declared with `archs(reference)`: Miri cannot run
//! AVX/NEON intrinsics, and the portable scalar arch goes through the same
//! nest, packing and emitter code paths (only its primitives differ).
//! Shapes are small, and widths are chosen to leave partial tiles at the
//! row ends (`explain()` of each layer gives its tile; the scalar arch's
//! output tiles are a few columns wide: 3 for these convolutions). Under Miri the thread pool
//! starts with one thread (Miri reports one CPU), except in
//! [`two_threads_split_rows_without_a_race`], which checks that the
//! parts of a split layer touch disjoint memory (Miri's race detector).
//!
//! Built natively on x86_64 only: its layers are the portable arch's,
//! which the x86_64 run and Miri cover; the aarch64 cross stage would
//! spend half a minute building it again for nothing new.
#![cfg(any(miri, target_arch = "x86_64"))]

use small_core::Filter;
use small_core::load::{Generated, LayerRef, WeightSource};
use small_core::reference::{self, Shape};
use small_core::{Arch, Blocked, Dims, Error, LayerSpec, layer, model, threads};

const ARCH: Arch = Arch::Reference;

#[layer(fh = 3, fw = 3, fc = 5, k = 20, stride = 2, padding = same, activation = relu, archs(reference))]
struct ConvS2;
#[layer(fh = 3, fw = 3, fc = 3, k = 8, padding = same, activation = relu6, archs(reference))]
struct ConvSame;
#[layer(fh = 2, fw = 3, fc = 4, k = 6, padding = valid, archs(reference))]
struct ConvValid;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 20, padding = same, activation = relu, archs(reference))]
struct Depthwise;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 20, stride = 2, padding = same, archs(reference))]
struct DepthwiseS2;
#[layer(fh = 1, fw = 1, fc = 20, k = 24, archs(reference))]
struct Pointwise;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 20, stride = 2, padding = same, reduction = max, archs(reference))]
struct MaxPool;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 20, padding = same, reduction = avg, archs(reference))]
struct AvgPool;
#[layer(fh = 3, fw = 5, fc = 1, k = 1, g = 20, padding = valid, reduction = avg, archs(reference))]
struct GlobalAvg;
#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 20, reduction = max, activation = relu, archs(reference))]
struct Relu;
#[layer(fh = 3, fw = 3, fc = 20, k = 10, padding = valid, archs(reference))]
struct Fc;
#[layer(fh = 1, fw = 1, fc = 20, k = 20, residual, activation = relu, archs(reference))]
struct Residual;
#[layer(fh = 3, fw = 3, fc = 18, k = 18, padding = same, residual, archs(reference))]
struct Residual3x3;
/// More weights per output tile than `nest::L1_WEIGHT_BYTES` (the scalar
/// tile is 3 columns x 4 channels, so 10 input blocks of 9 x 16 x 4
/// weights fit; this has 11 and a partial 12th): the reduction runs in two
/// chunks of input blocks, the partial sums kept in the output.
#[layer(fh = 3, fw = 3, fc = 181, k = 4, padding = same, archs(reference))]
struct Chunked;

/// Small seeded generator (as `small_tests::Rng`, which this crate cannot use).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn unit(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as f32 / (1u64 << 31) as f32 - 1.0
    }
    fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.unit()).collect()
    }
}

/// Checks `got` (NHWC) against the reference of `spec` within its bound.
#[allow(clippy::too_many_arguments)]
fn check(
    name: &str,
    spec: &LayerSpec,
    x: &[f32],
    shape: Shape,
    w: &[f32],
    b: Option<&[f32]>,
    skip: Option<&[f32]>,
    got: &[f32],
) {
    let w = Filter::ohwi(w);
    let (want, _) = reference::layer(spec, x, shape, w, b, skip).unwrap();
    let tol = reference::tolerances(spec, x, shape, w, b, skip);
    assert_eq!(got.len(), want.len(), "{name} {shape:?}: output length");
    for (i, ((g, r), t)) in got.iter().zip(&want).zip(&tol).enumerate() {
        // NaN on either side fails.
        assert!(
            (g - r).abs() <= *t,
            "{name} {shape:?}: element {i} is {g}, reference {r}, tolerance {t}"
        );
    }
}

/// Runs a weighted layer type on each `(h, w)` and checks it.
macro_rules! check_weighted {
    ($ty:ty, $shapes:expr) => {{
        let mut rng = Rng::new(line!() as u64);
        let spec = <$ty>::SPEC;
        let c = spec.in_channels();
        let wts = rng.vec(<$ty>::WEIGHTS_LEN);
        let bias = rng.vec(spec.out_channels());
        let l = <$ty>::with_arch(ARCH, Filter::ohwi(&wts), Some(&bias))?;
        for (h, w) in $shapes {
            let shape = Shape { h, w, c };
            let x = rng.vec(shape.len());
            let xb = Blocked::from_nhwc(Dims { c, h, w }, &x)?;
            let mut y = l.alloc_output(&xb)?;
            l.forward(&xb, &mut y)?;
            check(
                stringify!($ty),
                &spec,
                &x,
                shape,
                &wts,
                Some(&bias),
                None,
                &y.to_nhwc(),
            );
        }
    }};
}

/// As [`check_weighted`] for layers without weights (max and avg pools).
macro_rules! check_unweighted {
    ($ty:ty, $shapes:expr) => {{
        let mut rng = Rng::new(line!() as u64);
        let spec = <$ty>::SPEC;
        let c = spec.in_channels();
        let l = <$ty>::with_arch(ARCH)?;
        for (h, w) in $shapes {
            let shape = Shape { h, w, c };
            let x = rng.vec(shape.len());
            let xb = Blocked::from_nhwc(Dims { c, h, w }, &x)?;
            let mut y = l.alloc_output(&xb)?;
            l.forward(&xb, &mut y)?;
            check(
                stringify!($ty),
                &spec,
                &x,
                shape,
                &[],
                None,
                None,
                &y.to_nhwc(),
            );
        }
    }};
}

#[test]
fn conv_3x3_same_stride_2_at_odd_widths() -> Result<(), Error> {
    // Output widths 1..=6: below, at and past the tile width.
    check_weighted!(ConvS2, [(1, 1), (2, 3), (3, 5), (4, 7), (2, 9), (1, 12)]);
    Ok(())
}

#[test]
fn conv_3x3_same_and_valid_at_odd_widths() -> Result<(), Error> {
    check_weighted!(ConvSame, [(1, 1), (2, 2), (3, 5), (2, 7), (1, 10)]);
    check_weighted!(ConvValid, [(2, 3), (3, 4), (2, 7), (4, 9)]);
    Ok(())
}

#[test]
fn depthwise_at_odd_widths() -> Result<(), Error> {
    check_weighted!(Depthwise, [(1, 1), (2, 3), (3, 6), (2, 9)]);
    check_weighted!(DepthwiseS2, [(1, 2), (3, 5), (4, 8)]);
    Ok(())
}

#[test]
fn pointwise_as_one_row() -> Result<(), Error> {
    check_weighted!(Pointwise, [(1, 1), (1, 5), (3, 3), (2, 7)]);
    Ok(())
}

#[test]
fn pools_and_relu() -> Result<(), Error> {
    check_unweighted!(MaxPool, [(1, 1), (2, 3), (3, 6), (5, 7)]);
    check_unweighted!(AvgPool, [(1, 1), (2, 5), (3, 4)]);
    check_unweighted!(GlobalAvg, [(3, 5)]);
    check_unweighted!(Relu, [(1, 1), (2, 5), (3, 3)]);
    Ok(())
}

#[layer(fh = 1, fw = 1, fc = 20, k = 20, archs(reference))]
struct Pointwise20;

/// As [`check_weighted`], with the output over the input in one buffer
/// (`forward_in_buffer`, as `model!` runs a layer without `std`): Miri
/// checks that the walk's reads and writes stay inside the buffer and
/// share its provenance.
macro_rules! check_in_buffer {
    ($ty:ty, $shapes:expr) => {{
        let mut rng = Rng::new(line!() as u64);
        let spec = <$ty>::SPEC;
        let c = spec.in_channels();
        let wts = rng.vec(<$ty>::WEIGHTS_LEN);
        let bias = rng.vec(spec.out_channels());
        let l = <$ty>::with_arch(ARCH, Filter::ohwi(&wts), Some(&bias))?;
        for (h, w) in $shapes {
            let shape = Shape { h, w, c };
            let x = rng.vec(shape.len());
            let xb = Blocked::from_nhwc(Dims { c, h, w }, &x)?;
            let yd = l.alloc_output(&xb)?.dims();
            let b = l.blocking();
            let shift = small_core::plan::in_place_shift(&spec, xb.dims(), yd, b.o_wb, b.tc)
                .expect("runs in place");
            let (xl, yl) = (xb.as_slice().len(), yd.len());
            let mut buf = vec![0.0; (shift + xl).max(yl)];
            buf[shift..shift + xl].copy_from_slice(xb.as_slice());
            l.forward_in_buffer(&mut buf, (shift, xb.dims()), (0, yd))?;
            let y = Blocked::from_buffer(yd, &buf[..yl])?;
            check(
                stringify!($ty),
                &spec,
                &x,
                shape,
                &wts,
                Some(&bias),
                None,
                &y.to_nhwc(),
            );
        }
    }};
}

#[test]
fn layers_over_their_own_input() -> Result<(), Error> {
    check_in_buffer!(Depthwise, [(3, 5), (4, 2)]);
    check_in_buffer!(DepthwiseS2, [(3, 5)]);
    check_in_buffer!(Pointwise20, [(3, 5), (2, 7)]);
    Ok(())
}

#[test]
fn fully_connected() -> Result<(), Error> {
    check_weighted!(Fc, [(3, 3)]);
    Ok(())
}

#[test]
fn reduction_in_chunks() -> Result<(), Error> {
    check_weighted!(Chunked, [(1, 1), (1, 4)]);
    Ok(())
}

#[test]
fn residual_with_a_skip_tensor_and_in_place() -> Result<(), Error> {
    let mut rng = Rng::new(7);
    let (w1, b1) = (rng.vec(Residual::WEIGHTS_LEN), rng.vec(20));
    let (w3, b3) = (rng.vec(Residual3x3::WEIGHTS_LEN), rng.vec(18));
    let r1 = Residual::with_arch(ARCH, Filter::ohwi(&w1), Some(&b1))?;
    let r3 = Residual3x3::with_arch(ARCH, Filter::ohwi(&w3), Some(&b3))?;
    let spec1 = Residual::SPEC;
    for (h, w) in [(1, 1), (2, 5), (3, 7)] {
        let shape = Shape { h, w, c: 20 };
        let x = rng.vec(shape.len());
        let skip = rng.vec(shape.len());
        let xb = Blocked::from_nhwc(Dims { c: 20, h, w }, &x)?;
        let sb = Blocked::from_nhwc(Dims { c: 20, h, w }, &skip)?;
        // A separate skip tensor.
        let mut y = r1.alloc_output(&xb)?;
        r1.forward_add(&xb, &sb, &mut y)?;
        let got = y.to_nhwc();
        check(
            "Residual",
            &spec1,
            &x,
            shape,
            &w1,
            Some(&b1),
            Some(&skip),
            &got,
        );
        // The skip already in the output.
        let mut y = Blocked::from_nhwc(Dims { c: 20, h, w }, &skip)?;
        r1.forward_add_in_place(&xb, &mut y)?;
        let got = y.to_nhwc();
        check(
            "in place",
            &spec1,
            &x,
            shape,
            &w1,
            Some(&b1),
            Some(&skip),
            &got,
        );
    }
    // 3x3, two channel blocks, the second partial, in place.
    let shape = Shape { h: 2, w: 5, c: 18 };
    let x = rng.vec(shape.len());
    let skip = rng.vec(shape.len());
    let xb = Blocked::from_nhwc(Dims { c: 18, h: 2, w: 5 }, &x)?;
    let mut y = Blocked::from_nhwc(Dims { c: 18, h: 2, w: 5 }, &skip)?;
    r3.forward_add_in_place(&xb, &mut y)?;
    let (spec3, got) = (Residual3x3::SPEC, y.to_nhwc());
    check(
        "3x3 in place",
        &spec3,
        &x,
        shape,
        &w3,
        Some(&b3),
        Some(&skip),
        &got,
    );
    Ok(())
}

#[layer(fh = 3, fw = 3, fc = 3, k = 8, stride = 2, padding = same, activation = relu, archs(reference))]
struct NetConv;
#[layer(fh = 3, fw = 3, fc = 8, k = 8, padding = same, activation = relu, residual, archs(reference))]
struct NetRes;

model! {
    /// conv (stride 2), then conv + skip, in place: the arena plan and
    /// the model's wiring under Miri.
    struct Tiny {
        input x: [7, 9, 3];
        conv: NetConv @ 0 (x) -> a;
        res: NetRes @ 1 => 2 (a, + a) -> b;
    }
}

/// The model's output equals its two layers run one by one (the same
/// kernels: equal bits), and each of those is within its bound of the
/// reference layer.
#[test]
fn two_layer_model() -> Result<(), Box<dyn std::error::Error>> {
    let source = Generated { seed: 5 };
    let net = Tiny::load(&source, ARCH)?;
    let mut arena = vec![0.0; Tiny::ARENA];
    let input = Rng::new(3).vec(7 * 9 * 3);
    Tiny::input(&mut arena)?.fill_from_nhwc(&input)?;
    net.forward(&mut arena)?;
    let got = Tiny::output(&arena)?.to_nhwc();

    let weights = |name, op, spec| source.layer(LayerRef { name, op }, spec);
    let (w1, w2) = (
        weights("conv", 0, &NetConv::SPEC)?,
        weights("res", 1, &NetRes::SPEC)?,
    );
    let conv = NetConv::with_arch(ARCH, w1.filter(), w1.bias.as_deref())?;
    let res = NetRes::with_arch(ARCH, w2.filter(), w2.bias.as_deref())?;
    let x = Blocked::from_nhwc(Dims { c: 3, h: 7, w: 9 }, &input)?;
    let mut a = conv.alloc_output(&x)?;
    conv.forward(&x, &mut a)?;
    let mut b = res.alloc_output(&a)?;
    res.forward_add(&a, &a, &mut b)?;
    let (a_nhwc, b_nhwc) = (a.to_nhwc(), b.to_nhwc());
    assert!(
        got.iter()
            .map(|v| v.to_bits())
            .eq(b_nhwc.iter().map(|v| v.to_bits())),
        "the model's output differs from its layers run one by one"
    );
    let (sx, sa) = (Shape { h: 7, w: 9, c: 3 }, Shape::from(a.dims()));
    let (b1, b2) = (w1.bias.as_deref(), w2.bias.as_deref());
    check(
        "conv",
        &NetConv::SPEC,
        &input,
        sx,
        &w1.weights,
        b1,
        None,
        &a_nhwc,
    );
    check(
        "res",
        &NetRes::SPEC,
        &a_nhwc,
        sa,
        &w2.weights,
        b2,
        Some(&a_nhwc),
        &b_nhwc,
    );
    Ok(())
}

/// A layer just large enough to be split in two parts (`MACs / 40 k`,
/// here 35 x 2304 = 80.6 k MACs) on a pool of two threads (Miri reports
/// one core, which `set_threads` would cap at): under Miri, a part that
/// wrote outside its rows would race with the other (the data-race
/// detector). The pool is set back to one thread afterwards.
#[test]
fn two_threads_split_rows_without_a_race() -> Result<(), Error> {
    let mut rng = Rng::new(11);
    let (wts, bias) = (rng.vec(Split::WEIGHTS_LEN), rng.vec(16));
    let l = Split::with_arch(ARCH, Filter::ohwi(&wts), Some(&bias))?;
    let shape = Shape { h: 5, w: 7, c: 16 };
    let x = rng.vec(shape.len());
    let xb = Blocked::from_nhwc(Dims { c: 16, h: 5, w: 7 }, &x)?;
    let mut y = l.alloc_output(&xb)?;
    threads::set_pool(threads::Pool::new(2));
    assert_eq!(threads::threads(), 2);
    let r = l.forward(&xb, &mut y);
    threads::set_threads(1);
    r?;
    let spec = Split::SPEC;
    check(
        "split",
        &spec,
        &x,
        shape,
        &wts,
        Some(&bias),
        None,
        &y.to_nhwc(),
    );
    Ok(())
}

#[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same, archs(reference))]
struct Split;

#[layer(fh = 3, fw = 3, fc = 8, k = 16, padding = same, activation = relu, archs(reference))]
struct BandConv;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 16, padding = same, activation = relu, archs(reference))]
struct BandDw;
#[layer(fh = 1, fw = 1, fc = 16, k = 16, archs(reference))]
struct BandPw;

model! {
    /// Three lines that threads run as one band (`small_core::band`).
    struct Banded {
        input x: [12, 7, 8];
        conv: BandConv @ 0 (x) -> a;
        dw: BandDw @ 1 (a) -> b;
        pw: BandPw @ 2 (b) -> y;
    }
}

/// A band on a pool of two threads: each part reads the band's input
/// and writes its rows of the output through the one arena, and its
/// inner tensors in its thread's buffers. Under Miri, a part that wrote
/// outside its rows, or a reference that outlived its use, is an error;
/// the output equals one thread's bit for bit.
#[test]
fn two_threads_run_a_band_without_a_race() -> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(Banded::BANDS[0], 2, "{:?}", Banded::BANDS);
    let net = Banded::load(&Generated { seed: 7 }, ARCH)?;
    let input = Rng::new(5).vec(12 * 7 * 8);
    let run = |threads: usize| -> Result<Vec<u32>, Error> {
        threads::set_pool(threads::Pool::new(threads));
        let mut arena = vec![0.0; Banded::ARENA];
        Banded::input(&mut arena)?.fill_from_nhwc(&input)?;
        let r = net.forward(&mut arena);
        threads::set_threads(1);
        r?;
        Ok(Banded::output(&arena)?
            .to_nhwc()
            .iter()
            .map(|v| v.to_bits())
            .collect())
    };
    assert_eq!(run(2)?, run(1)?);
    Ok(())
}

// --- int8: every i8 kernel kind, through a model, bit for bit ---
#[layer(fh = 3, fw = 3, fc = 5, k = 20, stride = 2, padding = same, activation = relu, dtype = i8, archs(reference))]
struct ConvS2I8;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 20, padding = same, dtype = i8, archs(reference))]
struct DepthwiseI8;
#[layer(fh = 3, fw = 3, fc = 20, k = 20, padding = same, residual, activation = relu, dtype = i8, archs(reference))]
struct Residual3x3I8;
#[layer(fh = 2, fw = 3, fc = 1, k = 1, g = 20, stride = 2, padding = same, reduction = avg, dtype = i8, archs(reference))]
struct AvgPoolI8;
#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 20, padding = valid, reduction = max, dtype = i8, archs(reference))]
struct MaxPoolI8;
#[layer(fh = 1, fw = 1, fc = 20, k = 7, dtype = i8, archs(reference))]
struct FcI8;

model! {
    /// Every i8 kernel kind: a strided conv with border corrections, a
    /// depthwise layer, a residual conv in place, both pools and an FC.
    struct TinyI8 {
        input x: [5, 7, 5] i8;
        conv: ConvS2I8 @ 0 (x) -> a;
        dw: DepthwiseI8 @ 1 (a) -> b;
        res: Residual3x3I8 @ 2 => 3 (b, + b) -> c;
        avg: AvgPoolI8 @ 4 (c) -> d;
        max: MaxPoolI8 @ 5 (d) -> e;
        fc: FcI8 @ 6 (e) -> f;
    }
}

/// Each i8 layer, run on the reference's own inputs, equals the int8
/// reference operators' output (`reference_run_i8`) exactly.
#[test]
fn int8_layers_of_every_kind() -> Result<(), Box<dyn std::error::Error>> {
    let source = Generated { seed: 9 };
    let net = TinyI8::load(&source, ARCH)?;
    let mut rng = Rng::new(5);
    let input: Vec<i8> = (0..TinyI8::DIMS[0].elements())
        .map(|_| (rng.unit() * 128.0) as i8)
        .collect();
    let values =
        small_core::model::reference_run_i8(&source, &TinyI8::LAYERS, &TinyI8::DIMS, &input)?;
    let mut arena = vec![0i8; TinyI8::ARENA];
    for (i, l) in TinyI8::LAYERS.iter().enumerate() {
        TinyI8::tensor_mut(&mut arena, l.step.x)?.fill_from_nhwc(&values[l.step.x])?;
        net.forward_layer(i, &mut arena)?;
        let got = TinyI8::tensor(&arena, l.step.y)?.to_nhwc();
        assert_eq!(got, values[l.step.y], "layer {i} `{}`", l.name);
    }
    Ok(())
}

// --- concatenation: lanes shifted across a block, in a model's arena ---
#[layer(fh = 1, fw = 1, fc = 3, k = 5, activation = relu, archs(reference))]
struct Branch5;
#[layer(fh = 3, fw = 3, fc = 3, k = 16, padding = same, archs(reference))]
struct Branch16;
#[layer(fh = 1, fw = 1, fc = 24, k = 4, archs(reference))]
struct Mix24;
#[layer(fh = 1, fw = 1, fc = 3, k = 5, activation = relu, dtype = i8, archs(reference))]
struct Branch5I8;
#[layer(fh = 3, fw = 3, fc = 3, k = 16, padding = same, dtype = i8, archs(reference))]
struct Branch16I8;
#[layer(fh = 1, fw = 1, fc = 24, k = 4, dtype = i8, archs(reference))]
struct Mix24I8;

model! {
    /// 5 + 16 + 3 channels: the 16 at offset 5 straddle two blocks, the
    /// input lands at 21, lanes 24..32 are padding.
    struct Cat {
        input x: [5, 7, 3];
        a: Branch5 @ 0 (x) -> a;
        b: Branch16 @ 1 (x) -> b;
        cat: concat @ 2 (a, b, x) -> ab;
        mix: Mix24 @ 3 (ab) -> y;
    }
}

model! {
    /// [`Cat`] in int8.
    struct CatI8 {
        input x: [5, 7, 3] i8;
        a: Branch5I8 @ 0 (x) -> a;
        b: Branch16I8 @ 1 (x) -> b;
        cat: concat @ 2 (a, b, x) -> ab;
        mix: Mix24I8 @ 3 (ab) -> y;
    }
}

/// The NHWC concatenation of tensors `ids` of a model's arena.
fn joined<E: small_core::Element + Default>(
    ids: &[usize],
    tensor: impl Fn(usize) -> (Vec<E>, Dims),
) -> Vec<E> {
    let parts: Vec<(Vec<E>, Dims)> = ids.iter().map(|&i| tensor(i)).collect();
    let inputs: Vec<(&[E], Shape)> = (parts.iter())
        .map(|(v, d)| (v.as_slice(), Shape::from(*d)))
        .collect();
    let c = parts.iter().map(|(_, d)| d.c).sum::<usize>();
    let mut out = vec![E::default(); c * parts[0].1.h * parts[0].1.w];
    reference::concat(&inputs, &mut out).unwrap();
    out
}

/// A concatenation in a model whose arena starts as garbage (NaN): its
/// output is its inputs' channels side by side, as the kernels wrote
/// them, with zero padding lanes (NaN there would reach `mix`, whose
/// padded weights are zero but `0 * NaN` is not); the output equals the
/// reference run's. The plan keeps every input live until it runs (the
/// input, read by the first layer, is read again by the concatenation).
#[test]
fn concatenation_in_a_model() -> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(Cat::DIMS[3], Dims { c: 24, h: 5, w: 7 });
    assert_eq!((Cat::LAYERS[2].spec, Cat::LAYERS[2].macs), (None, 0));
    assert_eq!(Cat::LAYERS[2].step.concat, &[1, 2, 0]);
    assert!(!Cat::IN_PLACE[2]);
    let source = Generated { seed: 4 };
    let net = Cat::load(&source, ARCH)?;
    assert!(net.blockings()[2].is_none() && net.blockings()[3].is_some());
    let mut rng = Rng::new(8);
    let input = rng.vec(Cat::DIMS[0].elements());
    let want = Cat::reference(&source, &input)?;
    let mut arena = vec![f32::NAN; Cat::ARENA];
    Cat::input(&mut arena)?.fill_from_nhwc(&input)?;
    for i in 0..3 {
        net.forward_layer(i, &mut arena)?;
    }
    let t = |i: usize| {
        let t = Cat::tensor(&arena, i).unwrap();
        (t.to_nhwc(), t.dims())
    };
    // Right after the concatenation every input is intact (the plan
    // placed none of them over another or the output).
    assert_eq!(t(3).0, joined(&[1, 2, 0], t));
    assert_eq!(t(0).0, input);
    assert!(Blocked::from_buffer(Cat::DIMS[3], Cat::tensor(&arena, 3)?.as_slice()).is_ok());
    net.forward_layer(3, &mut arena)?;
    let got = Cat::output(&arena)?.to_nhwc();
    for (g, w) in got.iter().zip(&want[4]) {
        assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "{g} vs {w}");
    }

    // int8, line by line on the reference's inputs, exactly.
    let source = Generated { seed: 6 };
    let net = CatI8::load(&source, ARCH)?;
    let input: Vec<i8> = (0..CatI8::DIMS[0].elements())
        .map(|_| (rng.unit() * 128.0) as i8)
        .collect();
    let values =
        small_core::model::reference_run_i8(&source, &CatI8::LAYERS, &CatI8::DIMS, &input)?;
    let mut arena = vec![0x55i8; CatI8::ARENA];
    for (i, l) in CatI8::LAYERS.iter().enumerate() {
        for x in l.step.reads() {
            CatI8::tensor_mut(&mut arena, x)?.fill_from_nhwc(&values[x])?;
        }
        net.forward_layer(i, &mut arena)?;
        let got = CatI8::tensor(&arena, l.step.y)?;
        assert_eq!(got.to_nhwc(), values[l.step.y], "layer {i} `{}`", l.name);
    }
    // The concatenation's padding lanes are zero as well. (An int8 layer
    // writes its output zero point there, which no int8 kernel reads:
    // their weights for padding lanes are zero.)
    for x in CatI8::LAYERS[2].step.reads() {
        CatI8::tensor_mut(&mut arena, x)?.fill_from_nhwc(&values[x])?;
    }
    CatI8::tensor_mut(&mut arena, 3)?.as_mut_slice().fill(0x55);
    net.forward_layer(2, &mut arena)?;
    let cat = CatI8::tensor(&arena, 3)?;
    assert!(Blocked::from_buffer(cat.dims(), cat.as_slice()).is_ok());
    Ok(())
}

/// An int8 network on words packed ahead of time (`from_packed`: its
/// layers read their rows and tiles in place through
/// `small_core::words`) gives the bits of the network loaded from the
/// same source.
#[test]
fn int8_model_from_packed_words() -> Result<(), Box<dyn std::error::Error>> {
    // Reachable from a static for the program's lifetime: `from_packed`
    // borrows it `'static`, and Miri counts it as no leak.
    static WORDS: std::sync::OnceLock<Vec<f32>> = std::sync::OnceLock::new();
    let source = Generated { seed: 6 };
    let mut words = vec![0.0; CatI8::packed_len(ARCH)];
    CatI8::pack(&source, ARCH, &mut words)?;
    let packed = CatI8::from_packed(ARCH, WORDS.get_or_init(|| words))?;
    let loaded = CatI8::load(&source, ARCH)?;
    let mut rng = Rng::new(9);
    let input: Vec<i8> = (0..CatI8::DIMS[0].elements())
        .map(|_| (rng.unit() * 128.0) as i8)
        .collect();
    let run = |net: &CatI8| -> Result<Vec<i8>, Error> {
        let mut arena = vec![0x55i8; CatI8::ARENA];
        CatI8::input(&mut arena)?.fill_from_nhwc(&input)?;
        net.forward(&mut arena)?;
        Ok(CatI8::output(&arena)?.to_nhwc())
    };
    assert_eq!(run(&packed)?, run(&loaded)?);
    Ok(())
}
