"""The CNDev device queries over the simulated boards: initialisation, device count and handles, card name, core and
cluster counts, memory usage, UUID, PCIe location, versions.

Device handles (cndevDevice_t) are the device ordinals, as cndevGetDeviceHandleByIndex returns them. Every query
but the version and error-string calls needs cndevInit first (CNDEV_ERROR_UNINITIALIZED otherwise), as in CNDev.
The `version` field of a result struct is the caller's input and is left as set (see neuware/bindings).
"""
from __future__ import annotations

import threading
import uuid as _uuid
from dataclasses import dataclass

import cnrt
from cnrt import constants as cnrt_constants
from mlusim import device as devices
from mlusim.validate import as_int

from .status import CNDEV_ERROR_NO_DEVICES, CNDEV_ERROR_UNINITIALIZED, CndevError, api

#: the CNDev library version mlusim's libcndev reports (chosen: the CNDev of the Neuware generation of cnrt.h 6.x)
LIB_VERSION = (6, 2, 5)

#: cndevNameEnum_t values (Cambricon's public cndev.h)
CNDEV_DEVICE_TYPE_MLU100 = 0
CNDEV_DEVICE_TYPE_MLU270 = 1
CNDEV_DEVICE_TYPE_MLU220_M2 = 16
CNDEV_DEVICE_TYPE_MLU220_EDGE = 17
CNDEV_DEVICE_TYPE_MLU220_EVB = 18
CNDEV_DEVICE_TYPE_MLU220_M2i = 19
CNDEV_DEVICE_TYPE_MLU290 = 20
CNDEV_DEVICE_TYPE_MLU370 = 23
CNDEV_DEVICE_TYPE_MLU365 = 24
CNDEV_DEVICE_TYPE_CE3226 = 25
CNDEV_DEVICE_TYPE_MLU590 = 26
CNDEV_DEVICE_TYPE_MLU585 = 27
CNDEV_DEVICE_TYPE_MLU580 = 30
CNDEV_DEVICE_TYPE_MLU570 = 31

CARD_NAMES = {value: name[len("CNDEV_DEVICE_TYPE_"):] for name, value in dict(globals()).items()
              if name.startswith("CNDEV_DEVICE_TYPE_")}

#: PCI vendor ID of Cambricon
PCI_VENDOR_CAMBRICON = 0xCABC

_MB = 2 ** 20
_state = threading.Lock()
_initialized = False


def _require_init() -> None:
    if not _initialized:
        raise CndevError(CNDEV_ERROR_UNINITIALIZED, "CNDev is not initialized: call cndevInit first")


def _device(device, arg: str = "device"):
    _require_init()
    return devices.get(as_int(device, arg), arg)


@api("cndevInit")
def init(reserved: int) -> None:
    """cndevInit(int reserved): initialise CNDev for this process (CNDEV_ERROR_NO_DEVICES without a device)."""
    global _initialized
    as_int(reserved, "reserved")
    if not devices.devices():
        raise CndevError(CNDEV_ERROR_NO_DEVICES, "cndevInit: the simulator has no device")
    with _state:
        _initialized = True


@api("cndevRelease")
def release() -> None:
    """cndevRelease(void): end CNDev's use; queries need cndevInit again."""
    global _initialized
    with _state:
        _require_init()
        _initialized = False


@dataclass(frozen=True)
class cndevCardInfo_t:
    number: int


@api("cndevGetDeviceCount")
def getDeviceCount() -> cndevCardInfo_t:
    """cndevGetDeviceCount(cndevCardInfo_t *cardNum) -> cardNum (its `number` field)."""
    _require_init()
    return cndevCardInfo_t(number=len(devices.devices()))


@api("cndevGetDeviceHandleByIndex")
def getDeviceHandleByIndex(index: int) -> int:
    """cndevGetDeviceHandleByIndex(int index, cndevDevice_t *handle) -> handle (the ordinal)."""
    return _device(index, "index").index


@dataclass(frozen=True)
class cndevCardName_t:
    id: int


def _card_type(device) -> int:
    family = device.spec.name.split("-")[0]
    return globals().get(f"CNDEV_DEVICE_TYPE_{family}", -1)


@api("cndevGetCardName")
def getCardName(device: int) -> cndevCardName_t:
    """cndevGetCardName(cndevCardName_t *cardName, cndevDevice_t device) -> cardName (its cndevNameEnum_t `id`)."""
    return cndevCardName_t(id=_card_type(_device(device)))


@api("cndevGetCardNameString")
def getCardNameString(cardName: int) -> str:
    """cndevGetCardNameString(cndevNameEnum_t cardName) -> the card family's name ("MLU370"); "Unknown" else."""
    return CARD_NAMES.get(as_int(cardName, "cardName"), "Unknown")


@api("cndevGetCardNameStringByDevId")
def getCardNameStringByDevId(device: int) -> str:
    """cndevGetCardNameStringByDevId(cndevDevice_t device) -> the simulated board's name ("MLU370-X4")."""
    return _device(device).spec.name


@dataclass(frozen=True)
class cndevMemoryInfoV2_t:
    physicalMemoryTotal: int
    physicalMemoryUsed: int
    reservedMemory: int
    virtualMemoryTotal: int
    virtualMemoryUsed: int
    globalMemory: int


@api("cndevGetMemoryUsageV2")
def getMemoryUsageV2(device: int) -> cndevMemoryInfoV2_t:
    """cndevGetMemoryUsageV2(cndevMemoryInfoV2_t *memInfo, cndevDevice_t device) -> memInfo, in MB: the simulated
    GDRAM's size and what this process has allocated (the simulator maps no other memory: virtual = physical)."""
    free, total = _device(device).memory.info()
    used = (total - free + _MB - 1) // _MB
    return cndevMemoryInfoV2_t(physicalMemoryTotal=total // _MB, physicalMemoryUsed=used, reservedMemory=0,
                               virtualMemoryTotal=total // _MB, virtualMemoryUsed=used, globalMemory=0)


@dataclass(frozen=True)
class cndevCardCoreCount_t:
    count: int


@dataclass(frozen=True)
class cndevCardClusterCount_t:
    count: int


@api("cndevGetCoreCount")
def getCoreCount(device: int) -> cndevCardCoreCount_t:
    """cndevGetCoreCount(cndevCardCoreCount_t *cardCoreCount, cndevDevice_t device) -> its `count`: MLU cores."""
    spec = _device(device).spec
    return cndevCardCoreCount_t(count=spec.cluster_count * spec.cores_per_cluster)


@api("cndevGetClusterCount")
def getClusterCount(device: int) -> cndevCardClusterCount_t:
    """cndevGetClusterCount(cndevCardClusterCount_t *clusCount, cndevDevice_t device) -> its `count`."""
    return cndevCardClusterCount_t(count=_device(device).spec.cluster_count)


@dataclass(frozen=True)
class cndevUUID_t:
    uuid: bytes  # the 36-character text form (the C field's 37th byte is its NUL)
    ncsUUID64: int


@api("cndevGetUUID")
def getUUID(device: int) -> cndevUUID_t:
    """cndevGetUUID(cndevUUID_t *uuidInfo, cndevDevice_t device) -> uuidInfo: the device's UUID (the one
    cnrtGetDeviceProperties reports) as text, and its first 8 bytes as ncsUUID64."""
    raw = cnrt.getDeviceProperties(_device(device).index).uuid
    return cndevUUID_t(uuid=str(_uuid.UUID(bytes=raw)).encode(), ncsUUID64=int.from_bytes(raw[:8], "big"))


@dataclass(frozen=True)
class cndevPCIeInfoV2_t:
    vendor: int
    domain: int
    bus: int
    device: int
    function: int


@api("cndevGetPCIeInfoV2")
def getPCIeInfoV2(device: int) -> cndevPCIeInfoV2_t:
    """cndevGetPCIeInfoV2(cndevPCIeInfoV2_t *deviceInfo, cndevDevice_t device) -> the simulated PCIe location
    (Cambricon's vendor ID; domain, bus and device as cnrtDeviceGetAttribute reports them; function 0)."""
    index = _device(device).index
    attribute = cnrt.deviceGetAttribute
    return cndevPCIeInfoV2_t(vendor=PCI_VENDOR_CAMBRICON,
                             domain=attribute(cnrt_constants.cnrtAttrPciDomainID, index),
                             bus=attribute(cnrt_constants.cnrtAttrPciBusID, index),
                             device=attribute(cnrt_constants.cnrtAttrPciDeviceID, index), function=0)


@dataclass(frozen=True)
class cndevLibVersionInfo_t:
    libMajorVersion: int
    libMinorVersion: int
    libBuildVersion: int


@api("cndevGetLibVersion")
def getLibVersion() -> cndevLibVersionInfo_t:
    """cndevGetLibVersion(cndevLibVersionInfo_t *libVerInfo) -> the CNDev library's version (mlusim's choice)."""
    major, minor, build = LIB_VERSION
    return cndevLibVersionInfo_t(libMajorVersion=major, libMinorVersion=minor, libBuildVersion=build)


@dataclass(frozen=True)
class cndevVersionInfo_t:
    driverMajorVersion: int
    driverMinorVersion: int
    driverBuildVersion: int


@api("cndevGetVersionInfo")
def getVersionInfo(device: int) -> cndevVersionInfo_t:
    """cndevGetVersionInfo(cndevVersionInfo_t *versInfo, cndevDevice_t device) -> the simulated driver's version
    (cnrtDriverGetVersion's); the board has no MCU firmware, its fields are 0."""
    _device(device)
    major, minor, build = cnrt.driverGetVersion()
    return cndevVersionInfo_t(driverMajorVersion=major, driverMinorVersion=minor, driverBuildVersion=build)
