"""Every CNNL test gets a fresh simulated machine with small device memory; API tests take a handle on it."""
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
