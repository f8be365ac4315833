//! The operator-to-layer mapping.

use small_ir::{Activation, Dims, Dtype, LayerSpec, Padding, Reduction};
use small_tflite::{DType, Model, OpKind, Operator};
use std::collections::HashMap;
use std::fmt;

/// One line of a [`Program`]: a `#[layer]` declaration (or a
/// concatenation) and its place in the graph, as a `model!` line states
/// them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// The file's operators it computes (`CONV_2D`, `CONV_2D + ADD`,
    /// `CONCATENATION`).
    pub operators: String,
    /// The declaration; `None` for a concatenation (`concat` lists its
    /// inputs).
    pub spec: Option<LayerSpec>,
    /// The operator holding its weights (`@ op`).
    pub op: usize,
    /// The operator that writes its output: its fused ADD, else `op`
    /// (`=> out_op`).
    pub out_op: usize,
    /// The program tensor it reads (0: the input; `i + 1`: layer `i`'s
    /// output); a concatenation's first.
    pub x: usize,
    /// The program tensor a residual layer adds.
    pub skip: Option<usize>,
    /// The program tensors a concatenation joins, in channel order
    /// (`model!`'s `cat: concat @ op (a, b) -> y`); empty for a layer.
    pub concat: Vec<usize>,
    /// Its (first) input's and output's dims.
    pub input: Dims,
    /// See `input`.
    pub output: Dims,
    /// Multiply-accumulates (window taps for pools; 0 for a
    /// concatenation).
    pub macs: usize,
}

/// What follows the last layer in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// Nothing: the last layer's output is the file's output.
    None,
    /// SOFTMAX at this operator (not a layer: the caller applies it to
    /// the logits).
    Softmax(usize),
    /// LOGISTIC (`1 / (1 + exp(-x))`) at this operator (not a layer: the
    /// caller applies it; int8: `small_core::reference::int8::logistic`).
    Logistic(usize),
}

/// A `.tflite` file's graph as small-rs layers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// Element type of activations and weights: `i8` if the file's input
    /// is int8, else `f32` (a "hybrid" file's int8 weights are
    /// dequantized when they load).
    pub dtype: Dtype,
    /// The input's dims.
    pub input: Dims,
    /// Layers in execution order (by [`Layer::out_op`]).
    pub layers: Vec<Layer>,
    /// The file's tensor index of each program tensor (the input, then
    /// each layer's output).
    pub tensors: Vec<usize>,
    /// What follows the last layer.
    pub head: Head,
}

/// An operator or graph the mapping cannot express, with what would be
/// valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// The operator, if one is at fault.
    pub op: Option<usize>,
    /// What is wrong, with the operator's kind and tensors.
    pub message: String,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Unsupported {}

/// The operators a program can hold, for error messages.
pub const SUPPORTED: &str = "CONV_2D, DEPTHWISE_CONV_2D (depth multiplier 1), FULLY_CONNECTED, \
    AVERAGE_POOL_2D, MAX_POOL_2D, MEAN (over height and width), ADD (of two tensors of \
    one shape), CONCATENATION (of two or more tensors along channels, no fused activation; \
    int8: inputs quantized as the output), PAD (of zeros on height and width: folded \
    into the convolution reading it, else a padding step), RELU, RELU6, RESHAPE and SQUEEZE (where the blocked layout does not change), SOFTMAX \
    (last), LOGISTIC";

/// A layer under construction: tensors are the file's until the layers
/// are ordered.
struct Draft {
    operators: String,
    spec: Option<LayerSpec>,
    op: usize,
    out_op: usize,
    x: usize,
    skip: Option<usize>,
    concat: Vec<usize>,
    y: usize,
    input: Dims,
    output: Dims,
}

impl Program {
    /// Maps `file`'s graph to layers (see the [crate docs](crate)).
    pub fn from_file(file: &Model) -> Result<Program, Unsupported> {
        Builder::new(file)?.build()
    }

    /// `11 layers`, or `9 layers, 2 concatenations`: the lines of the
    /// program by kind, for the table's and the source's summary.
    pub fn count(&self) -> String {
        let cats = self.layers.iter().filter(|l| l.spec.is_none()).count();
        let layers = self.layers.len() - cats;
        match cats {
            0 => format!("{layers} layers"),
            1 => format!("{layers} layers, 1 concatenation"),
            n => format!("{layers} layers, {n} concatenations"),
        }
    }

    /// Multiply-accumulates per inference.
    pub fn macs(&self) -> usize {
        self.layers.iter().map(|l| l.macs).sum()
    }

    /// Dims of every program tensor: the input, then each layer's output
    /// (`model!`'s `DIMS`).
    pub fn dims(&self) -> Vec<Dims> {
        std::iter::once(self.input)
            .chain(self.layers.iter().map(|l| l.output))
            .collect()
    }

    /// Each line's step: the tensors it reads and writes (`model!`'s
    /// `LAYERS[i].step`).
    pub fn steps(&self) -> Vec<small_ir::plan::Step<'_>> {
        use small_ir::plan::{NONE, Step};
        (self.layers.iter().enumerate())
            .map(|(i, l)| match l.spec {
                Some(_) => Step::layer(l.x, l.skip.unwrap_or(NONE), i + 1),
                None => Step::concat(&l.concat, i + 1),
            })
            .collect()
    }

    /// The arena `model!` plans for this program at compile time (the
    /// same planner, `small_ir::plan`): every activation tensor, input
    /// included, in the blocked layout. With `in_place`, as a build
    /// without `std` for that arch alone plans it: each layer whose input
    /// nothing else reads writes its output over that input
    /// (`small_core::model::IN_PLACE_LAYERS`).
    pub fn arena(&self, in_place: Option<&small_ir::Machine>) -> Arena {
        use small_ir::plan::{Tensor, lifetimes_into, plan_program, shifts_into};
        let (dims, steps) = (self.dims(), self.steps());
        let n = dims.len();
        let mut offsets = vec![0; n];
        let zero = Tensor {
            size: 0,
            first: 0,
            last: 0,
        };
        let (mut t, mut root, mut placed) = (vec![zero; n], vec![0; n], vec![false; n]);
        let (mut rel, mut aliased) = (vec![0; n], vec![false; steps.len()]);
        let mut shifts = vec![small_ir::plan::NONE; steps.len()];
        if let Some(m) = in_place {
            let specs: Vec<_> = self.layers.iter().map(|l| l.spec).collect();
            let tiles: Vec<_> = (specs.iter())
                .map(|s| {
                    s.map_or((0, 0), |s| {
                        let b = small_ir::blocking::derive("", m, &s);
                        (b.o_wb, b.tc)
                    })
                })
                .collect();
            lifetimes_into(&dims, &steps, &mut t);
            shifts_into(&dims, &specs, &tiles, &steps, &t, &mut shifts);
        }
        let planned = plan_program(
            &dims,
            &steps,
            &shifts,
            &mut offsets,
            &mut t,
            &mut root,
            &mut rel,
            &mut placed,
            &mut aliased,
        );
        // Elements of `f32` or bytes of `i8`.
        let bytes = match self.dtype {
            Dtype::F32 => 4,
            Dtype::I8 => 1,
        };
        let (arena, lower_bound) = planned.unwrap_or((usize::MAX, usize::MAX));
        Arena {
            bytes: arena.saturating_mul(bytes),
            lower_bound: lower_bound.saturating_mul(bytes),
            offsets: offsets.iter().map(|o| o * bytes).collect(),
        }
    }
}

/// A program's activation arena, as `model!` plans it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arena {
    /// Its size in bytes (`usize::MAX` if the tensors exceed the address
    /// space).
    pub bytes: usize,
    /// The largest sum of tensors live at one step, in bytes: no plan
    /// can use less.
    pub lower_bound: usize,
    /// Byte offset of each program tensor (the input, then each layer's
    /// output).
    pub offsets: Vec<usize>,
}

struct Builder<'a> {
    file: &'a Model,
    dtype: Dtype,
    input: (usize, Dims),
    /// File tensor -> its dims, for every tensor the program holds.
    dims: HashMap<usize, Dims>,
    layers: Vec<Draft>,
    head: Head,
}

impl<'a> Builder<'a> {
    fn new(file: &'a Model) -> Result<Self, Unsupported> {
        let graph = |message: String| Unsupported { op: None, message };
        let [input] = file.inputs() else {
            return Err(graph(format!(
                "the graph has {} inputs ({}); a program has one",
                file.inputs().len(),
                tensor_list(file, file.inputs().iter().copied().map(Some))
            )));
        };
        let t = file
            .tensor(*input)
            .ok_or_else(|| graph(format!("the input tensor {input} is not in the file")))?;
        let dims = dims_of(&t.shape).ok_or_else(|| {
            graph(format!(
                "input t{input} has shape {:?}; a program's input is [1, H, W, C] or [1, C]",
                t.shape
            ))
        })?;
        let dtype = match t.dtype {
            DType::Float32 => Dtype::F32,
            DType::Int8 => Dtype::I8,
            other => {
                return Err(graph(format!(
                    "input t{input} is {other:?}; a program takes FLOAT32 or INT8"
                )));
            }
        };
        Ok(Builder {
            file,
            dtype,
            input: (*input, dims),
            dims: HashMap::from([(*input, dims)]),
            layers: Vec::new(),
            head: Head::None,
        })
    }

    fn build(mut self) -> Result<Program, Unsupported> {
        for op in self.file.operators() {
            if self.head != Head::None {
                return Err(self.unsupported(op, "an operator after SOFTMAX or LOGISTIC"));
            }
            match &op.kind {
                OpKind::Conv2d | OpKind::DepthwiseConv2d | OpKind::FullyConnected => {
                    self.weighted(op)?
                }
                OpKind::AveragePool2d | OpKind::MaxPool2d => self.pool(op)?,
                OpKind::Mean => self.mean(op)?,
                OpKind::Add => self.residual(op)?,
                OpKind::Concatenation => self.concat(op)?,
                OpKind::Pad => self.pad(op)?,
                OpKind::Relu | OpKind::Relu6 => self.relu(op)?,
                OpKind::Reshape | OpKind::Squeeze => self.reshape(op)?,
                OpKind::Softmax => self.head = Head::Softmax(op.index),
                OpKind::Logistic => self.logistic(op)?,
                _ => return Err(self.unsupported(op, "not supported")),
            }
        }
        self.finish()
    }

    /// Input `i` of `op` (for a convolution with a folded PAD, the
    /// PAD's input), a tensor the program holds, and its dims.
    fn read(&self, op: &Operator, i: usize) -> Result<(usize, Dims), Unsupported> {
        let t = match i {
            0 => self.file.main_input(op),
            _ => op.input(i),
        }
        .map(|t| self.file.view_source(t))
        .ok_or_else(|| self.unsupported(op, "an input is missing"))?;
        match self.dims.get(&t) {
            Some(&d) => Ok((t, d)),
            None => Err(self.unsupported(
                op,
                &format!("input t{t} is neither the graph's input nor an earlier layer's output"),
            )),
        }
    }

    fn output(&self, op: &Operator) -> Result<(usize, Dims), Unsupported> {
        let t = *op
            .outputs
            .first()
            .ok_or_else(|| self.unsupported(op, "it has no output"))?;
        let shape = self
            .file
            .tensor(t)
            .map(|t| t.shape.clone())
            .unwrap_or_default();
        let d = dims_of(&shape)
            .ok_or_else(|| self.unsupported(op, "its output is not [1, H, W, C] or [1, C]"))?;
        Ok((t, d))
    }

    fn activation(&self, op: &Operator) -> Result<Activation, Unsupported> {
        op.activation()
            .map_err(|_| self.unsupported(op, "its fused activation (NONE, RELU or RELU6 are)"))
    }

    /// CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED.
    fn weighted(&mut self, op: &Operator) -> Result<(), Unsupported> {
        let (x, input) = self.read(op, 0)?;
        let filter = op
            .input(1)
            .and_then(|t| self.file.tensor(t))
            .map(|t| t.shape.clone())
            .ok_or_else(|| self.unsupported(op, "the filter is missing"))?;
        let bad = |what: &str| self.unsupported(op, what);
        let spec = match (&op.kind, filter.as_slice()) {
            (OpKind::Conv2d, &[o, fh, fw, fc]) => {
                if fc == 0 || input.c % fc != 0 || o % (input.c / fc) != 0 {
                    return Err(bad("its filter's channels do not divide into groups"));
                }
                let g = input.c / fc;
                self.windowed(op, LayerSpec::new(fh, fw, fc, o / g, g))?
            }
            (OpKind::DepthwiseConv2d, &[1, fh, fw, c]) => {
                if op.options.depth_multiplier.unwrap_or(1) != 1 || c != input.c {
                    return Err(bad("depth multiplier other than 1"));
                }
                self.windowed(op, LayerSpec::new(fh, fw, 1, 1, c))?
            }
            (OpKind::FullyConnected, &[k, fc]) => {
                if (input.h, input.w, input.c) != (1, 1, fc) || op.options.shuffled_weights {
                    return Err(bad("its input is not 1x1 with the weights' columns"));
                }
                LayerSpec::new(1, 1, fc, k, 1)
            }
            _ => return Err(bad(&format!("filter shape {filter:?}"))),
        };
        let spec = LayerSpec {
            activation: self.activation(op)?,
            dtype: self.dtype,
            ..spec
        };
        self.push(op, spec, x, input)
    }

    /// Stride and padding of a convolution or pool; no dilation.
    fn windowed(&self, op: &Operator, spec: LayerSpec) -> Result<LayerSpec, Unsupported> {
        if op.options.dilation.is_some_and(|d| d != (1, 1)) {
            return Err(self.unsupported(op, "dilation"));
        }
        let (sh, sw) = op.options.stride.unwrap_or((1, 1));
        let padding = self.file.padding(op).unwrap_or(Padding::Valid);
        Ok(LayerSpec {
            sh,
            sw,
            padding,
            ..spec
        })
    }

    /// MEAN over height and width: a global average pool. int8: a
    /// depthwise convolution over the whole plane with weight 1, whose
    /// requantization carries LiteRT's MEAN rounding (the loader makes
    /// the weights and [`small_ir::quant::Rescale::mean`]); LiteRT's
    /// int8 AVERAGE_POOL_2D rounds otherwise.
    fn mean(&mut self, op: &Operator) -> Result<(), Unsupported> {
        if !self.file.is_spatial_mean(op) {
            return Err(self.unsupported(op, "a MEAN over other axes than height and width"));
        }
        let (x, input) = self.read(op, 0)?;
        let reduction = match self.dtype {
            Dtype::F32 => Reduction::Avg,
            Dtype::I8 => Reduction::Fma,
        };
        let spec = LayerSpec {
            reduction,
            dtype: self.dtype,
            ..LayerSpec::new(input.h, input.w, 1, 1, input.c)
        };
        self.push(op, spec, x, input)
    }

    /// PAD: nothing of its own when it folds into the convolution that
    /// reads it (`Model::folded_pad`), which then reads the PAD's input;
    /// else a padding step: the 1x1 depthwise identity layer with the
    /// PAD's amounts as its padding, which writes the input into a larger
    /// plane whose border is zero (int8: the zero point).
    fn pad(&mut self, op: &Operator) -> Result<(), Unsupported> {
        let out = op.outputs.first().copied();
        let folds = self.file.operators().iter().any(|o| {
            o.inputs.first().copied().flatten() == out && self.file.folded_pad(o).is_some()
        });
        if folds {
            return Ok(());
        }
        let Some(padding) = self.file.pad_amounts(op) else {
            return Err(self.unsupported(
                op,
                "a PAD of other than zeros on height and width (a constant, or padding of \
                 the batch or channels)",
            ));
        };
        let (x, input) = self.read(op, 0)?;
        let spec = LayerSpec {
            padding,
            dtype: self.dtype,
            ..LayerSpec::new(1, 1, 1, 1, input.c)
        };
        self.push(op, spec, x, input)
    }

    /// LOGISTIC: the head when it is the last operator and writes the
    /// graph's output (the caller applies it, as SOFTMAX); else a layer
    /// of its own, the 1x1 depthwise identity layer with `activation =
    /// logistic` (int8: LiteRT's table as the requantization,
    /// `Rescale::Logistic`).
    fn logistic(&mut self, op: &Operator) -> Result<(), Unsupported> {
        let last = self.file.operators().last().map(|o| o.index) == Some(op.index);
        let output = op
            .outputs
            .first()
            .is_some_and(|t| self.file.outputs().contains(t));
        if last && output {
            self.head = Head::Logistic(op.index);
            return Ok(());
        }
        self.identity(op, false)
    }

    /// A standalone ADD (`residual`) or RELU / RELU6: a 1x1 depthwise
    /// layer of weight 1, whose weights the loader makes (`x * 1` is
    /// exact, so the layer computes `x + skip` and the activation, as
    /// TFLite's operator).
    fn identity(&mut self, op: &Operator, add: bool) -> Result<(), Unsupported> {
        let (x, input) = self.read(op, 0)?;
        let skip = if add {
            let (b, shape) = self.read(op, 1)?;
            if shape != input {
                return Err(self.unsupported(
                    op,
                    &format!("an ADD of unlike shapes ({input:?} and {shape:?}: no broadcasting)"),
                ));
            }
            Some(b)
        } else {
            None
        };
        let spec = LayerSpec {
            residual: add,
            activation: self.activation(op)?,
            dtype: self.dtype,
            ..LayerSpec::new(1, 1, 1, 1, input.c)
        };
        self.push(op, spec, x, input)?;
        if let Some(d) = self.layers.last_mut() {
            d.skip = skip;
        }
        Ok(())
    }

    /// RELU, RELU6: fused into the layer writing its input, if that
    /// layer has no activation and nothing else reads its output; else
    /// a layer of its own.
    fn relu(&mut self, op: &Operator) -> Result<(), Unsupported> {
        let (x, _) = self.read(op, 0)?;
        let (y, output) = self.output(op)?;
        let activation = self.activation(op)?;
        let quant = |t: usize| self.file.tensor(t).map(|t| t.quantization.clone());
        let alike = self.dtype == Dtype::F32 || quant(x) == quant(y);
        let i = self.layers.iter().position(|d| {
            d.y == x
                && d.spec.is_some_and(|s| s.activation == Activation::None)
                && d.skip.is_none()
                && d.out_op == d.op
                && d.operators != "PAD"
                && self.file.readers(x) == 1
        });
        // int8: fused, the clamp acts in the layer's output quantization;
        // a RELU that requantizes is a layer of its own.
        let (Some(i), true) = (i, alike) else {
            return self.identity(op, false);
        };
        let d = &mut self.layers[i];
        d.operators.push_str(&format!(" + {}", op.kind));
        if let Some(spec) = &mut d.spec {
            spec.activation = activation;
        }
        d.out_op = op.index;
        d.y = y;
        self.dims.insert(y, output);
        Ok(())
    }

    fn pool(&mut self, op: &Operator) -> Result<(), Unsupported> {
        let (x, input) = self.read(op, 0)?;
        let (fh, fw) = op
            .options
            .filter
            .ok_or_else(|| self.unsupported(op, "no window size"))?;
        let spec = self.windowed(op, LayerSpec::new(fh, fw, 1, 1, input.c))?;
        let spec = LayerSpec {
            reduction: match op.kind {
                OpKind::MaxPool2d => Reduction::Max,
                _ => Reduction::Avg,
            },
            activation: self.activation(op)?,
            dtype: self.dtype,
            ..spec
        };
        self.push(op, spec, x, input)
    }

    fn push(
        &mut self,
        op: &Operator,
        spec: LayerSpec,
        x: usize,
        input: Dims,
    ) -> Result<(), Unsupported> {
        let (y, output) = self.output(op)?;
        let computed = spec.output_dims(input.h, input.w).map(|(h, w)| Dims {
            c: spec.out_channels(),
            h: h.out,
            w: w.out,
        });
        if computed != Ok(output) {
            return Err(self.unsupported(
                op,
                &format!(
                    "its declaration computes {computed:?} from its input, the file has {output:?}"
                ),
            ));
        }
        self.dims.insert(y, output);
        self.layers.push(Draft {
            operators: op.kind.to_string(),
            spec: Some(spec),
            op: op.index,
            out_op: op.index,
            x,
            skip: None,
            concat: Vec::new(),
            y,
            input,
            output,
        });
        Ok(())
    }

    /// CONCATENATION along channels (the last axis of `[1, H, W, C]`, or
    /// of `[1, C]`) of two or more tensors of one height and width, no
    /// fused activation (LiteRT refuses one): a `concat` line. int8: every
    /// input quantized as the output, which LiteRT requires (its int8
    /// kernel copies).
    fn concat(&mut self, op: &Operator) -> Result<(), Unsupported> {
        let (y, output) = self.output(op)?;
        let rank = self.file.tensor(y).map_or(0, |t| t.shape.len());
        let axis = op.options.axis.unwrap_or(0);
        if rank == 0 || (axis != -1 && axis != rank as i32 - 1) {
            return Err(self.unsupported(
                op,
                &format!(
                    "a CONCATENATION along axis {axis} of a rank-{rank} tensor (channels are)"
                ),
            ));
        }
        match op.options.fused_activation {
            None | Some(small_tflite::FusedActivation::None) => {}
            Some(a) => {
                return Err(self.unsupported(
                    op,
                    &format!("a CONCATENATION with fused activation {a} (LiteRT takes NONE)"),
                ));
            }
        }
        if op.inputs.len() < 2 {
            return Err(self.unsupported(op, "a CONCATENATION of fewer than two tensors"));
        }
        let mut inputs = Vec::with_capacity(op.inputs.len());
        let mut c = 0;
        for i in 0..op.inputs.len() {
            let (t, d) = self.read(op, i)?;
            if (d.h, d.w) != (output.h, output.w) {
                return Err(self.unsupported(
                    op,
                    &format!(
                        "input t{t} is {}x{}, the output {}x{}",
                        d.h, d.w, output.h, output.w
                    ),
                ));
            }
            if self.dtype == Dtype::I8 {
                let quant = |t: usize| self.file.tensor(t).map(|t| t.quantization.clone());
                if quant(t) != quant(y) {
                    return Err(self.unsupported(
                        op,
                        &format!(
                            "an int8 CONCATENATION whose input t{t} is quantized unlike its \
                             output (LiteRT refuses it: its int8 kernel copies)"
                        ),
                    ));
                }
            }
            c += d.c;
            inputs.push(t);
        }
        if c != output.c {
            return Err(self.unsupported(
                op,
                &format!("its inputs' {c} channels are not its output's {}", output.c),
            ));
        }
        self.dims.insert(y, output);
        let input = self.dims[&inputs[0]];
        self.layers.push(Draft {
            operators: op.kind.to_string(),
            spec: None,
            op: op.index,
            out_op: op.index,
            x: inputs[0],
            skip: None,
            concat: inputs,
            y,
            input,
            output,
        });
        Ok(())
    }

    /// ADD as a residual: fused into the layer that writes one of its
    /// inputs (the first in file order that can take it), the other input
    /// its skip.
    fn residual(&mut self, op: &Operator) -> Result<(), Unsupported> {
        let (a, _) = self.read(op, 0)?;
        let (b, _) = self.read(op, 1)?;
        let readers = |t: usize| self.file.readers(t);
        let fusable = |d: &Draft, skip: usize| {
            d.spec.is_some_and(|s| {
                s.reduction == Reduction::Fma && !s.residual && s.activation == Activation::None
            }) && d.skip.is_none()
                && d.out_op == d.op
                && readers(d.y) == 1
                && self.dims.get(&skip) == Some(&d.output)
        };
        let pick = self
            .layers
            .iter()
            .enumerate()
            .filter_map(|(i, d)| match d.y {
                y if y == a && fusable(d, b) => Some((i, b)),
                y if y == b && fusable(d, a) => Some((i, a)),
                _ => None,
            })
            .min_by_key(|&(i, _)| self.layers[i].op);
        let Some((i, skip)) = pick else {
            return self.identity(op, true);
        };
        let (y, output) = self.output(op)?;
        let activation = self.activation(op)?;
        let d = &mut self.layers[i];
        d.operators.push_str(" + ADD");
        if let Some(spec) = &mut d.spec {
            spec.residual = true;
            spec.activation = activation;
        }
        d.skip = Some(skip);
        d.out_op = op.index;
        d.y = y;
        self.dims.insert(y, output);
        Ok(())
    }

    /// RESHAPE (or SQUEEZE) that keeps the blocked layout: the same dims,
    /// or `1x1xC` as `[1, C]` and back.
    fn reshape(&mut self, op: &Operator) -> Result<(), Unsupported> {
        let (_, input) = self.read(op, 0)?;
        let (_, output) = self.output(op)?;
        if input != output {
            return Err(self.unsupported(
                op,
                &format!("a RESHAPE that changes the layout ({input:?} to {output:?})"),
            ));
        }
        Ok(())
    }

    fn finish(self) -> Result<Program, Unsupported> {
        let mut drafts = self.layers;
        drafts.sort_by_key(|d| d.out_op);
        let mut id = HashMap::from([(self.input.0, 0)]);
        let mut tensors = vec![self.input.0];
        let mut layers = Vec::with_capacity(drafts.len());
        for d in &drafts {
            // Layers are ordered by the operator that writes them, so what
            // a layer reads is written before it (a fused layer's skip by
            // an operator before its ADD).
            let at = |t: usize, op: usize| {
                id.get(&t).copied().ok_or_else(|| Unsupported {
                    op: Some(op),
                    message: format!("operator {op}: reads t{t} before it is written"),
                })
            };
            let x = at(d.x, d.op)?;
            let skip = d.skip.map(|s| at(s, d.out_op)).transpose()?;
            let concat = (d.concat.iter())
                .map(|&t| at(t, d.op))
                .collect::<Result<Vec<_>, _>>()?;
            let (h, w, c) = (d.output.h, d.output.w, d.output.c);
            layers.push(Layer {
                operators: d.operators.clone(),
                spec: d.spec,
                op: d.op,
                out_op: d.out_op,
                x,
                skip,
                concat,
                input: d.input,
                output: d.output,
                macs: d.spec.map_or(0, |s| h * w * c * s.fh * s.fw * s.fc),
            });
            id.insert(d.y, layers.len());
            tensors.push(d.y);
        }
        // A model! takes its element type from its first layer.
        if layers.iter().all(|l| l.spec.is_none()) {
            return Err(Unsupported {
                op: None,
                message: "the graph has no layer (a program has one besides concatenations)".into(),
            });
        }
        Ok(Program {
            dtype: self.dtype,
            input: self.input.1,
            layers,
            tensors,
            head: self.head,
        })
    }

    /// The error for `op`: its index, kind and tensors, what is wrong and
    /// what is supported.
    fn unsupported(&self, op: &Operator, what: &str) -> Unsupported {
        Unsupported {
            op: Some(op.index),
            message: format!(
                "operator {} ({}): {what}; inputs {}, outputs {}. Supported: {SUPPORTED}",
                op.index,
                tflite_name(&op.kind),
                tensor_list(self.file, op.inputs.iter().copied()),
                tensor_list(self.file, op.outputs.iter().copied().map(Some)),
            ),
        }
    }
}

/// TFLite's name of an operator kind: `CONV_2D`, `MUL`, `RESIZE_BILINEAR`
/// (the reader names the kinds it does not map after the schema's
/// `ResizeBilinear`).
fn tflite_name(kind: &OpKind) -> String {
    match kind {
        OpKind::Other(name) if !name.contains('(') => {
            let mut s = String::new();
            for (i, c) in name.chars().enumerate() {
                if c.is_ascii_uppercase() && i > 0 {
                    s.push('_');
                }
                s.push(c.to_ascii_uppercase());
            }
            s
        }
        k => k.name().to_string(),
    }
}

/// `t3 [1, 8, 8, 16], -` for error messages.
fn tensor_list(file: &Model, ts: impl Iterator<Item = Option<usize>>) -> String {
    let list: Vec<String> = ts
        .map(|t| match t.and_then(|t| file.tensor(t)) {
            Some(t) => format!("t{} {:?}", t.index, t.shape),
            None => "-".into(),
        })
        .collect();
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

/// `[1, H, W, C]` or `[1, C]` as dims.
fn dims_of(shape: &[usize]) -> Option<Dims> {
    match *shape {
        [1, h, w, c] => Some(Dims { c, h, w }),
        [1, c] => Some(Dims { c, h: 1, w: 1 }),
        _ => None,
    }
}
