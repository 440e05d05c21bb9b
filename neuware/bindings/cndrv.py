"""libcndrv: the annotations of the cn_api.h functions whose C types alone do not say how they map to Python."""
from __future__ import annotations

from ..kinds import HostBuffer, OutString, OutText

ANNOTATIONS = {
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
