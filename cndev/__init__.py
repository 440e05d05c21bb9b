"""cndev: a Python clone of Cambricon's CNDev device-management library over the simulated boards (mlusim).

The queries a program or a device monitor makes (cndevInit, cndevGetDeviceCount, card name, core and cluster counts,
memory usage, UUID, PCIe location, versions, GDRAM width and bandwidth, clocks, peak MACs), answered from the simulated devices; libcndev.so exports them to C
(cndev.h, see docs/capi.md). Names follow docs/architecture.md: `cndevGetCardName` is `cndev.getCardName` (and
`cndev.cndevGetCardName`); the result struct is returned; a failure raises `CndevError` whose `.code` is the
cndevRet_t value.
"""
from . import cards, performance, status  # noqa: F401  (register the API functions)
from .cards import (CARD_NAMES, LIB_VERSION, cndevCardClusterCount_t, cndevCardCoreCount_t,  # noqa: F401
                    cndevCardInfo_t, cndevCardName_t, cndevLibVersionInfo_t, cndevMemoryInfoV2_t,
                    cndevPCIeInfoV2_t, cndevUUID_t, cndevVersionInfo_t)
from .performance import cndevDDRInfo_t, cndevDeviceMaxPerformance_t, cndevFrequencyInfo_t  # noqa: F401
from .status import CndevError, api as _api  # noqa: F401

for _module in (status, cards, performance):
    for _name in dir(_module):
        if _name.startswith("CNDEV_"):
            globals()[_name] = getattr(_module, _name)

#: API versions a result struct's `version` field takes
CNDEV_VERSION_1, CNDEV_VERSION_2, CNDEV_VERSION_3, CNDEV_VERSION_4, CNDEV_VERSION_5, CNDEV_VERSION_6 = range(1, 7)

_api.export(globals())

cndevRet_t = cndevDevice_t = cndevNameEnum_t = int
del _module, _name
