"""libcndrv: the annotations of the cn_api.h functions whose C types alone do not say how they map to Python."""
from __future__ import annotations

from ..kinds import HostBuffer, OutHostInt, OutString, OutText, StructIn

def _mem_attribute_bytes(attribute) -> int:
    """The size of the value cnGetMemAttribute writes for `attribute` (4 for an attribute it refuses)."""
    from cndrv.memory import MEM_ATTRIBUTE_BYTES
    return MEM_ATTRIBUTE_BYTES.get(attribute, 4)


ANNOTATIONS = {
    "cnSetCtxConfigParam": {"param": StructIn(lambda ffi, pointer: pointer)},  # read during the call
    "cnGetMemAttribute": {"data": OutHostInt(_mem_attribute_bytes)},
    "cnGetErrorString": {"pStr": OutString()},
    "cnGetErrorName": {"pStr": OutString()},
    "cnDeviceGetName": {"name": OutText("len")},
    "cnDeviceGetPCIBusId": {"pciBusId": OutText("len")},
    "cnDeviceGetUuidStr": {"uuid_str": OutText("len")},
    "cnMemcpyHtoD": {"srcAddr": HostBuffer("bytes")},
    "cnMemcpyDtoH": {"dstAddr": HostBuffer("bytes")},
}

DESTROYS = {"cnCtxDestroy": "context"}

ERROR_STRINGS: dict = {}
