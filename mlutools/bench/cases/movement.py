"""Cases of data movement and creation (docs/cnnl_movement.md): copy, expand, transpose, concat, split, strided slice,
fill, pad, roll, flip, tile, tri, arange, linspace, one-hot, the view gradients. References: np.pad, np.roll, a copy of
np.flip, np.tile and the like."""
from __future__ import annotations

import math

import numpy as np

import cnnl

from .base import Build, CHANNELS_FIRST, Case, DTYPES, HIGH, f32, scalar_pointer


def fill(arena, shape, dtype):
    y = arena.empty(shape, dtype)
    out = np.empty(shape, DTYPES[dtype][1])
    return (lambda: cnnl.fill_v3(arena.handle, cnnl.CNNL_POINTER_MODE_HOST, 1.5, y.desc, y.ptr),
            lambda: out.fill(1.5))


def copy(arena, shape, dtype):
    (x, values), y = arena.random(shape, dtype), arena.empty(shape, dtype)
    out = np.empty_like(values)
    return (lambda: cnnl.copy(arena.handle, x.desc, x.ptr, y.desc, y.ptr), lambda: np.copyto(out, values))


def copy_v2(arena, shape, dtype):
    """cnnlCopy_v2 from a transposed view (a copy between strides) with the workspace its query gives."""
    (x, values), y = arena.random(shape[::-1], dtype), arena.empty(shape, dtype)
    cnnl.setTensorDescriptorEx(x.desc, cnnl.CNNL_LAYOUT_ARRAY, arena.code(dtype), list(shape), [1, shape[1]])
    workspace, size = arena.workspace(cnnl.getCopyWorkspaceSize(arena.handle, x.desc, y.desc))
    out = np.empty(shape, values.dtype)
    return (lambda: cnnl.copy_v2(arena.handle, x.desc, x.ptr, y.desc, y.ptr, workspace, size),
            lambda: np.copyto(out, values.T))


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


ROLL = 3       # shift of the roll case (along the last axis)
CLASSES = 16   # depth of the one-hot case


def pad(arena, shape, dtype):
    """One element of zero padding on every side (np.pad)."""
    (x, xv) = arena.random(shape, dtype)
    y = arena.empty(tuple(n + 2 for n in shape), dtype)
    pairs = [(1, 1)] * len(shape)
    return (lambda: cnnl.pad(arena.handle, x.desc, x.ptr, pairs, 0, y.desc, y.ptr),
            lambda: np.pad(xv, 1))


def pad2d(reflect: bool):
    """Reflection / replication padding by 2 of an NCHW map (base.CHANNELS_FIRST)."""
    def build(arena, shape, dtype):
        x, xv = arena.random(shape, dtype, layout=cnnl.CNNL_LAYOUT_NCHW)
        y = arena.empty(shape[:2] + (shape[2] + 4, shape[3] + 4), dtype, layout=cnnl.CNNL_LAYOUT_NCHW)
        call = cnnl.reflectionPad2d if reflect else cnnl.replicationPad2d
        mode = "reflect" if reflect else "edge"
        return (lambda: call(arena.handle, x.desc, x.ptr, [2, 2, 2, 2], y.desc, y.ptr),
                lambda: np.pad(xv, ((0, 0), (0, 0), (2, 2), (2, 2)), mode=mode))
    return build


def roll(arena, shape, dtype):
    x, xv = arena.random(shape, dtype)
    y = arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getRollWorkspaceSize(arena.handle, x.desc))
    return (lambda: cnnl.roll(arena.handle, x.desc, x.ptr, [ROLL], [1], workspace, size, y.desc, y.ptr),
            lambda: np.roll(xv, ROLL, 1))


def flip(arena, shape, dtype):
    x, xv = arena.random(shape, dtype)
    y = arena.empty(shape, dtype)
    out = np.empty_like(xv)
    return (lambda: cnnl.flip(arena.handle, [1], x.desc, x.ptr, y.desc, y.ptr),
            lambda: np.copyto(out, np.flip(xv, 1)))


def tile(arena, shape, dtype):
    """A quarter of the output, repeated 2 x 2."""
    x, xv = arena.random((shape[0] // 2, shape[1] // 2), dtype)
    y = arena.empty(shape, dtype)
    return (lambda: cnnl.tile(arena.handle, x.desc, x.ptr, y.desc, y.ptr), lambda: np.tile(xv, (2, 2)))


def tri(arena, shape, dtype):
    x, xv = arena.random(shape, dtype)
    y = arena.empty(shape, dtype)
    return (lambda: cnnl.tri(arena.handle, 0, True, x.desc, x.ptr, y.desc, y.ptr), lambda: np.triu(xv))


def arange(arena, shape, dtype):
    y = arena.empty(shape, dtype)
    n = math.prod(shape)
    return (lambda: cnnl.arange_v2(arena.handle, HIGH, 1, 2, y.desc, y.ptr),
            lambda: np.arange(1, 1 + 2 * n, 2, dtype=np.float64).astype(arena.numpy_dtype(dtype)))


def linspace(arena, shape, dtype):
    y = arena.empty(shape, dtype)
    n = math.prod(shape)
    return (lambda: cnnl.linspace(arena.handle, -1.0, 1.0, y.desc, y.ptr),
            lambda: np.linspace(-1.0, 1.0, n).astype(arena.numpy_dtype(dtype)))


def one_hot(arena, shape, dtype):
    """int32 one-hot encodings of shape[0] * shape[1] / CLASSES labels."""
    count = math.prod(shape) // CLASSES
    labels = arena.rng.integers(0, CLASSES, count).astype(np.int32)
    index = arena.upload(labels, "int32")
    on, off = scalar_pointer(arena, 1, "int32"), scalar_pointer(arena, 0, "int32")
    out = arena.empty((count, CLASSES), "int32")
    return (lambda: cnnl.oneHot(arena.handle, index.desc, index.ptr, CLASSES, on, off, -1, cnnl.CNNL_DTYPE_INT32,
                                out.ptr),
            lambda: np.eye(CLASSES, dtype=np.int32)[labels])


def strided_slice_backward(arena, shape, dtype):
    """The gradient of x[::2, ::2]."""
    dy, dyv = arena.random((shape[0] // 2, shape[1] // 2), dtype)
    dx = arena.empty(shape, dtype)
    out = np.empty(shape, dyv.dtype)

    def reference():
        out.fill(0)
        out[::2, ::2] = dyv
    return (lambda: cnnl.stridedSliceBackward(arena.handle, [0, 0], list(shape), [2, 2], dy.desc, dy.ptr, dx.desc,
                                              dx.ptr),
            reference)


def as_strided_backward(arena, shape, dtype):
    """The gradient of overlapping rows: as_strided(x, (rows - 1, 2 * columns), (columns, 1)) (unfold-like)."""
    rows, columns = shape
    dy, dyv = arena.random((rows - 1, 2 * columns), dtype)
    dx = arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getAsStridedBackwardWorkspaceSize(arena.handle, dx.desc))
    grads = f32(dyv).reshape(-1)
    positions = (np.arange(rows - 1)[:, None] * columns + np.arange(2 * columns)).reshape(-1)
    return (lambda: cnnl.asStridedBackward(arena.handle, dy.desc, dy.ptr, dx.desc, dx.ptr, [columns, 1], 0, workspace,
                                           size),
            lambda: np.bincount(positions, weights=grads, minlength=rows * columns))


#: the cases of this family, in the order the table lists them
CASES = (
    Case("fill", "cnnlFill_v3", fill),
    Case("copy", "cnnlCopy", copy),
    Case("copy v2 strided", "cnnlCopy_v2", copy_v2, reference="np.copyto(x.T)"),
    Case("expand", "cnnlExpand", expand),
    Case("transpose", "cnnlTranspose_v2", transpose(with_workspace=True)),
    Case("transpose v1", "cnnlTranspose", transpose(with_workspace=False), dtypes=("float",)),
    Case("concat", "cnnlConcat", concat),
    Case("split", "cnnlSplit", split),
    Case("strided slice", "cnnlStridedSlice", strided_slice),
    Case("pad", "cnnlPad", pad, reference="np.pad"),
    Case("roll", "cnnlRoll", roll, reference="np.roll"),
    Case("flip", "cnnlFlip", flip, reference="np.copyto(np.flip)"),
    Case("reflection pad", "cnnlReflectionPad2d", pad2d(True), shapes=CHANNELS_FIRST,
             reference="np.pad reflect"),
    Case("replication pad", "cnnlReplicationPad2d", pad2d(False), shapes=CHANNELS_FIRST,
             reference="np.pad edge"),
    Case("tile", "cnnlTile", tile, reference="np.tile"),
    Case("triu", "cnnlTri", tri, reference="np.triu"),
    Case("arange", "cnnlArange_v2", arange, dtypes=("float", "int32")),
    Case("linspace", "cnnlLinspace", linspace, dtypes=("float",)),
    Case("one hot", "cnnlOneHot", one_hot, dtypes=("int32",), reference="np.eye[labels]"),
    Case("strided slice bwd", "cnnlStridedSliceBackward", strided_slice_backward),
    Case("as strided bwd", "cnnlAsStridedBackward", as_strided_backward, reference="np.bincount"),
)


# ---- the cnnl suite: a 4096^2 float32 transpose against .T.copy() ---------------------------------------------------

def case_transpose(bench):
    n = 4096
    x = np.random.rand(n, n).astype(np.float32)
    px, py = bench.put(x), bench.empty(x.nbytes)
    x_desc, y_desc = bench.desc([n, n]), bench.desc([n, n])
    transpose_desc = cnnl.createTransposeDescriptor()
    cnnl.setTransposeDescriptor(transpose_desc, [1, 0])
    workspace = cnnl.getTransposeWorkspaceSize(bench.handle, x_desc, transpose_desc)
    return (lambda: cnnl.transpose_v2(bench.handle, transpose_desc, x_desc, px, y_desc, py, None, workspace),
            lambda: x.T.copy())
