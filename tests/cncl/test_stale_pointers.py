"""A stale buffer pointer is refused by every cncl call that takes one, even right after malloc/free/malloc of the
same size: CNCL_RET_ERR_ARGUMENTS naming the argument and the free, before anything is queued or sent."""
import numpy as np
import pytest

import cncl
import cnrt

COUNT = 64
BYTES = COUNT * 4


def _stale_and_live(device: int):
    """(stale pointer, live block of the same size allocated after its free, another live block) on `device`."""
    cnrt.setDevice(device)
    old = cnrt.malloc(2 * BYTES)
    cnrt.free(old)
    fresh = cnrt.malloc(2 * BYTES)
    assert fresh != old
    cnrt.memcpy(fresh, np.full(2 * COUNT, 7, np.float32), 2 * BYTES, cnrt.cnrtMemcpyHostToDev)
    return old, fresh, cnrt.malloc(2 * BYTES)


def _calls(old, live, comm, queue):
    f, s = cncl.cnclFloat, cncl.cnclSum
    return {
        "allReduce send": lambda: cncl.allReduce(old, live, COUNT, f, s, comm, queue),
        "allReduce recv": lambda: cncl.allReduce(live, old + 4, COUNT, f, s, comm, queue),
        "allReduce in place": lambda: cncl.allReduce(old, old, COUNT, f, s, comm, queue),
        "broadcast send": lambda: cncl.broadcast(old, live, COUNT, f, 0, comm, queue),
        "broadcast recv": lambda: cncl.broadcast(live, old, COUNT, f, 0, comm, queue),
        "bcast": lambda: cncl.bcast(old, COUNT, f, 0, comm, queue),
        "reduce send": lambda: cncl.reduce(old, live, COUNT, f, s, 0, comm, queue),
        "reduce recv": lambda: cncl.reduce(live, old, COUNT, f, s, 0, comm, queue),
        "allGather send": lambda: cncl.allGather(old, live, COUNT // 2, f, comm, queue),
        "allGather recv": lambda: cncl.allGather(live, old, COUNT // 2, f, comm, queue),
        "reduceScatter send": lambda: cncl.reduceScatter(old, live, COUNT // 2, f, s, comm, queue),
        "reduceScatter recv": lambda: cncl.reduceScatter(live, old, COUNT // 2, f, s, comm, queue),
        "alltoAll send": lambda: cncl.alltoAll(old, live, COUNT // 2, f, comm, queue),
        "alltoAll recv": lambda: cncl.alltoAll(live, old, COUNT // 2, f, comm, queue),
        "alltoAllv send": lambda: cncl.alltoAllv([live, old], [8, 8], [f, f], [live + BYTES, live + BYTES + 32],
                                                 [8, 8], [f, f], comm, queue),
        "alltoAllv recv": lambda: cncl.alltoAllv([live, live + 32], [8, 8], [f, f], [old + 64, live + BYTES],
                                                 [8, 8], [f, f], comm, queue),
        "send": lambda: cncl.send(old, COUNT, f, 1, comm, queue),
        "recv": lambda: cncl.recv(old, COUNT, f, 1, comm, queue),
    }


@pytest.mark.parametrize("case", list(_calls(0, 0, None, None)))
def test_a_stale_buffer_is_refused_at_the_call(pair, case):
    old, fresh, live = _stale_and_live(0)
    queue = cnrt.queueCreate()
    with pytest.raises(cncl.CnclError) as caught:
        _calls(old, live, pair[0], queue)[case]()
    error = caught.value
    assert error.code == cncl.CNCL_RET_ERR_ARGUMENTS and error.kind == "use_after_free", error
    assert "which cnrtFree freed" in error.message and f"0x{old:x}" in error.message, error
    assert queue.submitted == 0
    cnrt.queueSync(queue)
    got = np.zeros(2 * COUNT, np.float32)
    cnrt.memcpy(got, fresh, 2 * BYTES, cnrt.cnrtMemcpyDevToHost)
    assert (got == 7).all()


def test_a_stale_buffer_inside_a_group_is_refused_and_the_group_still_closes(pair):
    old, _, live = _stale_and_live(0)
    queue = cnrt.queueCreate()
    cncl.groupStart()
    with pytest.raises(cncl.CnclError) as caught:
        cncl.send(old, COUNT, cncl.cnclFloat, 1, pair[0], queue)
    cncl.groupEnd()
    assert caught.value.kind == "use_after_free"
