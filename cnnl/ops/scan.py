"""cnnlCumsum: the running sum along one axis, inclusive or exclusive, forwards or reversed."""
from __future__ import annotations

from mlusim.validate import as_enum

from .. import checks
from .. import dtypes as D
from .. import enums as E
from .. import kernels
from ..handle import handle_arg
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg


@api("cnnlGetCumsumWorkspaceSize")
def getCumsumWorkspaceSize(handle, input_desc, axis) -> int:
    """cnnlGetCumsumWorkspaceSize(handle, input_desc, axis, size_t *size) -> size (0: none is needed)."""
    handle_arg(handle)
    checks.axis(axis, len(tensor_arg(input_desc, "input_desc").dims), "axis")
    return 0


@api("cnnlCumsum")
def cumsum(handle, input_desc, input, axis, exclusive, reverse, nan_propagation, output_desc, output,
           workspace=None, workspace_size=0) -> None:
    """cnnlCumsum(handle, input_desc, input, axis, exclusive, reverse, nan_propagation, output_desc, output
    [, workspace, workspace_size]): output = running sum of input along `axis`. half/bfloat16 accumulate in
    float32; integers wrap. The trailing workspace of newer releases is optional (none is needed)."""
    with OpCall("cnnlCumsum", handle) as call:
        src, dst = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
        checks.supported_dtype(src, "input_desc", D.NUMERIC, "cnnlCumsum")
        checks.same_dtype(src, "input_desc", (dst, "output_desc"))
        checks.same_shape(src, "input_desc", (dst, "output_desc"))
        dim = checks.axis(axis, len(src.dims), "axis")
        is_exclusive, is_reverse = checks.flag(exclusive, "exclusive"), checks.flag(reverse, "reverse")
        as_enum(nan_propagation, "nan_propagation", E.NAN_PROPAGATIONS, "cnnlNanPropagation_t")
        src_view, dst_view = call.input(src, input, "input"), call.output(dst, output, "output")
        call.workspace(workspace, workspace_size, 0, "cnnlGetCumsumWorkspaceSize")
        call.submit(lambda: kernels.cumsum(src_view, dst_view, dim, is_exclusive, is_reverse), flops=dst.size,
                    dtype=dst.dtype)
