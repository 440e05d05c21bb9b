"""Each runtime test gets a fresh simulated machine (64 MiB per device), and the default one back afterwards."""
import pytest

from mlusim import device as devices

SMALL_MEMORY = 64 << 20


@pytest.fixture(autouse=True)
def fresh_devices():
    devices.configure(memory=SMALL_MEMORY)
    yield
    devices.configure()


@pytest.fixture
def two_devices():
    return devices.configure(memory=SMALL_MEMORY, device_count=2)


@pytest.fixture
def blocking():
    return devices.configure(memory=SMALL_MEMORY, blocking=True)
