"""Device pointers: null, unknown, freed, out-of-range, misaligned and foreign pointers fail at the call with
BAD_PARAM naming the argument; pins are released on failure and held until the op has run."""
import threading

import numpy as np
import pytest

import cnnl
import cnrt
from mlusim import device as devices

from .helpers import descriptor, empty, raises_status, sync, tensor


def copy(handle, src_desc, src, dst_desc, dst):
    cnnl.copy(handle, src_desc, src, dst_desc, dst)


def test_null_pointer(handle):
    x = tensor(np.ones(4, np.float32))
    for bad in (None, 0):
        with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output"):
            copy(handle, x.desc, x.ptr, x.desc, bad)


def test_empty_tensor_needs_no_pointer(handle):
    desc = descriptor([0, 3])
    copy(handle, desc, None, desc, None)
    sync(handle)


def test_freed_pointer(handle):
    x, y = tensor(np.ones(4, np.float32)), empty([4])
    cnrt.free(y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output") as info:
        copy(handle, x.desc, x.ptr, y.desc, y.ptr)
    assert info.value.kind == "use_after_free"


def test_tensor_running_past_its_allocation(handle):
    x = tensor(np.ones(4, np.float32))
    big = descriptor([5])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input") as info:
        copy(handle, big, x.ptr, big, empty([5]).ptr)
    assert info.value.kind == "out_of_bounds"
    strided = descriptor([4], strides=[2])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input"):
        copy(handle, strided, x.ptr, descriptor([4]), empty([4]).ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input"):
        copy(handle, descriptor([2]), x.ptr + 12, descriptor([2]), empty([2]).ptr)


def test_unknown_misaligned_and_non_integer_pointers(handle):
    x, y = tensor(np.ones(4, np.float32)), empty([4])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input"):
        copy(handle, x.desc, 12345, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input"):
        copy(handle, descriptor([2]), x.ptr + 2, descriptor([2]), y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input"):
        copy(handle, x.desc, np.ones(4, np.float32), y.desc, y.ptr)


def test_pointer_on_another_device(handle):
    devices.configure(memory=64 << 20, device_count=2)
    h = cnnl.create()
    x = tensor(np.ones(4, np.float32))
    cnrt.setDevice(1)
    try:
        foreign = cnrt.malloc(16)
    finally:
        cnrt.setDevice(0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output"):
        copy(h, x.desc, x.ptr, x.desc, foreign)
    op = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(op, cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_FLOAT, 0)
    y = empty([4])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace"):
        cnnl.opTensor(h, op, 1, x.desc, x.ptr, 1, x.desc, x.ptr, foreign, 16, 0, y.desc, y.ptr)


def test_a_handle_made_before_the_device_table_was_rebuilt_is_refused(handle):
    devices.configure(memory=64 << 20)
    old = cnnl.create()
    devices.configure(memory=64 << 20)  # the same addresses now belong to the new device 0
    x, y = tensor(np.ones(4, np.float32)), empty([4])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input") as info:
        copy(old, x.desc, x.ptr, y.desc, y.ptr)
    assert "the handle is bound to" in str(info.value)


def freed_within(pointer, seconds):
    """True when cnrt.free(pointer) returns within `seconds` (it waits while queued work pins the block)."""
    done = threading.Event()
    thread = threading.Thread(target=lambda: (cnrt.free(pointer), done.set()), daemon=True)
    thread.start()
    return done.wait(seconds)


def test_a_failed_call_releases_its_pins(handle):
    x = tensor(np.ones(4, np.float32))
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output"):
        copy(handle, x.desc, x.ptr, x.desc, None)
    assert freed_within(x.ptr, 5.0)


def test_operands_stay_pinned_until_the_op_has_run(handle):
    x, y = tensor(np.arange(4, dtype=np.float32)), empty([4])
    release = threading.Event()
    cnrt.invokeHostFunc(cnnl.getQueue(handle), lambda _: release.wait(), None)
    copy(handle, x.desc, x.ptr, y.desc, y.ptr)
    assert not freed_within(x.ptr, 0.2)
    release.set()
    sync(handle)
    np.testing.assert_array_equal(y.read(), np.arange(4))


def test_blocking_mode_runs_the_op_at_the_call():
    devices.configure(memory=64 << 20, blocking=True)
    h = cnnl.create()
    x, y = tensor(np.arange(3, dtype=np.float32)), empty([3])
    copy(h, x.desc, x.ptr, y.desc, y.ptr)
    queue = cnnl.getQueue(h)
    assert queue.completed == queue.submitted
    np.testing.assert_array_equal(y.read(), np.arange(3))


@pytest.mark.parametrize("bad", ["desc", 3, None])
def test_descriptor_arguments_must_be_descriptors(handle, bad):
    x = tensor(np.ones(2, np.float32))
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input_desc"):
        copy(handle, bad, x.ptr, x.desc, x.ptr)


def failing_copy(src, dst):
    raise RuntimeError("injected kernel failure")


def test_a_failure_of_queued_work_is_reported_by_the_next_sync(handle, monkeypatch):
    monkeypatch.setattr(cnnl.kernels, "copy", failing_copy)
    x, y = tensor(np.ones(2, np.float32)), empty([2])
    copy(handle, x.desc, x.ptr, y.desc, y.ptr)
    with pytest.raises(cnrt.CnrtError, match="injected kernel failure"):
        sync(handle)


def test_in_blocking_mode_a_failing_op_is_execution_failed_at_the_call(monkeypatch):
    devices.configure(memory=64 << 20, blocking=True)
    monkeypatch.setattr(cnnl.kernels, "copy", failing_copy)
    h = cnnl.create()
    x, y = tensor(np.ones(2, np.float32)), empty([2])
    with raises_status(cnnl.CNNL_STATUS_EXECUTION_FAILED):
        copy(h, x.desc, x.ptr, y.desc, y.ptr)


def test_an_op_sees_its_inputs_read_only_and_its_outputs_writable_over_device_memory(handle):
    """OpCall's views: inputs are read-only views of the device bytes (a kernel writing one fails), outputs
    writable views whose writes land in device memory."""
    from cnnl.opcall import OpCall

    x, y = tensor(np.arange(4, dtype=np.float32)), empty([4])
    seen = {}

    def run():
        seen["input writable"] = source.flags.writeable
        with pytest.raises(ValueError):
            source[0] = 7
        target[...] = source * 2

    with OpCall("cnnlCopy", handle) as call:
        source = call.input(x.desc, x.ptr, "input")
        target = call.output(y.desc, y.ptr, "output")
        call.submit(run, flops=4, dtype=cnnl.CNNL_DTYPE_FLOAT)
    sync(handle)
    assert seen == {"input writable": False}
    np.testing.assert_array_equal(y.read(), np.arange(4) * 2)
    np.testing.assert_array_equal(x.read(), np.arange(4))
