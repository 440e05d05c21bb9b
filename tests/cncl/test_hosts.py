"""Cliques across hosts: ranks on simulated hosts (network and mount namespaces, mlutools.hosts) that reach each
other over MPI, and through shared memory within a host. Every collective x dtype x op against numpy."""
import pytest

from mlutools import hosts as simulated
from tests.cncl.ranks import HostsClique

pytestmark = pytest.mark.child_processes

_why_not = simulated.available()
try:
    import mpi4py  # noqa: F401
except ImportError:
    _why_not = _why_not or "mpi4py is not installed (pip install 'mlusim[cluster]')"
if _why_not:
    pytest.skip(f"simulated hosts are not available here: {_why_not}", allow_module_level=True)

COUNTS = [0, 1, 7, 2053]


@pytest.fixture(scope="module")
def machines():
    with simulated.SimulatedHosts(3) as made:
        yield made


@pytest.fixture(scope="module", params=[[2, 2], [1, 1], [2, 1, 1]], ids=lambda layout: "x".join(map(str, layout)))
def clique(request, machines):
    runner = HostsClique(machines, request.param)
    yield runner
    assert runner.close() == 0, runner.text()
    for host in range(len(request.param)):
        left = machines.run(host, ["sh", "-c", "ls /dev/shm | grep mlusim-cncl"], stdout=-1).communicate()[0].split()
        assert left == [], f"host {host} kept {left}"


def test_ranks_of_a_host_share_memory_and_reach_the_others_over_mpi(clique):
    layout = clique.layout
    host_of = [host for host, count in enumerate(layout) for _ in range(count)]
    want = [(clique.hosts.names[host_of[rank]], [peer for peer in range(clique.world) if host_of[peer] != host_of[rank]])
            for rank in range(clique.world)]
    assert clique.run("placement") == want


@pytest.mark.parametrize("kind", ["allReduce", "reduce", "reduceScatter"])
def test_reductions(clique, kind):
    assert clique.run("reductions", kind, COUNTS, False) == [[]] * clique.world
    assert clique.run("reductions", kind, [5, 2053], True) == [[]] * clique.world


def test_all_reduce_two_phase_path(clique):
    assert clique.run("reductions", "allReduce", [5, 2053], False, None, None, 0) == [[]] * clique.world


@pytest.mark.parametrize("kind", ["broadcast", "bcast", "allGather", "alltoAll"])
def test_movements(clique, kind):
    assert clique.run("movements", kind, COUNTS, kind == "bcast") == [[]] * clique.world
    if kind in ("broadcast", "allGather", "alltoAll"):
        assert clique.run("movements", kind, [9, 2053], True) == [[]] * clique.world


def test_alltoallv(clique):
    assert clique.run("alltoallv", 1500) == [[]] * clique.world


def test_grouped_send_recv_patterns(clique):
    assert clique.run("grouped_patterns", 3000) == [[]] * clique.world


def test_soak_several_queues(clique):
    assert clique.run("soak", 30, 3, 129) == [[]] * clique.world
