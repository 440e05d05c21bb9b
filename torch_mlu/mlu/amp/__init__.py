"""torch.mlu.amp: autocast and GradScaler for the mlu device (torch.amp with device_type "mlu"). The op lists
autocast applies are torch's own (registered for AutocastPrivateUse1 by the C++ part)."""
from __future__ import annotations

import functools

import torch


class autocast(torch.amp.autocast_mode.autocast):
    """torch.mlu.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True) =
    torch.autocast("mlu", ...)."""

    def __init__(self, enabled: bool = True, dtype: torch.dtype = torch.float16, cache_enabled: bool = True):
        super().__init__("mlu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(torch.amp.GradScaler):
    """torch.mlu.amp.GradScaler(...) = torch.amp.GradScaler("mlu", ...)."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        super().__init__("mlu", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)


custom_fwd = functools.partial(torch.amp.custom_fwd, device_type="mlu")
custom_bwd = functools.partial(torch.amp.custom_bwd, device_type="mlu")


def is_autocast_enabled() -> bool:
    """Whether autocast is on for mlu in this thread."""
    return torch.is_autocast_enabled("mlu")


def get_autocast_dtype() -> torch.dtype:
    """The dtype mlu autocast casts to."""
    return torch.get_autocast_dtype("mlu")


def set_autocast_enabled(enabled: bool) -> None:
    """torch.mlu.set_autocast_enabled (torch_mlu): turn mlu autocast on or off in this thread (what
    torch.autocast("mlu") does on entering and leaving)."""
    if not isinstance(enabled, bool):
        raise TypeError(f"set_autocast_enabled: enabled must be a bool, not {type(enabled).__name__}")
    torch.set_autocast_enabled("mlu", enabled)


def set_autocast_dtype(dtype: torch.dtype) -> None:
    """torch.mlu.set_autocast_dtype (torch_mlu): the dtype mlu autocast casts to (float16 or bfloat16)."""
    if dtype not in (torch.float16, torch.bfloat16):
        raise RuntimeError(f"Currently, AutocastMLU only support float16 and bfloat16 as the autocast_mlu_dtype, "
                           f"not {dtype}")
    torch.set_autocast_dtype("mlu", dtype)


__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_enabled", "get_autocast_dtype",
           "set_autocast_enabled", "set_autocast_dtype"]
