"""Cases of reductions (docs/cnnl_reduce.md): reduce, cumsum, top-k, unique, std/var/mean."""
from __future__ import annotations

import numpy as np

import cnnl

from .base import Case, SUITE_ELEMENTS, f32


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


def top_k(arena, shape, dtype):
    k = 8
    (x, values) = arena.random(shape, dtype)
    top, indices = arena.empty((shape[0], k), dtype), arena.empty((shape[0], k), "int32")
    workspace, size = arena.workspace(cnnl.getTopKTensorWorkspaceSize(arena.handle, x.desc, k, 1, True, top.desc,
                                                                      indices.desc))
    return (lambda: cnnl.topKTensor_v3(arena.handle, x.desc, x.ptr, k, 1, True, True, True, workspace, size,
                                       top.desc, top.ptr, indices.desc, indices.ptr),
            lambda: np.argpartition(values, -k, axis=1)[:, -k:])


def unique(arena, shape, dtype):
    """Sorted unique values of a tensor with ~1000 distinct values, with inverse and counts."""
    values = (arena.rng.integers(0, 1000, shape)).astype(arena.numpy_dtype(dtype))
    x = arena.upload(values, dtype)
    desc = cnnl.createUniqueDescriptor()
    cnnl.setUniqueDescriptor(desc, cnnl.CNNL_SORT_ASCEND, -1, True, True)
    workspace, size = arena.workspace(cnnl.getUniqueWorkspaceSize(arena.handle, desc, x.desc))
    number, out = arena.empty((1,), "int32"), arena.empty((values.size,), dtype)
    inverse, counts = arena.empty(shape, "int32"), arena.empty((values.size,), "int32")
    return (lambda: cnnl.unique_v2(arena.handle, desc, x.desc, x.ptr, workspace, size, number.ptr, out.desc, out.ptr,
                                   inverse.desc, inverse.ptr, counts.desc, counts.ptr),
            lambda: np.unique(values, return_inverse=True, return_counts=True))


def std_var_mean(arena, shape, dtype):
    """Unbiased std and the mean over the last axis."""
    x, xv = arena.random(shape, dtype)
    std, mean = arena.empty((shape[0], 1), dtype), arena.empty((shape[0], 1), dtype)
    desc = cnnl.createStdVarMeanDescriptor()
    cnnl.setStdVarMeanDescriptor(desc, cnnl.CNNL_STD, [1], True)
    workspace, size = arena.workspace(cnnl.getStdVarMeanWorkspaceSize(arena.handle, desc, x.desc))
    x32 = f32(xv)
    return (lambda: cnnl.stdVarMean(arena.handle, desc, x.desc, x.ptr, workspace, size, std.desc, std.ptr, None, None,
                                    mean.desc, mean.ptr),
            lambda: (x32.std(axis=1, ddof=1), x32.mean(axis=1)))


#: the cases of this family, in the order the table lists them
CASES = (
    Case("reduce sum", "cnnlReduce", reduce_sum, dtypes=("float",)),
    Case("cumsum", "cnnlCumsum", cumsum),
    Case("topk 8", "cnnlTopKTensor_v3", top_k, dtypes=("float",), reference="np.argpartition"),
    Case("unique", "cnnlUnique_v2", unique, dtypes=("float", "int32"), reference="np.unique"),
    Case("std mean", "cnnlStdVarMean", std_var_mean),
)


# ---- the cnnl suite: a 2^24-element float32 sum against np.sum ------------------------------------------------------

def case_reduce_sum(bench):
    x = np.random.rand(SUITE_ELEMENTS).astype(np.float32)
    px, py = bench.put(x), bench.empty(4)
    x_desc, y_desc = bench.desc([SUITE_ELEMENTS]), bench.desc([1])
    reduce_desc = cnnl.createReduceDescriptor()
    cnnl.setReduceDescriptor(reduce_desc, [0], cnnl.CNNL_REDUCE_ADD, cnnl.CNNL_DTYPE_FLOAT,
                             cnnl.CNNL_NOT_PROPAGATE_NAN, cnnl.CNNL_REDUCE_NO_INDICES, cnnl.CNNL_32BIT_INDICES)
    workspace = cnnl.getReduceOpWorkspaceSize(bench.handle, x_desc, y_desc, reduce_desc)
    return (lambda: cnnl.reduce(bench.handle, reduce_desc, None, workspace, None, x_desc, px, 0, None, None, y_desc,
                                py),
            lambda: np.sum(x))
