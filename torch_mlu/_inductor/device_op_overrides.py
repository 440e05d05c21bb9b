"""The lines Inductor's wrapper writes for device management on "mlu" (device guard, set_device, synchronize,
streams), spelled with torch.mlu's names."""
from __future__ import annotations

from torch._inductor.codegen.common import DeviceOpOverrides


class MLUDeviceOpOverrides(DeviceOpOverrides):
    """Device management lines of a compiled mlu graph's Python wrapper."""

    def import_get_raw_stream_as(self, name: str) -> str:
        return f"from torch_mlu._inductor.runtime.streams import get_raw_stream as {name}"

    def set_device(self, device_idx: int) -> str:
        return f"torch.mlu.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.mlu.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.mlu.device({device_idx})"

    def current_stream(self) -> str:
        return "torch.mlu.current_stream()"
