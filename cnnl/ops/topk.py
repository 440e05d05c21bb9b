"""cnnlTopKTensor_v3: the k largest or smallest values along one axis with their indices, and its workspace query.

Results are sorted whether or not `sorted` is set (a sorted answer is a valid unsorted one). Equal values come in
ascending index order when `lower_index_first` is set, else in descending index order. NaN is larger than every
number. Indices are INT32 or INT64.
"""
from __future__ import annotations

import numpy as np

from mlusim.errors import ArgumentFault
from mlusim.validate import as_int

from .. import checks
from .. import dtypes as D
from .. import enums as E
from .. import kernels
from .. import workspace as W
from ..handle import handle_arg
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg

_INDEX_TYPES = (E.CNNL_DTYPE_INT32, E.CNNL_DTYPE_INT64)


def _operands(input_desc, k, dim, values_desc, indices_desc):
    x = tensor_arg(input_desc, "input_desc")
    values, indices = tensor_arg(values_desc, "values_desc"), tensor_arg(indices_desc, "indices_desc")
    checks.supported_dtype(x, "input_desc", D.ALL, "cnnlTopKTensor_v3")
    checks.supported_dtype(indices, "indices_desc", _INDEX_TYPES, "cnnlTopKTensor_v3")
    checks.same_dtype(x, "input_desc", (values, "values_desc"))
    axis = checks.axis(dim, len(x.dims), "dim")
    count = as_int(k, "k", minimum=0, maximum=x.dims[axis])
    expected = x.dims[:axis] + (count,) + x.dims[axis + 1:]
    for desc, arg in ((values, "values_desc"), (indices, "indices_desc")):
        if desc.dims != expected:
            raise ArgumentFault(f"dims {list(desc.dims)}, top-{count} along axis {axis} of {list(x.dims)} gives "
                                f"{list(expected)}", arg)
    return x, values, indices, axis, count


@api("cnnlGetTopKTensorWorkspaceSize")
def getTopKTensorWorkspaceSize(handle, input_desc, k, dim, largest, values_desc, indices_desc) -> int:
    """cnnlGetTopKTensorWorkspaceSize(handle, input_desc, k, dim, largest, values_desc, indices_desc,
    size_t *size) -> size."""
    handle_arg(handle)
    checks.flag(largest, "largest")
    return W.index_scratch(_operands(input_desc, k, dim, values_desc, indices_desc)[0])


def _run_topk(x_view, count, axis, largest, lower_index_first, values_view, indices_view) -> None:
    source = x_view if lower_index_first else np.flip(x_view, axis)
    positions = indices_view if indices_view.dtype == np.int32 else np.empty(indices_view.shape, np.int32)
    kernels.topk(source, count, axis, values_view, positions, largest=largest)
    if not lower_index_first:
        np.subtract(x_view.shape[axis] - 1, positions, out=positions)
    if positions is not indices_view:
        np.copyto(indices_view, positions)


@api("cnnlTopKTensor_v3")
def topKTensor_v3(handle, input_desc, input, k, dim, largest, sorted, lower_index_first, workspace,
                  workspace_size, values_desc, values, indices_desc, indices) -> None:
    """cnnlTopKTensor_v3(handle, input_desc, input, k, dim, largest, sorted, lower_index_first, workspace,
    workspace_size, values_desc, values, indices_desc, indices)."""
    with OpCall("cnnlTopKTensor_v3", handle) as call:
        x, vd, idd, axis, count = _operands(input_desc, k, dim, values_desc, indices_desc)
        is_largest = checks.flag(largest, "largest")
        checks.flag(sorted, "sorted")
        lower_first = checks.flag(lower_index_first, "lower_index_first")
        x_view = call.input(x, input, "input")
        values_view, indices_view = call.output(vd, values, "values"), call.output(idd, indices, "indices")
        call.workspace(workspace, workspace_size, W.index_scratch(x), "cnnlGetTopKTensorWorkspaceSize")
        call.submit(lambda: _run_topk(x_view, count, axis, is_largest, lower_first, values_view, indices_view),
                    flops=x.size * max(1, count.bit_length()), dtype=x.dtype)
