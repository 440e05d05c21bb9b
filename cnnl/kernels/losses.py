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
from .staging import load, store

NONE, MEAN, SUM = 0, 1, 2
LOG_FLOOR = -100.0
BCE_EPSILON = 1e-12


def _reduce(values, out, reduction, divisor=None):
    """Store the per-element `values` (NONE) or their sum / mean into `out`."""
    if reduction == NONE:
        store(values.reshape(out.shape), out)
        return
    total = values.sum(dtype=np.float64)
    if reduction == MEAN:
        total = total / (values.size if divisor is None else divisor)
    store(np.full(out.shape, total), out)


def _upstream(dy, reduction, dtype, count, divisor=None):
    """The upstream gradient per element: dy itself for NONE, else the scalar scaled by 1/count for MEAN."""
    grad = load(dy, dtype)
    if reduction == NONE:
        return grad
    scale = grad.reshape(-1)[0]
    return scale / dtype.type(count if divisor is None else divisor) if reduction == MEAN else scale


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
    losses = -load(x, dtype)[np.arange(x.shape[0]), labels] * weights
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
    result = np.zeros(dx.shape, dtype)
    result[np.arange(dx.shape[0]), labels] = -weights * grad
    store(result, dx)


def mse_forward(x, target, reduction, out):
    dtype = compute_dtype(x.dtype)
    diff = load(x, dtype) - load(target, dtype)
    _reduce(diff * diff, out, reduction)


def mse_backward(x, target, dy, reduction, dx):
    dtype = compute_dtype(x.dtype)
    diff = load(x, dtype) - load(target, dtype)
    store(2 * diff * _upstream(dy, reduction, dtype, diff.size), dx)


def _weights(weight, shape, dtype):
    return 1 if weight is None else np.broadcast_to(load(weight, dtype), shape)


def bce_forward(x, target, weight, reduction, out):
    """Binary cross entropy of probabilities x against targets, optionally weighted per element."""
    dtype = compute_dtype(x.dtype)
    p, t = load(x, dtype), load(target, dtype)
    with np.errstate(divide="ignore"):
        log_p = np.maximum(np.log(p), LOG_FLOOR)
        log_q = np.maximum(np.log1p(-p), LOG_FLOOR)
    _reduce(-(t * log_p + (1 - t) * log_q) * _weights(weight, p.shape, dtype), out, reduction)


def bce_backward(dy, x, target, weight, reduction, dx):
    dtype = compute_dtype(x.dtype)
    p, t = load(x, dtype), load(target, dtype)
    grad = (p - t) / np.maximum((1 - p) * p, dtype.type(BCE_EPSILON))
    store(grad * _weights(weight, p.shape, dtype) * _upstream(dy, reduction, dtype, p.size), dx)


def bce_logits_forward(x, target, weight, pos_weight, reduction, out):
    """Binary cross entropy on logits: -w * (pw * t * log sigmoid(x) + (1 - t) * log(1 - sigmoid(x)))."""
    dtype = compute_dtype(x.dtype)
    z, t = load(x, dtype), load(target, dtype)
    pw = _weights(pos_weight, z.shape, dtype)
    softplus_neg = np.logaddexp(0, -z)  # -log sigmoid(z)
    losses = (1 - t) * z + (1 + (pw - 1) * t) * softplus_neg
    _reduce(losses * _weights(weight, z.shape, dtype), out, reduction)


def bce_logits_backward(dy, x, target, weight, pos_weight, reduction, dx):
    dtype = compute_dtype(x.dtype)
    z, t = load(x, dtype), load(target, dtype)
    pw = _weights(pos_weight, z.shape, dtype)
    sigmoid = 1 / (1 + np.exp(-z))
    grad = sigmoid * ((1 - t) + pw * t) - pw * t
    store(grad * _weights(weight, z.shape, dtype) * _upstream(dy, reduction, dtype, z.size), dx)


def smooth_l1_forward(x, target, beta, reduction, out):
    """0.5 * d^2 / beta where |d| < beta, else |d| - 0.5 * beta (beta = 0: |d|), d = x - target."""
    dtype = compute_dtype(x.dtype)
    diff = np.abs(load(x, dtype) - load(target, dtype))
    losses = diff if beta == 0 else np.where(diff < beta, 0.5 * diff * diff / dtype.type(beta),
                                             diff - dtype.type(0.5 * beta))
    _reduce(losses, out, reduction)


def smooth_l1_backward(x, target, dy, beta, reduction, dx):
    dtype = compute_dtype(x.dtype)
    diff = load(x, dtype) - load(target, dtype)
    grad = np.sign(diff) if beta == 0 else np.where(np.abs(diff) < beta, diff / dtype.type(beta), np.sign(diff))
    store(grad * _upstream(dy, reduction, dtype, diff.size), dx)
