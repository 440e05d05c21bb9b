"""Fixtures of the mlusim.bang tests: a fresh MLU370-X4 and helpers to move arrays to and from it."""
import numpy as np
import pytest

import cnrt
import mlusim.device


@pytest.fixture
def board():
    """A freshly configured MLU370-X4 with 256 MiB of GDRAM; the default configuration afterwards."""
    devices = mlusim.device.configure(arch="MLU370-X4", memory=256 << 20)
    yield devices[0]
    mlusim.device.configure()


@pytest.fixture
def queue(board):
    q = cnrt.queueCreate()
    yield q


def to_device(array: np.ndarray) -> int:
    array = np.ascontiguousarray(array)
    ptr = cnrt.malloc(array.nbytes)
    cnrt.memcpy(ptr, array, array.nbytes, cnrt.cnrtMemcpyHostToDev)
    return ptr


def from_device(ptr: int, count: int, dtype) -> np.ndarray:
    out = np.empty(count, dtype)
    cnrt.memcpy(out, ptr, out.nbytes, cnrt.cnrtMemcpyDevToHost)
    return out
