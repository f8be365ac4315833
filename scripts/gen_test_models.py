"""Writes the small .tflite test models of tests/data/tflite with TensorFlow.

Run through scripts/gen-test-models (which makes the virtualenv); the test
command never runs this. For every model it writes

  NAME.tflite   the converted model (TensorFlow's converter, as users get it)
  NAME.in       INPUTS inputs, raw little-endian f32 (or int8 bytes), NHWC
  NAME.out      LiteRT's outputs for them, the same encoding

and in rejected/ two graphs small-codegen must refuse (the compile errors
of tests/ui/fail/tflite_*.rs): a MUL, and two graph inputs.

One network uses every operator small-codegen maps (every_op, in f32 and
int8); the others are random chains and branches of convolutions,
depthwise convolutions, pools, residual ADDs, folded PADs and branches
joined by CONCATENATION with random shapes, strides and paddings
(random_NN, every other one int8). The seed is fixed: rerunning writes
the same graphs (the weights too, up to TensorFlow's own determinism).
"""

import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402
from ai_edge_litert.interpreter import Interpreter, OpResolverType  # noqa: E402

keras = tf.keras
L = keras.layers
INPUTS = 2
RANDOM = 24


def relu6(x):
    return tf.nn.relu6(x)


def randomize(model, rng):
    """Nonzero biases (Keras starts them at zero) and varied weights."""
    for layer in model.layers:
        ws = layer.get_weights()
        if ws:
            layer.set_weights([rng.normal(0, 0.5, w.shape).astype(np.float32) for w in ws])


def every_op(int8):
    """CONV_2D (plain, grouped, after a folded PAD), DEPTHWISE_CONV_2D,
    both pools, a residual ADD, an ADD of two activated branches, a
    standalone RELU6 on a tensor two operators read, a CONCATENATION of
    three tensors (16 + 5 + 8 channels: a whole block, a partial one at
    an aligned offset, lanes shifted), MEAN + RELU, RESHAPE,
    FULLY_CONNECTED, SOFTMAX. The int8 MEAN keeps its dims (the float
    one does not), so both forms of the operator are covered."""
    x = inp = L.Input((16, 16, 3), batch_size=1)
    x = L.ZeroPadding2D(((0, 1), (0, 1)))(x)  # SAME for 3x3 stride 2 on 16
    x = L.Conv2D(8, 3, strides=2, padding="valid", activation="relu")(x)
    x = L.Conv2D(8, 3, padding="same", groups=2, activation=relu6)(x)
    a = L.DepthwiseConv2D(3, padding="same", activation="relu")(x)
    b = L.Conv2D(8, 1)(a)
    x = L.Add()([b, x])
    r = L.ReLU(max_value=6.0)(x)
    c = L.Conv2D(8, 1, activation="relu")(x)
    x = L.Add()([r, c])
    p = L.Conv2D(16, 1, activation="relu")(x)
    q = L.Conv2D(5, 3, padding="same")(x)
    x = L.Concatenate()([p, q, x])
    x = L.MaxPool2D(2)(x)
    x = L.Conv2D(12, 3, padding="valid")(x)
    x = L.AveragePooling2D(2, strides=1, padding="same")(x)
    if int8:
        x = L.GlobalAveragePooling2D(keepdims=True)(x)
        x = L.ReLU()(x)
        x = L.Flatten()(x)
    else:
        x = L.GlobalAveragePooling2D()(x)
        x = L.ReLU()(x)
    x = L.Dense(10)(x)
    x = L.Softmax()(x)
    return keras.Model(inp, x)


def logistic_head():
    """A binary classifier: a float LOGISTIC after the last layer."""
    x = inp = L.Input((12, 12, 2), batch_size=1)
    x = L.Conv2D(8, 3, strides=2, padding="same", activation="relu")(x)
    x = L.GlobalAveragePooling2D()(x)
    x = L.Dense(1, activation="sigmoid")(x)
    return keras.Model(inp, x)


def logistic_head_int8():
    """An int8 LOGISTIC as the output, after a convolution of 64 channels:
    2 inputs x 6x6x64 outputs reach most of the 256 entries of LiteRT's
    table."""
    x = inp = L.Input((6, 6, 3), batch_size=1)
    x = L.Conv2D(64, 3, padding="same")(x)
    x = L.Activation("sigmoid")(x)
    return keras.Model(inp, x)


def mean_head(keepdims):
    """An int8 MEAN as the output (a 5x7 plane, 32 channels), so that its
    rounding shows in the golden data: LiteRT folds 1 / count into the
    multiplier of its own requantization, unlike AVERAGE_POOL_2D."""
    x = inp = L.Input((5, 7, 3), batch_size=1)
    x = L.Conv2D(32, 3, padding="same")(x)
    x = L.GlobalAveragePooling2D(keepdims=keepdims)(x)
    return keras.Model(inp, x)


def pad_graph():
    """PADs that are not a convolution's SAME padding: folded into a VALID
    convolution (uneven sides) and into a SAME depthwise one (the sum of
    both), and padding steps of their own: before a max pool, read by two
    operators (a depthwise convolution and the residual ADD), and before
    the MEAN, which then averages the zeros too. No head: the logits are
    the output, which `tflite_model!`'s program computes."""
    x = inp = L.Input((10, 9, 4), batch_size=1)
    x = L.ZeroPadding2D(((2, 0), (1, 3)))(x)
    x = L.Conv2D(8, 3, padding="valid", activation="relu")(x)
    x = L.ZeroPadding2D(((1, 1), (0, 2)))(x)
    x = L.MaxPool2D(2)(x)
    x = L.ZeroPadding2D(((0, 1), (1, 0)))(x)
    x = L.DepthwiseConv2D(3, padding="same")(x)
    p = L.ZeroPadding2D(1)(x)
    a = L.DepthwiseConv2D(3, padding="same", activation="relu")(p)
    x = L.Add()([a, p])
    x = L.Conv2D(6, 1)(x)
    x = L.ZeroPadding2D(((3, 0), (0, 2)))(x)
    x = L.GlobalAveragePooling2D()(x)
    x = L.Dense(5)(x)
    return keras.Model(inp, x)


def logistic_mid():
    """LOGISTIC before the last operator (a layer of its own, not the
    head): after a convolution with 13 channels (padding lanes in its
    last block) and before the MEAN."""
    x = inp = L.Input((7, 9, 3), batch_size=1)
    x = L.Conv2D(13, 3, padding="same", activation="sigmoid")(x)
    x = L.DepthwiseConv2D(3, padding="same", activation="relu")(x)
    x = L.Conv2D(6, 1, activation="sigmoid")(x)
    x = L.GlobalAveragePooling2D()(x)
    x = L.Dense(4)(x)
    return keras.Model(inp, x)


def random_graph(rng):
    h, w = (int(v) for v in rng.choice([6, 7, 8, 9, 12, 13], 2))
    c = int(rng.choice([1, 2, 3, 4, 5, 8, 13]))
    x = inp = L.Input((h, w, c), batch_size=1)
    held = [x]
    for _ in range(int(rng.integers(3, 7))):
        hh, ww, cc = x.shape[1], x.shape[2], x.shape[3]
        kinds = ["conv", "dw"]
        # TensorFlow's converter writes an ADD of 1-channel tensors as
        # RESHAPE to 1-D, ADD, RESHAPE back, which small-codegen refuses.
        if cc > 1:
            kinds += ["branches", "relu"]
        if any(t.shape[1:3] == x.shape[1:3] and t.shape[3] > 1 for t in held):
            kinds += ["res"]
        if min(hh, ww) >= 4:
            kinds += ["pool", "padconv"]
        kinds += ["concat"]
        kind = rng.choice(kinds)
        act = rng.choice([None, "relu", relu6])
        if kind == "conv":
            f = int(rng.choice([1, 2, 3, 5]))
            s = int(rng.choice([1, 1, 2]))
            pad = rng.choice(["same", "valid"]) if min(hh, ww) >= f else "same"
            x = L.Conv2D(int(rng.choice([1, 3, 4, 8, 16, 17])), f, strides=s, padding=pad,
                         activation=act)(x)
        elif kind == "dw":
            f = int(rng.choice([3, 5]))
            s = int(rng.choice([1, 2]))
            x = L.DepthwiseConv2D(f, strides=s, padding="same", activation=act)(x)
        elif kind == "pool":
            p = int(rng.choice([2, 3]))
            s = int(rng.choice([1, 2]))
            pool = L.MaxPool2D if rng.random() < 0.5 else L.AveragePooling2D
            x = pool(p, strides=s, padding=rng.choice(["same", "valid"]))(x)
        elif kind == "padconv":
            # TensorFlow's SAME split for a 3x3 filter: stride 1 pads 1 + 1;
            # stride 2 pads 0 + 1 on even sizes, 1 + 1 on odd ones.
            s = int(rng.choice([1, 2]))
            ph = (1, 1) if s == 1 or hh % 2 else (0, 1)
            pw = (1, 1) if s == 1 or ww % 2 else (0, 1)
            x = L.ZeroPadding2D((ph, pw))(x)
            x = L.Conv2D(int(rng.choice([4, 8])), 3, strides=s, padding="valid",
                         activation=act)(x)
        elif kind == "branches":
            # Two activated branches added: an ADD no layer can take.
            a = L.Conv2D(cc, int(rng.choice([1, 3])), padding="same", activation="relu")(x)
            b = L.DepthwiseConv2D(3, padding="same", activation=relu6)(x)
            x = L.Add()([a, b])
        elif kind == "concat":
            # Two or three branches joined along channels, the input
            # itself among them at times: channel counts that are and are
            # not multiples of 16, at offsets that are and are not.
            parts = []
            for _ in range(int(rng.integers(2, 4))):
                branch = rng.choice(["conv", "dw", "input"])
                if branch == "conv":
                    parts.append(L.Conv2D(int(rng.choice([1, 3, 5, 16, 17])),
                                          int(rng.choice([1, 3])), padding="same",
                                          activation=act)(x))
                elif branch == "dw":
                    parts.append(L.DepthwiseConv2D(3, padding="same", activation="relu")(x))
                else:
                    parts.append(x)
            x = L.Concatenate()(parts)
        elif kind == "relu":
            # A RELU on a tensor two operators read: a layer of its own.
            r = L.ReLU(max_value=6.0 if rng.random() < 0.5 else None)(x)
            x = L.Add()([r, L.Conv2D(cc, 1)(x)])
        else:
            # A residual: conv without activation + an earlier tensor of
            # its shape (the last one, or one further back).
            same = [t for t in held if t.shape[1:3] == x.shape[1:3] and t.shape[3] > 1]
            skip = same[int(rng.integers(0, len(same)))]
            y = L.Conv2D(skip.shape[3], 3, padding="same")(x)
            x = L.Add()([y, skip])
            if act is not None:
                x = L.Activation(act)(x)
        held.append(x)
    return keras.Model(inp, x)


def representative(shape, rng):
    def gen():
        for _ in range(32):
            yield [rng.normal(0, 1, shape).astype(np.float32)]
    return gen


def convert(model, int8, rng):
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if int8:
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = representative(model.input.shape, rng)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv.convert()


def write(out_dir, name, model, int8, rng):
    randomize(model, rng)
    data = convert(model, int8, rng)
    with open(os.path.join(out_dir, name + ".tflite"), "wb") as f:
        f.write(data)
    # LiteRT's reference kernels, no delegate: the golden data of
    # ../shared/models is made the same way (XNNPACK's int8 is not exact).
    it = Interpreter(model_content=data, num_threads=1,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    i, o = it.get_input_details()[0], it.get_output_details()[0]
    ins, outs = [], []
    for _ in range(INPUTS):
        if int8:
            x = rng.integers(-128, 128, i["shape"]).astype(np.int8)
        else:
            x = rng.normal(0, 1, i["shape"]).astype(np.float32)
        it.set_tensor(i["index"], x)
        it.invoke()
        ins.append(x)
        outs.append(it.get_tensor(o["index"]).copy())
    for ext, arrays in ((".in", ins), (".out", outs)):
        with open(os.path.join(out_dir, name + ext), "wb") as f:
            for a in arrays:
                f.write(a.astype("<f4" if not int8 else np.int8).tobytes())
    ops = [d["op_name"] for d in it._get_ops_details()]
    shape = lambda d: "x".join(str(int(v)) for v in d["shape"])  # noqa: E731
    print(f"{name}: {'int8' if int8 else 'f32'} {shape(i)} -> {shape(o)}: {' '.join(ops)}")


def rejected(out_dir, rng):
    os.makedirs(os.path.join(out_dir, "rejected"), exist_ok=True)
    x = inp = L.Input((8, 8, 4), batch_size=1)
    a = L.Conv2D(4, 3, padding="same", activation="relu")(x)
    b = L.DepthwiseConv2D(3, padding="same", activation="relu")(x)
    mul = keras.Model(inp, L.Conv2D(8, 1)(L.Multiply()([a, b])))
    p = L.Input((8, 8, 4), batch_size=1)
    q = L.Input((8, 8, 4), batch_size=1)
    two = keras.Model([p, q], L.Conv2D(4, 3, padding="same")(L.Add()([p, q])))
    for name, model in (("mul", mul), ("two_inputs", two)):
        randomize(model, rng)
        with open(os.path.join(out_dir, "rejected", name + ".tflite"), "wb") as f:
            f.write(convert(model, False, rng))
        print(f"rejected/{name}: written")


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(2026)
    tf.random.set_seed(2026)
    write(out_dir, "every_op", every_op(False), False, rng)
    write(out_dir, "every_op_int8", every_op(True), True, rng)
    write(out_dir, "logistic_head", logistic_head(), False, rng)
    for n in range(RANDOM):
        write(out_dir, f"random_{n:02}", random_graph(rng), n % 2 == 1, rng)
    rejected(out_dir, rng)
    # Their own stream, so that adding them changed none of the above.
    rng = np.random.default_rng(2027)
    write(out_dir, "mean_int8", mean_head(False), True, rng)
    write(out_dir, "mean_keepdims_int8", mean_head(True), True, rng)
    write(out_dir, "logistic_head_int8", logistic_head_int8(), True, rng)
    rng = np.random.default_rng(2028)
    write(out_dir, "pad", pad_graph(), False, rng)
    write(out_dir, "pad_int8", pad_graph(), True, rng)
    rng = np.random.default_rng(2029)
    write(out_dir, "logistic_mid", logistic_mid(), False, rng)
    write(out_dir, "logistic_mid_int8", logistic_mid(), True, rng)


if __name__ == "__main__":
    main()
