"""Indexing beyond `cnnl.ops.indexing`: cnnlMasked_v4 (fill from device or host, select, scatter, scale),
cnnlAdvancedIndex with cnnlGetAdvancedIndexOutputDim and cnnlGetAdvancedIndexWorkspaceSize (x[indices]),
cnnlIndexAdd, cnnlIndexFill and cnnlIndexFill_v2 (torch.index_add / index_fill).

The advanced-index functions take the C array `indices_desc[CNNL_DIM_MAX]` (and `indices[]`) as one sequence with
one entry per leading input axis, None for an axis taken whole; there is no count argument in C either. Integer
indices are INT32/INT64 (negative ones count from the end); BOOL/UINT8 masks span as many axes as they have dims
and must match them. With a mask, the output's extent along the masked positions is only known when the op runs:
cnnlGetAdvancedIndexOutputDim reports the largest possible dims (every mask element selected), the op packs the
result at the start of the (dense) output and writes the real dims to `output_dims` (INT64[output_dim], device) and
their number to `output_dim` (one INT32, device), which may be NULL.
"""
from __future__ import annotations

import math

import numpy as np

from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum, as_number

from .. import checks
from .. import dtypes as D
from .. import enums as E
from ..handle import handle_arg
from ..kernels import advanced_indexing as K
from ..kernels import indexing as I
from ..opcall import OpCall
from ..status import api
from ..tensor import MAX_DIMS, TensorDescriptor, tensor_arg
from ..views import is_null
from . import nn_common as N
from . import pointer_scalars as P

_MASK_TYPES = (E.CNNL_DTYPE_BOOL, E.CNNL_DTYPE_UINT8)


# ---- masked, v4 ---------------------------------------------------------------------------------------------------

@api("cnnlMasked_v4")
def masked_v4(handle, masked_op, input_desc, input, mask_desc, mask, value_desc, value, scale, workspace,
              workspace_size, output_desc, output, number) -> None:
    """cnnlMasked_v4(handle, masked_op, input_desc, input, mask_desc, mask, value_desc, value, const void *scale,
    workspace, workspace_size, output_desc, output, uint32_t *number). The mask broadcasts to the input; nonzero
    is true. CNNL_MASKED_FILL: output = value (one element on the device) where masked, else input.
    CNNL_MASKED_FILL_HOST: the same with the host number `scale` (of the input's type). CNNL_MASKED_SELECT: the
    masked elements packed into the start of the output (at least input-size elements), their count into `number`
    (one INT32/UINT32 on the device). CNNL_MASKED_SCATTER: output = input with the masked positions taking the
    elements of `value` in row-major order (torch.masked_scatter; `number`, when given, receives their count).
    CNNL_MASKED_SCALE: output = input * mask * scale (a host float; floating inputs)."""
    op = "cnnlMasked_v4"
    with OpCall(op, handle) as call:
        mode = as_enum(masked_op, "masked_op", E.MASKED_OPS_V4, "cnnlMaskedOp_t")
        xd, md = tensor_arg(input_desc, "input_desc"), tensor_arg(mask_desc, "mask_desc")
        od = tensor_arg(output_desc, "output_desc")
        checks.supported_dtype(xd, "input_desc", D.FLOATING if mode == E.CNNL_MASKED_SCALE else D.ALL, op)
        checks.supported_dtype(md, "mask_desc", D.ALL, op)
        checks.same_dtype(xd, "input_desc", (od, "output_desc"))
        checks.broadcasts_to(xd, "input_desc", (md, "mask_desc"))
        if mode == E.CNNL_MASKED_SELECT:
            if od.size < xd.size:
                raise ArgumentFault(f"{od.size} elements cannot hold the {xd.size} the mask may select",
                                    "output_desc")
            if not od.is_dense:
                raise ArgumentFault("must be dense: the selected elements are packed at its start", "output_desc")
        else:
            checks.same_shape(xd, "input_desc", (od, "output_desc"))
        x_view, m_view = call.input(xd, input, "input"), call.input(md, mask, "mask")
        m_view = m_view.reshape((1,) * (len(xd.dims) - len(md.dims)) + m_view.shape)
        if mode in (E.CNNL_MASKED_FILL, E.CNNL_MASKED_SCATTER):
            vd = tensor_arg(value_desc, "value_desc")
            checks.same_dtype(xd, "input_desc", (vd, "value_desc"))
            if mode == E.CNNL_MASKED_FILL:
                N.elements_match(vd, "value_desc", 1, "the fill value")
            v_view = call.input(vd, value, "value")
        o_view = call.output(od, output, "output")
        count = None
        if mode == E.CNNL_MASKED_SELECT or (mode == E.CNNL_MASKED_SCATTER and not is_null(number)):
            count = call.output(N.raw_buffer(E.CNNL_DTYPE_INT32, 1, "number"), number, "number")
        call.workspace(workspace, workspace_size, 0, "cnnlGetMaskedWorkspaceSize")
        if mode == E.CNNL_MASKED_FILL:
            run = lambda: I.masked_fill(x_view, m_view, v_view, o_view)  # noqa: E731
        elif mode == E.CNNL_MASKED_FILL_HOST:
            fill = P.host_scalar(scale, "scale", xd.dtype, fill=True)
            run = lambda: I.masked_fill(x_view, m_view, fill, o_view)  # noqa: E731
        elif mode == E.CNNL_MASKED_SELECT:
            run = lambda: I.masked_select(x_view, m_view, o_view, count)  # noqa: E731
        elif mode == E.CNNL_MASKED_SCATTER:
            run = lambda: K.masked_scatter(x_view, m_view, v_view, o_view, count)  # noqa: E731
        else:
            factor = float(as_number(scale if scale is not None else 1.0, "scale"))
            run = lambda: K.masked_scale(x_view, m_view, factor, o_view)  # noqa: E731
        call.submit(run, flops=xd.size, dtype=xd.dtype)


# ---- advanced index -----------------------------------------------------------------------------------------------

def _index_descs(input_desc, indices_desc) -> tuple[TensorDescriptor, list]:
    x = tensor_arg(input_desc, "input_desc")
    checks.supported_dtype(x, "input_desc", D.ALL, "cnnlAdvancedIndex")
    if isinstance(indices_desc, (str, bytes)) or not hasattr(indices_desc, "__len__") or \
            len(indices_desc) > MAX_DIMS:
        raise ArgumentFault(f"expected a sequence of at most {MAX_DIMS} index descriptors", "indices_desc")
    descs = list(indices_desc)
    while descs and descs[-1] is None:  # trailing NULLs: the array is CNNL_DIM_MAX long
        descs.pop()
    if not descs:
        raise ArgumentFault("every index is NULL", "indices_desc")
    result = []
    for i, desc in enumerate(descs):
        if desc is None:
            result.append(None)
            continue
        index = tensor_arg(desc, f"indices_desc[{i}]")
        checks.supported_dtype(index, f"indices_desc[{i}]", N.INDEX_TYPES + _MASK_TYPES, "cnnlAdvancedIndex")
        result.append(index)
    return x, result


def _output_dims(x: TensorDescriptor, indices: list) -> tuple[int, ...]:
    """numpy's result shape of x[key], every mask element counted as selected."""
    axis, advanced = 0, []
    for i, index in enumerate(indices):
        if index is None:
            axis += 1
            continue
        if index.dtype in _MASK_TYPES:
            span = len(index.dims)
            covered = x.dims[axis:axis + span]
            if covered != index.dims:
                raise ArgumentFault(f"mask dims {list(index.dims)} differ from the input's {list(covered)} at axis "
                                    f"{axis}", f"indices_desc[{i}]")
            advanced.append((i, axis, span, (index.size,)))
        else:
            span = 1
            advanced.append((i, axis, span, index.dims))
        axis += span
        if axis > len(x.dims):
            raise ArgumentFault(f"{len(indices)} indices address more than the input's {len(x.dims)} dims",
                                "indices_desc")
    try:
        broadcast = np.broadcast_shapes(*(shape for _, _, _, shape in advanced))
    except ValueError:
        raise ArgumentFault("the index shapes do not broadcast together", "indices_desc") from None
    used = {a for _, start, span, _ in advanced for a in range(start, start + span)}
    positions = [i for i, _, _, _ in advanced]
    if positions == list(range(positions[0], positions[-1] + 1)):  # adjacent: the result stays in place
        first, last = advanced[0][1], advanced[-1][1] + advanced[-1][2]
        return x.dims[:first] + tuple(broadcast) + x.dims[last:]
    return tuple(broadcast) + tuple(n for a, n in enumerate(x.dims) if a not in used)


@api("cnnlGetAdvancedIndexOutputDim")
def getAdvancedIndexOutputDim(handle, input_desc, indices_desc) -> tuple[int, tuple[int, ...]]:
    """cnnlGetAdvancedIndexOutputDim(handle, input_desc, const cnnlTensorDescriptor_t indices_desc[],
    int *output_dim, int output_dims[]) -> (output_dim, output_dims): the output's rank and (largest) dims."""
    handle_arg(handle)
    dims = _output_dims(*_index_descs(input_desc, indices_desc))
    return len(dims), dims


def _index_workspace(x: TensorDescriptor, indices: list) -> int:
    """One int64 linear position per output element of the indexed axes."""
    shapes = [i.dims if i.dtype not in _MASK_TYPES else (i.size,) for i in indices if i is not None]
    return 8 * math.prod(np.broadcast_shapes(*shapes))


@api("cnnlGetAdvancedIndexWorkspaceSize")
def getAdvancedIndexWorkspaceSize(handle, input_desc, indices_desc) -> int:
    """cnnlGetAdvancedIndexWorkspaceSize(handle, input_desc, const cnnlTensorDescriptor_t indices_desc[],
    size_t *size) -> size: an int64 position per indexed element."""
    handle_arg(handle)
    x, indices = _index_descs(input_desc, indices_desc)
    _output_dims(x, indices)
    return _index_workspace(x, indices)


@api("cnnlAdvancedIndex")
def advancedIndex(handle, input_desc, input, indices_desc, indices, workspace, workspace_size, output_desc, output,
                  output_dims, output_dim) -> None:
    """cnnlAdvancedIndex(handle, input_desc, input, const cnnlTensorDescriptor_t indices_desc[],
    const void *const indices[], workspace, workspace_size, output_desc, output, void *output_dims,
    void *output_dim): output = input[indices] (PyTorch / numpy advanced indexing)."""
    with OpCall("cnnlAdvancedIndex", handle) as call:
        x, descs = _index_descs(input_desc, indices_desc)
        dims = _output_dims(x, descs)
        out = tensor_arg(output_desc, "output_desc")
        checks.same_dtype(x, "input_desc", (out, "output_desc"))
        if out.dims != dims:
            raise ArgumentFault(f"dims {list(out.dims)}; indexing gives (at most) {list(dims)}", "output_desc")
        if not out.is_dense:
            raise ArgumentFault("must be dense: the result is packed at its start", "output_desc")
        pointers = list(indices) if hasattr(indices, "__len__") and not isinstance(indices, (str, bytes)) else None
        if pointers is None or len(pointers) < len(descs):
            raise ArgumentFault(f"expected {len(descs)} index pointers", "indices")
        x_view = call.input(x, input, "input")
        views = [None if d is None else call.input(d, p, f"indices[{i}]")
                 for i, (d, p) in enumerate(zip(descs, pointers))]
        o_view = call.output(out, output, "output")
        dims_view = None if is_null(output_dims) else call.output(
            N.raw_buffer(E.CNNL_DTYPE_INT64, len(dims), "output_dims"), output_dims, "output_dims")
        ndim_view = None if is_null(output_dim) else call.output(
            N.raw_buffer(E.CNNL_DTYPE_INT32, 1, "output_dim"), output_dim, "output_dim")
        call.workspace(workspace, workspace_size, _index_workspace(x, descs), "cnnlGetAdvancedIndexWorkspaceSize")
        call.submit(lambda: K.advanced_index(x_view, views, o_view, dims_view, ndim_view), flops=out.size,
                    dtype=x.dtype)


# ---- index add / index fill ---------------------------------------------------------------------------------------

def _index_along(op: str, dim, x: TensorDescriptor, index_desc) -> tuple[int, TensorDescriptor]:
    axis = checks.axis(dim, len(x.dims), "dim")
    idx = N.index_tensor(tensor_arg(index_desc, "index_desc"), "index_desc", op)
    if len(idx.dims) != 1:
        raise ArgumentFault(f"{len(idx.dims)} dims; the index is 1-D", "index_desc")
    return axis, idx


@api("cnnlIndexAdd")
def indexAdd(handle, dim, input_desc, input, index_desc, index, source_desc, source, output_desc, output) -> None:
    """cnnlIndexAdd(handle, dim, input_desc, input, index_desc, index, source_desc, source, output_desc, output):
    output = input with source's slices added at `index` along `dim` (torch.index_add; repeated indices all add,
    in float32 for half/bfloat16; an index outside [0, dims[dim]) fails the op). output may be input."""
    op = "cnnlIndexAdd"
    with OpCall(op, handle) as call:
        x, s, out = (tensor_arg(d, a) for d, a in ((input_desc, "input_desc"), (source_desc, "source_desc"),
                                                   (output_desc, "output_desc")))
        checks.supported_dtype(x, "input_desc", D.NUMERIC, op)
        checks.same_dtype(x, "input_desc", (s, "source_desc"), (out, "output_desc"))
        checks.same_shape(x, "input_desc", (out, "output_desc"))
        axis, idx = _index_along(op, dim, x, index_desc)
        expected = x.dims[:axis] + (idx.dims[0],) + x.dims[axis + 1:]
        if s.dims != expected:
            raise ArgumentFault(f"dims {list(s.dims)}; adding {idx.dims[0]} slices needs {list(expected)}",
                                "source_desc")
        xv, iv, sv = call.input(x, input, "input"), call.input(idx, index, "index"), call.input(s, source, "source")
        ov = call.output(out, output, "output")
        key = [None] * axis
        call.submit(lambda: I.index_put(xv, key + [iv], sv, True, ov), flops=x.size + s.size, dtype=x.dtype)


def _index_fill(call: OpCall, dim, read_value, input_desc, input, index_desc, index, output_desc, output) -> None:
    """The common part of the index fills: `read_value(dtype)` gives the function reading the fill value."""
    x, out = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
    checks.supported_dtype(x, "input_desc", D.ALL, call.name)
    checks.same_dtype(x, "input_desc", (out, "output_desc"))
    checks.same_shape(x, "input_desc", (out, "output_desc"))
    axis, idx = _index_along(call.name, dim, x, index_desc)
    reader = read_value(x.dtype)
    xv, iv, ov = call.input(x, input, "input"), call.input(idx, index, "index"), call.output(out, output, "output")
    call.submit(lambda: K.index_fill(xv, axis, iv, reader(), ov), flops=out.size, dtype=x.dtype)


@api("cnnlIndexFill")
def indexFill(handle, dim, value, input_desc, input, index_desc, index, output_desc, output) -> None:
    """cnnlIndexFill(handle, int dim, float value, input_desc, input, index_desc, index, output_desc, output):
    output = input with the slices at `index` along `dim` set to value (converted to the input's type as
    pointer_scalars.fill_value says; torch.index_fill, negative indices count from the end)."""
    number = float(np.float32(as_number(value, "value")))  # a C float

    def read_value(dtype):
        stored = P.fill_value(number, dtype, "value")
        return lambda: stored

    with OpCall("cnnlIndexFill", handle) as call:
        _index_fill(call, dim, read_value, input_desc, input, index_desc, index, output_desc, output)


@api("cnnlIndexFill_v2")
def indexFill_v2(handle, dim, pointer_mode, value, input_desc, input, index_desc, index, output_desc,
                 output) -> None:
    """cnnlIndexFill_v2(handle, int dim, cnnlPointerMode_t pointer_mode, const void *value, input_desc, input,
    index_desc, index, output_desc, output): as cnnlIndexFill, the value a host number or the device address of
    one element of the input's type."""
    with OpCall("cnnlIndexFill_v2", handle) as call:
        mode = P.pointer_mode(pointer_mode)
        _index_fill(call, dim, lambda dtype: P.scalar_reader(call, mode, value, dtype, "value", fill=True),
                    input_desc, input, index_desc, index, output_desc, output)

