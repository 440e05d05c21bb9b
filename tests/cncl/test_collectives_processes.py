"""Every collective x dtype x op against numpy, with 2, 3 and 4 rank processes (shared-memory transport).
The rank processes live for the whole module; each test runs one task on all of them."""
import pytest

from tests.cncl.ranks import ProcessClique, shm_entries

pytestmark = pytest.mark.child_processes  # rank processes

COUNTS = [0, 1, 7, 2053]


@pytest.fixture(scope="module", params=[2, 3, 4], ids=lambda n: f"{n}proc")
def clique(request):
    before = shm_entries()
    runner = ProcessClique(request.param)
    assert shm_entries() == before, "the clique segment must be unlinked once every rank joined"
    yield runner
    runner.close()
    assert all(process.exitcode == 0 for process in runner.processes)
    assert shm_entries() == before


@pytest.mark.parametrize("kind", ["allReduce", "reduce", "reduceScatter"])
def test_reductions(clique, kind):
    assert clique.run("reductions", kind, COUNTS, False) == [[]] * clique.world
    assert clique.run("reductions", kind, [5, 2053], True) == [[]] * clique.world


def test_all_reduce_two_phase_path(clique):
    assert clique.run("reductions", "allReduce", [5, 2053], False, None, None, 0) == [[]] * clique.world


@pytest.mark.parametrize("kind", ["broadcast", "bcast", "allGather", "alltoAll"])
def test_movements(clique, kind):
    assert clique.run("movements", kind, COUNTS, kind == "bcast") == [[]] * clique.world
    if kind in ("broadcast", "allGather"):
        assert clique.run("movements", kind, [9, 2053], True) == [[]] * clique.world


def test_alltoallv(clique):
    assert clique.run("alltoallv", 1500) == [[]] * clique.world


def test_grouped_send_recv_patterns(clique):
    assert clique.run("grouped_patterns", 3000) == [[]] * clique.world


def test_soak_several_queues(clique):
    assert clique.run("soak", 100, 3, 129) == [[]] * clique.world



def test_several_ranks_per_process():
    import multiprocessing

    import cncl
    from tests.cncl.ranks import TEST_ENV, several_ranks_per_process

    before = shm_entries()
    context = multiprocessing.get_context("spawn")
    clique = cncl.getCliqueId().hex()
    pipes, processes = [], []
    for index in range(2):
        mine, theirs = context.Pipe()
        process = context.Process(target=several_ranks_per_process, args=(index, 2, 2, clique, TEST_ENV, theirs))
        process.start()
        pipes.append(mine)
        processes.append(process)
    results = [pipe.recv() if pipe.poll(60) else ("error", "no answer") for pipe in pipes]
    for process in processes:
        process.join(timeout=20)
    assert results == [("ok", []), ("ok", [])]
    assert shm_entries() == before
