"""Notifiers: placement, waits, queries, host and modelled clocks, flags, lifetimes."""
import threading
import time

import numpy as np
import pytest

import cnrt
from mlusim import cost
from mlusim import device as devices

from .helpers import raises_code


def test_elapsed_time_is_host_milliseconds():
    queue = cnrt.queueCreate()
    start, end = cnrt.notifierCreate(), cnrt.notifierCreate()
    cnrt.placeNotifier(start, queue)
    cnrt.invokeHostFunc(queue, lambda _: time.sleep(0.03), None)
    cnrt.placeNotifier(end, queue)
    cnrt.waitNotifier(end)
    assert 25 <= cnrt.notifierElapsedTime(start, end) < 1000


def test_duration_is_the_modelled_device_time_of_the_work_between():
    queue = cnrt.queueCreate()
    start, end = cnrt.notifierCreate(), cnrt.notifierCreate()
    nbytes = 8 << 20
    pointer = cnrt.malloc(nbytes)
    host = np.zeros(nbytes, np.uint8)
    cnrt.placeNotifier(start, queue)
    cnrt.memcpyAsync(pointer, host, nbytes, queue, cnrt.cnrtMemcpyHostToDev)
    cnrt.memsetAsync(pointer, 0, nbytes, queue)
    cnrt.placeNotifier(end, queue)
    cnrt.queueSync(queue)
    spec = devices.get(0).spec
    expected = cost.copy_us(spec, cost.HOST_TO_DEVICE, nbytes) + cost.memset_us(spec, nbytes)
    assert cnrt.notifierDuration(start, end) == pytest.approx(expected)


def test_a_faster_board_models_a_shorter_copy():
    durations = {}
    for board in ("MLU270-S4", "MLU590-M9"):
        devices.configure(arch=board, memory=64 << 20)
        queue = cnrt.queueCreate()
        start, end = cnrt.notifierCreate(), cnrt.notifierCreate()
        pointer = cnrt.malloc(16 << 20)
        cnrt.placeNotifier(start, queue)
        cnrt.memsetAsync(pointer, 0, 16 << 20, queue)
        cnrt.placeNotifier(end, queue)
        cnrt.queueSync(queue)
        durations[board] = cnrt.notifierDuration(start, end)
    assert durations["MLU590-M9"] < durations["MLU270-S4"] / 10


def test_waiting_on_another_queue_carries_the_modelled_clock():
    first, second = cnrt.queueCreate(), cnrt.queueCreate()
    pointer = cnrt.malloc(32 << 20)
    marker, start, end = cnrt.notifierCreate(), cnrt.notifierCreate(), cnrt.notifierCreate()
    cnrt.placeNotifier(start, second)
    cnrt.memsetAsync(pointer, 0, 32 << 20, first)
    cnrt.placeNotifier(marker, first)
    cnrt.queueWaitNotifier(marker, second, 0)
    cnrt.placeNotifier(end, second)
    cnrt.syncDevice()
    assert cnrt.notifierDuration(start, end) >= cost.memset_us(devices.get(0).spec, 32 << 20)


def test_query_and_wait():
    queue = cnrt.queueCreate()
    notifier = cnrt.notifierCreate()
    assert cnrt.queryNotifier(notifier) == cnrt.cnrtSuccess  # never placed
    release = threading.Event()
    cnrt.invokeHostFunc(queue, lambda _: release.wait(10), None)
    cnrt.placeNotifier(notifier, queue)
    assert cnrt.queryNotifier(notifier) == cnrt.cnrtErrorNotReady
    assert cnrt.peekAtLastError() == cnrt.cnrtErrorNotReady
    raises_code(cnrt.cnrtErrorNotReady, cnrt.notifierElapsedTime, notifier, notifier)
    threading.Timer(0.05, release.set).start()
    cnrt.waitNotifier(notifier)
    assert cnrt.queryNotifier(notifier) == cnrt.cnrtSuccess


def test_timing_flags_and_unplaced_notifiers():
    queue = cnrt.queueCreate()
    untimed = cnrt.notifierCreateWithFlags(cnrt.CNRT_NOTIFIER_DISABLE_TIMING_ALL)
    timed = cnrt.notifierCreateWithFlags(cnrt.CNRT_NOTIFIER_DEFAULT)
    cnrt.placeNotifier(untimed, queue)
    cnrt.placeNotifier(timed, queue)
    cnrt.queueSync(queue)
    assert "timing disabled" in str(raises_code(cnrt.cnrtErrorInvalidResourceHandle, cnrt.notifierElapsedTime,
                                                untimed, timed))
    assert "never placed" in str(raises_code(cnrt.cnrtErrorInvalidResourceHandle, cnrt.notifierDuration, timed,
                                             cnrt.notifierCreate()))
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.notifierCreateWithFlags, 1 << 10)


def test_destroyed_notifiers_are_invalid_in_both_generations():
    for create, destroy in ((cnrt.notifierCreate, cnrt.notifierDestroy),
                            (cnrt.createNotifier, cnrt.destroyNotifier)):
        notifier = create()
        destroy(notifier)
        raises_code(cnrt.cnrtErrorInvalidResourceHandle, cnrt.placeNotifier, notifier, None)
        raises_code(cnrt.cnrtErrorInvalidResourceHandle, cnrt.queryNotifier, notifier)
    raises_code(cnrt.cnrtErrorInvalidResourceHandle, cnrt.waitNotifier, 42)
