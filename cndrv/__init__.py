"""cndrv: a Python clone of the part of Cambricon's CNDrv driver API (cn_api.h) that programs use next to CNRT,
over the simulated devices (mlusim).

Initialisation and versions, device queries (cnDeviceGet, cnDeviceGetCount, cnDeviceGetName, cnDeviceGetAttribute,
cnDeviceTotalMem, UUID, PCI bus id), contexts (cnCtxGetCurrent, cnCtxSetCurrent, cnCtxGetDevice, cnCtxCreate,
shared contexts, the per-thread configuration cnGetCtxConfigParam / cnSetCtxConfigParam,
cnGetCtxMaxParallelUnionTasks, cnQueueGetContext), memory (cnMalloc, cnMallocConstant, cnFree, synchronous copies,
cnMemGetInfo, cnGetMemAttribute) and error strings; libcndrv.so
exports them to C (cn_api.h, docs/capi.md). Names follow docs/architecture.md with the prefix `cn`: `cnDeviceGet` is
`cndrv.deviceGet` (and `cndrv.cnDeviceGet`); outputs are returned; a failure raises `CndrvError` whose `.code` is
the CNresult value.
"""
from . import contexts, devices, memory, status  # noqa: F401  (register the API functions)
from .contexts import Context as CNcontext  # noqa: F401
from .devices import LIB_VERSION  # noqa: F401
from .status import CndrvError, api as _api  # noqa: F401

for _module in (status, contexts, devices, memory):
    for _name in dir(_module):
        if _name.startswith("CN_"):
            globals()[_name] = getattr(_module, _name)
globals().update(devices.DEVICE_ATTRIBUTES)

_api.export(globals())

CNresult = CNdev = CNaddr = int
CN_MAJOR_VERSION, CN_MINOR_VERSION, CN_PATCH_VERSION = LIB_VERSION
del _module, _name
