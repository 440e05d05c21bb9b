"""The table of benchmark cases of `mlusim bench`: every cnnl op, memcpy, a BANG kernel and collectives, one module
per op family (the families of docs/cnnl.md).

A case names its op, the cnnl (or cnrt) function it calls, the data types it runs in, its shape at each size, and a
`build(arena, shape, dtype)` that puts its operands in device memory through cnrt and returns two functions: the
device call (enqueued on the arena's queue) and the numpy reference doing the same work on the host. Adding an op is
adding a row to its family's `CASES`; base.py holds the arena, the case record and the shapes several families use.
"""
from __future__ import annotations

from . import (attention, convolution, elementwise, indexing, losses, matmul, movement, normalization, pooling,
               random, reduce, transfers)
from .base import DTYPES, ELEMENTWISE, FLOATS, SIZES, VECTOR, Arena, Build, Case, Tensor

#: the op families in the order the table lists them
FAMILIES = (elementwise, movement, reduce, indexing, matmul, convolution, pooling, normalization, attention, losses,
            random, transfers)
CASES: tuple[Case, ...] = tuple(case for family in FAMILIES for case in family.CASES)

__all__ = ["CASES", "DTYPES", "ELEMENTWISE", "FAMILIES", "FLOATS", "SIZES", "VECTOR", "Arena", "Build", "Case",
           "Tensor"]
