"""Cases beyond cnnl: cnrt copies in the three directions and a BANG kernel (the vector-add sample)."""
from __future__ import annotations

import numpy as np

import cnrt

from .base import Build, Case, VECTOR


BYTES = {"small": (1 << 18,), "medium": (1 << 22,), "large": (1 << 26,)}


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


#: the cases of this family, in the order the table lists them
CASES = (
    Case("memcpy H2D", "cnrtMemcpyAsync", memcpy("H2D"), shapes=BYTES, dtypes=("uint8",), kinds=("memcpy",),
             reference="np.copyto"),
    Case("memcpy D2H", "cnrtMemcpyAsync", memcpy("D2H"), shapes=BYTES, dtypes=("uint8",), kinds=("memcpy",),
             reference="np.copyto"),
    Case("memcpy D2D", "cnrtMemcpyAsync", memcpy("D2D"), shapes=BYTES, dtypes=("uint8",), kinds=("memcpy",),
             reference="np.copyto"),
    Case("bang vector add", "vector_add", bang_vector_add, shapes=VECTOR, dtypes=("float",), kinds=("kernel",)),
)
