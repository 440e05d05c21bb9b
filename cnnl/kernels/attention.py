"""Flash attention, forward and backward (`cnnlFlashAttentionForward(_v2)`, `cnnlFlashAttentionBackward(_v2)`).

Sequences are packed: q (total_q, heads_q, d), k and v (total_k, heads_k, d / dv); sequence b holds query rows
cu_q[b]..cu_q[b+1] and key rows cu_k[b]..cu_k[b+1]. Query head h reads key/value head h // (heads_q / heads_k)
(grouped-query attention). For query i and key j of one sequence (positions counted from the sequence start):

    s_ij = scale * q_i . k_j (+ bias[b, h, i, j]),  allowed iff lo_i <= j <= hi_i  (the mask: `Mask.bounds`)
    lse_i = log(sum over allowed j of exp(s_ij)),  p_ij = exp(s_ij - lse_i)
    out_i = sum over allowed j of p_ij * z_ij * v_j

where z_ij is the dropout factor: 1 / (1 - p_drop) or 0, from uniform number ((b * heads_q + h) * max_q + i) * max_k + j
of the (seed, offset) stream of `cnnl.kernels.random` (kept where the number is >= p_drop, as fused dropout does).
A query row with no allowed key gets out 0 and lse +inf (flash-attention's rule). lse is (heads_q, total_q) float32.
The optional additive `bias` broadcasts to (batch, heads_q, max_q, max_k); the optional `used_k` limits sequence b
to its first used_k[b] keys.

The computation is blockwise and never holds the attention matrix (except for problems whose scores all together
fit BATCHED_SCORES, computed at once by batched products with the same formulas): each work item (a range of query
rows of one (sequence, head), or for the backward one key/value head of one sequence) walks blocks of at most
QUERY_BLOCK x KEY_BLOCK scores with an online softmax (running row maximum and sum, the output accumulator
rescaled when the maximum grows). Products run on the host BLAS (single-threaded per item, items spread over the
kernel thread pool); half and bfloat16 inputs are widened to float32 per head, double computes in float64.
Key blocks entirely outside a block's mask are skipped, so causal attention does half the work.

Backward (from out, lse and dout): with D_i = dout_i . out_i, for each block p = exp(s - lse), dv += (p z)^T dout,
dp = (dout v^T) z, ds = p (dp - D), dq += scale ds k, dk += scale ds^T q; key/value heads shared by several query
heads sum their gradients.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mlusim.host import blas as blas_threads
from .dtypes import compute_dtype
from .parallel import map_parallel, thread_count
from .random import keep_scale_grid
from .staging import load, store

#: query rows per score block
QUERY_BLOCK = 128
#: keys per score block: one block covers typical sequences whole, longer ones are walked with the online softmax
KEY_BLOCK = 2048
#: attention over sequences of one length (packed from row 0, no dropout) whose scores for every (sequence, head)
#: together hold at most this many elements is computed for all of them at once, by batched products: blockwise, a
#: small model's attention is hundreds of tiny numpy calls (docs/cnnl_attention.md)
BATCHED_SCORES = 1 << 21

NONE, CAUSAL, CAUSAL_TOP_LEFT, CAUSAL_BOTTOM_RIGHT, LOCAL_TOP_LEFT, LOCAL_BOTTOM_RIGHT = range(6)
MASK_MODES = (NONE, CAUSAL, CAUSAL_TOP_LEFT, CAUSAL_BOTTOM_RIGHT, LOCAL_TOP_LEFT, LOCAL_BOTTOM_RIGHT)
_CAUSAL_MODES = (CAUSAL, CAUSAL_TOP_LEFT, CAUSAL_BOTTOM_RIGHT)
_BOTTOM_RIGHT_MODES = (CAUSAL_BOTTOM_RIGHT, LOCAL_BOTTOM_RIGHT)


@dataclass(frozen=True)
class Mask:
    """Which keys a query sees: a mask mode and a sliding window (`left`, `right`: keys before / after the query's
    diagonal, -1 = unbounded). Causal modes see no key after the diagonal; bottom-right modes put the diagonal of
    query i at key i + len_k - len_q, the others at key i."""

    mode: int = NONE
    left: int = -1
    right: int = -1

    def bounds(self, rows: np.ndarray, len_q: int, len_k: int) -> tuple[np.ndarray, np.ndarray]:
        """(first, last) allowed key of each query row in `rows` (int64; last < first: none)."""
        diagonal = rows + (len_k - len_q if self.mode in _BOTTOM_RIGHT_MODES else 0)
        first = np.zeros_like(rows) if self.left < 0 else np.maximum(diagonal - self.left, 0)
        reach = math.inf if self.right < 0 else self.right
        if self.mode in _CAUSAL_MODES:
            reach = 0
        last = np.full_like(rows, len_k - 1) if reach == math.inf else np.minimum(diagonal + int(reach), len_k - 1)
        return first, last


@dataclass(frozen=True)
class Dropout:
    """Dropout of the attention probabilities: probability `p` from stream (seed, offset); the grid of random
    numbers is (batch, heads_q, max_q, max_k)."""

    p: float
    seed: int
    offset: int
    max_q: int
    max_k: int

    def factors(self, sequence: int, head: int, heads: int, rows: slice, cols: slice, dtype) -> np.ndarray:
        """z for query rows `rows` and keys `cols` of one (sequence, head): 1 / (1 - p) or 0."""
        out = np.empty((rows.stop - rows.start, cols.stop - cols.start), dtype)
        first = ((sequence * heads + head) * self.max_q + rows.start) * self.max_k + cols.start
        keep_scale_grid(self.seed, self.offset, first, self.max_k, self.p, out)
        return out


def _bias_block(bias, sequence, head, rows, j0, j1, dtype):
    """The additive bias of a block of scores (bias broadcasts to (batch, heads_q, max_q, max_k))."""
    return load(bias[min(sequence, bias.shape[0] - 1), min(head, bias.shape[1] - 1),
                     rows if bias.shape[2] > 1 else slice(None), slice(j0, j1) if bias.shape[3] > 1 else slice(None)],
                dtype)


def random_numbers(batch: int, heads: int, max_q: int, max_k: int) -> int:
    """How many random numbers one call draws (cnnlGetFlashAttentionGeneratedRandomNumbers)."""
    return batch * heads * max_q * max_k


def check_sequences(cu_q: np.ndarray, cu_k: np.ndarray, total_q: int, total_k: int, max_q: int, max_k: int,
                    used_k=None):
    """The (start, length) pairs of the packed query and key sequences; ValueError when the offsets are not
    non-decreasing, run past the tensors, or a sequence is longer than its maximum. `used_k` (optional) cuts each
    key sequence to its first used_k[b] keys."""
    pairs = []
    for name, cu, total, longest in (("cu_seqlens_q", cu_q, total_q, max_q), ("cu_seqlens_k", cu_k, total_k, max_k)):
        offsets = np.asarray(cu, np.int64)
        lengths = np.diff(offsets)
        if offsets.size and (offsets[0] < 0 or offsets[-1] > total or (lengths < 0).any()):
            raise ValueError(f"{name} {offsets.tolist()} is not a non-decreasing list of offsets within the "
                             f"{total} packed rows")
        if (lengths > longest).any():
            raise ValueError(f"{name} holds a sequence of {int(lengths.max())} rows, longer than the descriptor's "
                             f"maximum {longest}")
        pairs.append(list(zip(offsets[:-1].tolist(), lengths.tolist())))
    if used_k is not None:
        used = np.asarray(used_k, np.int64)
        if (used < 0).any() or (used > np.diff(np.asarray(cu_k, np.int64))).any():
            raise ValueError(f"seqused_k {used.tolist()} is negative or longer than the key sequences")
        pairs[1] = [(start, int(n)) for (start, _), n in zip(pairs[1], used)]
    return list(zip(*pairs))


def _key_ranges(mask: Mask, rows: np.ndarray, len_q: int, len_k: int):
    """(first, last) per row and the key blocks [j0, j1) that hold any allowed key of these rows: the keys every
    row sees in blocks of up to KEY_BLOCK, the ragged edges (where the mask cuts) in blocks of their own, so that
    only those need masking."""
    first, last = mask.bounds(rows, len_q, len_k)
    live = last >= first
    if not live.any():
        return first, last, []
    lo, hi = int(first[live].min()), int(last[live].max()) + 1
    full_lo, full_hi = int(first.max()), int(last.min()) + 1
    if full_hi <= full_lo:
        cuts = [lo, hi]
    else:
        cuts = sorted({lo, full_lo, full_hi, hi})
    blocks = []
    for start, stop in zip(cuts[:-1], cuts[1:]):
        blocks += [(j, min(j + KEY_BLOCK, stop)) for j in range(start, stop, KEY_BLOCK)]
    return first, last, blocks


def _mask_block(scores, first, last, j0, j1, fill):
    """Set the scores of keys outside [first_i, last_i] to `fill`, unless the whole block is allowed."""
    if first.max() <= j0 and last.min() >= j1 - 1:
        return None
    cols = np.arange(j0, j1)
    outside = (cols[None, :] < first[:, None]) | (cols[None, :] > last[:, None])
    np.putmask(scores, outside, fill)
    return outside


def _widened(view, dtype, scale=None):
    """A C-contiguous 2-D array of a view's values in the compute dtype (a new array when `scale` multiplies it)."""
    values = load(view, dtype)
    if scale is not None:
        return np.multiply(values, dtype.type(scale))
    return np.ascontiguousarray(values)


def _forward_rows(q, k, v, out, lse, scale, mask, dropout, bias, sequence, head, kv_head, q_seq, k_seq, rows, dtype,
                  debug):
    """out and lse of query rows `rows` (sequence-relative) of one (sequence, head)."""
    (q0, len_q), (k0, len_k) = q_seq, k_seq
    heads = q.shape[1]
    index = np.arange(rows.start, rows.stop)
    keys = values = None
    for start in range(rows.start, rows.stop, QUERY_BLOCK):
        block = slice(start, min(start + QUERY_BLOCK, rows.stop))
        here = index[block.start - rows.start:block.stop - rows.start]
        first, last, key_blocks = _key_ranges(mask, here, len_q, len_k)
        n = here.size
        acc = np.zeros((n, v.shape[2]), dtype)
        row_max = np.full(n, -np.inf, dtype)
        row_sum = np.zeros(n, dtype)
        if key_blocks:
            query = _widened(q[q0 + block.start:q0 + block.stop, head], dtype, scale)
            if keys is None:  # the whole key/value sequence of this head, widened once per item
                keys = _widened(k[k0:k0 + len_k, kv_head], dtype)
                values = _widened(v[k0:k0 + len_k, kv_head], dtype)
        for j0, j1 in key_blocks:
            scores = query @ keys[j0:j1].T
            if bias is not None:
                scores += _bias_block(bias, sequence, head, block, j0, j1, dtype)
            _mask_block(scores, first, last, j0, j1, -np.inf)
            new_max = np.maximum(row_max, scores.max(axis=1))
            shift = np.where(np.isfinite(new_max), new_max, 0)
            scores -= shift[:, None]
            np.exp(scores, out=scores)
            if len(key_blocks) > 1:
                correction = np.exp(row_max - shift)
                row_sum *= correction
                acc *= correction[:, None]
            row_sum += scores.sum(axis=1)
            if dropout is not None:
                factors = dropout.factors(sequence, head, heads, block, slice(j0, j1), dtype)
                scores *= factors
                if debug is not None:
                    _store_debug(debug, sequence, head, block, j0, j1, factors, first, last, dtype)
            acc += scores @ values[j0:j1]
            row_max = new_max
        with np.errstate(divide="ignore", invalid="ignore"):
            empty = row_sum == 0
            acc /= np.where(empty, 1, row_sum)[:, None]
            logsum = np.where(empty, np.inf, row_max + np.log(np.where(empty, 1, row_sum)))
        store(acc, out[q0 + block.start:q0 + block.stop, head])
        lse[head, q0 + block.start:q0 + block.stop] = logsum


def _store_debug(debug, sequence, head, block, j0, j1, factors, first, last, dtype):
    """The kept (1) / dropped (0) flags of the allowed scores of a block into the debug mask (b, h, max_q, max_k)."""
    kept = (factors != 0).astype(dtype)
    _mask_block(kept, first, last, j0, j1, 0)
    store(kept, debug[sequence, head, block, j0:j1])


def _batch_shape(pairs, heads_q: int, dropout) -> tuple[int, int, int] | None:
    """(batch, len_q, len_k) when the whole problem takes the batched path (see BATCHED_SCORES), else None."""
    if dropout is not None or not pairs:
        return None
    (_, len_q), (_, len_k) = pairs[0]
    for sequence, ((q0, lq), (k0, lk)) in enumerate(pairs):
        if lq != len_q or lk != len_k or q0 != sequence * len_q or k0 != sequence * len_k:
            return None
    if len_q == 0 or len_k == 0 or len(pairs) * heads_q * len_q * len_k > BATCHED_SCORES:
        return None
    return len(pairs), len_q, len_k


def _heads_first(x, batch: int, length: int, dtype, group: int = 1, scale=None) -> np.ndarray:
    """Rows 0..batch*length of packed x (total, heads, d) as (batch, heads * group, length, d) in the compute dtype
    (each head repeated `group` times: grouped-query attention), times `scale` when given."""
    values = load(x[:batch * length], dtype).reshape(batch, length, x.shape[1], x.shape[2]).transpose(0, 2, 1, 3)
    if group > 1:
        values = np.repeat(values, group, axis=1)
    return np.multiply(values, dtype.type(scale)) if scale is not None else np.ascontiguousarray(values)


def _batched_scores(query, keys, mask, bias, shape, dtype, scale=None) -> np.ndarray:
    """q . k of every (sequence, head), times `scale` when given (the forward scales q first, the backward the
    product, as the blockwise passes do), plus the bias, -inf where the mask forbids."""
    _, len_q, len_k = shape
    scores = np.matmul(query, keys.swapaxes(-1, -2))
    if scale is not None:
        scores *= dtype.type(scale)
    if bias is not None:
        rows = slice(None) if bias.shape[2] == 1 else slice(0, len_q)
        cols = slice(None) if bias.shape[3] == 1 else slice(0, len_k)
        scores += load(bias[:, :, rows, cols], dtype)
    first, last = mask.bounds(np.arange(len_q), len_q, len_k)
    if first.max() > 0 or last.min() < len_k - 1:
        cols = np.arange(len_k)
        np.copyto(scores, -np.inf, where=(cols[None, :] < first[:, None]) | (cols[None, :] > last[:, None]))
    return scores


def _batched_forward(q, k, v, out, lse, scale, mask, bias, shape, group, dtype):
    """out and lse of every (sequence, head) at once (`_batch_shape`): the blockwise formulas on whole score
    matrices."""
    batch, len_q, _ = shape
    heads = q.shape[1]
    query = _heads_first(q, batch, len_q, dtype, scale=scale)
    scores = _batched_scores(query, _heads_first(k, batch, shape[2], dtype, group), mask, bias, shape, dtype)
    row_max = scores.max(axis=-1)
    shift = np.where(np.isfinite(row_max), row_max, 0)
    scores -= shift[..., None]
    np.exp(scores, out=scores)
    row_sum = scores.sum(axis=-1)
    acc = np.matmul(scores, _heads_first(v, batch, shape[2], dtype, group))
    with np.errstate(divide="ignore", invalid="ignore"):
        empty = row_sum == 0
        acc /= np.where(empty, 1, row_sum)[..., None]
        logsum = np.where(empty, np.inf, row_max + np.log(np.where(empty, 1, row_sum)))
    store(acc.transpose(0, 2, 1, 3).reshape(batch * len_q, heads, -1), out[:batch * len_q])
    lse[:, :batch * len_q] = logsum.transpose(1, 0, 2).reshape(heads, -1)


def _items_forward(pairs, heads_q, rows_per_item):
    items = []
    for sequence, (q_seq, k_seq) in enumerate(pairs):
        for head in range(heads_q):
            for start in range(0, q_seq[1], rows_per_item):
                items.append((sequence, head, slice(start, min(start + rows_per_item, q_seq[1]))))
    return items


def _rows_per_item(pairs, heads_q):
    """Query rows per forward work item: whole sequences when there are enough (sequence, head) pairs to keep every
    thread busy, else shorter runs (each item widens its key/value head once)."""
    longest = max((q[1] for q, _ in pairs), default=0)
    wanted = 4 * thread_count()
    units = len(pairs) * heads_q
    if units >= wanted or longest == 0:
        return max(longest, 1)
    return max(QUERY_BLOCK, -(-longest // -(-wanted // units)))


def flash_forward(q, k, v, cu_q, cu_k, out, lse, scale, max_q, max_k, mask=Mask(), dropout=None, debug=None,
                  zero=False, bias=None, used_k=None):
    """out, lse of flash attention over packed q, k, v (see the module doc); no sequence may be longer than
    max_q / max_k. `debug`: optional (batch, heads_q, max_q, max_k) array that receives the dropout keep flags
    (zero elsewhere). `zero`: rows of out (and lse) outside every sequence are set to 0 (lse -inf) first."""
    total_q, heads_q, _ = q.shape
    heads_k = k.shape[1]
    pairs = check_sequences(cu_q, cu_k, total_q, k.shape[0], max_q, max_k, used_k)
    dtype = compute_dtype(q.dtype)
    group = heads_q // heads_k
    if zero:
        out[...] = 0
        lse[...] = -np.inf
    if debug is not None:
        debug[...] = 0
    shape = _batch_shape(pairs, heads_q, dropout)
    if shape is not None:
        with np.errstate(over="ignore"):
            _batched_forward(q, k, v, out, lse, scale, mask, bias, shape, group, dtype)
        return
    items = _items_forward(pairs, heads_q, _rows_per_item(pairs, heads_q))

    def run(item):
        sequence, head, rows = item
        q_seq, k_seq = pairs[sequence]
        with blas_threads.single_threaded_blas():
            _forward_rows(q, k, v, out, lse, scale, mask, dropout, bias, sequence, head, head // group, q_seq, k_seq,
                          rows, dtype, debug)

    with np.errstate(over="ignore"):
        map_parallel(run, items)


# ---- backward ----------------------------------------------------------------------------------------------------

def _backward_item(q, k, v, out, dout, lse, scale, mask, dropout, bias, sequence, kv_head, group, pair, keys, dtype):
    """dk, dv of key rows `keys` of one (sequence, key/value head), and this item's dq contribution for the query
    heads of the group (returned as {head: (rows, d) array}; the caller sums the contributions of key ranges)."""
    (q0, len_q), (k0, len_k) = pair
    heads = q.shape[1]
    key_grad = np.zeros((keys.stop - keys.start, k.shape[2]), dtype)
    value_grad = np.zeros((keys.stop - keys.start, v.shape[2]), dtype)
    query_grads = {}
    all_rows = np.arange(len_q)
    key = _widened(k[k0 + keys.start:k0 + keys.stop, kv_head], dtype)
    value = _widened(v[k0 + keys.start:k0 + keys.stop, kv_head], dtype)
    for head in range(kv_head * group, kv_head * group + group):
        query_grad = np.zeros((len_q, q.shape[2]), dtype)
        for start in range(0, len_q, QUERY_BLOCK):
            block = slice(start, min(start + QUERY_BLOCK, len_q))
            first, last, key_blocks = _key_ranges(mask, all_rows[block], len_q, len_k)
            key_blocks = [(max(j0, keys.start), min(j1, keys.stop)) for j0, j1 in key_blocks
                          if j1 > keys.start and j0 < keys.stop]
            if not key_blocks:
                continue
            rows = slice(q0 + block.start, q0 + block.stop)
            query = _widened(q[rows, head], dtype)
            grad_out = _widened(dout[rows, head], dtype)
            delta = np.einsum("ij,ij->i", grad_out, _widened(out[rows, head], dtype))
            logsum = lse[head, rows].astype(dtype)
            for j0, j1 in key_blocks:
                here = slice(j0 - keys.start, j1 - keys.start)
                probs = query @ key[here].T
                probs *= dtype.type(scale)
                if bias is not None:
                    probs += _bias_block(bias, sequence, head, block, j0, j1, dtype)
                _mask_block(probs, first, last, j0, j1, -np.inf)
                probs -= logsum[:, None]
                np.exp(probs, out=probs)
                grad_probs = grad_out @ value[here].T
                if dropout is not None:
                    factors = dropout.factors(sequence, head, heads, block, slice(j0, j1), dtype)
                    value_grad[here] += (probs * factors).T @ grad_out
                    grad_probs *= factors
                else:
                    value_grad[here] += probs.T @ grad_out
                grad_probs -= delta[:, None]
                grad_probs *= probs
                grad_probs *= dtype.type(scale)
                query_grad[block] += grad_probs @ key[here]
                key_grad[here] += grad_probs.T @ query
        query_grads[head] = query_grad
    return key_grad, value_grad, query_grads


def _batched_backward(q, k, v, out, dout, lse, dq, dk, dv, scale, mask, bias, shape, group, dtype):
    """dq, dk, dv (and D) of every (sequence, head) at once (`_batch_shape`): the blockwise formulas on whole
    matrices; a key/value head shared by `group` query heads sums their gradients. Returns D (batch, heads, len_q)."""
    batch, len_q, len_k = shape
    heads, heads_k = q.shape[1], k.shape[1]
    query = _heads_first(q, batch, len_q, dtype)
    keys = _heads_first(k, batch, len_k, dtype, group)
    grad_out = _heads_first(dout, batch, len_q, dtype)
    delta = np.einsum("bhij,bhij->bhi", grad_out, _heads_first(out, batch, len_q, dtype))
    probs = _batched_scores(query, keys, mask, bias, shape, dtype, scale)
    probs -= load(lse[:, :batch * len_q], dtype).reshape(heads, batch, len_q).transpose(1, 0, 2)[..., None]
    np.exp(probs, out=probs)
    grad_probs = np.matmul(grad_out, _heads_first(v, batch, len_k, dtype, group).swapaxes(-1, -2))
    value_grad = np.matmul(probs.swapaxes(-1, -2), grad_out)
    grad_probs -= delta[..., None]
    grad_probs *= probs
    grad_probs *= dtype.type(scale)
    query_grad = np.matmul(grad_probs, keys)
    key_grad = np.matmul(grad_probs.swapaxes(-1, -2), query)
    if group > 1:
        key_grad = key_grad.reshape(batch, heads_k, group, len_k, -1).sum(axis=2)
        value_grad = value_grad.reshape(batch, heads_k, group, len_k, -1).sum(axis=2)
    for gradient, target, length in ((query_grad, dq, len_q), (key_grad, dk, len_k), (value_grad, dv, len_k)):
        store(gradient.transpose(0, 2, 1, 3).reshape(batch * length, gradient.shape[1], -1), target[:batch * length])
        target[batch * length:] = 0
    return delta


def flash_backward(q, k, v, out, dout, lse, cu_q, cu_k, dq, dk, dv, scale, max_q, max_k, mask=Mask(), dropout=None,
                   bias=None, used_k=None, delta=None):
    """dq, dk, dv of flash attention (see the module doc) from the forward's out and lse. Rows of dq/dk/dv outside
    every sequence (or past used_k) are set to 0. `delta` (optional, (heads_q, total_q)) receives D_i."""
    total_q, heads_q, _ = q.shape
    total_k, heads_k, _ = k.shape
    pairs = check_sequences(cu_q, cu_k, total_q, total_k, max_q, max_k, used_k)
    dtype = compute_dtype(q.dtype)
    group = heads_q // heads_k
    shape = _batch_shape(pairs, heads_q, dropout)
    if shape is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            batched_delta = _batched_backward(q, k, v, out, dout, lse, dq, dk, dv, scale, mask, bias, shape, group,
                                              dtype)
        if delta is not None:
            delta[:, :shape[0] * shape[1]] = batched_delta.transpose(1, 0, 2).reshape(heads_q, -1)
        return
    units = len(pairs) * heads_k
    longest_k = max((kk[1] for _, kk in pairs), default=0)
    chunks = 1 if units >= 2 * thread_count() else max(1, min(-(-2 * thread_count() // max(units, 1)),
                                                           -(-longest_k // QUERY_BLOCK)))
    items = []
    for sequence, pair in enumerate(pairs):
        len_k = pair[1][1]
        step = max(1, -(-len_k // chunks))
        for kv_head in range(heads_k):
            for start in range(0, len_k, step):
                items.append((sequence, kv_head, slice(start, min(start + step, len_k))))
    dq_accumulator = np.zeros((total_q, heads_q, q.shape[2]), dtype)
    covered_k = np.zeros(total_k, bool)
    for _, (k0, len_k) in pairs:
        covered_k[k0:k0 + len_k] = True

    def run(item):
        sequence, kv_head, keys = item
        pair = pairs[sequence]
        with blas_threads.single_threaded_blas():
            key_grad, value_grad, query_grads = _backward_item(q, k, v, out, dout, lse, scale, mask, dropout, bias,
                                                               sequence, kv_head, group, pair, keys, dtype)
        k0 = pair[1][0]
        store(key_grad, dk[k0 + keys.start:k0 + keys.stop, kv_head])
        store(value_grad, dv[k0 + keys.start:k0 + keys.stop, kv_head])
        return sequence, query_grads

    with np.errstate(over="ignore", invalid="ignore"):
        results = map_parallel(run, items)
    for sequence, query_grads in results:
        q0, len_q = pairs[sequence][0]
        for head, grad in query_grads.items():
            dq_accumulator[q0:q0 + len_q, head] += grad
    store(dq_accumulator, dq)
    if delta is not None:
        for q0, len_q in (pair[0] for pair in pairs):
            for head in range(heads_q):
                rows = slice(q0, q0 + len_q)
                delta[head, rows] = np.einsum("ij,ij->i", load(dout[rows, head], dtype), load(out[rows, head], dtype))
    if not covered_k.all():
        dk[~covered_k] = 0
        dv[~covered_k] = 0
