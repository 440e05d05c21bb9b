"""Linear algebra and complex numbers: cnnlGetQRWorkspaceSize, cnnlQR, cnnlGetPolarWorkspaceSize, cnnlPolar.

Argument orders from DeepLink DIOPI's Cambricon backend (functions/linalg_qr.cpp, polar.cpp). QR: a [..., m, n]
(2 to 8 dims) of HALF, BFLOAT16, FLOAT or DOUBLE; `some` (reduced) gives q [..., m, k], r [..., k, n] with
k = min(m, n), else q [..., m, m], r [..., m, n]. Polar: abs and angle FLOAT (or HALF) broadcasting to out,
COMPLEX_FLOAT (COMPLEX_HALF). Numerics in `cnnl.kernels.linalg` and `cnnl.kernels.polar`.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault

from .. import checks
from .. import enums as E
from ..handle import handle_arg
from ..kernels import linalg as L
from ..kernels import polar as P
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from . import nn_common as N

_COMPLEX_OF = {E.CNNL_DTYPE_FLOAT: E.CNNL_DTYPE_COMPLEX_FLOAT, E.CNNL_DTYPE_HALF: E.CNNL_DTYPE_COMPLEX_HALF}


def _qr_input(op, a_desc) -> TensorDescriptor:
    a = tensor_arg(a_desc, "a_desc")
    N.float_tensor(a, "a_desc", op)
    if len(a.dims) < 2:
        raise ArgumentFault(f"{len(a.dims)} dims; QR takes matrices [..., m, n]", "a_desc")
    return a


def _factor_dims(a: TensorDescriptor, reduced: bool):
    *batch, m, n = a.dims
    k = min(m, n) if reduced else m
    return tuple(batch) + (m, k), tuple(batch) + (k, n)


@api("cnnlGetQRWorkspaceSize")
def getQRWorkspaceSize(handle, a_desc, some) -> int:
    """cnnlGetQRWorkspaceSize(handle, a_desc, bool some, &size) -> size: a copy of a being factored in place."""
    handle_arg(handle)
    checks.flag(some, "some")
    a = _qr_input("cnnlQR", a_desc)
    return a.size * a.itemsize


@api("cnnlQR")
def qR(handle, a_desc, a, q_desc, q, r_desc, r, workspace, workspace_size, some) -> None:
    """cnnlQR(handle, a_desc, a, q_desc, q, r_desc, r, workspace, workspace_size, bool some): a = q r for every
    matrix of a (Householder QR; reduced when `some`)."""
    op = "cnnlQR"
    with OpCall(op, handle) as call:
        ad = _qr_input(op, a_desc)
        reduced = checks.flag(some, "some")
        q_dims, r_dims = _factor_dims(ad, reduced)
        factors = []
        for desc, arg, dims in ((q_desc, "q_desc", q_dims), (r_desc, "r_desc", r_dims)):
            target = tensor_arg(desc, arg)
            checks.same_dtype(ad, "a_desc", (target, arg))
            if target.dims != dims:
                raise ArgumentFault(f"dims {list(target.dims)}; expected {list(dims)}", arg)
            factors.append(target)
        av = call.input(ad, a, "a")
        qv, rv = call.output(factors[0], q, "q"), call.output(factors[1], r, "r")
        call.workspace(workspace, workspace_size, ad.size * ad.itemsize, "cnnlGetQRWorkspaceSize")
        m, n = ad.dims[-2:]
        call.submit(lambda: L.qr(av, qv, rv, reduced), flops=4.0 * (ad.size // max(m * n, 1)) * m * n * min(m, n),
                    dtype=ad.dtype)


def _polar_operands(op, abs_desc, angle_desc, out_desc):
    radius, angle = tensor_arg(abs_desc, "abs_desc"), tensor_arg(angle_desc, "angle_desc")
    checks.supported_dtype(radius, "abs_desc", tuple(_COMPLEX_OF), op)
    checks.same_dtype(radius, "abs_desc", (angle, "angle_desc"))
    out = tensor_arg(out_desc, "out_desc")
    if out.dtype != _COMPLEX_OF[radius.dtype]:
        raise ArgumentFault(f"the output of {radius.dtype} inputs is complex data type {_COMPLEX_OF[radius.dtype]}, "
                            f"not {out.dtype}", "out_desc")
    checks.broadcasts_to(out, "out_desc", (radius, "abs_desc"), (angle, "angle_desc"))
    return radius, angle, out


def _parts(out: TensorDescriptor, part_dtype: int) -> TensorDescriptor:
    """The complex tensor as a real one with a trailing axis of (real, imaginary)."""
    parts = TensorDescriptor()
    parts.assign(E.CNNL_LAYOUT_ARRAY, part_dtype, out.dims + (2,), tuple(2 * s for s in out.strides) + (1,))
    return parts


@api("cnnlGetPolarWorkspaceSize")
def getPolarWorkspaceSize(handle, abs_desc, angle_desc, out_desc) -> int:
    """cnnlGetPolarWorkspaceSize(handle, abs_desc, angle_desc, out_desc, &size) -> size (0)."""
    handle_arg(handle)
    _polar_operands("cnnlPolar", abs_desc, angle_desc, out_desc)
    return 0


@api("cnnlPolar")
def polar(handle, abs_desc, abs, angle_desc, angle, out_desc, out, workspace, workspace_size) -> None:  # noqa: A002
    """cnnlPolar(handle, abs_desc, abs, angle_desc, angle, out_desc, out, workspace, workspace_size):
    out = abs * (cos(angle) + i sin(angle)), abs and angle broadcasting to out."""
    op = "cnnlPolar"
    with OpCall(op, handle) as call:
        rd, ad, od = _polar_operands(op, abs_desc, angle_desc, out_desc)
        rv, av = call.input(rd, abs, "abs"), call.input(ad, angle, "angle")
        parts = call.output(_parts(od, rd.dtype), out, "out")
        call.workspace(workspace, workspace_size, 0, "cnnlGetPolarWorkspaceSize")
        call.submit(lambda: P.polar(rv, av, parts[..., 0], parts[..., 1]), flops=20 * od.size, dtype=rd.dtype)
