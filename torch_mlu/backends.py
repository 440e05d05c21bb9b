"""torch.backends.mlu and torch.backends.cnnl: torch_mlu's switches for TF32 (the counterparts of
torch.backends.cuda.matmul and torch.backends.cudnn); torch.backends.mlufusion: its switch of fused ops.

- `torch.backends.cnnl.allow_tf32` (default True): convolutions may use TF32, as cudnn.allow_tf32.
- `torch.backends.mlu.matmul.allow_tf32` (default False): matrix products may use TF32. It follows
  `torch.set_float32_matmul_precision` ("highest": False; "high" or "medium": True) and is independent of CUDA's flag.
- `torch.backends.mlu.custom.allow_tf32` (default False): torch_mlu's custom ops may use TF32.

- `torch.backends.mlufusion.enabled` (default True; `set_flags(enabled)`, `flags(enabled=False)`): torch_mlu may run
  nn.LSTM as one fused cnnl kernel. mlusim runs LSTM from its matrix products and pointwise ops in both settings;
  the results agree within the fused kernel's tolerances, so the switch changes no result here.

The switches permit TF32; they never require it. The simulator computes float32 products and convolutions in
float32 whatever they say, which is within every tolerance TF32 is allowed.
"""
from __future__ import annotations

import contextlib
import sys
import types

import torch


class _Switch:
    """One allow_tf32 flag."""

    def __init__(self, allow_tf32: bool):
        self.allow_tf32 = allow_tf32

    def __repr__(self) -> str:
        return f"<allow_tf32={self.allow_tf32}>"


class _MluBackend(types.ModuleType):
    """torch.backends.mlu: `matmul` and `custom` switches."""

    def __init__(self):
        super().__init__("torch.backends.mlu", type(self).__doc__)
        self.matmul = _Switch(False)
        self.custom = _Switch(False)


class _CnnlBackend(types.ModuleType):
    """torch.backends.cnnl: the switches of cnnl's convolutions (cudnn's counterpart)."""

    def __init__(self):
        super().__init__("torch.backends.cnnl", type(self).__doc__)
        self.allow_tf32 = True
        self.enabled = True
        self.deterministic = False
        self.benchmark = False

    @staticmethod
    def is_available() -> bool:
        """torch.backends.cnnl.is_available(): cnnl is always there (the simulated one)."""
        return True


class _MlufusionBackend(types.ModuleType):
    """torch.backends.mlufusion: whether torch_mlu may use its fused ops (nn.LSTM)."""

    def __init__(self):
        super().__init__("torch.backends.mlufusion", type(self).__doc__)
        self.enabled = True

    def set_flags(self, enabled: bool) -> tuple[bool]:
        """torch.backends.mlufusion.set_flags(enabled): set the switch; returns the old setting as a 1-tuple."""
        previous = (self.enabled,)
        self.enabled = bool(enabled)
        return previous

    @contextlib.contextmanager
    def flags(self, enabled: bool = False):
        """torch.backends.mlufusion.flags(enabled=False): the switch set within the block."""
        previous = self.set_flags(enabled)
        try:
            yield
        finally:
            self.set_flags(previous[0])


mlu = _MluBackend()
cnnl = _CnnlBackend()
mlufusion = _MlufusionBackend()
_set_precision = torch.set_float32_matmul_precision


def set_float32_matmul_precision(precision: str) -> None:
    """torch.set_float32_matmul_precision, which also sets torch.backends.mlu.matmul.allow_tf32 (torch_mlu's)."""
    _set_precision(precision)
    mlu.matmul.allow_tf32 = torch.get_float32_matmul_precision() != "highest"


def install() -> None:
    """Make torch.backends.mlu, .cnnl and .mlufusion importable and attributes of torch.backends."""
    for name, module in (("mlu", mlu), ("cnnl", cnnl), ("mlufusion", mlufusion)):
        setattr(torch.backends, name, module)
        sys.modules[f"torch.backends.{name}"] = module
    torch.set_float32_matmul_precision = set_float32_matmul_precision
