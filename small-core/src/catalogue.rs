//! Every layer a small CNN needs, as a `#[layer]` declaration or a blocked
//! op, each with a runnable example. SMaLL's Table 2 for this project:
//!
//! | layer | how |
//! | --- | --- |
//! | convolution | `#[layer(fh, fw, fc = C_in, k = C_out, stride, padding)]` |
//! | pointwise 1x1 | `fh = 1, fw = 1` |
//! | group convolution | `fc = C_in / g, k = C_out / g, g` |
//! | depthwise | `fc = 1, k = 1, g = C` |
//! | fully connected | `fh = H, fw = W, fc = C, k = outputs, padding = valid` |
//! | max / average pool | `fc = 1, k = 1, g = C, reduction = max` / `avg` |
//! | global average pool | `reduction = avg` with the input's size, or [`crate::ops::global_avg_pool`] |
//! | ReLU / ReLU6 | 1x1 `max` with `activation = relu` / `relu6`, or fused into any layer |
//! | batch norm | fused into the conv before it ([`crate::fold`]), or a 1x1 depthwise |
//! | bias | fused: the constructor's `bias` |
//! | residual add | fused: `residual` and `forward_add`, or [`crate::ops::add`] |
//! | upsample | [`crate::ops::upsample_nearest`] (output larger than input: not an abstract layer) |
//! | concatenation along channels | [`crate::ops::concat`], or a `concat` line of [`crate::model!`] (a copy: not an abstract layer) |
//! | softmax | [`crate::ops::softmax`] on the final vector |
//!
//! Convolution, with bias and a fused activation:
//! ```
//! use small_core::{Blocked, Dims, Filter, layer};
//! #[layer(fh = 3, fw = 3, fc = 2, k = 4, stride = 2, padding = same, activation = relu)]
//! struct Conv;
//! let conv = Conv::new(Filter::ohwi(&[0.1; 3 * 3 * 2 * 4]), Some(&[0.5; 4]))?;
//! let x = Blocked::from_nhwc(Dims { c: 2, h: 5, w: 5 }, &[1.0; 50])?;
//! let mut y = conv.alloc_output(&x)?;
//! conv.forward(&x, &mut y)?;
//! assert_eq!((y.h(), y.w(), y.c()), (3, 3, 4));
//! // Centre: all 9 taps x 2 channels valid: 0.5 + 18 * 0.1.
//! assert!((y.get(0, 1, 1).unwrap() - 2.3).abs() < 1e-6);
//! # Ok::<(), small_core::Error>(())
//! ```
//!
//! Depthwise (weights `[fh][fw][C]`, TFLite DEPTHWISE_CONV_2D order:
//! [`Filter::depthwise`](crate::Filter::depthwise)) and group convolution:
//! ```
//! use small_core::{Blocked, Dims, Filter, layer};
//! #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 3, padding = same)]
//! struct Depthwise;
//! #[layer(fh = 1, fw = 1, fc = 2, k = 1, g = 2)]
//! struct Group; // 4 channels in, 2 out: out c sums in channels 2c, 2c+1
//! let x = Blocked::from_nhwc(Dims { c: 3, h: 4, w: 4 }, &[1.0; 48])?;
//! let dw = Depthwise::new(Filter::depthwise(&[1.0; 27]), None)?;
//! let mut y = dw.alloc_output(&x)?;
//! dw.forward(&x, &mut y)?;
//! assert_eq!(y.get(2, 0, 0), Some(4.0)); // corner: 2x2 valid taps
//! let g = Group::new(Filter::ohwi(&[1.0, 1.0, 1.0, 1.0]), None)?;
//! let x = Blocked::from_nhwc(Dims { c: 4, h: 1, w: 1 }, &[1.0, 2.0, 3.0, 4.0])?;
//! let mut y = g.alloc_output(&x)?;
//! g.forward(&x, &mut y)?;
//! assert_eq!(y.to_nhwc(), [3.0, 7.0]);
//! # Ok::<(), small_core::Error>(())
//! ```
//!
//! Fully connected, as the paper maps it (a filter the size of the input):
//! ```
//! use small_core::{Blocked, Dims, Filter, layer};
//! #[layer(fh = 2, fw = 1, fc = 2, k = 1, padding = valid)]
//! struct Fc; // 2x1x2 input flattened NHWC -> 1 output; weights [out][in]
//! let fc = Fc::new(Filter::ohwi(&[1.0, 2.0, 3.0, 4.0]), Some(&[0.5]))?;
//! let x = Blocked::from_nhwc(Dims { c: 2, h: 2, w: 1 }, &[1.0, 1.0, 1.0, 1.0])?;
//! let mut y = fc.alloc_output(&x)?;
//! fc.forward(&x, &mut y)?;
//! assert_eq!(y.to_nhwc(), [10.5]);
//! # Ok::<(), small_core::Error>(())
//! ```
//!
//! Pooling and ReLU (no weights):
//! ```
//! use small_core::{Blocked, Dims, Filter, layer};
//! #[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 1, stride = 2, padding = same, reduction = max)]
//! struct MaxPool;
//! #[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 1, padding = same, reduction = avg)]
//! struct AvgPool;
//! #[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 1, reduction = max, activation = relu6)]
//! struct Relu6;
//! let x = Blocked::from_nhwc(Dims { c: 1, h: 1, w: 3 }, &[-1.0, 9.0, -3.0])?;
//! let (mp, ap, r) = (MaxPool::new()?, AvgPool::new()?, Relu6::new()?);
//! let mut y = mp.alloc_output(&x)?;
//! mp.forward(&x, &mut y)?;
//! assert_eq!(y.to_nhwc(), [9.0, -3.0]); // padding is ignored, never 0
//! let mut y = ap.alloc_output(&x)?;
//! ap.forward(&x, &mut y)?;
//! // Divided by the valid taps (2, 3, 2); as a product with 1/count, which
//! // may differ from TensorFlow's division in the last bit.
//! let avg = y.to_nhwc();
//! assert_eq!((avg[0], avg[2]), (4.0, 3.0));
//! assert!((avg[1] - 5.0 / 3.0).abs() <= f32::EPSILON * 2.0);
//! let mut y = r.alloc_output(&x)?;
//! r.forward(&x, &mut y)?;
//! assert_eq!(y.to_nhwc(), [0.0, 6.0, 0.0]);
//! # Ok::<(), small_core::Error>(())
//! ```
//!
//! Batch norm folded into a 1x1 depthwise layer, a residual add fused
//! into a conv, upsampling and softmax:
//! ```
//! use small_core::{Activation, Blocked, Dims, Filter, fold, layer, ops};
//! #[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 1)]
//! struct BatchNorm;
//! #[layer(fh = 1, fw = 1, fc = 1, k = 1, residual, activation = relu)]
//! struct ConvAdd;
//! let (mut scale, mut shift) = ([0.0], [0.0]);
//! fold::batch_norm_scale_shift(&[1.0], &[3.0], &[2.0], &[0.5], 1.0, &mut scale, &mut shift)?;
//! let bn = BatchNorm::new(Filter::ohwi(&scale), Some(&shift))?;
//! let x = Blocked::from_nhwc(Dims { c: 1, h: 1, w: 2 }, &[1.0, 3.0])?;
//! let mut y = bn.alloc_output(&x)?;
//! bn.forward(&x, &mut y)?;
//! assert_eq!(y.to_nhwc(), [0.5, 2.5]); // 2 (x - 1) / 2 + 0.5
//! let add = ConvAdd::new(Filter::ohwi(&[-1.0]), None)?;
//! let mut z = add.alloc_output(&x)?;
//! add.forward_add(&x, &y, &mut z)?; // relu(-x + y)
//! assert_eq!(z.to_nhwc(), [0.0, 0.0]);
//! let mut up = Blocked::zeros(Dims { c: 1, h: 2, w: 4 })?;
//! ops::upsample_nearest(&x, 2, 2, &mut up)?;
//! assert_eq!(up.to_nhwc(), [1.0, 1.0, 3.0, 3.0, 1.0, 1.0, 3.0, 3.0]);
//! let mut xy = Blocked::zeros(Dims { c: 2, h: 1, w: 2 })?;
//! ops::concat(&[&x, &y], &mut xy)?;
//! assert_eq!(xy.to_nhwc(), [1.0, 0.5, 3.0, 2.5]);
//! let mut p = [0.0; 2];
//! ops::softmax(&[0.0, 2f32.ln()], &mut p)?;
//! assert!((p[1] - 2.0 / 3.0).abs() < 1e-6);
//! # let _ = Activation::None;
//! # Ok::<(), small_core::Error>(())
//! ```
