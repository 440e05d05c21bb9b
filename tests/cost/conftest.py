"""Each cost test gets a fresh simulated machine (256 MiB per device) and the default one back afterwards."""
import pytest

from mlusim import device as devices


@pytest.fixture(autouse=True)
def fresh_devices():
    devices.configure(memory=256 << 20)
    yield
    devices.configure()
