"""Every cnnl op of the benchmark table refuses a stale pointer in each of its pointer arguments (inputs, outputs,
workspaces, pointer arrays), even when malloc/free/malloc of the same size has just taken the freed block's
capacity again: CNNL_STATUS_BAD_PARAM, kind use_after_free, naming the freed block, before anything is queued."""
import pytest

import cnnl
import cnrt
from mlusim import device as devices
from mlutools.bench import cases

OPS = [case for case in cases.CASES if case.function.startswith("cnnl")]

#: ops that take a pointer their case's arguments make them not read (not a use, so not refused)
UNREAD = {"cnnlMatMul_v2": "c, with beta 0", "cnnlPoolingBackward": "x, when y holds the forward's indices"}


def _shape(case):
    """The case's small shape scaled down, where its build and call take that (some need their own proportions)."""
    shape = tuple(max(2, n // 8) for n in case.shapes["small"])
    arena = cases.Arena()
    try:
        call, _ = case.build(arena, shape, case.dtypes[0])
        call()
    except cnnl.CnnlError:
        shape = case.shapes["small"]
    finally:
        arena.free()
    return shape


def _flat(values):
    for value in values:
        if isinstance(value, (list, tuple)):
            yield from _flat(value)
        else:
            yield value


def _python_name(function: str) -> str:
    return function[len("cnnl"):][:1].lower() + function[len("cnnl") + 1:]


@pytest.mark.parametrize("case", OPS, ids=lambda case: f"{case.op}-{case.function}")
def test_a_stale_pointer_in_any_argument_is_a_use_after_free(handle, monkeypatch, case):
    shape = _shape(case)
    first = cases.Arena()
    try:
        first.malloc(1)  # the pointers the build makes come after this one
        mark = len(first._pointers)
        case.build(first, shape, case.dtypes[0])
        made = len(first._pointers) - mark
    finally:
        first.free()
    name = _python_name(case.function)
    real, passed = getattr(cnnl, name), []
    monkeypatch.setattr(cnnl, name, lambda *args: (passed.append(args), real(*args))[1])
    refused = 0
    for index in range(made):
        arena = cases.Arena()
        try:
            call, _ = case.build(arena, shape, case.dtypes[0])
            arena.sync()
            old = arena._pointers[index]
            size = devices.owner_of(old).memory.block_at(old).size
            cnrt.free(old)
            arena._pointers[index] = fresh = cnrt.malloc(size)
            assert fresh != old
            submitted = arena.queue.submitted
            passed.clear()
            try:
                call()
            except cnnl.CnnlError as error:
                assert error.code == cnnl.CNNL_STATUS_BAD_PARAM and error.kind == "use_after_free", error
                assert "which cnrtFree freed" in str(error) and f"0x{old:x}" in str(error), error
                assert arena.queue.submitted == submitted, "the failed call queued work"
                refused += 1
            else:  # a buffer the build made for setup only, or one the op does not read
                assert passed, "a call that did not go through cnnl's public function accepted a stale pointer"
                assert old not in _flat(passed[-1]) or case.function in UNREAD, f"pointer {index} accepted"
            arena.sync()
        finally:
            arena.free()
    assert refused, "no pointer of the build reached the call"
