"""Losses, forward and backward: NLL (with class weights and an ignored index), MSE, binary cross entropy (on
probabilities and on logits) and smooth L1 (`cnnlNllloss*`, `cnnlMSELoss*`, `cnnlBceLoss*`, `cnnlBceWithLogits*`,
`cnnlSmoothL1Loss*`).

Reductions: NONE keeps one loss per element (per sample for NLL), SUM adds them, MEAN divides the sum by the element
count (NLL: by the total weight of the counted targets, which is also written to `total_weight`). Backward ops
take the upstream gradient (one per element for NONE, else one scalar) and apply the same scaling. BCE clamps its
logarithms at -100 and its gradient's denominator at 1e-12 (PyTorch's rules). Computation in float32 (float64 for
double); loss sums accumulate in float64.
"""
import numpy as np

from .dtypes import compute_dtype
from .parallel import align_ndim, run_blocked
from .staging import load, store

NONE, MEAN, SUM = 0, 1, 2
LOG_FLOOR = -100.0
BCE_EPSILON = 1e-12


def _run(per_block, out, reduction, x, others=(), divisor=None):
    """The elementwise loss `per_block(x_block, *other_blocks)` (blocks in the compute dtype) over x's shape, in
    cache-sized blocks on the kernel threads; `others` (None or broadcasting to x) are passed along. NONE stores
    the losses into `out`; MEAN and SUM store the float64 total of the block sums (MEAN divided by `divisor`,
    default the element count)."""
    dtype = compute_dtype(x.dtype)
    operands = [x] + [None if o is None else align_ndim(o, x.ndim) for o in others]
    present = [o for o in operands if o is not None]
    where = [i for i, o in enumerate(operands) if o is not None]

    def loaded(blocks):
        values = [None] * len(operands)
        for i, block in zip(where, blocks):
            values[i] = load(block, dtype)
        return values

    if reduction == NONE:
        def block_fn(o, *blocks):
            store(per_block(*loaded(blocks)), o)
        run_blocked(block_fn, x.shape, [out.reshape(x.shape)] + present)
        return
    partials = []

    def block_sum(*blocks):
        partials.append(per_block(*loaded(blocks)).sum(dtype=np.float64))
    run_blocked(block_sum, x.shape, present)
    total = np.sum(partials, dtype=np.float64)  # a numpy float: a mean of nothing is NaN, not an exception
    if reduction == MEAN:
        with np.errstate(divide="ignore", invalid="ignore"):  # the mean of no element is NaN, as in PyTorch
            total = total / (x.size if divisor is None else divisor)
    store(np.full(out.shape, total), out)


def _reduce(values, out, reduction, divisor=None):
    """Store the per-element `values` (NONE) or their sum / mean into `out`."""
    if reduction == NONE:
        store(values.reshape(out.shape), out)
        return
    total = values.sum(dtype=np.float64)
    if reduction == MEAN:
        with np.errstate(divide="ignore", invalid="ignore"):  # the mean of no element is NaN, as in PyTorch
            total = total / (values.size if divisor is None else divisor)
    store(np.full(out.shape, total), out)


def _upstream_scalar(dy, reduction, dtype, count):
    """The upstream gradient: the array dy for NONE, else its one value (divided by count for MEAN) as a scalar."""
    if reduction == NONE:
        return dy
    scale = load(dy.reshape(-1)[:1], dtype)[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        return scale / dtype.type(count) if reduction == MEAN else scale


def _run_grad(per_block, dx, x, others, dy, reduction):
    """dx = per_block(x, *others, g) in blocks, g the upstream gradient block (NONE) or scalar."""
    dtype = compute_dtype(x.dtype)
    g = _upstream_scalar(dy, reduction, dtype, x.size)
    operands = [x] + [None if o is None else align_ndim(o, x.ndim) for o in others]
    if reduction == NONE:
        operands.append(g.reshape(x.shape))
    present = [o for o in operands if o is not None]
    where = [i for i, o in enumerate(operands) if o is not None]

    def block_fn(out, *blocks):
        values = [None] * len(operands)
        for i, block in zip(where, blocks):
            values[i] = load(block, dtype)
        if reduction != NONE:
            values.append(g)
        store(per_block(*values), out)
    run_blocked(block_fn, x.shape, [dx] + present)


def _upstream(dy, reduction, dtype, count, divisor=None):
    """The upstream gradient per element: dy itself for NONE, else the scalar scaled by 1/count for MEAN."""
    grad = load(dy, dtype)
    if reduction == NONE:
        return grad
    scale = grad.reshape(-1)[0]
    if reduction != MEAN:
        return scale
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero total weight gives inf/NaN, as in PyTorch
        return scale / dtype.type(count if divisor is None else divisor)


def _targets(target, classes, ignore_index):
    labels = np.asarray(target, np.int64).reshape(-1)
    counted = labels != ignore_index
    bad = counted & ((labels < 0) | (labels >= classes))
    if bad.any():
        raise ValueError(f"target {int(labels[bad][0])} is out of range for {classes} classes")
    return np.where(counted, labels, 0), counted


def nll_forward(x, target, weight, ignore_index, reduction, out, total_weight):
    """out = NLL of the log-probabilities x (N, C) at the labels `target` (N); total_weight = sum of the counted
    labels' weights."""
    dtype = compute_dtype(x.dtype)
    labels, counted = _targets(target, x.shape[1], ignore_index)
    weights = np.where(counted, load(weight, dtype)[labels], 0).astype(dtype)
    picked = load(x[np.arange(x.shape[0]), labels], dtype)  # gather first: only N values convert
    # ignored samples are left out, not multiplied by 0: a NaN or inf in their row must not reach the loss (PyTorch)
    with np.errstate(invalid="ignore"):
        losses = np.where(counted, -picked * weights, dtype.type(0))
    total = weights.sum(dtype=np.float64)
    _reduce(losses, out, reduction, total)
    if total_weight is not None:
        store(np.full(total_weight.shape, total), total_weight)


def nll_backward(dy, target, weight, total_weight, ignore_index, reduction, dx):
    """dx (N, C) = the gradient of nll_forward: -weight[label] * upstream at each sample's label, 0 elsewhere."""
    dtype = compute_dtype(dx.dtype)
    labels, counted = _targets(target, dx.shape[1], ignore_index)
    weights = np.where(counted, load(weight, dtype)[labels], 0).astype(dtype)
    divisor = float(load(total_weight, np.float64).reshape(-1)[0]) if reduction == MEAN else None
    grad = _upstream(dy, reduction, dtype, dx.shape[0], divisor)
    picked = np.empty(labels.shape, dx.dtype)
    with np.errstate(invalid="ignore"):  # ignored samples get 0, whatever the upstream gradient (PyTorch)
        store(np.where(counted, -weights * grad, dtype.type(0)), picked)
    dx[...] = 0
    dx[np.arange(dx.shape[0]), labels] = picked


def mse_forward(x, target, reduction, out):
    def losses(xb, tb):
        d = np.subtract(xb, tb)
        return np.multiply(d, d, out=d)
    _run(losses, out, reduction, x, (target,))


def mse_backward(x, target, dy, reduction, dx):
    def grad(xb, tb, g):
        d = np.subtract(xb, tb)
        d *= 2
        d *= g
        return d
    _run_grad(grad, dx, x, (target,), dy, reduction)


def bce_forward(x, target, weight, reduction, out):
    """Binary cross entropy of probabilities x against targets, optionally weighted per element."""
    def losses(p, t, w):
        with np.errstate(divide="ignore"):
            log_p = np.log(p)
            log_q = np.log1p(np.negative(p))
        np.maximum(log_p, LOG_FLOOR, out=log_p)
        np.maximum(log_q, LOG_FLOOR, out=log_q)
        log_p -= log_q  # -(t log p + (1 - t) log q) = -(log q + t (log p - log q))
        log_p *= t
        log_p += log_q
        np.negative(log_p, out=log_p)
        if w is not None:
            log_p *= w
        return log_p
    _run(losses, out, reduction, x, (target, weight))


def bce_backward(dy, x, target, weight, reduction, dx):
    def grad(p, t, w, g):
        denominator = np.subtract(1, p, dtype=p.dtype)
        denominator *= p
        np.maximum(denominator, p.dtype.type(BCE_EPSILON), out=denominator)
        result = np.subtract(p, t)
        result /= denominator
        if w is not None:
            result *= w
        result *= g
        return result
    _run_grad(grad, dx, x, (target, weight), dy, reduction)


def _softplus_neg(z):
    """-log sigmoid(z) = log(1 + exp(-z)) = max(-z, 0) + log1p(exp(-|z|)), a new array."""
    result = np.abs(z)
    np.negative(result, out=result)
    np.exp(result, out=result)
    np.log1p(result, out=result)
    result += np.maximum(np.negative(z), 0)
    return result


def bce_logits_forward(x, target, weight, pos_weight, reduction, out):
    """Binary cross entropy on logits: -w * (pw * t * log sigmoid(x) + (1 - t) * log(1 - sigmoid(x)))."""
    def losses(z, t, w, pw):
        softplus_neg = _softplus_neg(z)  # -log sigmoid(z)
        if pw is not None:
            softplus_neg *= 1 + (pw - 1) * t
        result = np.subtract(1, t, dtype=z.dtype)
        result *= z
        result += softplus_neg
        if w is not None:
            result *= w
        return result
    _run(losses, out, reduction, x, (target, weight, pos_weight))


def bce_logits_backward(dy, x, target, weight, pos_weight, reduction, dx):
    def grad(z, t, w, pw, g):
        sigmoid = np.negative(z)
        np.exp(sigmoid, out=sigmoid)
        sigmoid += 1
        np.reciprocal(sigmoid, out=sigmoid)
        if pw is None:
            sigmoid -= t
        else:
            weighted = pw * t
            sigmoid *= (1 - t) + weighted
            sigmoid -= weighted
        if w is not None:
            sigmoid *= w
        sigmoid *= g
        return sigmoid
    _run_grad(grad, dx, x, (target, weight, pos_weight), dy, reduction)


def smooth_l1_forward(x, target, beta, reduction, out):
    """0.5 * d^2 / beta where |d| < beta, else |d| - 0.5 * beta (beta = 0: |d|), d = x - target."""
    def losses(xb, tb):
        diff = np.subtract(xb, tb)
        np.abs(diff, out=diff)
        if beta == 0:
            return diff
        dtype = diff.dtype
        return np.where(diff < beta, dtype.type(0.5 / beta) * diff * diff, diff - dtype.type(0.5 * beta))
    _run(losses, out, reduction, x, (target,))


def smooth_l1_backward(x, target, dy, beta, reduction, dx):
    def grad(xb, tb, g):
        diff = np.subtract(xb, tb)
        if beta == 0:
            np.sign(diff, out=diff)
        else:
            diff /= diff.dtype.type(beta)  # |d| >= beta gives sign(d) after the clip
            np.clip(diff, -1, 1, out=diff)
        diff *= g
        return diff
    _run_grad(grad, dx, x, (target,), dy, reduction)
