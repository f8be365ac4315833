//! Results are bit-identical for every thread count: the loop nest splits
//! independent output rows, never a reduction. Every layer class and the
//! MLPerf Tiny networks run with 1, 2, 3 and 8 threads (on any machine; 8
//! oversubscribes a 2-core one) and must give the same bits. The shapes
//! are large enough (over 2 x `MIN_PART_MACS`) that the calls do split.
//!
//! One test function: the thread count is process-wide.

use small_core::Filter;
use small_core::load::Generated;
use small_core::{Blocked, Dims, layer, threads};
use small_examples::models::{Int8Network, Network, ad, dscnn, resnet8, vww};
use small_tests::Rng;

#[layer(fh = 3, fw = 3, fc = 16, k = 32, padding = same, activation = relu)]
struct Conv;

// A band of five lines (`small_core::band`) with every edge of one: an
// odd height, a stride-2 and a 5x5 depthwise layer (halo rows of 1 and
// 2), channel counts off the SIMD width, pointwise layers whose one-row
// walk splits inside an output row, and the model's output as its end.
#[layer(fh = 3, fw = 3, fc = 4, k = 20, padding = same, activation = relu)]
struct BandConv;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 20, stride = 2, padding = same, activation = relu6)]
struct BandDwS2;
#[layer(fh = 1, fw = 1, fc = 20, k = 36, activation = relu)]
struct BandPw1;
#[layer(fh = 5, fw = 5, fc = 1, k = 1, g = 36, padding = same)]
struct BandDw5;
#[layer(fh = 1, fw = 1, fc = 36, k = 24)]
struct BandPw2;
small_core::model! {
    struct Banded {
        input x: [41, 9, 4];
        conv: BandConv @ 0 (x) -> a;
        dw1: BandDwS2 @ 1 (a) -> b;
        pw1: BandPw1 @ 2 (b) -> c;
        dw2: BandDw5 @ 3 (c) -> d;
        pw2: BandPw2 @ 4 (d) -> y;
    }
}
#[layer(fh = 3, fw = 3, fc = 120, k = 64, stride = 2, padding = same)]
struct ConvChunked;
#[layer(fh = 3, fw = 3, fc = 32, k = 32, padding = same, residual, activation = relu)]
struct ConvAdd;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 64, padding = same, activation = relu6)]
struct Depthwise;
#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 64, stride = 2, reduction = max)]
struct MaxPool;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 64, stride = 2, padding = same, reduction = avg)]
struct AvgPool;
#[layer(fh = 1, fw = 1, fc = 1000, k = 1024)]
struct Dense;
// One channel tile and one (flattened) row: the row's column tiles are
// split over the parts, the last partial one without the left shift.
#[layer(fh = 1, fw = 1, fc = 16, k = 16, activation = relu)]
struct Pointwise;
// The same with a reduction chunked through the output.
#[layer(fh = 1, fw = 1, fc = 640, k = 64)]
struct PointwiseChunked;
// Elementwise (the flat walk): two channel blocks' planes as one row of
// an odd number of pixels, split into whole column tiles.
#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 20, reduction = max, activation = relu)]
struct Relu;

fn input(rng: &mut Rng, c: usize, h: usize, w: usize) -> Blocked<Vec<f32>> {
    Blocked::from_nhwc(Dims { c, h, w }, &rng.vec(h * w * c)).unwrap()
}

/// Runs `f` with each thread count and checks the results are identical.
fn same_bits(name: &str, f: &dyn Fn() -> Vec<f32>) {
    let mut first: Option<Vec<f32>> = None;
    for n in [1, 2, 3, 8] {
        // `set_threads` caps at the cores; a pool of its own can
        // oversubscribe them.
        threads::set_pool(threads::Pool::new(n));
        assert_eq!(threads::threads(), n);
        let got: Vec<u32> = f().iter().map(|v| v.to_bits()).collect();
        match &first {
            None => first = Some(got.iter().map(|b| f32::from_bits(*b)).collect()),
            Some(want) => {
                let want: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
                assert!(got == want, "{name}: {n} threads differ from 1 thread");
            }
        }
    }
    println!("{name}: identical with 1, 2, 3 and 8 threads");
}

fn model<N: Network>() {
    let net = N::load(
        &Generated { seed: 5 },
        small_core::arch::selected().unwrap(),
    )
    .unwrap();
    let x = Generated::values(9, N::DIMS[0].elements(), 1.0);
    let bands: Vec<_> = N::BANDS
        .iter()
        .enumerate()
        .filter(|b| *b.1 != usize::MAX)
        .collect();
    println!("{}: bands {bands:?}", N::NAME);
    same_bits(N::NAME, &|| {
        let mut arena = vec![0.0; N::ARENA];
        let mut out = vec![0.0; N::DIMS[N::OUTPUT].c];
        net.infer(&mut arena, &x, &mut out).unwrap();
        out
    });
}

/// An int8 network: its output bytes (as `f32`s, exact) for every thread
/// count. Its larger layers split (an `i8` broadcast call from 4 x
/// `MIN_PART_MACS`, `Problem::split_macs`), the smaller run whole.
fn model_i8<N: Int8Network>() {
    let net = N::load(
        &Generated { seed: 5 },
        small_core::arch::selected().unwrap(),
    )
    .unwrap();
    let x: Vec<i8> = Generated::values_i8(9, N::DIMS[0].elements());
    let bands: Vec<_> = N::BANDS
        .iter()
        .enumerate()
        .filter(|b| *b.1 != usize::MAX)
        .collect();
    println!("{} i8: bands {bands:?}", N::NAME);
    same_bits(&format!("{} i8", N::NAME), &|| {
        let mut arena = vec![0; N::ARENA];
        let mut out = vec![0; N::DIMS[N::OUTPUT].c];
        net.infer(&mut arena, &x, &mut out).unwrap();
        out.iter().map(|&v| f32::from(v)).collect()
    });
}

#[test]
fn every_thread_count_gives_the_same_bits() {
    let mut rng = Rng::new(42);
    let arch = small_core::arch::selected().unwrap();
    let w = |rng: &mut Rng, n| rng.vec(n);

    let x = input(&mut rng, 16, 33, 29);
    let l = Conv::with_arch(
        arch,
        Filter::ohwi(&w(&mut rng, Conv::WEIGHTS_LEN)),
        Some(&w(&mut rng, 32)),
    )
    .unwrap();
    same_bits("conv 3x3", &|| {
        let mut y = l.alloc_output(&x).unwrap();
        l.forward(&x, &mut y).unwrap();
        y.into_inner()
    });

    let x = input(&mut rng, 120, 14, 13);
    let l = ConvChunked::with_arch(
        arch,
        Filter::ohwi(&w(&mut rng, ConvChunked::WEIGHTS_LEN)),
        None,
    )
    .unwrap();
    same_bits("conv 3x3 s2, chunked reduction", &|| {
        let mut y = l.alloc_output(&x).unwrap();
        l.forward(&x, &mut y).unwrap();
        y.into_inner()
    });

    let x = input(&mut rng, 32, 30, 31);
    let skip = input(&mut rng, 32, 30, 31);
    let l = ConvAdd::with_arch(
        arch,
        Filter::ohwi(&w(&mut rng, ConvAdd::WEIGHTS_LEN)),
        Some(&w(&mut rng, 32)),
    )
    .unwrap();
    same_bits("conv 3x3 + residual", &|| {
        let mut y = l.alloc_output(&x).unwrap();
        l.forward_add(&x, &skip, &mut y).unwrap();
        y.into_inner()
    });
    same_bits("conv 3x3 + residual in place", &|| {
        let mut y = skip.clone();
        l.forward_add_in_place(&x, &mut y).unwrap();
        y.into_inner()
    });

    for (h, w_) in [(50, 33), (45, 47), (1, 3001)] {
        let x = input(&mut rng, 16, h, w_);
        let l = Pointwise::with_arch(
            arch,
            Filter::ohwi(&w(&mut rng, Pointwise::WEIGHTS_LEN)),
            Some(&w(&mut rng, 16)),
        )
        .unwrap();
        same_bits(&format!("pointwise {h}x{w_}, row split"), &|| {
            let mut y = l.alloc_output(&x).unwrap();
            l.forward(&x, &mut y).unwrap();
            y.into_inner()
        });
    }
    let x = input(&mut rng, 640, 7, 9);
    let l = PointwiseChunked::with_arch(
        arch,
        Filter::ohwi(&w(&mut rng, PointwiseChunked::WEIGHTS_LEN)),
        Some(&w(&mut rng, 64)),
    )
    .unwrap();
    same_bits("pointwise 640->64, chunked, row split", &|| {
        let mut y = l.alloc_output(&x).unwrap();
        l.forward(&x, &mut y).unwrap();
        y.into_inner()
    });

    let x = input(&mut rng, 64, 61, 59);
    let l = Depthwise::with_arch(
        arch,
        Filter::depthwise(&w(&mut rng, Depthwise::WEIGHTS_LEN)),
        None,
    )
    .unwrap();
    same_bits("depthwise 3x3", &|| {
        let mut y = l.alloc_output(&x).unwrap();
        l.forward(&x, &mut y).unwrap();
        y.into_inner()
    });

    for (h, w_) in [(37, 41), (1, 4099)] {
        let v = rng.vec(h * w_ * 20);
        let x = Blocked::from_nhwc(Dims { c: 20, h, w: w_ }, &v).unwrap();
        let l = Relu::with_arch(arch).unwrap();
        let run = || {
            let mut y = l.alloc_output(&x).unwrap();
            l.forward(&x, &mut y).unwrap();
            y
        };
        same_bits(&format!("relu {h}x{w_}x20, flat row split"), &|| {
            run().into_inner()
        });
        // ReLU is exact: every thread count's result is the reference's.
        let want: Vec<f32> = v.iter().map(|a| a.max(0.0)).collect();
        assert_eq!(run().to_nhwc(), want, "relu {h}x{w_}x20");
    }

    let x = input(&mut rng, 64, 96, 94);
    let l = MaxPool::with_arch(arch).unwrap();
    same_bits("max pool", &|| {
        let mut y = l.alloc_output(&x).unwrap();
        l.forward(&x, &mut y).unwrap();
        y.into_inner()
    });
    let l = AvgPool::with_arch(arch).unwrap();
    same_bits("avg pool", &|| {
        let mut y = l.alloc_output(&x).unwrap();
        l.forward(&x, &mut y).unwrap();
        y.into_inner()
    });

    let x = input(&mut rng, 1000, 1, 1);
    let l = Dense::with_arch(
        arch,
        Filter::ohwi(&w(&mut rng, Dense::WEIGHTS_LEN)),
        Some(&w(&mut rng, 1024)),
    )
    .unwrap();
    same_bits("fully connected", &|| {
        let mut y = l.alloc_output(&x).unwrap();
        l.forward(&x, &mut y).unwrap();
        y.into_inner()
    });

    // The band's lines run as one job from 2 threads on.
    assert_eq!(Banded::BANDS[0], 4, "bands {:?}", Banded::BANDS);
    let net = Banded::load(&Generated { seed: 3 }, arch).unwrap();
    let x = Generated::values(4, Banded::DIMS[0].elements(), 1.0);
    same_bits("a band of 5 lines", &|| {
        let mut arena = vec![f32::NAN; Banded::ARENA];
        Banded::input(&mut arena)
            .unwrap()
            .fill_from_nhwc(&x)
            .unwrap();
        net.forward(&mut arena).unwrap();
        Banded::output(&arena).unwrap().as_slice().to_vec()
    });

    model::<resnet8::Resnet8>();
    model::<vww::Vww>();
    model::<dscnn::DsCnn>();
    model::<ad::Autoencoder>();
    model_i8::<resnet8::int8::Resnet8>();
    model_i8::<vww::int8::Vww>();
    model_i8::<dscnn::int8::DsCnn>();
    model_i8::<ad::int8::Autoencoder>();
    threads::set_threads(1);
}
