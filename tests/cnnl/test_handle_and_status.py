"""Handles, queues and status codes."""
import pytest

import cnnl
import cnrt
from mlusim import device as devices

from .helpers import empty, raises_status, sync, tensor


def test_status_values_follow_the_reference():
    assert [cnnl.CNNL_STATUS_SUCCESS, cnnl.CNNL_STATUS_NOT_INITIALIZED, cnnl.CNNL_STATUS_ALLOC_FAILED,
            cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_INTERNAL_ERROR, cnnl.CNNL_STATUS_ARCH_MISMATCH,
            cnnl.CNNL_STATUS_EXECUTION_FAILED, cnnl.CNNL_STATUS_NOT_SUPPORTED,
            cnnl.CNNL_STATUS_NUMERICAL_OVERFLOW] == list(range(9))


@pytest.mark.parametrize("status", range(9))
def test_error_string_names_every_status(status):
    text = cnnl.getErrorString(status)
    assert text.startswith(cnnl.status.STATUS_NAMES[status])
    assert cnnl.cnnlGetErrorString(status) == text


def test_error_string_of_an_unknown_status():
    assert "UNKNOWN" in cnnl.getErrorString(1234)


def test_c_names_are_aliases():
    assert cnnl.cnnlOpTensor is cnnl.opTensor
    assert cnnl.cnnlCreate is cnnl.create
    assert cnnl.cnnlTranspose_v2 is cnnl.transpose_v2


def test_handle_queue_defaults_to_the_current_device_default_queue(handle):
    assert cnnl.getQueue(handle) is devices.get(0).default_queue


def test_handle_binds_to_the_current_device():
    devices.configure(memory=64 << 20, device_count=2)
    cnrt.setDevice(1)
    try:
        h = cnnl.create()
        assert h.device is devices.get(1)
        assert cnnl.getQueue(h) is devices.get(1).default_queue
    finally:
        cnrt.setDevice(0)


def test_set_queue_routes_ops_to_that_queue(handle):
    queue = cnrt.queueCreate()
    cnnl.setQueue(handle, queue)
    assert cnnl.getQueue(handle) is queue
    src, dst = tensor([1.0, 2.0]), empty([2])
    cnnl.copy(handle, src.desc, src.ptr, dst.desc, dst.ptr)
    assert queue.submitted == 1
    cnrt.queueSync(queue)
    assert dst.read().tolist() == [1.0, 2.0]
    cnnl.setQueue(handle, None)
    assert cnnl.getQueue(handle) is devices.get(0).default_queue


def test_set_queue_of_another_device_is_bad_param(handle):
    devices.configure(memory=64 << 20, device_count=2)
    h = cnnl.create()
    cnrt.setDevice(1)
    try:
        other = cnrt.queueCreate()
    finally:
        cnrt.setDevice(0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="queue"):
        cnnl.setQueue(h, other)


def test_set_queue_rejects_a_destroyed_queue(handle):
    queue = cnrt.queueCreate()
    cnrt.queueDestroy(queue)
    with pytest.raises(cnnl.CnnlError) as info:
        cnnl.setQueue(handle, queue)
    assert info.value.code == cnnl.CNNL_STATUS_BAD_PARAM


def test_destroyed_handle_is_bad_param(handle):
    src, dst = tensor([1.0]), empty([1])
    cnnl.destroy(handle)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="handle"):
        cnnl.copy(handle, src.desc, src.ptr, dst.desc, dst.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="handle"):
        cnnl.getQueue(handle)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="handle"):
        cnnl.destroy(handle)


@pytest.mark.parametrize("bogus", [None, 0, "handle", object()])
def test_a_non_handle_is_bad_param(bogus):
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="handle"):
        cnnl.setQueue(bogus, None)


def test_op_on_a_handle_sees_earlier_async_copy_on_the_same_queue(handle):
    import numpy as np
    queue = cnrt.queueCreate()
    cnnl.setQueue(handle, queue)
    values = np.arange(1 << 16, dtype=np.float32)
    src, dst = empty([values.size]), empty([values.size])
    cnrt.memcpyAsync(src.ptr, values, values.nbytes, queue, cnrt.cnrtMemcpyHostToDev)
    cnnl.copy(handle, src.desc, src.ptr, dst.desc, dst.ptr)
    out = np.empty_like(values)
    cnrt.memcpyAsync(out, dst.ptr, out.nbytes, queue, cnrt.cnrtMemcpyDevToHost)
    cnrt.queueSync(queue)
    np.testing.assert_array_equal(out, values)


def test_op_commands_record_cost_facts(handle):
    import numpy as np
    from mlusim.observers import CommandRecorder
    with CommandRecorder(cnnl.getQueue(handle)) as recorder:
        a = tensor(np.ones((64, 32), np.float32))
        b = tensor(np.ones((32, 16), np.float32))
        c = empty([64, 16])
        cnnl.matMul(handle, False, False, 1.0, a.desc, a.ptr, b.desc, b.ptr, 0.0, c.desc, c.ptr)
        sync(handle)
    command = [c for _, c in recorder.commands if c.kind == "op"][-1]
    assert command.name == "cnnlMatMul"
    assert command.info["flops"] == 2 * 64 * 16 * 32
    assert command.info["bytes"] == (64 * 32 + 32 * 16 + 64 * 16) * 4
    spec = devices.get(0).spec
    assert command.model_us >= spec.kernel_launch_us
    assert len(command.reads) == 2 and len(command.writes) == 1
