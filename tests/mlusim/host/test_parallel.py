"""map_parallel: the fork-join map over the host's cores that the kernel libraries share."""
import threading

import pytest

from mlusim.host import parallel
from mlusim.host import threads as host_threads


def test_map_parallel_keeps_order_nests_inline_and_raises_the_first_error(monkeypatch):
    monkeypatch.setattr(host_threads, "_cores", 2)
    assert parallel.map_parallel(lambda i: i * i, range(50)) == [i * i for i in range(50)]
    nested = parallel.map_parallel(lambda i: parallel.map_parallel(lambda j: (i, j), range(3)), range(4))
    assert nested == [[(i, j) for j in range(3)] for i in range(4)]

    def fail_on_seven(i):
        if i == 7:
            raise KeyError(i)
        return i

    with pytest.raises(KeyError):
        parallel.map_parallel(fail_on_seven, range(20))
    assert parallel.map_parallel(lambda i: i, range(5)) == list(range(5))  # the pool still works afterwards


@pytest.mark.parametrize("slot", [0, 1, None])
def test_map_parallel_tries_its_cores_share_first_then_the_others_from_their_ends(slot, monkeypatch):
    monkeypatch.setattr(host_threads, "_cores", 2)
    monkeypatch.setattr(parallel, "cpu_slot", lambda: slot)
    batch = parallel._Batch(lambda i: i, list(range(7)))
    assert list(batch._order()) == {0: [0, 1, 2, 6, 5, 4, 3], 1: [3, 4, 5, 6, 2, 1, 0], None: list(range(7))}[slot]


@pytest.mark.parametrize("slots", [(0, 1), (1, 0), (0, 0), (1, 1), (None, 1)])
def test_map_parallel_runs_every_item_once_whatever_cores_the_threads_are_on(slots, monkeypatch):
    """Each thread reads its core's slot; with both threads on one core, or no slot known, the items are still
    taken once each, and the results keep their order."""
    monkeypatch.setattr(host_threads, "_cores", 2)
    assigned, lock = {}, threading.Lock()

    def slot_of_this_thread():
        with lock:
            return assigned.setdefault(threading.get_ident(), slots[len(assigned) % 2])

    monkeypatch.setattr(parallel, "cpu_slot", slot_of_this_thread)
    calls = []
    results = parallel.map_parallel(lambda i: calls.append(i) or i * 3, range(13))
    assert results == [i * 3 for i in range(13)]
    assert sorted(calls) == list(range(13))
