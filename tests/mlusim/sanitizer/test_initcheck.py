"""initcheck: work that uses bytes nothing wrote is reported (ops, kernels, collectives); copies carry the bytes'
state; a word counts as written once any of its bytes was."""
import numpy as np
import pytest

import cnnl
import cnrt
from mlusim import sanitizer

from .helpers import kinds, upload
from .kernels import scale_slices

N = 256


def _abs(handle, x: int, y: int, count: int = N) -> None:
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [count])
    cnnl.abs(handle, desc, x, desc, y)
    cnnl.destroyTensorDescriptor(desc)


@pytest.fixture
def handle():
    h = cnnl.create()
    yield h
    cnnl.destroy(h)


def test_an_op_reading_unwritten_input_is_reported(handle):
    with sanitizer.scope("initcheck") as found:
        x, y = cnrt.malloc(N * 4), cnrt.malloc(N * 4)
        cnrt.memset(x, 0, N * 2)          # only the first half
        _abs(handle, x, y)
        cnrt.syncDevice()
    assert kinds(found) == [("initcheck", "uninitialized_read")]
    report = found.errors[0]
    assert (report.address, report.size) == (x + N * 2, N * 2)
    assert report.accesses[0].command == "cnnlAbs"


def test_what_the_op_wrote_may_be_read(handle):
    with sanitizer.scope("initcheck") as found:
        x, y, z = upload(np.ones(N, np.float32)), cnrt.malloc(N * 4), cnrt.malloc(N * 4)
        _abs(handle, x, y)
        _abs(handle, y, z)
        cnrt.syncDevice()
    assert kinds(found) == []


def test_a_word_counts_as_written_once_any_of_its_bytes_is(handle):
    with sanitizer.scope("initcheck") as found:
        x, y = cnrt.malloc(16), cnrt.malloc(16)
        cnrt.memsetD8(x, 1, 1)            # byte 0: word 0 counts as written
        _abs(handle, x, y, 1)
        _abs(handle, x + 4, y, 1)         # word 1 was not
        cnrt.syncDevice()
    assert kinds(found) == [("initcheck", "uninitialized_read")]
    assert found.errors[0].address == x + 4


def test_copies_carry_the_state_of_their_bytes(handle):
    with sanitizer.scope("initcheck") as found:
        x, y, z, out = (cnrt.malloc(N * 4) for _ in range(4))
        cnrt.memset(x, 0, N * 4)
        cnrt.memcpy(y + 4, x, N * 2, cnrt.cnrtMemcpyDevToDev)    # y: bytes 4 .. N*2+4 written
        host = np.empty(N, np.float32)
        cnrt.memcpy(host, z, N * 4, cnrt.cnrtMemcpyDevToHost)    # copying unwritten bytes out is no error
        cnrt.memcpy(out, z, N * 4, cnrt.cnrtMemcpyDevToDev)       # nor is carrying them along
        _abs(handle, y + 4, x, N // 2)                           # what the copy wrote
        _abs(handle, out, x)                                     # unwritten bytes carried into `out`
        cnrt.syncDevice()
    assert kinds(found) == [("initcheck", "uninitialized_read")]
    assert found.errors[0].address == out


def test_a_kernel_reads_only_what_was_written():
    with sanitizer.scope("initcheck") as found:
        queue = cnrt.queueCreate()
        x = cnrt.malloc(4 * 256 * 4)
        cnrt.memset(x, 0, 3 * 256 * 4)    # the last task's slice stays unwritten
        y = cnrt.malloc(4 * 256 * 4)
        scale_slices[(4, 1, 1), cnrt.cnrtFuncTypeBlock, queue](x, y, 256)
        scale_slices[(4, 1, 1), cnrt.cnrtFuncTypeBlock, queue](y, x, 256)  # y was written by the first launch
        cnrt.queueSync(queue)
    assert kinds(found) == [("initcheck", "uninitialized_read")]
    assert (found.errors[0].address, found.errors[0].size) == (x + 3 * 256 * 4, 256 * 4)


@pytest.mark.mlusim_sanitize("off")  # initcheck must not run before the scope
def test_blocks_allocated_before_initcheck_ran_are_not_watched(handle, process_sanitizer):
    sanitizer.disable()
    x, y = cnrt.malloc(N * 4), cnrt.malloc(N * 4)
    with sanitizer.scope("initcheck") as found:
        _abs(handle, x, y)
        cnrt.syncDevice()
    assert kinds(found) == []
