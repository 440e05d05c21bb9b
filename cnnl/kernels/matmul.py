"""Matrix products: out = alpha * op(a) @ op(b) + beta * out (`cnnlMatMul`, `cnnlBatchMatMulBCast`).

op(x) is x or its transpose (last two axes). Leading batch axes broadcast as in numpy.matmul. The product runs on
the host BLAS: float32 and float64 in their own type; float16 and bfloat16 are converted to float32 in parallel,
multiplied by sgemm and rounded once into the output (numpy's own float16 matmul is never used: it is ~100x slower).
Integer inputs are multiplied exactly: int8/int16/uint8 through float64 BLAS (exact while
k * max|a| * max|b| < 2**53), int32/int64 in int64 (wrapping). The result is stored into `out`, whose dtype may
differ from the inputs' (e.g. int8 x int8 -> float32), with the `cast` rules (saturating into integer outputs);
alpha/beta scaling of an integer product is done in float64.
beta == 0 never reads `out`; alpha == 0 never reads a and b (BLAS semantics: their NaN and inf do not reach out).
"""
import functools

import numpy as np

from mlusim.host import blas as blas_threads
from .cast import cast_to_new
from .dtypes import FLOAT32, FLOAT64, NUMERIC_DTYPES, check_dtype, check_same_dtype, compute_dtype, is_half, is_int
from .elementwise import run_elementwise
from .parallel import even_ranges, map_parallel, thread_count
from .staging import load, store

#: 16-bit matrix products with at least this many multiply-adds run as row blocks, each converting its rows of a,
#: multiplying them with single-threaded BLAS and rounding its rows of the output on one pool thread: the
#: conversions overlap the GEMM instead of waiting for BLAS's own threads (which spin after a GEMM)
FUSED_MIN_MACS = 1 << 24

_INT64 = np.dtype(np.int64)


def _product_dtype(dtype):
    if is_int(dtype):
        return FLOAT64 if dtype.itemsize <= 2 else _INT64
    return compute_dtype(dtype)


def _operand(x, transposed, dtype):
    values = x if x.dtype == dtype else cast_to_new(x, dtype)
    return np.swapaxes(values, -1, -2) if transposed else values


def _scale_block(alpha, beta, out, product):
    if is_int(product.dtype) and (alpha != 1 or beta != 0):
        product = product.astype(FLOAT64)  # integer products are scaled in float64
    kind = product.dtype.type
    result = product if alpha == 1 else product * kind(alpha)
    if beta != 0:
        result = result + load(out, product.dtype) * kind(beta)
    store(result, out)


def matmul_shape(a_shape, b_shape, trans_a=False, trans_b=False):
    """The output shape of matmul(a, b) with the given transposes; raises ValueError when they do not fit."""
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise ValueError("matmul operands need at least 2 axes")
    m, k = (a_shape[-1], a_shape[-2]) if trans_a else (a_shape[-2], a_shape[-1])
    k_b, n = (b_shape[-1], b_shape[-2]) if trans_b else (b_shape[-2], b_shape[-1])
    if k != k_b:
        raise ValueError(f"inner dimensions differ: {k} vs {k_b}")
    try:
        batch = np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))
    except ValueError as exc:
        raise ValueError(f"batch shapes {a_shape[:-2]} and {b_shape[:-2]} do not broadcast") from exc
    return tuple(batch) + (m, n)


def matmul(a, b, out, trans_a=False, trans_b=False, alpha=1.0, beta=0.0):
    """out = alpha * op(a) @ op(b) + beta * out, batched with broadcasting; see the module doc for numerics."""
    check_same_dtype(a=a, b=b)
    check_dtype("a", a, NUMERIC_DTYPES)
    check_dtype("out", out, NUMERIC_DTYPES)
    expected = matmul_shape(a.shape, b.shape, trans_a, trans_b)
    if out.shape != expected:
        raise ValueError(f"out shape {out.shape}, expected {expected}")
    dtype = _product_dtype(a.dtype)
    if alpha == 0:  # as BLAS: the product is not formed, so NaN or inf in a or b cannot reach out
        zeros = np.zeros(out.shape, dtype)
        run_elementwise(functools.partial(_scale_block, 1.0, beta), out, [zeros], staged=True)
        return
    if (is_half(a.dtype) and a.ndim == 2 and b.ndim == 2 and blas_threads.available()
            and out.shape[0] * out.shape[1] * (a.shape[0] if trans_a else a.shape[1]) >= FUSED_MIN_MACS):
        _half_matmul_rows(a, b, out, trans_a, trans_b, alpha, beta)
        return
    left, right = _operand(a, trans_a, dtype), _operand(b, trans_b, dtype)
    if _row_blocks(left, right, out, alpha, beta):
        return
    with blas_threads.gemm_threads(out.size * left.shape[-1]):
        if alpha == 1 and beta == 0 and out.dtype == dtype:
            if not _batches_in_parallel(left, right, out):
                np.matmul(left, right, out=out)
            return
        product = np.matmul(left, right)
    run_elementwise(functools.partial(_scale_block, alpha, beta), out, [product], staged=True)


#: 2-D float products of at least this many multiply-adds, and fewer than blas_threads.PARALLEL_GEMM_MACS (where
#: BLAS's own threads take over), are cut into row blocks over the pool, each multiplied by single-threaded BLAS and
#: scaled by itself: BLAS's threads spin after a GEMM and slow the torch CPU work around such products, and scaling
#: per block saves a staged pass after the whole product (docs/cnnl_matmul.md)
ROW_SPLIT_MIN_MACS = 1 << 21
#: fewest rows of a block
ROW_SPLIT_MIN_ROWS = 16


def _row_blocks(left, right, out, alpha, beta) -> bool:
    """out = alpha * left @ right + beta * out by blocks of rows on the pool (see ROW_SPLIT_MIN_MACS), each block
    scaled as `_scale_block` scales the whole; False to leave the product to one GEMM."""
    dtype = left.dtype
    if (out.ndim != 2 or dtype not in (FLOAT32, FLOAT64) or right.dtype != dtype or thread_count() == 1
            or not blas_threads.available()):
        return False
    rows, macs = out.shape[0], out.size * left.shape[-1]
    pieces = min(thread_count(), rows // ROW_SPLIT_MIN_ROWS)
    if not ROW_SPLIT_MIN_MACS <= macs < blas_threads.PARALLEL_GEMM_MACS or pieces < 2:
        return False
    plain = alpha == 1 and beta == 0 and out.dtype == dtype

    def run(bounds):
        block = slice(*bounds)
        with blas_threads.single_threaded_blas():
            if plain:
                np.matmul(left[block], right, out=out[block])
            else:
                _scale_block(alpha, beta, out[block], np.matmul(left[block], right))

    map_parallel(run, even_ranges(rows, pieces))
    return True


#: batched float products whose matrices have at most this many multiply-adds are shared out by batch over the pool,
#: each with single-threaded BLAS: BLAS's own threads gain little on one small GEMM and spin between them
BATCH_SPLIT_MAX_MACS = 1 << 24


def _batches_in_parallel(left, right, out) -> bool:
    """out = left @ right by ranges of batch entries on the pool when the batch is large and its matrices small
    (left and right of one batch shape, float); False to leave the product to numpy's matmul."""
    threads = thread_count()
    if (out.ndim < 3 or left.shape[:-2] != out.shape[:-2] or right.shape[:-2] != out.shape[:-2] or threads == 1
            or out.dtype not in (FLOAT32, FLOAT64) or not blas_threads.available()):
        return False
    batches = out.size // (out.shape[-1] * out.shape[-2]) if out.size else 0
    macs = out.shape[-2] * out.shape[-1] * left.shape[-1]
    if batches < threads or macs > BATCH_SPLIT_MAX_MACS or macs * batches < FUSED_MIN_MACS // 4:
        return False
    flat = [x.reshape((batches,) + x.shape[-2:]) for x in (left, right)]
    target = out.reshape((batches,) + out.shape[-2:])
    if not np.shares_memory(target, out):  # out is not viewable as one batch axis: leave it to numpy
        return False

    def run(bounds):
        start, stop = bounds
        with blas_threads.single_threaded_blas():
            np.matmul(flat[0][start:stop], flat[1][start:stop], out=target[start:stop])

    map_parallel(run, even_ranges(batches, 2 * threads))
    return True


def _half_matmul_rows(a, b, out, trans_a, trans_b, alpha, beta):
    """A 2-D float16/bfloat16 product by row blocks over the pool (see FUSED_MIN_MACS); numerics as `matmul`."""
    right = _operand(b, trans_b, FLOAT32)
    left = np.swapaxes(a, -1, -2) if trans_a else a
    rows = out.shape[0]
    threads = thread_count()
    step = max(32, -(-rows // (2 * threads)))
    plain = alpha == 1 and beta == 0

    def run(start):
        block = slice(start, min(start + step, rows))
        values = load(left[block])
        with blas_threads.single_threaded_blas():
            product = np.matmul(values, right)
        if plain:
            store(product, out[block])
        else:
            _scale_block(alpha, beta, out[block], product)

    map_parallel(run, range(0, rows, step))
