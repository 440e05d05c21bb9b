"""ONNX -> Network (the `onnx` package reads the file). Opsets 11 to 20 of the default domain.

Every node maps onto the op set (graph/ops); initializers and Constant nodes become constants; graph inputs keep
their names, dims (-1 for a symbolic or missing extent) and types; outputs are marked in the file's order. An op
this parser does not know is an UNIMPLEMENTED error naming the op and the node.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..dtypes import get_datatype_by_numpy
from ..graph.network import Network
from ..status import Code, MagicMindError

OPSETS = range(11, 21)
UNARY = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Exp": "exp", "Log": "log", "Sqrt": "sqrt",
         "Neg": "neg", "Abs": "abs", "Reciprocal": "reciprocal", "Floor": "floor", "Ceil": "ceil", "Erf": "erf",
         "Sin": "sin", "Cos": "cos", "Sign": "sign", "Round": "round", "Softplus": "softplus", "Mish": "mish",
         "HardSwish": "hard_swish"}
BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow", "PRelu": "prelu", "Mod": "mod"}
LOGIC = {"Equal": "eq", "Less": "lt", "Greater": "gt", "LessOrEqual": "le", "GreaterOrEqual": "ge", "And": "and",
         "Or": "or", "Xor": "xor"}
REDUCE = {"ReduceMean": "mean", "ReduceSum": "sum", "ReduceMax": "max", "ReduceMin": "min", "ReduceProd": "prod",
          "ReduceL1": "l1", "ReduceL2": "l2", "ReduceSumSquare": "sumsq", "ReduceLogSumExp": "logsumexp"}


def _fail(node, message, code=Code.INVALID_ARGUMENT):
    raise MagicMindError(code, f"onnx node {node.name or '(unnamed)'!r} ({node.op_type}): {message}")


class _Reader:
    def __init__(self, network: Network, model, bound=None):
        self.net = network
        self.tensors: dict = {}
        self.bound = bound or {}
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
        if self.opset not in OPSETS:
            raise MagicMindError(Code.UNIMPLEMENTED, f"onnx: opset {self.opset} is not supported (opsets "
                                                     f"{OPSETS.start}-{OPSETS.stop - 1})")

    # ---- helpers -----------------------------------------------------------------------------------------------

    def const(self, array, name=None):
        tensor = self.net._const(np.array(array, order="C"), base=name or "const")
        return tensor

    def value(self, name, node):
        """The host value of an input that must be constant (axes, pads, ...)."""
        if name == "":
            return None
        info = self.net.infos()[self.get(name, node)]
        if info.value is None:
            _fail(node, f"input {name!r} must be a constant here", Code.UNIMPLEMENTED)
        return np.asarray(info.value)

    def get(self, name, node):
        found = self.tensors.get(name)
        if found is None:
            _fail(node, f"input {name!r} is produced by no node")
        return found

    def add(self, op, inputs, attrs=None, name="", outputs=1):
        return self.net.add_node(op, inputs, attrs or {}, name or op, outputs=outputs)

    def out(self, node, result, index=0):
        tensor = result.get_output(index) if hasattr(result, "get_output") else result
        target = node.output[index]
        if target:
            self.net._names.discard(tensor.get_tensor_name())
            tensor.set_tensor_name(target)
            self.tensors[target] = tensor

    # ---- the graph ---------------------------------------------------------------------------------------------

    def read(self, graph) -> None:
        initializers = {init.name for init in graph.initializer}
        for init in graph.initializer:
            self.tensors[init.name] = self.const(numpy_helper.to_array(init), init.name)
        for item in graph.input:
            if item.name in initializers:
                continue
            kind = item.type.tensor_type
            dtype = get_datatype_by_numpy(helper.tensor_dtype_to_np_dtype(kind.elem_type))
            dims = None
            if kind.HasField("shape"):
                dims = [d.dim_value if d.HasField("dim_value") else -1 for d in kind.shape.dim]
            bound = self.bound.get(item.name)
            if bound is not None:  # a network input made before the graph was read (PyTorch, deferred)
                self.tensors[item.name] = bound
                continue
            tensor = self.net.add_input(dtype, dims)
            tensor.set_tensor_name(item.name)
            self.tensors[item.name] = tensor
        for node in graph.node:
            if node.domain not in ("", "ai.onnx"):
                _fail(node, f"domain {node.domain!r} is not supported", Code.UNIMPLEMENTED)
            handler = getattr(self, f"op_{node.op_type}", None)
            if handler is None:
                if node.op_type in UNARY:
                    handler = self.unary
                elif node.op_type in BINARY:
                    handler = self.binary
                elif node.op_type in LOGIC:
                    handler = self.logic
                elif node.op_type in REDUCE:
                    handler = self.reduce
                else:
                    _fail(node, "this op is not supported by the MagicMind parser", Code.UNIMPLEMENTED)
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in attrs.items()}
            try:
                handler(node, attrs)
            except MagicMindError as error:
                if "onnx node" in error.message:
                    raise
                _fail(node, error.message, error.code)
        for item in graph.output:
            self.net.mark_output(self.get(item.name, graph.node[-1] if graph.node else None))

    def ins(self, node):
        return [self.get(n, node) for n in node.input if n]

    # ---- ops ---------------------------------------------------------------------------------------------------

    def unary(self, node, attrs):
        self.out(node, self.add("unary", self.ins(node)[:1], {"fn": UNARY[node.op_type]}, node.name))

    def binary(self, node, attrs):
        self.out(node, self.add("binary", self.ins(node), {"fn": BINARY[node.op_type]}, node.name))

    def logic(self, node, attrs):
        self.out(node, self.add("logic", self.ins(node), {"fn": LOGIC[node.op_type]}, node.name))

    def op_Not(self, node, attrs):
        self.out(node, self.add("logic", self.ins(node), {"fn": "not"}, node.name))

    def _variadic(self, node, fn):
        inputs = self.ins(node)
        result = inputs[0]
        for other in inputs[1:]:
            result = self.add("binary", [result, other], {"fn": fn}, node.name).get_output(0)
        self.out(node, result if len(inputs) > 1 else self.add("identity", inputs, {}, node.name))

    def op_Max(self, node, attrs):
        self._variadic(node, "max")

    def op_Min(self, node, attrs):
        self._variadic(node, "min")

    def op_Sum(self, node, attrs):
        self._variadic(node, "add")

    def op_LeakyRelu(self, node, attrs):
        self.out(node, self.add("unary", self.ins(node), {"fn": "leaky_relu", "alpha": attrs.get("alpha", 0.01)},
                                node.name))

    def op_Elu(self, node, attrs):
        self.out(node, self.add("unary", self.ins(node), {"fn": "elu", "alpha": attrs.get("alpha", 1.0)}, node.name))

    def op_HardSigmoid(self, node, attrs):
        self.out(node, self.add("unary", self.ins(node), {"fn": "hard_sigmoid", "alpha": attrs.get("alpha", 0.2),
                                                          "beta": attrs.get("beta", 0.5)}, node.name))

    def op_Gelu(self, node, attrs):
        fn = "gelu_tanh" if attrs.get("approximate", "none") == "tanh" else "gelu"
        self.out(node, self.add("unary", self.ins(node), {"fn": fn}, node.name))

    def op_Clip(self, node, attrs):
        low, high = attrs.get("min"), attrs.get("max")
        if len(node.input) > 1 and node.input[1]:
            low = float(self.value(node.input[1], node).reshape(-1)[0])
        if len(node.input) > 2 and node.input[2]:
            high = float(self.value(node.input[2], node).reshape(-1)[0])
        x = self.get(node.input[0], node)
        self.out(node, self.add("unary", [x], {"fn": "clip", "min": low, "max": high}, node.name))

    def op_Identity(self, node, attrs):
        self.out(node, self.add("identity", self.ins(node)[:1], {}, node.name))

    def op_Dropout(self, node, attrs):
        self.out(node, self.add("identity", self.ins(node)[:1], {}, node.name))

    def op_Cast(self, node, attrs):
        dtype = helper.tensor_dtype_to_np_dtype(attrs["to"])
        self.out(node, self.add("cast", self.ins(node), {"dtype": np.dtype(dtype).name}, node.name))

    def op_Where(self, node, attrs):
        self.out(node, self.add("where", self.ins(node), {}, node.name))

    def op_Constant(self, node, attrs):
        if "value" in attrs:
            array = numpy_helper.to_array(attrs["value"])
        elif "value_float" in attrs:
            array = np.array(attrs["value_float"], np.float32)
        elif "value_floats" in attrs:
            array = np.array(attrs["value_floats"], np.float32)
        elif "value_int" in attrs:
            array = np.array(attrs["value_int"], np.int64)
        elif "value_ints" in attrs:
            array = np.array(attrs["value_ints"], np.int64)
        else:
            _fail(node, f"constant attribute {sorted(attrs)} is not supported", Code.UNIMPLEMENTED)
        self.out(node, self.const(array, node.output[0]))

    def op_ConstantOfShape(self, node, attrs):
        value = numpy_helper.to_array(attrs["value"]) if "value" in attrs else np.zeros(1, np.float32)
        self.out(node, self.add("fill", [self.get(node.input[0], node)], {"value": value.reshape(-1)}, node.name))

    def op_Range(self, node, attrs):
        self.out(node, self.add("range", self.ins(node), {}, node.name))

    def op_Shape(self, node, attrs):
        self.out(node, self.add("shape", self.ins(node), {"start": attrs.get("start", 0), "end": attrs.get("end")},
                                node.name))

    def op_Conv(self, node, attrs):
        keep = {k: attrs[k] for k in ("strides", "pads", "dilations", "group", "auto_pad") if k in attrs}
        self.out(node, self.add("conv", self.ins(node), keep, node.name))

    def op_BatchNormalization(self, node, attrs):
        self.out(node, self.add("batch_norm", self.ins(node)[:5], {"epsilon": attrs.get("epsilon", 1e-5)},
                                node.name))

    def _pool(self, node, attrs, mode):
        keep = {k: attrs[k] for k in ("kernel_shape", "strides", "pads", "dilations", "ceil_mode",
                                      "count_include_pad", "auto_pad") if k in attrs}
        keep["mode"] = mode
        self.out(node, self.add("pool", self.ins(node), keep, node.name))

    def op_MaxPool(self, node, attrs):
        if len(node.output) > 1 and node.output[1]:
            _fail(node, "the Indices output is not supported", Code.UNIMPLEMENTED)
        self._pool(node, attrs, "max")

    def op_AveragePool(self, node, attrs):
        self._pool(node, attrs, "avg")

    def op_GlobalAveragePool(self, node, attrs):
        self.out(node, self.add("global_pool", self.ins(node), {"mode": "avg"}, node.name))

    def op_GlobalMaxPool(self, node, attrs):
        self.out(node, self.add("global_pool", self.ins(node), {"mode": "max"}, node.name))

    def op_Gemm(self, node, attrs):
        inputs = self.ins(node)
        a, b = inputs[0], inputs[1]
        alpha, beta = attrs.get("alpha", 1.0), attrs.get("beta", 1.0)
        product = self.add("matmul", [a, b], {"trans_a": bool(attrs.get("transA")), "trans_b": bool(attrs.get("transB"))},
                           node.name).get_output(0)
        if alpha != 1.0:
            product = self.add("unary", [product], {"fn": "scale", "alpha": alpha, "beta": 0.0}, node.name).get_output(0)
        if len(inputs) > 2:
            c = inputs[2]
            if beta != 1.0:
                c = self.add("unary", [c], {"fn": "scale", "alpha": beta, "beta": 0.0}, node.name).get_output(0)
            product = self.add("binary", [product, c], {"fn": "add"}, node.name).get_output(0)
        self.out(node, product)

    def op_MatMul(self, node, attrs):
        self.out(node, self.add("matmul", self.ins(node), {}, node.name))

    def op_Flatten(self, node, attrs):
        self.out(node, self.add("flatten", self.ins(node), {"axis": attrs.get("axis", 1)}, node.name))

    def op_Reshape(self, node, attrs):
        self.out(node, self.add("reshape", self.ins(node), {"allowzero": attrs.get("allowzero", 0)}, node.name))

    def op_Transpose(self, node, attrs):
        keep = {"perm": list(attrs["perm"])} if "perm" in attrs else {}
        self.out(node, self.add("permute", self.ins(node), keep, node.name))

    def op_Concat(self, node, attrs):
        self.out(node, self.add("concat", self.ins(node), {"axis": attrs["axis"]}, node.name))

    def op_Split(self, node, attrs):
        keep = {"axis": attrs.get("axis", 0)}
        if len(node.input) > 1 and node.input[1]:
            keep["split"] = [int(v) for v in self.value(node.input[1], node).reshape(-1)]
        elif "split" in attrs:
            keep["split"] = list(attrs["split"])
        else:
            keep["num_outputs"] = attrs.get("num_outputs", len(node.output))
        result = self.add("split", [self.get(node.input[0], node)], keep, node.name, outputs=len(node.output))
        for i in range(len(node.output)):
            self.out(node, result, i)

    def op_Slice(self, node, attrs):
        self.out(node, self.add("slice", [self.get(n, node) for n in node.input if n], {}, node.name))

    def op_Gather(self, node, attrs):
        self.out(node, self.add("gather", self.ins(node), {"axis": attrs.get("axis", 0)}, node.name))

    def _axes_op(self, node, attrs, op):
        if len(node.input) > 1 and node.input[1]:
            axes = [int(v) for v in self.value(node.input[1], node).reshape(-1)]
        else:
            axes = attrs.get("axes")
        keep = {} if axes is None else {"axes": list(axes)}
        self.out(node, self.add(op, [self.get(node.input[0], node)], keep, node.name))

    def op_Squeeze(self, node, attrs):
        self._axes_op(node, attrs, "squeeze")

    def op_Unsqueeze(self, node, attrs):
        self._axes_op(node, attrs, "unsqueeze")

    def op_Expand(self, node, attrs):
        self.out(node, self.add("expand", self.ins(node), {}, node.name))

    def op_Tile(self, node, attrs):
        self.out(node, self.add("tile", self.ins(node), {}, node.name))

    def op_Softmax(self, node, attrs, log=False):
        x = self.get(node.input[0], node)
        axis = attrs.get("axis", -1 if self.opset >= 13 else 1)
        rank = x.get_dimension().GetDimsNum() if x.has_known_rank() else None
        if self.opset < 13 and rank is not None and axis % rank != rank - 1:
            # opsets < 13: softmax over the flattened trailing axes from `axis`
            shape = self.add("shape", [x], {}, node.name).get_output(0)
            flat = self.add("flatten", [x], {"axis": axis}, node.name).get_output(0)
            soft = self.add("softmax", [flat], {"axis": -1, "log": log}, node.name).get_output(0)
            self.out(node, self.add("reshape", [soft, shape], {}, node.name))
            return
        self.out(node, self.add("softmax", [x], {"axis": axis, "log": log}, node.name))

    def op_LogSoftmax(self, node, attrs):
        self.op_Softmax(node, attrs, log=True)

    def op_LayerNormalization(self, node, attrs):
        if len(node.output) > 1 and any(node.output[1:]):
            _fail(node, "the Mean / InvStdDev outputs are not supported", Code.UNIMPLEMENTED)
        self.out(node, self.add("layer_norm", self.ins(node), {"axis": attrs.get("axis", -1),
                                                               "epsilon": attrs.get("epsilon", 1e-5)}, node.name))

    def reduce(self, node, attrs):
        axes = attrs.get("axes")
        if len(node.input) > 1 and node.input[1]:
            axes = [int(v) for v in self.value(node.input[1], node).reshape(-1)]
        keep = {"fn": REDUCE[node.op_type], "axes": None if axes is None else list(axes),
                "keepdims": attrs.get("keepdims", 1), "noop_with_empty_axes": attrs.get("noop_with_empty_axes", 0)}
        self.out(node, self.add("reduce", [self.get(node.input[0], node)], keep, node.name))

    def _arg(self, node, attrs, fn):
        self.out(node, self.add("arg_reduce", self.ins(node), {"fn": fn, "axis": attrs.get("axis", 0),
                                                               "keepdims": attrs.get("keepdims", 1),
                                                               "select_last_index": attrs.get("select_last_index", 0)},
                                node.name))

    def op_ArgMax(self, node, attrs):
        self._arg(node, attrs, "max")

    def op_ArgMin(self, node, attrs):
        self._arg(node, attrs, "min")

    def op_Pad(self, node, attrs):
        x = self.get(node.input[0], node)
        mode = attrs.get("mode", "constant")
        value = 0.0
        if len(node.input) > 2 and node.input[2]:
            value = float(self.value(node.input[2], node).reshape(-1)[0])
        if len(node.input) > 3 and node.input[3]:
            _fail(node, "the axes input is not supported", Code.UNIMPLEMENTED)
        pads = self.get(node.input[1], node)
        self.out(node, self.add("pad", [x, pads], {"mode": mode, "value": value}, node.name))

    def op_Resize(self, node, attrs):
        x = self.get(node.input[0], node)
        keep = {"mode": attrs.get("mode", "nearest"),
                "coordinate_transformation_mode": attrs.get("coordinate_transformation_mode", "half_pixel"),
                "nearest_mode": attrs.get("nearest_mode", "round_prefer_floor"),
                "cubic_coeff_a": attrs.get("cubic_coeff_a", -0.75), "exclude_outside": attrs.get("exclude_outside", 0)}
        if attrs.get("antialias") or attrs.get("axes") or attrs.get("keep_aspect_ratio_policy", "stretch") != "stretch":
            _fail(node, "antialias, axes and keep_aspect_ratio_policy are not supported", Code.UNIMPLEMENTED)
        if keep["coordinate_transformation_mode"] == "tf_crop_and_resize":
            _fail(node, "tf_crop_and_resize is not supported", Code.UNIMPLEMENTED)
        if len(node.input) > 3 and node.input[3]:
            sizes = self.get(node.input[3], node)
        else:
            scales = self.value(node.input[2], node).astype(np.float32).reshape(-1)
            keep["scales"] = [float(s) for s in scales]
            sizes = self._scaled_sizes(x, scales, node)
        self.out(node, self.add("resize", [x, sizes], keep, node.name))

    def op_Upsample(self, node, attrs):
        x = self.get(node.input[0], node)
        scales = self.value(node.input[1], node).astype(np.float32).reshape(-1)
        keep = {"mode": attrs.get("mode", "nearest"), "coordinate_transformation_mode": "asymmetric",
                "nearest_mode": "floor", "scales": [float(s) for s in scales]}
        self.out(node, self.add("resize", [x, self._scaled_sizes(x, scales, node)], keep, node.name))

    def _scaled_sizes(self, x, scales, node):
        """floor(shape(x) * scales) as an int64 tensor (known on the host once x's shape is)."""
        shape = self.add("shape", [x], {}, node.name).get_output(0)
        as_float = self.add("cast", [shape], {"dtype": "float32"}, node.name).get_output(0)
        scaled = self.add("binary", [as_float, self.const(scales)], {"fn": "mul"}, node.name).get_output(0)
        floored = self.add("unary", [scaled], {"fn": "floor"}, node.name).get_output(0)
        return self.add("cast", [floored], {"dtype": "int64"}, node.name).get_output(0)


def parse(network: Network, path: str, params: dict, bound=None) -> None:
    """Read the ONNX file at `path` into `network` (`bound`: graph input name -> the network input to use)."""
    try:
        model = onnx.load(path)
    except Exception as error:  # noqa: BLE001  (protobuf's errors have no common base)
        raise MagicMindError(Code.INVALID_ARGUMENT, f"onnx: {path!r} is not a readable ONNX model ({error})") from None
    _Reader(network, model, bound).read(model.graph)
