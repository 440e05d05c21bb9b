"""Cases of losses (docs/cnnl_losses.md): NLL, MSE, BCE, BCE with logits, smooth L1 (mean reduction) and their _v2 forms
over (rows, columns), CTC loss against a numpy alpha recursion."""
from __future__ import annotations

import numpy as np

import cnnl

from .base import Case, ELEMENTWISE, f32, index_tensor, int_tensor, sigmoid


SMOOTH_L1_BETA = 1.0


def nll_loss(arena, shape, dtype):
    """Mean negative log-likelihood of one label per row, class weights, ignore index -100."""
    rows, classes = shape
    (x, values), (weight, wv) = arena.between(shape, dtype, -8, 0), arena.random((classes,), dtype, positive=True)
    target, tv = index_tensor(arena, arena.rng.integers(0, classes, rows))
    total, y = arena.empty((1,), dtype), arena.empty((1,), dtype)
    workspace, size = arena.workspace(cnnl.getNlllossWorkspaceSize(arena.handle, x.desc))
    positions = np.arange(rows)

    def reference():
        weights = wv[tv]
        return -(values[positions, tv] * weights).sum(dtype=np.float32) / weights.sum(dtype=np.float32)
    return (lambda: cnnl.nlllossForward(arena.handle, cnnl.CNNL_REDUCTION_MEAN, workspace, size, x.desc, x.ptr,
                                        target.desc, target.ptr, -100, weight.desc, weight.ptr, total.desc, total.ptr,
                                        y.desc, y.ptr),
            reference)


def nll_loss_backward(arena, shape, dtype):
    """dx = -weight[label] dy / total weight at each row's label, 0 elsewhere."""
    rows, classes = shape
    (weight, wv), dx = arena.random((classes,), dtype, positive=True), arena.empty(shape, dtype)
    target, tv = index_tensor(arena, arena.rng.integers(0, classes, rows))
    numpy_dtype = arena.numpy_dtype(dtype)
    total_weight = wv[tv].sum(dtype=np.float32).astype(numpy_dtype).reshape(1)
    dy, total = arena.upload(np.ones(1, numpy_dtype), dtype), arena.upload(total_weight, dtype)
    out, positions = np.empty(shape, numpy_dtype), np.arange(rows)

    def reference():
        out.fill(0)
        out[positions, tv] = -wv[tv] / total_weight
    return (lambda: cnnl.nlllossBackward(arena.handle, cnnl.CNNL_REDUCTION_MEAN, dy.desc, dy.ptr, target.desc,
                                         target.ptr, -100, weight.desc, weight.ptr, total.desc, total.ptr, dx.desc,
                                         dx.ptr),
            reference)


def _loss_operands(arena, shape, dtype, probabilities: bool):
    """x (in (0.05, 0.95) for BCE), target (in [0, 1) for the BCE losses)."""
    x = arena.between(shape, dtype, 0.05, 0.95) if probabilities else arena.random(shape, dtype)
    target = arena.between(shape, dtype, 0, 1) if probabilities else arena.random(shape, dtype)
    return x, target


#: name -> (mean loss of (x, t), gradient of the mean loss per element times n, x is a probability)
LOSSES = {
    "mse": (lambda x, t: np.square(x - t).mean(dtype=np.float32), lambda x, t: 2 * (x - t), False),
    "bce": (lambda x, t: -(t * np.log(x) + (1 - t) * np.log1p(-x)).mean(dtype=np.float32),
            lambda x, t: (x - t) / (x * (1 - x)), True),
    "bce_logits": (lambda x, t: (np.maximum(x, 0) - x * t + np.log1p(np.exp(-np.abs(x)))).mean(dtype=np.float32),
                   lambda x, t: sigmoid(x) - t, False),
    "smooth_l1": (lambda x, t: np.where(np.abs(x - t) < SMOOTH_L1_BETA, 0.5 * np.square(x - t) / SMOOTH_L1_BETA,
                                        np.abs(x - t) - 0.5 * SMOOTH_L1_BETA).mean(dtype=np.float32),
                  lambda x, t: np.clip((x - t) / SMOOTH_L1_BETA, -1, 1), False),
}


def _loss_forward_call(name, arena, x, t, y):
    h = arena.handle
    if name == "mse":
        return lambda: cnnl.mSELoss(h, cnnl.CNNL_MSE_LOSS_MEAN, x.desc, x.ptr, t.desc, t.ptr, y.desc, y.ptr)
    if name == "bce":
        workspace, size = arena.workspace(cnnl.getBceLossWorkspaceSize(h, x.desc, None))
        return lambda: cnnl.bceLoss(h, x.desc, x.ptr, t.desc, t.ptr, None, None, cnnl.CNNL_BCE_LOSS_MEAN, workspace,
                                    size, y.desc, y.ptr)
    if name == "bce_logits":
        workspace, size = arena.workspace(cnnl.getBceWithLogitsWorkspaceSize(h, x.desc, None, None))
        return lambda: cnnl.bceWithLogits_v2(h, cnnl.CNNL_COMPUTATION_HIGH_PRECISION, x.desc, x.ptr, t.desc, t.ptr,
                                             None, None, None, None, cnnl.CNNL_BCE_WITH_LOGITS_MEAN, workspace, size,
                                             y.desc, y.ptr)
    workspace, size = arena.workspace(cnnl.getSmoothL1LossForwardWorkspaceSize(
        h, x.desc, cnnl.CNNL_SMOOTHL1LOSS_REDUCTION_MEAN))
    return lambda: cnnl.smoothL1LossForward_v2(h, x.desc, x.ptr, t.desc, t.ptr, SMOOTH_L1_BETA,
                                               cnnl.CNNL_SMOOTHL1LOSS_REDUCTION_MEAN, workspace, size, y.desc, y.ptr)


def _loss_backward_call(name, arena, x, t, dy, dx):
    h = arena.handle
    if name == "mse":
        return lambda: cnnl.mSELossBackward(h, cnnl.CNNL_MSE_LOSS_MEAN, x.desc, x.ptr, t.desc, t.ptr, dy.desc, dy.ptr,
                                            dx.desc, dx.ptr)
    if name == "bce":
        workspace, size = arena.workspace(cnnl.getBceLossBackwardWorkspaceSize(h, t.desc, None))
        return lambda: cnnl.bceLossBackward(h, dy.desc, dy.ptr, x.desc, x.ptr, t.desc, t.ptr, None, None,
                                            cnnl.CNNL_BCE_LOSS_MEAN, workspace, size, dx.desc, dx.ptr)
    if name == "bce_logits":
        workspace, size = arena.workspace(cnnl.getBceWithLogitsBackwardWorkspaceSize(h, t.desc, None, None))
        return lambda: cnnl.bceWithLogitsBackward(h, dy.desc, dy.ptr, x.desc, x.ptr, t.desc, t.ptr, None, None, None,
                                                  None, cnnl.CNNL_BCE_WITH_LOGITS_MEAN, workspace, size, dx.desc,
                                                  dx.ptr)
    workspace, size = arena.workspace(cnnl.getSmoothL1LossBackwardWorkspaceSize(
        h, x.desc, cnnl.CNNL_SMOOTHL1LOSS_REDUCTION_MEAN))
    return lambda: cnnl.smoothL1LossBackward_v2(h, x.desc, x.ptr, t.desc, t.ptr, dy.desc, dy.ptr, SMOOTH_L1_BETA,
                                                cnnl.CNNL_SMOOTHL1LOSS_REDUCTION_MEAN, workspace, size, dx.desc,
                                                dx.ptr)


def loss(name: str):
    """The mean loss of x against a target (one output element)."""
    forward, _, probabilities = LOSSES[name]

    def build(arena, shape, dtype):
        (x, xv), (t, tv) = _loss_operands(arena, shape, dtype, probabilities)
        return _loss_forward_call(name, arena, x, t, arena.empty((1,), dtype)), lambda: forward(xv, tv)
    return build


def loss_backward(name: str):
    """The gradient of the mean loss for an output gradient of 1."""
    _, gradient, probabilities = LOSSES[name]

    def build(arena, shape, dtype):
        (x, xv), (t, tv) = _loss_operands(arena, shape, dtype, probabilities)
        dy = arena.upload(np.ones(1, xv.dtype), dtype)
        scale = np.float32(1 / xv.size)
        return (_loss_backward_call(name, arena, x, t, dy, arena.empty(shape, dtype)),
                lambda: gradient(xv, tv) * scale)
    return build


#: (T, N, C, S) of CTC loss
CTC = {"small": (50, 4, 20, 10), "medium": (200, 16, 40, 40), "large": (400, 32, 80, 80)}


def mse_v2(arena, shape, dtype):
    (x, xv), (t, tv), y = arena.random(shape, dtype), arena.random(shape, dtype), arena.empty((1,), dtype)
    a, b = f32(xv), f32(tv)
    return (lambda: cnnl.mSELoss_v2(arena.handle, cnnl.CNNL_MSE_LOSS_MEAN, x.desc, x.ptr, t.desc, t.ptr, None, 0,
                                    y.desc, y.ptr),
            lambda: np.mean((a - b) ** 2))


def nll_v2(backward: bool):
    """cnnlNlllossForward_v2 / Backward_v2 (mean, no class weights)."""
    def build(arena, shape, dtype):
        rows, classes = shape
        (x, xv) = arena.between(shape, dtype, -8, 0)
        target, tv = int_tensor(arena, arena.rng.integers(0, classes, rows))
        positions = np.arange(rows)
        if not backward:
            total, y = arena.empty((1,), dtype), arena.empty((1,), dtype)
            values = f32(xv)
            return (lambda: cnnl.nlllossForward_v2(arena.handle, cnnl.CNNL_REDUCTION_MEAN, x.desc, x.ptr, target.desc,
                                                   target.ptr, -100, None, None, None, 0, total.desc, total.ptr,
                                                   y.desc, y.ptr),
                    lambda: -values[positions, tv].mean())
        dy = arena.upload(np.ones(1, xv.dtype), dtype)
        total = arena.upload(np.full(1, rows, xv.dtype), dtype)
        dx, out = arena.empty(shape, dtype), np.empty(shape, np.float32)

        def reference():
            out.fill(0)
            out[positions, tv] = -1 / rows
        return (lambda: cnnl.nlllossBackward_v2(arena.handle, cnnl.CNNL_REDUCTION_MEAN, dy.desc, dy.ptr, target.desc,
                                                target.ptr, -100, None, None, total.desc, total.ptr, dx.desc, dx.ptr),
                reference)
    return build


def _ctc_reference(log_probs, labels, lengths):
    """The mean CTC loss by the alpha recursion, vectorised over the batch (float32)."""
    steps, batch, _ = log_probs.shape
    states = 2 * labels.shape[1] + 1
    extended = np.zeros((batch, states), np.int64)
    extended[:, 1::2] = labels
    skip = np.zeros((batch, states), bool)
    skip[:, 3::2] = labels[:, 1:] != labels[:, :-1]
    alpha = np.full((batch, states), -np.inf, np.float32)
    rows = np.arange(batch)[:, None]
    alpha[:, :2] = log_probs[0][rows, extended[:, :2]]
    for t in range(1, steps):
        stay, step = alpha, np.concatenate([np.full((batch, 1), -np.inf, np.float32), alpha[:, :-1]], 1)
        jump = np.concatenate([np.full((batch, 2), -np.inf, np.float32), alpha[:, :-2]], 1)
        jump = np.where(skip, jump, -np.inf)
        alpha = np.logaddexp(np.logaddexp(stay, step), jump) + log_probs[t][rows, extended]
    nll = -np.logaddexp(alpha[:, -1], alpha[:, -2])
    return np.mean(nll / lengths)


def ctc(arena, shape, dtype):
    """cnnlCTCLoss (loss and gradient, mean over label lengths and batch) against the numpy alpha recursion."""
    steps, batch, classes, label_length = shape
    logits = arena.rng.standard_normal((steps, batch, classes)).astype(arena.numpy_dtype(dtype))
    x = arena.upload(logits, dtype, cnnl.CNNL_LAYOUT_TNC)
    labels, lv = int_tensor(arena, arena.rng.integers(1, classes, (batch, label_length)))
    input_lengths, _ = int_tensor(arena, np.full(batch, steps))
    label_lengths, _ = int_tensor(arena, np.full(batch, label_length))
    loss, grads = arena.empty((1,), dtype), arena.empty((steps, batch, classes), dtype, cnnl.CNNL_LAYOUT_TNC)
    desc = cnnl.createCTCLossDescriptor()
    cnnl.setCTCLossDescriptor(desc, cnnl.CNNL_LOG_SOFTMAX_NORMALIZATION,
                              cnnl.CNNL_REDUCE_MODE_MEAN_BY_LABEL_LENGTH_AND_BATCH, cnnl.CNNL_NONE_ZERO_INFINITY, 0,
                              steps, label_length)
    workspace, size = arena.workspace(cnnl.getCTCLossWorkspaceSize(arena.handle, desc, x.desc, True))
    values = f32(logits)
    log_probs = values - np.log(np.exp(values).sum(axis=-1, keepdims=True))
    return (lambda: cnnl.cTCLoss(arena.handle, desc, x.desc, x.ptr, labels.desc, labels.ptr, input_lengths.desc,
                                 input_lengths.ptr, label_lengths.desc, label_lengths.ptr, workspace, size, loss.desc,
                                 loss.ptr, grads.desc, grads.ptr),
            lambda: _ctc_reference(log_probs, lv, float(label_length)))


#: the cases of this family, in the order the table lists them
CASES = (
    Case("nll loss", "cnnlNlllossForward", nll_loss),
    Case("nll loss bwd", "cnnlNlllossBackward", nll_loss_backward),
    Case("mse loss", "cnnlMSELoss", loss("mse")),
    Case("mse loss bwd", "cnnlMSELossBackward", loss_backward("mse")),
    Case("bce loss", "cnnlBceLoss", loss("bce")),
    Case("bce loss bwd", "cnnlBceLossBackward", loss_backward("bce")),
    Case("bce logits", "cnnlBceWithLogits_v2", loss("bce_logits")),
    Case("bce logits bwd", "cnnlBceWithLogitsBackward", loss_backward("bce_logits")),
    Case("smooth l1", "cnnlSmoothL1LossForward_v2", loss("smooth_l1")),
    Case("smooth l1 bwd", "cnnlSmoothL1LossBackward_v2", loss_backward("smooth_l1")),
    Case("mse loss v2", "cnnlMSELoss_v2", mse_v2, shapes=ELEMENTWISE),
    Case("nll loss v2", "cnnlNlllossForward_v2", nll_v2(False), shapes=ELEMENTWISE),
    Case("nll loss v2 bwd", "cnnlNlllossBackward_v2", nll_v2(True), shapes=ELEMENTWISE),
    Case("ctc loss", "cnnlCTCLoss", ctc, shapes=CTC, dtypes=("float",), reference="numpy alpha recursion"),
)
