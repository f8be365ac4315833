//! Every class of generated `i8` kernel against the int8 reference
//! operators (`small_core::reference::int8`, TFLite's reference kernels
//! bit for bit), exactly, on every arch the CPU can run, over randomized
//! shapes: widths that are not a multiple of `O_wb` and one-column
//! outputs, channels that are not a multiple of `CB` or of the dot width,
//! strides, both paddings, 10x4 filters, zero points at their extremes,
//! per-channel rescales spanning several powers of two, each of TFLite's
//! roundings, and clamps.

use small_core::ir::quant::{Multiplier, Quant, Rescale};
use small_core::reference::int8::AddParams;
use small_core::reference::int8::{self, Requant};
use small_core::reference::{Conv, Shape, Window};
use small_core::{Arch, Blocked, Blocking, Dims, Error, Filter, LayerSpec, Reduction, layer};
use small_kernel_tests::{Rng, in_buffer};

/// A residual layer's skip tensor and ADD.
type Skip<'a> = Option<(&'a Blocked<Vec<i8>, i8>, &'a AddParams)>;

/// Runs the layer on an arch: (arch, OHWI or depthwise filter, bias,
/// quantization, input, residual).
type Run<'a> = &'a dyn Fn(
    Arch,
    Filter<'_, i8>,
    Option<&[i32]>,
    &Requant<'_>,
    &Blocked<Vec<i8>, i8>,
    Skip<'_>,
) -> Result<Blocked<Vec<i8>, i8>, Error>;

fn byte(rng: &mut Rng) -> i8 {
    rng.next_u32() as u8 as i8
}

/// A zero point: either extreme, 0, or random.
fn zero_point(rng: &mut Rng, case: usize) -> i32 {
    match case % 4 {
        0 => -128,
        1 => 127,
        2 => 0,
        _ => i32::from(byte(rng)),
    }
}

/// One output channel's rescale: a real multiplier between 2^-14 and 2^1,
/// in each of TFLite's forms; for a LOGISTIC, an input scale 2^-10 times
/// that (sums of a few hundred thousand reach the logistic's tails), to
/// TFLite's output scale 1/256.
fn rescale(rng: &mut Rng, case: usize, spec: &LayerSpec) -> Rescale {
    let real = (0.5 + rng.next_u32() as f64 / u32::MAX as f64 / 2.0)
        * 2f64.powi(-(rng.range(0, 15) as i32) + 1);
    if spec.activation == small_core::Activation::Logistic {
        return Rescale::logistic(real as f32 / 1024.0, 1.0 / 256.0);
    }
    match case % 3 {
        0 => Rescale::DoubleRounding(Multiplier::from_real(real)),
        1 => Rescale::SingleRounding(Multiplier::from_real(real)),
        _ => Rescale::Real(real),
    }
}

/// Runs `cases` random shapes of one layer on every arch of `blocking`
/// the CPU can run.
fn check(name: &str, spec: &LayerSpec, blocking: &[Blocking], cases: usize, run: Run) {
    let max_owb = blocking.iter().map(|b| b.o_wb).max().unwrap();
    let mut rng = Rng::new(
        name.bytes()
            .fold(23u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64)),
    );
    let archs: Vec<Arch> = small_core::arch::available()
        .filter(|a| blocking.iter().any(|b| b.arch == *a))
        .collect();
    for case in 0..cases {
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
        let input: Vec<i8> = (0..shape.len()).map(|_| byte(&mut rng)).collect();
        // OHWI for the reference; layers of one input channel per group
        // also take TFLite's depthwise order: alternate it.
        // Weights in TFLite's -127..=127, but in every fifth case also
        // -128, which an arch whose dot product cannot take it refuses
        // (`Error::WeightRange`, checked below).
        let ohwi: Vec<i8> = (0..spec.weights_len())
            .map(|_| match byte(&mut rng) {
                -128 if case % 5 != 0 => -127,
                b => b,
            })
            .collect();
        let (oc, taps) = (spec.out_channels(), spec.fh * spec.fw);
        let depthwise: Vec<i8> = (0..ohwi.len())
            .map(|i| ohwi[(i % oc.max(1)) * taps + i / oc.max(1)])
            .collect();
        let filter = if spec.fc == 1 && case % 2 == 1 {
            Filter::depthwise(&depthwise)
        } else {
            Filter::ohwi(&ohwi)
        };
        let bias: Option<Vec<i32>> = (case % 3 != 2).then(|| {
            (0..oc)
                .map(|_| (rng.next_u32() as i32) >> rng.range(8, 20))
                .collect()
        });
        let per_channel = case % 2 == 0;
        let rescales: Vec<Rescale> = (0..if per_channel { oc } else { 1 })
            .map(|_| rescale(&mut rng, case / 2, spec))
            .collect();
        let out_zp = zero_point(&mut rng, case + 1);
        let (min, max) = match case % 3 {
            0 => (-128, 127),
            1 => (out_zp.clamp(-128, 127) as i8, 127),
            _ => (-100, 90),
        };
        let q = Requant {
            input_zero_point: zero_point(&mut rng, case),
            rescale: &rescales,
            output_zero_point: out_zp,
            min,
            max,
        };
        let window = Window {
            fh: spec.fh,
            fw: spec.fw,
            sh: spec.sh,
            sw: spec.sw,
            padding: spec.padding,
        };
        let want = spec.output_dims(h, w).map(|(dh, dw)| {
            let mut out = vec![0i8; dh.out * dw.out * oc];
            let r = match spec.reduction {
                Reduction::Fma => {
                    let conv = Conv {
                        window,
                        fc: spec.fc,
                        k: spec.k,
                        g: spec.g,
                    };
                    int8::conv2d(&input, shape, &ohwi, bias.as_deref(), conv, &q, &mut out)
                }
                Reduction::Max => int8::max_pool(&input, shape, window, (min, max), &mut out),
                Reduction::Avg => int8::avg_pool(&input, shape, window, (min, max), &mut out),
            };
            r.map(|_| out)
        });
        // Residual layers: a random skip tensor of the output's shape and
        // an ADD of random scales, after the layer in the reference.
        let (dh, dw) = spec
            .output_dims(h, w)
            .map_or((1, 1), |(a, b)| (a.out, b.out));
        let skip_nhwc: Vec<i8> = (0..dh * dw * oc).map(|_| byte(&mut rng)).collect();
        let skip = Blocked::from_nhwc(
            Dims {
                c: oc,
                h: dh,
                w: dw,
            },
            &skip_nhwc,
        )
        .unwrap();
        let scale = |rng: &mut Rng| 0.01 + rng.next_u32() as f32 / u32::MAX as f32 * 0.1;
        let add = AddParams::new(
            Quant::new(scale(&mut rng), out_zp),
            Quant::new(scale(&mut rng), zero_point(&mut rng, case + 2)),
            Quant::new(scale(&mut rng), zero_point(&mut rng, case + 3)),
            if case % 2 == 0 {
                small_core::Activation::Relu
            } else {
                small_core::Activation::None
            },
        );
        let want = match want {
            Ok(Ok(conv)) if spec.residual => {
                let mut out = vec![0i8; conv.len()];
                Ok(int8::add(&conv, &skip_nhwc, &add, &mut out).map(|_| out))
            }
            other => other,
        };
        let residual = spec.residual.then_some((&skip, &add));
        let x = Blocked::from_nhwc(Dims { c: shape.c, h, w }, &input).unwrap();
        for &arch in &archs {
            let got = run(arch, filter, bias.as_deref(), &q, &x, residual);
            // The first weight below the arch's least, if any.
            let min = arch.params().machine.int8_weight_min_for(spec);
            let below = filter.values.iter().position(|&w| w < min);
            match (&want, got) {
                // Refused before anything else is checked.
                (
                    _,
                    Err(Error::WeightRange {
                        index,
                        value,
                        min: m,
                    }),
                ) => {
                    assert_eq!(
                        (Some(index), value, m),
                        (below, filter.values[below.unwrap_or(0)], min),
                        "{name} on {arch:?}, case {case}: the weight range error"
                    );
                }
                (Ok(Ok(_)), Ok(_)) if below.is_some() => {
                    panic!("{name} on {arch:?}, case {case}: a weight below {min} was not refused")
                }
                (Ok(Ok(want)), Ok(y)) => {
                    let got = y.to_nhwc();
                    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
                        panic!(
                            "{name} on {arch:?}, input {h}x{w}, case {case}: element {i} \
                             (pixel {}, channel {}) is {}, reference {}",
                            i / oc,
                            i % oc,
                            got[i],
                            want[i]
                        );
                    }
                }
                (Err(e), Err(g)) | (Ok(Err(e)), Err(g)) => {
                    assert_eq!(e, &g, "{name} {arch:?} h={h} w={w}: different errors")
                }
                (want, got) => {
                    panic!("{name} on {arch:?} h={h} w={w}: reference {want:?}, generated {got:?}")
                }
            }
        }
    }
    println!(
        "{name}: {cases} cases on {:?}",
        archs.iter().map(|a| a.name()).collect::<Vec<_>>()
    );
}

/// Layers with weights: `with_arch(arch, filter, bias, q)`, `forward`.
macro_rules! fma_case {
    ($test:ident, $layer:ident, $cases:expr) => {
        #[test]
        fn $test() {
            check(
                stringify!($test),
                &$layer::SPEC,
                $layer::BLOCKING,
                $cases,
                &|arch, f, b, q, x, _| {
                    let l = $layer::with_arch(arch, f, b, q)?;
                    let mut y = l.alloc_output(x)?;
                    l.forward(x, &mut y)?;
                    Ok(y)
                },
            );
        }
    };
}

/// Layers with weights over their own input in one buffer
/// (`forward_in_buffer`, as `model!` runs them without `std`): the output
/// `small_core::plan::in_place_shift` below the input, overlapping it
/// (past it where the layer cannot run so); exact as `forward`.
macro_rules! in_buffer_case {
    ($test:ident, $layer:ident, $cases:expr) => {
        #[test]
        fn $test() {
            check(
                stringify!($test),
                &$layer::SPEC,
                $layer::BLOCKING,
                $cases,
                &|arch, f, b, q, x, _| {
                    let l = $layer::with_arch(arch, f, b, q)?;
                    let mut y = l.alloc_output(x)?;
                    let (bl, xd, yd) = (l.blocking(), x.dims(), y.dims());
                    let shift =
                        small_core::plan::in_place_shift(&$layer::SPEC, xd, yd, bl.o_wb, bl.tc);
                    let yl = yd.len();
                    let (mut buf, x_at, y_at) = in_buffer(x.as_slice(), shift, yl, 0i8);
                    l.forward_in_buffer(&mut buf, (x_at, xd), (y_at, yd))?;
                    // An `i8` output's padding lanes hold no value (here,
                    // the input's): compared through NHWC.
                    y.as_mut_slice().copy_from_slice(&buf[y_at..y_at + yl]);
                    Ok(y)
                },
            );
        }
    };
}

/// Pooling: `with_arch(arch, min, max)`, `forward`.
macro_rules! pool_case {
    ($test:ident, $layer:ident, $cases:expr) => {
        #[test]
        fn $test() {
            check(
                stringify!($test),
                &$layer::SPEC,
                $layer::BLOCKING,
                $cases,
                &|arch, _, _, q, x, _| {
                    let l = $layer::with_arch(arch, q.min, q.max)?;
                    let mut y = l.alloc_output(x)?;
                    l.forward(x, &mut y)?;
                    Ok(y)
                },
            );
        }
    };
}

/// Residual layers: `with_arch(arch, filter, bias, q, add)`, then
/// `forward_add`, or (`in place`) `forward_add_in_place` over a copy of
/// the skip.
macro_rules! residual_case {
    ($test:ident, $layer:ident, $cases:expr, $in_place:expr) => {
        #[test]
        fn $test() {
            check(
                stringify!($test),
                &$layer::SPEC,
                $layer::BLOCKING,
                $cases,
                &|arch, f, b, q, x, skip| {
                    let (skip, add) = skip.expect("residual case");
                    let l = $layer::with_arch(arch, f, b, q, add)?;
                    let mut y = l.alloc_output(x)?;
                    if $in_place {
                        small_core::__rt::check_len(
                            "skip",
                            y.as_slice().len(),
                            skip.as_slice().len(),
                        )?;
                        y = skip.clone();
                        l.forward_add_in_place(x, &mut y)?;
                    } else {
                        l.forward_add(x, skip, &mut y)?;
                    }
                    Ok(y)
                },
            );
        }
    };
}

// --- Convolutions (broadcast kernels, per tap and streaming columns) ---
#[layer(fh = 3, fw = 3, fc = 16, k = 32, padding = same, dtype = i8)]
struct Conv3x3;
fma_case!(conv_3x3_same_16_to_32, Conv3x3, 30);

#[layer(fh = 3, fw = 3, fc = 3, k = 17, stride = 2, padding = same, dtype = i8)]
struct Conv3x3S2Rgb;
fma_case!(conv_3x3_s2_same_3_to_17, Conv3x3S2Rgb, 30);

// Explicit padding: padded taps are the input's zero point (add 0).
#[layer(fh = 3, fw = 3, fc = 16, k = 32, stride = 2, padding = (0, 3, 4, 1), dtype = i8)]
struct ConvPaddedS2;
fma_case!(conv_3x3_s2_explicit_0_3_4_1_16_to_32, ConvPaddedS2, 30);

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 17, padding = (1, 2, 3, 0), dtype = i8)]
struct DepthwisePadded;
fma_case!(depthwise_3x3_explicit_1_2_3_0_17, DepthwisePadded, 30);

#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 20, padding = (1, 2, 3, 4), dtype = i8)]
struct PadStep;
fma_case!(pad_step_1x1_explicit_1_2_3_4_20, PadStep, 30);

// LOGISTIC: the requantization is LiteRT's table, computed per output.
#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 20, activation = logistic, dtype = i8)]
struct Logistic;
fma_case!(logistic_1x1_identity_20, Logistic, 30);

#[layer(fh = 3, fw = 3, fc = 5, k = 9, padding = same, activation = logistic, dtype = i8)]
struct ConvLogistic;
fma_case!(conv_3x3_same_5_to_9_logistic, ConvLogistic, 30);

#[layer(fh = 5, fw = 5, fc = 17, k = 8, padding = valid, dtype = i8)]
struct Conv5x5;
fma_case!(conv_5x5_valid_17_to_8, Conv5x5, 20);

#[layer(fh = 10, fw = 4, fc = 1, k = 64, stride = 2, padding = same, dtype = i8)]
struct ConvKws;
fma_case!(conv_10x4_s2_same_1_to_64_kws, ConvKws, 20);

// One input channel: each filter row's columns fold into dot-product
// groups (`int8_folds_columns`). Filter widths below, at and past one
// group of four (two groups, the last part zero), strides that skip
// columns, every padding, channels off the vector width.
#[layer(fh = 3, fw = 3, fc = 1, k = 17, padding = same, dtype = i8)]
struct FoldGrey;
fma_case!(folded_3x3_same_1_to_17, FoldGrey, 30);
in_buffer_case!(folded_3x3_same_1_to_17_in_buffer, FoldGrey, 20);

#[layer(fh = 5, fw = 5, fc = 1, k = 8, stride = 2, padding = valid, dtype = i8)]
struct FoldTwoGroups;
fma_case!(folded_5x5_s2_valid_1_to_8, FoldTwoGroups, 30);

#[layer(fh = 2, fw = 7, fc = 1, k = 5, stride = (1, 3), padding = (0, 1, 2, 3), dtype = i8)]
struct FoldWide;
fma_case!(folded_2x7_stride_1x3_padded_1_to_5, FoldWide, 30);

#[layer(fh = 1, fw = 2, fc = 1, k = 33, stride = (1, 3), padding = same, dtype = i8)]
struct FoldGaps;
fma_case!(folded_1x2_stride_1x3_same_1_to_33, FoldGaps, 30);

#[layer(fh = 3, fw = 1, fc = 5, k = 7, stride = (2, 1), padding = same, dtype = i8)]
struct Conv3x1;
fma_case!(conv_3x1_stride_2x1_same_5_to_7, Conv3x1, 30);

#[layer(fh = 3, fw = 3, fc = 50, k = 24, padding = same, dtype = i8)]
struct Conv3x3Deep;
fma_case!(conv_3x3_same_50_to_24_deep, Conv3x3Deep, 15);

#[layer(fh = 3, fw = 3, fc = 2, k = 3, g = 6, stride = 2, padding = same, dtype = i8)]
struct GroupConv;
fma_case!(group_conv_3x3_s2_6x2_to_6x3, GroupConv, 30);

// --- Pointwise and fully connected (the narrow kernel) ---
#[layer(fh = 1, fw = 1, fc = 32, k = 64, dtype = i8)]
struct Pointwise;
fma_case!(pointwise_32_to_64, Pointwise, 30);

#[layer(fh = 1, fw = 1, fc = 16, k = 32, stride = 2, padding = same, dtype = i8)]
struct PointwiseS2;
fma_case!(pointwise_s2_16_to_32, PointwiseS2, 30);

#[layer(fh = 1, fw = 1, fc = 37, k = 40, dtype = i8)]
struct Dense37To40;
fma_case!(dense_37_to_40, Dense37To40, 40);

// --- Depthwise (channelwise kernels) ---
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 32, padding = same, dtype = i8)]
struct Depthwise;
fma_case!(depthwise_3x3_same_32, Depthwise, 40);
in_buffer_case!(depthwise_3x3_same_32_in_buffer, Depthwise, 30);

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 17, stride = 2, padding = same, dtype = i8)]
struct DepthwiseS2;
fma_case!(depthwise_3x3_s2_same_17, DepthwiseS2, 40);
in_buffer_case!(depthwise_3x3_s2_same_17_in_buffer, DepthwiseS2, 30);

#[layer(fh = 1, fw = 1, fc = 64, k = 64, dtype = i8)]
struct Pointwise64;
in_buffer_case!(pointwise_64_to_64_in_buffer, Pointwise64, 30);

#[layer(fh = 1, fw = 1, fc = 20, k = 20, dtype = i8)]
struct Pointwise20;
in_buffer_case!(pointwise_20_to_20_in_buffer, Pointwise20, 30);

#[layer(fh = 5, fw = 5, fc = 1, k = 1, g = 3, padding = valid, dtype = i8)]
struct Depthwise5x5;
fma_case!(depthwise_5x5_valid_3, Depthwise5x5, 30);

#[layer(fh = 2, fw = 7, fc = 1, k = 1, g = 19, stride = (1, 7), padding = same, dtype = i8)]
struct Depthwise2x7;
fma_case!(depthwise_2x7_stride_1x7_same_19, Depthwise2x7, 30);

#[layer(fh = 3, fw = 3, fc = 1, k = 2, g = 9, padding = same, dtype = i8)]
struct DepthMultiplier2;
fma_case!(depthwise_multiplier_2_as_group_conv, DepthMultiplier2, 30);

// At most 8 output channels: AVX-512 requantizes two pixels per vector
// (`Dot::requantize_pair`), with odd widths and edge tiles among the shapes.
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 8, padding = same, dtype = i8)]
struct Depthwise8;
fma_case!(depthwise_3x3_same_8_pairs, Depthwise8, 40);

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 6, stride = 2, padding = same, dtype = i8)]
struct Depthwise6S2;
fma_case!(depthwise_3x3_s2_same_6_pairs, Depthwise6S2, 30);

#[layer(fh = 3, fw = 3, fc = 3, k = 8, stride = 2, padding = same, dtype = i8)]
struct ConvS2To8;
fma_case!(conv_3x3_s2_same_3_to_8_pairs, ConvS2To8, 30);

// --- Residual ADD fused into STORE (ResNet) ---
#[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same, residual, dtype = i8)]
struct ConvAdd;
residual_case!(conv_3x3_plus_residual, ConvAdd, 30, false);
residual_case!(conv_3x3_plus_residual_in_place, ConvAdd, 30, true);

#[layer(fh = 1, fw = 1, fc = 16, k = 32, stride = 2, padding = same, residual, dtype = i8)]
struct PointwiseAdd;
residual_case!(pointwise_s2_plus_residual, PointwiseAdd, 30, false);

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 17, stride = 2, padding = same, residual, dtype = i8)]
struct DepthwiseAdd;
residual_case!(depthwise_s2_plus_residual_in_place, DepthwiseAdd, 30, true);

// --- Pooling ---
#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 32, stride = 2, reduction = max, dtype = i8)]
struct MaxPool2;
pool_case!(max_pool_2x2_s2_valid_32, MaxPool2, 30);

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 17, stride = 2, padding = same, reduction = max, dtype = i8)]
struct MaxPool3;
pool_case!(max_pool_3x3_s2_same_17, MaxPool3, 30);

// 1x1 max: elementwise (an int8 ReLU is its clamp), the flat walk over
// every block's pixels as one row; 17 channels (two blocks) and 8 (a
// narrow pixel).
#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 17, reduction = max, dtype = i8)]
struct Clamp17;
pool_case!(clamp_as_1x1_max_17, Clamp17, 30);

#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 8, reduction = max, dtype = i8)]
struct Clamp8;
pool_case!(clamp_as_1x1_max_8, Clamp8, 30);

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 17, stride = 2, padding = same, reduction = avg, dtype = i8)]
struct AvgPool3;
pool_case!(avg_pool_3x3_s2_same_17, AvgPool3, 30);

#[layer(fh = 4, fw = 9, fc = 1, k = 1, g = 18, stride = (1, 9), padding = same, reduction = avg, dtype = i8)]
struct AvgPool4x9Same;
pool_case!(avg_pool_4x9_stride_1x9_same_18, AvgPool4x9Same, 30);

#[layer(fh = 25, fw = 5, fc = 1, k = 1, g = 64, padding = valid, reduction = avg, dtype = i8)]
struct GlobalAvgKws;
pool_case!(avg_pool_25x5_valid_64_kws_global, GlobalAvgKws, 15);

#[layer(fh = 1, fw = 1, fc = 8, k = 8, activation = relu, dtype = i8)]
struct PointwiseRelu;

/// An `i8` layer's declared activation is its clamp: a clamp that lets
/// negative reals through is refused, TFLite's ReLU range is taken.
#[test]
fn declared_activation_checks_the_clamp() {
    let r = [Rescale::Real(0.5)];
    let q = Requant {
        input_zero_point: 0,
        rescale: &r,
        output_zero_point: -20,
        min: -128,
        max: 127,
    };
    let w = [1i8; PointwiseRelu::WEIGHTS_LEN];
    assert!(matches!(
        PointwiseRelu::with_arch(Arch::best_available(), Filter::ohwi(&w), None, &q),
        Err(Error::Unsupported {
            what: "activation",
            ..
        })
    ));
    let q = Requant { min: -20, ..q };
    let l = PointwiseRelu::with_arch(Arch::best_available(), Filter::ohwi(&w), None, &q).unwrap();
    let x = Blocked::from_nhwc(Dims { c: 8, h: 1, w: 1 }, &[-10i8; 8]).unwrap();
    let mut y = l.alloc_output(&x).unwrap();
    l.forward(&x, &mut y).unwrap();
    // 8 * -10 * 0.5 = -40, plus -20, clamped at the zero point.
    assert_eq!(y.to_nhwc(), vec![-20i8; 8]);
}

#[test]
fn bad_quantization_is_an_error() {
    let r = [Rescale::Real(0.5); 3];
    let q = Requant {
        input_zero_point: 0,
        rescale: &r,
        output_zero_point: 0,
        min: -128,
        max: 127,
    };
    let w = vec![0i8; Conv3x3::WEIGHTS_LEN];
    assert_eq!(
        Conv3x3::with_arch(Arch::best_available(), Filter::ohwi(&w), None, &q).unwrap_err(),
        Error::BufferLength {
            what: "rescale",
            expected: 32,
            actual: 3
        }
    );
    let q = Requant {
        input_zero_point: 128,
        rescale: &r[..1],
        ..q
    };
    assert!(matches!(
        Conv3x3::with_arch(Arch::best_available(), Filter::ohwi(&w), None, &q),
        Err(Error::Unsupported { .. })
    ));
    assert!(matches!(
        MaxPool2::with_arch(Arch::best_available(), 5, 4),
        Err(Error::Unsupported { .. })
    ));
}

/// A weight of -128 (outside TFLite's int8 spec): every arch whose dot
/// product takes it computes the reference exactly; one that cannot (AVX2's
/// 4-channel form, `Machine::int8_weight_min`) refuses the layer with the
/// weight's index and value, and still runs a thin layer (3 input
/// channels: the pair form, which takes every weight).
#[test]
fn weight_below_the_arch_minimum_is_refused() {
    let r = [Rescale::Real(0.01)];
    let q = Requant {
        input_zero_point: -3,
        rescale: &r,
        output_zero_point: 0,
        min: -128,
        max: 127,
    };
    let mut wide = vec![1i8; Conv3x3::WEIGHTS_LEN];
    wide[37] = -128;
    let mut thin = vec![1i8; Conv3x3S2Rgb::WEIGHTS_LEN];
    thin[5] = -128;
    let mut refused = 0;
    for arch in small_core::arch::available() {
        let min = arch.params().machine.int8_weight_min;
        let got = Conv3x3::with_arch(arch, Filter::ohwi(&wide), None, &q);
        if min > -128 {
            refused += 1;
            assert_eq!(
                got.err(),
                Some(Error::WeightRange {
                    index: 37,
                    value: -128,
                    min
                }),
                "{arch:?}"
            );
        } else {
            assert!(got.is_ok(), "{arch:?}: {:?}", got.err());
        }
        // The thin layer runs (and `conv_3x3_s2_same_3_to_17` checks its
        // -128 weights against the reference).
        let got = Conv3x3S2Rgb::with_arch(arch, Filter::ohwi(&thin), None, &q);
        assert!(got.is_ok(), "{arch:?}: {:?}", got.err());
    }
    let avx2 = small_core::arch::available().any(|a| a.name() == "avx2");
    assert_eq!(refused > 0, avx2, "only AVX2 refuses -128");
}

// --- Tensors of at most 4 channels: 4 lanes per pixel on x86-64 as on
// Arm (`small_ir::geometry::NARROW`), fewer than an AVX2 or AVX-512
// vector; the kernels read and write such a pixel in part ---
#[layer(fh = 1, fw = 1, fc = 20, k = 2, dtype = i8)]
struct Dense20To2;
fma_case!(dense_20_to_2_narrow_out, Dense20To2, 30);

#[layer(fh = 3, fw = 3, fc = 3, k = 4, padding = same, residual, dtype = i8)]
struct Conv3To4Add;
residual_case!(conv_3x3_3_to_4_plus_residual_narrow, Conv3To4Add, 30, false);
residual_case!(
    conv_3x3_3_to_4_plus_residual_in_place_narrow,
    Conv3To4Add,
    30,
    true
);

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 3, padding = same, residual, dtype = i8)]
struct Depthwise3Add;
residual_case!(
    depthwise_3x3_3_plus_residual_narrow,
    Depthwise3Add,
    30,
    false
);

#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 4, stride = 2, reduction = max, dtype = i8)]
struct MaxPool4;
pool_case!(max_pool_2x2_s2_4_narrow, MaxPool4, 30);

#[layer(fh = 3, fw = 5, fc = 1, k = 1, g = 2, padding = valid, reduction = avg, dtype = i8)]
struct AvgPool3x5C2;
pool_case!(avg_pool_3x5_valid_2_narrow, AvgPool3x5C2, 30);
