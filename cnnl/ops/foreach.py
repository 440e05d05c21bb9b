"""The multi-tensor ("foreach") ops: one call, one queued command over whole lists of tensors, each tensor computed
by the kernel its single-tensor op runs, so the results are that op applied to each tensor in turn (what torch's
`_foreach_*` ops and the optimizers built on them mean). cnnlForeachBinaryOp (add, sub, mul, div with a tensor
list, one scalar or a scalar list), cnnlForeachUnaryOp_v2 (sqrt, zero), cnnlForeachPointwiseOp (addcmul, addcdiv
with one value or a value list), cnnlForeachLerp (a tensor list of weights or one weight), with their workspace
queries (no workspace is needed).

The lists are Python sequences (C: arrays of tensor_num entries). Every tensor is floating (HALF, BFLOAT16, FLOAT,
DOUBLE) and of the first input's data type; the tensors at one index all have one shape; an output may be its input
(in place). Scalars:
- binary SCALAR / SCALAR_LIST: of `scalar_desc`'s data type (each rounded once to it): the tensors' type, or for add,
  sub and mul their computation type (FLOAT for HALF and BFLOAT16), computed as cnnlTransform_v2 computes x + v and
  x * v; TENSOR_LIST's `alpha` (b scaled by it) is a host number of the computation type, as cnnlOpTensor's;
- pointwise values: host numbers of the computation type, as cnnlAddcmul's alpha;
- lerp SCALAR: one weight of the tensors' data type (Cambricon's torch_mlu passes its computation type; here the
  weight is what the single-tensor cnnlLerp reads from its one-element weight tensor).
What the descriptors were validated to is remembered by their identity (cnnl.validated): an optimizer's every step
passes the same descriptor objects.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum

from .. import checks
from .. import dtypes as D
from .. import enums as E
from .. import kernels
from ..handle import handle_arg
from ..kernels import arithmetic
from ..kernels.foreach import for_each
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from ..validated import ValidatedCalls
from .pointer_scalars import host_scalar

_BINARY_KERNELS = {E.CNNL_FOREACH_ADD: "add", E.CNNL_FOREACH_SUB: "sub", E.CNNL_FOREACH_MUL: "mul",
                   E.CNNL_FOREACH_DIV: "div"}
_UNARY_MODES = (E.CNNL_FOREACH_SQRT, E.CNNL_FOREACH_ZERO)
_POINTWISE_KERNELS = {E.CNNL_FOREACH_ADDCMUL: arithmetic.addcmul, E.CNNL_FOREACH_ADDCDIV: arithmetic.addcdiv}


def _sequence(value, arg: str) -> list:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise ArgumentFault(f"expected a sequence, got {type(value).__name__}", arg)
    return list(value)


class _Lists:
    """The validated tensor lists of one foreach call: `descs[k][i]` is list k's descriptor at index i."""

    __slots__ = ("descs", "dtype", "count", "elements")

    def __init__(self, descs, dtype, count, elements):
        self.descs, self.dtype, self.count, self.elements = descs, dtype, count, elements


def _validate_lists(c_name: str, named_lists) -> _Lists:
    """named_lists: ((descriptors, their C argument name), ...); all equally long, every tensor floating and of the
    first's data type, the tensors at one index of one shape."""
    lists = [[tensor_arg(d, f"{arg}[{i}]") for i, d in enumerate(_sequence(descs, arg))] for descs, arg in named_lists]
    count = len(lists[0])
    for listed, (_, arg) in zip(lists, named_lists):
        if len(listed) != count:
            raise ArgumentFault(f"{len(listed)} descriptors where {named_lists[0][1]} has {count}", arg)
    dtype = lists[0][0].dtype if count else E.CNNL_DTYPE_FLOAT
    for listed, (_, arg) in zip(lists, named_lists):
        for i, desc in enumerate(listed):
            checks.supported_dtype(desc, f"{arg}[{i}]", D.FLOATING, c_name)
            if desc.dtype != dtype:
                raise ArgumentFault(f"data type {D.name(desc.dtype)}, but {named_lists[0][1]}[0] is {D.name(dtype)}",
                                    f"{arg}[{i}]")
            first = lists[0][i]
            if desc.dims != first.dims:
                raise ArgumentFault(f"dims {list(desc.dims)}, but {named_lists[0][1]}[{i}] has {list(first.dims)}",
                                    f"{arg}[{i}]")
    return _Lists(lists, dtype, count, sum(desc.size for desc in lists[0]))


class _Remembered:
    """A ValidatedCalls over variable-length descriptor lists (the key is every list, flattened)."""

    def __init__(self, name: str):
        self.calls = ValidatedCalls(name)

    def lists(self, c_name: str, facts: tuple, named_lists) -> _Lists:
        try:
            flat = tuple(d for descs, _ in named_lists for d in descs)
        except TypeError:  # not sequences: the full checks report it
            return _validate_lists(c_name, named_lists)
        key = (facts, tuple(len(descs) for descs, _ in named_lists), flat)
        found = self.calls.lookup(key, flat)
        if found is None:
            found = _validate_lists(c_name, named_lists)
            self.calls.remember(key, flat, found)
        return found


_validated_binary = _Remembered("cnnlForeachBinaryOp")
_validated_unary = _Remembered("cnnlForeachUnaryOp_v2")
_validated_pointwise = _Remembered("cnnlForeachPointwiseOp")
_validated_lerp = _Remembered("cnnlForeachLerp")


def _pointers(values, count: int, arg: str) -> list:
    pointers = _sequence(values, arg)
    if len(pointers) != count:
        raise ArgumentFault(f"{len(pointers)} pointers for {count} tensors", arg)
    return pointers


def _views(call: OpCall, lists: _Lists, index: int, pointers, arg: str) -> list:
    """Read-only views of list `index`'s tensors at `pointers`."""
    pointers = _pointers(pointers, lists.count, arg)
    return [call.input(d, p, f"{arg}[{i}]") for i, (d, p) in enumerate(zip(lists.descs[index], pointers))]


def _first_and_outputs(call: OpCall, lists: _Lists, pointers, arg: str, out_pointers, out_arg: str) -> tuple:
    """(views of the first list, views of the outputs): an output at its input's address with its input's
    descriptor (in place) is one view, read and written, not two pins of one range."""
    pointers = _pointers(pointers, lists.count, arg)
    out_pointers = _pointers(out_pointers, lists.count, out_arg)
    firsts, outs = [], []
    for i, (d, p, out_d, out_p) in enumerate(zip(lists.descs[0], pointers, lists.descs[-1], out_pointers)):
        if out_p == p and out_d is d and p is not None:
            view = call.output(out_d, out_p, f"{out_arg}[{i}]", read=True)
            firsts.append(view)
        else:
            firsts.append(call.input(d, p, f"{arg}[{i}]"))
            view = call.output(out_d, out_p, f"{out_arg}[{i}]")
        outs.append(view)
    return firsts, outs


def _workspace_query(c_name: str, handle, input_descs) -> int:
    handle_arg(handle)
    _validate_lists(c_name, ((input_descs, "input_desc_array"),))
    return 0


def _scalar_values(op: int, scalar_desc, scalar, count: int, dtype: int, listed: bool) -> list:
    """The binary op's scalars (one per tensor) as 0-d arrays of `scalar_desc`'s data type: the tensors' type, or
    for add, sub and mul their computation type (FLOAT for HALF and BFLOAT16)."""
    desc = tensor_arg(scalar_desc, "scalar_desc")
    allowed = (dtype,) if op == E.CNNL_FOREACH_DIV else (dtype, D.compute_dtype(dtype))
    if desc.dtype not in allowed:
        raise ArgumentFault(f"scalars of data type {D.name(desc.dtype)} for {D.name(dtype)} tensors (the tensors' "
                            f"type{'' if op == E.CNNL_FOREACH_DIV else ', or their computation type'})",
                            "scalar_desc")
    if listed:
        values = _sequence(scalar, "scalar")
        if len(values) != count:
            raise ArgumentFault(f"{len(values)} scalars for {count} tensors", "scalar")
        return [host_scalar(v, f"scalar[{i}]", desc.dtype) for i, v in enumerate(values)]
    return [host_scalar(scalar, "scalar", desc.dtype)] * count


def _scalar_kernel(op: int):
    """kernel(x, value, out) of a binary op with a 0-d scalar: add, sub and mul as cnnlTransform_v2 computes them
    (in the computation type: x + v, x + -v, x * v), div as cnnlDiv_v2 with a one-element operand."""
    if op == E.CNNL_FOREACH_DIV:
        return lambda x, value, out: kernels.binary("div", x, value, out)
    if op == E.CNNL_FOREACH_MUL:
        return lambda x, value, out: arithmetic.transform(x, value[()], -0.0, out)  # (x + -0.0 is x)
    if op == E.CNNL_FOREACH_ADD:
        return lambda x, value, out: arithmetic.transform(x, 1, value[()], out)
    # x - v as x + -v (exact); a NaN v keeps its sign, as the host's x - NaN returns that NaN
    return lambda x, value, out: arithmetic.transform(x, 1, -value[()] if value == value else value[()], out)


# ---- cnnlForeachBinaryOp ----------------------------------------------------------------------------------------

@api("cnnlGetForeachBinaryOpWorkspaceSize")
def getForeachBinaryOpWorkspaceSize(handle, input_desc_array) -> int:
    """cnnlGetForeachBinaryOpWorkspaceSize(handle, tensor_num, input_desc_array[], size_t *size) -> 0."""
    return _workspace_query("cnnlForeachBinaryOp", handle, input_desc_array)


@api("cnnlForeachBinaryOp")
def foreachBinaryOp(handle, op_mode, mode, input1_desc_array, input1_ptr_array, input2_desc_array,
                    input2_ptr_array, scalar_desc, scalar, alpha, workspace, workspace_size, output_desc_array,
                    output_ptr_array) -> None:
    """cnnlForeachBinaryOp(handle, op_mode, mode, tensor_num, input1_desc_array[], input1_ptr_array[],
    input2_desc_array[], input2_ptr_array[], scalar_desc, scalar, alpha, workspace, workspace_size,
    output_desc_array[], output_ptr_array[]): output[i] = input1[i] op b[i], op_mode CNNL_FOREACH_ADD / SUB / MUL /
    DIV; b[i] is alpha * input2[i] (FOREACH_BINARY_TENSOR_LIST; alpha NULL = 1, add and sub only), `scalar`
    (FOREACH_BINARY_SCALAR) or scalar[i] (FOREACH_BINARY_SCALAR_LIST)."""
    with OpCall("cnnlForeachBinaryOp", handle) as call:
        op = as_enum(op_mode, "op_mode", _BINARY_KERNELS, "cnnlForeachOpMode_t")
        mode = as_enum(mode, "mode", E.FOREACH_BINARY_MODES, "cnnlForeachBinaryMode_t")
        if mode == E.FOREACH_BINARY_SCALAR_TENSOR:
            raise ArgumentFault("FOREACH_BINARY_SCALAR_TENSOR is not supported (pass the scalar on the host)", "mode")
        tensors = mode == E.FOREACH_BINARY_TENSOR_LIST
        named = ((input1_desc_array, "input1_desc_array"),) + (
            ((input2_desc_array, "input2_desc_array"),) if tensors else ()) + (
            (output_desc_array, "output_desc_array"),)
        lists = _validated_binary.lists("cnnlForeachBinaryOp", (op, mode), named)
        call.workspace(workspace, workspace_size, 0, "cnnlGetForeachBinaryOpWorkspaceSize")
        name = _BINARY_KERNELS[op]
        scale = 1
        if tensors:
            scale = checks.scalar(alpha, "alpha", 1, lists.dtype)
            if scale != 1 and op not in (E.CNNL_FOREACH_ADD, E.CNNL_FOREACH_SUB):
                raise ArgumentFault(f"alpha {scale} scales the second list of add and sub only", "alpha")
            operands = [_views(call, lists, 1, input2_ptr_array, "input2_ptr_array")]
            if name == "div":
                def kernel(a, b, out):
                    kernels.binary("div", a, b, out)
            else:
                def kernel(a, b, out):
                    kernels.op_tensor(name, a, b, out, 1, scale, 0)
        else:
            operands = [_scalar_values(op, scalar_desc, scalar, lists.count, lists.dtype,
                                       mode == E.FOREACH_BINARY_SCALAR_LIST)]
            kernel = _scalar_kernel(op)
        firsts, outs = _first_and_outputs(call, lists, input1_ptr_array, "input1_ptr_array", output_ptr_array,
                                          "output_ptr_array")
        if lists.count:
            call.submit(lambda: for_each(kernel, firsts, *operands, outs),
                        flops=lists.elements * (1 + (scale != 1)), dtype=lists.dtype)


# ---- cnnlForeachUnaryOp_v2 ---------------------------------------------------------------------------------------

@api("cnnlGetForeachUnaryOpWorkspaceSize")
def getForeachUnaryOpWorkspaceSize(handle, input_desc_array) -> int:
    """cnnlGetForeachUnaryOpWorkspaceSize(handle, tensor_num, input_desc_array[], size_t *size) -> 0."""
    return _workspace_query("cnnlForeachUnaryOp_v2", handle, input_desc_array)


def _zero(x, out):
    out[...] = 0


@api("cnnlForeachUnaryOp_v2")
def foreachUnaryOp_v2(handle, mode, prefer, input_desc_array, input_ptr_array, workspace, workspace_size,
                      output_desc_array, output_ptr_array) -> None:
    """cnnlForeachUnaryOp_v2(handle, mode, prefer, tensor_num, input_desc_array[], input_ptr_array[], workspace,
    workspace_size, output_desc_array[], output_ptr_array[]): output[i] = sqrt(input[i]) (CNNL_FOREACH_SQRT, as
    cnnlSqrt_v2) or 0 (CNNL_FOREACH_ZERO). Every preference computes at high precision."""
    with OpCall("cnnlForeachUnaryOp_v2", handle) as call:
        mode = as_enum(mode, "mode", _UNARY_MODES, "cnnlForeachOpMode_t")
        checks.preference(prefer)
        lists = _validated_unary.lists("cnnlForeachUnaryOp_v2", (mode,), (
            (input_desc_array, "input_desc_array"), (output_desc_array, "output_desc_array")))
        call.workspace(workspace, workspace_size, 0, "cnnlGetForeachUnaryOpWorkspaceSize")
        zero = mode == E.CNNL_FOREACH_ZERO
        if zero:  # the inputs are not read
            inputs = [None] * lists.count
            outs = [call.output(d, p, f"output_ptr_array[{i}]") for i, (d, p) in enumerate(
                zip(lists.descs[1], _pointers(output_ptr_array, lists.count, "output_ptr_array")))]
        else:
            inputs, outs = _first_and_outputs(call, lists, input_ptr_array, "input_ptr_array", output_ptr_array,
                                              "output_ptr_array")
        kernel = _zero if zero else (lambda x, out: kernels.unary("sqrt", x, out))
        if lists.count:
            call.submit(lambda: for_each(kernel, inputs, outs), flops=lists.elements, dtype=lists.dtype)


# ---- cnnlForeachPointwiseOp ---------------------------------------------------------------------------------------

@api("cnnlForeachPointwiseOp")
def foreachPointwiseOp(handle, op_mode, scalar_mode, input_desc_array, input_ptr_array, tensors1_desc_array,
                       tensors1_ptr_array, tensors2_desc_array, tensors2_ptr_array, scalar, output_desc_array,
                       output_ptr_array) -> None:
    """cnnlForeachPointwiseOp(handle, op_mode, scalar_mode, tensor_num, input_desc_array[], input_ptr_array[],
    tensors1_desc_array[], tensors1_ptr_array[], tensors2_desc_array[], tensors2_ptr_array[], scalar,
    output_desc_array[], output_ptr_array[]): output[i] = input[i] + value * tensors1[i] (* or /) tensors2[i]
    (CNNL_FOREACH_ADDCMUL / ADDCDIV, as cnnlAddcmul / cnnlAddcdiv), value `scalar` (FOREACH_POINTWISE_SCALAR) or
    scalar[i] (FOREACH_POINTWISE_SCALAR_LIST)."""
    with OpCall("cnnlForeachPointwiseOp", handle) as call:
        op = as_enum(op_mode, "op_mode", _POINTWISE_KERNELS, "cnnlForeachOpMode_t")
        listed = as_enum(scalar_mode, "scalar_mode", E.FOREACH_POINTWISE_MODES,
                         "cnnlForeachPointWiseMode_t") == E.FOREACH_POINTWISE_SCALAR_LIST
        lists = _validated_pointwise.lists("cnnlForeachPointwiseOp", (op,), (
            (input_desc_array, "input_desc_array"), (tensors1_desc_array, "tensors1_desc_array"),
            (tensors2_desc_array, "tensors2_desc_array"), (output_desc_array, "output_desc_array")))
        values = _sequence(scalar, "scalar") if listed else [scalar] * lists.count
        if len(values) != lists.count:
            raise ArgumentFault(f"{len(values)} scalars for {lists.count} tensors", "scalar")
        values = [checks.scalar(v, f"scalar[{i}]" if listed else "scalar", 1, lists.dtype)
                  for i, v in enumerate(values)]
        firsts = _views(call, lists, 1, tensors1_ptr_array, "tensors1_ptr_array")
        seconds = _views(call, lists, 2, tensors2_ptr_array, "tensors2_ptr_array")
        inputs, outs = _first_and_outputs(call, lists, input_ptr_array, "input_ptr_array", output_ptr_array,
                                          "output_ptr_array")
        kernel = _POINTWISE_KERNELS[op]
        if lists.count:
            call.submit(lambda: for_each(kernel, inputs, firsts, seconds, values, outs), flops=3 * lists.elements,
                        dtype=lists.dtype)


# ---- cnnlForeachLerp ----------------------------------------------------------------------------------------------

@api("cnnlGetForeachLerpExtraInputSize")
def getForeachLerpExtraInputSize(handle, mode, input1_desc_array) -> int:
    """cnnlGetForeachLerpExtraInputSize(handle, mode, tensor_num, input1_desc_array[], size_t *size) -> 0: this
    clone needs no extra input (so cnnlInitForeachLerpExtraInput is never needed)."""
    as_enum(mode, "mode", E.FOREACH_LERP_MODES, "cnnlForeachLerpMode_t")
    return _workspace_query("cnnlForeachLerp", handle, input1_desc_array)


@api("cnnlForeachLerp")
def foreachLerp(handle, mode, input1_desc_array, input1_ptr_array, input2_desc_array, input2_ptr_array,
                input3_desc_array, input3_ptr_array, workspace, workspace_size, output_desc_array,
                output_ptr_array) -> None:
    """cnnlForeachLerp(handle, mode, tensor_num, input1_desc_array[], input1_ptr_array[], input2_desc_array[],
    input2_ptr_array[], input3_desc_array[], input3_ptr_array[], workspace, workspace_size, output_desc_array[],
    output_ptr_array[]): output[i] = lerp(input1[i], input2[i], weight) (as cnnlLerp), the weight input3[i]
    (FOREACH_LERP_TENSOR_LIST) or one host number for every i (FOREACH_LERP_SCALAR: input3_ptr_array is that number
    in Python, in C an array whose first entry points to it; input3_desc_array is not read)."""
    with OpCall("cnnlForeachLerp", handle) as call:
        mode = as_enum(mode, "mode", E.FOREACH_LERP_MODES, "cnnlForeachLerpMode_t")
        if mode == E.FOREACH_LERP_SCALAR_LIST:
            raise ArgumentFault("FOREACH_LERP_SCALAR_LIST is not supported", "mode")
        tensors = mode == E.FOREACH_LERP_TENSOR_LIST
        named = ((input1_desc_array, "input1_desc_array"), (input2_desc_array, "input2_desc_array")) + (
            ((input3_desc_array, "input3_desc_array"),) if tensors else ()) + (
            (output_desc_array, "output_desc_array"),)
        lists = _validated_lerp.lists("cnnlForeachLerp", (mode,), named)
        call.workspace(workspace, workspace_size, 0, "cnnlGetForeachLerpExtraInputSize")
        ends = _views(call, lists, 1, input2_ptr_array, "input2_ptr_array")
        if tensors:
            weights = _views(call, lists, 2, input3_ptr_array, "input3_ptr_array")
        else:
            weights = [host_scalar(input3_ptr_array, "input3_ptr_array", lists.dtype)] * lists.count
        starts, outs = _first_and_outputs(call, lists, input1_ptr_array, "input1_ptr_array", output_ptr_array,
                                          "output_ptr_array")
        if lists.count:
            call.submit(lambda: for_each(arithmetic.lerp, starts, ends, weights, outs), flops=4 * lists.elements,
                        dtype=lists.dtype)
