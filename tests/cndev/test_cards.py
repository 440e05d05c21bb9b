"""cndev from Python: the CNDev queries agree with cnrt on the simulated boards, need cndevInit, and bad calls raise
CndevError with the CNDev status."""
import threading
import uuid

import pytest

import cndev
import cnrt
from mlusim import device as devices


@pytest.fixture(autouse=True)
def initialised():
    devices.configure(memory=64 << 20, device_count=2, arch="MLU590-M9")
    cndev.init(0)
    yield
    if cndev.cards._initialized:
        cndev.release()
    devices.configure()


def test_queries_need_init():
    cndev.release()
    for call in (cndev.getDeviceCount, lambda: cndev.getCardName(0), lambda: cndev.getCoreCount(0), cndev.release):
        with pytest.raises(cndev.CndevError) as error:
            call()
        assert error.value.code == cndev.CNDEV_ERROR_UNINITIALIZED
    assert cndev.getLibVersion().libMajorVersion == cndev.LIB_VERSION[0]  # needs no init
    assert cndev.getErrorString(cndev.CNDEV_ERROR_UNINITIALIZED).startswith("CNDev is not initialized")


def test_answers_match_cnrt():
    assert cndev.getDeviceCount().number == cnrt.getDeviceCount() == 2
    for device in range(2):
        props = cnrt.getDeviceProperties(device)
        assert cndev.getDeviceHandleByIndex(device) == device
        assert cndev.getCardNameStringByDevId(device) == props.name == "MLU590-M9"
        assert cndev.getCardName(device).id == cndev.CNDEV_DEVICE_TYPE_MLU590
        assert cndev.getCardNameString(cndev.CNDEV_DEVICE_TYPE_MLU590) == "MLU590"
        assert cndev.getClusterCount(device).count == props.clusterCount
        assert cndev.getCoreCount(device).count == props.clusterCount * props.McorePerCluster
        assert cndev.getUUID(device).uuid.decode() == str(uuid.UUID(bytes=props.uuid))
        assert cndev.getPCIeInfoV2(device).bus == props.pciBusID
        assert cndev.getMemoryUsageV2(device).physicalMemoryTotal == props.totalMem
    assert cndev.getUUID(0).uuid != cndev.getUUID(1).uuid
    assert (cndev.getVersionInfo(1).driverMajorVersion, cndev.getVersionInfo(1).driverMinorVersion,
            cndev.getVersionInfo(1).driverBuildVersion) == cnrt.driverGetVersion()


def test_memory_usage_follows_allocations_per_device():
    before = [cndev.getMemoryUsageV2(d).physicalMemoryUsed for d in range(2)]
    cnrt.setDevice(1)
    block = cnrt.malloc(5 << 20)
    after = [cndev.getMemoryUsageV2(d).physicalMemoryUsed for d in range(2)]
    assert after[0] == before[0] and after[1] >= before[1] + 5
    cnrt.free(block)
    cnrt.setDevice(0)
    assert cndev.getMemoryUsageV2(1).physicalMemoryUsed == before[1]


@pytest.mark.parametrize("device, code", [(2, "CNDEV_ERROR_INVALID_DEVICE_ID"), (-1, "CNDEV_ERROR_INVALID_DEVICE_ID"),
                                          (2 ** 63, "CNDEV_ERROR_INVALID_DEVICE_ID"),
                                          ("0", "CNDEV_ERROR_INVALID_ARGUMENT"),
                                          (None, "CNDEV_ERROR_INVALID_ARGUMENT")])
def test_bad_devices(device, code):
    for call in (cndev.getCardName, cndev.getCoreCount, cndev.getMemoryUsageV2, cndev.getUUID,
                 cndev.getDeviceHandleByIndex):
        with pytest.raises(cndev.CndevError) as error:
            call(device)
        assert error.value.code == getattr(cndev, code)
    assert cndev.getLastError() == getattr(cndev, code)


def test_last_error_is_per_thread():
    with pytest.raises(cndev.CndevError):
        cndev.getCardName(7)
    seen = []
    worker = threading.Thread(target=lambda: seen.append(cndev.getLastError()))
    worker.start()
    worker.join()
    assert seen == [cndev.CNDEV_SUCCESS] and cndev.getLastError() == cndev.CNDEV_ERROR_INVALID_DEVICE_ID


def test_unknown_names_and_statuses():
    assert cndev.getCardNameString(999) == "Unknown"
    assert cndev.getErrorString(999) == "Cndev_ERROR not found!"
    with pytest.raises(cndev.CndevError) as error:
        cndev.init("zero")
    assert error.value.code == cndev.CNDEV_ERROR_INVALID_ARGUMENT


def test_board_figures_follow_the_catalog():
    """cndevGetDDRInfo / cndevGetFrequencyInfo / cndevGetDeviceMaxPerformance from the board's catalog entry."""
    from mlusim import device as devices
    cndev.init(0)
    try:
        spec = devices.get(0).spec
        ddr = cndev.getDDRInfo(0)
        assert ddr.dataWidth == spec.bus_width_bits
        assert abs(ddr.bandWidth + ddr.bandWidthDecimal / 100 - spec.gdram_bandwidth / 1e9) < 0.006
        frequency = cndev.getFrequencyInfo(0)
        assert frequency.boardFreq == round(spec.clock_hz / 1e6) == frequency.boardFreqArange[1]
        assert frequency.mluClusterFreq[:spec.cluster_count] == (frequency.boardFreq,) * spec.cluster_count
        peak = cndev.getDeviceMaxPerformance(0)
        assert (peak.int8Tensor, peak.fp16Tensor, peak.fp32Tensor) == (
            spec.macs_per_cycle["int8"], spec.macs_per_cycle["half"], spec.macs_per_cycle["float"])
        with pytest.raises(cndev.CndevError) as error:
            cndev.getDDRInfo(99)
        assert error.value.code == cndev.CNDEV_ERROR_INVALID_DEVICE_ID
    finally:
        cndev.release()
