"""Rank processes shared by the torch.distributed tests of a session (starting torch in a process costs seconds)."""
import pytest

pytest.importorskip("torch")

import torch_mlu.distributed  # noqa: E402

from tests.torch_mlu.distributed.ranks import Ranks  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def built_backend():
    """The C++ part of the backend, built here once (about a minute the first time), not by racing rank processes
    under their reply timeouts."""
    torch_mlu.distributed.native()


@pytest.fixture(scope="session")
def two_ranks():
    ranks = Ranks(2)
    yield ranks
    ranks.close()
    assert all(process.exitcode == 0 for process in ranks.processes)


@pytest.fixture(scope="session")
def four_ranks():
    ranks = Ranks(4)
    yield ranks
    ranks.close()
    assert all(process.exitcode == 0 for process in ranks.processes)
