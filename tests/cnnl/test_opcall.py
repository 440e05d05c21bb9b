"""cnnl.opcall: how an op's queued work runs (floating-point errors off while it runs, and only then)."""
import threading
import warnings

import numpy as np
import pytest

import cnnl
from mlusim import device as devices
from mlusim.observers import OBSERVERS

from .helpers import empty, sync, tensor


@pytest.mark.parametrize("blocking", [False, True])
def test_an_overflowing_op_gives_inf_whatever_the_callers_error_state_and_leaves_it_as_it_was(blocking):
    """IEEE results (inf, NaN) are results, as on the device: an op never raises or warns for them, even when the
    thread that runs it (the caller itself in blocking mode, or at its sync) raises on floating-point errors; the
    thread's own setting is back once the op ran."""
    devices.configure(memory=64 << 20, blocking=blocking)
    handle = cnnl.create()
    big = np.full(4, 3e38, np.float32)
    a, b, c = tensor(big), tensor(big), empty([4])
    op = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(op, cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_NOT_PROPAGATE_NAN)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        cnnl.opTensor(handle, op, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)
        sync(handle)
        assert np.geterr() == {"divide": "raise", "over": "raise", "under": "raise", "invalid": "raise"}
        with pytest.raises(FloatingPointError):
            np.float32(3e38) * np.float32(10)
    assert np.isposinf(c.read()).all()


class _ThreadOf:
    """Observer: the thread each finished command of `queue` ran on."""

    def __init__(self, queue, ran_on: list):
        self.queue, self.ran_on = queue, ran_on

    def command_finished(self, queue, command) -> None:
        if queue is self.queue:
            self.ran_on.append(threading.current_thread())


@pytest.mark.mlusim_sanitize("off")  # the sanitizer sees every command queued: it turns this path off
def test_an_op_moving_at_most_the_small_limit_runs_in_its_call_on_an_idle_queue(handle, request):
    """Every op moving at most mlusim.queue.SMALL_OP_BYTES is a few µs of work: on an idle queue the calling
    thread runs it in the call (its first public call too, so a stream of tiny ops after it stays on that path);
    a larger op too when the host waited for the queue after its one op before, and the next larger one,
    queued without a wait, is queued for the worker."""
    import threading
    import time

    import cnrt
    from mlusim.queue import SMALL_OP_BYTES
    queue = cnnl.getQueue(handle)
    ran_on = []
    watcher = _ThreadOf(queue, ran_on)
    OBSERVERS.add(watcher)
    request.addfinalizer(lambda: OBSERVERS.remove(watcher))
    sync(handle)
    small_count = SMALL_OP_BYTES // 8  # abs reads and writes: 8 bytes an element
    x, y = tensor(-np.arange(small_count, dtype=np.float32)), empty([small_count])
    ran_on.clear()
    cnnl.abs(handle, x.desc, x.ptr, y.desc, y.ptr)
    assert ran_on == [threading.current_thread()]
    np.testing.assert_array_equal(y.read(), np.arange(small_count, dtype=np.float32))
    large = tensor(-np.ones(small_count + 1, np.float32))
    out = empty([small_count + 1])
    cnnl.abs(handle, large.desc, large.ptr, out.desc, out.ptr)
    sync(handle)  # a wait after one op: the next op runs in the call
    ran_on.clear()
    cnnl.abs(handle, large.desc, large.ptr, out.desc, out.ptr)
    assert ran_on == [threading.current_thread()]
    ran_on.clear()
    cnnl.abs(handle, large.desc, large.ptr, out.desc, out.ptr)  # the second: the worker's
    deadline = time.monotonic() + 10
    while cnrt.queueQuery(queue) != cnrt.cnrtSuccess and time.monotonic() < deadline:
        time.sleep(0.001)
    assert len(ran_on) == 1 and ran_on[0] is not threading.current_thread()
    np.testing.assert_array_equal(out.read(), np.ones(small_count + 1, np.float32))
