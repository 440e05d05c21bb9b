"""libcnrt: the annotations of the cnrt.h functions whose C types alone do not say how they map to Python."""
from __future__ import annotations

from ..kinds import (AnyPointer, Bytes, Callback, Deref, HostBuffer, HostPointer, Kernel, KernelArgs, MemcpySide, Opaque,
                     OutText, Text)


def _pitched(pitch: str):
    """The bytes a pitched 2-D copy spans on one side: (height - 1) rows of pitch, plus one row of width."""
    return {"dpitch": lambda dpitch, width, height: dpitch * (height - 1) + width if height else 0,
            "spitch": lambda spitch, width, height: spitch * (height - 1) + width if height else 0}[pitch]


def _elements(type_param: str, sizes):
    """The bytes of `data_num` elements of the type named by `type_param` (0 for a type without a size: the call
    then rejects the type)."""
    if type_param == "src_data_type":
        return lambda data_num, src_data_type: max(0, data_num) * sizes().get(src_data_type, 0)
    return lambda data_num, dst_data_type: max(0, data_num) * sizes().get(dst_data_type, 0)


def _v4_sizes() -> dict:
    import cnrt
    return {code: dtype.itemsize for code, dtype in cnrt.conversion._NUMPY.items()}


def _v2_sizes() -> dict:
    import cnrt
    return {code: dtype.itemsize for code, dtype in cnrt.conversion._v2_types().items()}


ANNOTATIONS = {
    "cnrtMemcpy": {"dst": MemcpySide("dst", "bytes"), "src": MemcpySide("src", "bytes")},
    "cnrtMemcpyAsync": {"dst": MemcpySide("dst", "bytes"), "src": MemcpySide("src", "bytes")},
    "cnrtMemcpyAsync_V2": {"dst": MemcpySide("dst", "bytes"), "src": MemcpySide("src", "bytes")},
    "cnrtCastDataType": {"src_addr": HostBuffer(_elements("src_data_type", _v4_sizes)),
                         "dst_addr": HostBuffer(_elements("dst_data_type", _v4_sizes))},
    "cnrtCastDataType_V2": {"src_addr": HostBuffer(_elements("src_data_type", _v2_sizes)),
                            "dst_addr": HostBuffer(_elements("dst_data_type", _v2_sizes))},
    "cnrtDeviceGetPCIBusId": {"pciBusId": OutText("len")},
    "cnrtCheck": {"func": Text(), "file": Text()},
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
    "cnrtDestroyQuantizedParam": "param",
}

#: get-error-string functions -> their status parameter (the thread's last failure message is appended)
ERROR_STRINGS = {"cnrtGetErrorStr": "error"}
