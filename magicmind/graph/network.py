"""magicmind::INetwork (Python `mm.Network`): inputs, nodes added with the add_i_*_node family, marked outputs."""
from __future__ import annotations

import numbers
from typing import Optional, Sequence

import numpy as np

from ..dims import dims_arg
from ..dtypes import numpy_of
from ..enums import IActivation, IElementwise, ILogic, IPoolingMode, IReduce, IResizeMode, member
from ..status import MagicMindError, Status, invalid
from . import nodes as N
from .infer import infer_all
from .ops import Info
from .tensor import INode, ITensor

_ELEMENTWISE = {"ADD": "add", "SUB": "sub", "MUL": "mul", "DIV": "div", "MAX": "max", "MIN": "min", "POW": "pow",
                "SQUARED_DIFF": "squared_diff"}
_ACTIVATION = {"RELU": "relu", "RELU6": "relu6", "SIGMOID": "sigmoid", "TANH": "tanh", "GELU": "gelu",
               "ELU": "elu", "LEAKYRELU": "leaky_relu", "SILU": "silu", "HARDSIGMOID": "hard_sigmoid",
               "HARDSWISH": "hard_swish", "SOFTPLUS": "softplus", "MISH": "mish", "ABS": "abs"}
_REDUCE = {"ADD": "sum", "MUL": "prod", "MAX": "max", "MIN": "min", "MEAN": "mean", "AND": "and", "OR": "or",
           "NORM1": "l1", "NORM2": "l2", "SUMSQ": "sumsq"}


class Network:
    """mm.Network(): an empty network; parsers fill it, or nodes are added one by one."""

    def __init__(self):
        self._inputs: list[ITensor] = []
        self._outputs: list[ITensor] = []
        self.nodes: list[INode] = []
        self._infos: Optional[dict] = None
        self._names: set = set()

    # ---- bookkeeping -------------------------------------------------------------------------------------------

    def changed(self) -> None:
        self._infos = None

    def _unique(self, base: str) -> str:
        name, n = base, 1
        while name in self._names:
            name, n = f"{base}_{n}", n + 1
        self._names.add(name)
        return name

    def input_info(self, tensor: ITensor) -> Info:
        dims = tensor._dims
        return Info(None if dims is None else dims.as_tuple(), numpy_of(tensor._dtype))

    def node_records(self) -> list:
        """(op, attrs, input tensors, output tensors, name) of every node, in order."""
        return [(n.op, n.attrs, n.inputs, n.outputs, n.get_node_name()) for n in self.nodes]

    def defer(self, inputs, complete, reason: str) -> None:
        """Read the rest of the graph (`complete()`) once every one of `inputs` has dims (a parser that needs the
        inputs' ranks: PyTorch); until then building says `reason`."""
        self._deferred = (list(inputs), complete, reason)

    def complete_deferred(self) -> None:
        """Run the deferred reading when its inputs all have dims (MagicMindError when it fails)."""
        deferred = getattr(self, "_deferred", None)
        if deferred is None or any(t._dims is None for t in deferred[0]):
            return
        self._deferred = None
        try:
            deferred[1]()
        except MagicMindError:
            self._deferred = deferred
            raise

    def pending_reason(self):
        """Why the network is not complete yet (a deferred reading), or None."""
        deferred = getattr(self, "_deferred", None)
        return deferred[2] if deferred is not None else None

    def infos(self) -> dict:
        """Info of every tensor for the inputs' current dims (cached until something changes)."""
        if self._infos is None:
            infos = {t: self.input_info(t) for t in self._inputs}
            self._infos = infer_all(self.node_records(), infos)
        return self._infos

    def _tensor(self, value, arg: str) -> ITensor:
        if not isinstance(value, ITensor) or value._network is not self:
            raise invalid(f"{arg}: {value!r} is not a tensor of this network")
        return value

    def _add(self, op: str, inputs: Sequence, attrs: dict, base: str, cls=INode, outputs: int = 1,
             args: Sequence[str] = ()) -> INode:
        tensors = [self._tensor(t, args[i] if i < len(args) else f"input {i}") for i, t in enumerate(inputs)]
        node = cls(self, op, tensors, attrs, self._unique(base), outputs)
        self.nodes.append(node)
        self.changed()
        try:
            self.infos()
        except MagicMindError:
            self.nodes.pop()
            self.changed()
            raise
        for t in node.outputs:
            self._names.add(t.get_tensor_name())
        return node

    def _const(self, value, dtype=None, base="const") -> ITensor:
        array = np.asarray(value, dtype=dtype)
        return self._add("const", [], {"value": array}, base).get_output(0)

    def _value_tensor(self, value, arg: str, dtype=np.int64) -> ITensor:
        """A tensor argument given as an ITensor, or as a list/array that becomes a const."""
        if isinstance(value, ITensor):
            return self._tensor(value, arg)
        try:
            return self._const(np.asarray(value, dtype=dtype), base=arg)
        except (TypeError, ValueError):
            raise invalid(f"{arg}: {value!r} is neither a tensor nor a list of numbers") from None

    # ---- inputs and outputs ------------------------------------------------------------------------------------

    def add_input(self, data_type, dims=None) -> ITensor:
        """INetwork::AddInput(type[, dims]): no dims = shape unknown until run time."""
        numpy_of(data_type, "add_input data_type")
        tensor = ITensor(self, self._unique(f"input{len(self._inputs)}"))
        tensor._dtype = data_type
        tensor._dims = None if dims is None else dims_arg(dims, "add_input dims")
        self._inputs.append(tensor)
        self.changed()
        return tensor

    def get_input_count(self) -> int:
        """INetwork::GetInputCount()."""
        return len(self._inputs)

    def get_input(self, index: int) -> ITensor:
        """INetwork::GetInput(i)."""
        if isinstance(index, bool) or not isinstance(index, numbers.Integral) or not 0 <= index < len(self._inputs):
            raise invalid(f"get_input: index {index!r} is out of range for {len(self._inputs)} inputs")
        return self._inputs[int(index)]

    def get_inputs(self) -> list:
        return list(self._inputs)

    def mark_output(self, tensor) -> Status:
        """INetwork::MarkOutput(tensor)."""
        if not isinstance(tensor, ITensor) or tensor._network is not self:
            return Status(3, f"mark_output: {tensor!r} is not a tensor of this network")
        if tensor in self._outputs:
            return Status(6, f"mark_output: {tensor.get_tensor_name()!r} is already an output")
        self._outputs.append(tensor)
        return Status()

    def unmark_output(self, tensor) -> Status:
        """INetwork::UnmarkOutput(tensor): the outputs after it move up one place."""
        if not isinstance(tensor, ITensor) or tensor not in self._outputs:
            return Status(3, f"unmark_output: {tensor!r} is not an output of this network")
        self._outputs.remove(tensor)
        return Status()

    def get_output_count(self) -> int:
        """INetwork::GetOutputCount()."""
        return len(self._outputs)

    def get_output(self, index: int) -> ITensor:
        """INetwork::GetOutput(i)."""
        if isinstance(index, bool) or not isinstance(index, numbers.Integral) or not 0 <= index < len(self._outputs):
            raise invalid(f"get_output: index {index!r} is out of range for {len(self._outputs)} outputs")
        return self._outputs[int(index)]

    def get_outputs(self) -> list:
        return list(self._outputs)

    def find_tensor_by_name(self, name: str) -> Optional[ITensor]:
        """The tensor of that name (None when there is none)."""
        for t in self._inputs:
            if t.get_tensor_name() == name:
                return t
        for node in self.nodes:
            for t in node.outputs:
                if t.get_tensor_name() == name:
                    return t
        return None

    def get_node_count(self) -> int:
        return len(self.nodes)

    # ---- nodes -------------------------------------------------------------------------------------------------

    def add_i_const_node(self, dtype=None, dimensions=None, value=None, **kwargs) -> INode:
        """INetwork::AddIConstNode(type, dims, value): value a numpy array or a list, dims its shape."""
        dtype = kwargs.pop("data_type", dtype)
        if kwargs:
            raise invalid(f"add_i_const_node: unknown arguments {sorted(kwargs)}")
        np_type = numpy_of(dtype, "add_i_const_node dtype")
        dims = dims_arg(dimensions, "add_i_const_node dimensions")
        if dims.HasUnknownDim():
            raise invalid(f"add_i_const_node: dimensions {dims.GetDims()} hold -1; a constant's shape is fixed")
        try:
            array = np.asarray(value)
        except Exception:
            raise invalid(f"add_i_const_node: value {value!r:.60} is not an array") from None
        if array.dtype == object:
            raise invalid("add_i_const_node: value is not a numeric array")
        if array.size != dims.GetElementCount():
            raise invalid(f"add_i_const_node: value holds {array.size} elements; dimensions {dims.GetDims()} "
                          f"need {dims.GetElementCount()}")
        return self._add("const", [], {"value": np.array(array, dtype=np_type).reshape(dims.as_tuple())}, "const")

    def add_i_elementwise_node(self, a, b, op) -> INode:
        """INetwork::AddIElementwiseNode(a, b, IElementwise)."""
        fn = _ELEMENTWISE[member(op, IElementwise, "add_i_elementwise_node op").name]
        return self._add("binary", [a, b], {"fn": fn}, fn, args=("a", "b"))

    def add_i_activation_node(self, x, activation) -> INode:
        """INetwork::AddIActivationNode(x, IActivation)."""
        fn = _ACTIVATION[member(activation, IActivation, "add_i_activation_node activation").name]
        attrs = {"fn": fn}
        if fn in ("elu", "leaky_relu"):
            attrs["alpha"] = 1.0 if fn == "elu" else 0.01
        if fn == "hard_sigmoid":
            attrs.update(alpha=1 / 6, beta=0.5)
        return self._add("unary", [x], attrs, fn, cls=_ActivationNode, args=("x",))

    def add_i_unary_node(self, x, fn: str) -> INode:
        """A unary function by name (exp, log, sqrt, rsqrt, neg, abs, reciprocal, erf, floor, ceil, ...)."""
        return self._add("unary", [x], {"fn": str(fn)}, str(fn), args=("x",))

    def add_i_logic_node(self, a, b=None, op=None) -> INode:
        """INetwork::AddILogicNode(a, b, ILogic) -> BOOL (NOT takes one input)."""
        if op is None and isinstance(b, ILogic):
            a, b, op = a, None, b
        fn = member(op, ILogic, "add_i_logic_node op").name.lower()
        inputs = [a] if fn == "not" else [a, b]
        return self._add("logic", inputs, {"fn": fn}, f"logic_{fn}", args=("a", "b"))

    def add_i_cast_node(self, x, data_type) -> INode:
        """INetwork::AddICastNode(x, DataType)."""
        target = numpy_of(data_type, "add_i_cast_node data_type")
        return self._add("cast", [x], {"dtype": target.name}, "cast", args=("x",))

    def add_i_permute_node(self, x, perm) -> INode:
        """INetwork::AddIPermuteNode(x, perm_tensor)."""
        return self._add("permute", [x, self._value_tensor(perm, "perm")], {}, "permute", args=("x", "perm"))

    def add_i_reshape_node(self, x, shape) -> INode:
        """INetwork::AddIReshapeNode(x, shape_tensor)."""
        return self._add("reshape", [x, self._value_tensor(shape, "shape")], {}, "reshape", args=("x", "shape"))

    def add_i_unsqueeze_node(self, x, axes) -> INode:
        """INetwork::AddIUnsqueezeNode(x, axes)."""
        return self._add("unsqueeze", [x, self._value_tensor(axes, "axes")], {}, "unsqueeze", args=("x", "axes"))

    def add_i_squeeze_node(self, x, axes) -> INode:
        """INetwork::AddISqueezeNode(x, axes)."""
        return self._add("squeeze", [x, self._value_tensor(axes, "axes")], {}, "squeeze", args=("x", "axes"))

    def add_i_range_node(self, start, limit, delta) -> INode:
        """INetwork::AddIRangeNode(start, limit, delta): 1-element tensors."""
        return self._add("range", [start, limit, delta], {}, "range", args=("start", "limit", "delta"))

    def add_i_fill_node(self, shape, value) -> INode:
        """INetwork::AddIFillNode(shape_tensor, scalar_value_tensor): the shape may come from data."""
        return self._add("fill", [shape, value], {}, "fill", args=("shape", "value"))

    def add_i_reduce_node(self, x, axes, reduce, keep_dims=False) -> INode:
        """INetwork::AddIReduceNode(x, axes, IReduce, keep_dims)."""
        fn = _REDUCE[member(reduce, IReduce, "add_i_reduce_node reduce").name]
        if isinstance(axes, ITensor):
            value = self.infos()[self._tensor(axes, "axes")].value
            if value is None:
                raise invalid("add_i_reduce_node: axes must be a constant tensor")
            axes = [int(v) for v in np.asarray(value).reshape(-1)]
        axes = [int(a) for a in axes]
        return self._add("reduce", [x], {"fn": fn, "axes": axes, "keepdims": int(bool(keep_dims))}, f"reduce_{fn}",
                         args=("x",))

    def add_i_slice_node(self, x, begin, end, axes=None, steps=None) -> INode:
        """INetwork::AddISliceNode(x, begin, end[, axes[, steps]]): the bounds may be tensors computed from data
        (a data-dependent output shape)."""
        inputs = [x, self._value_tensor(begin, "begin"), self._value_tensor(end, "end")]
        if axes is not None or steps is not None:
            count = self.infos()[inputs[1]].shape
            n = count[0] if count and count[0] >= 0 else 1
            inputs.append(self._value_tensor(axes if axes is not None else list(range(n)), "axes"))
        if steps is not None:
            inputs.append(self._value_tensor(steps, "steps"))
        return self._add("slice", inputs, {}, "slice", args=("x", "begin", "end", "axes", "steps"))

    def add_i_gather_node(self, x, indices, axis=0) -> INode:
        """INetwork::AddIGatherNode(x, indices, axis)."""
        return self._add("gather", [x, self._value_tensor(indices, "indices")], {"axis": int(axis)}, "gather",
                         args=("x", "indices"))

    def add_i_concat_node(self, tensors, axis) -> INode:
        """INetwork::AddIConcatNode([tensors], axis)."""
        if not isinstance(tensors, (list, tuple)) or not tensors:
            raise invalid("add_i_concat_node: tensors must be a non-empty list")
        return self._add("concat", list(tensors), {"axis": int(axis)}, "concat")

    def add_i_split_node(self, x, axis, sizes) -> INode:
        """INetwork::AddISplitNode(x, axis, sizes): one output per size."""
        sizes = [int(s) for s in sizes]
        return self._add("split", [x], {"axis": int(axis), "split": sizes}, "split", outputs=len(sizes),
                         args=("x",))

    def add_i_where_node(self, condition, x, y) -> INode:
        """INetwork::AddIWhereNode(condition, x, y)."""
        return self._add("where", [condition, x, y], {}, "where", args=("condition", "x", "y"))

    def add_i_matmul_node(self, a, b, bias=None) -> INode:
        """INetwork::AddIMatMulNode(a, b[, bias]); set_transpose_a / set_transpose_b."""
        inputs = [a, b] + ([bias] if bias is not None else [])
        return self._add("matmul", inputs, {}, "matmul", cls=N.IMatMulNode, args=("a", "b", "bias"))

    def add_i_inner_product_node(self, x, weight, bias=None) -> INode:
        """INetwork::AddIInnerProductNode(x, weight[, bias]): x @ weight^T + bias (weight [out, in])."""
        inputs = [x, weight] + ([bias] if bias is not None else [])
        return self._add("matmul", inputs, {"trans_b": True}, "inner_product", args=("x", "weight", "bias"))

    def add_i_conv_node(self, x, weight, bias=None) -> INode:
        """INetwork::AddIConvNode(x, weight[, bias]) (NCHW, weight [Co, C/g, Kh, Kw]); set_stride, set_pad,
        set_dilation, set_padding_mode, set_group."""
        inputs = [x, weight] + ([bias] if bias is not None else [])
        return self._add("conv", inputs, {}, "conv", cls=N.IConvNode, args=("x", "weight", "bias"))

    def add_i_pool2d_node(self, x, mode, kernel=(2, 2)) -> INode:
        """INetwork::AddIPool2DNode(x, IPoolingMode): set_kernel, set_stride, set_pad, set_ceil_mode."""
        mode = member(mode, IPoolingMode, "add_i_pool2d_node mode")
        attrs = {"mode": "max" if mode is IPoolingMode.MAX else "avg", "kernel_shape": tuple(kernel),
                 "count_include_pad": int(mode is IPoolingMode.AVERAGE_COUNT_INCLUDE_PADDING)}
        return self._add("pool", [x], attrs, "pool", cls=N.IPoolNode, args=("x",))

    def add_i_softmax_node(self, x, axis=-1) -> INode:
        """INetwork::AddISoftmaxNode(x, axis)."""
        return self._add("softmax", [x], {"axis": int(axis)}, "softmax", args=("x",))

    def add_i_layer_norm_node(self, x, gamma=None, beta=None, axis=-1) -> INode:
        """INetwork::AddILayerNormNode(x, gamma, beta): set_epsilon, set_axis."""
        inputs = [x] + [t for t in (gamma, beta) if t is not None]
        return self._add("layer_norm", inputs, {"axis": int(axis), "epsilon": 1e-5}, "layer_norm",
                         cls=N.IEpsilonNode, args=("x", "gamma", "beta"))

    add_i_layernorm_node = add_i_layer_norm_node

    def add_i_fused_batch_norm_node(self, x, mean, var, scale, offset) -> INode:
        """INetwork::AddIFusedBatchNormNode(x, mean, var, scale, offset): set_epsilon."""
        return self._add("batch_norm", [x, scale, offset, mean, var], {"epsilon": 1e-5}, "batch_norm",
                         cls=N.IEpsilonNode, args=("x", "scale", "offset", "mean", "var"))

    def add_i_pad_node(self, x, pads, value=0.0) -> INode:
        """INetwork::AddIPadNode(x, pads, value): pads befores then afters per axis."""
        return self._add("pad", [x, self._value_tensor(pads, "pads")], {"value": float(value)}, "pad",
                         args=("x", "pads"))

    def add_i_resize_node(self, x, sizes, mode=IResizeMode.NEAREST) -> INode:
        """INetwork::AddIResizeNode(x, sizes[, IResizeMode]): sizes gives every axis."""
        kind = member(mode, IResizeMode, "add_i_resize_node mode").name.lower()
        attrs = {"mode": kind, "coordinate_transformation_mode": "asymmetric" if kind == "nearest" else "half_pixel",
                 "nearest_mode": "floor"}
        return self._add("resize", [x, self._value_tensor(sizes, "sizes")], attrs, "resize", args=("x", "sizes"))

    def add_i_shape_node(self, x) -> INode:
        """INetwork::AddIShapeNode(x) -> INT64 extents."""
        return self._add("shape", [x], {}, "shape", args=("x",))

    def add_i_detection_output_node(self, tensors, anchors) -> INode:
        """INetwork::AddIDetectionOutputNode([heads], anchors): YOLO decoding + NMS; configure with the setters
        (set_algo, set_num_class, set_num_anchor, set_num_box_limit, set_image_shape, thresholds, ...)."""
        if not isinstance(tensors, (list, tuple)) or not tensors:
            raise invalid("add_i_detection_output_node: tensors must be a non-empty list of heads")
        attrs = {"algo": "YOLOV5", "num_class": 80, "num_anchor": 3, "num_box_limit": 1024,
                 "confidence_thresh": 0.25, "nms_thresh": 0.45, "image_shape": (640, 640), "scale": 1.0}
        return self._add("detection_output", list(tensors) + [anchors], attrs, "detection_output",
                         cls=N.IDetectionOutputNode, outputs=2)

    def add_node(self, op: str, inputs: Sequence, attrs: Optional[dict] = None, name: Optional[str] = None,
                 outputs: int = 1) -> INode:
        """A node of any op of the op set by its name (what the parsers use)."""
        return self._add(op, list(inputs), dict(attrs or {}), name or op, outputs=outputs)

    def __repr__(self) -> str:
        return f"<Network: {len(self._inputs)} inputs, {len(self.nodes)} nodes, {len(self._outputs)} outputs>"


class _ActivationNode(INode):
    """IActivationNode: set_alpha / set_beta for the functions that take them (elu, leaky relu, hard sigmoid)."""

    @N._setter
    def set_alpha(self, alpha):
        return {"alpha": N._number(alpha, "set_alpha")}

    @N._setter
    def set_beta(self, beta):
        return {"beta": N._number(beta, "set_beta")}

