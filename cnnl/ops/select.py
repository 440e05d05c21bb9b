"""cnnlSelectV2 (where): output = then where the condition is nonzero, else `else`, all broadcasting."""
from __future__ import annotations

from .. import checks
from .. import dtypes as D
from .. import kernels
from .. import workspace as W
from ..handle import handle_arg
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg


def _select_inputs(condition_desc, then_desc, else_desc):
    cond = tensor_arg(condition_desc, "condition_desc")
    then, other = tensor_arg(then_desc, "then_desc"), tensor_arg(else_desc, "else_desc")
    checks.supported_dtype(cond, "condition_desc", D.ALL, "cnnlSelectV2")
    checks.supported_dtype(then, "then_desc", D.ALL, "cnnlSelectV2")
    checks.same_dtype(then, "then_desc", (other, "else_desc"))
    return cond, then, other


@api("cnnlGetSelectV2WorkspaceSize")
def getSelectV2WorkspaceSize(handle, condition_desc, then_desc, else_desc) -> int:
    """cnnlGetSelectV2WorkspaceSize(handle, condition_desc, then_desc, else_desc, size_t *size) -> size."""
    handle_arg(handle)
    cond, then, other = _select_inputs(condition_desc, then_desc, else_desc)
    dims = checks.broadcast_dims((cond, "condition_desc"), (then, "then_desc"), (other, "else_desc"))
    return W.staged_inputs(dims, cond, then, other)


@api("cnnlSelectV2")
def selectV2(handle, condition_desc, condition, then_desc, then, else_desc, other, workspace, workspace_size,
             output_desc, output) -> None:
    """cnnlSelectV2(handle, condition_desc, condition, then_desc, then, else_desc, else, workspace, workspace_size,
    output_desc, output): output = condition ? then : else, all three broadcasting to the output's dims.
    (`else` is a Python keyword: the argument is named `other`.)"""
    with OpCall("cnnlSelectV2", handle) as call:
        cond, then_d, else_d = _select_inputs(condition_desc, then_desc, else_desc)
        out = tensor_arg(output_desc, "output_desc")
        checks.same_dtype(then_d, "then_desc", (out, "output_desc"))
        checks.broadcasts_to(out, "output_desc", (cond, "condition_desc"), (then_d, "then_desc"),
                             (else_d, "else_desc"))
        views = [call.input(d, p, a) for d, p, a in ((cond, condition, "condition"), (then_d, then, "then"),
                                                      (else_d, other, "else"))]
        out_view = call.output(out, output, "output")
        call.workspace(workspace, workspace_size, W.staged_inputs(out.dims, cond, then_d, else_d),
                       "cnnlGetSelectV2WorkspaceSize")
        call.submit(lambda: kernels.select(*views, out_view), flops=out.size, dtype=out.dtype)
