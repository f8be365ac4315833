//! Weights from a `.safetensors` file (feature `safetensors`).
//!
//! A layer named `name` (the `name` of its [`LayerRef`]; the operator index
//! is only used in messages) reads the tensor `<name>.weight` and, if
//! present, `<name>.bias`, both `F32`. The weights are in one of TFLite's
//! orders ([`Order`]), told apart by their shape; the shapes
//! accepted are:
//!
//! | layer | `<name>.weight` | `<name>.bias` |
//! | --- | --- | --- |
//! | any | `[G*K, FH, FW, FC]` (OHWI: conv, group conv, pointwise) | `[G*K]` |
//! | `fh = fw = 1`, `g = 1` (fully connected) | also `[K, FC]` | `[K]` |
//! | `fc = 1` (depthwise, multiplier `K`) | also `[FH, FW, G*K]` or `[1, FH, FW, G*K]` (depthwise order) | `[G*K]` |
//! | max or average pool | none (not read) | none |
//!
//! So PyTorch weights need a permutation first: a `Conv2d` weight
//! `[O, I, KH, KW]` becomes `w.permute(0, 2, 3, 1)`, a depthwise one
//! `[C, 1, KH, KW]` becomes `w[:, 0].permute(1, 2, 0)`; a `Linear` weight
//! `[out, in]` is already `[K, FC]`.
//!
//! ```
//! use safetensors::{Dtype, tensor::TensorView};
//! use small_core::load::{LayerRef, WeightSource};
//! use small_core::load::safetensors::SafetensorsSource;
//! use small_core::LayerSpec;
//!
//! // A 1x1 convolution, 2 -> 3 channels: `conv1.weight` [3, 1, 1, 2], `conv1.bias` [3].
//! let w: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0].iter().flat_map(|x| x.to_le_bytes()).collect();
//! let b: Vec<u8> = [0.5f32, 0.0, -0.5].iter().flat_map(|x| x.to_le_bytes()).collect();
//! let file = safetensors::serialize(
//!     [
//!         ("conv1.weight", TensorView::new(Dtype::F32, vec![3, 1, 1, 2], &w).unwrap()),
//!         ("conv1.bias", TensorView::new(Dtype::F32, vec![3], &b).unwrap()),
//!     ],
//!     None,
//! )
//! .unwrap();
//!
//! let source = SafetensorsSource::parse(&file)?;
//! let spec = LayerSpec::new(1, 1, 2, 3, 1);
//! let l = source.layer(LayerRef { name: "conv1", op: 0 }, &spec)?;
//! assert_eq!(l.weights, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
//! assert_eq!(l.bias, Some(vec![0.5, 0.0, -0.5]));
//! # Ok::<(), small_core::load::LoadError>(())
//! ```

use crate::load::{LayerRef, LayerWeights, LoadError, WeightSource};
use crate::{KernelKind, LayerSpec, Order, Reduction};
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// The tensors of a `.safetensors` file, copied out of it.
#[derive(Debug, Clone, PartialEq)]
pub struct SafetensorsSource {
    tensors: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data: Vec<u8>,
}

impl SafetensorsSource {
    /// Parses a `.safetensors` file (header, offsets and lengths are checked
    /// by the `safetensors` crate).
    pub fn parse(bytes: &[u8]) -> Result<SafetensorsSource, LoadError> {
        let file =
            ::safetensors::SafeTensors::deserialize(bytes).map_err(|e| LoadError::Malformed {
                what: "safetensors file".into(),
                detail: e.to_string(),
            })?;
        let tensors = file
            .iter()
            .map(|(name, view)| {
                (
                    name.to_string(),
                    Entry {
                        dtype: view.dtype().to_string(),
                        shape: view.shape().to_vec(),
                        data: view.data().to_vec(),
                    },
                )
            })
            .collect();
        Ok(SafetensorsSource { tensors })
    }

    /// Reads and parses a `.safetensors` file.
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<SafetensorsSource, LoadError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| LoadError::Io {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?;
        SafetensorsSource::parse(&bytes).map_err(|e| match e {
            LoadError::Malformed { what, detail } => LoadError::Malformed {
                what: format!("{what} {}", path.display()),
                detail,
            },
            e => e,
        })
    }

    /// The tensor names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tensors.keys().map(String::as_str)
    }

    /// The shape of tensor `name`, if it exists.
    pub fn shape(&self, name: &str) -> Option<&[usize]> {
        self.tensors.get(name).map(|e| e.shape.as_slice())
    }

    /// Tensor `name` as `f32` values (it must be `F32`).
    pub fn tensor_f32(&self, name: &str) -> Result<Vec<f32>, LoadError> {
        let e = self.tensors.get(name).ok_or_else(|| LoadError::Missing {
            what: format!("tensor `{name}`"),
        })?;
        Self::f32_of(e, name)
    }

    fn f32_of(e: &Entry, label: &str) -> Result<Vec<f32>, LoadError> {
        if e.dtype != "F32" {
            return Err(LoadError::DType {
                tensor: label.into(),
                expected: "F32",
                actual: e.dtype.clone(),
            });
        }
        // The crate checked that the data is shape x 4 bytes long.
        Ok(e.data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// `<layer>.<suffix>` after checking its shape is one of `shapes`,
    /// and the index of that shape.
    fn get(
        &self,
        layer: LayerRef,
        suffix: &str,
        shapes: &[&[usize]],
    ) -> Result<Option<(Vec<f32>, usize)>, LoadError> {
        let name = format!("{}.{suffix}", layer.name);
        let Some(e) = self.tensors.get(&name) else {
            return Ok(None);
        };
        let label = format!("{name} (layer `{}`, op {})", layer.name, layer.op);
        let Some(which) = shapes.iter().position(|s| *s == e.shape.as_slice()) else {
            return Err(LoadError::Shape {
                tensor: label,
                expected: shapes[0].to_vec(),
                actual: e.shape.clone(),
            });
        };
        Self::f32_of(e, &label).map(|v| Some((v, which)))
    }
}

impl WeightSource for SafetensorsSource {
    /// Reads `<name>.weight` (required for `fma` layers) and `<name>.bias`
    /// (optional), with the shapes of the [module docs](self). Pools read
    /// nothing and get no weights.
    fn layer(&self, layer: LayerRef, spec: &LayerSpec) -> Result<LayerWeights, LoadError> {
        if spec.reduction != Reduction::Fma {
            return Ok(LayerWeights {
                weights: Vec::new(),
                order: Order::Ohwi,
                bias: None,
            });
        }
        // The declaration's own sizes are checked (a `LayerSpec` may be
        // built at run time); the file's tensors were checked by the crate.
        spec.checked_weights_len()?;
        let (fh, fw, fc, out) = (spec.fh, spec.fw, spec.fc, spec.g * spec.k);
        let ohwi = [out, fh, fw, fc];
        let fc_2d = [spec.k, fc];
        let dw = [fh, fw, out];
        let dw_4d = [1, fh, fw, out];
        // (shape, order) in the order they are tried; the first one is
        // the one an error names.
        let shapes: Vec<(&[usize], Order)> = match spec.kind() {
            KernelKind::Channelwise => alloc::vec![
                (&dw[..], Order::Depthwise),
                (&dw_4d[..], Order::Depthwise),
                (&ohwi[..], Order::Ohwi),
            ],
            _ if (fh, fw, spec.g) == (1, 1, 1) => {
                alloc::vec![(&ohwi[..], Order::Ohwi), (&fc_2d[..], Order::Ohwi)]
            }
            _ if fc == 1 => alloc::vec![
                (&ohwi[..], Order::Ohwi),
                (&dw[..], Order::Depthwise),
                (&dw_4d[..], Order::Depthwise),
            ],
            _ => alloc::vec![(&ohwi[..], Order::Ohwi)],
        };
        let names: Vec<&[usize]> = shapes.iter().map(|s| s.0).collect();
        let (weights, which) =
            self.get(layer, "weight", &names)?
                .ok_or_else(|| LoadError::Missing {
                    what: format!(
                        "tensor `{}.weight` for layer `{}` (op {})",
                        layer.name, layer.name, layer.op
                    ),
                })?;
        let bias = self.get(layer, "bias", &[&[out]])?.map(|(b, _)| b);
        Ok(LayerWeights {
            weights,
            order: shapes[which].1,
            bias,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Activation, Padding};
    use ::safetensors::{Dtype, tensor::TensorView};
    use alloc::vec;

    fn bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn spec(fh: usize, fw: usize, fc: usize, k: usize, g: usize) -> LayerSpec {
        LayerSpec {
            padding: Padding::Same,
            activation: Activation::Relu,
            ..LayerSpec::new(fh, fw, fc, k, g)
        }
    }

    fn ramp(n: usize) -> Vec<f32> {
        (0..n).map(|i| i as f32 * 0.5 - 3.0).collect()
    }

    fn t(d: Dtype, shape: Vec<usize>, data: &[u8]) -> TensorView<'_> {
        TensorView::new(d, shape, data).unwrap()
    }

    /// A file written by the crate's own serializer.
    fn file() -> Vec<u8> {
        let conv = bytes(&ramp(4 * 3 * 3 * 2));
        let conv_b = bytes(&[1.0, 2.0, 3.0, 4.0]);
        let dw = bytes(&ramp(3 * 3 * 4));
        let dw4 = bytes(&ramp(5 * 5 * 4));
        let fc = bytes(&ramp(3 * 8));
        let half = vec![0u8; 2 * 6];
        let tensors = vec![
            ("conv.weight", t(Dtype::F32, vec![4, 3, 3, 2], &conv)),
            ("conv.bias", t(Dtype::F32, vec![4], &conv_b)),
            ("dw.weight", t(Dtype::F32, vec![3, 3, 4], &dw)),
            ("dw4.weight", t(Dtype::F32, vec![1, 5, 5, 4], &dw4)),
            ("fc.weight", t(Dtype::F32, vec![3, 8], &fc)),
            ("fc.bias", t(Dtype::F32, vec![2], &conv_b[..8])),
            ("half.weight", t(Dtype::F16, vec![3, 1, 1, 2], &half)),
        ];
        ::safetensors::serialize(tensors, None).unwrap()
    }

    fn layer(name: &'static str) -> LayerRef {
        LayerRef { name, op: 7 }
    }

    #[test]
    fn layers_read_weight_and_bias_in_file_order() {
        let s = SafetensorsSource::parse(&file()).unwrap();
        assert_eq!(s.names().count(), 7);
        assert_eq!(s.shape("conv.weight"), Some(&[4, 3, 3, 2][..]));
        assert_eq!(s.tensor_f32("conv.bias").unwrap(), [1.0, 2.0, 3.0, 4.0]);

        let conv = s.layer(layer("conv"), &spec(3, 3, 2, 4, 1)).unwrap();
        assert_eq!(conv.weights, ramp(72));
        assert_eq!(conv.bias, Some(vec![1.0, 2.0, 3.0, 4.0]));
        // 2 groups of fc = 1 need [4, 3, 3, 1], not this file's [4, 3, 3, 2].
        assert!(s.layer(layer("conv"), &spec(3, 3, 1, 2, 2)).is_err());

        let dw = s.layer(layer("dw"), &spec(3, 3, 1, 1, 4)).unwrap();
        assert_eq!((dw.weights, dw.bias), (ramp(36), None));
        let dw4 = s.layer(layer("dw4"), &spec(5, 5, 1, 1, 4)).unwrap();
        assert_eq!(dw4.weights, ramp(100));

        let pool = LayerSpec {
            reduction: Reduction::Max,
            ..spec(2, 2, 1, 1, 4)
        };
        let p = s.layer(layer("no_such_layer"), &pool).unwrap();
        assert_eq!((p.weights.len(), p.bias), (0, None));
    }

    #[test]
    fn errors_name_the_tensor_layer_and_shapes() {
        let s = SafetensorsSource::parse(&file()).unwrap();
        let e = s.layer(layer("conv"), &spec(3, 3, 2, 5, 1)).unwrap_err();
        assert!(matches!(e, LoadError::Shape { .. }), "{e:?}");
        let t = e.to_string();
        assert!(
            t.contains("conv.weight (layer `conv`, op 7)")
                && t.contains("expected shape [5, 3, 3, 2], found [4, 3, 3, 2]"),
            "{t}"
        );
        // FC: weights fit, the bias does not.
        let e = s.layer(layer("fc"), &spec(1, 1, 8, 3, 1)).unwrap_err();
        assert!(
            e.to_string().contains("fc.bias") && e.to_string().contains("[3], found [2]"),
            "{e}"
        );
        let e = s.layer(layer("dw"), &spec(3, 3, 1, 1, 8)).unwrap_err();
        assert!(e.to_string().contains("[3, 3, 8], found [3, 3, 4]"), "{e}");

        let e = s.layer(layer("half"), &spec(1, 1, 2, 3, 1)).unwrap_err();
        assert!(
            matches!(&e, LoadError::DType { expected: "F32", actual, .. } if actual == "F16"),
            "{e:?}"
        );
        let e = s.layer(layer("nope"), &spec(1, 1, 2, 3, 1)).unwrap_err();
        assert!(matches!(e, LoadError::Missing { .. }), "{e:?}");
        assert!(
            e.to_string()
                .contains("`nope.weight` for layer `nope` (op 7)"),
            "{e}"
        );
        assert!(matches!(s.tensor_f32("x"), Err(LoadError::Missing { .. })));
    }

    #[test]
    fn malformed_files_are_errors() {
        let f = file();
        for n in (0..f.len()).step_by(7) {
            assert!(SafetensorsSource::parse(&f[..n]).is_err(), "prefix {n}");
        }
        let mut bad = f.clone();
        bad[0] = 0xff;
        assert!(matches!(
            SafetensorsSource::parse(&bad),
            Err(LoadError::Malformed { .. })
        ));
    }
}
