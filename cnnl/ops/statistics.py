"""Standard deviation, variance and mean: the std-var-mean descriptor (create / set / destroy),
cnnlGetStdVarMeanWorkspaceSize and cnnlStdVarMean (torch.std, var, std_mean, var_mean).

The descriptor holds the op (CNNL_STD or CNNL_VAR), the axes and `unbiased` (correction 1, else 0). cnnlStdVarMean
writes the std (CNNL_STD) or the var (CNNL_VAR) output, which must be given while the other is NULL, and the mean
too when its descriptor and pointer are given. Outputs keep the reduced axes with extent 1, or drop them; floating
types, all tensors of one type.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum, as_int

from .. import checks
from .. import enums as E
from .. import workspace as W
from ..descriptors import Descriptor, lifecycle, live, ready
from ..handle import handle_arg
from ..kernels import statistics as K
from ..opcall import OpCall
from ..status import api
from ..tensor import MAX_DIMS, tensor_arg
from . import nn_common as N


class StdVarMeanDescriptor(Descriptor):
    """cnnlStdVarMeanDescriptor_t: the op, the reduced axes and whether the variance is unbiased."""

    c_type = "cnnlStdVarMeanDescriptor_t"
    setter = "cnnlSetStdVarMeanDescriptor"

    def __init__(self):
        super().__init__()
        self.op = E.CNNL_STD
        self.axis: tuple[int, ...] = ()
        self.unbiased = True


createStdVarMeanDescriptor, destroyStdVarMeanDescriptor = lifecycle(
    StdVarMeanDescriptor, "cnnlCreateStdVarMeanDescriptor", "cnnlDestroyStdVarMeanDescriptor")


@api("cnnlSetStdVarMeanDescriptor")
def setStdVarMeanDescriptor(desc, op, axis, unbiased) -> None:
    """cnnlSetStdVarMeanDescriptor(desc, cnnlStdVarMeanOp_t op, int axis_num, const int axis[], bool unbiased):
    `axis` is axis[axis_num]."""
    target = live(desc, StdVarMeanDescriptor, "desc")
    code = as_enum(op, "op", E.STD_VAR_MEAN_OPS, "cnnlStdVarMeanOp_t")
    if isinstance(axis, (str, bytes)) or not hasattr(axis, "__len__") or not 1 <= len(axis) <= MAX_DIMS:
        raise ArgumentFault(f"expected 1 to {MAX_DIMS} axes", "axis")
    axes = tuple(as_int(a, f"axis[{i}]") for i, a in enumerate(axis))
    target.op, target.axis, target.unbiased = code, axes, checks.flag(unbiased, "unbiased")
    target.is_set = True


def _axes(desc: StdVarMeanDescriptor, x) -> tuple[int, ...]:
    axes = [checks.axis(a, len(x.dims), "desc") for a in desc.axis]
    if len(set(axes)) != len(axes):
        raise ArgumentFault(f"axes {list(desc.axis)} repeat an axis", "desc")
    return tuple(sorted(axes))


def _input(desc, input_desc):
    x = tensor_arg(input_desc, "input_desc")
    N.float_tensor(x, "input_desc", "cnnlStdVarMean")
    return x, _axes(desc, x)


@api("cnnlGetStdVarMeanWorkspaceSize")
def getStdVarMeanWorkspaceSize(handle, desc, input_desc) -> int:
    """cnnlGetStdVarMeanWorkspaceSize(handle, desc, input_desc, size_t *size) -> size: a float32 copy of a
    half/bfloat16 input, else 0."""
    handle_arg(handle)
    x, _ = _input(ready(desc, StdVarMeanDescriptor, "desc"), input_desc)
    return W.float32_accumulator(x, x.dtype)


def _output(call, x, axes, out_desc, pointer, name: str):
    out = tensor_arg(out_desc, f"{name}_desc")
    checks.same_dtype(x, "input_desc", (out, f"{name}_desc"))
    keep = tuple(1 if d in axes else n for d, n in enumerate(x.dims))
    squeezed = tuple(n for d, n in enumerate(x.dims) if d not in axes) or (1,)
    if out.dims not in (keep, squeezed):
        raise ArgumentFault(f"dims {list(out.dims)}; reducing {list(x.dims)} over {list(axes)} gives {list(keep)}",
                            f"{name}_desc")
    return call.output(out, pointer, name).reshape(keep)


@api("cnnlStdVarMean")
def stdVarMean(handle, desc, input_desc, input, workspace, workspace_size, std_desc, std, var_desc, var,
               mean_desc, mean) -> None:
    """cnnlStdVarMean(handle, desc, input_desc, input, workspace, workspace_size, std_desc, std, var_desc, var,
    mean_desc, mean): the std (CNNL_STD) or var (CNNL_VAR) of the input over the descriptor's axes, and the mean
    when mean_desc/mean are given."""
    with OpCall("cnnlStdVarMean", handle) as call:
        d = ready(desc, StdVarMeanDescriptor, "desc")
        x, axes = _input(d, input_desc)
        std_op = d.op == E.CNNL_STD
        wanted, unwanted = (("std", std_desc, std), ("var", var_desc, var)) if std_op else \
            (("var", var_desc, var), ("std", std_desc, std))
        op_name = "CNNL_STD" if std_op else "CNNL_VAR"
        if wanted[1] is None:
            raise ArgumentFault(f"{op_name} needs the {wanted[0]} output", f"{wanted[0]}_desc")
        if unwanted[1] is not None or unwanted[2] is not None:
            raise ArgumentFault(f"must be NULL for {op_name}", f"{unwanted[0]}_desc")
        x_view = call.input(x, input, "input")
        result = _output(call, x, axes, wanted[1], wanted[2], wanted[0])
        mean_view = None if mean_desc is None else _output(call, x, axes, mean_desc, mean, "mean")
        call.workspace(workspace, workspace_size, W.float32_accumulator(x, x.dtype), "cnnlGetStdVarMeanWorkspaceSize")
        correction = 1 if d.unbiased else 0
        outputs = {wanted[0]: result}
        call.submit(lambda: K.std_var_mean(x_view, axes, correction, mean=mean_view, **outputs), flops=4 * x.size,
                    dtype=x.dtype)
