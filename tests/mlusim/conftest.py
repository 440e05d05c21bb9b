"""Each test of the hardware core gets a fresh simulated machine (64 MiB per device), and the default one back;
`board` / `queue` give a fresh MLU370-X4 instead, and helpers move arrays to and from it."""
import numpy as np
import pytest

import cnrt
from mlusim import device as devices


@pytest.fixture(autouse=True)
def fresh_devices():
    devices.configure(memory=64 << 20)
    yield
    devices.configure()


@pytest.fixture
def board():
    """A freshly configured MLU370-X4 with 256 MiB of GDRAM; the default configuration afterwards."""
    configured = devices.configure(arch="MLU370-X4", memory=256 << 20)
    yield configured[0]
    devices.configure()


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
