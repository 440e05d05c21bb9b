"""The one submission path: every kind of queued work is a fully formed Command with exact read/write sets, built
by mlusim.submit; pins are released when a call fails before its command is queued."""
import threading

import numpy as np
import pytest

import cncl
import cnnl
import cnrt
from mlusim import bang, queue as queues
from mlusim import device as devices
from mlusim.command import Command, Kind
from mlusim.submit import Access, Submission


@pytest.fixture
def queued():
    """Every command submitted while the test runs (Queue.submit, the one way onto a queue; and the notifier
    placements and waits the queue makes itself), as built (checked at submission, before it runs)."""
    seen: list[Command] = []
    originals = queues.Queue.submit, queues.Queue._enqueue

    def spying_on(original):
        def spy(self, command):
            assert isinstance(command, Command) and isinstance(command.kind, Kind)
            assert command.kind in (Kind.NOTIFIER, Kind.WAIT) or command.run is not None or command.kind is Kind.FREE
            if not any(known is command for known in seen):  # (a submitted command goes on to _enqueue)
                seen.append(command)
            return original(self, command)
        return spy

    queues.Queue.submit, queues.Queue._enqueue = (spying_on(original) for original in originals)
    try:
        yield seen
    finally:
        queues.Queue.submit, queues.Queue._enqueue = originals


def _only(commands, kind):
    chosen = [c for c in commands if c.kind is kind]
    assert len(chosen) == 1, chosen
    return chosen[0]


def test_copies_read_their_source_and_write_their_destination(queued):
    a, b = cnrt.malloc(4096), cnrt.malloc(4096)
    host = np.arange(1024, dtype=np.float32)
    cnrt.memcpy(a, host, 4096, cnrt.cnrtMemcpyHostToDev)
    cnrt.memcpy(b + 1024, a + 512, 2048, cnrt.cnrtMemcpyDevToDev)
    out = np.empty(512, np.float32)
    cnrt.memcpy(out, b + 1024, 2048, cnrt.cnrtMemcpyDevToHost)
    h2d, d2d, d2h = [c for c in queued if c.kind is Kind.MEMCPY]
    assert (h2d.reads, h2d.writes) == ((), ((a, 4096),))
    assert (d2d.reads, d2d.writes) == (((a + 512, 2048),), ((b + 1024, 2048),))
    assert (d2h.reads, d2h.writes) == (((b + 1024, 2048),), ())
    np.testing.assert_array_equal(out, host[128:640])


def test_fills_write_what_they_fill(queued):
    a = cnrt.malloc(1024)
    cnrt.memsetD32(a + 16, 7, 10)
    fill = _only(queued, Kind.MEMSET)
    assert (fill.reads, fill.writes) == ((), ((a + 16, 40),))


def test_an_op_reads_its_inputs_and_writes_its_output(queued):
    handle = cnnl.create()
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [256])
    x, y = cnrt.malloc(1024), cnrt.malloc(1024)
    cnrt.memset(x, 0, 1024)
    cnnl.abs(handle, desc, x, desc, y)
    cnrt.queueSync(cnnl.getQueue(handle))
    op = _only(queued, Kind.OP)
    assert op.name == "cnnlAbs" and (op.reads, op.writes) == (((x, 1024),), ((y, 1024),))
    assert op.info["bytes"] == 2048


@bang.kernel
def _scale(ctx, x: bang.gdram(bang.float32), n: int):
    if ctx.taskId == 0:
        tile = bang.nram(ctx, "tile", bang.float32, 64)
        bang.memcpy(ctx, tile, x, n * 4, bang.GDRAM2NRAM)
        bang.mul_scalar(ctx, tile, tile, 2.0, n)
        bang.memcpy(ctx, x, tile, n * 4, bang.NRAM2GDRAM)


def test_a_kernel_launch_holds_what_its_pointers_reach(queued):
    x = cnrt.malloc(256)
    cnrt.memcpy(x, np.ones(64, np.float32), 256, cnrt.cnrtMemcpyHostToDev)
    queue = cnrt.queueCreate()
    _scale[(4, 1, 1), cnrt.cnrtFuncTypeUnion1, queue](x + 64, 48)
    cnrt.queueSync(queue)
    launch = _only(queued, Kind.KERNEL)
    assert launch.reads == launch.writes == ((x + 64, 192),)
    assert launch.info["work"]["tasks"] == 4 and launch.info["bytes"] == 2 * 48 * 4
    out = np.empty(64, np.float32)
    cnrt.memcpy(out, x, 256, cnrt.cnrtMemcpyDevToHost)
    np.testing.assert_array_equal(out, [1.0] * 16 + [2.0] * 48)


def test_host_functions_and_async_frees_are_commands_too(queued):
    queue = cnrt.queueCreate()
    called = []
    cnrt.invokeHostFunc(queue, called.append, "done")
    block = cnrt.memAllocAsync(512, queue)
    cnrt.memFreeAsync(block, queue)
    cnrt.queueSync(queue)
    assert called == ["done"]
    assert {c.kind for c in queued} >= {Kind.HOST_FUNC, Kind.FREE}


def test_a_collective_reads_its_send_buffer_and_writes_its_receive_buffer(queued):
    devices.configure(memory=64 << 20, device_count=2)
    comms = cncl.initComms(2, [0, 1], [0, 1], 2, None)
    buffers = []
    for rank in range(2):
        cnrt.setDevice(rank)
        send, recv = cnrt.malloc(64), cnrt.malloc(64)
        cnrt.memcpy(send, np.full(16, rank + 1, np.float32), 64, cnrt.cnrtMemcpyHostToDev)
        buffers.append((send, recv))
    cncl.groupStart()
    for rank, (send, recv) in enumerate(buffers):
        cncl.allReduce(send, recv, 16, cncl.cnclFloat, cncl.cnclSum, comms[rank], None)
    cncl.groupEnd()
    for rank in range(2):
        cnrt.setDevice(rank)
        cnrt.syncDevice()
    cnrt.setDevice(0)
    cncl.destroyComms(comms, 2)
    collectives = [c for c in queued if c.kind is Kind.COLLECTIVE]
    assert [(c.reads, c.writes) for c in collectives] == [(((s, 64),), ((r, 64),)) for s, r in buffers]
    assert all(c.model_end >= c.model_start for c in collectives)


def test_a_failed_call_releases_the_pins_it_took():
    good = cnrt.malloc(1024)
    with pytest.raises(cnrt.CnrtError):
        cnrt.memcpy(good, 12345, 1024, cnrt.cnrtMemcpyDevToDev)  # dst resolves and pins, src fails
    block = devices.get(0).memory.find(good)
    assert block.pins == 0
    freed = threading.Event()
    threading.Thread(target=lambda: (cnrt.free(good), freed.set()), daemon=True).start()
    assert freed.wait(5), "free waited for a pin that the failed call never released"


def test_a_submission_that_is_not_queued_unpins():
    a = cnrt.malloc(256)
    block = devices.get(0).memory.find(a)
    with pytest.raises(RuntimeError):
        with Submission(Kind.OP, "probe") as submission:
            submission.read(a, 256, "a")
            assert block.pins == 1
            raise RuntimeError("the op's checks failed")
    assert block.pins == 0


def test_records_keep_the_access_of_each_range():
    a = cnrt.malloc(256)
    with Submission(Kind.OP, "probe") as submission:
        span = submission.write(a, 128, "out")
        submission.record(span, Access.READ)
        submission.read(a + 128, 64, "in")
        command = submission.command(lambda: None)
    assert command.reads == ((a, 128), (a + 128, 64)) and command.writes == ((a, 128),)
    assert len(command.blocks) == 2 and submission.spans == []
    for block in command.blocks:
        block.space.unpin(block)


def test_kinds_compare_with_their_names():
    assert Kind.OP == "op" and str(Kind.MEMCPY) == "memcpy" and f"{Kind.KERNEL}" == "kernel"
    with pytest.raises(ValueError):
        Command("nonsense", "x")
