"""racecheck inside BANG kernels: tasks of one launch race unless a barrier both take part in separates them; the
log of a launch gives its exact read/write sets for the checks across queues."""
import numpy as np
import pytest

import cnrt
from mlusim import sanitizer

from .helpers import kinds, upload
from .kernels import SLOT, count_into, gather_all, scale_slices


@pytest.mark.parametrize("scope,expected", [(0, [("racecheck", "kernel_race")]),
                                            (1, [("racecheck", "kernel_race")]), (2, [])],
                         ids=["no barrier", "sync_cluster", "sync_all"])
def test_only_sync_all_orders_tasks_of_different_clusters(scope, expected):
    """Union2: every task reads the slot a task of the other cluster wrote."""
    tasks = 8
    with sanitizer.scope("racecheck") as found:
        queue = cnrt.queueCreate()
        x, out = cnrt.malloc(tasks * SLOT * 4), cnrt.malloc(tasks * SLOT * 4)
        gather_all[(tasks, 1, 1), cnrt.cnrtFuncTypeUnion2, queue](x, out, scope)
        cnrt.queueSync(queue)
        result = np.empty(tasks * SLOT, np.float32)
        cnrt.memcpy(result, out, result.nbytes, cnrt.cnrtMemcpyDevToHost)
    assert kinds(found) == expected
    if expected:
        report = found.errors[0]
        first, second = (access.task for access in report.accesses)
        assert first // 4 != second // 4  # the two tasks are in different clusters
        assert report.hazard == "read-write" and report.size == SLOT * 4
    else:
        np.testing.assert_array_equal(result.reshape(tasks, SLOT)[:, 0], [4, 5, 6, 7, 0, 1, 2, 3])


@pytest.mark.parametrize("shared,expected", [(1, [("racecheck", "kernel_race")]), (0, [])],
                         ids=["one slot", "a slot each"])
def test_element_accesses_are_recorded(shared, expected):
    with sanitizer.scope("racecheck") as found:
        queue = cnrt.queueCreate()
        out = upload(np.zeros(32, np.int32))
        count_into[(32, 1, 1), cnrt.cnrtFuncTypeBlock, queue](out, shared)
        cnrt.queueSync(queue)
    assert kinds(found) == expected
    if expected:
        assert found.errors[0].size == 4 and "write" in {a.access for a in found.errors[0].accesses}
        assert "Block tasks never synchronise" in found.errors[0].message


@pytest.mark.parametrize("overlap,expected", [(False, []), (True, [("racecheck", "race")])],
                         ids=["disjoint halves", "overlapping"])
def test_a_launch_counts_only_the_bytes_its_tasks_touched(overlap, expected):
    """Two launches on two queues, each on its half of one allocation: their pointer arguments reach the same
    blocks (to the end), but their tasks touch disjoint bytes."""
    per_task, tasks = 256, 4
    half = per_task * tasks
    with sanitizer.scope("racecheck") as found:
        q1, q2 = cnrt.queueCreate(), cnrt.queueCreate()
        x = upload(np.ones(2 * half, np.float32))
        y = cnrt.malloc(2 * half * 4)
        second = half - per_task if overlap else half
        scale_slices[(tasks, 1, 1), cnrt.cnrtFuncTypeBlock, q1](x, y, per_task)
        scale_slices[(tasks, 1, 1), cnrt.cnrtFuncTypeBlock, q2](x + second * 4, y + second * 4, per_task)
        cnrt.syncDevice()
    assert kinds(found) == expected
    if expected:
        report = found.errors[0]
        assert (report.address, report.size) == (y + second * 4, per_task * 4)
        assert {a.command for a in report.accesses} == {"scale_slices"}


def test_a_full_log_is_reported_and_the_launch_counts_as_touching_its_blocks(process_sanitizer):
    process_sanitizer.log_entries = 16
    try:
        with sanitizer.scope("racecheck") as found:
            queue = cnrt.queueCreate()
            out = upload(np.zeros(64, np.int32))
            count_into[(64, 1, 1), cnrt.cnrtFuncTypeBlock, queue](out, 0)
            cnrt.queueSync(queue)
    finally:
        process_sanitizer.log_entries = 1 << 16
    assert [r.kind for r in found.warnings] == ["log_overflow"] and found.errors == []
