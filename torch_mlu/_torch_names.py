"""What Cambricon's own build of torch adds to torch (its pytorch_patches/), which programs and tests written for
torch_mlu call: installed on the stock torch this package runs on."""
from __future__ import annotations

import functools

import torch
import torch.autograd.profiler


def is_mlu_available() -> bool:
    """torch.is_mlu_available (Cambricon's torch, torch/functional.py): torch_mlu can be imported. True here, this
    module being part of it."""
    return True


def _accepting_use_mlu(init):
    """torch.autograd.profiler.profile(use_mlu=True) (Cambricon's torch): profile the MLU's activities, which stock
    torch spells use_device="mlu"."""
    @functools.wraps(init)
    def __init__(self, *args, use_mlu: bool = False, **kwargs):
        if use_mlu and kwargs.get("use_device") is None:
            kwargs["use_device"] = "mlu"
        init(self, *args, **kwargs)

    __init__.accepts_use_mlu = True
    return __init__


def install() -> None:
    if not hasattr(torch, "is_mlu_available"):
        torch.is_mlu_available = is_mlu_available
    profile = torch.autograd.profiler.profile
    if not getattr(profile.__init__, "accepts_use_mlu", False):
        profile.__init__ = _accepting_use_mlu(profile.__init__)
