"""Device-argument parsing shared by the torch.mlu functions."""
from __future__ import annotations

import operator

import torch

from .. import _state


def device_index(device=None, optional: bool = True) -> int:
    """The mlu device index named by `device` (None, an int or integer scalar, "mlu", "mlu:1", a torch.device, a
    torch.mlu.device): the current device when no index is given (with `optional`), -1 passed through for the no-op
    conventions of torch.cuda. Messages are torch_mlu's."""
    if device is None:
        if not optional:
            raise ValueError("Expected a mlu device, got None")
        return _state.C.get_device()
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "mlu":
            raise ValueError(f"Expected a mlu device, but got: {device}")
        if device.index is None:
            if not optional:
                raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
            return _state.C.get_device()
        return device.index
    if hasattr(device, "idx") and not isinstance(device, int):  # a torch.mlu.device
        return device.idx
    if isinstance(device, bool) or not hasattr(device, "__index__"):
        raise ValueError(f"Expected a mlu device (int, str or torch.device), got {device!r}")
    return operator.index(device)  # an int, or an integer scalar (numpy's)


def _get_device_index(device, optional: bool = False, allow_cpu: bool = False) -> int:
    """torch_mlu.mlu._utils._get_device_index, torch's `_get_device_index` for mlu: the index of an mlu device; -1
    for a cpu device when `allow_cpu`; the current device for None or an index-less device when `optional`."""
    if isinstance(device, str):
        device = torch.device(device)  # torch's RuntimeError for an invalid string ("mlu0")
    if isinstance(device, torch.device) and device.type != "mlu":
        if allow_cpu and device.type == "cpu":
            return -1
        raise ValueError(f"Expected a mlu{' or cpu' if allow_cpu else ''} device, but got: {device}")
    return device_index(device, optional)


def checked_index(device=None) -> int:
    """device_index, which must name an existing device."""
    index = device_index(device)
    if index < 0:
        index = _state.C.get_device()
    count = _state.runtime.device_count()
    if not 0 <= index < count:
        raise ValueError(f"mlu: invalid device {device!r}: there are {count} mlu device(s)")
    return index
