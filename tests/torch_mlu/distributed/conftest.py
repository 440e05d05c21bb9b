"""Rank processes shared by the torch.distributed tests of a session (starting torch in a process costs seconds)."""
import pytest

pytest.importorskip("torch")

from tests.torch_mlu.distributed.ranks import Ranks  # noqa: E402


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
