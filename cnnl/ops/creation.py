"""Tensors made from scalars: cnnlArange_v2, cnnlLinspace, cnnlOneHot (torch.arange, torch.linspace,
torch.nn.functional.one_hot).

The output's element count sets the length of a range or linspace (elements in row-major order, any dims). The
C API passes arange's start and step as `const void *` of the output's computation type (float for half,
bfloat16 and float outputs, double for double, the integer type for integers) and linspace's start and end as
`float` values: here they are Python numbers, rounded to those C types first.
"""
from __future__ import annotations

import numpy as np

from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_enum, as_int, as_number

from .. import checks
from .. import dtypes as D
from .. import enums as E
from ..kernels import creation as K
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from . import nn_common as N
from . import pointer_scalars as P


def _c_scalar(value, arg: str, dtype: int):
    """A host number as the C scalar type the output's data type passes (float, double or the integer type)."""
    kind = E.CNNL_DTYPE_FLOAT if dtype in D.HALF_PRECISION else dtype
    return P.host_scalar(value, arg, kind)[()]


@api("cnnlArange_v2")
def arange_v2(handle, prefer, start, step, output_desc, output) -> None:
    """cnnlArange_v2(handle, prefer, const void *start, const void *step, output_desc, output):
    output.flat[i] = start + i * step for every element of the output."""
    checks.preference(prefer)
    with OpCall("cnnlArange_v2", handle) as call:
        yd = tensor_arg(output_desc, "output_desc")
        checks.supported_dtype(yd, "output_desc", D.NUMERIC, "cnnlArange_v2")
        first, delta = _c_scalar(start, "start", yd.dtype), _c_scalar(step, "step", yd.dtype)
        y_view = call.output(yd, output, "output")
        call.submit(lambda: K.arange(first, delta, y_view), flops=2 * yd.size, dtype=yd.dtype)


@api("cnnlLinspace")
def linspace(handle, start, end, output_desc, output) -> None:
    """cnnlLinspace(handle, float start, float end, output_desc, output): output.flat = n evenly spaced values from
    start to end, n the output's element count (torch.linspace)."""
    with OpCall("cnnlLinspace", handle) as call:
        yd = tensor_arg(output_desc, "output_desc")
        checks.supported_dtype(yd, "output_desc", D.NUMERIC, "cnnlLinspace")
        first = float(np.float32(as_number(start, "start")))
        last = float(np.float32(as_number(end, "end")))
        y_view = call.output(yd, output, "output")
        call.submit(lambda: K.linspace(first, last, y_view), flops=3 * yd.size, dtype=yd.dtype)


@api("cnnlOneHot")
def oneHot(handle, indices_desc, indices, depth, on_value, off_value, axis, dtype, output) -> None:
    """cnnlOneHot(handle, indices_desc, indices, int depth, const void *on_value, const void *off_value, int axis,
    cnnlDataType_t dtype, void *output): output (dense, of `dtype`, the indices' dims with `depth` inserted at
    `axis`, -1 = last) = on_value at each index's class, off_value elsewhere. on_value and off_value are device
    addresses of one element of `dtype`. An index outside [0, depth) fails the op (torch.one_hot raises)."""
    with OpCall("cnnlOneHot", handle) as call:
        idx = N.index_tensor(tensor_arg(indices_desc, "indices_desc"), "indices_desc", "cnnlOneHot")
        classes = as_int(depth, "depth", minimum=0)
        code = as_enum(dtype, "dtype", D.ITEMSIZES, "cnnlDataType_t")
        if code not in D.ALL:
            raise NotSupportedFault(f"cnnlOneHot does not support {D.name(code)} outputs", "dtype")
        rank = len(idx.dims)
        where = as_int(axis, "axis")
        if not -1 <= where <= rank:
            raise ArgumentFault(f"axis {where} is outside [-1, {rank}]", "axis")
        where = rank if where == -1 else where
        dims = idx.dims[:where] + (classes,) + idx.dims[where:]
        if len(dims) > 8:
            raise ArgumentFault(f"the output would have {len(dims)} dims (at most 8)", "indices_desc")
        out_desc = N.raw_buffer(code, int(np.prod(dims)), "output")
        on, off = call.device_scalar(on_value, code, "on_value"), call.device_scalar(off_value, code, "off_value")
        i_view = call.input(idx, indices, "indices")
        out_view = call.output(out_desc, output, "output").reshape(dims)
        call.submit(lambda: K.one_hot(i_view, classes, on[0], off[0], where, out_view), flops=out_desc.size,
                    dtype=code)
