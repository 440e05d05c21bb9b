"""Reductions: the reduce descriptor (cnnlSetReduceDescriptor / _v2), cnnlGetReduceOpWorkspaceSize and cnnlReduce
(ADD, AVG, MUL, MAX, MIN, NORM1, NORM2 over any axes; MAX/MIN with indices, which is also argmax/argmin).

The output keeps the reduced axes with extent 1; an output descriptor with them removed is accepted too. Indices
are the position of the first maximum/minimum counted in row-major order over the reduced axes, written as
unsigned 32-bit (CNNL_32BIT_INDICES) or 16-bit (CNNL_16BIT_INDICES) values into the dense `indices` buffer.
out = alpha * reduction + beta * out (alpha/beta NULL = 1/0).
"""
from __future__ import annotations

import numpy as np

from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_enum, as_int, as_number, as_size

from .. import checks
from .. import dtypes as D
from .. import enums as E
from .. import kernels
from .. import workspace as W
from ..descriptors import Descriptor, lifecycle, live, ready
from ..handle import handle_arg
from ..opcall import OpCall
from ..status import api
from ..tensor import MAX_DIMS, TensorDescriptor, dense_strides, tensor_arg

_KERNEL_OPS = {E.CNNL_REDUCE_ADD: "sum", E.CNNL_REDUCE_AVG: "mean", E.CNNL_REDUCE_MUL: "prod",
               E.CNNL_REDUCE_MAX: "max", E.CNNL_REDUCE_MIN: "min", E.CNNL_REDUCE_NORM1: "norm1",
               E.CNNL_REDUCE_NORM2: "norm2"}
_INDEX_DTYPES = {E.CNNL_32BIT_INDICES: np.dtype(np.uint32), E.CNNL_16BIT_INDICES: np.dtype(np.uint16)}
_INDEX_MODES = (E.CNNL_REDUCE_NO_INDICES, E.CNNL_REDUCE_FLATTENED_INDICES, E.CNNL_REDUCE_ONLY_INDICES)


class ReduceDescriptor(Descriptor):
    """cnnlReduceDescriptor_t."""

    c_type = "cnnlReduceDescriptor_t"
    setter = "cnnlSetReduceDescriptor"

    def __init__(self):
        super().__init__()
        self.axis: tuple[int, ...] = ()
        self.op = E.CNNL_REDUCE_ADD
        self.compute_dtype = E.CNNL_DTYPE_INVALID
        self.nan = E.CNNL_NOT_PROPAGATE_NAN
        self.indices = E.CNNL_REDUCE_NO_INDICES
        self.indices_type = E.CNNL_32BIT_INDICES
        self.p = 0.0


createReduceDescriptor, destroyReduceDescriptor = lifecycle(
    ReduceDescriptor, "cnnlCreateReduceDescriptor", "cnnlDestroyReduceDescriptor")


def _set(desc, axis, reduce_op, tensor_type, nan, indices, indices_type, p) -> None:
    target = live(desc, ReduceDescriptor, "reduce_desc")
    if isinstance(axis, (str, bytes)) or not hasattr(axis, "__len__") or not 1 <= len(axis) <= MAX_DIMS:
        raise ArgumentFault(f"expected 1 to {MAX_DIMS} axes", "axis")
    values = dict(
        axis=tuple(as_int(a, f"axis[{i}]") for i, a in enumerate(axis)),
        op=as_enum(reduce_op, "reduce_op", E.REDUCE_OPS, "cnnlReduceOp_t"),
        compute_dtype=as_enum(tensor_type, "tensor_type", D.ALL, "cnnlDataType_t"),
        nan=as_enum(nan, "nan_propagation", E.NAN_PROPAGATIONS, "cnnlNanPropagation_t"),
        indices=as_enum(indices, "reduce_indices", _INDEX_MODES, "cnnlReduceIndices_t"),
        indices_type=as_enum(indices_type, "indices_type", _INDEX_DTYPES, "cnnlIndicesType_t"),
        p=float(as_number(p, "p")))
    indexed_ops = (E.CNNL_REDUCE_MAX_LAST_INDEX, E.CNNL_REDUCE_MIN_LAST_INDEX)
    if values["indices"] != E.CNNL_REDUCE_NO_INDICES and values["op"] in indexed_ops:
        # valid in CNNL (last-occurrence indices), not computed here: NOT_SUPPORTED, as the op itself at the call
        raise NotSupportedFault(f"reduce op {values['op']} (last-index MAX/MIN) is not supported; CNNL_REDUCE_MAX "
                                f"and CNNL_REDUCE_MIN give first-occurrence indices", "reduce_op")
    if values["indices"] != E.CNNL_REDUCE_NO_INDICES and values["op"] not in (E.CNNL_REDUCE_MAX, E.CNNL_REDUCE_MIN):
        raise ArgumentFault("indices are computed only by CNNL_REDUCE_MAX and CNNL_REDUCE_MIN", "reduce_indices")
    for name, value in values.items():
        setattr(target, name, value)
    target.is_set = True


@api("cnnlSetReduceDescriptor")
def setReduceDescriptor(reduce_desc, axis, reduce_op, tensor_type, nan, indices, indices_type) -> None:
    """cnnlSetReduceDescriptor(reduce_desc, int axis[], int axis_num, reduce_op, tensor_type, nan_propagation,
    reduce_indices, indices_type): `axis` is axis[axis_num]."""
    _set(reduce_desc, axis, reduce_op, tensor_type, nan, indices, indices_type, 0.0)


@api("cnnlSetReduceDescriptor_v2")
def setReduceDescriptor_v2(reduce_desc, axis, reduce_op, tensor_type, nan, indices, indices_type, p) -> None:
    """cnnlSetReduceDescriptor_v2(reduce_desc, axis[], axis_num, reduce_op, tensor_type, nan_propagation,
    reduce_indices, indices_type, float p): p is the order of CNNL_REDUCE_NORMP."""
    _set(reduce_desc, axis, reduce_op, tensor_type, nan, indices, indices_type, p)


class _Plan:
    """A validated reduction: kernel op, normalised axes and the keepdims output dims."""

    def __init__(self, desc: ReduceDescriptor, x: TensorDescriptor, out: TensorDescriptor):
        if desc.op not in _KERNEL_OPS:
            raise NotSupportedFault(f"reduce op {desc.op} is not supported (supported: ADD, AVG, MUL, MAX, MIN, "
                                    f"NORM1, NORM2)", "reduce_desc")
        self.op = _KERNEL_OPS[desc.op]
        checks.supported_dtype(x, "input_desc", D.FLOATING if self.op == "norm2" else
                               (D.ALL if self.op in ("max", "min") else D.NUMERIC), "cnnlReduce")
        checks.same_dtype(x, "input_desc", (out, "output_desc"))
        if desc.compute_dtype not in (x.dtype, E.CNNL_DTYPE_FLOAT if x.dtype in D.HALF_PRECISION else x.dtype):
            raise ArgumentFault(f"tensor_type {D.name(desc.compute_dtype)} does not fit {D.name(x.dtype)} input",
                                "reduce_desc")
        self.axes = tuple(sorted({checks.axis(a, len(x.dims), "reduce_desc") for a in desc.axis}))
        self.keep_dims = tuple(1 if d in self.axes else n for d, n in enumerate(x.dims))
        squeezed = tuple(n for d, n in enumerate(x.dims) if d not in self.axes) or (1,)
        if out.dims not in (self.keep_dims, squeezed):
            raise ArgumentFault(f"dims {list(out.dims)}; reducing {list(x.dims)} over axes {list(self.axes)} gives "
                                f"{list(self.keep_dims)}", "output_desc")
        if any(x.dims[a] == 0 for a in self.axes):  # as PyTorch: sum 0, prod 1, mean NaN, norms 0; max/min fail
            if self.op in ("max", "min"):
                raise ArgumentFault(f"a reduced axis has extent 0: the {self.op} (and its index) of no elements is "
                                    f"undefined (PyTorch raises too)", "input_desc")
            if self.op == "mean" and x.dtype not in D.FLOATING:
                raise ArgumentFault(f"a reduced axis has extent 0: the mean of no elements is NaN, which "
                                    f"{D.name(x.dtype)} cannot hold", "input_desc")
        self.indices = desc.indices
        self.index_dtype = _INDEX_DTYPES[desc.indices_type]

    def keepdims_view(self, view: np.ndarray) -> np.ndarray:
        """`view` (an output in the descriptor's dims) shaped with the reduced axes kept (always a view)."""
        if view.shape == self.keep_dims:
            return view
        if view.size == 1:
            return view.reshape(self.keep_dims)
        return np.expand_dims(view, self.axes)


def _workspace(x: TensorDescriptor, out: TensorDescriptor) -> int:
    return W.float32_accumulator(out, x.dtype)


@api("cnnlGetReduceOpWorkspaceSize")
def getReduceOpWorkspaceSize(handle, input_desc, output_desc, reduce_desc) -> int:
    """cnnlGetReduceOpWorkspaceSize(handle, input_desc, output_desc, reduce_desc, size_t *size) -> size."""
    handle_arg(handle)
    x, out = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
    _Plan(ready(reduce_desc, ReduceDescriptor, "reduce_desc"), x, out)
    return _workspace(x, out)


def _index_view(call: OpCall, plan: _Plan, out: TensorDescriptor, indices, indices_size) -> np.ndarray:
    """The dense indices buffer, shaped like the keepdims output."""
    nbytes = as_size(indices_size, "indices_size_inbytes")
    needed = out.size * plan.index_dtype.itemsize
    if nbytes < needed:
        raise ArgumentFault(f"{nbytes} bytes cannot hold {out.size} indices of {plan.index_dtype.itemsize} bytes",
                            "indices_size_inbytes")
    code = E.CNNL_DTYPE_INT32 if plan.index_dtype.itemsize == 4 else E.CNNL_DTYPE_INT16
    index_desc = TensorDescriptor()
    index_desc.assign(E.CNNL_LAYOUT_ARRAY, code, plan.keep_dims, dense_strides(plan.keep_dims))
    return call.output(index_desc, indices, "indices").view(plan.index_dtype)


def _run_reduce(plan: _Plan, x_view, out_view, index_view, alpha, beta) -> None:
    scaled = alpha != 1 or beta != 0
    result = np.empty(plan.keep_dims, x_view.dtype) if (scaled and out_view is not None) else out_view
    indices = None if index_view is None else np.empty(plan.keep_dims, np.int32)
    kernels.reduce(plan.op, x_view, result, plan.axes, indices=indices)
    if indices is not None:
        np.copyto(index_view, indices, casting="unsafe")
    if result is not out_view:
        kernels.op_tensor("add", result, out_view, out_view, alpha, beta, 0)


@api("cnnlReduce")
def reduce(handle, reduce_desc, workspace, workspace_size, alpha, input_desc, input, indices_size_inbytes, indices,
           beta, output_desc, output) -> None:
    """cnnlReduce(handle, reduce_desc, workspace, workspace_size, alpha, input_desc, input, indices_size_inbytes,
    indices, beta, output_desc, output). With CNNL_REDUCE_ONLY_INDICES only the indices are written."""
    with OpCall("cnnlReduce", handle) as call:
        desc = ready(reduce_desc, ReduceDescriptor, "reduce_desc")
        x, out = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
        plan = _Plan(desc, x, out)
        scale_in, scale_out = checks.scalar(alpha, "alpha", 1, x.dtype), checks.scalar(beta, "beta", 0, x.dtype)
        if (scale_in != 1 or scale_out != 0) and x.dtype == E.CNNL_DTYPE_BOOL:
            raise NotSupportedFault("alpha/beta scaling of BOOL results is not supported", "alpha")
        x_view = call.input(x, input, "input")
        writes_values = plan.indices != E.CNNL_REDUCE_ONLY_INDICES
        out_view = plan.keepdims_view(call.output(out, output, "output", read=scale_out != 0)) \
            if writes_values else None
        index_view = _index_view(call, plan, out, indices, indices_size_inbytes) \
            if plan.indices != E.CNNL_REDUCE_NO_INDICES else None
        call.workspace(workspace, workspace_size, _workspace(x, out), "cnnlGetReduceOpWorkspaceSize")
        call.submit(lambda: _run_reduce(plan, x_view, out_view, index_view, scale_in, scale_out),
                    flops=x.size * (2 if plan.op in ("norm1", "norm2") else 1), dtype=x.dtype)
