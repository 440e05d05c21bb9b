"""mlusim.host.spin: spin-waits on shared counters with the GIL released."""
import threading
import time

import numpy as np

from mlusim.host import spin


def test_wait_for_sees_a_count_posted_by_another_thread():
    counters = np.zeros(2, np.int64)
    posted = threading.Event()
    spin.post_then_wait_for(np.zeros(2, np.int64), 1, 0, np.zeros(2, np.int64), 0, 0, 1)  # compiled before timing
    spin.wait_for(np.zeros(2, np.int64), 1, 0, 1)

    def post_later():
        time.sleep(0.02)
        # posts slot 1, then waits (in vain, briefly) on slot 0 for a count nobody posts
        spin.post_then_wait_for(counters, 1, 5, counters, 0, 1, spin.rounds_for(0.001))
        posted.set()

    thread = threading.Thread(target=post_later)
    thread.start()
    started = time.perf_counter()
    assert spin.wait_for(counters, 1, 5, spin.rounds_for(5.0))  # returns as soon as it is posted, not after 5 s
    assert time.perf_counter() - started < 2.0
    thread.join()
    assert posted.is_set() and counters[1] == 5 and counters[0] == 0


def test_wait_for_gives_up_after_its_rounds_and_says_so():
    counters = np.zeros(1, np.int64)
    started = time.perf_counter()
    assert not spin.wait_for(counters, 0, 1, spin.rounds_for(0.005))
    assert time.perf_counter() - started < 1.0
    counters[0] = 3
    assert spin.wait_for(counters, 0, 2, 1)  # already past the target: at once
    assert spin.wait_for(counters, 0, 3, 1, settle=spin.rounds_for(0.001))


def test_the_rounds_scale_with_the_time_asked_for():
    assert spin.pauses_per_us() >= 1.0
    assert spin.rounds_for(0.001) >= 10 * spin.rounds_for(0.00005) >= 10
    counters = np.zeros(1, np.int64)
    started = time.perf_counter()
    spin.wait_for(counters, 0, 1, spin.rounds_for(0.02))
    assert time.perf_counter() - started >= 0.005  # ~20 ms of spinning, not a few pauses
