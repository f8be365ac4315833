//! Small `.tflite` files built in code, for tests of the reader and of
//! what consumes it (`small-codegen`): hidden from the docs, not a stable
//! API. [`Toy`] holds one operator of each kind small-rs maps and a MUL;
//! tests change its object tree ([`schema`](crate::schema)) and serialize
//! it.
#![allow(missing_docs, clippy::new_without_default)]

use crate::Model;
use crate::schema_generated::tflite as fb;
use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

pub fn code(op: fb::BuiltinOperator) -> fb::OperatorCode {
    fb::OperatorCode {
        deprecated_builtin_code: (op as i32).min(127) as i8,
        builtin_code: op,
        version: 1,
        custom_code: None,
    }
}

pub fn f32_buffer(v: &[f32]) -> fb::Buffer {
    fb::Buffer {
        data: Some(v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        ..Default::default()
    }
}

pub fn tensor(name: &str, shape: &[i32], type_: fb::TensorType, buffer: u32) -> fb::Tensor {
    fb::Tensor {
        shape: Some(shape.to_vec()),
        type_,
        buffer,
        name: Some(name.into()),
        ..Default::default()
    }
}

pub fn conv_options(stride: i32, padding: fb::Padding, dilation: i32) -> fb::BuiltinOptions {
    fb::BuiltinOptions::Conv2DOptions(Box::new(fb::Conv2DOptions {
        padding,
        stride_w: stride,
        stride_h: stride,
        fused_activation_function: fb::ActivationFunctionType::Relu,
        dilation_w_factor: dilation,
        dilation_h_factor: dilation,
    }))
}

pub fn op(
    code: u32,
    inputs: &[i32],
    outputs: &[i32],
    options: Option<fb::BuiltinOptions>,
) -> fb::Operator {
    fb::Operator {
        opcode_index: code,
        inputs: Some(inputs.to_vec()),
        outputs: Some(outputs.to_vec()),
        builtin_options: options,
        ..Default::default()
    }
}

/// The model as a `.tflite` file. planus 1.3's builder puts the file
/// identifier at bytes 0..4 and the root offset (relative to byte 4) at
/// 4..8; flatbuffers (and TFLite) have the root offset first, then the
/// identifier, so the two words are swapped here.
pub fn serialize(model: &fb::Model) -> Vec<u8> {
    let mut b = planus::Builder::new()
        .finish(model, Some(*b"TFL3"))
        .to_vec();
    if &b[0..4] == b"TFL3" {
        let root = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) + 4;
        b[0..4].copy_from_slice(&root.to_le_bytes());
        b[4..8].copy_from_slice(b"TFL3");
    }
    assert_eq!(&b[4..8], b"TFL3");
    b
}

pub fn ramp(n: usize, scale: f32) -> Vec<f32> {
    (0..n)
        .map(|i| (i as f32 - n as f32 / 3.0) * scale)
        .collect()
}

/// A model with one operator of each kind small-rs maps, on an 6x6x2 input:
/// op 0 CONV_2D 3x3 s2 SAME (k = 4), op 1 DEPTHWISE_CONV_2D 3x3 s1 VALID,
/// op 2 MAX_POOL_2D 2x2 s2, op 3 FULLY_CONNECTED 8 -> 3 (no bias), op 4 MUL.
pub struct Toy {
    /// The flatbuffer's object tree: change it, then [`Toy::bytes`].
    pub model: fb::Model,
}

impl Toy {
    /// Weights of the convolution.
    pub const CONV_W: usize = 4 * 3 * 3 * 2;

    pub fn new() -> Toy {
        use fb::TensorType::Float32 as F;
        let tensors = vec![
            tensor("input", &[1, 6, 6, 2], F, 0),
            tensor("conv/filter", &[4, 3, 3, 2], F, 1),
            tensor("conv/bias", &[4], F, 2),
            tensor("conv/out", &[1, 3, 3, 4], F, 0),
            tensor("dw/filter", &[1, 3, 3, 4], F, 3),
            tensor("dw/bias", &[4], F, 4),
            tensor("dw/out", &[1, 1, 1, 4], F, 0),
            tensor("pool/out", &[1, 1, 1, 4], F, 0),
            tensor("fc/in", &[1, 8], F, 0),
            tensor("fc/weights", &[3, 8], F, 5),
            tensor("fc/out", &[1, 3], F, 0),
            tensor("mul/out", &[1, 3], F, 0),
        ];
        let buffers = vec![
            fb::Buffer::default(),
            f32_buffer(&ramp(Self::CONV_W, 0.01)),
            f32_buffer(&[0.5, -0.5, 1.0, 2.0]),
            f32_buffer(&ramp(36, 0.1)),
            f32_buffer(&[1.0, 2.0, 3.0, 4.0]),
            f32_buffer(&ramp(24, 1.0)),
        ];
        let codes = vec![
            code(fb::BuiltinOperator::Conv2d),
            code(fb::BuiltinOperator::DepthwiseConv2d),
            code(fb::BuiltinOperator::MaxPool2d),
            code(fb::BuiltinOperator::FullyConnected),
            code(fb::BuiltinOperator::Mul),
        ];
        let ops = vec![
            op(
                0,
                &[0, 1, 2],
                &[3],
                Some(conv_options(2, fb::Padding::Same, 1)),
            ),
            op(
                1,
                &[3, 4, 5],
                &[6],
                Some(fb::BuiltinOptions::DepthwiseConv2DOptions(Box::new(
                    fb::DepthwiseConv2DOptions {
                        padding: fb::Padding::Valid,
                        stride_w: 1,
                        stride_h: 1,
                        depth_multiplier: 1,
                        fused_activation_function: fb::ActivationFunctionType::Relu6,
                        dilation_w_factor: 1,
                        dilation_h_factor: 1,
                    },
                ))),
            ),
            op(
                2,
                &[6],
                &[7],
                Some(fb::BuiltinOptions::Pool2DOptions(Box::new(
                    fb::Pool2DOptions {
                        padding: fb::Padding::Valid,
                        stride_w: 2,
                        stride_h: 2,
                        filter_width: 2,
                        filter_height: 2,
                        fused_activation_function: fb::ActivationFunctionType::None,
                    },
                ))),
            ),
            op(
                3,
                &[8, 9, -1],
                &[10],
                Some(fb::BuiltinOptions::FullyConnectedOptions(Box::new(
                    fb::FullyConnectedOptions {
                        fused_activation_function: fb::ActivationFunctionType::Tanh,
                        ..Default::default()
                    },
                ))),
            ),
            op(4, &[10, 10], &[11], None),
        ];
        Toy {
            model: fb::Model {
                version: 3,
                operator_codes: Some(codes),
                subgraphs: Some(vec![fb::SubGraph {
                    tensors: Some(tensors),
                    inputs: Some(vec![0]),
                    outputs: Some(vec![11]),
                    operators: Some(ops),
                    name: Some("main".into()),
                }]),
                description: Some("toy".into()),
                buffers: Some(buffers),
                ..Default::default()
            },
        }
    }

    pub fn subgraph(&mut self) -> &mut fb::SubGraph {
        &mut self.model.subgraphs.as_mut().unwrap()[0]
    }

    pub fn tensor(&mut self, i: usize) -> &mut fb::Tensor {
        &mut self.subgraph().tensors.as_mut().unwrap()[i]
    }

    pub fn op(&mut self, i: usize) -> &mut fb::Operator {
        &mut self.subgraph().operators.as_mut().unwrap()[i]
    }

    pub fn buffer(&mut self, i: usize) -> &mut fb::Buffer {
        &mut self.model.buffers.as_mut().unwrap()[i]
    }

    pub fn bytes(&self) -> Vec<u8> {
        serialize(&self.model)
    }

    pub fn parse(&self) -> Model {
        Model::parse(&self.bytes()).unwrap()
    }
}
