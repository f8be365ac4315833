//! Every class of generated kernel against the reference layers, on every
//! arch the CPU can run, over randomized shapes that hit every edge:
//! `H, W` from 1 to beyond two tiles, one-column outputs, widths that are
//! not a multiple of `O_wb`, channels that are not a multiple of `CB`,
//! strides 1-3, both paddings, filters from 1x1 to 12 wide and 10x4,
//! inputs smaller than the filter. FMA layers are compared within the bound derived from their
//! reduction length (`small_kernel_tests::tolerances`); max layers exactly.

use small_core::reference::Shape;
use small_core::{Arch, Blocked, Dims, Error, Filter, LayerSpec, Order, layer};
use small_kernel_tests::{Rng, first_mismatch, in_buffer, reference_forward, tolerances};

/// Builds the layer on an arch and runs it: (arch, weights, bias, input, residual).
type Run<'a> = &'a dyn Fn(
    Arch,
    Filter<'_>,
    Option<&[f32]>,
    &Blocked<Vec<f32>>,
    Option<&Blocked<Vec<f32>>>,
) -> Result<Blocked<Vec<f32>>, Error>;

/// Runs `cases` random shapes of one layer on every available arch.
fn check(name: &str, spec: &LayerSpec, max_owb: usize, cases: usize, run: Run) {
    let mut rng = Rng::new(
        name.bytes()
            .fold(17u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64)),
    );
    let mut counts: Vec<(Arch, usize)> = small_core::arch::available().map(|a| (a, 0)).collect();
    for case in 0..cases {
        // Heights and widths from 1 (smaller than most filters) to beyond
        // two tiles; every fourth width gives a one-column output (a
        // full-width filter: global pooling, the narrow kernels).
        let h = rng.range(1, spec.fh + 8);
        let w = match case % 4 {
            0 => rng.range(1, 6),
            1 => rng.range(spec.fw, spec.fw + spec.sw - 1),
            _ => rng.range(1, 2 * max_owb * spec.sw + 7),
        };
        // One-pixel outputs (fully connected layers and their kin, the
        // loop nest's `run_pixel`): a window-sized input (one pixel with
        // valid padding) and a 1x1 input (one pixel with same padding).
        let (h, w) = match case % 8 {
            3 => (spec.fh, spec.fw),
            7 => (1, 1),
            _ => (h, w),
        };
        let shape = Shape {
            h,
            w,
            c: spec.in_channels(),
        };
        let input = rng.vec(shape.len());
        let weights = rng.vec(spec.weights_len());
        // Layers with one input channel per group take either of TFLite's
        // orders (the reference reorders on its own): alternate them.
        let order = match (spec.fc, case % 2) {
            (1, 1) => Order::Depthwise,
            _ => Order::Ohwi,
        };
        let filter = Filter {
            order,
            values: &weights,
        };
        let bias = (spec.has_weights() && case % 2 == 0).then(|| rng.vec(spec.out_channels()));
        let x = Blocked::from_nhwc(Dims { c: shape.c, h, w }, &input).unwrap();
        // Residual layers add a random tensor of the output's shape.
        let skip = spec.residual.then(|| {
            let (dh, dw) = spec
                .output_dims(h, w)
                .map_or((1, 1), |(a, b)| (a.out, b.out));
            let v = rng.vec(dh * dw * spec.out_channels());
            let d = Dims {
                c: spec.out_channels(),
                h: dh,
                w: dw,
            };
            let b = Blocked::from_nhwc(d, &v).unwrap();
            (v, b)
        });
        let skip_nhwc = skip.as_ref().map(|s| s.0.as_slice());
        let want = reference_forward(spec, &input, shape, filter, bias.as_deref(), skip_nhwc);
        for (arch, count) in counts.iter_mut() {
            let got = run(
                *arch,
                filter,
                bias.as_deref(),
                &x,
                skip.as_ref().map(|s| &s.1),
            );
            match (&want, got) {
                (Err(e), Err(g)) => {
                    assert_eq!(e, &g, "{name} {arch:?} h={h} w={w}: different errors")
                }
                (Ok((want, out_shape)), Ok(y)) => {
                    assert_eq!(
                        (y.h(), y.w(), y.c()),
                        (out_shape.h, out_shape.w, out_shape.c)
                    );
                    let tol = tolerances(spec, &input, shape, filter, bias.as_deref(), skip_nhwc);
                    if let Some((i, g, r, t)) = first_mismatch(&y.to_nhwc(), want, &tol) {
                        panic!(
                            "{name} on {arch:?}, input {h}x{w}: element {i} is {g}, reference {r}, tolerance {t}"
                        );
                    }
                    let padding_ok = Blocked::from_buffer(y.dims(), y.as_slice()).is_ok();
                    assert!(
                        padding_ok,
                        "{name} on {arch:?}: padding lanes of the output are not zero"
                    );
                }
                (want, got) => {
                    panic!("{name} on {arch:?} h={h} w={w}: reference {want:?}, generated {got:?}")
                }
            }
            *count += 1;
        }
    }
    let counts: Vec<String> = counts
        .iter()
        .map(|(a, n)| format!("{} {n}", a.name()))
        .collect();
    let missing: Vec<&str> = Arch::ALL
        .iter()
        .filter(|a| !a.available())
        .map(|a| a.name())
        .collect();
    println!(
        "{name}: cases run per arch: {}; not runnable here (build-checked only): {missing:?}",
        counts.join(", ")
    );
}

/// A test of `$layer` over `$cases` random shapes: `$build` makes the layer
/// from (arch, weights, bias), `$run` runs it as (layer, x, skip, y).
macro_rules! case {
    ($test:ident, $layer:ident, $cases:expr, $build:expr, $run:expr) => {
        #[test]
        fn $test() {
            let owb = $layer::BLOCKING.iter().map(|b| b.o_wb).max().unwrap();
            check(
                stringify!($test),
                &$layer::SPEC,
                owb,
                $cases,
                &|arch, w, b, x, skip| {
                    let l: $layer = $build(arch, w, b)?;
                    assert_eq!(l.arch(), arch);
                    let mut y = l.alloc_output(x)?;
                    // Every lane poisoned, the padding lanes too: the
                    // layer must write each of them (zeros in the padding).
                    y.as_mut_slice().fill(f32::NAN);
                    $run(&l, x, skip, &mut y)?;
                    Ok(y)
                },
            );
        }
    };
}

/// Layers with weights: `with_arch(arch, weights, bias)`, `forward(x, y)`.
macro_rules! fma_case {
    ($test:ident, $layer:ident, $cases:expr) => {
        case!(
            $test,
            $layer,
            $cases,
            $layer::with_arch,
            |l: &$layer, x, _, y| l.forward(x, y)
        );
    };
}

/// Residual layers: `forward_add(x, skip, y)`.
macro_rules! residual_case {
    ($test:ident, $layer:ident, $cases:expr) => {
        case!(
            $test,
            $layer,
            $cases,
            $layer::with_arch,
            |l: &$layer, x, s: Option<_>, y| { l.forward_add(x, s.expect("residual case"), y) }
        );
    };
}

/// Residual layers writing over their residual: `y = skip`, then
/// `forward_add_in_place(x, y)`.
macro_rules! residual_in_place_case {
    ($test:ident, $layer:ident, $cases:expr) => {
        case!(
            $test,
            $layer,
            $cases,
            $layer::with_arch,
            |l: &$layer, x, s: Option<&Blocked<Vec<f32>>>, y: &mut Blocked<Vec<f32>>| {
                let s = s.expect("residual case");
                small_core::__rt::check_len("skip", y.as_slice().len(), s.as_slice().len())?;
                *y = s.clone();
                l.forward_add_in_place(x, y)
            }
        );
    };
}

/// A layer over its own input in one buffer (`forward_in_buffer`, as
/// `model!` runs it without `std`): the output starts
/// `small_core::plan::in_place_shift` elements below the input and
/// overlaps the rest of it, so a walk that let an output land on input
/// still to be read fails the comparison. Where the layer cannot run so
/// (the shift is 0: the output plane is larger), the output lies past
/// the input in the buffer.
macro_rules! in_buffer_case {
    ($test:ident, $layer:ident, $cases:expr, $build:expr) => {
        case!($test, $layer, $cases, $build, |l: &$layer,
                                              x: &Blocked<Vec<f32>>,
                                              _,
                                              y: &mut Blocked<
            Vec<f32>,
        >| {
            let (b, (xd, yd)) = (l.blocking(), (x.dims(), y.dims()));
            let shift = small_core::plan::in_place_shift(&$layer::SPEC, xd, yd, b.o_wb, b.tc);
            let yl = y.as_slice().len();
            let (mut buf, x_at, y_at) = in_buffer(x.as_slice(), shift, yl, f32::NAN);
            l.forward_in_buffer(&mut buf, (x_at, xd), (y_at, yd))?;
            *y = Blocked::from_buffer(yd, buf[y_at..y_at + yl].to_vec())?;
            Ok(())
        });
    };
}

/// Layers without weights (max and average reductions): `with_arch(arch)`.
macro_rules! pool_case {
    ($test:ident, $layer:ident, $cases:expr) => {
        case!(
            $test,
            $layer,
            $cases,
            |a, _, _| $layer::with_arch(a),
            |l: &$layer, x, _, y| { l.forward(x, y) }
        );
    };
}

// --- Full-channel convolutions (broadcast kernels) ---
#[layer(fh = 3, fw = 3, fc = 16, k = 32, padding = same, activation = relu)]
struct Conv3x3;
fma_case!(conv_3x3_s1_same_16_to_32_relu, Conv3x3, 40);

#[layer(fh = 3, fw = 3, fc = 3, k = 17, stride = 2, padding = same)]
struct Conv3x3S2;
fma_case!(conv_3x3_s2_same_3_to_17, Conv3x3S2, 40);

#[layer(fh = 5, fw = 5, fc = 17, k = 8, padding = valid)]
struct Conv5x5Valid;
fma_case!(conv_5x5_valid_17_to_8, Conv5x5Valid, 30);

#[layer(fh = 10, fw = 4, fc = 1, k = 64, stride = 2, padding = same, activation = relu)]
struct Conv10x4;
fma_case!(conv_10x4_s2_same_1_to_64_kws, Conv10x4, 30);

#[layer(fh = 1, fw = 1, fc = 32, k = 64, activation = relu6)]
struct Pointwise;
fma_case!(pointwise_32_to_64_relu6, Pointwise, 40);

#[layer(fh = 1, fw = 1, fc = 16, k = 32, stride = 2, padding = same)]
struct PointwiseS2;
fma_case!(pointwise_s2_same_16_to_32, PointwiseS2, 30);

#[layer(fh = 3, fw = 1, fc = 5, k = 7, stride = (2, 1), padding = same)]
struct Conv3x1;
fma_case!(conv_3x1_stride_2x1_same_5_to_7, Conv3x1, 30);

#[layer(fh = 2, fw = 2, fc = 4, k = 4, stride = 3, padding = valid)]
struct Conv2x2S3;
fma_case!(conv_2x2_s3_valid_4_to_4, Conv2x2S3, 30);

#[layer(fh = 4, fw = 4, fc = 8, k = 10, padding = valid)]
struct FullReduction;
fma_case!(full_reduction_4x4x8_to_10, FullReduction, 30);

// --- Group convolutions (partial-channel) ---
#[layer(fh = 3, fw = 3, fc = 4, k = 4, g = 4, padding = same)]
struct Group4;
fma_case!(group_conv_g4_fc4_k4, Group4, 30);

#[layer(fh = 3, fw = 3, fc = 2, k = 3, g = 6, stride = 2, padding = same, activation = relu)]
struct Group6;
fma_case!(group_conv_g6_fc2_k3_s2, Group6, 30);

#[layer(fh = 3, fw = 3, fc = 1, k = 2, g = 9, padding = same)]
struct DepthMultiplier2;
fma_case!(depthwise_multiplier_2_as_group_conv, DepthMultiplier2, 30);

// --- Depthwise (channelwise kernels) ---
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 32, padding = same, activation = relu)]
struct Depthwise;
fma_case!(depthwise_3x3_s1_same_32_relu, Depthwise, 40);

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 17, stride = 2, padding = same, activation = relu6)]
struct DepthwiseS2;
fma_case!(depthwise_3x3_s2_same_17_relu6, DepthwiseS2, 40);

#[layer(fh = 5, fw = 5, fc = 1, k = 1, g = 3, padding = valid)]
struct Depthwise5x5;
fma_case!(depthwise_5x5_valid_3, Depthwise5x5, 30);

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 1, stride = 3, padding = same)]
struct DepthwiseS3;
fma_case!(depthwise_3x3_s3_same_1, DepthwiseS3, 30);

#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 20)]
struct Scale;
fma_case!(depthwise_1x1_scale_20, Scale, 30);

// --- Explicit padding (a TFLite PAD folded into the layer, or a padding
// step): uneven sides, sides wider than the filter (windows wholly in
// the padding: bias only) ---
#[layer(fh = 3, fw = 3, fc = 5, k = 9, padding = (2, 0, 1, 3), activation = relu)]
struct ConvPadded;
fma_case!(conv_3x3_explicit_2_0_1_3_5_to_9_relu, ConvPadded, 40);

#[layer(fh = 3, fw = 3, fc = 16, k = 32, stride = 2, padding = (0, 3, 4, 1))]
struct ConvPaddedS2;
fma_case!(conv_3x3_s2_explicit_0_3_4_1_16_to_32, ConvPaddedS2, 40);

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 17, padding = (1, 2, 3, 0))]
struct DepthwisePadded;
fma_case!(depthwise_3x3_explicit_1_2_3_0_17, DepthwisePadded, 40);

#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 20, padding = (1, 2, 3, 4))]
struct PadStep;
fma_case!(pad_step_1x1_explicit_1_2_3_4_20, PadStep, 40);

#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 3, padding = (0, 1, 0, 1))]
struct PadStepNarrow;
fma_case!(pad_step_1x1_explicit_0_1_0_1_3, PadStepNarrow, 30);

// --- LOGISTIC: lane by lane through `small_ir::math::logistic` ---
#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 20, activation = logistic)]
struct Logistic;
fma_case!(logistic_1x1_identity_20, Logistic, 30);

#[layer(fh = 3, fw = 3, fc = 5, k = 9, stride = 2, padding = same, activation = logistic)]
struct ConvLogistic;
fma_case!(conv_3x3_s2_same_5_to_9_logistic, ConvLogistic, 30);

// --- Max reductions (pooling, ReLU) ---
#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 32, stride = 2, reduction = max)]
struct MaxPool2;
pool_case!(max_pool_2x2_s2_valid_32, MaxPool2, 40);

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 17, stride = 2, padding = same, reduction = max)]
struct MaxPool3;
pool_case!(max_pool_3x3_s2_same_17, MaxPool3, 40);

#[layer(fh = 2, fw = 3, fc = 1, k = 1, g = 5, stride = (1, 2), padding = same, reduction = max)]
struct MaxPool2x3;
pool_case!(max_pool_2x3_stride_1x2_same_5, MaxPool2x3, 30);

#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 17, reduction = max, activation = relu)]
struct Relu;
pool_case!(relu_as_1x1_max_17, Relu, 30);

#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 16, reduction = max, activation = relu6)]
struct Relu6;
pool_case!(relu6_as_1x1_max_16, Relu6, 30);

// A narrow pixel (8 lanes): the flat walk's tiles of the target's width.
#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 6, reduction = max, activation = relu)]
struct Relu6Channels;
pool_case!(relu_as_1x1_max_6, Relu6Channels, 30);

// --- Reductions split into chunks of input blocks (L1-sized weights) ---
#[layer(fh = 3, fw = 3, fc = 50, k = 24, padding = same, activation = relu)]
struct Conv3x3Deep;
fma_case!(conv_3x3_50_to_24_chunked, Conv3x3Deep, 20);

#[layer(fh = 3, fw = 3, fc = 40, k = 32, stride = 2, padding = same, residual, activation = relu6)]
struct Conv3x3DeepAdd;
residual_case!(
    conv_3x3_s2_40_to_32_chunked_plus_residual,
    Conv3x3DeepAdd,
    20
);
residual_in_place_case!(conv_3x3_s2_40_to_32_in_place_unchunked, Conv3x3DeepAdd, 20);

// --- Fully connected (1x1 on one-pixel outputs: the narrow kernel) ---
#[layer(fh = 1, fw = 1, fc = 37, k = 40, activation = relu)]
struct Dense37To40;
fma_case!(dense_1x1_37_to_40_relu, Dense37To40, 40);

#[layer(fh = 1, fw = 1, fc = 20, k = 16, residual)]
struct DenseAdd;
residual_case!(dense_1x1_20_to_16_plus_residual, DenseAdd, 30);
residual_in_place_case!(dense_1x1_20_to_16_plus_residual_in_place, DenseAdd, 30);

// --- Residual add fused into STORE (ResNet: conv, + skip, ReLU) ---
#[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same, residual, activation = relu)]
struct ConvAddRelu;
residual_case!(conv_3x3_plus_residual_relu, ConvAddRelu, 30);

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 17, stride = 2, padding = same, residual)]
struct DepthwiseAdd;
residual_case!(depthwise_s2_plus_residual_17, DepthwiseAdd, 30);
residual_in_place_case!(conv_3x3_plus_residual_in_place, ConvAddRelu, 30);
residual_in_place_case!(depthwise_s2_plus_residual_in_place, DepthwiseAdd, 30);

// --- Average pooling: divide by the valid (non-padded) taps ---
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 17, stride = 2, padding = same, reduction = avg)]
struct AvgPool3;
pool_case!(avg_pool_3x3_s2_same_17, AvgPool3, 40);

#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 32, stride = 2, reduction = avg, activation = relu)]
struct AvgPool2;
pool_case!(avg_pool_2x2_s2_valid_32_relu, AvgPool2, 30);

#[layer(fh = 5, fw = 4, fc = 1, k = 1, g = 3, stride = (1, 3), padding = same, reduction = avg)]
struct AvgPool5x4;
pool_case!(avg_pool_5x4_stride_1x3_same_3, AvgPool5x4, 30);

#[layer(fh = 25, fw = 5, fc = 1, k = 1, g = 64, padding = valid, reduction = avg)]
struct GlobalAvgKws;
pool_case!(avg_pool_25x5_valid_64_kws_global, GlobalAvgKws, 20);

// --- One-column outputs of channelwise layers (global pooling): the
// narrow kernel, whose partial-sum columns wrap when F_W > O_wb ---
#[layer(fh = 3, fw = 12, fc = 1, k = 1, g = 21, stride = (2, 12), reduction = max)]
struct MaxPool3x12;
pool_case!(max_pool_3x12_stride_2x12_valid_21, MaxPool3x12, 40);

#[layer(fh = 4, fw = 9, fc = 1, k = 1, g = 18, stride = (1, 9), padding = same, reduction = avg)]
struct AvgPool4x9Same;
pool_case!(avg_pool_4x9_stride_1x9_same_18, AvgPool4x9Same, 40);

#[layer(fh = 2, fw = 7, fc = 1, k = 1, g = 19, stride = (1, 7), padding = same, activation = relu)]
struct Depthwise2x7;
fma_case!(depthwise_2x7_stride_1x7_same_19_relu, Depthwise2x7, 40);

// --- Over their own input in one buffer (`model!` without `std`) ---
in_buffer_case!(
    depthwise_3x3_s1_same_32_in_buffer,
    Depthwise,
    30,
    Depthwise::with_arch
);
in_buffer_case!(
    depthwise_3x3_s2_same_17_in_buffer,
    DepthwiseS2,
    30,
    DepthwiseS2::with_arch
);
in_buffer_case!(
    depthwise_5x5_valid_3_in_buffer,
    Depthwise5x5,
    30,
    Depthwise5x5::with_arch
);
in_buffer_case!(
    depthwise_explicit_padding_17_in_buffer,
    DepthwisePadded,
    30,
    DepthwisePadded::with_arch
);
in_buffer_case!(
    depthwise_1x1_scale_20_in_buffer,
    Scale,
    20,
    Scale::with_arch
);
in_buffer_case!(
    max_pool_3x3_s2_same_17_in_buffer,
    MaxPool3,
    30,
    |a, _, _| MaxPool3::with_arch(a)
);
in_buffer_case!(
    avg_pool_25x5_global_64_in_buffer,
    GlobalAvgKws,
    20,
    |a, _, _| GlobalAvgKws::with_arch(a)
);
in_buffer_case!(relu_1x1_17_in_buffer_apart, Relu, 20, |a, _, _| {
    Relu::with_arch(a)
});

#[layer(fh = 1, fw = 1, fc = 64, k = 64, activation = relu)]
struct Pointwise64;
fma_case!(pointwise_64_to_64_relu, Pointwise64, 20);
in_buffer_case!(
    pointwise_64_to_64_in_buffer,
    Pointwise64,
    30,
    Pointwise64::with_arch
);

#[layer(fh = 1, fw = 1, fc = 20, k = 20)]
struct Pointwise20;
in_buffer_case!(
    pointwise_20_to_20_in_buffer,
    Pointwise20,
    30,
    Pointwise20::with_arch
);
in_buffer_case!(
    pointwise_32_to_64_in_buffer_apart,
    Pointwise,
    20,
    Pointwise::with_arch
);

#[test]
fn shape_errors_name_expected_and_actual() {
    let conv = Conv3x3::with_arch(
        Arch::best_available(),
        Filter::ohwi(&vec![0.0; Conv3x3::WEIGHTS_LEN]),
        None,
    )
    .unwrap();
    let x = Blocked::zeros(Dims { c: 15, h: 4, w: 4 }).unwrap();
    assert_eq!(
        conv.alloc_output(&x).unwrap_err(),
        Error::ShapeMismatch {
            what: "input channels",
            expected: 16,
            actual: 15
        }
    );
    let x = Blocked::zeros(Dims { c: 16, h: 4, w: 4 }).unwrap();
    let mut y = Blocked::zeros(Dims { c: 32, h: 4, w: 3 }).unwrap();
    assert_eq!(
        conv.forward(&x, &mut y).unwrap_err(),
        Error::ShapeMismatch {
            what: "output width",
            expected: 4,
            actual: 3
        }
    );
    let mut y = Blocked::zeros(Dims { c: 31, h: 4, w: 4 }).unwrap();
    assert_eq!(
        conv.forward(&x, &mut y).unwrap_err(),
        Error::ShapeMismatch {
            what: "output channels",
            expected: 32,
            actual: 31
        }
    );
    assert_eq!(
        Conv3x3::with_arch(Arch::best_available(), Filter::ohwi(&[0.0; 5]), None).unwrap_err(),
        Error::BufferLength {
            what: "weights",
            expected: 3 * 3 * 16 * 32,
            actual: 5
        }
    );
    assert_eq!(
        Conv3x3::with_arch(
            Arch::best_available(),
            Filter::ohwi(&vec![0.0; Conv3x3::WEIGHTS_LEN]),
            Some(&[0.0; 3])
        )
        .unwrap_err(),
        Error::BufferLength {
            what: "bias",
            expected: 32,
            actual: 3
        }
    );
    let add = ConvAddRelu::with_arch(
        Arch::best_available(),
        Filter::ohwi(&vec![0.0; ConvAddRelu::WEIGHTS_LEN]),
        None,
    )
    .unwrap();
    let (x, mut y) = (
        Blocked::zeros(Dims { c: 16, h: 4, w: 4 }).unwrap(),
        Blocked::zeros(Dims { c: 16, h: 4, w: 4 }).unwrap(),
    );
    assert_eq!(
        add.forward_add(
            &x,
            &Blocked::zeros(Dims { c: 16, h: 3, w: 4 }).unwrap(),
            &mut y
        )
        .unwrap_err(),
        Error::ShapeMismatch {
            what: "residual height",
            expected: 4,
            actual: 3
        }
    );
    let pool = MaxPool2::with_arch(Arch::best_available()).unwrap();
    assert_eq!(
        pool.alloc_output(&Blocked::zeros(Dims { c: 32, h: 1, w: 5 }).unwrap())
            .unwrap_err(),
        Error::InputTooSmall {
            what: "height",
            minimum: 2,
            actual: 1
        }
    );
}

#[test]
fn batch_norm_as_a_1x1_depthwise_layer_matches_the_reference() {
    let mut rng = Rng::new(5);
    let c = Scale::OUT_CHANNELS;
    let (mean, gamma, beta) = (rng.vec(c), rng.vec(c), rng.vec(c));
    let var: Vec<f32> = rng.vec(c).iter().map(|v| v.abs() + 0.1).collect();
    let (mut scale, mut shift) = (vec![0.0; c], vec![0.0; c]);
    small_core::fold::batch_norm_scale_shift(
        &mean, &var, &gamma, &beta, 1e-3, &mut scale, &mut shift,
    )
    .unwrap();
    let (h, w) = (5, 7);
    let input = rng.vec(h * w * c);
    let mut want = input.clone();
    small_core::reference::batch_norm(&mut want, c, &mean, &var, &gamma, &beta, 1e-3).unwrap();
    let x = Blocked::from_nhwc(Dims { c, h, w }, &input).unwrap();
    for arch in small_core::arch::available() {
        let bn = Scale::with_arch(arch, Filter::ohwi(&scale), Some(&shift)).unwrap();
        let mut y = bn.alloc_output(&x).unwrap();
        bn.forward(&x, &mut y).unwrap();
        // scale * x + shift vs gamma * (x - mean) / sqrt(var + eps) + beta: a few
        // roundings on values of magnitude |gamma x / sqrt(var)| + |beta| + ...
        for (i, (g, r)) in y.to_nhwc().iter().zip(&want).enumerate() {
            let ch = i % c;
            let size = (scale[ch] * input[i]).abs() + (scale[ch] * mean[ch]).abs() + beta[ch].abs();
            assert!(
                (g - r).abs() <= 8.0 * f32::EPSILON * size,
                "{arch:?} element {i}: {g} vs {r}"
            );
        }
    }
}

#[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same)]
struct ConvPlain;
#[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same, activation = relu6)]
struct ConvRelu6;
#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 16, reduction = max, activation = relu6)]
struct Relu6Layer16;

/// Fused epilogues equal the unfused sequence of generated layers exactly:
/// the same sums in the same order, then the same max/min/add.
#[test]
fn fused_epilogues_equal_the_unfused_sequence() {
    let mut rng = Rng::new(11);
    let (w, b) = (rng.vec(ConvPlain::WEIGHTS_LEN), rng.vec(16));
    for &(h, wd) in &[(1, 1), (5, 13), (9, 4)] {
        let x = Blocked::from_nhwc(Dims { c: 16, h, w: wd }, &rng.vec(h * wd * 16)).unwrap();
        let skip = Blocked::from_nhwc(Dims { c: 16, h, w: wd }, &rng.vec(h * wd * 16)).unwrap();
        for arch in small_core::arch::available() {
            let plain = ConvPlain::with_arch(arch, Filter::ohwi(&w), Some(&b)).unwrap();
            let mut conv = plain.alloc_output(&x).unwrap();
            plain.forward(&x, &mut conv).unwrap();
            // conv -> ReLU6 layer vs conv with a fused ReLU6.
            let relu6 = Relu6Layer16::with_arch(arch).unwrap();
            let mut unfused = relu6.alloc_output(&conv).unwrap();
            relu6.forward(&conv, &mut unfused).unwrap();
            let fused = ConvRelu6::with_arch(arch, Filter::ohwi(&w), Some(&b)).unwrap();
            let mut y = fused.alloc_output(&x).unwrap();
            fused.forward(&x, &mut y).unwrap();
            assert_eq!(y.as_slice(), unfused.as_slice(), "relu6 on {arch:?}");
            // conv -> add -> ReLU vs conv with the residual and ReLU fused.
            let mut unfused = Blocked::zeros(Dims { c: 16, h, w: wd }).unwrap();
            small_core::ops::add(&conv, &skip, &mut unfused, small_core::Activation::Relu).unwrap();
            let fused = ConvAddRelu::with_arch(arch, Filter::ohwi(&w), Some(&b)).unwrap();
            fused.forward_add(&x, &skip, &mut y).unwrap();
            assert_eq!(y.as_slice(), unfused.as_slice(), "residual on {arch:?}");
        }
    }
}

#[test]
fn unavailable_arches_are_refused() {
    for arch in Arch::ALL.iter().filter(|a| !a.available()) {
        assert_eq!(
            MaxPool2::with_arch(*arch).err(),
            Some(Error::ArchUnavailable { name: arch.name() })
        );
    }
}

// --- Tensors of at most 4 channels: 4 lanes per pixel on x86-64 as on
// Arm (`small_ir::geometry::NARROW`), fewer than an AVX2 or AVX-512
// vector; the kernels read and write such a pixel in part ---
#[layer(fh = 1, fw = 1, fc = 20, k = 2)]
struct Dense20To2;
fma_case!(dense_1x1_20_to_2_narrow_out, Dense20To2, 30);

#[layer(fh = 1, fw = 1, fc = 400, k = 2, activation = relu)]
struct Dense400To2;
fma_case!(dense_1x1_400_to_2_chunked_narrow_out, Dense400To2, 12);

#[layer(fh = 3, fw = 3, fc = 3, k = 4, padding = same, residual)]
struct Conv3To4Add;
residual_case!(conv_3x3_3_to_4_plus_residual_narrow, Conv3To4Add, 30);
residual_in_place_case!(
    conv_3x3_3_to_4_plus_residual_in_place_narrow,
    Conv3To4Add,
    30
);

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 3, padding = same, residual, activation = relu6)]
struct Depthwise3Add;
residual_case!(depthwise_3x3_3_plus_residual_narrow, Depthwise3Add, 30);

#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 3, activation = logistic)]
struct Logistic3;
fma_case!(logistic_1x1_3_narrow, Logistic3, 30);

#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 4, stride = 2, reduction = max)]
struct MaxPool4;
pool_case!(max_pool_2x2_s2_4_narrow, MaxPool4, 30);

#[layer(fh = 3, fw = 5, fc = 1, k = 1, g = 2, padding = valid, reduction = avg)]
struct AvgPool3x5C2;
pool_case!(avg_pool_3x5_valid_2_narrow, AvgPool3x5C2, 30);
