"""mlusim.memo.BoundedMemo: a hit is the dict's lookup, a full memo starts over (forgetting through its callback),
and threads storing at once never grow it past its limit."""
import threading

import pytest

from mlusim.memo import BoundedMemo


def test_hits_and_misses():
    memo = BoundedMemo(4)
    assert memo.get("a") is None and "a" not in memo
    assert memo.put("a", 1) == 1
    assert memo.get("a") == 1 and memo["a"] == 1 and "a" in memo and len(memo) == 1
    made = []
    assert memo.get_or_make("b", lambda: made.append("b") or 2) == 2
    assert memo.get_or_make("b", lambda: made.append("again") or 3) == 2
    assert made == ["b"]


def test_a_full_memo_starts_over_and_forgets_through_the_callback():
    forgotten = []
    memo = BoundedMemo(3, forget=forgotten.append)
    for key in "abc":
        memo.put(key, key.upper())
    memo.put("a", "A2")  # a key already held replaces its value: no start-over
    assert len(memo) == 3 and forgotten == []
    memo.put("d", "D")
    assert sorted(forgotten) == ["A2", "B", "C"]
    assert len(memo) == 1 and memo.get("d") == "D" and memo.get("a") is None
    memo.clear()
    assert len(memo) == 0 and forgotten[-1] == "D"


def test_get_stays_the_live_lookup_after_a_start_over():
    memo = BoundedMemo(1)
    lookup = memo.get
    memo.put("a", 1)
    memo.put("b", 2)
    assert lookup("b") == 2 and lookup("a") is None


def test_concurrent_puts_never_exceed_the_limit():
    memo = BoundedMemo(64)
    sizes = []

    def fill(offset):
        for i in range(5000):
            memo.put((offset, i), i)
            sizes.append(len(memo))

    threads = [threading.Thread(target=fill, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert max(sizes) <= 64


def test_a_limit_below_one_is_refused():
    with pytest.raises(ValueError, match="at least one entry"):
        BoundedMemo(0)
