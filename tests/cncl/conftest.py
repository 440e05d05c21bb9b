"""Fixtures shared by the cncl tests: two communicators of one process (devices 0 and 1), destroyed afterwards
unless a test did."""
import pytest

import cncl
from mlusim import device as devices


def _two_communicators(ranks: list):
    devices.configure(memory=64 << 20, device_count=2)
    made = cncl.initComms(2, [0, 1], ranks, 2, None)
    yield made
    live = [comm for comm in made if not comm.destroyed]
    cncl.destroyComms(live, len(live))
    devices.configure()


@pytest.fixture
def pair():
    """Devices 0 and 1 hold ranks 0 and 1."""
    yield from _two_communicators([0, 1])


@pytest.fixture
def comms():
    """Devices 0 and 1 hold ranks 1 and 0 (so that device and rank differ)."""
    yield from _two_communicators([1, 0])
