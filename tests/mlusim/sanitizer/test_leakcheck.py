"""leakcheck: device memory (an error) and API handles (warnings) still alive at the end of a scope; resets and
long-lived, exempt resources are no leaks; each leak is reported once, by the innermost scope."""
import cncl
import cnnl
import cnrt
from mlusim import device as devices
from mlusim import sanitizer


def _leaks(found) -> list:
    return sorted((r.severity, r.kind, r.resource) for r in found.of("leakcheck"))


def test_every_kind_of_handle_left_alive_is_reported():
    with sanitizer.scope("leakcheck") as found:
        cnrt.queueCreate()
        cnrt.notifierCreate()
        cnnl.create()
        cnnl.createTensorDescriptor()
        cnnl.createActivationDescriptor()
        cnrt.malloc(100)
    assert _leaks(found) == [("error", "memory_leak", "device memory"),
                             ("warning", "handle_leak", "cnnlActivationDescriptor_t"),
                             ("warning", "handle_leak", "cnnlHandle_t"),
                             ("warning", "handle_leak", "cnnlTensorDescriptor_t"),
                             ("warning", "handle_leak", "cnrtNotifier_t"),
                             ("warning", "handle_leak", "cnrtQueue_t")]
    memory = found.errors[0]
    assert memory.size == 100 and "test_leakcheck.py" in memory.text()


def test_what_is_destroyed_or_freed_is_no_leak():
    with sanitizer.scope("leakcheck") as found:
        cnrt.queueDestroy(cnrt.queueCreate())
        cnrt.notifierDestroy(cnrt.notifierCreate())
        cnnl.destroy(cnnl.create())
        cnnl.destroyTensorDescriptor(cnnl.createTensorDescriptor())
        cnnl.destroyActivationDescriptor(cnnl.createActivationDescriptor())
        cnrt.free(cnrt.malloc(100))
        pointer = cnrt.memAllocAsync(64, None)
        cnrt.memFreeAsync(pointer, None)
    assert found.reports == []


def test_a_communicator_left_alive_is_reported():
    devices.configure(memory=64 << 20, device_count=2)
    with sanitizer.scope("leakcheck") as found:
        comms = cncl.initComms(2, [0, 1], [0, 1], 2, None)
    assert _leaks(found) == [("warning", "handle_leak", "cnclComm_t")] * 2
    cncl.destroyComms(comms, 2)


def test_a_reset_releases_what_the_device_held():
    with sanitizer.scope("leakcheck") as found:
        cnrt.malloc(100)
        cnrt.queueCreate()
        cnrt.deviceReset()
    assert found.reports == []


def test_what_was_made_before_the_scope_or_exempt_is_not_its_leak():
    before = cnrt.malloc(64)
    with sanitizer.scope("leakcheck") as found:
        with sanitizer.exempt():
            kept = cnrt.malloc(64)
    assert found.reports == []
    cnrt.free(before)
    cnrt.free(kept)


def test_a_leak_is_reported_once_by_the_innermost_scope():
    with sanitizer.scope("leakcheck") as outer:
        with sanitizer.scope("leakcheck") as inner:
            cnrt.malloc(64)
        cnrt.malloc(32)
        assert [r.size for r in sanitizer.check_leaks()] == [32]   # a checkpoint inside the outer scope
    assert [r.size for r in inner.errors] == [64]
    assert [r.size for r in outer.errors] == [32]
