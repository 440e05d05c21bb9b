"""MagicMind's matmul / fully-connected layer with its epilogue fused in, in float (16-bit floats computed in
float32) or quantized (int8 / int16) arithmetic; its own kernel for the reasons `kernels/conv.py` gives.

numpy matmul semantics (batched, broadcasting, 1-D operands promoted), trans_a / trans_b on the last two axes.
A product whose right operand is one matrix (a fully-connected layer, or a transformer's projection) is computed
in blocks of rows of the left operand on the host's cores (single-threaded BLAS each), each block's epilogue
right after its GEMM; other products (batched attention scores) are one numpy matmul followed by the epilogue
over the whole output. Quantized operands are quantized as in `kernels/conv.py` and multiplied exactly.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from mlusim.host import blas
from mlusim.host.parallel import even_ranges, map_parallel, thread_count

from .codegen import Elementwise
from .conv import INLINE_MACS, MIN_BLOCK_ROWS, NARROW_ROWS, Quantization

#: target bytes of a block of the left operand's rows
BLOCK_BYTES = 1 << 19


def quantized(values: np.ndarray, quant: Quantization) -> np.ndarray:
    """(q - zero) of `values` as exact integers in the GEMM's type, q = clip(rint(x / scale) + zero, qmin, qmax)."""
    q = np.rint(values.astype(np.float64) * quant.inverse) + quant.zero
    np.clip(q, quant.qmin, quant.qmax, out=q)
    q -= quant.zero
    return q.astype(quant.gemm_dtype)


def exact_product(a: np.ndarray, b: np.ndarray, quant: Optional[Quantization]) -> np.ndarray:
    """a @ b of integer-valued operands, exact (chunks of float32 GEMMs for int8), as float32."""
    if quant is None:
        return np.matmul(a, b)
    chunk = quant.chunk
    k = a.shape[-1]
    if chunk is None or k <= chunk:
        return np.matmul(a, b).astype(np.float32, copy=False)
    total = None
    for start in range(0, k, chunk):
        part = np.matmul(a[..., start:start + chunk], b[..., start:start + chunk, :]).astype(np.float64)
        total = part if total is None else total + part
    return total.astype(np.float32)


class MatMul:
    """One matmul layer prepared for one pair of input shapes."""

    def __init__(self, a_shape, b_shape, trans_a: bool, trans_b: bool, out_shape, epilogue: dict,
                 extra_shapes: Sequence[tuple], quant_a: Optional[Quantization] = None,
                 quant_b: Optional[Quantization] = None, b_integer: bool = False, constant_b: bool = False):
        self.a_shape, self.b_shape, self.out_shape = tuple(a_shape), tuple(b_shape), tuple(out_shape)
        self.trans_a, self.trans_b = trans_a, trans_b
        self.quant_a, self.quant_b, self.b_integer, self.constant_b = quant_a, quant_b, b_integer, constant_b
        self.quant = quant_a
        a2 = (1,) + self.a_shape if len(self.a_shape) == 1 else self.a_shape
        b2 = self.b_shape + (1,) if len(self.b_shape) == 1 else self.b_shape
        self.k = a2[-2] if trans_a else a2[-1]
        self.n = b2[-2] if trans_b else b2[-1]
        self.rows = int(np.prod(out_shape[:-1], dtype=np.int64)) if len(self.b_shape) > 1 else 1
        self.by_rows = len(self.b_shape) == 2 and not trans_a and len(self.a_shape) >= 2 and len(self.out_shape) >= 2
        self.size = int(np.prod(out_shape, dtype=np.int64))
        self.macs = self.size * self.k
        shaped = [self._as_rows(s) for s in extra_shapes] if self.by_rows else [None]
        if self.by_rows and all(s is not None for s in shaped):
            self.extra_rows = shaped
            self.epilogue = Elementwise(epilogue, [(self.rows, self.n)] + shaped, (self.rows, self.n))
        else:
            self.by_rows = False
            self.epilogue = Elementwise(epilogue, [self.out_shape] + [tuple(s) for s in extra_shapes],
                                        self.out_shape)
        self._weights = None

    def _as_rows(self, shape):
        shape = (1,) * (len(self.out_shape) - len(shape)) + tuple(shape)
        if len(shape) != len(self.out_shape) or shape[-1] not in (1, self.n):
            return None
        if all(d == 1 for d in shape[:-1]):
            return (1, shape[-1])
        if shape[:-1] == self.out_shape[:-1]:
            return (self.rows, shape[-1])
        return None

    @property
    def flops(self) -> float:
        return 2.0 * self.macs

    def _right(self, b: np.ndarray) -> np.ndarray:
        """The right operand in the GEMM's type and (K, N) orientation (a view of it when it already is); a
        converted constant is kept across calls (keyed by where it is: constants never change)."""
        quant = self.quant_a
        key = b.__array_interface__["data"][0]
        if self._weights is not None and self._weights[0] == key:
            return self._weights[1]
        if quant is None:
            right = b.astype(np.float32, copy=False) if b.dtype != np.float64 else b
        elif self.b_integer:
            right = b.astype(quant.gemm_dtype)
        else:
            right = quantized(b, self.quant_b)
        if self.trans_b:
            right = right.swapaxes(-1, -2)
        if self.constant_b and right is not b:
            self._weights = (key, right)
        return right

    def _left(self, a: np.ndarray) -> np.ndarray:
        if self.quant_a is not None:
            return quantized(a, self.quant_a)
        return a.astype(np.float32) if a.dtype == np.float16 else a

    def __call__(self, a: np.ndarray, b: np.ndarray, extras: Sequence[np.ndarray], out: np.ndarray) -> None:
        if self.size == 0:
            return
        if self.k == 0:
            zeros = np.zeros(self.out_shape, np.float32)
            self.epilogue([zeros] + list(extras), out)
            return
        right = self._right(b)
        if not self.by_rows:
            left = self._left(a)
            if left.ndim == 1:
                left = left[None, :]
            if self.trans_a:
                left = left.swapaxes(-1, -2)
            if right.ndim == 1:
                right = right[:, None]
            with blas.single_threaded_blas():
                acc = exact_product(left, right, self.quant_a) if self.quant_a is not None else \
                    np.matmul(left, right)
            self.epilogue([acc.astype(np.float32, copy=False).reshape(self.out_shape)] + list(extras), out)
            return
        a2 = a.reshape(self.rows, self.k)
        out2 = out.reshape(self.rows, self.n)
        extras2 = [e.reshape(r) for e, r in zip(extras, self.extra_rows)]

        def block(bounds):
            r0, r1 = bounds
            left = self._left(a2[r0:r1])
            acc = exact_product(left, right, self.quant_a) if self.quant_a is not None else np.matmul(left, right)
            views = [e if e.shape[0] == 1 else e[r0:r1] for e in extras2]
            self.epilogue.run_block([acc.astype(np.float32, copy=False)] + views, out2[r0:r1])

        with blas.single_threaded_blas():  # the work shared out on the team instead (kernels/conv.py says why)
            threads = thread_count()
            if self.macs > INLINE_MACS and threads > 1 and self.rows < threads * NARROW_ROWS:
                left = self._left(a2)
                acc = np.empty((self.rows, self.n), np.float32)

                def part(bounds):
                    c0, c1 = bounds
                    product = exact_product(left, right[:, c0:c1], self.quant_a) if self.quant_a is not None \
                        else np.matmul(left, right[:, c0:c1])
                    acc[:, c0:c1] = product
                map_parallel(part, even_ranges(self.n, min(self.n, 2 * threads)))
                self.epilogue.run_block([acc] + extras2, out2, True)
                return
            blocks = self._blocks()
            if len(blocks) == 1:
                block(blocks[0])
            else:
                map_parallel(block, blocks)

    def _blocks(self) -> list:
        rows = max(MIN_BLOCK_ROWS, BLOCK_BYTES // max(1, self.k * 4))
        count = -(-self.rows // rows)
        threads = thread_count()
        if self.macs <= INLINE_MACS:
            count = 1
        elif count < threads and self.rows >= threads * MIN_BLOCK_ROWS:
            count = threads
        count = max(1, min(count, self.rows))
        bounds = [self.rows * k // count for k in range(count + 1)]
        return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]

