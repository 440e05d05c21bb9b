"""memcheck: every bad device pointer an API call refuses is also a report (with the call's stack), and a kernel's
illegal access is reported with its task and device address."""
import numpy as np
import pytest

import cnrt
from mlusim import sanitizer

from .kernels import count_into


def _refused(call, *args) -> str:
    with pytest.raises(cnrt.CnrtError) as caught:
        call(*args)
    return caught.value.kind


def test_each_pointer_fault_is_reported_where_it_was_made():
    with sanitizer.scope("memcheck") as found:
        x = cnrt.malloc(256)
        host = np.zeros(64, np.uint8)
        seen = [_refused(cnrt.memcpy, host, x + 250, 64, cnrt.cnrtMemcpyDevToHost),
                _refused(cnrt.memset, x - 8, 0, 4),
                _refused(cnrt.free, x + 16),
                _refused(cnrt.memcpy, host, 0, 64, cnrt.cnrtMemcpyDevToHost)]
        cnrt.free(x)
        seen += [_refused(cnrt.free, x), _refused(cnrt.memset, x, 0, 4)]
    assert seen == ["out_of_bounds", "negative_offset", "not_block_start", "null_pointer", "double_free",
                    "use_after_free"]
    assert [r.kind for r in found.errors] == seen
    assert all(r.raised and r.tool == "memcheck" for r in found.errors)
    assert found.errors[0].address == x + 250 and found.errors[1].address == x - 8
    assert all("test_memcheck.py" in r.text() for r in found.errors)


def test_faults_that_are_not_memory_errors_are_not_reported():
    with sanitizer.scope("memcheck") as found:
        assert _refused(cnrt.queueSync, "not a queue") == "handle"
        assert _refused(cnrt.malloc, -1) == "argument"
    assert found.reports == []


def test_an_element_access_out_of_bounds_names_the_task_and_address():
    with sanitizer.scope("memcheck") as found:
        queue = cnrt.queueCreate()
        out = cnrt.malloc(16 * 4)
        cnrt.memset(out, 0, 16 * 4)
        count_into[(32, 1, 1), cnrt.cnrtFuncTypeBlock, queue](out, 0)  # tasks 16.. reach past the end
        with pytest.raises(cnrt.CnrtError) as caught:
            cnrt.queueSync(queue)
    assert caught.value.code == cnrt.cnrtErrorKernelTrap
    report, = found.errors
    assert report.kind == "out_of_bounds" and report.task >= 16
    assert (report.address, report.size) == (out + 4 * report.task, 4)
    assert report.accesses[0].task == report.task and "coreId" in report.accesses[0].task_ids


def test_without_memcheck_the_error_is_raised_but_not_reported():
    with sanitizer.scope("racecheck") as found:
        with pytest.raises(cnrt.CnrtError):
            cnrt.free(12345)
    assert found.reports == []
