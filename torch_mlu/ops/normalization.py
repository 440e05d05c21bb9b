"""Batch norm's PrivateUse1 entry. aten::native_batch_norm updates running_mean / running_var in place, but its
schema does not mark them as written, so the generic CPU fallback would compute on host copies of them and drop the
update (running statistics would never move). The kernel runs aten::_native_batch_norm_legit instead, whose schema
marks both as mutated (the fallback then copies them back), until batch norm gets cnnl kernels
(cnnlBatchNormForwardTraining / Inference)."""
from __future__ import annotations

from ._core import aten, fallback, register


@register("aten::native_batch_norm")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """aten::native_batch_norm -> (output, save_mean, save_invstd), updating the running statistics."""
    if running_mean is None or running_var is None:
        return fallback(aten._native_batch_norm_legit.no_stats, input, weight, bias, training, momentum, eps)
    return fallback(aten._native_batch_norm_legit.default, input, weight, bias, running_mean, running_var,
                    training, momentum, eps)
