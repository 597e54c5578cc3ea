"""dtnn models to ONNX, and ONNX models' weights into dtnn (PyDTNN 3.x's onnx2pydtnn).

    import dtnn, dtnn.onnx
    exp = dtnn.Experiment("configs/fashion_mnist_simplecnn.json")
    exp.fit()
    dtnn.onnx.export(exp, "simplecnn.onnx")      # then onnxruntime, or any ONNX consumer
    dtnn.onnx.load_into(other_exp, "net.onnx")   # torch.onnx's torchvision networks, or ours

    python3 -m dtnn.onnx EXP.json OUT.onnx [--weights W.npz|CHECKPOINT]

The graph is the model in evaluation: batchnorm with its running statistics, dropout gone. Its
input "input" is (batch, C, H, W) for an image model (NCHW, whatever layout dtnn trains in: the
weights are PyDTNN's, which are NCHW's, and an fc after a flatten reads (c, h, w) order),
(batch, features), (batch, T) token ids (as values) or (batch, T, D) vectors; its output "output"
is the model's. float32 throughout, ONNX opset 13.
Exported: conv2d (groups, dilation, fused relu), pointwise and depthwise convolutions, fc (per
sample or per position), batchnorm, the activations (relu, relu6, leaky_relu, sigmoid,
log_sigmoid, tanh, gelu), max and average pooling (PyTorch's count_include_pad, as dtnn), adaptive
average pooling to a size that divides the input, flatten, dropout, identity, softmax,
log_softmax (over the last axis), the add and concat blocks (the zoo's CNNs: ResNet, DenseNet,
GoogLeNet, Inception, MobileNet), and the transformer encoder's layers: embedding, sinusoidal or
learned positions, layer_norm, multi_head_attention (self-attention, causal or not) and
sequence_pool (transformer_lm, vit's encoder), with an embedding's padding id masking the keys
and the pooled positions past each sequence's padding (the classifier of fortunes_classify). Not
exported, each an error naming the layer and its place: cross-attention, encoder_decoder,
patch_embedding and the other layers. Needs the onnx package (Debian's python3-onnx); the arrays
come from dtnn (exp.save_weights).
"""
import os
import sys
import tempfile

import numpy as np

__all__ = ["export", "load_into"]

OPSET = 13


def _pair(value):
    return (value, value) if isinstance(value, int) else tuple(value)


def _layer_defaults():
    """{layer type: its parameters' defaults}, the CPU plugins'."""
    from . import plugins
    return {p["name"]: p["parameters"] for p in plugins()
            if p["kind"] == "layer" and p["device"] == "cpu"}


def _expand(entries):
    """A layer list with its repeats ({"repeat": n, "layers": [...]}) written out."""
    out = []
    for e in entries:
        if "repeat" in e and "layers" in e:
            for _ in range(e["repeat"]):
                out.extend(_expand(e["layers"]))
        else:
            out.append(e)
    return out


class _Weights:
    """The model's arrays in PyDTNN's order and layouts: groups by layer id ("3_Conv2D_weights",
    "5_multi_head_attention_weights_qkv"), taken in turn by the layers that have parameters, as
    the model numbers them."""

    def __init__(self, exp):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "w.npz")
            exp.save_weights(path)
            with np.load(path) as z:
                arrays = {k: np.asarray(z[k]) for k in z.files}
        groups = {}
        for key, value in arrays.items():
            ident, suffix = key.split("_", 1)
            groups.setdefault(int(ident), {})[suffix] = value
        self._groups = [groups[k] for k in sorted(groups)]
        self._next = 0

    def take(self, classes, where):
        """The next group's arrays by attribute, when its class is one of classes."""
        if self._next >= len(self._groups):
            raise ValueError(f"{where}: the model has no more arrays (expected {classes[0]})")
        group = self._groups[self._next]
        for cls in classes:
            if all(k.startswith(cls + "_") for k in group):
                self._next += 1
                return {k[len(cls) + 1:]: v.astype(np.float32) for k, v in group.items()}
        raise ValueError(f"{where}: the next arrays are {sorted(group)}, expected a {classes[0]}'s")

    def done(self):
        if self._next != len(self._groups):
            raise ValueError(f"{len(self._groups) - self._next} groups of arrays were not used")


class _Builder:
    def __init__(self, helper, numpy_helper, weights, defaults, int64, float32):
        self.helper, self.numpy_helper, self.int64, self.float32 = helper, numpy_helper, int64, float32
        self.weights, self.defaults = weights, defaults
        self.nodes, self.initializers, self._count = [], [], 0
        # After an embedding with a padding id: its positions before the padding, [N, T] of 1 and 0
        # (the first position always, as dtnn's SequenceLengths::keys), and the additive mask of
        # the keys past it, [N, 1, 1, T] of 0 and -inf, for the attention and pooling after it.
        self.valid, self.key_mask = None, None

    def _name(self, prefix):
        self._count += 1
        return f"{prefix}_{self._count}"

    def const(self, prefix, array):
        name = self._name(prefix)
        self.initializers.append(self.numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op, inputs, prefix, **attributes):
        out = self._name(prefix)
        self.nodes.append(self.helper.make_node(op, inputs, [out], name=out, **attributes))
        return out

    def chain(self, entries, x, shape, where):
        """Nodes for a layer list; returns the output's name and per-sample shape (NCHW)."""
        for i, entry in enumerate(_expand(entries)):
            x, shape = self.layer(entry, x, shape, f"{where}[{i}]")
        return x, shape

    def layer(self, entry, x, shape, where):
        kind = entry["type"]
        p = dict(self.defaults.get(kind, {}))
        p.update({k: v for k, v in entry.items() if k != "type"})
        where = f"{where} ({kind})"
        handler = getattr(self, "_" + kind, None)
        if handler is None:
            raise ValueError(f"{where}: no ONNX export for layer type '{kind}'")
        return handler(p, x, shape, where)

    # Convolutions and fc.
    def _conv(self, x, shape, weights, bias, kernel, stride, padding, dilation, groups, prefix):
        c, h, w = shape
        inputs = [x, self.const(prefix + "_w", weights)]
        if bias is not None:
            inputs.append(self.const(prefix + "_b", bias))
        y = self.node("Conv", inputs, prefix, kernel_shape=list(kernel), strides=list(stride),
                      pads=[padding[0], padding[1], padding[0], padding[1]],
                      dilations=list(dilation), group=groups)
        ho = (h + 2 * padding[0] - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
        wo = (w + 2 * padding[1] - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1
        return y, (weights.shape[0], ho, wo)

    def _conv2d(self, p, x, shape, where):
        if p.get("batchnorm"):
            raise ValueError(f"{where}: a conv2d with a batchnorm folded in is not exported")
        a = self.weights.take(("Conv2D",), where)
        y, shape = self._conv(x, shape, a["weights"], a.get("biases") if p["use_bias"] else None,
                              _pair(p["kernel"]), _pair(p["stride"]), _pair(p["padding"]),
                              _pair(p["dilation"]), p["groups"], "conv")
        if p.get("activation") == "relu":
            y = self.node("Relu", [y], "relu")
        return y, shape

    def _pointwise_conv2d(self, p, x, shape, where):
        a = self.weights.take(("Conv2D",), where)
        return self._conv(x, shape, a["weights"], a.get("biases") if p.get("use_bias", True) else None,
                          (1, 1), (1, 1), (0, 0), (1, 1), 1, "conv")

    def _depthwise_conv2d(self, p, x, shape, where):
        a = self.weights.take(("DepthwiseConv2D",), where)
        w = a["weights"]
        w = w.reshape(w.shape[0], 1, w.shape[-2], w.shape[-1])
        return self._conv(x, shape, w, a.get("biases") if p["use_bias"] else None,
                          _pair(p["kernel"]), _pair(p["stride"]), _pair(p["padding"]),
                          _pair(p["dilation"]), shape[0], "dwconv")

    def _fc(self, p, x, shape, where):
        a = self.weights.take(("FC",), where)
        if not p.get("flatten", True) and len(shape) > 1:  # each position a row: {..., units}
            y = self.node("MatMul", [x, self.const("fc_w", a["weights"])], "fc")
            if p["use_bias"]:
                y = self.node("Add", [y, self.const("fc_b", a["biases"])], "fc_bias")
            return y, tuple(shape[:-1]) + (a["weights"].shape[1],)
        if len(shape) > 1:
            x = self.node("Flatten", [x], "flatten", axis=1)
        inputs = [x, self.const("fc_w", a["weights"])]
        if p["use_bias"]:
            inputs.append(self.const("fc_b", a["biases"]))
            y = self.node("Gemm", inputs, "fc")
        else:
            y = self.node("MatMul", inputs, "fc")
        return y, (a["weights"].shape[1],)

    def _batchnorm(self, p, x, shape, where):
        a = self.weights.take(("BatchNormalization",), where)
        inputs = [x] + [self.const("bn_" + k, a[k])
                        for k in ("gamma", "beta", "running_mean", "running_var")]
        y = self.node("BatchNormalization", inputs, "bn", epsilon=float(p["epsilon"]))
        if p.get("activation") == "relu":
            y = self.node("Relu", [y], "relu")
        return y, shape

    # Element-wise and shape layers.
    def _relu(self, p, x, shape, where):
        return self.node("Relu", [x], "relu"), shape

    def _relu6(self, p, x, shape, where):
        lo, hi = self.const("zero", np.float32(0)), self.const("six", np.float32(6))
        return self.node("Clip", [x, lo, hi], "relu6"), shape

    def _leaky_relu(self, p, x, shape, where):
        return self.node("LeakyRelu", [x], "leaky_relu", alpha=float(p["negative_slope"])), shape

    def _sigmoid(self, p, x, shape, where):
        return self.node("Sigmoid", [x], "sigmoid"), shape

    def _log_sigmoid(self, p, x, shape, where):  # -softplus(-x): no log(0) for large -x
        softplus = self.node("Softplus", [self.node("Neg", [x], "neg")], "softplus")
        return self.node("Neg", [softplus], "log_sigmoid"), shape

    def _tanh(self, p, x, shape, where):
        return self.node("Tanh", [x], "tanh"), shape

    def _gelu(self, p, x, shape, where):
        half, one = self.const("half", np.float32(0.5)), self.const("one", np.float32(1))
        if p.get("approximate", "none") == "tanh":  # x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2
            cube = self.node("Mul", [x, self.node("Mul", [x, x], "sq")], "cube")
            inner = self.node("Add", [x, self.node("Mul", [cube, self.const("c", np.float32(0.044715))],
                                                   "cx")], "inner")
            u = self.node("Mul", [inner, self.const("k", np.float32(np.sqrt(2 / np.pi)))], "u")
            phi2 = self.node("Add", [self.node("Tanh", [u], "tanh"), one], "phi2")
        else:  # x (1 + erf(x / sqrt 2)) / 2
            scaled = self.node("Mul", [x, self.const("r", np.float32(1 / np.sqrt(2)))], "xs")
            phi2 = self.node("Add", [self.node("Erf", [scaled], "erf"), one], "phi2")
        return self.node("Mul", [self.node("Mul", [x, phi2], "xphi"), half], "gelu"), shape

    def _dropout(self, p, x, shape, where):
        return x, shape

    _identity = _dropout

    def _flatten(self, p, x, shape, where):
        return self.node("Flatten", [x], "flatten", axis=1), (int(np.prod(shape)),)

    def _softmax(self, p, x, shape, where):
        if len(shape) != 1:
            raise ValueError(f"{where}: a softmax over more than one axis is not exported")
        return self.node("Softmax", [x], "softmax", axis=1), shape

    def _log_softmax(self, p, x, shape, where):  # over the last axis
        return self.node("LogSoftmax", [x], "log_softmax", axis=-1), shape

    # Sequences: [batch, T, D]; with an embedding's padding id, its masks (self.valid, key_mask).
    def _embedding(self, p, x, shape, where):
        a = self.weights.take(("embedding",), where)
        ids = self.node("Cast", [x], "ids", to=self.int64)
        y = self.node("Gather", [self.const("embedding_w", a["weights"]), ids], "embedding", axis=0)
        if p.get("padding_id", -1) >= 0:  # a sequence ends at its first padding id
            is_pad = self.node("Cast", [self.node("Equal", [ids, self.const(
                "padding_id", np.array(p["padding_id"], np.int64))], "is_pad")], "pad", to=self.float32)
            seen = self.node("CumSum", [is_pad, self.const("positions_axis", np.array(1, np.int64))],
                             "pads_seen")
            before = self.node("Equal", [seen, self.const("zero", np.float32(0))], "before_padding")
            first = np.zeros(shape[0], bool)
            first[0] = True
            valid = self.node("Or", [before, self.const("first_position", first)], "valid")
            self.valid = self.node("Cast", [valid], "valid_positions", to=self.float32)
            mask = self.node("Where", [valid, self.const("keep", np.float32(0)),
                                       self.const("drop", np.float32(-np.inf))], "key_mask")
            self.key_mask = self.node("Unsqueeze", [mask, self.const(
                "mask_axes", np.array([1, 2], np.int64))], "key_mask_heads")
        return y, tuple(shape) + (a["weights"].shape[1],)

    def _positional_encoding(self, p, x, shape, where):
        t, d = shape
        if p["kind"] == "learned":
            table = self.weights.take(("positional_encoding",), where)["weights"]
        else:  # p[t, 2i] = sin(t / 10000^(2i/D)), p[t, 2i+1] = cos(the same)
            pos = np.arange(t, dtype=np.float64)[:, None]
            rate = np.power(10000.0, -(np.arange(d) // 2 * 2) / d)[None, :]
            table = np.where(np.arange(d) % 2 == 0, np.sin(pos * rate), np.cos(pos * rate))
        return self.node("Add", [x, self.const("positions", table.astype(np.float32))],
                         "positional"), shape

    def _layer_norm(self, p, x, shape, where):
        a = self.weights.take(("layer_norm",), where)
        mean = self.node("ReduceMean", [x], "ln_mean", axes=[-1])
        centred = self.node("Sub", [x, mean], "ln_centred")
        var = self.node("ReduceMean", [self.node("Mul", [centred, centred], "ln_sq")], "ln_var",
                        axes=[-1])
        eps = self.const("ln_eps", np.float32(p["epsilon"]))
        std = self.node("Sqrt", [self.node("Add", [var, eps], "ln_var_eps")], "ln_std")
        xhat = self.node("Div", [centred, std], "ln_xhat")
        scaled = self.node("Mul", [xhat, self.const("ln_gamma", a["gamma"])], "ln_scaled")
        return self.node("Add", [scaled, self.const("ln_beta", a["beta"])], "layer_norm"), shape

    def _multi_head_attention(self, p, x, shape, where):
        if p.get("cross"):
            raise ValueError(f"{where}: cross-attention is not exported")
        t, d_model = shape
        a = self.weights.take(("multi_head_attention",), where)
        heads = p["heads"]
        e = a["weights_qkv"].shape[1] // 3
        width = e // heads
        qkv = self.node("MatMul", [x, self.const("w_qkv", a["weights_qkv"])], "qkv")
        if "biases_qkv" in a:
            qkv = self.node("Add", [qkv, self.const("b_qkv", a["biases_qkv"])], "qkv_bias")
        split = self.const("qkv_split", np.array([e, e, e], np.int64))
        q, k, v = (self._name(n) for n in ("q", "k", "v"))
        self.nodes.append(self.helper.make_node("Split", [qkv, split], [q, k, v], axis=-1,
                                                name=self._name("split")))
        heads_shape = self.const("heads_shape", np.array([0, t, heads, width], np.int64))

        def per_head(m, perm):  # [N, T, E] -> [N, H, T, d] (or K^T: [N, H, d, T])
            return self.node("Transpose", [self.node("Reshape", [m, heads_shape], "split_heads")],
                             "heads", perm=perm)
        scores = self.node("MatMul", [per_head(q, [0, 2, 1, 3]), per_head(k, [0, 2, 3, 1])],
                           "scores")
        scores = self.node("Mul", [scores, self.const("scale", np.float32(1 / np.sqrt(width)))],
                           "scaled")
        if p.get("causal"):  # a row sees keys 0..i
            mask = np.triu(np.full((t, t), -np.inf, np.float32), k=1)
            scores = self.node("Add", [scores, self.const("causal", mask)], "masked")
        if self.key_mask is not None:  # and none past its sequence's padding
            scores = self.node("Add", [scores, self.key_mask], "padding_masked")
        attention = self.node("Softmax", [scores], "attention", axis=-1)
        context = self.node("MatMul", [attention, per_head(v, [0, 2, 1, 3])], "context")
        merged = self.node("Reshape", [self.node("Transpose", [context], "merge", perm=[0, 2, 1, 3]),
                                       self.const("merged", np.array([0, t, e], np.int64))],
                           "merged_heads")
        y = self.node("MatMul", [merged, self.const("w_out", a["weights_out"])], "attention_out")
        if "biases_out" in a:
            y = self.node("Add", [y, self.const("b_out", a["biases_out"])], "attention_out_bias")
        return y, (t, a["weights_out"].shape[1])

    def _sequence_pool(self, p, x, shape, where):
        if p["mode"] == "mean" and self.valid is not None:  # over the positions before padding
            weights = self.node("Unsqueeze", [self.valid, self.const(
                "feature_axis", np.array([2], np.int64))], "valid_features")
            axis = self.const("positions_axis", np.array([1], np.int64))
            total = self.node("ReduceSum", [self.node("Mul", [x, weights], "kept"), axis],
                              "pool_sum", keepdims=0)
            count = self.node("ReduceSum", [self.valid, axis], "pool_count", keepdims=1)
            return self.node("Div", [total, count], "pool"), shape[1:]
        if p["mode"] == "mean":
            return self.node("ReduceMean", [x], "pool", axes=[1], keepdims=0), shape[1:]
        first = self.node("Gather", [x, self.const("first", np.array(0, np.int64))], "pool",
                          axis=1)
        return first, shape[1:]

    # Pooling.
    def _pool(self, op, p, x, shape, **extra):
        c, h, w = shape
        pool, stride, padding = _pair(p["pool"]), _pair(p["stride"]), _pair(p["padding"])
        pool = tuple(k if k > 0 else n for k, n in zip(pool, (h, w)))  # 0: the whole dimension
        stride = tuple(s if s > 0 else k for s, k in zip(stride, pool))  # 0: the window
        y = self.node(op, [x], op.lower(), kernel_shape=list(pool), strides=list(stride),
                      pads=[padding[0], padding[1], padding[0], padding[1]], **extra)
        return y, (c, (h + 2 * padding[0] - pool[0]) // stride[0] + 1,
                   (w + 2 * padding[1] - pool[1]) // stride[1] + 1)

    def _maxpool2d(self, p, x, shape, where):
        return self._pool("MaxPool", p, x, shape)

    def _avgpool2d(self, p, x, shape, where):
        return self._pool("AveragePool", p, x, shape, count_include_pad=1)

    def _adaptive_avgpool2d(self, p, x, shape, where):
        c, h, w = shape
        oh, ow = p["output_height"], p["output_width"]
        if (oh, ow) == (1, 1):
            return self.node("GlobalAveragePool", [x], "gap"), (c, 1, 1)
        if h % oh or w % ow:
            raise ValueError(f"{where}: adaptive pooling of {h}x{w} to {oh}x{ow} is exported only "
                             "where the size divides")
        return self.node("AveragePool", [x], "avgpool", kernel_shape=[h // oh, w // ow],
                         strides=[h // oh, w // ow]), (c, oh, ow)

    # Blocks: each path from the block's input (an empty path is the input itself).
    def _paths(self, p, x, shape, where):
        outs = [self.chain(path, x, shape, f"{where}.paths[{i}]") if path else (x, shape)
                for i, path in enumerate(p["paths"])]
        return [o for o, _ in outs], [s for _, s in outs]

    def _add(self, p, x, shape, where):
        outs, shapes = self._paths(p, x, shape, where)
        y = outs[0]
        for o in outs[1:]:
            y = self.node("Add", [y, o], "add")
        return y, shapes[0]

    def _concat(self, p, x, shape, where):
        outs, shapes = self._paths(p, x, shape, where)
        channels = sum(s[0] for s in shapes)
        return self.node("Concat", outs, "concat", axis=1), (channels,) + tuple(shapes[0][1:])


def export(exp, path):
    """Writes exp's model, with its current weights, to path as an ONNX model (checked by
    onnx.checker). Returns path."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    spec = exp.model_spec
    defaults = _layer_defaults()
    shape = tuple(spec["input_shape"])
    if len(shape) == 3:  # per sample in the model's layout; the graph takes NCHW
        shape = shape if spec["layout"] == "NCHW" else (shape[2], shape[0], shape[1])
    elif len(shape) not in (1, 2):
        raise ValueError(f"model '{spec['name']}': inputs of shape {shape} are not exported "
                         "(images, feature vectors, token ids and sequences of vectors are)")
    weights = _Weights(exp)
    b = _Builder(helper, numpy_helper, weights, defaults, TensorProto.INT64, TensorProto.FLOAT)
    y, out_shape = b.chain(spec["layers"], "input", shape, f"model '{spec['name']}': layers")
    weights.done()
    b.nodes.append(helper.make_node("Identity", [y], ["output"], name="output"))
    graph = helper.make_graph(
        b.nodes, spec["name"],
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", *shape])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", *out_shape])],
        b.initializers)
    model = helper.make_model(graph, producer_name="dtnn",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = min(model.ir_version, 8)  # readable by onnxruntime releases of the last years
    onnx.checker.check_model(model)
    onnx.save(model, os.fspath(path))
    return path


def _batchnorm_epsilons(entries, defaults):
    """Each batchnorm's epsilon, in the order the model numbers its layers (a block's paths in
    order)."""
    out = []
    for e in _expand(entries):
        if e["type"] == "batchnorm":
            out.append(float(e.get("epsilon", defaults.get("batchnorm", {}).get("epsilon", 1e-5))))
        for path in e.get("paths", []):
            out.extend(_batchnorm_epsilons(path, defaults))
    return out


def _onnx_layers(model):
    """[(node name, kind, {attribute: array})] of an ONNX graph's layers with weights in graph
    order, in PyTorch's kinds and layouts (dtnn.pytorch pairs them with the model's): Conv (its
    weights, and bias), BatchNormalization, and Gemm or MatMul on a weight matrix (as (units,
    inputs))."""
    from onnx import numpy_helper
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    out = []
    for n in model.graph.node:
        attrs = {a.name: a for a in n.attribute}
        name = n.name or n.output[0]
        if n.op_type == "Conv":
            arrays = {"weights": init[n.input[1]]}
            if len(n.input) > 2 and n.input[2]:
                arrays["biases"] = init[n.input[2]]
            out.append((name, "conv", arrays))
        elif n.op_type == "BatchNormalization":
            gamma, beta, mean, var = (init[i] for i in n.input[1:5])
            out.append((name, "batchnorm", {"gamma": gamma, "beta": beta, "running_mean": mean,
                                            "running_var": var}))
        elif n.op_type in ("Gemm", "MatMul") and n.input[1] in init:
            w = init[n.input[1]]
            trans_b = n.op_type == "Gemm" and attrs.get("transB") is not None and attrs["transB"].i
            arrays = {"weights": w if trans_b else w.T}
            if n.op_type == "Gemm" and len(n.input) > 2 and n.input[2]:
                arrays["biases"] = init[n.input[2]]
            out.append((name, "linear", arrays))
    return out


def _unfold_batchnorms(theirs, ours, epsilons):
    """An exporter folds a batchnorm into the convolution before it (PyTorch's, in evaluation):
    where dtnn's model has a convolution without bias and then a batchnorm, and the file a
    convolution with a bias and no batchnorm after it, the bias becomes a batchnorm that passes
    values through and adds it (gamma sqrt(1 + eps), mean 0, variance 1, beta the bias)."""
    out, j, k, bn = [], 0, 0, 0  # bn: how many of dtnn's batchnorms are behind
    while j < len(theirs) and k < len(ours):
        _, cls, shapes = ours[k]
        name, kind, arrays = theirs[j]
        folded = (cls in ("Conv2D", "DepthwiseConv2D") and kind == "conv"
                  and "biases" not in shapes and "biases" in arrays
                  and k + 1 < len(ours) and ours[k + 1][1] == "BatchNormalization"
                  and not (j + 1 < len(theirs) and theirs[j + 1][1] == "batchnorm"))
        if folded:
            bias, eps = arrays["biases"], epsilons[bn] if bn < len(epsilons) else 1e-5
            out.append((name, "conv", {"weights": arrays["weights"]}))
            out.append((name + " (its folded batchnorm)", "batchnorm",
                        {"gamma": np.full_like(bias, np.sqrt(1 + eps)), "beta": bias,
                         "running_mean": np.zeros_like(bias), "running_var": np.ones_like(bias)}))
            j, k, bn = j + 1, k + 2, bn + 1
            continue
        bn += cls == "BatchNormalization"
        out.append(theirs[j])
        j, k = j + 1, k + 1
    return out + theirs[j:]


def load_into(exp, source):
    """Loads the weights of an ONNX model (a file, or an onnx.ModelProto) of the same architecture
    as exp's model (torchvision's ResNet, VGG, MobileNetV2, DenseNet exported by torch.onnx, the
    zoo's torchvision-shaped models, or dtnn.onnx's own exports): all of them or, on a mismatch,
    none (a ValueError naming the node and the layer). A batchnorm the exporter folded into its
    convolution is taken back apart."""
    import onnx

    from .pytorch import _load_matched, _matched_arrays, _dtnn_layers
    model = source if isinstance(source, onnx.ModelProto) else onnx.load(os.fspath(source))
    epsilons = _batchnorm_epsilons(exp.model_spec["layers"], _layer_defaults())

    def arrays_for(template):
        ours = _dtnn_layers(template)
        theirs = _unfold_batchnorms(_onnx_layers(model), ours, epsilons)
        return _matched_arrays(theirs, ours, source="ONNX")

    _load_matched(exp, arrays_for)


def _main(argv):
    import argparse

    from . import Experiment
    a = argparse.ArgumentParser(prog="python3 -m dtnn.onnx", description=__doc__.split("\n")[0])
    a.add_argument("experiment", help="an experiment file (its model and dataset's shape)")
    a.add_argument("out", help="the .onnx file to write")
    a.add_argument("--weights", help="PyDTNN .npz or dtnn checkpoint to load first")
    args = a.parse_args(argv)
    exp = Experiment(args.experiment)
    if args.weights:
        exp.load_weights(args.weights)
    export(exp, args.out)
    print(f"{args.out}: {exp.model_spec['name']}, {exp.parameter_count} parameters")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
