"""Connectionist temporal classification loss and its gradient (`cnnlCTCLoss`), PyTorch's ctc_loss numerics.

For sample n with input length T_n and labels l (S_n of them), the extended label sequence l' puts the blank before,
between and after the labels (2 S_n + 1 states). In log space, with lp the log-probabilities (T, C):
    alpha[0, 0] = lp[0, blank], alpha[0, 1] = lp[0, l'_1],
    alpha[t, s] = logsumexp(alpha[t-1, s], alpha[t-1, s-1], alpha[t-1, s-2] if l'_s != blank and l'_s != l'_{s-2})
                  + lp[t, l'_s]
    nll = -logsumexp(alpha[T_n-1, 2 S_n], alpha[T_n-1, 2 S_n - 1]),
beta likewise from the end (including the emission at t), and for t < T_n
    occupancy[t, c] = exp(logsumexp over s with l'_s = c of (alpha[t, s] + beta[t, s]) + nll - lp[t, c]),
the derivative of nll with respect to lp[t, c] being -occupancy (0 for t >= T_n). Through a (log-)softmax of the
input logits the gradient is softmax - occupancy (PyTorch computes this one even from log-probabilities).
One nogil numba kernel per sample (float64 recursions), samples spread over the kernel thread pool.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .parallel import map_parallel
from .staging import load, readonly_contiguous, store

_NEG_INF = -np.inf


@njit(nogil=True, cache=True, inline="always")
def _logadd(a, b):
    if a == _NEG_INF:
        return b
    if b == _NEG_INF:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


@njit(nogil=True, cache=True)
def _sample(lp, labels, blank, length, grad, want_grad):
    """nll of one sample (lp (T, C) float64, labels (S,)); grad[:length] = the occupancies when want_grad."""
    states = 2 * labels.size + 1
    ext = np.empty(states, np.int64)
    for s in range(states):
        ext[s] = blank if s % 2 == 0 else labels[s // 2]
    if length == 0:
        return np.inf if labels.size > 0 else 0.0
    alpha = np.full((length, states), _NEG_INF)
    alpha[0, 0] = lp[0, blank]
    if states > 1:
        alpha[0, 1] = lp[0, ext[1]]
    for t in range(1, length):
        for s in range(states):
            value = alpha[t - 1, s]
            if s > 0:
                value = _logadd(value, alpha[t - 1, s - 1])
            if s > 1 and ext[s] != blank and ext[s] != ext[s - 2]:
                value = _logadd(value, alpha[t - 1, s - 2])
            if value != _NEG_INF:
                alpha[t, s] = value + lp[t, ext[s]]
    total = alpha[length - 1, states - 1]
    if states > 1:
        total = _logadd(total, alpha[length - 1, states - 2])
    nll = -total
    if not want_grad:
        return nll
    beta = np.full((length, states), _NEG_INF)
    beta[length - 1, states - 1] = lp[length - 1, ext[states - 1]]
    if states > 1:
        beta[length - 1, states - 2] = lp[length - 1, ext[states - 2]]
    for t in range(length - 2, -1, -1):
        for s in range(states):
            value = beta[t + 1, s]
            if s < states - 1:
                value = _logadd(value, beta[t + 1, s + 1])
            if s < states - 2 and ext[s] != blank and ext[s] != ext[s + 2]:
                value = _logadd(value, beta[t + 1, s + 2])
            if value != _NEG_INF:
                beta[t, s] = value + lp[t, ext[s]]
    classes = lp.shape[1]
    occupied = np.empty(classes)
    for t in range(length):
        for c in range(classes):
            occupied[c] = _NEG_INF
        for s in range(states):
            occupied[ext[s]] = _logadd(occupied[ext[s]], alpha[t, s] + beta[t, s])
        for c in range(classes):
            grad[t, c] = np.exp(occupied[c] + nll - lp[t, c]) if occupied[c] != _NEG_INF else 0.0
    return nll


def ctc(log_probs, labels, label_offsets, input_lengths, label_lengths, blank, want_grad):
    """(nll (N,), occupancy (T, N, C) or None) for float64 log-probabilities (T, N, C); sample n's labels are
    labels[label_offsets[n]:label_offsets[n] + label_lengths[n]]."""
    steps, batch, classes = log_probs.shape
    nll = np.zeros(batch)
    occupancy = np.zeros((steps, batch, classes)) if want_grad else None

    def run(n):
        start = label_offsets[n]
        sample_labels = np.ascontiguousarray(labels[start:start + label_lengths[n]], np.int64)
        lp = readonly_contiguous(log_probs[:, n])
        grad = np.zeros((steps, classes)) if want_grad else np.zeros((0, 0))
        nll[n] = _sample(lp, sample_labels, blank, int(input_lengths[n]), grad, want_grad)
        if want_grad:
            occupancy[:, n] = grad

    map_parallel(run, range(batch))
    return nll, occupancy


NONE, SUM, MEAN = 0, 1, 2


def ctc_loss(x, labels, label_offsets, input_lengths, label_lengths, blank, normalize, reduction, zero_infinity,
             loss, grads=None):
    """loss (N values for NONE, else one) and optionally grads (T, N, C) of the CTC loss of x (T, N, C).

    `normalize`: x holds logits, normalised by a log-softmax over the classes (the gradient is then taken with
    respect to x, as PyTorch's); otherwise x holds the log-probabilities themselves. `reduction`: NONE, SUM or
    MEAN (each sample's loss divided by its label count, at least 1, then averaged over the batch); the gradient is
    that of the reduced loss (for NONE, of the sum). `zero_infinity`: impossible alignments (infinite loss) count
    0 and get no gradient; otherwise their gradient is NaN (PyTorch's result)."""
    values = load(x, np.float64)
    steps, batch, _ = values.shape
    if normalize:
        shifted = values - values.max(axis=-1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    else:
        log_probs = values
    input_lengths, label_lengths = np.asarray(input_lengths, np.int64), np.asarray(label_lengths, np.int64)
    nll, occupancy = ctc(log_probs, labels, label_offsets, input_lengths, label_lengths, blank, grads is not None)
    infinite = np.isinf(nll)
    if zero_infinity:
        nll = np.where(infinite, 0.0, nll)
    weights = np.ones(batch) if reduction != MEAN else 1.0 / (np.maximum(label_lengths, 1) * max(batch, 1))
    store((nll if reduction == NONE else np.full(1, np.sum(nll * weights))).reshape(loss.shape), loss)
    if grads is None:
        return
    result = (np.exp(log_probs) - occupancy) if normalize else -occupancy
    live = np.arange(steps)[:, None] < input_lengths[None, :]  # (T, N)
    result *= live[..., None]
    result[:, infinite] = 0.0 if zero_infinity else np.nan
    result[~live] = 0.0
    result *= weights[None, :, None]
    store(result, grads)
