"""Device-argument parsing shared by the torch.mlu functions."""
from __future__ import annotations

import torch

from .. import _state


def device_index(device=None, optional: bool = True) -> int:
    """The mlu device index named by `device` (None, an int, "mlu", "mlu:1", a torch.device): the current device
    when no index is given (with `optional`), -1 passed through for the no-op conventions of torch.cuda."""
    if device is None:
        if not optional:
            raise ValueError("Expected an mlu device, got None")
        return _state.C.get_device()
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "mlu":
            raise ValueError(f"Expected an mlu device, but got: {device}")
        if device.index is None:
            if not optional:
                raise ValueError(f"Expected an mlu device with a specified index, got {device}")
            return _state.C.get_device()
        return device.index
    if isinstance(device, bool) or not isinstance(device, int):
        raise ValueError(f"Expected an mlu device (int, str or torch.device), got {device!r}")
    return device


def checked_index(device=None) -> int:
    """device_index, which must name an existing device."""
    index = device_index(device)
    if index < 0:
        index = _state.C.get_device()
    count = _state.runtime.device_count()
    if not 0 <= index < count:
        raise ValueError(f"mlu: invalid device {device!r}: there are {count} mlu device(s)")
    return index
