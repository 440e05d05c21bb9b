"""Pairwise distances: cnnlCdistForward and cnnlCdistBackward (PyTorch's torch.cdist and its gradient with respect
to the first input).

Argument orders from DeepLink DIOPI's Cambricon backend (functions/cdist.cpp), which expands the batch dims first:
x1 [B, R1, M], x2 [B, R2, M] (or the 2-D [R, M] forms without batch), out and grad [B, R1, R2]; HALF, BFLOAT16,
FLOAT or DOUBLE, all alike; any p >= 0 including inf. Numerics in `cnnl.kernels.cdist`.
"""
from __future__ import annotations

import math

from mlusim.errors import ArgumentFault
from mlusim.validate import as_number

from .. import checks
from ..kernels import cdist as K
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from . import nn_common as N


def _norm(value) -> float:
    p = float(as_number(value, "p"))
    if not p >= 0:
        raise ArgumentFault(f"p {p} must be >= 0", "p")
    return p


def _batched(view):
    return view if view.ndim == 3 else view[None]


def _pair(op, x1_desc, x2_desc):
    a, b = tensor_arg(x1_desc, "x1_desc"), tensor_arg(x2_desc, "x2_desc")
    N.float_tensor(a, "x1_desc", op)
    checks.same_dtype(a, "x1_desc", (b, "x2_desc"))
    if len(a.dims) not in (2, 3) or len(b.dims) != len(a.dims):
        raise ArgumentFault(f"dims {list(a.dims)} and {list(b.dims)}; cdist takes [B, R, M] or [R, M] pairs",
                            "x1_desc")
    if a.dims[:-2] != b.dims[:-2] or a.dims[-1] != b.dims[-1]:
        raise ArgumentFault(f"dims {list(b.dims)} do not pair with x1's {list(a.dims)} (same batch and M)",
                            "x2_desc")
    return a, b


def _distance_dims(a: TensorDescriptor, b: TensorDescriptor):
    return a.dims[:-1] + (b.dims[-2],)


def _matching(desc, arg, dims, a: TensorDescriptor) -> TensorDescriptor:
    target = tensor_arg(desc, arg)
    checks.same_dtype(a, "x1_desc", (target, arg))
    if target.dims != tuple(dims):
        raise ArgumentFault(f"dims {list(target.dims)}; expected {list(dims)}", arg)
    return target


def _flops(a: TensorDescriptor, b: TensorDescriptor) -> float:
    return 3.0 * math.prod(a.dims[:-1]) * b.dims[-2] * a.dims[-1]


@api("cnnlCdistForward")
def cdistForward(handle, x1_desc, x1, x2_desc, x2, p, y_desc, y) -> None:
    """cnnlCdistForward(handle, x1_desc, x1, x2_desc, x2, double p, y_desc, y): y[b, i, j] = ||x1[b, i] -
    x2[b, j]||_p."""
    op = "cnnlCdistForward"
    with OpCall(op, handle) as call:
        a, b = _pair(op, x1_desc, x2_desc)
        norm = _norm(p)
        yd = _matching(y_desc, "y_desc", _distance_dims(a, b), a)
        av, bv, yv = call.input(a, x1, "x1"), call.input(b, x2, "x2"), call.output(yd, y, "y")
        call.submit(lambda: K.cdist(_batched(av), _batched(bv), norm, _batched(yv)), flops=_flops(a, b),
                    dtype=a.dtype)


@api("cnnlCdistBackward")
def cdistBackward(handle, x1_desc, x1, x2_desc, x2, cdist_desc, cdist, grad_desc, grad, p, grad_x1_desc,
                  grad_x1) -> None:
    """cnnlCdistBackward(handle, x1_desc, x1, x2_desc, x2, cdist_desc, cdist, grad_desc, grad, double p,
    grad_x1_desc, grad_x1): the gradient of cdist with respect to x1, from its forward output `cdist`."""
    op = "cnnlCdistBackward"
    with OpCall(op, handle) as call:
        a, b = _pair(op, x1_desc, x2_desc)
        norm = _norm(p)
        dims = _distance_dims(a, b)
        dd, gd = _matching(cdist_desc, "cdist_desc", dims, a), _matching(grad_desc, "grad_desc", dims, a)
        od = _matching(grad_x1_desc, "grad_x1_desc", a.dims, a)
        views = [call.input(a, x1, "x1"), call.input(b, x2, "x2"), call.input(dd, cdist, "cdist"),
                 call.input(gd, grad, "grad")]
        ov = call.output(od, grad_x1, "grad_x1")
        call.submit(lambda: K.cdist_backward(*[_batched(v) for v in views], norm, _batched(ov)),
                    flops=2 * _flops(a, b), dtype=a.dtype)
