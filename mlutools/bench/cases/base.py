"""What a benchmark case is and what the cases share: the arena (a handle on a fresh queue, device tensors from host
arrays, cleanup), the case record, the data types, the shape tables several families use and small helpers."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

import ml_dtypes
import numpy as np

import cnnl
import cnrt


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
VECTOR = {"small": (1 << 16,), "medium": (1 << 20,), "large": (1 << 24,)}
FLOATS = ("float", "half")
#: elements of the 1-D float32 operands of the cnnl suite (bench_cnnl.py)
SUITE_ELEMENTS = 1 << 24
#: (rows, columns) of the float32 softmax and layer norm of the nn suite (bench_cnnl_nn.py)
SUITE_ROWS = SUITE_COLUMNS = 4096


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


def sigmoid(values: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-values))


HIGH = cnnl.CNNL_COMPUTATION_HIGH_PRECISION
HOST, DEVICE = cnnl.CNNL_POINTER_MODE_HOST, cnnl.CNNL_POINTER_MODE_DEVICE


def f32(values: np.ndarray) -> np.ndarray:
    return values.astype(np.float32)


def scalar_pointer(arena, value, dtype: str) -> int:
    """A device pointer to one element of `dtype` holding value."""
    return arena.upload(np.array([value]).astype(arena.numpy_dtype(dtype)), dtype).ptr


NHWC, NCHW = cnnl.CNNL_LAYOUT_NHWC, cnnl.CNNL_LAYOUT_NCHW
#: NHWC (batch, height, width, channels) feature maps of pooling and batch norm: 64K, 1M, 16M elements as ELEMENTWISE
FEATURE_MAP = {"small": (4, 32, 32, 16), "medium": (8, 64, 64, 32), "large": (32, 128, 128, 32)}
#: NCHW (batch, channels, height, width) of group norm, the same element counts
CHANNELS_FIRST = {"small": (4, 16, 32, 32), "medium": (8, 32, 64, 64), "large": (32, 32, 128, 128)}
EPS = 1e-5


def index_tensor(arena, values: np.ndarray):
    """An int32 device tensor of `values` and its host copy."""
    values = values.astype(np.int32)
    return arena.upload(values, "int32"), values


def int_tensor(arena, values, dtype="int32"):
    values = np.asarray(values, np.int32)
    return arena.upload(values, dtype), values
