"""Each test of the tools gets a fresh simulated machine (256 MiB per device: the bench cases need it), and the
default one back afterwards."""
import pytest

from mlusim import device as devices


@pytest.fixture(autouse=True)
def fresh_devices():
    devices.configure(memory=256 << 20)
    yield
    devices.configure()


@pytest.fixture
def two_devices():
    return devices.configure(memory=256 << 20, device_count=2)
