"""Each test of the hardware core gets a fresh simulated machine (64 MiB per device), and the default one back."""
import pytest

from mlusim import device as devices


@pytest.fixture(autouse=True)
def fresh_devices():
    devices.configure(memory=64 << 20)
    yield
    devices.configure()
