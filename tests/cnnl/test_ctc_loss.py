"""CTC loss through the API against a brute-force float64 reference (every alignment of a short input enumerated,
collapsed, and the probabilities of those giving the labels summed) and central differences of it, PyTorch's
ctc_loss where importable, padded and concatenated labels, reductions, zero_infinity, and bad arguments."""
import itertools

import numpy as np
import pytest

import cnnl

from .nn_helpers import F32, F64, blank, directional_check, placed, raises_status, sync

INT32, INT64 = cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_INT64
NONE, SUM, MEAN = (cnnl.CNNL_REDUCE_MODE_NONE, cnnl.CNNL_REDUCE_MODE_SUM,
                   cnnl.CNNL_REDUCE_MODE_MEAN_BY_LABEL_LENGTH_AND_BATCH)
TNC = cnnl.CNNL_LAYOUT_TNC


def collapse(path, blank_label):
    out = []
    for i, c in enumerate(path):
        if c != blank_label and (i == 0 or c != path[i - 1]):
            out.append(c)
    return out


def brute_force_nll(log_probs, label, length, blank_label):
    """-log of the summed probability of every alignment of the first `length` steps that collapses to `label`."""
    total = 0.0
    for path in itertools.product(range(log_probs.shape[1]), repeat=length):
        if collapse(path, blank_label) == list(label):
            total += np.exp(sum(log_probs[t, c] for t, c in enumerate(path)))
    return -np.log(total) if total > 0 else np.inf


def reference(x, labels, input_lengths, label_lengths, blank_label, reduction, logits):
    losses = []
    for n in range(x.shape[1]):
        lp = x[:, n] - np.log(np.exp(x[:, n]).sum(-1, keepdims=True)) if logits else x[:, n]
        losses.append(brute_force_nll(lp, labels[n][:label_lengths[n]], input_lengths[n], blank_label))
    losses = np.array(losses)
    if reduction == NONE:
        return losses
    if reduction == SUM:
        return np.array([losses.sum()])
    return np.array([np.mean(losses / np.maximum(label_lengths, 1))])


def ctc(handle, x, labels, input_lengths, label_lengths, blank_label, reduction, norm, zero_inf=False,
        concatenated=False, grads=True, code=F64):
    desc = cnnl.createCTCLossDescriptor()
    cnnl.setCTCLossDescriptor(desc, norm, reduction, cnnl.CNNL_ZERO_INFINITY if zero_inf else
                              cnnl.CNNL_NONE_ZERO_INFINITY, blank_label, x.shape[0], max(label_lengths))
    xt = placed(x, code, TNC)
    if concatenated:
        flat = np.concatenate([labels[n][:label_lengths[n]] for n in range(x.shape[1])])
        lt = placed(flat, INT64)
    else:
        lt = placed(np.array(labels), INT32)
    it, tt = placed(np.array(input_lengths), INT32), placed(np.array(label_lengths), INT64)
    loss = blank((x.shape[1],) if reduction == NONE else (1,), code)
    gt = blank(x.shape, code, TNC) if grads else None
    size = cnnl.getCTCLossWorkspaceSize(handle, desc, xt.desc, grads)
    ws = blank((size,), cnnl.CNNL_DTYPE_INT8).ptr if size else None
    cnnl.cTCLoss(handle, desc, xt.desc, xt.ptr, lt.desc, lt.ptr, it.desc, it.ptr, tt.desc, tt.ptr, ws, size,
                 loss.desc, loss.ptr, None if gt is None else gt.desc, None if gt is None else gt.ptr)
    sync(handle)
    return loss.read(), None if gt is None else gt.read()


CASE = dict(labels=[[1, 1, 0], [2, 1, 2]], input_lengths=[5, 4], label_lengths=[2, 3], blank_label=0)


@pytest.mark.parametrize("reduction", [NONE, SUM, MEAN])
@pytest.mark.parametrize("norm", [cnnl.CNNL_NONE_NORMALIZATION, cnnl.CNNL_LOG_SOFTMAX_NORMALIZATION])
def test_against_brute_force(handle, reduction, norm):
    rng = np.random.default_rng(reduction * 3 + norm)
    logits = rng.standard_normal((5, 2, 3))
    logits_mode = norm != cnnl.CNNL_NONE_NORMALIZATION
    x = logits if logits_mode else logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    labels, lengths_in, lengths_lab = CASE["labels"], CASE["input_lengths"], CASE["label_lengths"]
    loss, grads = ctc(handle, x, labels, lengths_in, lengths_lab, 0, reduction, norm, concatenated=reduction == SUM)
    want = reference(x, labels, lengths_in, lengths_lab, 0, reduction, logits_mode)
    np.testing.assert_allclose(loss, want, rtol=1e-10)
    assert np.all(grads[4:, 1] == 0)  # past sample 1's input length
    if logits_mode:  # the gradient with respect to the logits
        directional_check(lambda xx: np.sum(reference(xx, labels, lengths_in, lengths_lab, 0, reduction, True)), x,
                          grads, rng)
    else:  # with respect to the log-probabilities themselves
        directional_check(lambda xx: np.sum(reference(xx, labels, lengths_in, lengths_lab, 0, reduction, False)), x,
                          grads, rng)


def test_matches_torch(handle):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    x = torch.tensor(rng.standard_normal((12, 3, 6))).log_softmax(-1).requires_grad_()
    targets = torch.tensor([[1, 2, 2, 5], [3, 3, 3, 1], [4, 0, 0, 0]])
    in_len, tgt_len = torch.tensor([12, 9, 7]), torch.tensor([4, 3, 1])
    for reduction, mode in (("mean", MEAN), ("sum", SUM), ("none", NONE)):
        x.grad = None
        want = torch.nn.functional.ctc_loss(x, targets, in_len, tgt_len, blank=0, reduction=reduction)
        (want if reduction != "none" else want.sum()).backward()
        loss, grads = ctc(handle, x.detach().numpy(), targets.tolist(), in_len.tolist(), tgt_len.tolist(), 0, mode,
                          cnnl.CNNL_LOG_SOFTMAX_NORMALIZATION)
        np.testing.assert_allclose(loss, np.atleast_1d(want.detach().numpy()), rtol=1e-9)
        np.testing.assert_allclose(grads, x.grad.numpy(), atol=1e-10)


def test_impossible_alignment_and_zero_infinity(handle):
    x = np.log(np.full((2, 1, 3), 1 / 3))
    # labels [1, 1] need 3 steps (a blank between the repeats): impossible in 2
    loss, grads = ctc(handle, x, [[1, 1]], [2], [2], 0, NONE, cnnl.CNNL_NONE_NORMALIZATION)
    assert np.isinf(loss[0]) and np.isnan(grads).all()
    loss, grads = ctc(handle, x, [[1, 1]], [2], [2], 0, NONE, cnnl.CNNL_NONE_NORMALIZATION, zero_inf=True)
    assert loss[0] == 0 and np.all(grads == 0)
    loss, _ = ctc(handle, x, [[1, 2]], [0], [0], 0, NONE, cnnl.CNNL_NONE_NORMALIZATION, grads=False)
    assert loss[0] == 0  # empty input, empty label


def test_rejects(handle):
    BAD, UNSUPPORTED = cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED
    desc = cnnl.createCTCLossDescriptor()
    x = blank((4, 2, 3), F32, TNC)
    labels, lengths, loss = blank((2, 2), INT32), blank((2,), INT32), blank((2,), F32)
    args = [handle, desc, x.desc, x.ptr, labels.desc, labels.ptr, lengths.desc, lengths.ptr, lengths.desc,
            lengths.ptr, None, 0, loss.desc, loss.ptr, None, None]
    with raises_status(BAD, arg="ctc_loss_desc"):
        cnnl.cTCLoss(*args)
    with raises_status(BAD, arg="reduce_mode"):
        cnnl.setCTCLossDescriptor(desc, 0, 7, 0, 0, 4, 2)
    cnnl.setCTCLossDescriptor(desc, cnnl.CNNL_LOG_SOFTMAX_NORMALIZATION, NONE, 0, 0, 4, 2)
    for position, value, arg, status in [(2, blank((4, 2), F32).desc, "input_desc", BAD),
                                         (4, blank((3, 2), INT32).desc, "labels_desc", BAD),
                                         (4, blank((2, 2), F32).desc, "labels_desc", UNSUPPORTED),
                                         (6, blank((3,), INT32).desc, "input_lengths_desc", BAD),
                                         (12, blank((1,), F32).desc, "loss_desc", BAD),
                                         (14, blank((4, 2, 4), F32).desc, "grads_desc", BAD),
                                         (2, blank((4, 2, 3), INT32).desc, "input_desc", UNSUPPORTED)]:
        bad = list(args)
        bad[position] = value
        with raises_status(status, arg=arg):
            cnnl.cTCLoss(*bad)
    cnnl.setCTCLossDescriptor(desc, 0, NONE, 0, 3, 4, 2)
    with raises_status(BAD, arg="ctc_loss_desc"):  # blank 3 is not one of 3 classes
        cnnl.cTCLoss(*args)
    cnnl.setCTCLossDescriptor(desc, 0, NONE, 0, 0, 4, 1)
    xt, lab = placed(np.zeros((4, 2, 3)), F32, TNC), placed(np.array([[1, 2], [1, 1]]), INT32)
    lens = placed(np.array([4, 4]), INT32)
    size = cnnl.getCTCLossWorkspaceSize(handle, desc, xt.desc, False)
    cnnl.cTCLoss(handle, desc, xt.desc, xt.ptr, lab.desc, lab.ptr, lens.desc, lens.ptr, lens.desc, lens.ptr,
                 blank((size,), cnnl.CNNL_DTYPE_INT8).ptr, size, loss.desc, loss.ptr, None, None)
    with pytest.raises(Exception, match="label lengths"):
        sync(handle)
