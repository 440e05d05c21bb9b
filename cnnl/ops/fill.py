"""cnnlFill_v3: set every element of a tensor to a scalar given on the host or in device memory."""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum, as_number

from .. import checks
from .. import dtypes as D
from .. import enums as E
from .. import kernels
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from . import pointer_scalars as P


@api("cnnlFill_v3")
def fill_v3(handle, pointer_mode, value, output_desc, output) -> None:
    """cnnlFill_v3(handle, cnnlPointerMode_t pointer_mode, const void *value, output_desc, output).
    CNNL_POINTER_MODE_HOST: `value` is a Python number; CNNL_POINTER_MODE_DEVICE: `value` is the device address of
    one element of the output's data type, read when the fill runs. A host value converts as
    pointer_scalars.fill_value says (into integer types as C converts integers: -1 into uint8 is 255)."""
    with OpCall("cnnlFill_v3", handle) as call:
        mode = as_enum(pointer_mode, "pointer_mode", (E.CNNL_POINTER_MODE_HOST, E.CNNL_POINTER_MODE_DEVICE),
                       "cnnlPointerMode_t")
        dst = tensor_arg(output_desc, "output_desc")
        checks.supported_dtype(dst, "output_desc", D.ALL, "cnnlFill_v3")
        if mode == E.CNNL_POINTER_MODE_HOST:
            if value is None:
                raise ArgumentFault("NULL value", "value")
            number = P.fill_value(as_number(value, "value"), dst.dtype, "value")
            read_value = lambda: number  # noqa: E731
        else:
            scalar_view = call.device_scalar(value, dst.dtype, "value")
            read_value = lambda: scalar_view[0].item()  # noqa: E731
        dst_view = call.output(dst, output, "output")
        call.submit(lambda: kernels.fill(dst_view, read_value()), flops=0, dtype=dst.dtype)
