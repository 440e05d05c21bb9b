"""cndrv from Python: CNDrv's devices, contexts and memory over the simulator's CNRT state, and the CNresult of
bad calls."""
import subprocess
import sys
import threading

import numpy as np
import pytest

import cndrv
import cnrt
from cndrv import contexts
from mlusim import device as devices


@pytest.fixture(autouse=True)
def two_devices():
    devices.configure(memory=64 << 20, device_count=2)
    cndrv.init(0)
    yield
    contexts._local.__dict__.clear()  # this thread follows its CNRT device again
    cnrt.setDevice(0)
    devices.configure()


def _code(call, *args) -> int:
    with pytest.raises(cndrv.CndrvError) as error:
        call(*args)
    return error.value.code


def test_devices_match_cnrt():
    assert cndrv.deviceGetCount() == 2
    for ordinal in range(2):
        dev = cndrv.deviceGet(ordinal)
        assert cndrv.deviceGetName(dev) == cnrt.getDeviceProperties(ordinal).name
        assert cndrv.deviceTotalMem(dev) == 64 << 20
        assert cndrv.deviceGetAttribute(cndrv.CN_DEVICE_ATTRIBUTE_MAX_CLUSTER_COUNT, dev) == cnrt.getDeviceProperties(
            ordinal).clusterCount
    assert cndrv.deviceGetPCIBusId(0) != cndrv.deviceGetPCIBusId(1)
    assert cndrv.getDriverVersion() == cnrt.driverGetVersion()
    assert cndrv.getLibVersion() == (cndrv.CN_MAJOR_VERSION, cndrv.CN_MINOR_VERSION, cndrv.CN_PATCH_VERSION)


@pytest.mark.parametrize("value, code", [(2, "CN_ERROR_INVALID_DEVICE"), (-1, "CN_ERROR_INVALID_DEVICE"),
                                         (2 ** 64, "CN_ERROR_INVALID_DEVICE"), (1.0, "CN_ERROR_INVALID_VALUE")])
def test_bad_devices(value, code):
    for call in (cndrv.deviceGet, cndrv.deviceGetName, cndrv.deviceTotalMem, cndrv.sharedContextAcquire,
                 lambda dev: cndrv.deviceGetAttribute(0x205, dev), lambda dev: cndrv.ctxCreate(0, dev)):
        assert _code(call, value) == getattr(cndrv, code)


def test_the_current_context_follows_cnrt_and_sets_it():
    cnrt.setDevice(1)
    shared1 = cndrv.ctxGetCurrent()
    assert shared1.device == 1 and shared1.shared and cndrv.ctxGetDevice() == 1
    assert cndrv.sharedContextAcquire(1) is shared1
    cndrv.sharedContextRelease(1)
    assert _code(cndrv.sharedContextRelease, 1) == cndrv.CN_CONTEXT_ERROR_INVALID
    cndrv.ctxSetCurrent(cndrv.sharedContextAcquire(0))
    assert cnrt.getDevice() == 0  # binding a context moves CNRT too
    address = cndrv.malloc(256)
    assert devices.owner_of(address).index == 0
    cndrv.free(address)


def test_contexts_are_per_thread():
    created = cndrv.ctxCreate(cndrv.CN_CTX_SCHED_SYNC_AUTO, 1)
    assert cndrv.ctxGetCurrent() is created and cndrv.ctxGetFlags() == 3
    seen = []

    def other():
        seen.append((cndrv.ctxGetCurrent().device, cndrv.ctxGetCurrent().shared))
        cndrv.ctxSetCurrent(None)
        seen.append(cndrv.ctxGetCurrent())

    worker = threading.Thread(target=other)
    worker.start()
    worker.join()
    assert seen == [(0, True), None]
    assert cndrv.ctxGetCurrent() is created
    cndrv.ctxDestroy(created)
    assert cndrv.ctxGetCurrent() is None
    assert _code(cndrv.ctxGetDevice) == cndrv.CN_CONTEXT_ERROR_INVALID
    assert _code(cndrv.ctxSetCurrent, created) == cndrv.CN_CONTEXT_ERROR_INVALID
    assert _code(cndrv.ctxDestroy, created) == cndrv.CN_CONTEXT_ERROR_INVALID
    assert _code(cndrv.ctxSetCurrent, "context") == cndrv.CN_CONTEXT_ERROR_INVALID
    assert _code(cndrv.ctxCreate, 4, 0) == cndrv.CN_ERROR_INVALID_VALUE


def test_memory_round_trip_and_address_errors():
    values = np.linspace(-3, 3, 32, dtype=np.float32)
    a, b = cndrv.malloc(values.nbytes), cndrv.malloc(values.nbytes)
    free_now, total = cndrv.memGetInfo()
    assert total == 64 << 20 and free_now <= total - 2 * values.nbytes
    cndrv.memcpyHtoD(a, values, values.nbytes)
    cndrv.memcpyDtoD(b, a, values.nbytes)
    out = np.empty_like(values)
    cndrv.memcpyDtoH(out, b, out.nbytes)
    np.testing.assert_array_equal(out, values)
    cnrt.getLastError()
    large = np.empty(2 * values.size, np.float32)
    assert _code(cndrv.memcpyDtoH, large, b, large.nbytes) == cndrv.CN_MEMORY_ERROR_INVALID_ADDRESS  # past the block
    assert _code(cndrv.memcpyDtoH, out, b, large.nbytes) == cndrv.CN_ERROR_INVALID_VALUE  # past the host buffer
    assert _code(cndrv.free, a + 8) == cndrv.CN_MEMORY_ERROR_INVALID_ADDRESS
    assert cnrt.peekAtLastError() == cnrt.cnrtSuccess  # CNDrv failures leave CNRT's last error alone
    cndrv.free(a)
    assert _code(cndrv.free, a) == cndrv.CN_MEMORY_ERROR_INVALID_ADDRESS
    assert _code(cndrv.malloc, -1) == cndrv.CN_ERROR_INVALID_VALUE
    assert _code(cndrv.malloc, 1 << 40) == cndrv.CN_MEMORY_ERROR_OUT_OF_MEMORY
    cndrv.free(b)


def test_error_strings():
    assert cndrv.getErrorName(cndrv.CN_CONTEXT_ERROR_INVALID) == "CN_CONTEXT_ERROR_INVALID"
    assert cndrv.getErrorString(cndrv.CN_SUCCESS) == "no error"
    assert "not in the scope" in cndrv.getErrorString(-5)
    assert _code(cndrv.getErrorName, "x") == cndrv.CN_ERROR_INVALID_VALUE


def test_init_is_needed_before_the_devices_are_up():
    script = ("import cndrv\ntry:\n    cndrv.deviceGetCount()\nexcept cndrv.CndrvError as e:\n    print(e.code)\n"
              "cndrv.init(0)\nprint(cndrv.deviceGetCount())\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(cndrv.CN_ERROR_NOT_INITIALIZED), "1"]


def test_every_declared_attribute_is_cnrts():
    for name, value in cndrv.devices.DEVICE_ATTRIBUTES.items():
        for dev in range(2):
            assert cndrv.deviceGetAttribute(value, dev) == cnrt.deviceGetAttribute(value, dev), name
    # the one CNDrv answers itself: no persisting L2 cache lines on the simulated boards
    assert cndrv.deviceGetAttribute(cndrv.CN_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, 0) == 0
