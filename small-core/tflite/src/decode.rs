//! Decoding a `.tflite` flatbuffer into plain Rust data: the tensors
//! (name, shape, element type, quantization), the operators in execution
//! order (kind, inputs, outputs, builtin [`Options`]) and the constant
//! buffers of its one subgraph, and a tensor's data as `f32`
//! (dequantized) or as stored (`i8`, `i32`: int8 weights and biases).
//! Nothing here knows about layers: checking an operator against a
//! layer's declaration is [`super::check`]'s job.

use crate::Error;
use crate::schema_generated::tflite as fb;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use planus::ReadAsRoot;
use small_ir::{Activation, Padding};

/// A parsed `.tflite` model: the tensors, operators and constant data of
/// its one subgraph, copied out of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    version: u32,
    description: String,
    tensors: Vec<Tensor>,
    operators: Vec<Operator>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    buffers: Vec<Vec<u8>>,
}

/// One tensor of the subgraph.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// Index in the subgraph (`tN` in TFLite tools).
    pub index: usize,
    /// Name (converters join the names of fused ops with `;`).
    pub name: String,
    /// Shape, NHWC for activations.
    pub shape: Vec<usize>,
    /// Element type.
    pub dtype: DType,
    /// Quantization parameters, if the tensor has a scale.
    pub quantization: Option<Quantization>,
    /// Index of its data buffer in the model (0: none, an activation).
    pub buffer: usize,
    /// The data is sparse-encoded (not supported by [`Model::tensor_f32`]).
    pub sparse: bool,
}

/// Affine quantization of a tensor: `real = (q - zero_point) * scale`.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantization {
    /// One scale (per tensor) or one per index of `quantized_dimension`.
    pub scales: Vec<f32>,
    /// Zero points, as many as `scales` (or none: all 0).
    pub zero_points: Vec<i64>,
    /// The axis per-channel scales run along (0 for conv filters, 3 for
    /// depthwise filters).
    pub quantized_dimension: usize,
    /// The file uses custom quantization details instead (not supported).
    pub custom: bool,
}

/// Element type of a tensor (TFLite `TensorType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DType {
    /// `FLOAT32`.
    Float32,
    /// `FLOAT16`.
    Float16,
    /// `FLOAT64`.
    Float64,
    /// `INT8`.
    Int8,
    /// `UINT8`.
    UInt8,
    /// `INT16`.
    Int16,
    /// `INT32`.
    Int32,
    /// `INT64`.
    Int64,
    /// `BOOL`.
    Bool,
    /// Any other `TensorType`, by its code.
    Other(i8),
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            DType::Float32 => "float32",
            DType::Float16 => "float16",
            DType::Float64 => "float64",
            DType::Int8 => "int8",
            DType::UInt8 => "uint8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::Bool => "bool",
            DType::Other(code) => return write!(f, "TensorType {code}"),
        };
        f.write_str(name)
    }
}

/// One operator, in execution order.
#[derive(Debug, Clone, PartialEq)]
pub struct Operator {
    /// Position in the subgraph's execution order.
    pub index: usize,
    /// What it computes.
    pub kind: OpKind,
    /// The operator code's version.
    pub version: i32,
    /// Input tensor indices; `None` for an omitted optional input (`-1`).
    pub inputs: Vec<Option<usize>>,
    /// Output tensor indices.
    pub outputs: Vec<usize>,
    /// Builtin options (only read for the kinds [`OpKind`] names).
    pub options: Options,
}

/// Operator kinds small-rs maps to layers; everything else is `Other`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// `CONV_2D`.
    Conv2d,
    /// `DEPTHWISE_CONV_2D`.
    DepthwiseConv2d,
    /// `FULLY_CONNECTED`.
    FullyConnected,
    /// `AVERAGE_POOL_2D`.
    AveragePool2d,
    /// `MAX_POOL_2D`.
    MaxPool2d,
    /// `ADD`.
    Add,
    /// `RESHAPE`.
    Reshape,
    /// `SOFTMAX`.
    Softmax,
    /// `SQUEEZE`.
    Squeeze,
    /// `MEAN`.
    Mean,
    /// `PAD`.
    Pad,
    /// `RELU`.
    Relu,
    /// `RELU6`.
    Relu6,
    /// `LOGISTIC`.
    Logistic,
    /// `CONCATENATION`.
    Concatenation,
    /// Any other builtin, by its schema name (`"Mul"`), `"BUILTIN_<code>"`
    /// for a code newer than the schema, or `"CUSTOM(<name>)"`.
    Other(String),
}

impl OpKind {
    /// TFLite's name of the operator (`"CONV_2D"`), or `Other`'s text.
    pub fn name(&self) -> &str {
        match self {
            OpKind::Conv2d => "CONV_2D",
            OpKind::DepthwiseConv2d => "DEPTHWISE_CONV_2D",
            OpKind::FullyConnected => "FULLY_CONNECTED",
            OpKind::AveragePool2d => "AVERAGE_POOL_2D",
            OpKind::MaxPool2d => "MAX_POOL_2D",
            OpKind::Add => "ADD",
            OpKind::Reshape => "RESHAPE",
            OpKind::Softmax => "SOFTMAX",
            OpKind::Squeeze => "SQUEEZE",
            OpKind::Mean => "MEAN",
            OpKind::Pad => "PAD",
            OpKind::Relu => "RELU",
            OpKind::Relu6 => "RELU6",
            OpKind::Logistic => "LOGISTIC",
            OpKind::Concatenation => "CONCATENATION",
            OpKind::Other(name) => name,
        }
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The builtin options small-rs uses; `None` where the operator has no
/// such option (or the file omits its options table).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Options {
    /// Stride `(h, w)`: convolutions and pools.
    pub stride: Option<(usize, usize)>,
    /// Window `(h, w)`: pools (convolutions take it from the filter shape).
    pub filter: Option<(usize, usize)>,
    /// Padding: convolutions and pools.
    pub padding: Option<Padding>,
    /// Dilation `(h, w)`: convolutions.
    pub dilation: Option<(usize, usize)>,
    /// `depth_multiplier`: depthwise convolution.
    pub depth_multiplier: Option<i32>,
    /// Fused activation: convolutions, pools, fully connected, add,
    /// concatenation.
    pub fused_activation: Option<FusedActivation>,
    /// Fully connected weights in a shuffled (non-row-major) format.
    pub shuffled_weights: bool,
    /// `beta`: softmax.
    pub beta: Option<f32>,
    /// `axis`: concatenation (negative counts from the last dimension).
    pub axis: Option<i32>,
}

/// TFLite's `ActivationFunctionType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FusedActivation {
    /// `NONE`.
    None,
    /// `RELU`.
    Relu,
    /// `RELU_N1_TO_1`.
    ReluN1To1,
    /// `RELU6`.
    Relu6,
    /// `TANH`.
    Tanh,
    /// `SIGN_BIT`.
    SignBit,
    /// A code newer than the schema.
    Other(i8),
}

impl FusedActivation {
    /// The small-rs activation, for `NONE`, `RELU` and `RELU6`.
    pub fn to_activation(self) -> Option<Activation> {
        match self {
            FusedActivation::None => Some(Activation::None),
            FusedActivation::Relu => Some(Activation::Relu),
            FusedActivation::Relu6 => Some(Activation::Relu6),
            _ => None,
        }
    }
}

impl fmt::Display for FusedActivation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FusedActivation::None => f.write_str("NONE"),
            FusedActivation::Relu => f.write_str("RELU"),
            FusedActivation::ReluN1To1 => f.write_str("RELU_N1_TO_1"),
            FusedActivation::Relu6 => f.write_str("RELU6"),
            FusedActivation::Tanh => f.write_str("TANH"),
            FusedActivation::SignBit => f.write_str("SIGN_BIT"),
            FusedActivation::Other(code) => write!(f, "ActivationFunctionType {code}"),
        }
    }
}

impl Operator {
    /// Input `i`, if present (`None` when absent or `-1`).
    pub fn input(&self, i: usize) -> Option<usize> {
        self.inputs.get(i).copied().flatten()
    }

    /// The fused activation as a small-rs [`Activation`] (for `RELU`,
    /// `RELU6` and `LOGISTIC`, the operator itself): `None` when the operator has none
    /// (or no such option); an error for one small-rs cannot fuse
    /// (`TANH`, `RELU_N1_TO_1`, ...).
    pub fn activation(&self) -> Result<Activation, Error> {
        match self.kind {
            OpKind::Relu => return Ok(Activation::Relu),
            OpKind::Relu6 => return Ok(Activation::Relu6),
            OpKind::Logistic => return Ok(Activation::Logistic),
            _ => {}
        }
        match self.options.fused_activation {
            None => Ok(Activation::None),
            Some(f) => f.to_activation().ok_or_else(|| Error::Mismatch {
                layer: format!("op {} {}", self.index, self.kind),
                what: "activation",
                expected: "NONE, RELU or RELU6".into(),
                actual: f.to_string(),
            }),
        }
    }
}

/// [`Error::Malformed`]: `what` was being read, `detail` is wrong.
fn malformed(what: impl Into<String>, detail: impl fmt::Display) -> Error {
    Error::Malformed {
        what: what.into(),
        detail: detail.to_string(),
    }
}

/// What [`Error::Malformed`] names when the file as a whole is not a
/// model ([`Model::from_file`] puts the path there instead).
const MODEL: &str = "TFLite model";

/// Why a file fails to be a flatbuffer, in the user's terms.
const NOT_A_FLATBUFFER: &str = "file is truncated or not a TFLite flatbuffer";

/// A planus read error in the user's terms: the file, not a part of it, is
/// what is wrong (a truncated file or another format), and the parser's
/// own message (`In <Model@1c>::description(): Invalid offset`) only says
/// where it stopped.
fn unreadable(what: &str, e: &planus::Error) -> Error {
    use planus::errors::ErrorKind as K;
    let why = match e.error_kind {
        K::InvalidOffset | K::InvalidLength | K::InvalidVtableLength { .. } => {
            "an offset or length points past the end of the file"
        }
        K::MissingNullTerminator => "a string runs past the end of the file",
        K::InvalidUtf8 { .. } => "a string is not UTF-8",
        K::MissingRequired => "a required field is missing",
        K::UnknownEnumTag { .. } | K::UnknownUnionTag { .. } => {
            "a value is unknown to the TFLite schema"
        }
        _ => "the flatbuffer is inconsistent",
    };
    malformed(
        MODEL,
        format!("{NOT_A_FLATBUFFER} (reading the {what}: {why})"),
    )
}

/// Adds what was being read to a planus error.
trait Context<T> {
    fn ctx(self, what: impl FnOnce() -> String) -> Result<T, Error>;
}

impl<T> Context<T> for planus::Result<T> {
    fn ctx(self, what: impl FnOnce() -> String) -> Result<T, Error> {
        self.map_err(|e| unreadable(&what(), &e))
    }
}

/// The value of an enum field, or the unknown tag of a newer schema.
fn enum_or_tag<E>(r: planus::Result<E>) -> planus::Result<Result<E, i128>> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(planus::Error {
            error_kind: planus::errors::ErrorKind::UnknownEnumTag { source },
            ..
        }) => Ok(Err(source.tag)),
        Err(e) => Err(e),
    }
}

/// A non-negative `i32` from the file as `usize`.
fn non_negative(v: i32, what: impl FnOnce() -> String) -> Result<usize, Error> {
    usize::try_from(v).map_err(|_| malformed(what(), format!("negative value {v}")))
}

impl Model {
    /// Parses a `.tflite` file. Checks the `TFL3` identifier and that the
    /// model has exactly one subgraph, and that every tensor, buffer and
    /// operator-code index in it is in range.
    pub fn parse(bytes: &[u8]) -> Result<Model, Error> {
        const WHAT: &str = MODEL;
        if bytes.is_empty() {
            return Err(malformed(WHAT, "file is empty, not a TFLite flatbuffer"));
        }
        if bytes.len() < 8 {
            return Err(malformed(
                WHAT,
                format!(
                    "{NOT_A_FLATBUFFER}: {} bytes, shorter than a flatbuffer header",
                    bytes.len()
                ),
            ));
        }
        if &bytes[4..8] != b"TFL3" {
            return Err(malformed(
                WHAT,
                format!(
                    "not a TFLite flatbuffer: file identifier \"{}\" (bytes 4..8), expected \"TFL3\"",
                    bytes[4..8].escape_ascii()
                ),
            ));
        }
        let root = fb::ModelRef::read_as_root(bytes).ctx(|| "model root".into())?;
        let version = root.version().ctx(|| "model version".into())?;
        let description = root
            .description()
            .ctx(|| "model description".into())?
            .unwrap_or("")
            .to_string();

        let buffers = Self::read_buffers(&root, bytes)?;

        let subgraphs = root
            .subgraphs()
            .ctx(|| "model subgraphs".into())?
            .ok_or_else(|| malformed(WHAT, "no subgraphs"))?;
        if subgraphs.len() != 1 {
            return Err(malformed(
                WHAT,
                format!(
                    "{} subgraphs; only single-subgraph models are supported",
                    subgraphs.len()
                ),
            ));
        }
        let subgraph = subgraphs
            .get(0)
            .ok_or_else(|| malformed(WHAT, "no subgraphs"))?
            .ctx(|| "subgraph 0".into())?;

        let mut tensors = Vec::new();
        if let Some(ts) = subgraph.tensors().ctx(|| "tensors".into())? {
            for (i, t) in ts.iter().enumerate() {
                let t = t.ctx(|| format!("tensor {i}"))?;
                tensors.push(Self::read_tensor(i, &t, buffers.len())?);
            }
        }
        let n = tensors.len();
        let index = |v: i32, what: &dyn Fn() -> String| -> Result<usize, Error> {
            usize::try_from(v)
                .ok()
                .filter(|&i| i < n)
                .ok_or_else(|| malformed(what(), format!("tensor index {v} (model has {n})")))
        };
        let indices = |v: Option<planus::Vector<'_, i32>>,
                       what: &dyn Fn() -> String|
         -> Result<Vec<usize>, Error> {
            v.map_or(Ok(Vec::new()), |v| {
                v.iter().map(|i| index(i, what)).collect()
            })
        };
        let inputs = indices(subgraph.inputs().ctx(|| "subgraph inputs".into())?, &|| {
            "subgraph inputs".into()
        })?;
        let outputs = indices(
            subgraph.outputs().ctx(|| "subgraph outputs".into())?,
            &|| "subgraph outputs".into(),
        )?;

        let mut codes = Vec::new();
        if let Some(cs) = root.operator_codes().ctx(|| "operator codes".into())? {
            for (i, c) in cs.iter().enumerate() {
                let c = c.ctx(|| format!("operator code {i}"))?;
                codes.push(Self::read_code(i, &c)?);
            }
        }

        let mut operators = Vec::new();
        if let Some(ops) = subgraph.operators().ctx(|| "operators".into())? {
            for (i, op) in ops.iter().enumerate() {
                let what = || format!("operator {i}");
                let op = op.ctx(what)?;
                let code = op.opcode_index().ctx(what)?;
                let (kind, version) = usize::try_from(code)
                    .ok()
                    .and_then(|c| codes.get(c))
                    .cloned()
                    .ok_or_else(|| {
                        malformed(
                            what(),
                            format!("operator code {code} (model has {})", codes.len()),
                        )
                    })?;
                let mut op_inputs = Vec::new();
                if let Some(v) = op.inputs().ctx(what)? {
                    for t in v.iter() {
                        op_inputs.push(if t == -1 {
                            None
                        } else {
                            Some(index(t, &|| format!("operator {i} inputs"))?)
                        });
                    }
                }
                let op_outputs =
                    indices(op.outputs().ctx(what)?, &|| format!("operator {i} outputs"))?;
                let options = Self::read_options(i, &kind, &op)?;
                operators.push(Operator {
                    index: i,
                    kind,
                    version,
                    inputs: op_inputs,
                    outputs: op_outputs,
                    options,
                });
            }
        }

        Ok(Model {
            version,
            description,
            tensors,
            operators,
            inputs,
            outputs,
            buffers,
        })
    }

    /// Reads and parses a `.tflite` file. An error names the path once
    /// (print it alone): `malformed <path>: file is truncated or not a
    /// TFLite flatbuffer (...)`, `malformed tensor 3 'x' in <path>: ...`,
    /// `cannot read <path>: ...`.
    #[cfg(feature = "std")]
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Model, Error> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::Io {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?;
        Model::parse(&bytes).map_err(|e| match e {
            Error::Malformed { what, detail } => Error::Malformed {
                what: if what == MODEL {
                    path.display().to_string()
                } else {
                    format!("{what} in {}", path.display())
                },
                detail,
            },
            e => e,
        })
    }

    fn read_buffers(root: &fb::ModelRef<'_>, bytes: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
        let mut buffers = Vec::new();
        let Some(bs) = root.buffers().ctx(|| "buffers".into())? else {
            return Ok(buffers);
        };
        for (i, b) in bs.iter().enumerate() {
            let what = || format!("buffer {i}");
            let b = b.ctx(what)?;
            let (offset, size) = (b.offset().ctx(what)?, b.size().ctx(what)?);
            let data = if offset > 1 {
                // Stored after the flatbuffer, `offset` from the file start.
                usize::try_from(offset)
                    .ok()
                    .zip(usize::try_from(size).ok())
                    .and_then(|(o, s)| bytes.get(o..o.checked_add(s)?))
                    .ok_or_else(|| {
                        malformed(
                            what(),
                            format!(
                                "external data at offset {offset}, size {size} lies outside \
                                 the {}-byte file",
                                bytes.len()
                            ),
                        )
                    })?
            } else {
                b.data().ctx(what)?.unwrap_or(&[])
            };
            buffers.push(data.to_vec());
        }
        Ok(buffers)
    }

    fn read_tensor(i: usize, t: &fb::TensorRef<'_>, buffers: usize) -> Result<Tensor, Error> {
        let what = || format!("tensor {i}");
        let name = t.name().ctx(what)?.unwrap_or("").to_string();
        let named = || format!("tensor {i} '{name}'");
        let mut shape = Vec::new();
        if let Some(s) = t.shape().ctx(named)? {
            for d in s.iter() {
                shape.push(non_negative(d, || format!("shape of tensor {i} '{name}'"))?);
            }
        }
        let dtype = match enum_or_tag(t.type_()).ctx(named)? {
            Ok(fb::TensorType::Float32) => DType::Float32,
            Ok(fb::TensorType::Float16) => DType::Float16,
            Ok(fb::TensorType::Float64) => DType::Float64,
            Ok(fb::TensorType::Int8) => DType::Int8,
            Ok(fb::TensorType::Uint8) => DType::UInt8,
            Ok(fb::TensorType::Int16) => DType::Int16,
            Ok(fb::TensorType::Int32) => DType::Int32,
            Ok(fb::TensorType::Int64) => DType::Int64,
            Ok(fb::TensorType::Bool) => DType::Bool,
            Ok(other) => DType::Other(other as i8),
            Err(tag) => DType::Other(tag as i8),
        };
        let buffer = t.buffer().ctx(named)?;
        let buffer = usize::try_from(buffer)
            .ok()
            .filter(|&b| b < buffers.max(1))
            .ok_or_else(|| malformed(named(), format!("buffer {buffer} (model has {buffers})")))?;
        let quantization = match t.quantization().ctx(named)? {
            None => None,
            Some(q) => {
                let scales: Vec<f32> = q
                    .scale()
                    .ctx(named)?
                    .map_or_else(Vec::new, |v| v.iter().collect());
                let zero_points: Vec<i64> = q
                    .zero_point()
                    .ctx(named)?
                    .map_or_else(Vec::new, |v| v.iter().collect());
                let custom = q.details().ctx(named)?.is_some();
                let dim = q.quantized_dimension().ctx(named)?;
                let quantized_dimension = non_negative(dim, || {
                    format!("quantized_dimension of tensor {i} '{name}'")
                })?;
                (custom || !scales.is_empty()).then_some(Quantization {
                    scales,
                    zero_points,
                    quantized_dimension,
                    custom,
                })
            }
        };
        let sparse = t.sparsity().ctx(named)?.is_some();
        Ok(Tensor {
            index: i,
            name,
            shape,
            dtype,
            quantization,
            buffer,
            sparse,
        })
    }

    fn read_code(i: usize, c: &fb::OperatorCodeRef<'_>) -> Result<(OpKind, i32), Error> {
        let what = || format!("operator code {i}");
        // TFLite's rule: the larger of the old byte field and the new one.
        let old = i32::from(c.deprecated_builtin_code().ctx(what)?);
        let new = match enum_or_tag(c.builtin_code()).ctx(what)? {
            Ok(b) => b as i32,
            Err(tag) => i32::try_from(tag).unwrap_or(i32::MAX),
        };
        let code = old.max(new);
        let kind = match fb::BuiltinOperator::try_from(code) {
            Ok(fb::BuiltinOperator::Conv2d) => OpKind::Conv2d,
            Ok(fb::BuiltinOperator::DepthwiseConv2d) => OpKind::DepthwiseConv2d,
            Ok(fb::BuiltinOperator::FullyConnected) => OpKind::FullyConnected,
            Ok(fb::BuiltinOperator::AveragePool2d) => OpKind::AveragePool2d,
            Ok(fb::BuiltinOperator::MaxPool2d) => OpKind::MaxPool2d,
            Ok(fb::BuiltinOperator::Add) => OpKind::Add,
            Ok(fb::BuiltinOperator::Reshape) => OpKind::Reshape,
            Ok(fb::BuiltinOperator::Softmax) => OpKind::Softmax,
            Ok(fb::BuiltinOperator::Squeeze) => OpKind::Squeeze,
            Ok(fb::BuiltinOperator::Mean) => OpKind::Mean,
            Ok(fb::BuiltinOperator::Pad) => OpKind::Pad,
            Ok(fb::BuiltinOperator::Relu) => OpKind::Relu,
            Ok(fb::BuiltinOperator::Relu6) => OpKind::Relu6,
            Ok(fb::BuiltinOperator::Logistic) => OpKind::Logistic,
            Ok(fb::BuiltinOperator::Concatenation) => OpKind::Concatenation,
            Ok(fb::BuiltinOperator::Custom) => {
                let name = c.custom_code().ctx(what)?.unwrap_or("");
                OpKind::Other(format!("CUSTOM({name})"))
            }
            Ok(other) => OpKind::Other(format!("{other:?}")),
            Err(_) => OpKind::Other(format!("BUILTIN_{code}")),
        };
        Ok((kind, c.version().ctx(what)?))
    }

    fn read_options(i: usize, kind: &OpKind, op: &fb::OperatorRef<'_>) -> Result<Options, Error> {
        let what = || format!("options of operator {i} {kind}");
        // The schema keeps the options tables of the first 17 kinds only
        // (schema.fbs); the later kinds read here need none (MEAN's
        // `keep_dims` shows in its output's shape).
        if matches!(
            kind,
            OpKind::Other(_)
                | OpKind::Squeeze
                | OpKind::Mean
                | OpKind::Pad
                | OpKind::Relu
                | OpKind::Relu6
                | OpKind::Logistic
        ) {
            return Ok(Options::default());
        }
        let Some(raw) = op.builtin_options().ctx(what)? else {
            return Ok(Options::default());
        };
        let pair = |h: i32, w: i32, name: &str| -> Result<(usize, usize), Error> {
            let f = || format!("{name} of operator {i} {kind}");
            Ok((non_negative(h, f)?, non_negative(w, f)?))
        };
        let padding = |p: planus::Result<fb::Padding>| -> Result<Padding, Error> {
            Ok(match p.ctx(what)? {
                fb::Padding::Same => Padding::Same,
                fb::Padding::Valid => Padding::Valid,
            })
        };
        let fused = |a: planus::Result<fb::ActivationFunctionType>| {
            Ok::<_, Error>(Some(match enum_or_tag(a).ctx(what)? {
                Ok(fb::ActivationFunctionType::None) => FusedActivation::None,
                Ok(fb::ActivationFunctionType::Relu) => FusedActivation::Relu,
                Ok(fb::ActivationFunctionType::ReluN1To1) => FusedActivation::ReluN1To1,
                Ok(fb::ActivationFunctionType::Relu6) => FusedActivation::Relu6,
                Ok(fb::ActivationFunctionType::Tanh) => FusedActivation::Tanh,
                Ok(fb::ActivationFunctionType::SignBit) => FusedActivation::SignBit,
                Err(tag) => FusedActivation::Other(tag as i8),
            }))
        };
        let mut o = Options::default();
        match (kind, raw) {
            (OpKind::Conv2d, fb::BuiltinOptionsRef::Conv2DOptions(c)) => {
                o.stride = Some(pair(
                    c.stride_h().ctx(what)?,
                    c.stride_w().ctx(what)?,
                    "stride",
                )?);
                o.dilation = Some(pair(
                    c.dilation_h_factor().ctx(what)?,
                    c.dilation_w_factor().ctx(what)?,
                    "dilation",
                )?);
                o.padding = Some(padding(c.padding())?);
                o.fused_activation = fused(c.fused_activation_function())?;
            }
            (OpKind::DepthwiseConv2d, fb::BuiltinOptionsRef::DepthwiseConv2DOptions(c)) => {
                o.stride = Some(pair(
                    c.stride_h().ctx(what)?,
                    c.stride_w().ctx(what)?,
                    "stride",
                )?);
                o.dilation = Some(pair(
                    c.dilation_h_factor().ctx(what)?,
                    c.dilation_w_factor().ctx(what)?,
                    "dilation",
                )?);
                o.padding = Some(padding(c.padding())?);
                o.depth_multiplier = Some(c.depth_multiplier().ctx(what)?);
                o.fused_activation = fused(c.fused_activation_function())?;
            }
            (
                OpKind::AveragePool2d | OpKind::MaxPool2d,
                fb::BuiltinOptionsRef::Pool2DOptions(c),
            ) => {
                o.stride = Some(pair(
                    c.stride_h().ctx(what)?,
                    c.stride_w().ctx(what)?,
                    "stride",
                )?);
                o.filter = Some(pair(
                    c.filter_height().ctx(what)?,
                    c.filter_width().ctx(what)?,
                    "filter",
                )?);
                o.padding = Some(padding(c.padding())?);
                o.fused_activation = fused(c.fused_activation_function())?;
            }
            (OpKind::FullyConnected, fb::BuiltinOptionsRef::FullyConnectedOptions(c)) => {
                o.fused_activation = fused(c.fused_activation_function())?;
                o.shuffled_weights = !matches!(
                    enum_or_tag(c.weights_format()).ctx(what)?,
                    Ok(fb::FullyConnectedOptionsWeightsFormat::Default)
                );
            }
            (OpKind::Add, fb::BuiltinOptionsRef::AddOptions(c)) => {
                o.fused_activation = fused(c.fused_activation_function())?;
            }
            (OpKind::Concatenation, fb::BuiltinOptionsRef::ConcatenationOptions(c)) => {
                o.axis = Some(c.axis().ctx(what)?);
                o.fused_activation = fused(c.fused_activation_function())?;
            }
            (OpKind::Softmax, fb::BuiltinOptionsRef::SoftmaxOptions(c)) => {
                o.beta = Some(c.beta().ctx(what)?);
            }
            (OpKind::Reshape, fb::BuiltinOptionsRef::ReshapeOptions(_)) => {}
            (_, other) => {
                return Err(malformed(
                    what(),
                    format!("builtin options of the wrong type: {other:?}"),
                ));
            }
        }
        Ok(o)
    }

    /// The schema version (3 for current files).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The model's description string (converters write e.g.
    /// `"MLIR Converted."`).
    pub fn description(&self) -> &str {
        &self.description
    }

    /// All tensors, indexed by tensor index.
    pub fn tensors(&self) -> &[Tensor] {
        &self.tensors
    }

    /// Tensor `i`, if it exists.
    pub fn tensor(&self, i: usize) -> Option<&Tensor> {
        self.tensors.get(i)
    }

    /// The operators in execution order.
    pub fn operators(&self) -> &[Operator] {
        &self.operators
    }

    /// The subgraph's input tensors.
    pub fn inputs(&self) -> &[usize] {
        &self.inputs
    }

    /// The subgraph's output tensors.
    pub fn outputs(&self) -> &[usize] {
        &self.outputs
    }

    /// The raw little-endian bytes of tensor `i`'s constant data:
    /// [`Error::Missing`] if it has none (an activation).
    pub fn tensor_data(&self, i: usize) -> Result<&[u8], Error> {
        let t = self.tensor_or_missing(i)?;
        self.data_of(t, &Self::label(t))
    }

    /// Tensor `i`'s constant data as `f32` in the file's (row-major) order:
    /// float32 as stored; int8 and uint8 dequantized, `(q - zero_point) *
    /// scale`, per tensor or per channel along `quantized_dimension`.
    /// Errors: no such tensor or no data ([`Error::Missing`]), another
    /// element type, a sparse tensor or int8 without scales
    /// ([`Error::DType`]), data or quantization parameters that do not
    /// fit the shape ([`Error::Malformed`]).
    pub fn tensor_f32(&self, i: usize) -> Result<Vec<f32>, Error> {
        let t = self.tensor_or_missing(i)?;
        self.f32_of(t, &Self::label(t))
    }

    /// Tensor `i`'s constant data as stored, for an `INT8` tensor (the
    /// weights of an int8 model): no dequantization; its
    /// [`Tensor::quantization`] gives the scales. Errors: as
    /// [`Model::tensor_f32`], and another element type →
    /// [`Error::DType`].
    pub fn tensor_i8(&self, i: usize) -> Result<Vec<i8>, Error> {
        let t = self.tensor_or_missing(i)?;
        let data = self.raw_of(t, DType::Int8, 1)?;
        Ok(data.iter().map(|&b| b as i8).collect())
    }

    /// Tensor `i`'s constant data as stored, for an `INT32` tensor (the
    /// biases of an int8 model, in the scale `input_scale * weight_scale`).
    /// Errors: as [`Model::tensor_i8`].
    pub fn tensor_i32(&self, i: usize) -> Result<Vec<i32>, Error> {
        let t = self.tensor_or_missing(i)?;
        let data = self.raw_of(t, DType::Int32, 4)?;
        Ok(data
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// The dense data of `t`, which must be of type `dtype` (`width` bytes
    /// each) and fill its shape.
    fn raw_of(&self, t: &Tensor, dtype: DType, width: usize) -> Result<&[u8], Error> {
        let label = Self::label(t);
        if t.dtype != dtype || t.sparse {
            return Err(Error::DType {
                tensor: label,
                expected: if dtype == DType::Int8 {
                    "dense int8"
                } else {
                    "dense int32"
                },
                actual: format!("{}{}", if t.sparse { "sparse " } else { "" }, t.dtype),
            });
        }
        self.dense_data(t, &label, width)
    }

    fn tensor_or_missing(&self, i: usize) -> Result<&Tensor, Error> {
        self.tensors.get(i).ok_or_else(|| Error::Missing {
            what: format!("tensor {i} (model has {})", self.tensors.len()),
        })
    }

    fn label(t: &Tensor) -> String {
        format!("t{} '{}'", t.index, t.name)
    }

    /// `t`'s data, `width` bytes per element of its shape, all there.
    fn dense_data(&self, t: &Tensor, label: &str, width: usize) -> Result<&[u8], Error> {
        let n = t
            .shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| malformed(label, format!("shape {:?} overflows", t.shape)))?;
        let data = self.data_of(t, label)?;
        if n.checked_mul(width) != Some(data.len()) {
            return Err(malformed(
                label,
                format!(
                    "{} bytes of data for shape {:?} of {}",
                    data.len(),
                    t.shape,
                    t.dtype
                ),
            ));
        }
        Ok(data)
    }

    fn data_of(&self, t: &Tensor, label: &str) -> Result<&[u8], Error> {
        match self.buffers.get(t.buffer) {
            Some(d) if !d.is_empty() => Ok(d),
            _ => Err(Error::Missing {
                what: format!("data of {label} (buffer {} is empty)", t.buffer),
            }),
        }
    }

    /// `label` names the tensor (and the layer) in errors.
    #[doc(hidden)]
    pub fn f32_of(&self, t: &Tensor, label: &str) -> Result<Vec<f32>, Error> {
        const ACCEPTED: &str = "dense float32, int8 or uint8";
        if t.sparse {
            return Err(Error::DType {
                tensor: label.into(),
                expected: ACCEPTED,
                actual: format!("sparse {}", t.dtype),
            });
        }
        let width = match t.dtype {
            DType::Float32 => 4,
            DType::Int8 | DType::UInt8 => 1,
            other => {
                return Err(Error::DType {
                    tensor: label.into(),
                    expected: ACCEPTED,
                    actual: other.to_string(),
                });
            }
        };
        let data = self.dense_data(t, label, width)?;
        if t.dtype == DType::Float32 {
            return Ok(data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect());
        }
        let q = match &t.quantization {
            Some(q) if !q.custom => q,
            _ => {
                return Err(Error::DType {
                    tensor: label.into(),
                    expected: "float32, or int8/uint8 with scales and zero points",
                    actual: format!(
                        "{} {}",
                        t.dtype,
                        if t.quantization.is_some() {
                            "with custom quantization"
                        } else {
                            "without quantization"
                        }
                    ),
                });
            }
        };
        // Channel of element `i` = (i / inner) % channels.
        let (channels, inner) = if q.scales.len() == 1 {
            (1, 1)
        } else {
            let axis = q.quantized_dimension;
            let channels = t.shape.get(axis).copied().ok_or_else(|| {
                malformed(
                    label,
                    format!("quantized_dimension {axis} for shape {:?}", t.shape),
                )
            })?;
            // At most the element count, which did not overflow.
            let inner = t.shape[axis + 1..]
                .iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d))
                .ok_or_else(|| malformed(label, format!("shape {:?} overflows", t.shape)))?;
            (channels, inner)
        };
        // Zero points: none (all 0), one for all channels, or one each.
        let zero_points_fit =
            matches!(q.zero_points.len(), 0 | 1) || q.zero_points.len() == channels;
        if q.scales.len() != channels || !zero_points_fit {
            return Err(malformed(
                label,
                format!(
                    "{} scales and {} zero points for {channels} channel(s) of shape {:?}",
                    q.scales.len(),
                    q.zero_points.len(),
                    t.shape
                ),
            ));
        }
        let zero = |c: usize| match q.zero_points.len() {
            0 => 0,
            1 => q.zero_points[0],
            _ => q.zero_points[c],
        };
        let signed = t.dtype == DType::Int8;
        Ok(data
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                let c = if channels == 1 {
                    0
                } else {
                    (i / inner) % channels
                };
                let v = if signed {
                    i64::from(b as i8)
                } else {
                    i64::from(b)
                };
                // In f64: a zero point from the file may be any i64.
                (v as f64 - zero(c) as f64) as f32 * q.scales[c]
            })
            .collect())
    }
}
