//! Checked sizes (issue 19, item 3): every public constructor and layer
//! entry point, driven with 0, 1, huge and near-`usize::MAX` dimensions,
//! returns an error or works: no wrapped size, no abort on an impossible
//! allocation, no hang, no panic. Each test names the failure it pins.

use small_core::__rt::{Packed, Problem, Shapes, Tiling, pack};
use small_core::Filter;
use small_core::ir::geometry::checked_packed_len;
use small_core::load::{Generated, LayerRef, WeightSource};
use small_core::model;
use small_core::plan::{Tensor, try_plan};
use small_core::{
    Activation, Arch, Blocked, CB, Dims, Error, LayerSpec, MAX_ELEMENTS, Padding, Reduction, layer,
    ops,
};

#[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same, activation = relu)]
struct Conv;
#[layer(fh = 3, fw = 3, fc = 16, k = 16, stride = 2, padding = valid)]
struct ConvValid;
#[layer(fh = 1, fw = 1, fc = 16, k = 16, residual)]
struct Residual;
#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 16, stride = 2, reduction = max)]
struct Pool;

/// `(1 << 60) + 1`: times 16 lanes it wraps to 16.
const WRAPS: usize = (1 << 60) + 1;
/// 16 channels of `WRAPS x 1` pixels: a blocked length that wraps to 16.
const WRAPPED: Dims = Dims {
    c: 16,
    h: WRAPS,
    w: 1,
};

fn too_large(what: &'static str, dims: [usize; 3]) -> Error {
    Error::TooLarge {
        what,
        dims,
        refused: None,
    }
}

const TENSOR: &str = "blocked tensor (channels x height x width)";

fn conv() -> Conv {
    Conv::with_arch(
        Arch::best_available(),
        Filter::ohwi(&vec![0.01; Conv::WEIGHTS_LEN]),
        None,
    )
    .unwrap()
}

/// Failure 1: `zeros` of `c: 16, h: 2^60 + 1, w: 1` had a wrapped length
/// of 16, and a layer's `forward` on it ran off the buffer (a segfault in
/// the avx512 kernel, release build; a debug build panicked in
/// `blocked_len`). Every way to build such a tensor is now an error, and
/// so forward never sees one.
#[test]
fn wrapping_tensor_sizes_are_errors() {
    assert_eq!(
        Blocked::<Vec<f32>>::zeros(WRAPPED).unwrap_err(),
        too_large(TENSOR, [16, WRAPS, 1])
    );
    assert_eq!(
        small_core::checked_blocked_len(16, WRAPS, 1),
        None,
        "16 x (2^60 + 1) x 16 lanes wraps around"
    );
    // Borrowed buffers of the wrapped length: zeroed_in used to accept it.
    let mut buf = [0.0f32; 16];
    assert_eq!(
        Blocked::zeroed_in(WRAPPED, &mut buf[..]).unwrap_err(),
        too_large(TENSOR, [16, WRAPS, 1])
    );
    assert!(small_core::__rt::assume_padded(WRAPPED, &buf[..]).is_err());
    // The arena view of a model: the same check.
    assert!(model::view(&buf, 0, WRAPPED).is_err());
    let mut arena = [0.0f32; 64];
    let d = Dims { c: 16, h: 1, w: 1 };
    assert!(model::step_views(&mut arena, [(0, d), (0, d)], (16, WRAPPED)).is_err());
    assert!(model::step_views(&mut arena, [(usize::MAX, d), (0, d)], (16, d)).is_err());
    // And a real layer still runs on what can be built.
    let conv = conv();
    let x = Blocked::from_nhwc(Dims { c: 16, h: 2, w: 3 }, &[1.0; 2 * 3 * 16]).unwrap();
    let mut y = conv.alloc_output(&x).unwrap();
    conv.forward(&x, &mut y).unwrap();
    assert_eq!((y.c(), y.h(), y.w()), (16, 2, 3));
}

/// Failure 2: `from_nhwc` of `c: 16, h: 2^60 + 1, w: 1` returned `Ok`
/// (wrapped length); `from_buffer` with the same sizes hung scanning 2^60
/// pixels; `from_nhwc` of `c: 16, h: 2^22, w: 2^22` and 10 values aborted
/// allocating 1 PiB before looking at the slice.
#[test]
fn constructors_check_sizes_and_lengths_before_allocating() {
    // 16 x 2^44 elements: 1 PiB of f32s.
    let huge = Dims {
        c: 16,
        h: 1 << 22,
        w: 1 << 22,
    };
    assert_eq!(
        Blocked::from_nhwc(WRAPPED, &[0.0; 16]).unwrap_err(),
        too_large(TENSOR, [16, WRAPS, 1])
    );
    assert_eq!(
        Blocked::from_buffer(WRAPPED, &[0.0; 16][..]).unwrap_err(),
        too_large(TENSOR, [16, WRAPS, 1])
    );
    assert_eq!(
        Blocked::from_nhwc(huge, &[0.0; 10]).unwrap_err(),
        Error::BufferLength {
            what: "NHWC input",
            expected: 16 << 44,
            actual: 10
        }
    );
    assert_eq!(
        Blocked::from_nchw(huge, &[0.0; 10]).unwrap_err(),
        Error::BufferLength {
            what: "NCHW input",
            expected: 16 << 44,
            actual: 10
        }
    );
    assert!(Blocked::from_nchw(WRAPPED, &[0.0; 16]).is_err());
}

/// Valid sizes the allocator cannot provide (1 EiB) are an error naming the
/// bytes, not an abort; sizes past `isize::MAX` bytes (which `vec!` refused
/// with a panic) are an error too.
#[test]
fn impossible_allocations_are_errors() {
    let (h, w) = (1 << 27, 1 << 27); // 16 x 2^54 pixels: 2^58 floats
    assert_eq!(
        Blocked::<Vec<f32>>::zeros(Dims { c: 16, h, w }).unwrap_err(),
        Error::TooLarge {
            what: TENSOR,
            dims: [16, h, w],
            refused: Some(1 << 60),
        }
    );
    // 2^61 floats = 2^63 bytes: one past isize::MAX.
    assert_eq!(MAX_ELEMENTS, (1 << 61) - 1);
    let over = Dims {
        c: 16,
        h: 1 << 57,
        w: 1,
    };
    assert_eq!(
        Blocked::<Vec<f32>>::zeros(over).unwrap_err(),
        too_large(TENSOR, [16, 1 << 57, 1])
    );
    assert_eq!(
        small_core::checked_blocked_len(16, (1 << 57) - 1, 1),
        Some(MAX_ELEMENTS - 15)
    );
    assert!(Generated::try_values(1, MAX_ELEMENTS + 1, 1.0).is_err());
    assert!(matches!(
        Generated::try_values(1, 1 << 60, 1.0),
        Err(Error::TooLarge {
            refused: Some(_),
            ..
        })
    ));
    assert_eq!(
        Generated::try_values(1, 5, 1.0).unwrap(),
        Generated::values(1, 5, 1.0)
    );
}

/// Zero, one and near-`usize::MAX` dimensions through every constructor and
/// conversion: each returns an error or a usable tensor. (`to_nhwc` of a
/// tensor of 0 channels panicked: chunks of 0 elements.)
#[test]
fn edge_dimensions_error_or_work() {
    let max = usize::MAX;
    let dims = [
        0,
        1,
        2,
        15,
        16,
        17,
        1 << 31,
        1 << 40,
        WRAPS,
        max / CB,
        max / 2,
        max - 1,
        max,
    ];
    let mut ok = 0;
    for &c in &dims {
        for &h in &dims {
            for &w in &dims {
                let len = small_core::checked_blocked_len(c, h, w);
                // Only sizes that are cheap to allocate are allocated.
                if len.is_some_and(|n| n > 1 << 16) {
                    assert!(Blocked::<Vec<f32>>::from_nhwc(Dims { c, h, w }, &[]).is_err());
                    assert!(Blocked::<&[f32]>::from_buffer(Dims { c, h, w }, &[][..]).is_err());
                    continue;
                }
                let Some(n) = len else {
                    let e = Blocked::<Vec<f32>>::zeros(Dims { c, h, w }).unwrap_err();
                    assert_eq!(e, too_large(TENSOR, [c, h, w]));
                    assert!(e.to_string().contains("exceeds the address space"), "{e}");
                    assert!(Blocked::<Vec<f32>>::from_nhwc(Dims { c, h, w }, &[]).is_err());
                    assert!(Blocked::<Vec<f32>>::from_nchw(Dims { c, h, w }, &[]).is_err());
                    assert!(Blocked::<&[f32]>::from_buffer(Dims { c, h, w }, &[][..]).is_err());
                    assert!(
                        Blocked::<&mut [f32]>::zeroed_in(Dims { c, h, w }, &mut [][..]).is_err()
                    );
                    continue;
                };
                let t = Blocked::<Vec<f32>>::zeros(Dims { c, h, w }).unwrap();
                assert_eq!(t.as_slice().len(), n);
                let nhwc = t.to_nhwc();
                assert_eq!(nhwc.len(), c * (h * w));
                assert_eq!(t.to_nchw().len(), c * (h * w));
                assert_eq!(Blocked::from_nhwc(Dims { c, h, w }, &nhwc).unwrap(), t);
                assert_eq!(Blocked::from_nchw(Dims { c, h, w }, &nhwc).unwrap(), t);
                assert_eq!(
                    Blocked::from_buffer(Dims { c, h, w }, t.as_slice())
                        .unwrap()
                        .c(),
                    c
                );
                assert_eq!(t.get(0, 0, 0), (c > 0 && h > 0 && w > 0).then_some(0.0));
                ok += 1;
            }
        }
    }
    assert!(ok > 30, "{ok} shapes built");
}

/// Layer entry points: `output_shape` near `usize::MAX` (its SAME padding
/// computed `(out - 1) * s + f`, which overflowed), `alloc_output` and
/// `forward` on empty and one-pixel tensors.
#[test]
fn layer_entry_points_error_or_work() {
    let max = usize::MAX;
    assert_eq!(Conv::output_shape(max, max).unwrap(), (max, max));
    assert_eq!(Conv::output_shape(1, 1).unwrap(), (1, 1));
    // VALID, filter 3, stride 2: (max - 3) / 2 + 1.
    assert_eq!(
        ConvValid::output_shape(max, max).unwrap(),
        (max / 2, max / 2)
    );
    assert!(ConvValid::output_shape(2, max).is_err());
    assert_eq!(Pool::output_shape(max, max).unwrap(), (max / 2, max / 2));
    for (h, w) in [(0, 0), (0, 5), (5, 0)] {
        assert!(Conv::output_shape(h, w).is_err());
    }
    let conv = conv();
    let res = Residual::with_arch(
        Arch::best_available(),
        Filter::ohwi(&vec![0.5; Residual::WEIGHTS_LEN]),
        None,
    )
    .unwrap();
    for (h, w) in [(0, 0), (0, 3), (1, 1), (1, 9), (7, 1)] {
        let x = Blocked::<Vec<f32>>::zeros(Dims { c: 16, h, w }).unwrap();
        match conv.alloc_output(&x) {
            Ok(mut y) => {
                conv.forward(&x, &mut y).unwrap();
                let mut z = res.alloc_output(&y).unwrap();
                res.forward_add(&y, &y, &mut z).unwrap();
                res.forward_add_in_place(&y, &mut z).unwrap();
            }
            Err(e) => assert!(matches!(e, Error::InputTooSmall { .. }), "{e}"),
        }
    }
}

/// A buffer type whose `AsRef` gives the full buffer once, then one element
/// less: the layer used to index by the shape checked at construction and
/// read past the slice it was handed.
#[test]
fn forward_checks_the_slices_it_runs_on() {
    struct Shrinking {
        data: Vec<f32>,
        calls: std::cell::Cell<usize>,
    }
    impl AsRef<[f32]> for Shrinking {
        fn as_ref(&self) -> &[f32] {
            let n = self.calls.get();
            self.calls.set(n + 1);
            if n == 0 { &self.data } else { &self.data[1..] }
        }
    }
    let conv = conv();
    let x = Blocked::from_buffer(
        Dims { c: 16, h: 4, w: 4 },
        Shrinking {
            data: vec![0.0; 16 * 16],
            calls: 0.into(),
        },
    )
    .unwrap();
    let mut y = Blocked::<Vec<f32>>::zeros(Dims { c: 16, h: 4, w: 4 }).unwrap();
    assert_eq!(
        conv.forward(&x, &mut y).unwrap_err(),
        Error::BufferLength {
            what: "input tensor",
            expected: 256,
            actual: 255
        }
    );
}

/// The loop nest's problem, packing, planning and loading with specs and
/// sizes built at run time: errors, never a division by 0, an overflow
/// or an endless loop.
#[test]
fn run_time_specs_and_sizes_error_or_work() {
    let spec = Conv::SPEC;
    let x = Blocked::<Vec<f32>>::zeros(Dims { c: 16, h: 3, w: 3 }).unwrap();
    let mut y = Blocked::<Vec<f32>>::zeros(Dims { c: 16, h: 3, w: 3 }).unwrap();
    // A tile of 0 channels divided by 0.
    assert!(matches!(
        Problem::new(
            Tiling::new(&spec, 0),
            &x,
            &mut y,
            Packed {
                bias: &[],
                tiles: &[]
            }
        ),
        Err(Error::Unsupported { .. })
    ));
    assert!(checked_packed_len(&spec, 0).is_err());
    let huge = [
        LayerSpec {
            g: usize::MAX,
            ..spec
        },
        LayerSpec { k: 1 << 62, ..spec },
        LayerSpec {
            fh: usize::MAX,
            fw: 2,
            ..spec
        },
        LayerSpec {
            fc: 1 << 60,
            g: 8,
            k: 1,
            ..spec
        },
        LayerSpec {
            g: 1 << 59,
            fc: 1,
            k: 1,
            ..spec
        },
    ];
    for s in &huge {
        assert!(s.checked_weights_len().is_err(), "{s:?}");
        assert!(checked_packed_len(s, 16).is_err(), "{s:?}");
        assert!(pack(s, 16, Filter::none(), None, &mut []).is_err(), "{s:?}");
        assert!(
            Problem::new(
                Tiling::new(s, 16),
                &x,
                &mut y,
                Packed {
                    bias: &[],
                    tiles: &[]
                }
            )
            .is_err(),
            "{s:?}"
        );
        let e = Generated { seed: 1 }
            .layer(
                LayerRef {
                    name: "huge",
                    op: 0,
                },
                s,
            )
            .unwrap_err();
        assert!(
            matches!(e, small_core::load::LoadError::Core(Error::TooLarge { .. })),
            "{e}"
        );
    }
    // A grouped layer of 2^40 output channels: its tile count is not walked
    // before its weights are found missing.
    let wide = LayerSpec {
        g: 1 << 40,
        fc: 2,
        k: 2,
        ..spec
    };
    assert!(pack(&wide, 16, Filter::none(), None, &mut []).is_err());
    // Zero-sized filters and strides: errors, not a division by 0.
    for s in [LayerSpec { sh: 0, ..spec }, LayerSpec { fw: 0, ..spec }] {
        assert!(s.output_dims(4, 4).is_err());
        assert!(Padding::Same.width(4, s.fw, s.sw).is_err() || s.sh == 0);
    }
    // A pool has no weights whatever its size.
    let pool = LayerSpec {
        reduction: Reduction::Max,
        g: usize::MAX,
        fc: 1,
        k: 1,
        ..spec
    };
    assert_eq!(checked_packed_len(&pool, 16), Ok(0));
    // Plans whose sizes sum past the address space.
    let t = |size, first, last| Tensor { size, first, last };
    assert!(try_plan([t(usize::MAX, 0, 1), t(1, 1, 2)]).is_err());
    assert!(try_plan([t(MAX_ELEMENTS / 2 + 1, 0, 1), t(MAX_ELEMENTS / 2 + 1, 1, 2)]).is_err());
    assert_eq!(
        try_plan([t(0, 0, 1), t(MAX_ELEMENTS, 1, 2)]).unwrap().arena,
        MAX_ELEMENTS
    );
}

/// `ops`: upsampling factors that overflow the output's size, zero-sized
/// tensors through every op.
#[test]
fn ops_error_or_work() {
    let x = Blocked::from_nhwc(Dims { c: 3, h: 2, w: 2 }, &[1.0; 12]).unwrap();
    let mut y = Blocked::<Vec<f32>>::zeros(Dims { c: 3, h: 4, w: 4 }).unwrap();
    assert_eq!(
        ops::upsample_nearest(&x, usize::MAX, 2, &mut y).unwrap_err(),
        too_large(
            "upsampled tensor (channels x input height x factor)",
            [3, 2, usize::MAX]
        )
    );
    assert!(ops::upsample_nearest(&x, 2, usize::MAX / 2 + 1, &mut y).is_err());
    ops::upsample_nearest(&x, 2, 2, &mut y).unwrap();
    let e = Blocked::<Vec<f32>>::zeros(Dims { c: 0, h: 3, w: 3 }).unwrap();
    let mut f = Blocked::<Vec<f32>>::zeros(Dims { c: 0, h: 3, w: 3 }).unwrap();
    ops::add(&e, &e, &mut f, Activation::Relu).unwrap();
    ops::global_avg_pool(&e, &mut []).unwrap();
    let mut g = Blocked::<Vec<f32>>::zeros(Dims { c: 0, h: 6, w: 3 }).unwrap();
    ops::upsample_nearest(&e, 2, 1, &mut g).unwrap();
    ops::softmax(&[], &mut []).unwrap();
}

/// The message names what was sized and its dimensions.
#[test]
fn messages_name_what_and_the_sizes() {
    // 16 x 2^54 pixels: 2^58 floats, 1 EiB.
    let exabyte = Dims {
        c: 16,
        h: 1 << 27,
        w: 1 << 27,
    };
    assert_eq!(
        Blocked::<Vec<f32>>::zeros(WRAPPED).unwrap_err().to_string(),
        "blocked tensor (channels x height x width) of 16 x 1152921504606846977 x 1 \
         exceeds the address space (isize::MAX bytes)"
    );
    assert_eq!(
        Blocked::<Vec<f32>>::zeros(exabyte).unwrap_err().to_string(),
        "blocked tensor (channels x height x width) of 16 x 134217728 x 134217728 \
         needs 1152921504606846976 bytes, which could not be allocated"
    );
}

/// `model!`'s call path (`Shapes::of` at compile time, then
/// `forward_shaped`): the same output as `forward`; shapes worked out for
/// another layer, a residual given to a layer without one (or none to a
/// residual layer), and wrong buffer lengths are errors, with the
/// expected and actual lengths.
#[test]
fn shaped_calls_check_the_layer_the_residual_and_the_lengths() {
    let conv = conv();
    let d = Dims { c: 16, h: 4, w: 5 };
    let shapes = Shapes::of(&Conv::SPEC, d, d).unwrap();
    let values: Vec<f32> = (0..d.elements()).map(|i| (i % 13) as f32 - 6.0).collect();
    let x = Blocked::from_nhwc(d, &values).unwrap();
    let mut want = Blocked::<Vec<f32>>::zeros(d).unwrap();
    conv.forward(&x, &mut want).unwrap();
    let mut y = vec![0.0; d.len()];
    conv.forward_shaped(&shapes, x.as_slice(), None, &mut y, false)
        .unwrap();
    assert_eq!(y, want.as_slice());

    let short = conv.forward_shaped(&shapes, x.as_slice(), None, &mut y[1..], false);
    assert_eq!(
        short.unwrap_err(),
        Error::BufferLength {
            what: "output tensor",
            expected: d.len(),
            actual: d.len() - 1
        }
    );
    let short = conv.forward_shaped(&shapes, &x.as_slice()[1..], None, &mut y, false);
    assert!(matches!(
        short,
        Err(Error::BufferLength {
            what: "input tensor",
            ..
        })
    ));
    for (skip, in_place) in [(Some(x.as_slice()), false), (None, true)] {
        let r = conv.forward_shaped(&shapes, x.as_slice(), skip, &mut y, in_place);
        assert!(r.is_err(), "a residual given to a layer without one");
    }
    let res = Residual::with_arch(
        Arch::best_available(),
        Filter::ohwi(&vec![0.01; Residual::WEIGHTS_LEN]),
        None,
    )
    .unwrap();
    let res_shapes = Shapes::of(&Residual::SPEC, d, d).unwrap();
    let r = res.forward_shaped(&res_shapes, x.as_slice(), None, &mut y, false);
    assert!(r.is_err(), "a residual layer without its residual");
    // Shapes of another layer (same dims, other activation).
    let other = LayerSpec {
        activation: Activation::None,
        ..Conv::SPEC
    };
    let foreign = Shapes::of(&other, d, d).unwrap();
    let r = conv.forward_shaped(&foreign, x.as_slice(), None, &mut y, false);
    assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
    // Dims that do not fit the layer: no shapes at all.
    assert!(Shapes::of(&Conv::SPEC, d, Dims { w: 4, ..d }).is_err());
    assert!(Shapes::of(&Conv::SPEC, Dims { c: 8, ..d }, d).is_err());
}
