"""CTC loss: cnnlCreate/Destroy/SetCTCLossDescriptor, cnnlGetCTCLossWorkspaceSize and cnnlCTCLoss (loss, and its
gradient when `grads` is given), PyTorch's ctc_loss numerics (`cnnl.kernels.ctc_loss`).

Argument order from DeepLink DIOPI's Cambricon backend (functions/ctc_loss.cpp): input [T, N, C] (TNC layout) of
HALF, BFLOAT16, FLOAT or DOUBLE; labels INT32/INT64, either [N, S] (padded) or 1-D (concatenated); input and label
lengths INT32/INT64 [N]; loss [N] for CNNL_REDUCE_MODE_NONE, else one element; grads like input (NULL for the
loss only). Normalisation: CNNL_NONE_NORMALIZATION reads log-probabilities and differentiates with respect to
them; SOFTMAX and LOG_SOFTMAX normalise logits with a log-softmax over the classes and differentiate with respect to
the logits (PyTorch's gradient; a log-softmax of log-probabilities changes nothing, which is how DIOPI calls it).
The gradient is that of the reduced loss (NONE: of the sum of the losses). Lengths beyond T or the label count,
label values outside [0, C) or label lengths above the descriptor's maximum fail the queued op.
"""
from __future__ import annotations

import numpy as np

from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum, as_int

from .. import checks
from .. import enums as E
from ..descriptors import Descriptor, lifecycle, live, ready
from ..handle import handle_arg
from ..kernels import ctc_loss as K
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from . import nn_common as N

_REDUCTIONS = {E.CNNL_REDUCE_MODE_NONE: K.NONE, E.CNNL_REDUCE_MODE_SUM: K.SUM,
               E.CNNL_REDUCE_MODE_MEAN_BY_LABEL_LENGTH_AND_BATCH: K.MEAN}


class CTCLossDescriptor(Descriptor):
    """cnnlCTCLossDescriptor_t: normalisation, reduction, zero-infinity rule, blank label, maximum lengths."""

    c_type = "cnnlCTCLossDescriptor_t"
    setter = "cnnlSetCTCLossDescriptor"

    def __init__(self):
        super().__init__()
        self.normalization = E.CNNL_LOG_SOFTMAX_NORMALIZATION
        self.reduction = E.CNNL_REDUCE_MODE_NONE
        self.zero_infinity = False
        self.blank = 0
        self.max_input_length = self.max_label_length = 0


createCTCLossDescriptor, destroyCTCLossDescriptor = lifecycle(CTCLossDescriptor, "cnnlCreateCTCLossDescriptor",
                                                              "cnnlDestroyCTCLossDescriptor")


@api("cnnlSetCTCLossDescriptor")
def setCTCLossDescriptor(ctc_loss_desc, norm_mode, reduce_mode, zero_infinity, blank, max_input_length,
                         max_label_length) -> None:
    """cnnlSetCTCLossDescriptor(ctc_loss_desc, cnnlCTCLossNormalizationMode_t norm_mode, cnnlCTCLossReduceMode_t
    reduce_mode, cnnlCTCLossZeroInfinityMode_t zero_infinity, int blank, int max_input_length, int
    max_label_length)."""
    target = live(ctc_loss_desc, CTCLossDescriptor, "ctc_loss_desc")
    values = dict(normalization=as_enum(norm_mode, "norm_mode", E.CTC_NORMALIZATION_MODES,
                                        "cnnlCTCLossNormalizationMode_t"),
                  reduction=as_enum(reduce_mode, "reduce_mode", E.CTC_REDUCE_MODES, "cnnlCTCLossReduceMode_t"),
                  zero_infinity=as_enum(zero_infinity, "zero_infinity", E.CTC_ZERO_INFINITY_MODES,
                                        "cnnlCTCLossZeroInfinityMode_t") == E.CNNL_ZERO_INFINITY,
                  blank=as_int(blank, "blank", minimum=0, maximum=2 ** 31 - 1),
                  max_input_length=as_int(max_input_length, "max_input_length", minimum=0, maximum=2 ** 31 - 1),
                  max_label_length=as_int(max_label_length, "max_label_length", minimum=0, maximum=2 ** 31 - 1))
    for name, value in values.items():
        setattr(target, name, value)
    target.is_set = True


def _input(op, desc, ctc: CTCLossDescriptor) -> TensorDescriptor:
    x = tensor_arg(desc, "input_desc")
    N.float_tensor(x, "input_desc", op)
    if len(x.dims) != 3:
        raise ArgumentFault(f"{len(x.dims)} dims; the input is [T, N, C]", "input_desc")
    if ctc.blank >= x.dims[2]:
        raise ArgumentFault(f"blank {ctc.blank} is not a class of the {x.dims[2]} classes", "ctc_loss_desc")
    if x.dims[0] > ctc.max_input_length:
        raise ArgumentFault(f"{x.dims[0]} time steps exceed the descriptor's max_input_length "
                            f"{ctc.max_input_length}", "input_desc")
    return x


@api("cnnlGetCTCLossWorkspaceSize")
def getCTCLossWorkspaceSize(handle, ctc_loss_desc, input_desc, is_backward) -> int:
    """cnnlGetCTCLossWorkspaceSize(handle, ctc_loss_desc, input_desc, bool is_backward, &size) -> size: the float32
    alpha (and for the gradient beta) tables, T x N x (2 max_label_length + 1) each."""
    handle_arg(handle)
    ctc = ready(ctc_loss_desc, CTCLossDescriptor, "ctc_loss_desc")
    x = _input("cnnlCTCLoss", input_desc, ctc)
    tables = 2 if checks.flag(is_backward, "is_backward") else 1
    return tables * 4 * x.dims[0] * x.dims[1] * (2 * ctc.max_label_length + 1)


@api("cnnlCTCLoss")
def cTCLoss(handle, ctc_loss_desc, input_desc, input, labels_desc, labels, input_lengths_desc, input_lengths,
            label_lengths_desc, label_lengths, workspace, workspace_size, loss_desc, loss, grads_desc,
            grads) -> None:  # noqa: A002
    """cnnlCTCLoss(handle, ctc_loss_desc, input_desc, input, labels_desc, labels, input_lengths_desc, input_lengths,
    label_lengths_desc, label_lengths, workspace, workspace_size, loss_desc, loss, grads_desc, grads): the CTC
    loss of every sample (reduced by the descriptor's mode) and, when grads is given, its gradient."""
    op = "cnnlCTCLoss"
    with OpCall(op, handle) as call:
        ctc = ready(ctc_loss_desc, CTCLossDescriptor, "ctc_loss_desc")
        xd = _input(op, input_desc, ctc)
        steps, batch, classes = xd.dims
        ld = tensor_arg(labels_desc, "labels_desc")
        N.index_tensor(ld, "labels_desc", op)
        if len(ld.dims) not in (1, 2) or (len(ld.dims) == 2 and ld.dims[0] != batch):
            raise ArgumentFault(f"dims {list(ld.dims)}; labels are [{batch}, S] or 1-D concatenated", "labels_desc")
        lengths = []
        for desc, arg in ((input_lengths_desc, "input_lengths_desc"), (label_lengths_desc, "label_lengths_desc")):
            target = tensor_arg(desc, arg)
            N.index_tensor(target, arg, op)
            if target.dims != (batch,):
                raise ArgumentFault(f"dims {list(target.dims)}; expected [{batch}]", arg)
            lengths.append(target)
        reduction = _REDUCTIONS[ctc.reduction]
        lossd = tensor_arg(loss_desc, "loss_desc")
        checks.same_dtype(xd, "input_desc", (lossd, "loss_desc"))
        expected = batch if reduction == K.NONE else 1
        if lossd.size != expected:
            raise ArgumentFault(f"dims {list(lossd.dims)}; the loss holds {expected} values", "loss_desc")
        gd = None
        if grads_desc is not None:
            gd = tensor_arg(grads_desc, "grads_desc")
            checks.same_dtype(xd, "input_desc", (gd, "grads_desc"))
            checks.same_shape(xd, "input_desc", (gd, "grads_desc"))
        xv, labv = call.input(xd, input, "input"), call.input(ld, labels, "labels")
        inv, lenv = call.input(lengths[0], input_lengths, "input_lengths"), call.input(lengths[1], label_lengths,
                                                                                          "label_lengths")
        lv = call.output(lossd, loss, "loss")
        gv = call.output(gd, grads, "grads") if gd is not None else None
        call.workspace(workspace, workspace_size, getCTCLossWorkspaceSize(handle, ctc_loss_desc, input_desc,
                       gd is not None), "cnnlGetCTCLossWorkspaceSize")
        blank, normalize = ctc.blank, ctc.normalization != E.CNNL_NONE_NORMALIZATION
        zero_infinity, longest = ctc.zero_infinity, ctc.max_label_length

        def run():
            input_count, label_count = np.array(inv, np.int64), np.array(lenv, np.int64)
            flat = np.array(labv, np.int64).reshape(-1)
            if len(labv.shape) == 2:
                offsets = np.arange(batch) * labv.shape[1]
                room = labv.shape[1]
            else:
                offsets = np.concatenate(([0], np.cumsum(label_count)[:-1])).astype(np.int64)
                room = None
            if ((input_count < 0) | (input_count > steps)).any():
                raise ValueError(f"input lengths {input_count.tolist()} outside [0, {steps}]")
            if (label_count < 0).any() or (label_count > longest).any() or (
                    room is not None and (label_count > room).any()) or (
                    room is None and label_count.sum() > flat.size):
                raise ValueError(f"label lengths {label_count.tolist()} are negative, above max_label_length "
                                 f"{longest} or longer than the labels")
            used = np.concatenate([flat[o:o + n] for o, n in zip(offsets, label_count)]) if batch else flat[:0]
            if used.size and (used.min() < 0 or used.max() >= classes):
                raise ValueError(f"labels outside [0, {classes})")
            K.ctc_loss(xv, flat, offsets, input_count, label_count, blank, normalize, reduction, zero_infinity, lv,
                       gv)

        call.submit(run, flops=10.0 * steps * batch * (2 * longest + 1) + 4 * xd.size, dtype=xd.dtype)
