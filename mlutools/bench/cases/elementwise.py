"""Cases of the elementwise family (docs/cnnl_elementwise.md): unary and binary math, arithmetic, special functions,
activations and thresholds, casts, select, bias, optimizer steps, the foreach lists. References: the numpy ufunc
doing the same work (in float32 for 16-bit types where numpy has no half kernel)."""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

import cnnl

from .base import (DEVICE, DTYPES, FEATURE_MAP, HIGH, HOST, NHWC, SUITE_ELEMENTS, Build, Case, f32, scalar_pointer,
                   sigmoid)
from ..op_bench import OpBench


def unary(function: Callable, numpy_op: Callable, *leading, positive: bool = False) -> Build:
    """y = f(x) with `function(handle, *leading, x_desc, x, y_desc, y)`."""
    def build(arena, shape, dtype):
        (x, values), y = arena.random(shape, dtype, positive), arena.empty(shape, dtype)
        out = np.empty_like(values)
        return (lambda: function(arena.handle, *leading, x.desc, x.ptr, y.desc, y.ptr),
                lambda: numpy_op(values, out=out))
    return build


def op_tensor(op: int, numpy_op: Callable) -> Build:
    def build(arena, shape, dtype):
        (a, av), (b, bv), c = arena.random(shape, dtype), arena.random(shape, dtype), arena.empty(shape, dtype)
        desc = cnnl.createOpTensorDescriptor()
        cnnl.setOpTensorDescriptor(desc, op, DTYPES[dtype][0], cnnl.CNNL_NOT_PROPAGATE_NAN)
        workspace, size = arena.workspace(cnnl.getOpTensorWorkspaceSize(arena.handle, a.desc, b.desc, c.desc))
        out = np.empty_like(av)
        return (lambda: cnnl.opTensor(arena.handle, desc, 1, a.desc, a.ptr, 1, b.desc, b.ptr, workspace, size, 0,
                                      c.desc, c.ptr),
                lambda: numpy_op(av, bv, out=out))
    return build


def binary(function: Callable, numpy_op: Callable, query: Optional[Callable] = None, prefer: bool = True,
           positive: bool = False) -> Build:
    """z = f(x, y) in the (handle, [prefer,] x_desc, x, y_desc, y, workspace, size, z_desc, z) form."""
    def build(arena, shape, dtype):
        (x, xv), (y, yv) = arena.random(shape, dtype, positive), arena.random(shape, dtype, positive)
        z = arena.empty(shape, dtype)
        workspace, size = arena.workspace(query(arena.handle, x.desc, y.desc, z.desc) if query else 0)
        leading = (cnnl.CNNL_COMPUTATION_HIGH_PRECISION,) if prefer else ()
        out = np.empty_like(xv)
        return (lambda: function(arena.handle, *leading, x.desc, x.ptr, y.desc, y.ptr, workspace, size, z.desc,
                                 z.ptr),
                lambda: numpy_op(xv, yv, out=out))
    return build


def extremum(function: Callable, query: Callable, numpy_op: Callable) -> Build:
    """c = max/min(a, b) in the (handle, a_desc, a, b_desc, b, c_desc, c, workspace, size) form."""
    def build(arena, shape, dtype):
        (a, av), (b, bv), c = arena.random(shape, dtype), arena.random(shape, dtype), arena.empty(shape, dtype)
        workspace, size = arena.workspace(query(arena.handle, c.desc))
        out = np.empty_like(av)
        return (lambda: function(arena.handle, a.desc, a.ptr, b.desc, b.ptr, c.desc, c.ptr, workspace, size),
                lambda: numpy_op(av, bv, out=out))
    return build


def logic_op(arena, shape, dtype):
    (a, av), (b, bv) = arena.random(shape, dtype), arena.random(shape, dtype)
    c = arena.empty(shape, "bool")
    op = cnnl.CNNL_LOGIC_OP_LT
    workspace, size = arena.workspace(cnnl.getLogicOpWorkspaceSize(arena.handle, a.desc, b.desc, c.desc))
    out = np.empty(shape, np.bool_)
    return (lambda: cnnl.logicOp(arena.handle, op, a.desc, a.ptr, b.desc, b.ptr, workspace, size, c.desc, c.ptr),
            lambda: np.less(av, bv, out=out))


def _activation_descriptor(mode: int):
    desc = cnnl.createActivationDescriptor()
    cnnl.setActivationDescriptor(desc, mode, cnnl.CNNL_NOT_PROPAGATE_NAN, 0.0)
    return desc


def activation_forward(mode: int, numpy_op: Callable) -> Build:
    def build(arena, shape, dtype):
        (x, values), y = arena.random(shape, dtype), arena.empty(shape, dtype)
        desc = _activation_descriptor(mode)
        return (lambda: cnnl.activationForward(arena.handle, desc, None, x.desc, x.ptr, None, y.desc, y.ptr),
                lambda: numpy_op(values))
    return build


def sigmoid_backward(arena, shape, dtype):
    (y, yv), (dy, dyv), dx = arena.random(shape, dtype, True), arena.random(shape, dtype), arena.empty(shape, dtype)
    desc = _activation_descriptor(cnnl.CNNL_ACTIVATION_SIGMOID)
    return (lambda: cnnl.activationBackward(arena.handle, desc, None, y.desc, y.ptr, dy.desc, dy.ptr, None, None,
                                            None, dx.desc, dx.ptr),
            lambda: dyv * yv * (1 - yv))


def cast_to(target: str) -> Build:
    def build(arena, shape, dtype):
        (x, values), y = arena.random(shape, dtype), arena.empty(shape, target)
        cast = getattr(cnnl, f"CNNL_CAST_{dtype.upper()}_TO_{target.upper()}")
        return (lambda: cnnl.castDataType(arena.handle, x.desc, x.ptr, cast, y.desc, y.ptr),
                lambda: values.astype(DTYPES[target][1]))
    return build


def select(arena, shape, dtype):
    (condition, cv), (then, tv), (other, ov) = (arena.random(shape, "bool"), arena.random(shape, dtype),
                                                arena.random(shape, dtype))
    out = arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getSelectV2WorkspaceSize(arena.handle, condition.desc, then.desc,
                                                                    other.desc))
    return (lambda: cnnl.selectV2(arena.handle, condition.desc, condition.ptr, then.desc, then.ptr, other.desc,
                                  other.ptr, workspace, size, out.desc, out.ptr),
            lambda: np.where(cv, tv, ov))


def addc(divide: bool):
    """addcmul / addcdiv with a broadcast row vector as tensor2."""
    def build(arena, shape, dtype):
        (x, xv), (a, av) = arena.random(shape, dtype), arena.random(shape, dtype)
        b, bv = arena.random((shape[-1],), dtype, positive=True)
        out = arena.empty(shape, dtype)
        query, op = (cnnl.getAddcdivWorkspaceSize, cnnl.addcdiv) if divide else (cnnl.getAddcmulWorkspaceSize,
                                                                                 cnnl.addcmul)
        workspace, size = arena.workspace(query(arena.handle, x.desc, a.desc, b.desc))
        x32, a32, b32 = f32(xv), f32(av), f32(bv)
        return (lambda: op(arena.handle, x.desc, x.ptr, 0.5, a.desc, a.ptr, b.desc, b.ptr, workspace, size, out.desc,
                           out.ptr),
                lambda: x32 + 0.5 * a32 / b32 if divide else x32 + 0.5 * a32 * b32)
    return build


def lerp(arena, shape, dtype):
    (x, xv), (e, ev), (w, wv) = (arena.random(shape, dtype) for _ in range(3))
    out = arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getLerpWorkspaceSize(arena.handle, x.desc, e.desc, w.desc, out.desc))
    x32, e32, w32 = f32(xv), f32(ev), f32(wv)
    return (lambda: cnnl.lerp(arena.handle, x.desc, x.ptr, e.desc, e.ptr, w.desc, w.ptr, workspace, size, out.desc,
                              out.ptr),
            lambda: x32 + w32 * (e32 - x32))


def atan2(arena, shape, dtype):
    (a, av), (b, bv) = arena.random(shape, dtype), arena.random(shape, dtype)
    out = arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getAtan2WorkspaceSize(arena.handle, a.desc, b.desc, out.desc))
    a32, b32 = f32(av), f32(bv)
    return (lambda: cnnl.atan2(arena.handle, HIGH, a.desc, a.ptr, b.desc, b.ptr, workspace, size, out.desc, out.ptr),
            lambda: np.arctan2(a32, b32))


def division(name: str):
    """floor division, truncating division, floor modulo or truncating modulo (fmod) of positive operands."""
    query, numpy_op = {"floor": (cnnl.getFloorDivWorkspaceSize, np.floor_divide),
                       "trunc": (cnnl.getFloorDivTruncWorkspaceSize, lambda a, b: np.trunc(a / b)),
                       "mod": (cnnl.getFloorModWorkspaceSize, np.remainder),
                       "fmod": (cnnl.getFloorModTruncWorkspaceSize, np.fmod)}[name]

    def build(arena, shape, dtype):
        (a, av), (b, bv) = arena.random(shape, dtype), arena.random(shape, dtype, positive=True)
        out = arena.empty(shape, dtype)
        workspace, size = arena.workspace(query(arena.handle, a.desc, b.desc, out.desc))
        if name == "floor":
            call = lambda: cnnl.floorDiv_v2(arena.handle, HIGH, a.desc, a.ptr, b.desc, b.ptr, out.desc, out.ptr,  # noqa
                                            workspace, size)
        elif name == "trunc":
            call = lambda: cnnl.floorDivTrunc(arena.handle, HIGH, a.desc, a.ptr, b.desc, b.ptr, out.desc,  # noqa
                                              out.ptr, workspace, size)
        else:
            function = cnnl.floorMod if name == "mod" else cnnl.floorModTrunc
            call = lambda: function(arena.handle, a.desc, a.ptr, b.desc, b.ptr, out.desc, out.ptr,  # noqa
                                    workspace, size)
        a32, b32 = f32(av), f32(bv)
        return call, lambda: numpy_op(a32, b32)
    return build


def mul_n(arena, shape, dtype):
    (a, av), (b, bv), (c, cv) = (arena.random(shape, dtype) for _ in range(3))
    out = arena.empty(shape, dtype)
    a32, b32, c32 = f32(av), f32(bv), f32(cv)
    return (lambda: cnnl.mulN(arena.handle, [a.desc, b.desc, c.desc], [a.ptr, b.ptr, c.ptr], out.desc, out.ptr),
            lambda: a32 * b32 * c32)


def transform(arena, shape, dtype):
    (x, xv), out = arena.random(shape, dtype), arena.empty(shape, dtype)
    x32 = f32(xv)
    return (lambda: cnnl.transform_v2(arena.handle, HOST, 2.0, x.desc, x.ptr, 0.5, out.desc, out.ptr),
            lambda: 2.0 * x32 + 0.5)


def clip(arena, shape, dtype):
    (x, xv), out = arena.random(shape, dtype), arena.empty(shape, dtype)
    low, high = scalar_pointer(arena, -0.5, dtype), scalar_pointer(arena, 0.5, dtype)
    return (lambda: cnnl.clip_v2(arena.handle, DEVICE, x.desc, x.ptr, low, high, out.desc, out.ptr),
            lambda: np.clip(xv, -0.5, 0.5))


def bit_and(arena, shape, dtype):
    (a, av), (b, bv) = arena.random(shape, dtype), arena.random(shape, dtype)
    out = arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getBitComputeWorkspaceSize(arena.handle, a.desc, b.desc, out.desc))
    result = np.empty_like(av)
    return (lambda: cnnl.bitCompute_v2(arena.handle, cnnl.CNNL_CYCLE_BAND_OP, a.desc, a.ptr, b.desc, b.ptr, out.desc,
                                       out.ptr, workspace, size),
            lambda: np.bitwise_and(av, bv, out=result))


def unary_by_name(name: str, numpy_op, leading=(), positive: bool = False, low=None, high=None, out_dtype=None):
    """y = cnnl.<name>(x) in the (handle, *leading, x_desc, x, y_desc, y) form; the reference in float32."""
    def build(arena, shape, dtype):
        if low is not None:
            x, xv = arena.between(shape, dtype, low, high)
        else:
            x, xv = arena.random(shape, dtype, positive)
        y = arena.empty(shape, out_dtype or dtype)
        x32 = f32(xv)
        return (lambda: getattr(cnnl, name)(arena.handle, *leading, x.desc, x.ptr, y.desc, y.ptr),
                lambda: numpy_op(x32))
    return build


def erf_reference(values: np.ndarray) -> np.ndarray:
    """erf in numpy (Abramowitz-Stegun 7.1.26, |error| < 1.5e-7): the work of one vectorised evaluation."""
    t = 1.0 / (1.0 + 0.3275911 * np.abs(values))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(values) * (1.0 - poly * np.exp(-values * values))


def erfinv_reference(values: np.ndarray) -> np.ndarray:
    """erfinv's starting approximation (Giles) in numpy: the rational part of the op's evaluation."""
    w = -np.log((1.0 - values) * (1.0 + values))
    central = w < 5.0
    x = np.where(central, w - 2.5, np.sqrt(np.maximum(w, 5.0)) - 3.0)
    p = np.where(central, 1.50140941 + x * 0.246640727, 2.83297682 + x * 1.00167406)
    return p * values


def threshold(arena, shape, dtype):
    (x, xv), y = arena.random(shape, dtype), arena.empty(shape, dtype)
    return (lambda: cnnl.threshold(arena.handle, x.desc, x.ptr, 0.25, -1.0, y.desc, y.ptr),
            lambda: np.where(xv <= 0.25, -1.0, xv))


def threshold_backward(arena, shape, dtype):
    (x, xv), (dy, dyv), dx = arena.random(shape, dtype), arena.random(shape, dtype), arena.empty(shape, dtype)
    return (lambda: cnnl.thresholdBackward(arena.handle, x.desc, x.ptr, dy.desc, dy.ptr, 0.25, dx.desc, dx.ptr),
            lambda: np.where(xv <= 0.25, 0, dyv))


def hardtanh(arena, shape, dtype):
    (x, xv), y = arena.random(shape, dtype), arena.empty(shape, dtype)
    return (lambda: cnnl.hardtanh(arena.handle, x.desc, x.ptr, 0.5, -0.5, y.desc, y.ptr),
            lambda: np.minimum(np.maximum(xv, -0.5), 0.5))


def hardtanh_backward(arena, shape, dtype):
    (x, xv), (dy, dyv), dx = arena.random(shape, dtype), arena.random(shape, dtype), arena.empty(shape, dtype)
    return (lambda: cnnl.hardtanhBackward(arena.handle, x.desc, x.ptr, dy.desc, dy.ptr, 0.5, -0.5, dx.desc, dx.ptr),
            lambda: np.where((xv > -0.5) & (xv < 0.5), dyv, 0))


def bias_add(arena, shape, dtype):
    """y += bias over the channels of an NHWC feature map (base.FEATURE_MAP)."""
    (y, yv), (bias, bv) = arena.random(shape, dtype, layout=NHWC), arena.random((shape[-1],), dtype)
    workspace, size = arena.workspace(cnnl.getBiasAddWorkspaceSize(arena.handle, bias.desc, y.desc))
    y32, b32 = f32(yv), f32(bv)
    return (lambda: cnnl.biasAdd(arena.handle, 1.0, bias.desc, bias.ptr, workspace, size, 1.0, y.desc, y.ptr),
            lambda: y32 + b32)


def bias_add_backward(arena, shape, dtype):
    (dy, dyv), db = arena.random(shape, dtype, layout=NHWC), arena.empty((shape[-1],), dtype)
    axis = len(shape) - 1
    workspace, size = arena.workspace(cnnl.getBiasAddBackwardWorkspaceSize(arena.handle, dy.desc, db.desc, axis))
    dy32 = f32(dyv)
    return (lambda: cnnl.biasAddBackward_v2(arena.handle, dy.desc, dy.ptr, axis, db.desc, db.ptr, workspace, size),
            lambda: dy32.sum(axis=tuple(range(axis))))


def gradient_descent(arena, shape, dtype):
    (p, pv), (g, gv) = arena.random(shape, dtype), arena.random(shape, dtype)
    lr = scalar_pointer(arena, 0.1, dtype)
    p32, g32 = f32(pv), f32(gv)
    return (lambda: cnnl.gradientDescent(arena.handle, g.desc, g.ptr, lr, p.desc, p.ptr), lambda: p32 - 0.1 * g32)


def adadelta(arena, shape, dtype):
    (p, pv), (g, gv) = arena.random(shape, dtype), arena.random(shape, dtype)
    (a, av), (u, uv) = arena.random(shape, dtype, positive=True), arena.random(shape, dtype, positive=True)
    lr, rho, eps = (scalar_pointer(arena, v, dtype) for v in (1.0, 0.9, 1e-6))
    p32, g32, a32, u32 = f32(pv), f32(gv), f32(av), f32(uv)

    def reference():
        average = 0.9 * a32 + 0.1 * g32 * g32
        delta = np.sqrt(u32 + 1e-6) / np.sqrt(average + 1e-6) * g32
        return p32 - delta, average, 0.9 * u32 + 0.1 * delta * delta
    return (lambda: cnnl.applyAdadelta(arena.handle, p.desc, p.ptr, a.desc, a.ptr, u.desc, u.ptr, g.desc, g.ptr, lr,
                                       rho, eps),
            reference)


def trigon(arena, shape, dtype):
    """cnnlTrigonForward (asin) against np.arcsin."""
    (x, xv), y = arena.between(shape, dtype, -1, 1), arena.empty(shape, dtype)
    desc = cnnl.createTrigonDescriptor()
    cnnl.setTrigonDescriptor_v2(desc, cnnl.CNNL_TRIGON_ASIN, cnnl.CNNL_COMPUTATION_HIGH_PRECISION)
    out = np.empty_like(xv)
    return lambda: cnnl.trigonForward(arena.handle, desc, x.desc, x.ptr, y.desc, y.ptr), lambda: np.arcsin(xv, out=out)


FOREACH_TENSORS = 8


def _foreach_lists(arena, shape, dtype, count: int, positive: bool = False):
    """`count` lists of FOREACH_TENSORS tensors splitting `shape`'s rows (an optimizer's parameter list), their
    host copies, one list of outputs and the reference's host outputs: ((descs, pointers, host arrays) per list,
    (descs, pointers), host outputs)."""
    rows = max(shape[0] // FOREACH_TENSORS, 1)
    part = (rows,) + tuple(shape[1:])
    lists = []
    for _ in range(count):
        made = [arena.random(part, dtype, positive) for _ in range(FOREACH_TENSORS)]
        lists.append(([t.desc for t, _ in made], [t.ptr for t, _ in made], [f32(v) for _, v in made]))
    outs = [arena.empty(part, dtype) for _ in range(FOREACH_TENSORS)]
    return lists, ([t.desc for t in outs], [t.ptr for t in outs]), [np.empty_like(v) for v in lists[0][2]]


def _each(step, *lists):
    """The reference: `step(*arrays)` for each position of the lists."""
    def run():
        for arrays in zip(*lists):
            step(*arrays)
    return run


def foreach_binary(arena, shape, dtype):
    """cnnlForeachBinaryOp: a + alpha * b over two lists (torch's _foreach_add(list, list, alpha))."""
    ((ad, ap, av), (bd, bp, bv)), (od, op), host = _foreach_lists(arena, shape, dtype, 2)
    workspace, size = arena.workspace(cnnl.getForeachBinaryOpWorkspaceSize(arena.handle, ad))

    def step(a, b, o):
        np.multiply(b, 0.5, out=o)
        np.add(a, o, out=o)
    return (lambda: cnnl.foreachBinaryOp(arena.handle, cnnl.CNNL_FOREACH_ADD, cnnl.FOREACH_BINARY_TENSOR_LIST, ad, ap,
                                         bd, bp, None, None, 0.5, workspace, size, od, op),
            _each(step, av, bv, host))


def foreach_sqrt(arena, shape, dtype):
    """cnnlForeachUnaryOp_v2 (sqrt) over a list."""
    ((xd, xp, xv),), (od, op), host = _foreach_lists(arena, shape, dtype, 1, positive=True)
    workspace, size = arena.workspace(cnnl.getForeachUnaryOpWorkspaceSize(arena.handle, xd))
    return (lambda: cnnl.foreachUnaryOp_v2(arena.handle, cnnl.CNNL_FOREACH_SQRT, HIGH, xd, xp, workspace, size,
                                           od, op),
            _each(lambda x, o: np.sqrt(x, out=o), xv, host))


def foreach_addcdiv(arena, shape, dtype):
    """cnnlForeachPointwiseOp (addcdiv with one value): Adam's update step over a parameter list."""
    ((xd, xp, xv), (ad, ap, av), (bd, bp, bv)), (od, op), host = _foreach_lists(arena, shape, dtype, 3,
                                                                               positive=True)

    def step(x, a, b, o):
        np.divide(a, b, out=o)
        np.multiply(o, -0.01, out=o)
        np.add(x, o, out=o)
    return (lambda: cnnl.foreachPointwiseOp(arena.handle, cnnl.CNNL_FOREACH_ADDCDIV, cnnl.FOREACH_POINTWISE_SCALAR,
                                            xd, xp, ad, ap, bd, bp, -0.01, od, op),
            _each(step, xv, av, bv, host))


def foreach_lerp(arena, shape, dtype):
    """cnnlForeachLerp with one weight (an exponential moving average of a list)."""
    ((xd, xp, xv), (ed, ep, ev)), (od, op), host = _foreach_lists(arena, shape, dtype, 2)
    workspace, size = arena.workspace(cnnl.getForeachLerpExtraInputSize(arena.handle, cnnl.FOREACH_LERP_SCALAR, xd))

    def step(x, e, o):
        np.subtract(e, x, out=o)
        np.multiply(o, 0.1, out=o)
        np.add(x, o, out=o)
    return (lambda: cnnl.foreachLerp(arena.handle, cnnl.FOREACH_LERP_SCALAR, xd, xp, ed, ep, None, 0.1, workspace,
                                     size, od, op),
            _each(step, xv, ev, host))


#: the cases of this family, in the order the table lists them
CASES = (
    Case("abs", "cnnlAbs", unary(cnnl.abs, np.abs)),
    Case("neg", "cnnlNegTensor", unary(cnnl.negTensor, np.negative)),
    Case("exp", "cnnlExp_v2", unary(cnnl.exp_v2, np.exp, cnnl.CNNL_COMPUTATION_HIGH_PRECISION)),
    Case("log", "cnnlLog_v2", unary(cnnl.log_v2, np.log, cnnl.CNNL_COMPUTATION_HIGH_PRECISION, cnnl.CNNL_LOG_E,
                                        positive=True)),
    Case("sqrt", "cnnlSqrt_v2", unary(cnnl.sqrt_v2, np.sqrt, cnnl.CNNL_COMPUTATION_HIGH_PRECISION, positive=True)),
    Case("rsqrt", "cnnlRsqrt_v2", unary(cnnl.rsqrt_v2, lambda x, out: np.divide(1, np.sqrt(x, out=out), out=out),
                                            cnnl.CNNL_COMPUTATION_HIGH_PRECISION, positive=True)),
    Case("square", "cnnlSquare", unary(cnnl.square, np.square)),
    Case("reciprocal", "cnnlReciprocal", unary(cnnl.reciprocal, np.reciprocal, positive=True)),
    Case("sin", "cnnlSin_v2", unary(cnnl.sin_v2, np.sin, cnnl.CNNL_COMPUTATION_HIGH_PRECISION)),
    Case("cos", "cnnlCos_v2", unary(cnnl.cos_v2, np.cos, cnnl.CNNL_COMPUTATION_HIGH_PRECISION)),
    Case("floor", "cnnlFloor", unary(cnnl.floor, np.floor)),
    Case("ceil", "cnnlCeil", unary(cnnl.ceil, np.ceil)),
    Case("round", "cnnlRound", unary(cnnl.round, np.rint)),
    Case("sign", "cnnlSign", unary(cnnl.sign, np.sign)),
    Case("add", "cnnlOpTensor", op_tensor(cnnl.CNNL_OP_TENSOR_ADD, np.add)),
    Case("mul", "cnnlOpTensor", op_tensor(cnnl.CNNL_OP_TENSOR_MUL, np.multiply)),
    Case("div", "cnnlDiv_v2", binary(cnnl.div_v2, np.divide, cnnl.getDivWorkspaceSize, positive=True)),
    Case("pow", "cnnlPow", binary(cnnl.pow, np.power, cnnl.getPowWorkspaceSize, positive=True)),
    Case("maximum", "cnnlMaximum", extremum(cnnl.maximum, cnnl.getMaximumWorkspaceSize, np.maximum)),
    Case("minimum", "cnnlMinimum", extremum(cnnl.minimum, cnnl.getMinimumWorkspaceSize, np.minimum)),
    Case("logic lt", "cnnlLogicOp", logic_op),
    Case("relu", "cnnlActivationForward", activation_forward(cnnl.CNNL_ACTIVATION_RELU, lambda x: np.maximum(x, 0))),
    Case("sigmoid", "cnnlActivationForward", activation_forward(cnnl.CNNL_ACTIVATION_SIGMOID, sigmoid)),
    Case("sigmoid backward", "cnnlActivationBackward", sigmoid_backward),
    Case("cast to half", "cnnlCastDataType", cast_to("half"), dtypes=("float",)),
    Case("cast to float", "cnnlCastDataType", cast_to("float"), dtypes=("half", "bfloat16")),
    Case("select", "cnnlSelectV2", select),
    Case("addcmul", "cnnlAddcmul", addc(False)),
    Case("addcdiv", "cnnlAddcdiv", addc(True)),
    Case("lerp", "cnnlLerp", lerp),
    Case("atan2", "cnnlAtan2", atan2),
    Case("floor div", "cnnlFloorDiv_v2", division("floor")),
    Case("trunc div", "cnnlFloorDivTrunc", division("trunc")),
    Case("floor mod", "cnnlFloorMod", division("mod")),
    Case("trunc mod", "cnnlFloorModTrunc", division("fmod")),
    Case("mul n", "cnnlMulN", mul_n),
    Case("transform", "cnnlTransform_v2", transform),
    Case("clip", "cnnlClip_v2", clip),
    Case("bitwise and", "cnnlBitCompute_v2", bit_and, dtypes=("int32",)),
    Case("erf", "cnnlErf_v2", unary_by_name("erf_v2", erf_reference, (cnnl.CNNL_COMPUTATION_HIGH_PRECISION,)),
             reference="numpy erf approximation"),
    Case("erfinv", "cnnlErfinv", unary_by_name("erfinv", erfinv_reference,
                                               (cnnl.CNNL_COMPUTATION_HIGH_PRECISION,), low=-0.99, high=0.99),
             reference="numpy erfinv approximation"),
    Case("log v1", "cnnlLog", unary_by_name("log", np.log, (cnnl.CNNL_LOG_E,), positive=True)),
    Case("trunc", "cnnlTrunc", unary_by_name("trunc", np.trunc)),
    Case("expm1", "cnnlExpm1", unary_by_name("expm1", np.expm1, (cnnl.CNNL_COMPUTATION_HIGH_PRECISION,))),
    Case("log1p", "cnnlLog1p", unary_by_name("log1p", np.log1p, (cnnl.CNNL_COMPUTATION_HIGH_PRECISION,),
                                             positive=True)),
    Case("isnan", "cnnlIsNan", unary_by_name("isNan", np.isnan, out_dtype="bool")),
    Case("threshold", "cnnlThreshold", threshold),
    Case("threshold bwd", "cnnlThresholdBackward", threshold_backward),
    Case("hardtanh", "cnnlHardtanh", hardtanh),
    Case("hardtanh bwd", "cnnlHardtanhBackward", hardtanh_backward),
    Case("bias add", "cnnlBiasAdd", bias_add, shapes=FEATURE_MAP),
    Case("bias add bwd", "cnnlBiasAddBackward_v2", bias_add_backward, shapes=FEATURE_MAP),
    Case("sgd step", "cnnlGradientDescent", gradient_descent),
    Case("adadelta step", "cnnlApplyAdadelta", adadelta),
    Case("trigon asin", "cnnlTrigonForward", trigon),
    Case("foreach add", "cnnlForeachBinaryOp", foreach_binary, exercises=("cnnlGetForeachBinaryOpWorkspaceSize",)),
    Case("foreach sqrt", "cnnlForeachUnaryOp_v2", foreach_sqrt, exercises=("cnnlGetForeachUnaryOpWorkspaceSize",)),
    Case("foreach addcdiv", "cnnlForeachPointwiseOp", foreach_addcdiv),
    Case("foreach lerp", "cnnlForeachLerp", foreach_lerp, exercises=("cnnlGetForeachLerpExtraInputSize",)),
)


# ---- the cnnl suite: 2^24-element float32 ops against numpy ---------------------------------------------------------

def _op_tensor_case(bench: OpBench, op: int, numpy_op):
    a, b = np.random.rand(SUITE_ELEMENTS).astype(np.float32), np.random.rand(SUITE_ELEMENTS).astype(np.float32)
    pa, pb, pc = bench.put(a), bench.put(b), bench.empty(a.nbytes)
    desc = bench.desc([SUITE_ELEMENTS])
    op_desc = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(op_desc, op, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_NOT_PROPAGATE_NAN)
    workspace = cnnl.getOpTensorWorkspaceSize(bench.handle, desc, desc, desc)
    out = np.empty_like(a)
    return (lambda: cnnl.opTensor(bench.handle, op_desc, 1, desc, pa, 1, desc, pb, None, workspace, 0, desc, pc),
            lambda: numpy_op(a, b, out=out))


def case_add(bench):
    return _op_tensor_case(bench, cnnl.CNNL_OP_TENSOR_ADD, np.add)


def case_mul(bench):
    return _op_tensor_case(bench, cnnl.CNNL_OP_TENSOR_MUL, np.multiply)


def case_relu(bench):
    x = np.random.randn(SUITE_ELEMENTS).astype(np.float32)
    px, py = bench.put(x), bench.empty(x.nbytes)
    desc = bench.desc([SUITE_ELEMENTS])
    act = cnnl.createActivationDescriptor()
    cnnl.setActivationDescriptor(act, cnnl.CNNL_ACTIVATION_RELU, cnnl.CNNL_NOT_PROPAGATE_NAN, 0.0)
    out = np.empty_like(x)
    return (lambda: cnnl.activationForward(bench.handle, act, None, desc, px, None, desc, py),
            lambda: np.maximum(x, 0, out=out))


def cast_case(dtype_code: int, cast_type: int):
    """Cast 2^24 float32 values to a 16-bit float type, against numpy's astype(float16)."""
    def case(bench):
        x = np.random.randn(SUITE_ELEMENTS).astype(np.float32)
        px, py = bench.put(x), bench.empty(x.size * 2)
        x_desc, y_desc = bench.desc([SUITE_ELEMENTS]), bench.desc([SUITE_ELEMENTS], dtype_code)
        return (lambda: cnnl.castDataType(bench.handle, x_desc, px, cast_type, y_desc, py),
                lambda: x.astype(np.float16))
    return case
