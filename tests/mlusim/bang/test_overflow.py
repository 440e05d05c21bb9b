"""Bounds, capacity and shape checks cannot be fooled by sizes, offsets and products near 2^31, 2^32 and 2^63: every
launch either does exactly what is in range or traps, never crashes, and never writes into another allocation (the
shared GDRAM arena of `mlusim run` puts blocks side by side). In compiled and in debug mode."""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import cnrt
from mlusim.host import sharedmem

from ..conftest import from_device, to_device
from .robust_kernels import TILE, bounce, matmul_of, nram_of, poke, scatter_segments, transpose_of

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
EDGES = (0, 1, 7, 4096, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**40, 2**62, 2**63 - 1,
         -1, -4096, -2**31, -2**32, -2**62, -2**63)


def _near_edges(low=INT64_MIN, high=INT64_MAX):
    """int64 values at and around the boundaries where checks overflow."""
    return st.builds(lambda base, delta: max(low, min(high, base + delta)), st.sampled_from(EDGES),
                     st.integers(-3, 3))


#: the fixtures (board, queue, mode) hold for every example; each example frees what it allocates
def examples(count: int) -> settings:
    return settings(max_examples=count, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

BLOCK = 1 << 16  # arena-sized blocks: with sharing on they sit next to each other in one mapping


def _mode(request, board, monkeypatch):
    monkeypatch.setitem(sharedmem._state, "enabled", sharedmem._SUPPORTED)
    for kernel in (poke, bounce, scatter_segments, nram_of, transpose_of, matmul_of):
        monkeypatch.setattr(kernel, "debug", request.param == "debug")
    return request.param


@pytest.fixture(params=["compiled", "debug"])
def mode(request, board, monkeypatch):
    """Blocks in the shared arena (as under `mlusim run`); the kernels in compiled or debug mode (where pointer
    arithmetic is Python's, with unbounded integers)."""
    return _mode(request, board, monkeypatch)


@pytest.fixture(params=["compiled"])
def compiled(request, board, monkeypatch):
    """As `mode`, compiled only: shape checks are the same code in both modes."""
    return _mode(request, board, monkeypatch)


def _neighbours():
    """Three adjacent blocks: the target in the middle, guarded on both sides."""
    before = to_device(np.full(BLOCK, 0xA5, np.uint8))
    target = to_device(np.arange(BLOCK, dtype=np.uint64).astype(np.uint8))
    after = to_device(np.full(BLOCK, 0x5A, np.uint8))
    return before, target, after


def _launch(queue, kernel, *args):
    """Run a one-task launch; None when it succeeded, else the error (always a kernel trap)."""
    kernel[(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](*args)
    try:
        cnrt.queueSync(queue)
        return None
    except cnrt.CnrtError as error:
        assert error.code == cnrt.cnrtErrorKernelTrap, error
        return error


def _assert_guards(before, after, target):
    assert (from_device(before, BLOCK, np.uint8) == 0xA5).all(), "a kernel wrote into the block before its target"
    assert (from_device(after, BLOCK, np.uint8) == 0x5A).all(), "a kernel wrote into the block after its target"
    for pointer in (before, target, after):
        cnrt.free(pointer)


@examples(25)
@given(index=_near_edges())
def test_scalar_store_at_any_index(mode, queue, index):
    before, target, after = _neighbours()
    original = from_device(target, BLOCK, np.uint8)
    error = _launch(queue, poke, target, index, 200)
    expected = original.copy()
    if 0 <= index < BLOCK:
        assert error is None
        expected[index] = 200
    else:
        assert error is not None and "'x'" in str(error)
    assert (from_device(target, BLOCK, np.uint8) == expected).all()
    _assert_guards(before, after, target)


@examples(25)
@given(offset=_near_edges(), nbytes=_near_edges())
def test_copy_of_any_offset_and_size(mode, queue, offset, nbytes):
    before, target, after = _neighbours()
    original = from_device(target, BLOCK, np.uint8)
    error = _launch(queue, bounce, target, offset, nbytes)
    if 0 <= offset and 0 <= nbytes <= TILE and offset + nbytes <= BLOCK:  # (sizes beyond int32 trap as well)
        assert error is None
    else:
        assert error is not None
    assert (from_device(target, BLOCK, np.uint8) == original).all()
    _assert_guards(before, after, target)


@examples(25)
@given(size=_near_edges(high=TILE), stride=_near_edges(), segnum=_near_edges())
def test_strided_copy_of_any_stride_and_segment_count(compiled, queue, size, stride, segnum):
    assume(stride != 0 or not 0 <= segnum <= 2**31)  # 2^31 in-range segments at one place are slow, not wrong
    before, target, after = _neighbours()
    error = _launch(queue, scatter_segments, target, size, stride, segnum)
    last = segnum * stride  # exact (Python ints): the first and the last segment bound all the others
    fits = (0 <= size and 0 <= segnum < 2**31 and -2**31 <= stride < 2**31
            and min(0, last) >= 0 and max(0, last) + size <= BLOCK)
    assert (error is None) == fits, (size, stride, segnum, error)
    _assert_guards(before, after, target)


@examples(20)
@given(count=_near_edges())
def test_nram_buffer_of_any_count(compiled, queue, count):
    error = _launch(queue, nram_of, count)
    usable = 768 * 1024 - 128 * 1024  # MLU370 NRAM minus the stack reserve
    if 0 < count and count * 4 <= usable:
        assert error is None
    else:
        assert error is not None and "'big'" in str(error)


@examples(20)
@given(height=_near_edges(), width=_near_edges())
def test_transpose_of_any_shape(compiled, queue, height, width):
    error = _launch(queue, transpose_of, height, width)
    if 0 <= height and 0 <= width and height * width <= 1024:
        assert error is None
    else:
        assert error is not None and "transpose" in str(error)


@examples(20)
@given(m=_near_edges(), k=_near_edges(), n=_near_edges())
def test_matmul_of_any_shape(compiled, queue, m, k, n):
    error = _launch(queue, matmul_of, m, k, n)
    if min(m, k, n) >= 0 and m * n <= 1024 and m * k <= 1024 and k * n <= 1024 and m * k * n < 2**24:
        assert error is None
    elif min(m, k, n) < 0 or m * n > 1024 or m * k > 1024 or k * n > 1024:
        assert error is not None and "matmul" in str(error)
