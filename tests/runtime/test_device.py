"""Device management: count, per-thread current device, attributes, properties, sync, reset, versions."""
import threading

import numpy as np

import cnrt
from mlusim import arch
from mlusim import device as devices

from .conftest import SMALL_MEMORY
from .helpers import raises_code, upload

ATTRIBUTES = {name: value for name, value in vars(cnrt).items() if name.startswith("cnrtAttr")}


def test_device_count_and_per_thread_current_device(two_devices):
    assert cnrt.getDeviceCount() == 2
    cnrt.setDevice(1)
    assert cnrt.getDevice() == 1
    seen = []
    thread = threading.Thread(target=lambda: seen.append(cnrt.getDevice()))
    thread.start()
    thread.join()
    assert seen == [0], "a new host thread starts on device 0"
    pointer = cnrt.malloc(64)
    assert cnrt.pointerGetAttributes(pointer).device == 1
    error = raises_code(cnrt.cnrtErrorDeviceInvalid, cnrt.setDevice, 2)
    assert "'device'" in str(error) and "0..1" in str(error)
    raises_code(cnrt.cnrtErrorDeviceInvalid, cnrt.setDevice, -1)
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.setDevice, "0")


def test_every_reference_attribute_is_answered():
    assert len(ATTRIBUTES) == 33
    for name, attribute in ATTRIBUTES.items():
        value = cnrt.deviceGetAttribute(attribute, 0)
        assert isinstance(value, int), name


def test_attribute_values_follow_the_board():
    spec = arch.board("MLU370-X4")
    get = lambda attribute: cnrt.deviceGetAttribute(attribute, 0)  # noqa: E731
    assert get(cnrt.cnrtAttrClusterCount) == spec.cluster_count == 8
    assert get(cnrt.cnrtAttrMcorePerCluster) == 4
    assert get(cnrt.cnrtAttrNramSizePerMcore) == 768 * 1024
    assert get(cnrt.cnrtAttrWramSizePerMcore) == 1024 * 1024
    assert get(cnrt.cnrtAttrSramSizePerMcore) == 4 * 2**20
    assert get(cnrt.cnrtAttrMaxClusterCountPerUnionTask) == 8
    assert (get(cnrt.cnrtAttrComputeCapabilityMajor), get(cnrt.cnrtAttrComputeCapabilityMinor)) == (3, 0)
    assert get(cnrt.cnrtAttrBF16ComputingSupported) == 1
    assert get(cnrt.cnrtAttrIpuClockRate) == 1_000_000
    assert get(cnrt.cnrtAttrGmemBusWidth) == 384
    assert get(cnrt.cnrtAttrISAVersion) == 372
    assert get(cnrt.cnrtAttrTotalMemSize) == SMALL_MEMORY // 2**20
    before = get(cnrt.cnrtAttrAvailableGlobalMemorySize)
    cnrt.malloc(8 << 20)
    assert get(cnrt.cnrtAttrAvailableGlobalMemorySize) < before
    devices.configure(arch="MLU270-S4", memory=SMALL_MEMORY)
    assert get(cnrt.cnrtAttrBF16ComputingSupported) == 0
    assert get(cnrt.cnrtAttrClusterCount) == 4


def test_bad_attribute_and_device():
    assert "'attr'" in str(raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.deviceGetAttribute, 0x999, 0))
    raises_code(cnrt.cnrtErrorDeviceInvalid, cnrt.deviceGetAttribute, cnrt.cnrtAttrClusterCount, 3)


def test_properties_mirror_the_attributes():
    properties = cnrt.getDeviceProperties(0)
    assert properties.name == "MLU370-X4"
    assert properties.clusterCount == 8 and properties.McorePerCluster == 4
    assert (properties.major, properties.minor) == (3, 0)
    assert properties.totalMem == SMALL_MEMORY // 2**20
    assert properties.maxDim == tuple(cnrt.deviceGetAttribute(a, 0) for a in
                                      (cnrt.cnrtAttrMaxDimX, cnrt.cnrtAttrMaxDimY, cnrt.cnrtAttrMaxDimZ))
    assert len(properties.uuid) == 16
    assert cnrt.cnrtGetDeviceProperties_V3 is cnrt.getDeviceProperties


def test_sync_device_waits_for_every_queue():
    queues = [cnrt.queueCreate() for _ in range(3)]
    done = []
    for index, queue in enumerate(queues):
        cnrt.invokeHostFunc(queue, lambda i: (threading.Event().wait(0.02), done.append(i)), index)
    cnrt.syncDevice()
    assert sorted(done) == [0, 1, 2]


def test_reset_frees_memory_and_destroys_queues():
    pointer = upload(np.arange(10, dtype=np.float32))
    queue = cnrt.queueCreate()
    cnrt.deviceReset()
    assert cnrt.memGetInfo() == (SMALL_MEMORY, SMALL_MEMORY)
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memset, pointer, 0, 4)
    raises_code(cnrt.cnrtErrorInvalidResourceHandle, cnrt.queueSync, queue)
    cnrt.memset(cnrt.malloc(16), 0, 16)  # the device works after the reset


def test_versions_and_peers(two_devices):
    major, minor, patch = cnrt.getLibVersion()
    assert major >= 6 and minor >= 0 and patch >= 0
    assert len(cnrt.driverGetVersion()) == 3
    assert cnrt.getPeerAccessibility(0, 1) == 1
    assert cnrt.getPeerAccessibility(1, 1) == 0
    raises_code(cnrt.cnrtErrorDeviceInvalid, cnrt.getPeerAccessibility, 0, 7)


def test_v4_device_calls():
    cnrt.init(0)
    handle = cnrt.getDeviceHandle(0)
    cnrt.setCurrentDevice(handle)
    assert cnrt.getDevice() == 0
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.init, 1)
    cnrt.destroy()


def test_device_flags():
    cnrt.setDeviceFlag(cnrt.cnrtDeviceScheduleBlock)
    assert cnrt.getDeviceFlag() == cnrt.cnrtDeviceScheduleBlock
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.setDeviceFlag, 9)
