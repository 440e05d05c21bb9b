"""Cases of matrix products and linear algebra (docs/cnnl_matmul.md): matmul, batch matmul, cdist, QR, polar.
References: np.matmul in float32 (numpy has no half GEMM), np.linalg.qr."""
from __future__ import annotations

import numpy as np

import cnnl

from .base import Case, f32


MATMUL = {"small": (256, 256, 256), "medium": (1024, 1024, 1024), "large": (4096, 4096, 4096)}
BATCH_MATMUL = {"small": (8, 128, 128, 128), "medium": (16, 512, 512, 512), "large": (32, 1024, 1024, 1024)}


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


#: (B, R1, R2, M) of cdist
CDIST = {"small": (2, 128, 128, 32), "medium": (4, 512, 512, 64), "large": (8, 1024, 1024, 64)}
#: (B, m, n) of QR
MATRICES = {"small": (16, 32, 32), "medium": (32, 128, 128), "large": (16, 512, 512)}


def cdist(backward: bool):
    """cnnlCdistForward / cnnlCdistBackward with p = 2 against the numpy BLAS formulation."""
    def build(arena, shape, dtype):
        batch, first, second, depth = shape
        (a, av), (b, bv) = arena.random((batch, first, depth), dtype), arena.random((batch, second, depth), dtype)
        x1, x2 = f32(av), f32(bv)

        def distances():
            squared = (x1 * x1).sum(-1)[..., None] + (x2 * x2).sum(-1)[:, None, :] - 2 * x1 @ x2.transpose(0, 2, 1)
            return np.sqrt(np.maximum(squared, 0))
        if not backward:
            y = arena.empty((batch, first, second), dtype)
            return (lambda: cnnl.cdistForward(arena.handle, a.desc, a.ptr, b.desc, b.ptr, 2.0, y.desc, y.ptr),
                    distances)
        dist_values = distances().astype(av.dtype)
        dist, (grad, gv) = arena.upload(dist_values, dtype), arena.random((batch, first, second), dtype)
        dx = arena.empty((batch, first, depth), dtype)
        r, g = f32(dist_values), f32(gv)

        def reference():
            weights = np.where(r == 0, 0, g / np.where(r == 0, 1, r))
            return x1 * weights.sum(-1)[..., None] - weights @ x2
        return (lambda: cnnl.cdistBackward(arena.handle, a.desc, a.ptr, b.desc, b.ptr, dist.desc, dist.ptr, grad.desc,
                                           grad.ptr, 2.0, dx.desc, dx.ptr),
                reference)
    return build


def qr(arena, shape, dtype):
    """cnnlQR (reduced) against numpy.linalg.qr."""
    (a, av) = arena.random(shape, dtype)
    q, r = arena.empty(shape, dtype), arena.empty((shape[0], shape[2], shape[2]), dtype)
    workspace, size = arena.workspace(cnnl.getQRWorkspaceSize(arena.handle, a.desc, True))
    values = f32(av)
    return (lambda: cnnl.qR(arena.handle, a.desc, a.ptr, q.desc, q.ptr, r.desc, r.ptr, workspace, size, True),
            lambda: np.linalg.qr(values))


def polar(arena, shape, dtype):
    """cnnlPolar into COMPLEX_FLOAT against numpy's complex exponential."""
    (radius, rv), (angle, av) = arena.random(shape, dtype, positive=True), arena.random(shape, dtype)
    out_desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(out_desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_COMPLEX_FLOAT, list(shape))
    out = arena.malloc(8 * int(np.prod(shape)))
    return (lambda: cnnl.polar(arena.handle, radius.desc, radius.ptr, angle.desc, angle.ptr, out_desc, out, None, 0),
            lambda: rv * np.exp(1j * av.astype(np.complex64)))


#: the cases of this family, in the order the table lists them
CASES = (
    Case("matmul", "cnnlMatMul", matmul, shapes=MATMUL, dtypes=("float", "half", "bfloat16"),
             reference="np.matmul float32"),
    Case("matmul v2", "cnnlMatMul_v2", matmul_v2, shapes=MATMUL, dtypes=("half",), reference="np.matmul float32"),
    Case("batch matmul", "cnnlBatchMatMulBCast", batch_matmul, shapes=BATCH_MATMUL, dtypes=("float", "half"),
             reference="np.matmul float32"),
    Case("batch matmul v2", "cnnlBatchMatMulBCast_v2", batch_matmul_v2, shapes=BATCH_MATMUL, dtypes=("half",),
             reference="np.matmul float32"),
    Case("cdist", "cnnlCdistForward", cdist(False), shapes=CDIST),
    Case("cdist bwd", "cnnlCdistBackward", cdist(True), shapes=CDIST),
    Case("qr", "cnnlQR", qr, shapes=MATRICES, dtypes=("float",), reference="np.linalg.qr"),
    Case("polar", "cnnlPolar", polar, dtypes=("float",)),
)


# ---- the cnnl suite: matMul against numpy's float32 matmul ----------------------------------------------------------

def matmul_case(n: int, dtype_code: int, dtype):
    """matMul of n x n matrices of `dtype`, against numpy's float32 matmul of the same size."""
    def case(bench):
        a = np.random.rand(n, n).astype(np.float32)
        b = np.random.rand(n, n).astype(np.float32)
        pa, pb, pc = bench.put(a.astype(dtype)), bench.put(b.astype(dtype)), bench.empty(n * n * 4)
        desc = bench.desc([n, n], dtype_code)
        out = np.empty_like(a)
        return (lambda: cnnl.matMul(bench.handle, False, False, 1.0, desc, pa, desc, pb, 0.0, desc, pc),
                lambda: np.matmul(a, b, out=out))
    return case
