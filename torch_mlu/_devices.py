"""torch_mlu follows mlusim's device table. When the table is rebuilt (`mlusim.device.configure`, e.g. a test that
wants two devices or a small GDRAM), the queues, handles, notifiers and cached memory of the old devices are gone:
`check()` notices (one integer compare) and calls the registered resets, so the caches start over on the new
devices. Tensors made before that point the old devices' memory: using them fails loudly in cnrt/cnnl."""
from __future__ import annotations

from typing import Callable

import cnrt
from mlusim import device as _table

_seen = -1
_resets: list[Callable[[int], None]] = []


def on_rebuild(reset: Callable[[int], None]) -> None:
    """Call `reset(device_count)` whenever the device table was rebuilt."""
    _resets.append(reset)


def count() -> int:
    """The number of devices (after check())."""
    check()
    return cnrt.getDeviceCount()


def check() -> None:
    """Run the resets if the device table changed since the last check."""
    global _seen
    if _table.generation == _seen:
        return
    devices = cnrt.getDeviceCount()  # builds the table on first use, which changes the generation
    _seen = _table.generation
    for reset in _resets:
        reset(devices)
