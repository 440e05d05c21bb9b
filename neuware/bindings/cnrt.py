"""libcnrt: the annotations of the cnrt.h functions whose C types alone do not say how they map to Python."""
from __future__ import annotations

from ..kinds import (AnyPointer, Bytes, Callback, Deref, HostPointer, Kernel, KernelArgs, MemcpySide, Opaque)


def _pitched(pitch: str):
    """The bytes a pitched 2-D copy spans on one side: (height - 1) rows of pitch, plus one row of width."""
    return {"dpitch": lambda dpitch, width, height: dpitch * (height - 1) + width if height else 0,
            "spitch": lambda spitch, width, height: spitch * (height - 1) + width if height else 0}[pitch]


ANNOTATIONS = {
    "cnrtMemcpy": {"dst": MemcpySide("dst", "bytes"), "src": MemcpySide("src", "bytes")},
    "cnrtMemcpyAsync": {"dst": MemcpySide("dst", "bytes"), "src": MemcpySide("src", "bytes")},
    "cnrtMemcpy2D": {"dst": MemcpySide("dst", _pitched("dpitch")), "src": MemcpySide("src", _pitched("spitch"))},
    "cnrtFreeHost": {"ptr": HostPointer()},
    "cnrtPointerGetAttributes": {"ptr": AnyPointer()},
    "cnrtInvokeHostFunc": {"fn": Callback(), "userData": Opaque()},
    "cnrtInvokeKernel": {"kernel": Kernel(), "args": KernelArgs("kernel")},
    "cnrtInvokeKernel_V2": {"kernel": Kernel()},
    "cnrtKernelParamsBufferAddParam": {"data": Bytes("bytes")},
    "cnrtDestroyNotifier": {"notifier": Deref()},
}

#: functions after whose success the named handle parameters are gone
DESTROYS = {
    "cnrtQueueDestroy": "queue",
    "cnrtDestroyQueue": "queue",
    "cnrtNotifierDestroy": "notifier",
    "cnrtDestroyNotifier": "notifier",
    "cnrtDestroyKernelParamsBuffer": "params",
}

#: get-error-string functions -> their status parameter (the thread's last failure message is appended)
ERROR_STRINGS = {"cnrtGetErrorStr": "error"}
