#!/usr/bin/env python3
"""Peer comparison: times LiteRT (XNNPACK) and ONNX Runtime on the cases of
`small-bench` and checks that both compute the same thing.

    python3 benches/peers/peers.py                      # peers only
    python3 benches/peers/peers.py --run-small          # + runs small-bench (and mlperf_tiny) first
    python3 benches/peers/peers.py --run-small --cases i8   # int8 networks only
    python3 benches/peers/peers.py --small-json FILE    # + small-bench JSON lines
    python3 benches/peers/peers.py --latency --run-small-latency
        # per-call p50/p99/max idle and under load: small-rs, then LiteRT

Creates (once) and re-executes itself in the venv target/peers-venv
(packages pinned in requirements.txt beside this file). Not part of CI.

Cases (float32, batch 1, NHWC, one thread unless --threads):
- layer set at 48x48x16 and 6x6x512: conv 3x3 C->C SAME + bias, conv 1x1 C->C
  + bias, depthwise 3x3 SAME (multiplier 1) + bias, max pool 2x2/2, ReLU; named
  exactly as small-bench names them ("conv 3x3 48x48x16", ...);
- MLPerf Tiny float models from --models: resnet8, vww_0.25, ds-cnn, ad, and
  vww_1.0 (vww_0.25's graph with every channel count x4, random weights);
- the MLPerf Tiny int8 files as they are, LiteRT only: resnet8 i8, vww_0.25 i8,
  ds-cnn i8, ad i8, fed golden input 0 (int8); LiteRT's output is compared
  with the golden output bit for bit (a difference is reported, not a failure).

Every case is one small graph description (class Graph) emitted both as a
.tflite flatbuffer (ai_edge_litert.schema_py_generated object API +
flatbuffers) and as an ONNX model (onnx.helper), so both peers get the same
weights; the .tflite models are read into the same description. LiteRT runs
the shipped .tflite files themselves, except ds-cnn (see below).
"""

import argparse
import copy
import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV = os.path.join(ROOT, "target", "peers-venv")
REQS = os.path.join(HERE, "requirements.txt")


def ensure_venv():
    """Re-executes this script with target/peers-venv's python, creating the
    venv (and reinstalling when requirements.txt changed) first."""
    if os.environ.get("PEERS_NO_VENV") or os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    py = os.path.join(VENV, "bin", "python")
    stamp = os.path.join(VENV, "peers-requirements.sha256")
    want = hashlib.sha256(open(REQS, "rb").read()).hexdigest()
    have = open(stamp).read().strip() if os.path.exists(stamp) else None
    if not os.path.exists(py) or have != want:
        print(f"setting up {VENV} (pip install -r {REQS}) ...", file=sys.stderr, flush=True)
        if not os.path.exists(py):
            subprocess.check_call([sys.executable, "-m", "venv", VENV])
        subprocess.check_call([py, "-m", "pip", "install", "-q", "--upgrade", "pip"])
        subprocess.check_call([py, "-m", "pip", "install", "-q", "-r", REQS])
        with open(stamp, "w") as f:
            f.write(want + "\n")
    os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])


if __name__ == "__main__":
    ensure_venv()

import flatbuffers  # noqa: E402
import numpy as np  # noqa: E402

U32 = 2.0 ** -24  # float32 unit roundoff

# ----------------------------------------------------------------------------
# one graph description, two emitters
# ----------------------------------------------------------------------------


def out_size(n, k, s, padding):
    """TensorFlow's output size (SAME: ceil(n/s); VALID: ceil((n-k+1)/s))."""
    return -(-n // s) if padding == "SAME" else -(-(n - k + 1) // s)


def same_pads(n, k, s, padding):
    """(begin, end) padding of TensorFlow's SAME (the extra one at the end)."""
    if padding != "SAME":
        return 0, 0
    total = max((out_size(n, k, s, padding) - 1) * s + k - n, 0)
    return total // 2, total - total // 2


class Graph:
    """A straight-line float32 NHWC graph: values are named, shapes include
    the batch of 1; weights are in TFLite's layouts (conv OHWI, depthwise
    1HWC, fully connected OI)."""

    def __init__(self, name, in_shape):
        self.name = name
        self.input = "x"
        self.shapes = {"x": list(in_shape)}
        self.ops = []
        self.output = "x"
        self.n = 0

    def _op(self, kind, ins, shape, **kw):
        out = f"v{self.n}"
        self.n += 1
        self.shapes[out] = list(shape)
        self.ops.append(dict(kind=kind, ins=list(ins), out=out, **kw))
        self.output = out
        return out

    def conv(self, x, w, b, stride=1, padding="SAME", act="NONE"):
        _, h, wd, c = self.shapes[x]
        o, kh, kw, i = w.shape
        assert i == c, (w.shape, c)
        shape = [1, out_size(h, kh, stride, padding), out_size(wd, kw, stride, padding), o]
        return self._op("conv", [x], shape, w=w, b=b, stride=stride, padding=padding, act=act)

    def dw(self, x, w, b, stride=1, padding="SAME", act="NONE"):
        _, h, wd, c = self.shapes[x]
        _, kh, kw, cm = w.shape
        assert cm == c, "depth multiplier 1 only"
        shape = [1, out_size(h, kh, stride, padding), out_size(wd, kw, stride, padding), c]
        return self._op("dw", [x], shape, w=w, b=b, stride=stride, padding=padding, act=act)

    def pool(self, x, kind, k, stride, padding="VALID", act="NONE"):
        _, h, wd, c = self.shapes[x]
        kh, kw = k
        sh, sw = stride
        shape = [1, out_size(h, kh, sh, padding), out_size(wd, kw, sw, padding), c]
        return self._op(kind, [x], shape, k=(kh, kw), stride=(sh, sw), padding=padding, act=act)

    def add(self, a, b, act="NONE"):
        assert self.shapes[a] == self.shapes[b]
        return self._op("add", [a, b], self.shapes[a], act=act)

    def relu(self, x):
        return self._op("relu", [x], self.shapes[x])

    def reshape(self, x, shape):
        assert np.prod(shape) == np.prod(self.shapes[x])
        return self._op("reshape", [x], shape)

    def fc(self, x, w, b, act="NONE"):
        assert len(self.shapes[x]) == 2 and self.shapes[x][1] == w.shape[1]
        return self._op("fc", [x], [1, w.shape[0]], w=w, b=b, act=act)

    def softmax(self, x):
        return self._op("softmax", [x], self.shapes[x])

    def logits(self):
        """This graph without a final softmax (for a sharper check), or None."""
        if not self.ops or self.ops[-1]["kind"] != "softmax":
            return None
        h = copy.copy(self)
        h.ops = self.ops[:-1]
        h.output = self.ops[-1]["ins"][0]
        h.name = self.name + " logits"
        return h


# --- TFLite -----------------------------------------------------------------

ACTS = {"NONE": 0, "RELU": 1, "RELU6": 3}
ACT_NAMES = {v: k for k, v in ACTS.items()}
PADS = {"SAME": 0, "VALID": 1}
PAD_NAMES = {v: k for k, v in PADS.items()}


def _schema():
    from ai_edge_litert import schema_py_generated as S
    return S


def _aligned_buffer_class():
    S = _schema()

    class AlignedBufferT(S.BufferT):
        """BufferT packed 16-byte aligned (the schema's force_align: 16)."""

        def Pack(self, builder):
            data = None
            if self.data is not None and len(self.data) > 0:
                raw = bytes(self.data)
                builder.StartVector(1, len(raw), 16)
                builder.head = builder.head - len(raw)
                builder.Bytes[builder.head:builder.head + len(raw)] = raw
                data = builder.EndVector()
            S.BufferStart(builder)
            if data is not None:
                S.BufferAddData(builder, data)
            return S.BufferEnd(builder)

    return AlignedBufferT


def to_tflite(g):
    """The graph as .tflite bytes (schema v3, one subgraph, builtin ops only)."""
    S = _schema()
    Buf = _aligned_buffer_class()
    buffers = [Buf()]  # buffer 0: the empty sentinel
    tensors, tindex, codes, ops = [], {}, [], []

    def tensor(name, shape, data=None, ttype=None):
        t = S.TensorT()
        t.name = name.encode()
        t.shape = np.asarray(shape, np.int32)
        t.type = S.TensorType.FLOAT32 if ttype is None else ttype
        if data is not None:
            b = Buf()
            b.data = np.ascontiguousarray(data).tobytes()
            buffers.append(b)
            t.buffer = len(buffers) - 1
        tensors.append(t)
        return len(tensors) - 1

    def value(name):
        if name not in tindex:
            tindex[name] = tensor(name, g.shapes[name])
        return tindex[name]

    def const(name, arr):
        arr = np.asarray(arr)
        if arr.dtype == np.int32:
            return tensor(name, arr.shape, arr.astype("<i4"), S.TensorType.INT32)
        return tensor(name, arr.shape, arr.astype("<f4"))

    def code(builtin):
        for i, c in enumerate(codes):
            if c.builtinCode == builtin:
                return i
        c = S.OperatorCodeT()
        c.builtinCode = builtin
        c.deprecatedBuiltinCode = min(builtin, 127)
        c.version = 1
        codes.append(c)
        return len(codes) - 1

    def op(builtin, ins, outs, otype=0, opts=None):
        o = S.OperatorT()
        o.opcodeIndex = code(builtin)
        o.inputs = np.asarray(ins, np.int32)
        o.outputs = np.asarray(outs, np.int32)
        o.builtinOptionsType = otype
        o.builtinOptions = opts
        ops.append(o)

    B, O = S.BuiltinOperator, S.BuiltinOptions
    x_in = value(g.input)
    for k, o in enumerate(g.ops):
        ins = [value(n) for n in o["ins"]]
        out = value(o["out"])
        kind = o["kind"]
        if kind in ("conv", "dw"):
            w = const(f"w{k}", o["w"])
            b = const(f"b{k}", o["b"]) if o["b"] is not None else -1
            if kind == "conv":
                opts = S.Conv2DOptionsT()
            else:
                opts = S.DepthwiseConv2DOptionsT()
                opts.depthMultiplier = 1
            opts.padding = PADS[o["padding"]]
            opts.strideH = opts.strideW = o["stride"]
            opts.dilationHFactor = opts.dilationWFactor = 1
            opts.fusedActivationFunction = ACTS[o["act"]]
            if kind == "conv":
                op(B.CONV_2D, ins + [w, b], [out], O.Conv2DOptions, opts)
            else:
                op(B.DEPTHWISE_CONV_2D, ins + [w, b], [out], O.DepthwiseConv2DOptions, opts)
        elif kind in ("maxpool", "avgpool"):
            opts = S.Pool2DOptionsT()
            opts.padding = PADS[o["padding"]]
            opts.strideH, opts.strideW = o["stride"]
            opts.filterHeight, opts.filterWidth = o["k"]
            opts.fusedActivationFunction = ACTS[o["act"]]
            builtin = B.MAX_POOL_2D if kind == "maxpool" else B.AVERAGE_POOL_2D
            op(builtin, ins, [out], O.Pool2DOptions, opts)
        elif kind == "add":
            opts = S.AddOptionsT()
            opts.fusedActivationFunction = ACTS[o["act"]]
            op(B.ADD, ins, [out], O.AddOptions, opts)
        elif kind == "relu":
            op(B.RELU, ins, [out])
        elif kind == "reshape":
            shape = np.asarray(g.shapes[o["out"]], np.int32)
            opts = S.ReshapeOptionsT()
            opts.newShape = shape
            op(B.RESHAPE, ins + [const(f"shape{k}", shape)], [out], O.ReshapeOptions, opts)
        elif kind == "fc":
            opts = S.FullyConnectedOptionsT()
            opts.fusedActivationFunction = ACTS[o["act"]]
            w = const(f"w{k}", o["w"])
            b = const(f"b{k}", o["b"]) if o["b"] is not None else -1
            op(B.FULLY_CONNECTED, ins + [w, b], [out], O.FullyConnectedOptions, opts)
        elif kind == "softmax":
            opts = S.SoftmaxOptionsT()
            opts.beta = 1.0
            op(B.SOFTMAX, ins, [out], O.SoftmaxOptions, opts)
        else:
            raise ValueError(kind)
    sg = S.SubGraphT()
    sg.tensors, sg.operators = tensors, ops
    sg.inputs = np.asarray([x_in], np.int32)
    sg.outputs = np.asarray([value(g.output)], np.int32)
    sg.name = b"main"
    m = S.ModelT()
    m.version = 3
    m.description = b"small-rs benches/peers"
    m.operatorCodes, m.subgraphs, m.buffers = codes, [sg], buffers
    builder = flatbuffers.Builder(1 << 20)
    builder.Finish(m.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def from_tflite(path, name):
    """Reads a float .tflite model into a Graph. int8 constant weights of
    float ops (dynamic-range "hybrid" ops) are dequantized: (q - zp) * scale.
    Returns (graph, list of hybrid op indices)."""
    S = _schema()
    buf = bytearray(open(path, "rb").read())
    m = S.ModelT.InitFromPackedBuf(buf, 0)
    assert len(m.subgraphs) == 1, "one subgraph expected"
    sg = m.subgraphs[0]
    T = sg.tensors
    names = {v: k for k, v in vars(S.BuiltinOperator).items() if not k.startswith("_")}

    def data(ti):
        t = T[ti]
        raw = m.buffers[t.buffer].data
        if raw is None or len(raw) == 0:
            return None
        dt = {S.TensorType.FLOAT32: "<f4", S.TensorType.INT32: "<i4", S.TensorType.INT8: "i1"}[t.type]
        a = np.frombuffer(bytes(bytearray(np.asarray(raw, np.uint8))), dt).reshape(
            [int(s) for s in t.shape])
        if t.type == S.TensorType.INT8:
            q = t.quantization
            scale = np.asarray(q.scale, np.float32)
            zp = np.asarray(q.zeroPoint, np.float32)
            if scale.size > 1:
                bshape = [1] * a.ndim
                bshape[q.quantizedDimension] = -1
                scale, zp = scale.reshape(bshape), zp.reshape(bshape)
            a = ((a.astype(np.float32) - zp) * scale).astype(np.float32)
        return a

    (x_in,) = [int(i) for i in sg.inputs]
    g = Graph(name, [int(s) for s in T[x_in].shape])
    val = {x_in: g.input}
    hybrid = []
    for k, op in enumerate(sg.operators):
        c = m.operatorCodes[op.opcodeIndex]
        opname = names[max(c.builtinCode, c.deprecatedBuiltinCode)]
        ins = [int(i) for i in op.inputs]
        o = op.builtinOptions
        if any(i >= 0 and T[i].type == S.TensorType.INT8 for i in ins[1:]):
            hybrid.append(k)
        if opname in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            assert o.dilationHFactor == 1 and o.dilationWFactor == 1 and o.strideH == o.strideW
            b = data(ins[2]) if len(ins) > 2 and ins[2] >= 0 else None
            f = g.conv if opname == "CONV_2D" else g.dw
            if opname == "DEPTHWISE_CONV_2D":
                assert o.depthMultiplier == 1 or T[ins[1]].shape[3] == T[ins[0]].shape[3]
            y = f(val[ins[0]], data(ins[1]), b, o.strideH, PAD_NAMES[o.padding],
                  ACT_NAMES[o.fusedActivationFunction])
        elif opname in ("MAX_POOL_2D", "AVERAGE_POOL_2D"):
            y = g.pool(val[ins[0]], "maxpool" if opname == "MAX_POOL_2D" else "avgpool",
                       (o.filterHeight, o.filterWidth), (o.strideH, o.strideW),
                       PAD_NAMES[o.padding], ACT_NAMES[o.fusedActivationFunction])
        elif opname == "ADD":
            y = g.add(val[ins[0]], val[ins[1]], ACT_NAMES[o.fusedActivationFunction])
        elif opname == "RELU":
            y = g.relu(val[ins[0]])
        elif opname == "RESHAPE":
            y = g.reshape(val[ins[0]], [int(s) for s in T[int(op.outputs[0])].shape])
        elif opname == "FULLY_CONNECTED":
            assert len(g.shapes[val[ins[0]]]) == 2 and not o.keepNumDims
            b = data(ins[2]) if len(ins) > 2 and ins[2] >= 0 else None
            y = g.fc(val[ins[0]], data(ins[1]), b, ACT_NAMES[o.fusedActivationFunction])
        elif opname == "SOFTMAX":
            assert o.beta == 1.0
            y = g.softmax(val[ins[0]])
        else:
            raise NotImplementedError(f"{path}: op {opname}")
        out = int(op.outputs[0])
        assert g.shapes[y] == [int(s) for s in T[out].shape], (opname, g.shapes[y], T[out].shape)
        val[out] = y
    assert g.output == val[int(sg.outputs[0])]
    return g, hybrid


# --- ONNX (NCHW) ------------------------------------------------------------

def nchw(shape):
    return [shape[0], shape[3], shape[1], shape[2]] if len(shape) == 4 else list(shape)


def to_onnx(g):
    """The graph as ONNX bytes in ONNX Runtime's native NCHW layout: the model
    input and a 4-D output are NCHW (the caller transposes outside the timed
    region, as small-rs converts to its blocked layout outside its timing)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []

    def init(name, a):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(a), name))
        return name

    def act(y, a, k):
        if a == "NONE":
            return y
        z = f"{y}_act"
        if a == "RELU":
            nodes.append(helper.make_node("Relu", [y], [z], name=f"relu{k}"))
        else:
            lo, hi = init(f"lo{k}", np.float32(0)), init(f"hi{k}", np.float32(6))
            nodes.append(helper.make_node("Clip", [y, lo, hi], [z], name=f"relu6_{k}"))
        return z

    v = {g.input: g.input}
    for k, o in enumerate(g.ops):
        x = v[o["ins"][0]]
        kind, y = o["kind"], o["out"] + ("_pre" if o.get("act", "NONE") != "NONE" else "")
        if kind in ("conv", "dw", "maxpool", "avgpool"):
            _, h, wd, c = g.shapes[o["ins"][0]]
            if kind in ("conv", "dw"):
                kh, kw = o["w"].shape[1:3]
                sh = sw = o["stride"]
            else:
                (kh, kw), (sh, sw) = o["k"], o["stride"]
            ph, pw = same_pads(h, kh, sh, o["padding"]), same_pads(wd, kw, sw, o["padding"])
            attrs = dict(kernel_shape=[kh, kw], strides=[sh, sw], pads=[ph[0], pw[0], ph[1], pw[1]])
            if kind == "conv":
                ins = [x, init(f"w{k}", o["w"].transpose(0, 3, 1, 2))]  # OHWI -> OIHW
                if o["b"] is not None:
                    ins.append(init(f"b{k}", o["b"]))
                nodes.append(helper.make_node("Conv", ins, [y], name=f"conv{k}", **attrs))
            elif kind == "dw":
                ins = [x, init(f"w{k}", o["w"].transpose(3, 0, 1, 2))]  # 1HWC -> C1HW
                if o["b"] is not None:
                    ins.append(init(f"b{k}", o["b"]))
                nodes.append(helper.make_node("Conv", ins, [y], name=f"dw{k}", group=c, **attrs))
            else:
                optype = "MaxPool" if kind == "maxpool" else "AveragePool"
                if kind == "avgpool":
                    attrs["count_include_pad"] = 0  # TFLite divides by the valid taps
                nodes.append(helper.make_node(optype, [x], [y], name=f"pool{k}", **attrs))
        elif kind == "add":
            nodes.append(helper.make_node("Add", [x, v[o["ins"][1]]], [y], name=f"add{k}"))
        elif kind == "relu":
            nodes.append(helper.make_node("Relu", [x], [y], name=f"relu{k}"))
        elif kind == "reshape":
            s = g.shapes[o["ins"][0]]
            if len(s) == 4 and s[1] * s[2] > 1:  # back to NHWC order first
                t = f"{x}_nhwc"
                nodes.append(helper.make_node("Transpose", [x], [t], perm=[0, 2, 3, 1]))
                x = t
            shape = init(f"shape{k}", np.asarray(g.shapes[o["out"]], np.int64))
            out = g.shapes[o["out"]]
            if len(out) == 4:
                raise NotImplementedError("reshape to 4-D")
            nodes.append(helper.make_node("Reshape", [x, shape], [y], name=f"reshape{k}"))
        elif kind == "fc":
            ins = [x, init(f"w{k}", o["w"])]
            if o["b"] is not None:
                ins.append(init(f"b{k}", o["b"]))
            nodes.append(helper.make_node("Gemm", ins, [y], name=f"fc{k}", transB=1))
        elif kind == "softmax":
            nodes.append(helper.make_node("Softmax", [x], [y], name=f"softmax{k}", axis=-1))
        else:
            raise ValueError(kind)
        v[o["out"]] = act(y, o.get("act", "NONE"), k)
    f32 = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, g.name.replace(" ", "_"),
        [helper.make_tensor_value_info(g.input, f32, nchw(g.shapes[g.input]))],
        [helper.make_tensor_value_info(v[g.output], f32, nchw(g.shapes[g.output]))],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="small-rs benches/peers")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


# ----------------------------------------------------------------------------
# cases
# ----------------------------------------------------------------------------

LAYER_SHAPES = [(48, 48, 16), (6, 6, 512)]
MODELS = [  # case name, file, golden output file of input 0
    ("resnet8", "pretrainedResnet.tflite", "0.output.bin"),
    ("vww_0.25", "vww_96_float.tflite", "0.output.bin"),
    ("vww_1.0", None, None),
    ("ds-cnn", "kws_ref_model_float32.tflite", "0.output.dequantized_weights.bin"),
    ("ds-cnn hybrid", "kws_ref_model_float32.tflite", "0.output.bin"),
    ("ad", "ad01_fp32.tflite", "0.output.bin"),
]


MODELS_I8 = [  # case name, int8 file (golden pairs in <file>.golden/<i>.{input,output}.bin)
    ("resnet8 i8", "pretrainedResnet_quant.tflite"),
    ("vww_0.25 i8", "vww_96_int8.tflite"),
    ("ds-cnn i8", "kws_ref_model.tflite"),
    ("ad i8", "ad01_int8.tflite"),
]
I8_ORT_NA = "int8 not run (ORT: float cases only)"


class Case:
    def __init__(self, name, graph=None, x=None, tflite=None, golden=None, gtol=None,
                 bound=None, note="", onnx_na=None, i8_pairs=None):
        self.name, self.graph, self.x = name, graph, x
        self.tflite = tflite            # bytes LiteRT runs (default: to_tflite(graph))
        self.golden, self.gtol = golden, gtol
        self.bound = bound              # per-element bound of |LiteRT - ORT| (layers)
        self.note = note
        self.onnx_na = onnx_na          # reason ORT cannot run it, or None
        self.i8_pairs = i8_pairs        # int8 cases: every golden (input, output), else None


def conv_ref64(x, w, b, stride, padding, depthwise):
    """float64 NHWC conv / depthwise of x[1,H,W,C] (TFLite weight layout):
    returns (y, a) with a = sum of |products| + |bias| per output, so that any
    float32 summation order is within (K + 1) * u * a of y (u = 2^-24)."""
    x = x[0].astype(np.float64)
    h, wd, c = x.shape
    _, kh, kw, _ = w.shape
    (pt, pb), (pl, pr) = same_pads(h, kh, stride, padding), same_pads(wd, kw, stride, padding)
    oh, ow = out_size(h, kh, stride, padding), out_size(wd, kw, stride, padding)
    xp = np.pad(x, ((pt, pb), (pl, pr), (0, 0)))
    w = w.astype(np.float64)
    n_out = c if depthwise else w.shape[0]
    y, a = np.zeros((oh, ow, n_out)), np.zeros((oh, ow, n_out))
    for i in range(kh):
        for j in range(kw):
            patch = xp[i:i + (oh - 1) * stride + 1:stride, j:j + (ow - 1) * stride + 1:stride, :]
            if depthwise:
                y += patch * w[0, i, j]
                a += np.abs(patch) * np.abs(w[0, i, j])
            else:
                y += patch @ w[:, i, j, :].T
                a += np.abs(patch) @ np.abs(w[:, i, j, :]).T
    if b is not None:
        y += b
        a += np.abs(b)
    return y[None], a[None]


def layer_cases():
    out = []
    for h, w, c in LAYER_SHAPES:
        tag = f"{h}x{w}x{c}"
        rng = np.random.default_rng(h * 1000 + c)
        x = rng.uniform(-1, 1, (1, h, w, c)).astype(np.float32)

        def rnd(*s):
            return rng.uniform(-1, 1, s).astype(np.float32)

        for name, kind, k in [("conv 3x3", "conv", 3), ("conv 1x1", "conv", 1), ("dw 3x3", "dw", 3)]:
            g = Graph(f"{name} {tag}", x.shape)
            wt = rnd(c, k, k, c) if kind == "conv" else rnd(1, k, k, c)
            b = rnd(c)
            (g.conv if kind == "conv" else g.dw)(g.input, wt, b, 1, "SAME")
            _, a = conv_ref64(x, wt, b, 1, "SAME", kind == "dw")
            kred = k * k * (c if kind == "conv" else 1)
            # two float32 evaluations in different orders: each within
            # (K + 1) u a of the exact value, so within 2 (K + 1) u a of each other
            out.append(Case(g.name, g, x, bound=2 * (kred + 1) * U32 * a))
        g = Graph(f"maxpool {tag}", x.shape)
        g.pool(g.input, "maxpool", (2, 2), (2, 2), "VALID")
        out.append(Case(g.name, g, x, bound=0.0))
        g = Graph(f"relu {tag}", x.shape)
        g.relu(g.input)
        out.append(Case(g.name, g, x, bound=0.0))
    return out


def overhead_case():
    x = np.ones((1, 1, 1, 1), np.float32)
    g = Graph("call overhead", x.shape)
    g.relu(g.input)
    return Case(g.name, g, x, bound=0.0, note="1x1x1x1 ReLU: the Python call floor")


def scaled_vww(g025, factor=4, seed=1):
    """vww_0.25's graph with every channel count x factor (not the 3 input
    channels nor the 2 classes), He-initialized random weights, bias 0.01 N(0,1)."""
    rng = np.random.default_rng(seed)
    g = Graph("vww_1.0", g025.shapes[g025.input])
    v = {g025.input: g.input}
    for o in g025.ops:
        x = v[o["ins"][0]]
        c = g.shapes[x][-1]
        if o["kind"] == "conv":
            oc, kh, kw, _ = o["w"].shape
            w = rng.normal(0, np.sqrt(2 / (kh * kw * c)), (oc * factor, kh, kw, c))
            b = 0.01 * rng.standard_normal(oc * factor)
            y = g.conv(x, w.astype(np.float32), b.astype(np.float32), o["stride"], o["padding"], o["act"])
        elif o["kind"] == "dw":
            _, kh, kw, _ = o["w"].shape
            w = rng.normal(0, np.sqrt(2 / (kh * kw)), (1, kh, kw, c))
            b = 0.01 * rng.standard_normal(c)
            y = g.dw(x, w.astype(np.float32), b.astype(np.float32), o["stride"], o["padding"], o["act"])
        elif o["kind"] in ("maxpool", "avgpool"):
            y = g.pool(x, o["kind"], o["k"], o["stride"], o["padding"], o["act"])
        elif o["kind"] == "reshape":
            y = g.reshape(x, [1, c])
        elif o["kind"] == "fc":
            w = rng.normal(0, 1 / np.sqrt(c), (o["w"].shape[0], c))
            b = 0.01 * rng.standard_normal(o["w"].shape[0])
            y = g.fc(x, w.astype(np.float32), b.astype(np.float32), o["act"])
        elif o["kind"] == "softmax":
            y = g.softmax(x)
        else:
            raise NotImplementedError(o["kind"])
        v[o["out"]] = y
    return g


# Models: |LiteRT - ORT| and |LiteRT - golden| must be <= MODEL_RTOL * max|golden|
# (see README.md: >= 20x the spread between TFLite's own kernel sets, far below
# what a wrong layout, padding or weight gives).
MODEL_RTOL = 1e-4
HYBRID_TOL = 0.05  # README of the models: XNNPACK's hybrid conv differs by up to 0.035


def model_cases(models_dir):
    out = []
    if not os.path.isdir(models_dir):
        return [Case(name, note=f"n/a: no {models_dir}") for name, _, _ in MODELS] + [
            Case(name, note=f"n/a: no {models_dir}", i8_pairs=[]) for name, _ in MODELS_I8]
    g025 = None
    for name, fname, gname in MODELS:
        try:
            if fname is None:  # vww_1.0
                if g025 is None:
                    raise RuntimeError("needs vww_96_float.tflite")
                g = scaled_vww(g025)
                x = np.random.default_rng(0).uniform(0, 1, g.shapes[g.input]).astype(np.float32)
                out.append(Case(name, g, x, note="random weights, input uniform(0,1)"))
                continue
            path = os.path.join(models_dir, fname)
            g, hybrid = from_tflite(path, name)
            if name == "vww_0.25":
                g025 = g
            gdir = os.path.join(models_dir, fname[:-len(".tflite")] + ".golden")
            x = np.fromfile(os.path.join(gdir, "0.input.bin"), "<f4").reshape(g.shapes[g.input])
            golden = np.fromfile(os.path.join(gdir, gname), "<f4").reshape(g.shapes[g.output])
            model = open(path, "rb").read()
            if name == "ds-cnn":
                # the float computation small-rs does: the 5 int8 conv weights dequantized
                out.append(Case(name, g, x, to_tflite(g), golden, MODEL_RTOL * np.abs(golden).max(),
                                note=f"ops {hybrid} int8 weights dequantized to float32 (both peers)"))
            elif name == "ds-cnn hybrid":
                out.append(Case(name, g, x, model, golden, HYBRID_TOL,
                                note="the shipped file: LiteRT runs its int8-weight (hybrid) convs",
                                onnx_na="hybrid int8 convs (ORT gets the float graph: row ds-cnn)"))
            else:
                out.append(Case(name, g, x, model, golden, MODEL_RTOL * np.abs(golden).max(),
                                note="shipped .tflite (LiteRT); same graph and weights in ONNX (ORT)"))
        except Exception as e:  # noqa: BLE001
            out.append(Case(name, note=f"n/a: {type(e).__name__}: {e}"))
    return out + int8_cases(models_dir)


def int8_cases(models_dir):
    """The int8 files as they are, for LiteRT only: x = golden input 0,
    golden = its output, i8_pairs = every golden (input, output) pair."""
    S = _schema()
    out = []
    for name, fname in MODELS_I8:
        try:
            path = os.path.join(models_dir, fname)
            model = open(path, "rb").read()
            sg = S.ModelT.InitFromPackedBuf(bytearray(model), 0).subgraphs[0]
            (xt,), (yt,) = [sg.tensors[int(i)] for i in sg.inputs], [sg.tensors[int(i)] for i in sg.outputs]
            assert xt.type == yt.type == S.TensorType.INT8, "int8 input and output expected"
            gdir = os.path.join(models_dir, fname[:-len(".tflite")] + ".golden")
            pairs = []
            while os.path.exists(os.path.join(gdir, f"{len(pairs)}.input.bin")):
                i = len(pairs)
                pairs.append(tuple(np.fromfile(os.path.join(gdir, f"{i}.{io}.bin"), np.int8).reshape(
                    [int(s) for s in t.shape]) for io, t in (("input", xt), ("output", yt))))
            if not pairs:
                raise FileNotFoundError(os.path.join(gdir, "0.input.bin"))
            out.append(Case(name, x=pairs[0][0], tflite=model, golden=pairs[0][1], i8_pairs=pairs,
                            note="shipped int8 .tflite, golden input 0", onnx_na=I8_ORT_NA))
        except Exception as e:  # noqa: BLE001
            out.append(Case(name, note=f"n/a: {type(e).__name__}: {e}", i8_pairs=[]))
    return out


# ----------------------------------------------------------------------------
# timing
# ----------------------------------------------------------------------------

def time_it(f, warmup, min_time, min_runs=10):
    """(median, min) microseconds of f() after >= warmup s, over >= min_time s
    and >= min_runs individually timed calls (small-bench's rule)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < warmup:
        f()
    runs = []
    clock = time.perf_counter_ns
    t0 = time.perf_counter()
    while len(runs) < min_runs or time.perf_counter() - t0 < min_time:
        a = clock()
        f()
        runs.append(clock() - a)
    runs.sort()
    return runs[len(runs) // 2] / 1e3, runs[0] / 1e3


def run_litert(model, x, threads, warmup, min_time):
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_content=model, num_threads=threads)  # default resolver: XNNPACK
    it.allocate_tensors()
    delegated = sum(1 for d in it._get_ops_details() if d["op_name"] == "DELEGATE")
    if not delegated:
        raise RuntimeError("XNNPACK did not take any op")
    (inp,), (out,) = it.get_input_details(), it.get_output_details()
    it.set_tensor(inp["index"], x)
    it.invoke()
    y = it.get_tensor(out["index"]).copy()
    return y, time_it(it.invoke, warmup, min_time)


def outside_xnnpack(it):
    """Names of the model's ops that LiteRT runs itself, outside the XNNPACK
    partitions: an op none of whose outputs is a DELEGATE node's output, but
    whose outputs feed a DELEGATE node or are the model's outputs (an op inside
    a partition writes either a partition output or a tensor internal to it)."""
    ops = it._get_ops_details()
    d_in, d_out = set(), set()
    for o in ops:
        if o["op_name"] == "DELEGATE":
            d_in.update(int(i) for i in o["inputs"])
            d_out.update(int(i) for i in o["outputs"])
    model_out = {int(d["index"]) for d in it.get_output_details()}
    return [o["op_name"] for o in ops if o["op_name"] != "DELEGATE"
            and not any(int(i) in d_out for i in o["outputs"])
            and all(int(i) in d_in or int(i) in model_out for i in o["outputs"])]


def int8_diff(y, golden):
    """(elements that differ, max |diff| in quantization steps) of two int8 arrays."""
    d = np.abs(y.astype(np.int16) - golden.astype(np.int16))
    return int(np.count_nonzero(d)), int(d.max())


def check_i8(model, pairs, threads):
    """LiteRT (XNNPACK) on every golden input of an int8 case (untimed):
    ([(elements differing, max |diff| steps, argmax equal) per input], ops
    outside XNNPACK)."""
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_content=model, num_threads=threads)
    it.allocate_tensors()
    (inp,), (out,) = it.get_input_details(), it.get_output_details()
    res = []
    for x, golden in pairs:
        it.set_tensor(inp["index"], x)
        it.invoke()
        y = it.get_tensor(out["index"])
        res.append(int8_diff(y, golden) + (int(np.argmax(y)) == int(np.argmax(golden)),))
    return res, outside_xnnpack(it)


def run_ort(model, x, shape_out, threads, warmup, min_time):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    xn = np.ascontiguousarray(x.transpose(0, 3, 1, 2) if x.ndim == 4 else x)
    xv = ort.OrtValue.ortvalue_from_numpy(xn)
    yv = ort.OrtValue.ortvalue_from_shape_and_type(nchw(shape_out), np.float32)
    io = sess.io_binding()
    io.bind_ortvalue_input(sess.get_inputs()[0].name, xv)
    io.bind_ortvalue_output(sess.get_outputs()[0].name, yv)
    sess.run_with_iobinding(io)
    y = yv.numpy().copy()
    if y.ndim == 4:
        y = y.transpose(0, 2, 3, 1)
    return y, time_it(lambda: sess.run_with_iobinding(io), warmup, min_time)


# ----------------------------------------------------------------------------
# latency under load (--latency): mirrors small-rs's `mlperf_tiny --latency`
# ----------------------------------------------------------------------------

LATENCY_MODELS = ("resnet8", "vww_0.25", "ds-cnn", "ad")
LATENCY_MIN_CALLS = 1000

# One busy process: spins in pure Python (like `while :; do :; done`), and
# checks every few ms that its parent is still there, so it does not outlive
# the script even when the script is killed with SIGKILL. It writes one byte
# once it runs, and the script waits for that byte before measuring.
SPIN = """import os, sys
parent = int(sys.argv[1])
sys.stdout.write("1")
sys.stdout.flush()
sys.stdout.close()
while os.getppid() == parent:
    for _ in range(100000):
        pass
"""


class BusyLoad:
    """`with BusyLoad(n):` runs n busy processes (one spinning Python process
    each) for the duration of the block; they are killed on leaving it,
    also on an exception or KeyboardInterrupt."""

    def __init__(self, n):
        self.n = n
        self.procs = []

    def __enter__(self):
        try:
            for _ in range(self.n):
                self.procs.append(subprocess.Popen(
                    [sys.executable, "-c", SPIN, str(os.getpid())],
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE))
            for p in self.procs:  # wait until every one spins
                if p.stdout.read(1) != b"1":
                    raise RuntimeError(f"busy process {p.pid} did not start (exit {p.poll()})")
                p.stdout.close()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.wait()
            if p.stdout and not p.stdout.closed:
                p.stdout.close()
        self.procs = []

    def __exit__(self, *exc):
        self.stop()
        return False


def percentiles(f, warmup, min_time, min_calls=LATENCY_MIN_CALLS):
    """(calls, p50, p99, max) in microseconds of f() over >= min_calls
    individually timed calls and >= min_time s, after >= warmup s; the
    percentiles are taken as small-rs's `mlperf_tiny --latency` takes them
    (p50 = sorted[n / 2], p99 = sorted[ceil(0.99 n) - 1]). Python's garbage
    collector is off during the timed calls."""
    import gc
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < warmup:
        f()
    runs = []
    clock = time.perf_counter_ns
    enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        while len(runs) < min_calls or time.perf_counter() - t0 < min_time:
            a = clock()
            f()
            runs.append(clock() - a)
    finally:
        if enabled:
            gc.enable()
    runs.sort()
    n = len(runs)
    return n, runs[n // 2] / 1e3, runs[-(-n * 99 // 100) - 1] / 1e3, runs[-1] / 1e3


def litert_interpreter(model, x, threads):
    """A LiteRT interpreter (XNNPACK) with x set as its input and invoked
    once; returns (interpreter, output of that call)."""
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_content=model, num_threads=threads)
    it.allocate_tensors()
    if not any(d["op_name"] == "DELEGATE" for d in it._get_ops_details()):
        raise RuntimeError("XNNPACK did not take any op")
    (inp,), (out,) = it.get_input_details(), it.get_output_details()
    it.set_tensor(inp["index"], x)
    it.invoke()
    return it, it.get_tensor(out["index"]).copy()


def litert_latency(c, load, threads, warmup, min_time):
    """Latency rows of case c as small-rs's `latencies` makes them: idle,
    then beside `load` busy processes; 1 thread and `threads` each.
    Returns (rows, check text, ok)."""
    counts = [1] if threads == 1 else [1, threads]
    its, ok, check = {}, True, []
    for t in counts:
        it, y = litert_interpreter(c.tflite, c.x, t)
        its[t] = it
        d = float(np.abs(y.astype(np.float64) - c.golden).max())
        ok &= d <= c.gtol
        check.append(f"{t} thread{'s' if t > 1 else ''}: |LiteRT-golden| max {d:.3g} (tol {c.gtol:.3g})")
    rows = []
    for busy in ([0, load] if load else [0]):
        print(f"# {c.name}: LiteRT latency, {busy} busy processes ...", file=sys.stderr, flush=True)
        with BusyLoad(busy):
            for t in counts:
                n, p50, p99, mx = percentiles(its[t].invoke, warmup, min_time)
                rows.append(dict(model=c.name, busy=busy, threads=t, calls=n, p50=p50, p99=p99, max=mx))
    return rows, "; ".join(check), ok


def print_latency(rows, what):
    print(f"\nlatency per call, µs ({what}):")
    print(f"{'model':<11} {'busy':>5} {'threads':>8} {'calls':>6} {'p50':>9} {'p99':>9} {'max':>9}  "
          f"p50 / 1-thread p50")
    for r in rows:
        one = next((b["p50"] for b in rows if b["model"] == r["model"] and b["busy"] == r["busy"]
                    and b["threads"] == 1), float("nan"))
        print(f"{r['model']:<11} {r['busy']:>5} {r['threads']:>8} {r['calls']:>6} {r['p50']:>9.1f} "
              f"{r['p99']:>9.1f} {r['max']:>9.1f}  {r['p50'] / one:.2f}x")


def parse_small_latency(lines):
    """The rows of `mlperf_tiny --latency`'s latency table (dicts as
    litert_latency's). Its `type` column (f32 / i8, if present) goes into the
    model name as the case names have it: `resnet8`, `resnet8 i8`."""
    rows, table, typed = [], False, False
    for line in lines:
        if line.startswith("latency per call"):
            table = True
        elif table and not line.strip():
            break
        elif table and line.startswith("model"):
            typed = line.split()[1] == "type"
        elif table:
            f = line.split()
            try:
                model = f[0] + (" i8" if typed and f[1] == "i8" else "")
                f = f[2:] if typed else f[1:]
                rows.append(dict(model=model, busy=int(f[0]), threads=int(f[1]), calls=int(f[2]),
                                 p50=float(f[3]), p99=float(f[4]), max=float(f[5])))
            except (IndexError, ValueError):
                pass
    return rows


def run_small_latency(load, models, threads):
    """Runs small-rs's `mlperf_tiny --latency` with the same load; prints its
    header and latency table and returns its latency rows (dicts as
    litert_latency's)."""
    cmd = ["cargo", "run", "--release", "-q", "--example", "mlperf_tiny", "--",
           "--latency", "--load", str(load), "--models", models]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    print(f"# running {' '.join(cmd)} ...", flush=True)
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    lines = p.stdout.splitlines()
    rows = parse_small_latency(lines)
    if lines:
        print(lines[0])  # small-rs MLPerf Tiny, arch ..., N threads
    if p.returncode != 0 or not rows:
        print(f"# small-rs mlperf_tiny: exit {p.returncode}{'' if rows else ', no latency table'}; its output:")
        for line in lines[1:]:
            print("#   " + line)
    if rows:
        print_latency(rows, "small-rs; busy = threads spinning beside the calls, in its process")
    return rows


def latency_main(args):
    import signal
    # a SIGTERM unwinds like Ctrl-C, so the busy processes are killed on the way out
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    threads = args.threads if args.threads is not None else 2
    load = args.load if args.load is not None else (os.cpu_count() or 1)
    warmup = args.warmup if args.warmup is not None else 0.05
    min_time = args.min_time if args.min_time is not None else 0.5
    print(f"# latency under load: {load} busy (small-rs: threads in its process; LiteRT: processes "
          f"started by this script); LiteRT XNNPACK with 1 and {threads} threads; warm-up {warmup} s, "
          f">= {LATENCY_MIN_CALLS} calls and >= {min_time} s per row; p50 / p99 / max of the single calls")
    small = []
    if args.run_small_latency:
        small = run_small_latency(load, os.path.abspath(args.models), args.threads)
    cases = [c for c in model_cases(os.path.abspath(args.models)) if c.name in LATENCY_MODELS]
    if args.cases:
        words = [w.strip() for w in args.cases.split(",")]
        cases = [c for c in cases if any(w in c.name for w in words)]
    rows, checks, failed = [], [], 0
    for c in cases:
        if c.graph is None or c.golden is None:
            checks.append((c.name, "n/a", c.note))
            continue
        try:
            r, text, ok = litert_latency(c, load, threads, warmup, min_time)
        except Exception as e:  # noqa: BLE001
            checks.append((c.name, "n/a", f"LiteRT n/a: {type(e).__name__}: {e}"))
            continue
        rows += r
        checks.append((c.name, "ok" if ok else "MISMATCH", text))
        failed += not ok
    if args.json:
        with open(args.json, "w") as f:
            for peer, rs in (("small-rs", small), ("litert-xnnpack", rows)):
                for r in rs:
                    f.write(json.dumps(dict(latency=True, model=r["model"], peer=peer, busy=r["busy"],
                                            threads=r["threads"], calls=r["calls"],
                                            p50_us=round(r["p50"], 2), p99_us=round(r["p99"], 2),
                                            max_us=round(r["max"], 2))) + "\n")
    print_latency(rows, "LiteRT XNNPACK; busy = processes spinning beside the calls")
    if not small and not args.run_small_latency:
        print("(small-rs's table: add --run-small-latency)")
    print()
    print("LiteRT's output of the golden input 0, with each thread count:")
    for name, status, text in checks:
        print(f"  {name:<9} {status:<8} {text}")
    if failed:
        print(f"{failed} model(s) MISMATCH")
        sys.exit(1)


# ----------------------------------------------------------------------------
# small-rs side
# ----------------------------------------------------------------------------

def parse_small(lines, arch=None, threads=1):
    """{case: (median_us, min_us, arch)}: the given arch, else each case's
    fastest arch. With threads > 1, the cases' rows timed with that many
    threads (small-bench's `threads_of` lines), else the one-thread rows."""
    best = {}
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            continue
        key = "case" if threads <= 1 else "threads_of"
        if key not in d or "median_us" not in d:
            continue
        if threads > 1 and d.get("threads") != threads:
            continue
        a = d.get("arch", "?")
        if arch and a != arch:
            continue
        r = (float(d["median_us"]), float(d.get("min_us", float("nan"))), a)
        if d[key] not in best or r[0] < best[d[key]][0]:
            best[d[key]] = r
    return best


def run_small(threads=1):
    cmd = ["cargo", "run", "--release", "-q", "-p", "small-bench"]
    if threads > 1:
        # Also the N-thread time of every case (`threads_of` lines).
        cmd += ["--", "--threads", str(threads)]
    print(f"# running {' '.join(cmd)} ...", flush=True)
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        print(f"# small-bench failed (exit {p.returncode})")
    lines = p.stdout.splitlines()
    for line in lines:
        if not line.startswith("{"):
            print("#   " + line)
    return lines


def parse_mlperf(lines):
    """small-rs's `mlperf_tiny` table: ({(model, type): median_us}, arch)."""
    rows, table, arch = {}, False, "?"
    for line in lines:
        if line.startswith("small-rs MLPerf Tiny, arch "):
            arch = line.split()[4]
        elif line.startswith("model") and "median us" in line:
            table = True
        elif table and not line.strip():
            break
        elif table:
            f = line.split()
            try:
                rows[(f[0], f[1])] = float(f[3])
            except (IndexError, ValueError):
                pass
    return rows, arch


def run_small_mlperf(models, threads):
    """Runs small-rs's `mlperf_tiny --models DIR --threads N` (the trained
    networks, f32 and i8, checked against the golden data) and prints its
    output; returns parse_mlperf's result."""
    cmd = ["cargo", "run", "--release", "-q", "--example", "mlperf_tiny", "--",
           "--models", models, "--threads", str(threads)]
    print(f"# running {' '.join(cmd)} ...", flush=True)
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    lines = p.stdout.splitlines()
    rows, arch = parse_mlperf(lines)
    if p.returncode != 0 or not rows:
        print(f"# small-rs mlperf_tiny: exit {p.returncode}{'' if rows else ', no table'}")
    for line in lines:
        print("#   " + line)
    return rows, arch


# ----------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------

def cpu_info():
    info = {}
    try:
        out = subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            info[k.strip()] = v.strip()
    except OSError:
        pass
    return info


def versions():
    import importlib.metadata as md
    return ", ".join(f"{p} {md.version(p)}" for p in ("ai-edge-litert", "onnxruntime", "onnx", "numpy"))


def fmt(v, w=9, p=1):
    return f"{v:>{w}.{p}f}" if isinstance(v, float) and v == v else f"{'-':>{w}}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=os.path.join(ROOT, "..", "shared", "models"),
                    help="dir of the MLPerf Tiny .tflite files and goldens (default ../shared/models)")
    ap.add_argument("--threads", type=int, default=None,
                    help="threads of each peer (default 1; --latency: 1 and this, default 2)")
    ap.add_argument("--small-json", metavar="FILE", help="small-bench output (its JSON lines are read)")
    ap.add_argument("--run-small", action="store_true", help="run `cargo run --release -p small-bench` first")
    ap.add_argument("--small-arch", help="take small-rs's numbers of this arch (default: each case's fastest)")
    ap.add_argument("--cases", help="only cases whose name contains one of these comma-separated words")
    ap.add_argument("--warmup", type=float, default=None,
                    help="warm-up seconds (default 0.2; --latency: 0.05)")
    ap.add_argument("--min-time", type=float, default=None,
                    help="timed seconds per case and peer (default 1.0; --latency: 0.5 per row)")
    ap.add_argument("--latency", action="store_true",
                    help="LiteRT's per-call latency p50/p99/max on resnet8, vww_0.25, ds-cnn and ad, "
                         "idle and beside --load busy processes, with 1 thread and --threads")
    ap.add_argument("--load", type=int, default=None,
                    help="--latency: busy processes of the loaded runs (default: os.cpu_count())")
    ap.add_argument("--run-small-latency", action="store_true",
                    help="--latency: first run small-rs's `mlperf_tiny --latency --load N` and print its table")
    ap.add_argument("--json", metavar="FILE", help="also write one JSON line per case and peer here")
    ap.add_argument("--save-models", metavar="DIR", help="write each case's .tflite and .onnx here")
    args = ap.parse_args()
    if args.run_small_latency:
        args.latency = True
    if args.load is not None and not args.latency:
        ap.error("--load applies to --latency")
    if args.load is not None and args.load < 0:
        ap.error("--load: expected a count >= 0")
    if args.threads is not None and args.threads < 1:
        ap.error("--threads: expected a count >= 1")

    cpu = cpu_info()
    print(f"# date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}")
    print(f"# CPU: {cpu.get('Model name', platform.processor())} (family {cpu.get('CPU family', '?')}, "
          f"model {cpu.get('Model', '?')}, stepping {cpu.get('Stepping', '?')}), "
          f"{os.cpu_count()} logical CPUs; {platform.platform()}")
    print(f"# Python {platform.python_version()}; {versions()}")
    if args.latency:
        latency_main(args)
        return
    if args.threads is None:
        args.threads = 1
    if args.warmup is None:
        args.warmup = 0.2
    if args.min_time is None:
        args.min_time = 1.0
    print(f"# threads: {args.threads} (LiteRT num_threads, XNNPACK delegate; ORT intra_op {args.threads}, "
          f"inter_op 1, sequential, ORT_ENABLE_ALL); timing: warm-up {args.warmup} s, "
          f">= {args.min_time} s and >= 10 runs, median and min of the individual calls")

    cases = layer_cases() + model_cases(os.path.abspath(args.models)) + [overhead_case()]
    if args.cases:
        words = [w.strip() for w in args.cases.split(",")]
        cases = [c for c in cases if any(w in c.name for w in words)]

    small, mlperf, mlperf_arch = {}, {}, None
    if args.run_small:
        if any(c.i8_pairs is None for c in cases):
            small.update(parse_small(run_small(args.threads), args.small_arch, args.threads))
        if any(c.i8_pairs is not None for c in cases):
            # small-bench has no int8 case: the int8 rows come from mlperf_tiny
            mlperf, mlperf_arch = run_small_mlperf(os.path.abspath(args.models), args.threads)
            for (name, dtype), us in mlperf.items():
                if dtype == "i8":
                    small[f"{name} i8"] = (us, float("nan"), mlperf_arch)
    if args.small_json:
        with open(args.small_json) as f:
            small.update(parse_small(f, args.small_arch, args.threads))

    rows, checks, failed, i8rows = [], [], 0, []
    for c in cases:
        print(f"# {c.name} ...", end="", flush=True, file=sys.stderr)
        lite = ortr = None
        runnable = c.graph is not None or (c.i8_pairs and c.tflite is not None)
        why_lite = why_ort = None if runnable else c.note
        if runnable:
            try:
                model = c.tflite if c.tflite is not None else to_tflite(c.graph)
                if args.save_models:
                    os.makedirs(args.save_models, exist_ok=True)
                    open(os.path.join(args.save_models, c.name.replace(" ", "_") + ".tflite"), "wb").write(model)
                lite = run_litert(model, c.x, args.threads, args.warmup, args.min_time)
            except Exception as e:  # noqa: BLE001
                why_lite = f"n/a: {type(e).__name__}: {e}"
            if c.onnx_na:
                why_ort = "n/a: " + c.onnx_na
            else:
                try:
                    om = to_onnx(c.graph)
                    if args.save_models:
                        open(os.path.join(args.save_models, c.name.replace(" ", "_") + ".onnx"), "wb").write(om)
                    ortr = run_ort(om, c.x, c.graph.shapes[c.graph.output], args.threads,
                                   args.warmup, args.min_time)
                except Exception as e:  # noqa: BLE001
                    why_ort = f"n/a: {type(e).__name__}: {e}"
        print(" done", file=sys.stderr, flush=True)
        s = small.get(c.name)
        lt = lite[1] if lite else (float("nan"),) * 2
        ot = ortr[1] if ortr else (float("nan"),) * 2
        sm = s[0] if s else float("nan")
        rows.append((c.name, s, lt, ot, lt[0] / sm if s else float("nan"), ot[0] / sm if s else float("nan")))

        # checks
        parts, ok = [], True
        if c.i8_pairs is not None:
            # int8: LiteRT against the golden int8 output, bit for bit. XNNPACK
            # requantizes in float, so a step or so off is a result, not a failure.
            exact = None
            if lite:
                n, dmax = int8_diff(lite[0], c.golden)
                exact = (n, dmax)
                parts.append("XNNPACK bit-exact with 0.output.bin" if n == 0 else
                             f"XNNPACK vs 0.output.bin: {n} of {c.golden.size} elements differ, "
                             f"max |diff| {dmax} step{'s' if dmax > 1 else ''}")
                per, outside = check_i8(c.tflite, c.i8_pairs, args.threads)
                bad = [r for r in per if r[0]]
                parts.append(f"all {len(per)} golden inputs: " + (
                    "bit-exact" if not bad else
                    f"{len(per) - len(bad)} bit-exact, {len(bad)} differ (max |diff| "
                    f"{max(r[1] for r in bad)} steps, argmax same on {sum(r[2] for r in per)} of {len(per)})"))
                parts.append("outside XNNPACK (LiteRT's built-in kernels): " + (", ".join(outside) or "none"))
            if why_lite:
                parts.append(f"LiteRT {why_lite}")
            if why_ort:
                parts.append(f"ORT {why_ort}")
            status = "n/a" if exact is None else "exact" if exact[0] == 0 else "differs"
            checks.append((c.name, status, "; ".join(parts)))
            i8rows.append((c.name, s, lt, exact, parts[1] if lite else "-"))
            continue
        if lite and ortr:
            d = np.abs(lite[0].astype(np.float64) - ortr[0])
            if c.bound is not None:
                bound = np.broadcast_to(np.asarray(c.bound, np.float64), d.shape)
                good = bool(np.all(d <= bound))
                worst = float(np.max(d / np.maximum(bound, 1e-300))) if np.any(bound > 0) else float(d.max())
                parts.append(f"|LiteRT-ORT| max {d.max():.3g} (max |y| {np.abs(lite[0]).max():.3g}; "
                             f"{'exact required' if not np.any(bound > 0) else f'{worst:.2g} of the bound'})")
            else:
                tol = c.gtol if c.gtol is not None else MODEL_RTOL * float(np.abs(lite[0]).max())
                good = bool(d.max() <= tol)
                parts.append(f"|LiteRT-ORT| max {d.max():.3g} (tol {tol:.3g})")
            ok &= good
        lg = c.graph.logits() if (lite and ortr) else None
        if lg is not None:  # softmax hides differences: compare the logits too (untimed)
            yl = run_litert(to_tflite(lg), c.x, args.threads, 0.0, 0.0)[0]
            yo = run_ort(to_onnx(lg), c.x, lg.shapes[lg.output], args.threads, 0.0, 0.0)[0]
            d = np.abs(yl.astype(np.float64) - yo)
            tol = MODEL_RTOL * float(np.abs(yl).max())
            ok &= bool(d.max() <= tol)
            parts.append(f"logits |LiteRT-ORT| max {d.max():.3g} (tol {tol:.3g})")
        if lite and c.golden is not None:
            d = float(np.abs(lite[0].astype(np.float64) - c.golden).max())
            good = d <= c.gtol
            ok &= good
            parts.append(f"|LiteRT-golden| max {d:.3g} (tol {c.gtol:.3g})")
        if ortr and c.golden is not None and c.name != "ds-cnn hybrid":
            d = float(np.abs(ortr[0].astype(np.float64) - c.golden).max())
            parts.append(f"|ORT-golden| max {d:.3g}")
        if why_lite:
            parts.append(f"LiteRT {why_lite}")
        if why_ort:
            parts.append(f"ORT {why_ort}")
        if c.note and c.graph is not None:
            parts.append(c.note)
        if not (lite or ortr):
            status = "n/a"
        else:
            status = "ok" if ok else "MISMATCH"
        failed += status == "MISMATCH"
        checks.append((c.name, status, "; ".join(parts)))

    if args.json:
        with open(args.json, "w") as f:
            exacts = {name: e for name, _, _, e, _ in i8rows}
            for name, s, lt, ot, _, _ in rows:
                for peer, t in (("litert-xnnpack", lt), ("onnxruntime", ot)):
                    if t[0] == t[0]:
                        d = dict(case=name, peer=peer, threads=args.threads,
                                 median_us=round(t[0], 2), min_us=round(t[1], 2))
                        if exacts.get(name):  # int8: LiteRT's output of golden input 0
                            d.update(differing=exacts[name][0], max_diff_steps=exacts[name][1])
                        f.write(json.dumps(d) + "\n")
    print()
    print(f"{'case':<18} {'small-rs us':>11} {'arch':<10} {'LiteRT us':>10} {'(min)':>9} "
          f"{'ORT us':>10} {'(min)':>9} {'LiteRT/small':>12} {'ORT/small':>10}")
    for name, s, lt, ot, r1, r2 in rows:
        print(f"{name:<18} {fmt(s[0] if s else float('nan'), 11)} {(s[2] if s else '-'):<10} "
              f"{fmt(lt[0], 10)} {fmt(lt[1])} {fmt(ot[0], 10)} {fmt(ot[1])} {fmt(r1, 12, 2)} {fmt(r2, 10, 2)}")
    if not small:
        print("(no small-rs numbers: pass --run-small or --small-json FILE)")
    if i8rows:
        print()
        print(f"int8 networks, {args.threads} thread{'s' if args.threads > 1 else ''}: small-rs from "
              + (f"mlperf_tiny (trained weights, arch {mlperf_arch})" if mlperf_arch else "- (pass --run-small)")
              + "; LiteRT XNNPACK on the shipped int8 file (ORT: int8 not run)")
        print(f"{'network':<10} {'small-rs f32':>12} {'small-rs i8':>11} {'LiteRT i8':>10} {'(min)':>9} "
              f"{'LiteRT/small i8':>15}  XNNPACK bit-exact? (input 0; all golden inputs)")
        for name, s, lt, exact, allin in i8rows:
            base = name[:-len(" i8")]
            f32 = mlperf.get((base, "f32"), float("nan"))
            si8 = s[0] if s else float("nan")
            ex = "-" if exact is None else "yes" if exact[0] == 0 else \
                f"no: {exact[0]} el., max {exact[1]} step{'s' if exact[1] > 1 else ''}"
            print(f"{base:<10} {fmt(f32, 12)} {fmt(si8, 11)} {fmt(lt[0], 10)} {fmt(lt[1])} "
                  f"{fmt(lt[0] / si8 if s else float('nan'), 15, 2)}  {ex}{'; ' + allin if exact else ''}")
    print()
    print("same computation (same input and weights; LiteRT NHWC vs ORT NCHW transposed back;"
          " int8 cases: LiteRT vs the golden int8 output, reported, never a failure):")
    for name, status, text in checks:
        print(f"  {name:<18} {status:<8} {text}")
    if failed:
        print(f"{failed} case(s) MISMATCH")
        sys.exit(1)

if __name__ == "__main__":
    main()
