"""Fixtures shared by the CNNL API test folders: a fresh simulated machine with small device memory, and a handle."""
import pytest

import cnnl
from mlusim import device as devices

SMALL_MEMORY = 512 << 20


@pytest.fixture(autouse=True)
def small_device():
    devices.configure(memory=SMALL_MEMORY)
    yield
    devices.configure()


@pytest.fixture
def handle():
    h = cnnl.create()
    yield h
    if not h.destroyed:
        cnnl.destroy(h)
