"""cnnlCastDataType: every pair of HALF, FLOAT, BFLOAT16, DOUBLE, INT8, INT16, INT32, INT64, UINT8, BOOL, and the
pairs of UINT32 and UINT64 with each other and with INT32 and INT64.

Floats round to nearest even and overflow to infinity; float -> integer truncates and saturates (NaN -> 0);
integer -> integer saturates; anything -> BOOL is x != 0 (see cnnl.kernels.cast).
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum

from .. import checks
from .. import dtypes as D
from .. import kernels
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from ..validated import ValidatedCalls


_validated_casts = ValidatedCalls("cnnlCastDataType")


def _cast_operands(input_desc, cast_type, output_desc):
    """The (input, output) descriptors of a cast, validated (once per unchanged pair and cast type)."""
    key = (input_desc, output_desc, cast_type)
    found = _validated_casts.lookup(key, key[:2])
    if found is not None:
        return found
    src, dst = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
    source, target = D.CAST_TYPES[as_enum(cast_type, "cast_type", D.CAST_TYPES, "cnnlCastDataType_t")]
    checks.same_shape(src, "input_desc", (dst, "output_desc"))
    for desc, arg, wanted in ((src, "input_desc", source), (dst, "output_desc", target)):
        if desc.dtype != wanted:
            raise ArgumentFault(f"data type {D.name(desc.dtype)} but cast_type {cast_type} converts "
                                f"{D.name(source)} to {D.name(target)}", arg)
    found = (src, dst)
    _validated_casts.remember(key, key[:2], found)
    return found


@api("cnnlCastDataType")
def castDataType(handle, input_desc, input, cast_type, output_desc, output) -> None:
    """cnnlCastDataType(handle, input_desc, input, cnnlCastDataType_t cast_type, output_desc, output):
    output = input converted; cast_type (CNNL_CAST_<X>_TO_<Y>) must name the two tensors' data types."""
    with OpCall("cnnlCastDataType", handle) as call:
        src, dst = _cast_operands(input_desc, cast_type, output_desc)
        src_view, dst_view = call.input(src, input, "input"), call.output(dst, output, "output")
        call.submit(lambda: kernels.cast(src_view, dst_view), flops=dst.size, dtype=dst.dtype)
