"""The table of benchmark cases of `mlusim bench`: every cnnl op, memcpy, a BANG kernel and collectives.

A case names its op, the cnnl (or cnrt) function it calls, the data types it runs in, its shape at each size, and a
`build(arena, shape, dtype)` that puts its operands in device memory through cnrt and returns two functions: the
device call (enqueued on the arena's queue) and the numpy reference doing the same work on the host. Adding an op is
adding a row to `CASES`. This module holds the arena, the case record, the element-wise, BLAS and data-movement
builders and the table; the neural-network builders (docs/cnnl_nn.md) are in cases_nn.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

import ml_dtypes
import numpy as np

import cnnl
import cnrt

from mlutools.bench import cases_ext as ext  # noqa: E402
from mlutools.bench import cases_nn as nn  # noqa: E402
from mlutools.bench import cases_nn_ext as nn_ext  # noqa: E402

SIZES = ("small", "medium", "large")

#: dtype name -> (cnnlDataType_t, numpy dtype)
DTYPES = {
    "float": (cnnl.CNNL_DTYPE_FLOAT, np.dtype(np.float32)),
    "half": (cnnl.CNNL_DTYPE_HALF, np.dtype(np.float16)),
    "bfloat16": (cnnl.CNNL_DTYPE_BFLOAT16, np.dtype(ml_dtypes.bfloat16)),
    "int32": (cnnl.CNNL_DTYPE_INT32, np.dtype(np.int32)),
    "bool": (cnnl.CNNL_DTYPE_BOOL, np.dtype(np.bool_)),
}

ELEMENTWISE = {"small": (256, 256), "medium": (1024, 1024), "large": (4096, 4096)}
MATMUL = {"small": (256, 256, 256), "medium": (1024, 1024, 1024), "large": (4096, 4096, 4096)}
BATCH_MATMUL = {"small": (8, 128, 128, 128), "medium": (16, 512, 512, 512), "large": (32, 1024, 1024, 1024)}
BYTES = {"small": (1 << 18,), "medium": (1 << 22,), "large": (1 << 26,)}
VECTOR = {"small": (1 << 16,), "medium": (1 << 20,), "large": (1 << 24,)}
FLOATS = ("float", "half")


class Tensor:
    """A dense device tensor: descriptor, pointer, dims, dtype name."""

    def __init__(self, desc, ptr: int, dims: tuple, dtype: str):
        self.desc, self.ptr, self.dims, self.dtype = desc, ptr, dims, dtype


class Arena:
    """The device side of one measurement: a handle on a fresh queue, tensors from host arrays, and cleanup."""

    def __init__(self):
        self.queue = cnrt.queueCreate()
        self.handle = cnnl.create()
        cnnl.setQueue(self.handle, self.queue)
        self.rng = np.random.default_rng(0)
        self._pointers: list[int] = []

    def malloc(self, nbytes: int) -> int:
        pointer = cnrt.malloc(max(int(nbytes), 1))
        self._pointers.append(pointer)
        return pointer

    def sync(self) -> None:
        """Wait for what the build queued (setup ops), so that none of it lands in the measurement."""
        cnrt.queueSync(self.queue)

    @staticmethod
    def code(dtype: str) -> int:
        """The cnnlDataType_t of a dtype name (for APIs that take a data type rather than a descriptor)."""
        return DTYPES[dtype][0]

    @staticmethod
    def numpy_dtype(dtype: str) -> np.dtype:
        return DTYPES[dtype][1]

    def workspace(self, nbytes: int) -> tuple[Optional[int], int]:
        """(pointer or None, size) of a workspace of `nbytes`."""
        return (self.malloc(nbytes) if nbytes else None), nbytes

    @staticmethod
    def descriptor(dims, dtype: str, layout: int = cnnl.CNNL_LAYOUT_ARRAY):
        desc = cnnl.createTensorDescriptor()
        cnnl.setTensorDescriptor(desc, layout, DTYPES[dtype][0], list(dims))
        return desc

    def host(self, dims, dtype: str, positive: bool = False) -> np.ndarray:
        """Random host values of `dtype` (in (0.5, 1.5) when `positive`)."""
        values = self.rng.random(dims, dtype=np.float32)
        values = values + 0.5 if positive else values * 2 - 1
        if dtype == "bool":
            return values > 0
        if dtype == "int32":
            return (values * 1000).astype(np.int32)
        return values.astype(DTYPES[dtype][1])

    def upload(self, array: np.ndarray, dtype: str, layout: int = cnnl.CNNL_LAYOUT_ARRAY) -> Tensor:
        """A device tensor holding `array` (copied through cnrt.memcpy)."""
        array = np.ascontiguousarray(array)
        pointer = self.malloc(array.nbytes)
        cnrt.memcpy(pointer, array, array.nbytes, cnrt.cnrtMemcpyHostToDev)
        return Tensor(self.descriptor(array.shape, dtype, layout), pointer, array.shape, dtype)

    def random(self, dims, dtype: str, positive: bool = False,
               layout: int = cnnl.CNNL_LAYOUT_ARRAY) -> tuple[Tensor, np.ndarray]:
        """A device tensor of random values and its host copy."""
        values = self.host(dims, dtype, positive)
        return self.upload(values, dtype, layout), values

    def between(self, dims, dtype: str, low: float, high: float) -> tuple[Tensor, np.ndarray]:
        """A device tensor of random values in [low, high) and its host copy."""
        values = (self.rng.random(dims, dtype=np.float32) * (high - low) + low).astype(DTYPES[dtype][1])
        return self.upload(values, dtype), values

    def empty(self, dims, dtype: str, layout: int = cnnl.CNNL_LAYOUT_ARRAY) -> Tensor:
        dims = tuple(dims)
        nbytes = int(np.prod(dims)) * DTYPES[dtype][1].itemsize
        return Tensor(self.descriptor(dims, dtype, layout), self.malloc(nbytes), dims, dtype)

    def free(self) -> None:
        cnrt.queueSync(self.queue)
        for pointer in self._pointers:
            cnrt.free(pointer)
        cnnl.destroy(self.handle)
        cnrt.queueDestroy(self.queue)


Build = Callable[[Arena, tuple, str], tuple[Callable[[], None], Callable[[], object]]]


@dataclass(frozen=True, eq=False)
class Case:
    """One benchmarked op: `build(arena, shape, dtype)` -> (device call, numpy reference)."""

    op: str
    function: str
    build: Build
    shapes: Mapping[str, tuple] = field(default_factory=lambda: ELEMENTWISE)
    dtypes: tuple = FLOATS
    kinds: tuple = ("op",)       # the command kinds whose modelled time the case measures
    reference: str = "numpy"     # what the host reference is, when not the same numpy op
    exercises: tuple = ()        # other cnnl functions the build calls to set up state (counted as covered)


# ---- builders: one per op family ----------------------------------------------------------------------------------

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


def _sigmoid(values: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-values))


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


def fill(arena, shape, dtype):
    y = arena.empty(shape, dtype)
    out = np.empty(shape, DTYPES[dtype][1])
    return (lambda: cnnl.fill_v3(arena.handle, cnnl.CNNL_POINTER_MODE_HOST, 1.5, y.desc, y.ptr),
            lambda: out.fill(1.5))


def matmul(arena, shape, dtype):
    m, k, n = shape
    (a, av), (b, bv), c = arena.random((m, k), dtype), arena.random((k, n), dtype), arena.empty((m, n), dtype)
    a32, b32 = av.astype(np.float32), bv.astype(np.float32)
    out = np.empty((m, n), np.float32)
    return (lambda: cnnl.matMul(arena.handle, False, False, 1.0, a.desc, a.ptr, b.desc, b.ptr, 0.0, c.desc, c.ptr),
            lambda: np.matmul(a32, b32, out=out))


def matmul_v2(arena, shape, dtype):
    """cnnlMatMul_v2 with the algorithm the heuristic picks (d = a b, beta 0)."""
    m, k, n = shape
    (a, av), (b, bv) = arena.random((m, k), dtype), arena.random((k, n), dtype)
    c, d = arena.empty((m, n), dtype), arena.empty((m, n), dtype)
    desc, algo, result = cnnl.matMulDescCreate(), cnnl.matMulAlgoCreate(), cnnl.createMatMulHeuristicResult()
    cnnl.getMatMulAlgoHeuristic(arena.handle, desc, a.desc, b.desc, c.desc, d.desc, None, 1, [result])
    workspace, size = arena.workspace(cnnl.getMatMulHeuristicResult(result, algo))
    a32, b32 = av.astype(np.float32), bv.astype(np.float32)
    out = np.empty((m, n), np.float32)
    return (lambda: cnnl.matMul_v2(arena.handle, desc, algo, 1.0, a.desc, a.ptr, b.desc, b.ptr, 0.0, c.desc, c.ptr,
                                   workspace, size, d.desc, d.ptr),
            lambda: np.matmul(a32, b32, out=out))


def _batch_operands(arena, shape, dtype):
    batch, m, k, n = shape
    (a, av), (b, bv) = arena.random((batch, m, k), dtype), arena.random((batch, k, n), dtype)
    out = np.empty((batch, m, n), np.float32)
    a32, b32 = av.astype(np.float32), bv.astype(np.float32)
    return a, b, arena.empty((batch, m, n), dtype), lambda: np.matmul(a32, b32, out=out)


def batch_matmul_v2(arena, shape, dtype):
    """cnnlBatchMatMulBCast_v2 with the algorithm the heuristic picks (beta 0)."""
    a, b, c, reference = _batch_operands(arena, shape, dtype)
    desc, algo, result = cnnl.matMulDescCreate(), cnnl.matMulAlgoCreate(), cnnl.createMatMulHeuristicResult()
    cnnl.getBatchMatMulAlgoHeuristic(arena.handle, desc, a.desc, b.desc, c.desc, None, 1, result)
    workspace, size = arena.workspace(cnnl.getBatchMatMulHeuristicResult(result, algo))
    return (lambda: cnnl.batchMatMulBCast_v2(arena.handle, desc, algo, 1.0, a.desc, a.ptr, b.desc, b.ptr, 0.0,
                                             c.desc, c.ptr, workspace, size),
            reference)


def batch_matmul(arena, shape, dtype):
    a, b, c, reference = _batch_operands(arena, shape, dtype)
    workspace, size = arena.workspace(cnnl.getBatchMatMulBCastWorkspaceSize(arena.handle, a.desc, b.desc, c.desc))
    return (lambda: cnnl.batchMatMulBCast(arena.handle, False, False, a.desc, a.ptr, b.desc, b.ptr, workspace, size,
                                          c.desc, c.ptr),
            reference)


def copy(arena, shape, dtype):
    (x, values), y = arena.random(shape, dtype), arena.empty(shape, dtype)
    out = np.empty_like(values)
    return (lambda: cnnl.copy(arena.handle, x.desc, x.ptr, y.desc, y.ptr), lambda: np.copyto(out, values))


def expand(arena, shape, dtype):
    (x, values), y = arena.random((1,) + tuple(shape[1:]), dtype), arena.empty(shape, dtype)
    out = np.empty(shape, values.dtype)
    return (lambda: cnnl.expand(arena.handle, x.desc, x.ptr, y.desc, y.ptr),
            lambda: np.copyto(out, np.broadcast_to(values, shape)))


def transpose(with_workspace: bool) -> Build:
    """A 2-D transpose through cnnlTranspose_v2 (with its workspace) or cnnlTranspose."""
    def build(arena, shape, dtype):
        (x, values), y = arena.random(shape, dtype), arena.empty(tuple(reversed(shape)), dtype)
        desc = cnnl.createTransposeDescriptor()
        cnnl.setTransposeDescriptor(desc, [1, 0])
        if with_workspace:
            workspace, size = arena.workspace(cnnl.getTransposeWorkspaceSize(arena.handle, x.desc, desc))
            call = lambda: cnnl.transpose_v2(arena.handle, desc, x.desc, x.ptr, y.desc, y.ptr, workspace, size)  # noqa
        else:
            call = lambda: cnnl.transpose(arena.handle, desc, x.desc, x.ptr, y.desc, y.ptr)  # noqa: E731
        return call, lambda: values.T.copy()
    return build


def _halves(shape) -> tuple:
    rows, columns = shape
    return (rows, columns // 2)


def concat(arena, shape, dtype):
    (a, av), (b, bv), out = arena.random(_halves(shape), dtype), arena.random(_halves(shape), dtype), \
        arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getConcatWorkspaceSize(arena.handle, 2))
    return (lambda: cnnl.concat(arena.handle, 1, [a.desc, b.desc], [a.ptr, b.ptr], workspace, size, out.desc,
                                out.ptr),
            lambda: np.concatenate([av, bv], axis=1))


def split(arena, shape, dtype):
    (x, values), a, b = arena.random(shape, dtype), arena.empty(_halves(shape), dtype), \
        arena.empty(_halves(shape), dtype)
    workspace, size = arena.workspace(cnnl.getSplitWorkspaceSize(arena.handle, 2))
    half = shape[1] // 2
    return (lambda: cnnl.split(arena.handle, 1, x.desc, x.ptr, workspace, size, [a.desc, b.desc], [a.ptr, b.ptr]),
            lambda: (values[:, :half].copy(), values[:, half:].copy()))


def strided_slice(arena, shape, dtype):
    rows, columns = shape
    (x, values), y = arena.random(shape, dtype), arena.empty((rows // 2, columns // 2), dtype)
    return (lambda: cnnl.stridedSlice(arena.handle, x.desc, x.ptr, [0, 0], [rows, columns], [2, 2], y.desc, y.ptr),
            lambda: values[::2, ::2].copy())


def reduce_sum(arena, shape, dtype):
    (x, values), y = arena.random(shape, dtype), arena.empty((shape[0], 1), dtype)
    desc = cnnl.createReduceDescriptor()
    cnnl.setReduceDescriptor(desc, [1], cnnl.CNNL_REDUCE_ADD, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_NOT_PROPAGATE_NAN,
                             cnnl.CNNL_REDUCE_NO_INDICES, cnnl.CNNL_32BIT_INDICES)
    workspace, size = arena.workspace(cnnl.getReduceOpWorkspaceSize(arena.handle, x.desc, y.desc, desc))
    return (lambda: cnnl.reduce(arena.handle, desc, workspace, size, None, x.desc, x.ptr, 0, None, None, y.desc,
                                y.ptr),
            lambda: values.sum(axis=1, keepdims=True, dtype=np.float32))


def cumsum(arena, shape, dtype):
    (x, values), y = arena.random(shape, dtype), arena.empty(shape, dtype)
    return (lambda: cnnl.cumsum(arena.handle, x.desc, x.ptr, 1, False, False, cnnl.CNNL_NOT_PROPAGATE_NAN, y.desc,
                                y.ptr),
            lambda: np.cumsum(values, axis=1, dtype=np.float32))


def select(arena, shape, dtype):
    (condition, cv), (then, tv), (other, ov) = (arena.random(shape, "bool"), arena.random(shape, dtype),
                                                arena.random(shape, dtype))
    out = arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getSelectV2WorkspaceSize(arena.handle, condition.desc, then.desc,
                                                                    other.desc))
    return (lambda: cnnl.selectV2(arena.handle, condition.desc, condition.ptr, then.desc, then.ptr, other.desc,
                                  other.ptr, workspace, size, out.desc, out.ptr),
            lambda: np.where(cv, tv, ov))


def top_k(arena, shape, dtype):
    k = 8
    (x, values) = arena.random(shape, dtype)
    top, indices = arena.empty((shape[0], k), dtype), arena.empty((shape[0], k), "int32")
    workspace, size = arena.workspace(cnnl.getTopKTensorWorkspaceSize(arena.handle, x.desc, k, 1, True, top.desc,
                                                                      indices.desc))
    return (lambda: cnnl.topKTensor_v3(arena.handle, x.desc, x.ptr, k, 1, True, True, True, workspace, size,
                                       top.desc, top.ptr, indices.desc, indices.ptr),
            lambda: np.argpartition(values, -k, axis=1)[:, -k:])


# ---- beyond cnnl: copies and a BANG kernel ------------------------------------------------------------------------

def memcpy(direction: str) -> Build:
    """cnrt.memcpyAsync of `shape[0]` bytes in `direction` (H2D, D2H, D2D), against numpy's copyto."""
    def build(arena, shape, dtype):
        nbytes = shape[0]
        host_src, host_dst = np.ones(nbytes, np.uint8), np.zeros(nbytes, np.uint8)
        first, second = arena.malloc(nbytes), arena.malloc(nbytes)
        cnrt.memcpy(first, host_src, nbytes, cnrt.cnrtMemcpyHostToDev)
        dst, src, kind = {"H2D": (first, host_src, cnrt.cnrtMemcpyHostToDev),
                          "D2H": (host_dst, first, cnrt.cnrtMemcpyDevToHost),
                          "D2D": (second, first, cnrt.cnrtMemcpyDevToDev)}[direction]
        return (lambda: cnrt.memcpyAsync(dst, src, nbytes, arena.queue, kind),
                lambda: np.copyto(host_dst, host_src))
    return build


def bang_vector_add(arena, shape, dtype):
    """The Union1 vector-add kernel of cnrt.samples.vector_add over every core of the board."""
    from cnrt.samples.vector_add import union1_dim, vector_add
    n = shape[0]
    (x, xv), (y, yv), z = arena.random((n,), dtype), arena.random((n,), dtype), arena.empty((n,), dtype)
    dim = union1_dim()
    out = np.empty_like(xv)
    return (lambda: vector_add[dim, cnrt.cnrtFuncTypeUnion1, arena.queue](x.ptr, y.ptr, z.ptr, n),
            lambda: np.add(xv, yv, out=out))


CASES: tuple[Case, ...] = (
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
    Case("sigmoid", "cnnlActivationForward", activation_forward(cnnl.CNNL_ACTIVATION_SIGMOID, _sigmoid)),
    Case("sigmoid backward", "cnnlActivationBackward", sigmoid_backward),
    Case("cast to half", "cnnlCastDataType", cast_to("half"), dtypes=("float",)),
    Case("cast to float", "cnnlCastDataType", cast_to("float"), dtypes=("half", "bfloat16")),
    Case("fill", "cnnlFill_v3", fill),
    Case("matmul", "cnnlMatMul", matmul, shapes=MATMUL, dtypes=("float", "half", "bfloat16"),
         reference="np.matmul float32"),
    Case("matmul v2", "cnnlMatMul_v2", matmul_v2, shapes=MATMUL, dtypes=("half",), reference="np.matmul float32"),
    Case("batch matmul", "cnnlBatchMatMulBCast", batch_matmul, shapes=BATCH_MATMUL, dtypes=("float", "half"),
         reference="np.matmul float32"),
    Case("batch matmul v2", "cnnlBatchMatMulBCast_v2", batch_matmul_v2, shapes=BATCH_MATMUL, dtypes=("half",),
         reference="np.matmul float32"),
    Case("copy", "cnnlCopy", copy),
    Case("expand", "cnnlExpand", expand),
    Case("transpose", "cnnlTranspose_v2", transpose(with_workspace=True)),
    Case("transpose v1", "cnnlTranspose", transpose(with_workspace=False), dtypes=("float",)),
    Case("concat", "cnnlConcat", concat),
    Case("split", "cnnlSplit", split),
    Case("strided slice", "cnnlStridedSlice", strided_slice),
    Case("reduce sum", "cnnlReduce", reduce_sum, dtypes=("float",)),
    Case("cumsum", "cnnlCumsum", cumsum),
    Case("select", "cnnlSelectV2", select),
    Case("topk 8", "cnnlTopKTensor_v3", top_k, dtypes=("float",), reference="np.argpartition"),
    # neural-network ops (builders and shapes in cases_nn.py)
    Case("conv 3x3", "cnnlConvolutionForward", nn.convolution, shapes=nn.CONVOLUTION, dtypes=FLOATS,
         reference="im2col + np.tensordot float32"),
    Case("conv bwd data", "cnnlConvolutionBackwardData", nn.convolution_backward_data, shapes=nn.CONVOLUTION,
         dtypes=FLOATS, reference="im2col + np.tensordot float32"),
    Case("conv bwd filter", "cnnlConvolutionBackwardFilter", nn.convolution_backward_filter, shapes=nn.CONVOLUTION,
         dtypes=FLOATS, reference="im2col + np.tensordot float32"),
    Case("max pool 2x2", "cnnlPoolingForward", nn.max_pooling, shapes=nn.FEATURE_MAP),
    Case("avg pool 2x2", "cnnlPoolingForward_v2", nn.average_pooling_v2, shapes=nn.FEATURE_MAP),
    Case("max pool index", "cnnlPoolingForwardWithIndex", nn.max_pooling_with_index, shapes=nn.FEATURE_MAP),
    Case("max pool bwd", "cnnlPoolingBackward", nn.max_pooling_backward, shapes=nn.FEATURE_MAP),
    Case("adaptive avg", "cnnlAdaptivePoolingForward", nn.adaptive_pooling(v2=False), shapes=nn.FEATURE_MAP),
    Case("adaptive avg v2", "cnnlAdaptivePoolingForward_v2", nn.adaptive_pooling(v2=True), shapes=nn.FEATURE_MAP),
    Case("adaptive avg bwd", "cnnlAdaptivePoolingBackward", nn.adaptive_pooling_backward, shapes=nn.FEATURE_MAP),
    Case("softmax", "cnnlSoftmaxForward", nn.softmax(v2=False)),
    Case("softmax v2", "cnnlSoftmaxForward_v2", nn.softmax(v2=True)),
    Case("softmax bwd", "cnnlSoftmaxBackward", nn.softmax_backward),
    Case("bn train", "cnnlBatchNormForwardTraining", nn.batch_norm_training(v2=False), shapes=nn.FEATURE_MAP),
    Case("bn train v2", "cnnlBatchNormForwardTraining_v2", nn.batch_norm_training(v2=True), shapes=nn.FEATURE_MAP),
    Case("bn inference", "cnnlBatchNormForwardInference", nn.batch_norm_inference, shapes=nn.FEATURE_MAP),
    Case("bn bwd", "cnnlBatchNormBackward", nn.batch_norm_backward(v2=False), shapes=nn.FEATURE_MAP),
    Case("bn bwd v2", "cnnlBatchNormBackward_v2", nn.batch_norm_backward(v2=True), shapes=nn.FEATURE_MAP),
    Case("layer norm", "cnnlLayerNormForward", nn.layer_norm),
    Case("layer norm bwd", "cnnlLayerNormBackward_v2", nn.norm_backward(rms=False)),
    Case("rms norm", "cnnlRmsNormForward", nn.rms_norm),
    Case("rms norm bwd", "cnnlRmsNormBackward", nn.norm_backward(rms=True)),
    Case("group norm", "cnnlGroupNormForward_v3", nn.group_norm, shapes=nn.CHANNELS_FIRST),
    Case("group norm bwd", "cnnlGroupNormBackward", nn.group_norm_backward, shapes=nn.CHANNELS_FIRST),
    Case("index select", "cnnlIndexSelect", nn.index_select),
    Case("gather", "cnnlGather", nn.gather),
    Case("scatter", "cnnlScatter", nn.scatter),
    Case("embedding", "cnnlEmbeddingForward_v2", nn.embedding, shapes=nn.EMBEDDING),
    Case("embedding bwd", "cnnlEmbeddingBackward", nn.embedding_backward, shapes=nn.EMBEDDING,
         reference="np.add.at"),
    Case("masked fill", "cnnlMasked_v3", nn.masked_fill),
    Case("index put", "cnnlIndexPut", nn.index_put),
    Case("num true", "cnnlNumTrue_v2", nn.num_true, reference="np.count_nonzero"),
    Case("where nonzero", "cnnlWhere_v2", nn.where_nonzero, reference="np.argwhere"),
    Case("rand uniform", "cnnlRandGenerateUniform", nn.rand_uniform, shapes=VECTOR,
         exercises=("cnnlRandMakeMTGP32KernelState",), reference="Generator.random"),
    Case("rand normal", "cnnlRandGenerateNormal", nn.rand_normal, shapes=VECTOR,
         reference="Generator.standard_normal"),
    Case("dropout", "cnnlFusedDropout_v2", nn.dropout),
    Case("nll loss", "cnnlNlllossForward", nn.nll_loss),
    Case("nll loss bwd", "cnnlNlllossBackward", nn.nll_loss_backward),
    Case("mse loss", "cnnlMSELoss", nn.loss("mse")),
    Case("mse loss bwd", "cnnlMSELossBackward", nn.loss_backward("mse")),
    Case("bce loss", "cnnlBceLoss", nn.loss("bce")),
    Case("bce loss bwd", "cnnlBceLossBackward", nn.loss_backward("bce")),
    Case("bce logits", "cnnlBceWithLogits_v2", nn.loss("bce_logits")),
    Case("bce logits bwd", "cnnlBceWithLogitsBackward", nn.loss_backward("bce_logits")),
    Case("smooth l1", "cnnlSmoothL1LossForward_v2", nn.loss("smooth_l1")),
    Case("smooth l1 bwd", "cnnlSmoothL1LossBackward_v2", nn.loss_backward("smooth_l1")),
    # beyond cnnl
    Case("memcpy H2D", "cnrtMemcpyAsync", memcpy("H2D"), shapes=BYTES, dtypes=("uint8",), kinds=("memcpy",),
         reference="np.copyto"),
    Case("memcpy D2H", "cnrtMemcpyAsync", memcpy("D2H"), shapes=BYTES, dtypes=("uint8",), kinds=("memcpy",),
         reference="np.copyto"),
    Case("memcpy D2D", "cnrtMemcpyAsync", memcpy("D2D"), shapes=BYTES, dtypes=("uint8",), kinds=("memcpy",),
         reference="np.copyto"),
    Case("bang vector add", "vector_add", bang_vector_add, shapes=VECTOR, dtypes=("float",), kinds=("kernel",)),
    # CNNL part 3 (builders in cases_ext.py): the targets are pad, roll and flip at 16M elements <= 1.0x numpy
    Case("pad", "cnnlPad", ext.pad, reference="np.pad"),
    Case("roll", "cnnlRoll", ext.roll, reference="np.roll"),
    Case("flip", "cnnlFlip", ext.flip, reference="np.copyto(np.flip)"),
    Case("reflection pad", "cnnlReflectionPad2d", ext.pad2d(True), shapes=nn.CHANNELS_FIRST,
         reference="np.pad reflect"),
    Case("replication pad", "cnnlReplicationPad2d", ext.pad2d(False), shapes=nn.CHANNELS_FIRST,
         reference="np.pad edge"),
    Case("tile", "cnnlTile", ext.tile, reference="np.tile"),
    Case("triu", "cnnlTri", ext.tri, reference="np.triu"),
    Case("addcmul", "cnnlAddcmul", ext.addc(False)),
    Case("addcdiv", "cnnlAddcdiv", ext.addc(True)),
    Case("lerp", "cnnlLerp", ext.lerp),
    Case("atan2", "cnnlAtan2", ext.atan2),
    Case("floor div", "cnnlFloorDiv_v2", ext.division("floor")),
    Case("trunc div", "cnnlFloorDivTrunc", ext.division("trunc")),
    Case("floor mod", "cnnlFloorMod", ext.division("mod")),
    Case("trunc mod", "cnnlFloorModTrunc", ext.division("fmod")),
    Case("mul n", "cnnlMulN", ext.mul_n),
    Case("transform", "cnnlTransform_v2", ext.transform),
    Case("clip", "cnnlClip_v2", ext.clip),
    Case("bitwise and", "cnnlBitCompute_v2", ext.bit_and, dtypes=("int32",)),
    Case("erf", "cnnlErf_v2", ext.unary("erf_v2", ext.erf_reference, (cnnl.CNNL_COMPUTATION_HIGH_PRECISION,)),
         reference="numpy erf approximation"),
    Case("erfinv", "cnnlErfinv", ext.unary("erfinv", ext.erfinv_reference,
                                           (cnnl.CNNL_COMPUTATION_HIGH_PRECISION,), low=-0.99, high=0.99),
         reference="numpy erfinv approximation"),
    Case("log v1", "cnnlLog", ext.unary("log", np.log, (cnnl.CNNL_LOG_E,), positive=True)),
    Case("trunc", "cnnlTrunc", ext.unary("trunc", np.trunc)),
    Case("expm1", "cnnlExpm1", ext.unary("expm1", np.expm1, (cnnl.CNNL_COMPUTATION_HIGH_PRECISION,))),
    Case("log1p", "cnnlLog1p", ext.unary("log1p", np.log1p, (cnnl.CNNL_COMPUTATION_HIGH_PRECISION,), positive=True)),
    Case("isnan", "cnnlIsNan", ext.unary("isNan", np.isnan, out_dtype="bool")),
    Case("threshold", "cnnlThreshold", ext.threshold),
    Case("threshold bwd", "cnnlThresholdBackward", ext.threshold_backward),
    Case("hardtanh", "cnnlHardtanh", ext.hardtanh),
    Case("hardtanh bwd", "cnnlHardtanhBackward", ext.hardtanh_backward),
    Case("bias add", "cnnlBiasAdd", ext.bias_add, shapes=nn.FEATURE_MAP),
    Case("bias add bwd", "cnnlBiasAddBackward_v2", ext.bias_add_backward, shapes=nn.FEATURE_MAP),
    Case("frozen bn bwd", "cnnlFrozenBatchNormBackward_v2", ext.frozen_batch_norm_backward, shapes=nn.FEATURE_MAP),
    Case("arange", "cnnlArange_v2", ext.arange, dtypes=("float", "int32")),
    Case("linspace", "cnnlLinspace", ext.linspace, dtypes=("float",)),
    Case("one hot", "cnnlOneHot", ext.one_hot, dtypes=("int32",), reference="np.eye[labels]"),
    Case("unique", "cnnlUnique_v2", ext.unique, dtypes=("float", "int32"), reference="np.unique"),
    Case("std mean", "cnnlStdVarMean", ext.std_var_mean),
    Case("masked scatter", "cnnlMasked_v4", ext.masked_scatter),
    Case("advanced index", "cnnlAdvancedIndex", ext.advanced_index),
    Case("index add", "cnnlIndexAdd", ext.index_add, reference="np.add.at"),
    Case("index fill", "cnnlIndexFill", ext.index_fill(v2=False)),
    Case("index fill v2", "cnnlIndexFill_v2", ext.index_fill(v2=True)),
    Case("strided slice bwd", "cnnlStridedSliceBackward", ext.strided_slice_backward),
    Case("as strided bwd", "cnnlAsStridedBackward", ext.as_strided_backward, reference="np.bincount"),
    Case("sgd step", "cnnlGradientDescent", ext.gradient_descent),
    Case("adadelta step", "cnnlApplyAdadelta", ext.adadelta),
    # part 3, neural-network half (docs/cnnl_nn_ext.md)
    Case("flash attention", "cnnlFlashAttentionForward", nn_ext.flash_attention, shapes=nn_ext.ATTENTION,
         dtypes=("half", "bfloat16"), reference="numpy attention float32"),
    Case("flash attention v2 causal", "cnnlFlashAttentionForward_v2", nn_ext.flash_attention_v2, shapes=nn_ext.ATTENTION,
         dtypes=("half",), reference="numpy attention float32"),
    Case("flash attention bwd", "cnnlFlashAttentionBackward", nn_ext.flash_attention_backward(False),
         shapes=nn_ext.ATTENTION, dtypes=("half",), reference="numpy attention gradients float32",
         exercises=("cnnlFlashAttentionForward",)),
    Case("flash attention bwd v2", "cnnlFlashAttentionBackward_v2", nn_ext.flash_attention_backward(True),
         shapes=nn_ext.ATTENTION, dtypes=("half",), reference="numpy attention gradients float32"),
    Case("interp bilinear 2x", "cnnlInterp_v3", nn_ext.interpolation, shapes=nn_ext.INTERPOLATION, dtypes=("float", "half"),
         reference="numpy separable resize"),
    Case("interp bilinear 2x bwd", "cnnlInterpBackward_v2", nn_ext.interpolation_backward, shapes=nn_ext.INTERPOLATION,
         dtypes=("float",), reference="numpy resize matrices"),
    Case("rotary embedding", "cnnlRotaryEmbedding", nn_ext.rotary, shapes=nn_ext.SEQUENCES),
    Case("sync bn stats", "cnnlSyncBatchNormStats_v2", nn_ext.sync_bn_stats, shapes=nn_ext.FEATURE_MAP),
    Case("sync bn gather", "cnnlSyncBatchNormGatherStatsWithCounts", nn_ext.sync_bn_gather, shapes=nn_ext.FEATURE_MAP,
         dtypes=("float",)),
    Case("sync bn elemt", "cnnlSyncBatchNormElemt", nn_ext.sync_bn_elemt, shapes=nn_ext.FEATURE_MAP),
    Case("sync bn bwd reduce", "cnnlSyncBatchnormBackwardReduce_v2", nn_ext.sync_bn_backward_reduce,
         shapes=nn_ext.FEATURE_MAP),
    Case("sync bn bwd elemt", "cnnlSyncBatchNormBackwardElemtV2", nn_ext.sync_bn_backward_elemt, shapes=nn_ext.FEATURE_MAP),
    Case("im2col", "cnnlIm2Col", nn_ext.im2col, shapes=nn_ext.IMAGES),
    Case("col2im", "cnnlCol2Im", nn_ext.col2im, shapes=nn_ext.IMAGES),
    Case("unfold", "cnnlUnfold", nn_ext.unfold, shapes=nn_ext.ROWS),
    Case("mse loss v2", "cnnlMSELoss_v2", nn_ext.mse_v2, shapes=nn_ext.ROWS),
    Case("nll loss v2", "cnnlNlllossForward_v2", nn_ext.nll_v2(False), shapes=nn_ext.ROWS),
    Case("nll loss v2 bwd", "cnnlNlllossBackward_v2", nn_ext.nll_v2(True), shapes=nn_ext.ROWS),
    Case("ctc loss", "cnnlCTCLoss", nn_ext.ctc, shapes=nn_ext.CTC, dtypes=("float",), reference="numpy alpha recursion"),
    Case("cdist", "cnnlCdistForward", nn_ext.cdist(False), shapes=nn_ext.CDIST),
    Case("cdist bwd", "cnnlCdistBackward", nn_ext.cdist(True), shapes=nn_ext.CDIST),
    Case("qr", "cnnlQR", nn_ext.qr, shapes=nn_ext.MATRICES, dtypes=("float",), reference="np.linalg.qr"),
    Case("polar", "cnnlPolar", nn_ext.polar, dtypes=("float",)),
    Case("trigon asin", "cnnlTrigonForward", nn_ext.trigon),
    Case("rand discrete uniform", "cnnlRandGenerateDescreteUniform", nn_ext.discrete_uniform, shapes=nn_ext.VECTOR,
         reference="numpy Philox integers"),
    Case("rand multinomial", "cnnlRandGenerateMultinomial_v2", nn_ext.multinomial, shapes=nn_ext.MULTINOMIAL,
         dtypes=("float",), reference="numpy inverse CDF"),
    Case("nms", "cnnlNms_v2", nn_ext.nms, shapes=nn_ext.BOXES, reference="numpy greedy NMS"),
    Case("dcn", "cnnlDCNForward", nn_ext.dcn_forward, shapes=nn_ext.DCN, dtypes=("float",),
         reference="numpy sampling + matmul"),
    Case("dcn bwd data", "cnnlDCNBackwardData", nn_ext.dcn_backward_data, shapes=nn_ext.DCN, dtypes=("float",),
         reference="numpy column gradients"),
    Case("dcn bwd weight", "cnnlDCNBackwardWeight", nn_ext.dcn_backward_weight, shapes=nn_ext.DCN, dtypes=("float",),
         reference="numpy sampling + matmul"),
)
