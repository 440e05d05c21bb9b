"""The modelled device clock through the real API: op durations, overlap of queues, the host clock at syncs."""
import numpy as np
import pytest

import cnnl
import cnrt
from mlusim import arch, cost, trace
from mlusim import device as devices

N = 1 << 20


def _add_operands():
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [N])
    pointers = [cnrt.malloc(4 * N) for _ in range(3)]
    for pointer in pointers[:2]:
        cnrt.memset(pointer, 0, 4 * N)
    op = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(op, cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_NOT_PROPAGATE_NAN)
    return desc, op, pointers


def _add(handle, desc, op, pointers):
    a, b, c = pointers
    cnnl.opTensor(handle, op, 1, desc, a, 1, desc, b, None, 0, 0, desc, c)


def _timed_add(arch_name=None):
    if arch_name:
        devices.configure(arch=arch_name, memory=256 << 20)
    handle, queue = cnnl.create(), cnrt.queueCreate()
    cnnl.setQueue(handle, queue)
    desc, op, pointers = _add_operands()
    start, end = cnrt.notifierCreate(), cnrt.notifierCreate()
    cnrt.placeNotifier(start, queue)
    _add(handle, desc, op, pointers)
    cnrt.placeNotifier(end, queue)
    cnrt.queueSync(queue)
    return cnrt.notifierDuration(start, end), cnrt.notifierElapsedTime(start, end)


def test_notifier_duration_of_an_op_is_its_modelled_time():
    duration_us, elapsed_ms = _timed_add()
    spec = devices.get(0).spec
    assert duration_us == pytest.approx(cost.op_us(spec, N, 12 * N, "float", cost.VECTOR))
    assert elapsed_ms > 0


def test_the_board_changes_the_modelled_time_as_its_bandwidth():
    work_us = {name: _timed_add(name)[0] - arch.board(name).kernel_launch_us for name in ("MLU270-S4", "MLU590-M9")}
    assert work_us["MLU270-S4"] / work_us["MLU590-M9"] == pytest.approx(
        arch.board("MLU590-M9").gdram_bandwidth / arch.board("MLU270-S4").gdram_bandwidth)


def test_work_on_two_queues_overlaps_on_the_device():
    first, second = cnrt.queueCreate(), cnrt.queueCreate()
    nbytes = 32 << 20
    a, b = cnrt.malloc(nbytes), cnrt.malloc(nbytes)
    cnrt.syncDevice()
    with trace.recording() as recorder:
        cnrt.memsetAsync(a, 0, nbytes, first)
        cnrt.memsetAsync(b, 0, nbytes, second)
        cnrt.syncDevice()
    one, two = (r for r in recorder.records if r.kind == "memset")
    assert one.queue != two.queue
    assert one.model_start == pytest.approx(two.model_start)  # both start when the host queued them
    assert max(one.model_end, two.model_end) - one.model_start == pytest.approx(
        cost.memset_us(devices.get(0).spec, nbytes))


def test_work_queued_after_a_sync_starts_after_what_the_sync_waited_for():
    first, second = cnrt.queueCreate(), cnrt.queueCreate()
    nbytes = 32 << 20
    a, b = cnrt.malloc(nbytes), cnrt.malloc(nbytes)
    with trace.recording() as recorder:
        cnrt.memsetAsync(a, 0, nbytes, first)
        cnrt.queueSync(first)
        cnrt.memsetAsync(b, 0, nbytes, second)
        cnrt.queueSync(second)
    before, after = (r for r in recorder.records if r.kind == "memset")
    assert after.model_start == pytest.approx(before.model_end)


def test_a_queue_waiting_on_a_notifier_starts_after_it():
    first, second = cnrt.queueCreate(), cnrt.queueCreate()
    nbytes = 32 << 20
    a, b = cnrt.malloc(nbytes), cnrt.malloc(nbytes)
    marker = cnrt.notifierCreate()
    with trace.recording() as recorder:
        cnrt.memsetAsync(a, 0, nbytes, first)
        cnrt.placeNotifier(marker, first)
        cnrt.queueWaitNotifier(marker, second, 0)
        cnrt.memsetAsync(b, 0, nbytes, second)
        cnrt.syncDevice()
    memsets = [r for r in recorder.records if r.kind == "memset"]
    by_queue = {r.queue: r for r in memsets}
    assert by_queue[second.ident].model_start >= by_queue[first.ident].model_end


def test_the_modelled_time_of_a_host_copy_does_not_depend_on_the_host():
    values = np.ones(1 << 20, np.float32)
    pointer = cnrt.malloc(values.nbytes)
    queue = cnrt.queueCreate()
    durations = []
    for _ in range(3):
        start, end = cnrt.notifierCreate(), cnrt.notifierCreate()
        cnrt.placeNotifier(start, queue)
        cnrt.memcpyAsync(pointer, values, values.nbytes, queue, cnrt.cnrtMemcpyHostToDev)
        cnrt.placeNotifier(end, queue)
        cnrt.queueSync(queue)
        durations.append(cnrt.notifierDuration(start, end))
    assert durations == [pytest.approx(cost.copy_us(devices.get(0).spec, cost.HOST_TO_DEVICE, values.nbytes))] * 3
