"""What the conformance run expects not to pass, each entry with its reason.

- `skip`: the op (or the samples a predicate picks) is not run at all, e.g. it would take the worker down.
- `xfail`: the samples run; a failure counts as xfail (known, with the reason), a pass as "xpass" (the entry is
  stale and should go).
- `unchecked`: the samples run on mlu (no crash, right shapes, dtypes and device) but their values are not
  compared: random numbers (the mlu generators draw from cnnl's Philox stream, the CPU from mt19937) and
  uninitialised memory (`empty`).

Keys are OpInfo full names ("div.floor_rounding"). `phase` is "forward", "gradient" or "both"; `sample` an
optional predicate over the mlu SampleInput.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import torch

SKIP, XFAIL, UNCHECKED = "skip", "xfail", "unchecked"
BOTH = "both"


@dataclass(frozen=True)
class Expectation:
    kind: str
    reason: str
    phase: str = BOTH
    sample: Optional[Callable] = None

    def applies(self, phase: str, sample=None) -> bool:
        if self.phase not in (BOTH, phase):
            return False
        return self.sample is None or sample is None or bool(self.sample(sample))


def _all(kind: str, reason: str, names, phase: str = BOTH) -> dict[str, list[Expectation]]:
    return {name: [Expectation(kind, reason, phase)] for name in names}


RANDOM_REASON = "random numbers: mlu draws from cnnl's Philox generator, the CPU from mt19937"
RANDOM = (
    "bernoulli", "cauchy", "exponential", "geometric", "log_normal", "multinomial", "normal", "normal.in_place",
    "normal.number_mean", "rand_like", "randint", "randint_like", "randn", "randn_like", "uniform",
    "nn.functional.alpha_dropout", "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d",
    "nn.functional.feature_alpha_dropout.with_train", "nn.functional.fractional_max_pool2d",
    "nn.functional.fractional_max_pool3d", "nn.functional.rrelu", "svd_lowrank", "pca_lowrank",
)
UNINITIALISED_REASON = "uninitialised memory: the values of empty tensors are undefined"
UNINITIALISED = ("empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided",
                 "resize_", "resize_as_")

CAST_REASON = ("float to integer conversion of NaN, infinity or values outside the integer type's range is "
               "undefined in C++ (the CPU gives whatever the host's instruction does); cnnlCastDataType saturates")
_INTEGER_CASTS = {"byte": torch.uint8, "char": torch.int8, "short": torch.int16, "int": torch.int32,
                  "long": torch.int64}


def _outside(target: torch.dtype):
    """A sample predicate: a floating input holding NaN, infinity or values outside `target`'s range."""
    info = torch.iinfo(target)

    def predicate(sample) -> bool:
        x = sample.input
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.numel() == 0:
            return False
        values = x.detach().cpu().double()
        return bool((~torch.isfinite(values)).any() or (values.trunc() < info.min).any()
                    or (values.trunc() > info.max).any())
    return predicate


EXPECTATIONS: dict[str, list[Expectation]] = {
    **_all(UNCHECKED, RANDOM_REASON, RANDOM),
    **_all(UNCHECKED, UNINITIALISED_REASON, UNINITIALISED),
    **{name: [Expectation(XFAIL, CAST_REASON, "forward", _outside(dtype))] for name, dtype in _INTEGER_CASTS.items()},
    "to_sparse": [Expectation(XFAIL, "sparse tensors are not supported on mlu (no sparse kernels, as torch_mlu)")],
    "nn.functional.scaled_dot_product_attention": [
        Expectation(UNCHECKED, RANDOM_REASON + " (dropout_p > 0)", BOTH,
                    lambda sample: sample.kwargs.get("dropout_p", 0) > 0)],
    # dropout_p is the tenth positional argument after the query (key, value, embed_dim, num_heads, in_proj_weight,
    # in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, ...); it draws only in training mode
    "nn.functional.multi_head_attention_forward": [
        Expectation(UNCHECKED, RANDOM_REASON + " (training with dropout_p > 0)", BOTH,
                    lambda sample: sample.kwargs.get("training", True) and len(sample.args) > 9
                    and sample.args[9] > 0)],
}


def expectations_for(full_name: str) -> list[Expectation]:
    """The entries of one OpInfo (by full name)."""
    return EXPECTATIONS.get(full_name, [])


def find(entries: list[Expectation], phase: str, sample=None, kinds=(SKIP, XFAIL, UNCHECKED)) -> Optional[Expectation]:
    """The first entry of `kinds` that applies to this phase (and sample)."""
    for entry in entries:
        if entry.kind in kinds and entry.applies(phase, sample):
            return entry
    return None


def whole_op_skip(full_name: str, phase: str) -> Optional[Expectation]:
    """A skip entry covering every sample of the op in this phase, if any."""
    for entry in expectations_for(full_name):
        if entry.kind == SKIP and entry.sample is None and entry.phase in (BOTH, phase):
            return entry
    return None
