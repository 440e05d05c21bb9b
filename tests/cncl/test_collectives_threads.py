"""Every collective x dtype x op against numpy, with 2, 3 and 4 devices of one process (one thread per rank)."""
import pytest

from cncl import algorithms

from tests.cncl.ranks import ThreadClique

COUNTS = [0, 1, 7, 1000, 2053]  # 2053 elements cross several 4 KiB message slots, unevenly


@pytest.fixture(scope="module", params=[2, 3, 4], ids=lambda n: f"{n}dev")
def clique(request):
    runner = ThreadClique(request.param)
    yield runner
    runner.close()


@pytest.mark.parametrize("in_place", [False, True], ids=["out_of_place", "in_place"])
@pytest.mark.parametrize("kind", ["allReduce", "reduce", "reduceScatter"])
def test_reductions(clique, kind, in_place):
    assert clique.run("reductions", kind, COUNTS, in_place) == [[]] * clique.world


def test_all_reduce_two_phase_path(clique, monkeypatch):
    # a direct limit of 0 sends every allReduce through reduce-scatter + all-gather; set here, once for the rank
    # threads (each rank saving and restoring the shared module's limit raced: one could restore another's 0)
    monkeypatch.setattr(algorithms, "DIRECT_ALL_REDUCE_BYTES", 0)
    assert clique.run("reductions", "allReduce", [5, 2053], False) == [[]] * clique.world


@pytest.mark.parametrize("in_place", [False, True], ids=["out_of_place", "in_place"])
@pytest.mark.parametrize("kind", ["broadcast", "allGather", "alltoAll"])
def test_movements(clique, kind, in_place):
    assert clique.run("movements", kind, COUNTS, in_place) == [[]] * clique.world


def test_bcast(clique):
    assert clique.run("movements", "bcast", COUNTS, True) == [[]] * clique.world


def test_alltoallv(clique):
    assert clique.run("alltoallv", 1500) == [[]] * clique.world


def test_grouped_send_recv_patterns(clique):
    assert clique.run("grouped_patterns", 3000) == [[]] * clique.world


def test_soak_several_queues(clique):
    assert clique.run("soak", 60, 3, 257) == [[]] * clique.world


def test_modelled_time_feeds_the_device_clock(clique):
    from cncl import timing
    from cncl.channel import ALL_REDUCE
    from mlusim import device as devices

    count = 1 << 16
    results = clique.run("modelled_duration", count)
    model = timing.collective_us(devices.get(0).spec, ALL_REDUCE, count * 4, clique.world)
    for duration_us, elapsed_ms in results:
        assert duration_us >= model * 0.999
        assert elapsed_ms >= 0
