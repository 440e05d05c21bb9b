"""Unique: the unique descriptor (create / set / destroy), cnnlGetUniqueWorkspaceSize and cnnlUnique_v2
(torch.unique, with or without a dim).

The output buffers are sized for the worst case and the results fill their start, as on the device (the count is
only known when the op has run; it goes to `output_num`, one INT32 in device memory):
- dim = -1: the unique values of the flattened input; `output` holds at least input-size elements, `indices` (the
  inverse) has the input's dims, `counts` at least input-size elements.
- dim >= 0: unique slices along dim; `output` has the input's dims and is dense (the result is the dense tensor
  whose dim has the unique count, written from the start), `indices` and `counts` hold dims[dim] elements.
Modes: CNNL_SORT_ASCEND, CNNL_UNSORT_FORWARD (order of first occurrence), CNNL_UNSORT_REVERSE (the reverse of that).
indices and counts are INT32 or INT64 and may be NULL (with their descriptors) when the descriptor does not ask for
them.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum, as_int

from .. import checks
from .. import dtypes as D
from .. import enums as E
from ..descriptors import Descriptor, lifecycle, live, ready
from ..handle import handle_arg
from ..kernels import unique as K
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from . import nn_common as N

_SORTS = {E.CNNL_SORT_ASCEND: "ascend", E.CNNL_UNSORT_FORWARD: "forward", E.CNNL_UNSORT_REVERSE: "reverse"}


class UniqueDescriptor(Descriptor):
    """cnnlUniqueDescriptor_t: the order of the result, the dim (-1: flattened) and which extra outputs to write."""

    c_type = "cnnlUniqueDescriptor_t"
    setter = "cnnlSetUniqueDescriptor"

    def __init__(self):
        super().__init__()
        self.mode = E.CNNL_SORT_ASCEND
        self.dim = -1
        self.return_inverse = False
        self.return_counts = False


createUniqueDescriptor, destroyUniqueDescriptor = lifecycle(
    UniqueDescriptor, "cnnlCreateUniqueDescriptor", "cnnlDestroyUniqueDescriptor")


@api("cnnlSetUniqueDescriptor")
def setUniqueDescriptor(unique_desc, mode, dim, return_inverse, return_counts) -> None:
    """cnnlSetUniqueDescriptor(unique_desc, cnnlUniqueSort_t mode, int dim, bool return_inverse,
    bool return_counts): dim -1 takes the flattened input."""
    target = live(unique_desc, UniqueDescriptor, "unique_desc")
    mode = as_enum(mode, "mode", _SORTS, "cnnlUniqueSort_t")
    dim = as_int(dim, "dim", minimum=-1, maximum=7)
    inverse, counts = checks.flag(return_inverse, "return_inverse"), checks.flag(return_counts, "return_counts")
    target.mode, target.dim, target.return_inverse, target.return_counts = mode, dim, inverse, counts
    target.is_set = True


def _input(desc: UniqueDescriptor, input_desc):
    x = tensor_arg(input_desc, "input_desc")
    checks.supported_dtype(x, "input_desc", D.ALL, "cnnlUnique_v2")
    if desc.dim >= len(x.dims):
        raise ArgumentFault(f"dim {desc.dim} is out of range for {len(x.dims)} dims", "unique_desc")
    return x


@api("cnnlGetUniqueWorkspaceSize")
def getUniqueWorkspaceSize(handle, unique_desc, input_desc) -> int:
    """cnnlGetUniqueWorkspaceSize(handle, unique_desc, input_desc, size_t *size) -> size: a sorted copy of the
    input and an int32 index per element."""
    handle_arg(handle)
    x = _input(ready(unique_desc, UniqueDescriptor, "unique_desc"), input_desc)
    return x.size * (x.itemsize + 4)


def _dense(desc, arg: str) -> None:
    if not desc.is_dense:
        raise ArgumentFault("must be dense: the results are packed at its start", arg)


@api("cnnlUnique_v2")
def unique_v2(handle, unique_desc, input_desc, input, workspace, workspace_size, output_num, output_desc, output,
              indices_desc, inverse_indices, counts_desc, counts) -> None:
    """cnnlUnique_v2(handle, unique_desc, input_desc, input, workspace, workspace_size, int *output_num,
    output_desc, output, indices_desc, inverse_indices, counts_desc, counts): see the module notes for the shapes;
    output_num is a device address of one INT32."""
    with OpCall("cnnlUnique_v2", handle) as call:
        desc = ready(unique_desc, UniqueDescriptor, "unique_desc")
        x = _input(desc, input_desc)
        dim = None if desc.dim == -1 else desc.dim
        out = tensor_arg(output_desc, "output_desc")
        checks.same_dtype(x, "input_desc", (out, "output_desc"))
        _dense(out, "output_desc")
        slots = x.size if dim is None else x.dims[dim]
        if dim is None and out.size < x.size:
            raise ArgumentFault(f"{out.size} elements cannot hold the {x.size} possible unique values", "output_desc")
        if dim is not None and out.dims != x.dims:
            raise ArgumentFault(f"dims {list(out.dims)}; unique slices need the input's {list(x.dims)}",
                                "output_desc")
        inverse_view = counts_view = None
        views = [call.input(x, input, "input")]
        number = call.output(N.raw_buffer(E.CNNL_DTYPE_INT32, 1, "output_num"), output_num, "output_num")
        out_view = call.output(out, output, "output")
        if desc.return_inverse:
            idx = N.index_tensor(tensor_arg(indices_desc, "indices_desc"), "indices_desc", "cnnlUnique_v2")
            expected = x.dims if dim is None else (x.dims[dim],)
            if idx.size != (x.size if dim is None else x.dims[dim]):
                raise ArgumentFault(f"dims {list(idx.dims)}; the inverse has {list(expected)}", "indices_desc")
            inverse_view = call.output(idx, inverse_indices, "inverse_indices")
        if desc.return_counts:
            cd = N.index_tensor(tensor_arg(counts_desc, "counts_desc"), "counts_desc", "cnnlUnique_v2")
            _dense(cd, "counts_desc")
            if cd.size < slots:
                raise ArgumentFault(f"{cd.size} elements cannot hold {slots} counts", "counts_desc")
            counts_view = call.output(cd, counts, "counts")
        call.workspace(workspace, workspace_size, x.size * (x.itemsize + 4), "cnnlGetUniqueWorkspaceSize")
        order = _SORTS[desc.mode]
        call.submit(lambda: K.unique(views[0], dim, order, number, out_view, inverse_view, counts_view),
                    flops=x.size * max(1, x.size.bit_length()), dtype=x.dtype)
