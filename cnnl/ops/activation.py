"""Activations: the activation descriptor (cnnlSetActivationDescriptor and its _v2.._v6 forms),
cnnlActivationForward and cnnlActivationBackward.

Supported modes: RELU, RELU6, CLIPPED_RELU with coef 6, SIGMOID, TANH, GELU (erf form, or the tanh approximation
when `approximate` is set), SILU, LEAKYRELU (coef = negative slope), ELU (coef = alpha), ELU_V2 with coef
(input scale) 1 and scale 1 (gamma = alpha), HARDSWISH. The other modes are NOT_SUPPORTED at the op call.
Forward: y = alpha*f(x) + beta*y. Backward: diff_x = alpha*f'(x)*diff_y + beta*diff_x; SIGMOID and TANH read y,
every other mode reads x (RELU accepts y alone).
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_enum, as_int, as_number

from .. import checks
from .. import dtypes as D
from .. import enums as E
from ..descriptors import Descriptor, lifecycle, live, ready
from .. import kernels
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg

_FIXED_MODES = {E.CNNL_ACTIVATION_RELU: "relu", E.CNNL_ACTIVATION_RELU6: "relu6",
                E.CNNL_ACTIVATION_SIGMOID: "sigmoid", E.CNNL_ACTIVATION_TANH: "tanh",
                E.CNNL_ACTIVATION_SILU: "silu", E.CNNL_ACTIVATION_LEAKYRELU: "leaky_relu",
                E.CNNL_ACTIVATION_ELU: "elu", E.CNNL_ACTIVATION_HARDSWISH: "hardswish"}
#: modelled operations per element of each kernel mode
_FLOPS = {"relu": 1, "relu6": 2, "leaky_relu": 2, "hardswish": 4, "sigmoid": 8, "tanh": 8, "silu": 9,
          "elu": 8, "gelu": 12, "gelu_tanh": 12}


class ActivationDescriptor(Descriptor):
    """cnnlActivationDescriptor_t."""

    c_type = "cnnlActivationDescriptor_t"
    setter = "cnnlSetActivationDescriptor"

    def __init__(self):
        super().__init__()
        self.mode = E.CNNL_ACTIVATION_RELU
        self.prefer = E.CNNL_ACTIVATION_HIGH_PRECISION
        self.nan = E.CNNL_NOT_PROPAGATE_NAN
        self.coef = 0.0
        self.sliced_dim = 0
        self.gamma = 0.0
        self.scale = 0.0
        self.is_result = False
        self.approximate = False

    def kernel_mode(self) -> tuple[str, float]:
        """(kernel mode name, its coefficient); NOT_SUPPORTED for modes or parameters the simulator lacks."""
        if self.mode in _FIXED_MODES:
            return _FIXED_MODES[self.mode], self.coef
        if self.mode == E.CNNL_ACTIVATION_GELU:
            return ("gelu_tanh" if self.approximate else "gelu"), 0.0
        if self.mode == E.CNNL_ACTIVATION_CLIPPED_RELU and self.coef == 6:
            return "relu6", 0.0
        if self.mode == E.CNNL_ACTIVATION_ELU_V2 and self.coef == 1 and self.scale == 1:
            return "elu", self.gamma
        raise NotSupportedFault(f"activation mode {self.mode} with coef={self.coef}, gamma={self.gamma}, "
                                f"scale={self.scale} is not supported", "activation_desc")


createActivationDescriptor, destroyActivationDescriptor = lifecycle(
    ActivationDescriptor, "cnnlCreateActivationDescriptor", "cnnlDestroyActivationDescriptor")


def _set(desc, mode, prefer, nan, coef, sliced_dim=0, gamma=0.0, scale=0.0, is_result=False,
         approximate=False) -> None:
    target = live(desc, ActivationDescriptor, "activation_desc")
    values = dict(
        mode=as_enum(mode, "mode", E.ACTIVATION_MODES, "cnnlActivationMode_t"),
        prefer=as_enum(prefer, "prefer", E.ACTIVATION_PREFERENCES, "cnnlActivationPreference_t"),
        nan=as_enum(nan, "nan", E.NAN_PROPAGATIONS, "cnnlNanPropagation_t"),
        coef=float(as_number(coef, "coef")), sliced_dim=as_int(sliced_dim, "sliced_dim"),
        gamma=float(as_number(gamma, "gamma")), scale=float(as_number(scale, "scale")),
        is_result=checks.flag(is_result, "is_result"), approximate=checks.flag(approximate, "approximate"))
    for name, value in values.items():
        setattr(target, name, value)
    target.is_set = True


@api("cnnlSetActivationDescriptor")
def setActivationDescriptor(activation_desc, mode, nan, coef) -> None:
    """cnnlSetActivationDescriptor(activation_desc, mode, relu_nan_opt, coef)."""
    _set(activation_desc, mode, E.CNNL_ACTIVATION_HIGH_PRECISION, nan, coef)


@api("cnnlSetActivationDescriptor_v2")
def setActivationDescriptor_v2(activation_desc, mode, prefer, nan, coef) -> None:
    """cnnlSetActivationDescriptor_v2(activation_desc, mode, prefer, nan_prop, coef)."""
    _set(activation_desc, mode, prefer, nan, coef)


@api("cnnlSetActivationDescriptor_v3")
def setActivationDescriptor_v3(activation_desc, mode, prefer, nan, coef, sliced_dim) -> None:
    """cnnlSetActivationDescriptor_v3(activation_desc, mode, prefer, nan_prop, coef, sliced_dim)."""
    _set(activation_desc, mode, prefer, nan, coef, sliced_dim)


@api("cnnlSetActivationDescriptor_v4")
def setActivationDescriptor_v4(activation_desc, mode, prefer, nan, coef, sliced_dim, gamma, scale) -> None:
    """cnnlSetActivationDescriptor_v4(activation_desc, mode, prefer, nan_prop, coef, sliced_dim, gamma, scale)."""
    _set(activation_desc, mode, prefer, nan, coef, sliced_dim, gamma, scale)


@api("cnnlSetActivationDescriptor_v5")
def setActivationDescriptor_v5(activation_desc, mode, prefer, nan, coef, sliced_dim, gamma, scale,
                               is_result) -> None:
    """cnnlSetActivationDescriptor_v5(activation_desc, mode, prefer, nan_prop, coef, sliced_dim, gamma, scale,
    is_result)."""
    _set(activation_desc, mode, prefer, nan, coef, sliced_dim, gamma, scale, is_result)


@api("cnnlSetActivationDescriptor_v6")
def setActivationDescriptor_v6(activation_desc, mode, prefer, nan, coef, sliced_dim, gamma, scale, is_result,
                               approximate) -> None:
    """cnnlSetActivationDescriptor_v6(activation_desc, mode, prefer, nan_prop, coef, sliced_dim, gamma, scale,
    is_result, approximate): `approximate` selects the tanh form of GELU."""
    _set(activation_desc, mode, prefer, nan, coef, sliced_dim, gamma, scale, is_result, approximate)


@api("cnnlGetActivationDescriptor")
def getActivationDescriptor(activation_desc) -> tuple[int, int, float]:
    """cnnlGetActivationDescriptor(activation_desc, &mode, &relu_nan_opt, &coef) -> (mode, nan, coef)."""
    target = ready(activation_desc, ActivationDescriptor, "activation_desc")
    return target.mode, target.nan, target.coef


@api("cnnlActivationForward")
def activationForward(handle, activation_desc, alpha, x_desc, x, beta, y_desc, y) -> None:
    """cnnlActivationForward(handle, activation_desc, alpha, x_desc, x, beta, y_desc, y): y = alpha*f(x) + beta*y
    (alpha/beta NULL = 1/0)."""
    with OpCall("cnnlActivationForward", handle) as call:
        mode, coef = ready(activation_desc, ActivationDescriptor, "activation_desc").kernel_mode()
        xd, yd = tensor_arg(x_desc, "x_desc"), tensor_arg(y_desc, "y_desc")
        checks.supported_dtype(xd, "x_desc", D.FLOATING, "cnnlActivationForward")
        checks.same_dtype(xd, "x_desc", (yd, "y_desc"))
        checks.same_shape(xd, "x_desc", (yd, "y_desc"))
        scale_in, scale_out = checks.scalar(alpha, "alpha", 1, xd.dtype), checks.scalar(beta, "beta", 0, xd.dtype)
        x_view = call.input(xd, x, "x")
        y_view = call.output(yd, y, "y", read=scale_out != 0)
        call.submit(lambda: kernels.activation_forward(mode, x_view, y_view, coef, scale_in, scale_out),
                    flops=yd.size * _FLOPS[mode], dtype=yd.dtype)


@api("cnnlActivationBackward")
def activationBackward(handle, activation_desc, alpha, y_desc, y, diff_y_desc, diff_y, x_desc, x, beta,
                       diff_x_desc, diff_x) -> None:
    """cnnlActivationBackward(handle, activation_desc, alpha, y_desc, y, diff_y_desc, diff_y, x_desc, x, beta,
    diff_x_desc, diff_x): diff_x = alpha*f'(x)*diff_y + beta*diff_x. SIGMOID/TANH need y (or x); the other modes
    need x (RELU: x or y). A tensor not needed may be NULL with a NULL descriptor."""
    with OpCall("cnnlActivationBackward", handle) as call:
        mode, coef = ready(activation_desc, ActivationDescriptor, "activation_desc").kernel_mode()
        dyd, dxd = tensor_arg(diff_y_desc, "diff_y_desc"), tensor_arg(diff_x_desc, "diff_x_desc")
        checks.supported_dtype(dyd, "diff_y_desc", D.FLOATING, "cnnlActivationBackward")
        given = {name: tensor_arg(desc, f"{name}_desc") for name, desc in (("x", x_desc), ("y", y_desc))
                 if desc is not None}
        needs = ("y", "x") if mode in ("sigmoid", "tanh", "relu") else ("x",)
        if not any(name in given for name in needs):
            raise ArgumentFault(f"{mode} backward needs {' or '.join(needs)}", f"{needs[0]}_desc")
        others = [(desc, f"{name}_desc") for name, desc in given.items()] + [(dxd, "diff_x_desc")]
        checks.same_dtype(dyd, "diff_y_desc", *others)
        checks.same_shape(dyd, "diff_y_desc", *others)
        scale_in, scale_out = checks.scalar(alpha, "alpha", 1, dyd.dtype), checks.scalar(beta, "beta", 0, dyd.dtype)
        pointers = {"x": x, "y": y}
        views = {name: call.input(desc, pointers[name], name) for name, desc in given.items()}
        dy_view = call.input(dyd, diff_y, "diff_y")
        dx_view = call.output(dxd, diff_x, "diff_x", read=scale_out != 0)
        call.submit(lambda: kernels.activation_backward(mode, dy_view, dx_view, x=views.get("x"), y=views.get("y"),
                                                        coef=coef, alpha=scale_in, beta=scale_out),
                    flops=dxd.size * (_FLOPS[mode] + 2), dtype=dxd.dtype)
