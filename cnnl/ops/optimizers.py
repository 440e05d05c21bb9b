"""Optimizer steps: cnnlGradientDescent (SGD's update) and cnnlApplyAdadelta (torch.optim.Adadelta's, without
weight decay, which DIOPI adds to the gradient first). Updates are in place; the hyper-parameters are device
addresses of one element of the parameters' data type, read when the op runs (as DIOPI passes them). Floating
types; all tensors of one call have the same dims and type.
"""
from __future__ import annotations

from .. import checks
from ..kernels import optimizers as K
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from . import nn_common as N


def _tensors(c_name: str, *pairs):
    descs = [(tensor_arg(desc, arg), arg) for desc, arg in pairs]
    first, first_arg = descs[0]
    N.float_tensor(first, first_arg, c_name)
    checks.same_dtype(first, first_arg, *descs[1:])
    checks.same_shape(first, first_arg, *descs[1:])
    return [desc for desc, _ in descs]


@api("cnnlGradientDescent")
def gradientDescent(handle, grad_desc, grad, lr, param_desc, param) -> None:
    """cnnlGradientDescent(handle, grad_desc, grad, const void *lr, param_desc, param): param -= lr * grad, lr the
    device address of one element of the parameters' type."""
    with OpCall("cnnlGradientDescent", handle) as call:
        pd, gd = _tensors("cnnlGradientDescent", (param_desc, "param_desc"), (grad_desc, "grad_desc"))
        rate = call.device_scalar(lr, pd.dtype, "lr")
        g_view, p_view = call.input(gd, grad, "grad"), call.output(pd, param, "param", read=True)
        call.submit(lambda: K.gradient_descent(g_view, rate[0].item(), p_view), flops=2 * pd.size, dtype=pd.dtype)


@api("cnnlApplyAdadelta")
def applyAdadelta(handle, var_desc, var, accum_desc, accum, accum_update_desc, accum_update, grad_desc, grad, lr,
                  rho, epsilon) -> None:
    """cnnlApplyAdadelta(handle, var_desc, var, accum_desc, accum, accum_update_desc, accum_update, grad_desc,
    grad, const void *lr, const void *rho, const void *epsilon): one Adadelta step on var (the parameters), accum
    (the running average of squared gradients) and accum_update (of squared updates)."""
    with OpCall("cnnlApplyAdadelta", handle) as call:
        vd, ad, ud, gd = _tensors("cnnlApplyAdadelta", (var_desc, "var_desc"), (accum_desc, "accum_desc"),
                                  (accum_update_desc, "accum_update_desc"), (grad_desc, "grad_desc"))
        scalars = [call.device_scalar(p, vd.dtype, a) for p, a in ((lr, "lr"), (rho, "rho"), (epsilon, "epsilon"))]
        g_view = call.input(gd, grad, "grad")
        views = [call.output(d, p, a, read=True) for d, p, a in ((vd, var, "var"), (ad, accum, "accum"),
                                                                  (ud, accum_update, "accum_update"))]
        call.submit(lambda: K.adadelta(*views, g_view, *(s[0].item() for s in scalars)), flops=12 * vd.size,
                    dtype=vd.dtype)
