"""Device management: the per-thread current device, attributes, properties, sync and reset."""
from __future__ import annotations

import threading
import uuid as _uuid
from dataclasses import dataclass

from mlusim import device as devices
from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum, as_int

from . import constants as C
from .errors import api

_local = threading.local()

#: The library version this clone reports (the newest public cnrt.h it follows).
LIB_VERSION = (6, 14, 1)
DRIVER_VERSION = (5, 10, 22)


current_index = devices.current_index  # the thread's current device lives in the device table (mlusim.device)
current_device = devices.current


def device_arg(value, arg: str = "device"):
    """The Device for a device-ordinal argument."""
    return devices.get(as_int(value, arg), arg)


@api("cnrtGetDeviceCount")
def getDeviceCount() -> int:
    """cnrtGetDeviceCount: the number of simulated devices."""
    return len(devices.devices())


@api("cnrtSetDevice", "cnrtSetCurrentDevice")
def setDevice(device: int) -> None:
    """cnrtSetDevice: make `device` this host thread's current device (v4 cnrtSetCurrentDevice takes the handle)."""
    devices.set_current(device_arg(device).index)


@api("cnrtGetDevice")
def getDevice() -> int:
    """cnrtGetDevice: this host thread's current device."""
    return current_index()


@api("cnrtGetDeviceHandle")
def getDeviceHandle(ordinal: int) -> int:
    """cnrtGetDeviceHandle (v4): the handle of device `ordinal` (the ordinal itself here)."""
    return device_arg(ordinal, "ordinal").index


@api("cnrtInit")
def init(flags: int = 0) -> None:
    """cnrtInit (v4): initialise the runtime. `flags` must be 0."""
    as_enum(flags, "flags", (0,), "init flag")
    devices.devices()


@api("cnrtDestroy")
def destroy() -> None:
    """cnrtDestroy (v4): wait for all devices' work. Allocations stay valid, as in the v6 runtime."""
    for device in devices.devices():
        device.wait_idle()


@api("cnrtSetDeviceFlag")
def setDeviceFlag(flags: int) -> None:
    """cnrtSetDeviceFlag: the host's wait policy. Accepted and recorded; host waits here always block."""
    _local.flags = as_enum(flags, "flags", (0, 1, 2, 3), "device schedule flag")


@api("cnrtGetDeviceFlag")
def getDeviceFlag() -> int:
    """cnrtGetDeviceFlag: the flag set by setDeviceFlag (default cnrtDeviceScheduleAuto)."""
    return getattr(_local, "flags", C.cnrtDeviceScheduleAuto)


def _attribute_table(device) -> dict[int, int]:
    spec = device.spec
    free, total = device.memory.info()
    return {
        C.cnrtAttrComputeCapabilityMajor: spec.compute_capability[0],
        C.cnrtAttrComputeCapabilityMinor: spec.compute_capability[1],
        C.cnrtAttrSparseComputingSupported: int(spec.sparse_supported),
        C.cnrtAttrFP16ComputingSupported: int(spec.supports("half")),
        C.cnrtAttrINT4ComputingSupported: int(spec.int4_supported),
        C.cnrtAttrINT8ComputingSupported: int(spec.supports("int8")),
        C.cnrtAttrBF16ComputingSupported: int(spec.supports("bfloat16")),
        C.cnrtAttrTF32ComputingSupported: int(spec.tf32_supported),
        C.cnrtAttrComputeMode: 0,
        C.cnrtAttrQueueSize: C.MAX_QUEUES,
        C.cnrtAttrNotifierSize: C.MAX_NOTIFIERS,
        C.cnrtAttrSupportQueuePriorities: 1,
        C.cnrtAttrMaxDimX: C.MAX_DIM[0],
        C.cnrtAttrMaxDimY: C.MAX_DIM[1],
        C.cnrtAttrMaxDimZ: C.MAX_DIM[2],
        C.cnrtAttrMaxClusterCountPerUnionTask: spec.max_union,
        C.cnrtAttrClusterCount: spec.cluster_count,
        C.cnrtAttrMcorePerCluster: spec.cores_per_cluster,
        C.cnrtAttrISAVersion: spec.isa,
        C.cnrtAttrMaxL2CacheSize: spec.l2_bytes,
        C.cnrtAttrNramSizePerMcore: spec.nram_bytes,
        C.cnrtAttrWramSizePerMcore: spec.wram_bytes,
        C.cnrtAttrLmemSizePerMcore: spec.ldram_bytes_per_core,
        C.cnrtAttrSramSizePerMcore: spec.sram_bytes,
        C.cnrtAttrAvailableGlobalMemorySize: free // 2**20,
        C.cnrtAttrEccEnable: 0,
        C.cnrtAttrIpuClockRate: int(spec.clock_hz // 1000),
        C.cnrtAttrMemClockRate: int(spec.mem_clock_hz // 1000),
        C.cnrtAttrGmemBusWidth: spec.bus_width_bits,
        C.cnrtAttrTotalMemSize: total // 2**20,
        C.cnrtAttrPciBusID: device.physical + 1,  # the card's own slot, whatever ordinal the process gives it
        C.cnrtAttrPciDeviceID: 0,
        C.cnrtAttrPciDomainID: 0,
    }


@api("cnrtDeviceGetAttribute")
def deviceGetAttribute(attr: int, device: int) -> int:
    """cnrtDeviceGetAttribute(int *value, cnrtDeviceAttr_t attr, int device) -> value."""
    target = device_arg(device)
    table = _attribute_table(target)
    key = as_int(attr, "attr")
    if key not in table:
        raise ArgumentFault(f"0x{key:x} is not a cnrtDeviceAttr_t", "attr")
    return table[key]


@dataclass(frozen=True)
class cnrtDeviceProp_t:
    """The fields of cnrtDeviceProp_t (sizes as the C struct: totalMem in MB, rates in kHz, on-chip sizes in bytes)."""

    name: str
    totalMem: int
    maxDim: tuple
    ipuClockRate: int
    memClockRate: int
    major: int
    minor: int
    clusterCount: int
    McorePerCluster: int
    NramSizePerMcore: int
    WramSizePerMcore: int
    SramSizePerMcore: int
    LmemSizePerMcore: int
    MaxL2CacheSize: int
    GmemBusWidth: int
    pciBusID: int
    pciDeviceID: int
    pciDomainID: int
    uuid: bytes
    totalGlobalMemSize: int


@api("cnrtGetDeviceProperties", "cnrtGetDeviceProperties_V3")
def getDeviceProperties(device: int) -> cnrtDeviceProp_t:
    """cnrtGetDeviceProperties(cnrtDeviceProp_t *prop, int device) -> prop."""
    target = device_arg(device)
    a = _attribute_table(target)
    return cnrtDeviceProp_t(
        name=target.spec.name, totalMem=a[C.cnrtAttrTotalMemSize],
        maxDim=(a[C.cnrtAttrMaxDimX], a[C.cnrtAttrMaxDimY], a[C.cnrtAttrMaxDimZ]),
        ipuClockRate=a[C.cnrtAttrIpuClockRate], memClockRate=a[C.cnrtAttrMemClockRate],
        major=a[C.cnrtAttrComputeCapabilityMajor], minor=a[C.cnrtAttrComputeCapabilityMinor],
        clusterCount=a[C.cnrtAttrClusterCount], McorePerCluster=a[C.cnrtAttrMcorePerCluster],
        NramSizePerMcore=a[C.cnrtAttrNramSizePerMcore], WramSizePerMcore=a[C.cnrtAttrWramSizePerMcore],
        SramSizePerMcore=a[C.cnrtAttrSramSizePerMcore], LmemSizePerMcore=a[C.cnrtAttrLmemSizePerMcore],
        MaxL2CacheSize=a[C.cnrtAttrMaxL2CacheSize], GmemBusWidth=a[C.cnrtAttrGmemBusWidth],
        pciBusID=a[C.cnrtAttrPciBusID], pciDeviceID=a[C.cnrtAttrPciDeviceID], pciDomainID=a[C.cnrtAttrPciDomainID],
        uuid=_uuid.uuid5(_uuid.NAMESPACE_URL, f"mlusim/{target.spec.name}/{target.physical}").bytes,
        totalGlobalMemSize=target.memory.capacity,
    )


def pci_bus_id(device) -> str:
    """A device's PCI bus id as "domain:bus:device.function" in hexadecimal (CNRT's and CNDrv's spelling)."""
    a = _attribute_table(device)
    return f"{a[C.cnrtAttrPciDomainID]:04x}:{a[C.cnrtAttrPciBusID]:02x}:{a[C.cnrtAttrPciDeviceID]:02x}.0"


@api("cnrtDeviceGetPCIBusId")
def deviceGetPCIBusId(device: int) -> str:
    """cnrtDeviceGetPCIBusId(char *pciBusId, int len, int device) -> the bus id, e.g. "0000:01:00.0" (a `len` too
    short for it and its NUL is cnrtErrorArgsInvalid)."""
    return pci_bus_id(device_arg(device))


@api("cnrtSyncDevice")
def syncDevice() -> None:
    """cnrtSyncDevice: wait for all work of the current device; raises its sticky error."""
    current_device().synchronize()


@api("cnrtDeviceReset")
def deviceReset() -> None:
    """cnrtDeviceReset: drain and destroy the current device's queues, free its memory, clear its errors."""
    current_device().reset()


@api("cnrtGetLibVersion")
def getLibVersion() -> tuple[int, int, int]:
    """cnrtGetLibVersion(int *major, int *minor, int *patch)."""
    return LIB_VERSION


@api("cnrtDriverGetVersion")
def driverGetVersion() -> tuple[int, int, int]:
    """cnrtDriverGetVersion(int *major, int *minor, int *patch): the simulated driver's version."""
    return DRIVER_VERSION


@api("cnrtGetPeerAccessibility")
def getPeerAccessibility(device: int, peer: int) -> int:
    """cnrtGetPeerAccessibility(unsigned *can, int device, int peer): 1 between two different simulated devices
    (they all reach each other), 0 for a device and itself."""
    first = device_arg(device, "device")
    second = device_arg(peer, "peer")
    return int(first is not second)
