"""CNDrv initialisation, versions and device queries (cnInit, cnDeviceGet, cnDeviceGetCount, cnDeviceGetName,
cnDeviceGetAttribute, cnDeviceTotalMem, ...) over the simulated devices.

A CNdev handle is the device ordinal (what cnDeviceGet returns for it). Device attributes are CNRT's: the
CN_DEVICE_ATTRIBUTE_* values declared in cn_api.h are the cnrtDeviceAttr_t values cnrtDeviceGetAttribute answers.
"""
from __future__ import annotations

import uuid as _uuid

import cnrt
from mlusim import device as devices
from mlusim.errors import ArgumentFault
from mlusim.validate import as_int

from .status import CN_ERROR_NO_DEVICE, CndrvError, api, mark_initialized, require_init, runtime_errors

#: CNdevice_attribute: the attributes cnDeviceGetAttribute answers (cnrtDeviceAttr_t's values)
DEVICE_ATTRIBUTES = {
    "CN_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR": 0x01, "CN_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR": 0x02,
    "CN_DEVICE_ATTRIBUTE_SPARSE_COMPUTING_SUPPORTED": 0x03, "CN_DEVICE_ATTRIBUTE_FP16_COMPUTING_SUPPORTED": 0x04,
    "CN_DEVICE_ATTRIBUTE_INT4_COMPUTING_SUPPORTED": 0x05, "CN_DEVICE_ATTRIBUTE_INT8_COMPUTING_SUPPORTED": 0x06,
    "CN_DEVICE_ATTRIBUTE_BF16_COMPUTING_SUPPORTED": 0x07, "CN_DEVICE_ATTRIBUTE_TF32_COMPUTING_SUPPORTED": 0x08,
    "CN_DEVICE_ATTRIBUTE_COMPUTE_MODE": 0x09, "CN_DEVICE_ATTRIBUTE_MAX_QUEUE_COUNT": 0x101,
    "CN_DEVICE_ATTRIBUTE_MAX_NOTIFIER_COUNT": 0x102, "CN_DEVICE_ATTRIBUTE_QUEUE_PRIORITIES_SUPPORTED": 0x103,
    "CN_DEVICE_ATTRIBUTE_MAX_BLOCK_TASK_DIM_X": 0x201, "CN_DEVICE_ATTRIBUTE_MAX_BLOCK_TASK_DIM_Y": 0x202,
    "CN_DEVICE_ATTRIBUTE_MAX_BLOCK_TASK_DIM_Z": 0x203, "CN_DEVICE_ATTRIBUTE_MAX_CLUSTER_COUNT_PER_UNION_TASK": 0x204,
    "CN_DEVICE_ATTRIBUTE_MAX_CLUSTER_COUNT": 0x205, "CN_DEVICE_ATTRIBUTE_MAX_CORE_COUNT_PER_CLUSTER": 0x206,
    "CN_DEVICE_ATTRIBUTE_MLU_ISA_VERSION": 0x20a, "CN_DEVICE_ATTRIBUTE_MAX_L2_CACHE_SIZE": 0x301,
    "CN_DEVICE_ATTRIBUTE_NRAM_SIZE_PER_CORE": 0x302, "CN_DEVICE_ATTRIBUTE_WEIGHT_RAM_SIZE_PER_CORE": 0x303,
    "CN_DEVICE_ATTRIBUTE_LOCAL_MEMORY_SIZE_PER_CORE": 0x305,
    "CN_DEVICE_ATTRIBUTE_MAX_SHARED_RAM_SIZE_PER_CLUSTER": 0x306,
    "CN_DEVICE_ATTRIBUTE_AVAILABLE_GLOBAL_MEMORY_SIZE": 0x312, "CN_DEVICE_ATTRIBUTE_ECC_ENABLED": 0x401,
    "CN_DEVICE_ATTRIBUTE_CLUSTER_CLOCK_RATE": 0x402, "CN_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE": 0x403,
    "CN_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH": 0x404, "CN_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_TOTAL_SIZE": 0x405,
    "CN_DEVICE_ATTRIBUTE_PCI_BUS_ID": 0x406, "CN_DEVICE_ATTRIBUTE_PCI_DEVICE_ID": 0x407,
    "CN_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID": 0x408,
}

#: answered by CNDrv itself (cnrtDeviceAttr_t has no such attribute)
CN_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 0x309

#: CN_MAJOR_VERSION, CN_MINOR_VERSION, CN_PATCH_VERSION of mlusim's cn_api.h (the CNDrv it mirrors)
LIB_VERSION = (2, 15, 5)


def device_arg(dev, arg: str = "dev"):
    """The simulated device a CNdev names (CN_ERROR_INVALID_DEVICE for another value); needs the driver up."""
    require_init()
    return devices.get(as_int(dev, arg), arg)


@api("cnInit")
def init(flags: int) -> None:
    """cnInit(unsigned int flags): initialise CNDrv; `flags` must be 0. CN_ERROR_NO_DEVICE without a device."""
    if as_int(flags, "flags") != 0:
        raise ArgumentFault(f"flags must be 0, got {flags}", "flags")
    if not devices.devices():
        raise CndrvError(CN_ERROR_NO_DEVICE, "cnInit: the simulator has no device")
    mark_initialized()


@api("cnGetLibVersion")
def getLibVersion() -> tuple[int, int, int]:
    """cnGetLibVersion(int *major, int *minor, int *patch): the CNDrv version of mlusim's cn_api.h."""
    return LIB_VERSION


@api("cnDriverGetVersion")
def driverGetVersion() -> tuple[int, int, int]:
    """cnDriverGetVersion(int *major, int *minor, int *patch): the latest CNDrv the driver supports (this one)."""
    require_init()
    return LIB_VERSION


@api("cnGetDriverVersion")
def getDriverVersion() -> tuple[int, int, int]:
    """cnGetDriverVersion(int *major, int *minor, int *patch): the simulated MLU driver's version (CNRT's)."""
    require_init()
    return cnrt.driverGetVersion()


@api("cnDeviceGetCount")
def deviceGetCount() -> int:
    """cnDeviceGetCount(int *pcount) -> the number of simulated devices."""
    require_init()
    return len(devices.devices())


@api("cnDeviceGet")
def deviceGet(ordinal: int) -> int:
    """cnDeviceGet(CNdev *pdev, int ordinal) -> the device handle of an ordinal in [0, count)."""
    return device_arg(ordinal, "ordinal").index


@api("cnDeviceGetName")
def deviceGetName(dev: int) -> str:
    """cnDeviceGetName(char *name, unsigned int len, CNdev dev) -> the simulated board's name ("MLU370-X4"); a
    name longer than len - 1 is CN_ERROR_INVALID_VALUE."""
    return device_arg(dev).spec.name


@api("cnDeviceTotalMem")
def deviceTotalMem(dev: int) -> int:
    """cnDeviceTotalMem(cn_uint64_t *pbytes, CNdev dev) -> the device's memory in bytes."""
    return device_arg(dev).memory.info()[1]


@api("cnDeviceGetAttribute")
def deviceGetAttribute(attrib: int, dev: int) -> int:
    """cnDeviceGetAttribute(int *pi, CNdevice_attribute attrib, CNdev dev) -> the value cnrtDeviceGetAttribute
    gives for the same attribute."""
    index = device_arg(dev).index
    key = as_int(attrib, "attrib")
    if key == CN_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE:
        return 0  # the simulated boards model no persisting L2 cache lines
    return runtime_errors(cnrt.deviceGetAttribute, key, index, names={"attr": "attrib"})


@api("cnDeviceGetUuidStr")
def deviceGetUuidStr(dev: int) -> str:
    """cnDeviceGetUuidStr(char *uuid_str, int len, CNdev dev) -> the 36-character UUID (cnrtGetDeviceProperties')."""
    raw = runtime_errors(cnrt.getDeviceProperties, device_arg(dev).index).uuid
    return str(_uuid.UUID(bytes=raw))


@api("cnDeviceGetPCIBusId")
def deviceGetPCIBusId(dev: int) -> str:
    """cnDeviceGetPCIBusId(char *pciBusId, int len, CNdev dev) -> "domain:bus:device.function" in hexadecimal."""
    return runtime_errors(cnrt.deviceGetPCIBusId, device_arg(dev).index)
