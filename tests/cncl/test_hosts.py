"""Cliques across hosts: ranks on simulated hosts (network and mount namespaces, mlutools.hosts) that reach each
other over MPI, and through shared memory within a host. Every collective x dtype x op against numpy."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import cncl
from mlutools import hosts as simulated
from tests.cncl.ranks import TEST_ENV, HostsClique

pytestmark = pytest.mark.child_processes

if simulated.mpi_unavailable():
    pytest.skip(f"simulated hosts are not available here: {simulated.mpi_unavailable()}", allow_module_level=True)

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
    want = [(clique.hosts.names[host_of[rank]],
             [peer for peer in range(clique.world) if host_of[peer] != host_of[rank]]) for rank in range(clique.world)]
    assert clique.run("placement") == want


@pytest.mark.parametrize("kind", ["allReduce", "reduce", "reduceScatter"])
def test_reductions(clique, kind):
    assert clique.run("reductions", kind, COUNTS, False) == [[]] * clique.world
    assert clique.run("reductions", kind, [5, 2053], True) == [[]] * clique.world


@pytest.mark.parametrize("in_place", [False, True], ids=["out_of_place", "in_place"])
def test_all_reduce_in_stages_for_large_buffers(clique, in_place):
    # float32 560 KB and half 280 KB go in stages on layouts with as many ranks on every host, int8 140 KB does not
    codes = [cncl.cnclFloat, cncl.cnclHalf, cncl.cnclInt8]
    assert clique.run("reductions", "allReduce", [140001], in_place, codes) == [[]] * clique.world


def test_messages_larger_than_the_inline_limit_in_place(machines):
    # 1 MiB slots: payloads go as messages of their own, which in-place operations overwrite while they travel
    clique = HostsClique(machines, [2, 2], env={"MLUSIM_CNCL_SLOT_BYTES": str(1 << 20)})
    try:
        codes = [cncl.cnclFloat]
        for in_place in (False, True):
            assert clique.run("reductions", "allReduce", [30001, 300001], in_place, codes, [cncl.cnclSum]) == \
                [[]] * clique.world
            assert clique.run("movements", "alltoAll", [30001], in_place, codes) == [[]] * clique.world
        assert clique.run("movements", "broadcast", [300001], True, codes) == [[]] * clique.world
        assert clique.run("reductions", "reduceScatter", [30001], True, codes, [cncl.cnclMax]) == [[]] * clique.world
    finally:
        assert clique.close() == 0, clique.text()


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


def test_modelled_time_is_that_of_the_network(clique):
    from cncl import timing
    from cncl.channel import ALL_REDUCE
    from mlusim import arch

    count = 1 << 16
    spec = arch.board(arch.DEFAULT_BOARD)
    across = timing.collective_us(spec, ALL_REDUCE, count * 4, clique.world, len(clique.layout))
    assert across > timing.collective_us(spec, ALL_REDUCE, count * 4, clique.world)
    for duration_us, _ in clique.run("modelled_duration", count):
        assert across * 0.999 <= duration_us < across * 3


def test_small_all_reduces_run_in_the_calling_thread_and_hand_over_to_the_queue_when_a_peer_is_late(machines):
    # two rounds (netpath.py): a peer 50 ms late makes the others hand their call to the queue; the calls behind it
    # go on the queue too, while the late rank runs its own in its thread: the messages are the same either way
    clique = HostsClique(machines, [2, 2])
    try:
        late = clique.run("lean_rounds", 100, 12, 3, 0.05)  # (4 ** 12 still fits in the int32 sums)
        prompt = clique.run("lean_rounds", 100, 12, -1, 0.0)
    finally:
        assert clique.close() == 0, clique.text()
    for failures, stats in late + prompt:
        assert failures == []
        assert sum(stats.values()) == 12
    assert sum(stats["handed_over"] for _, stats in late) >= 1, late
    assert all(stats["inline"] >= 1 for _, stats in prompt), prompt


def test_soak_several_queues(clique):
    assert clique.run("soak", 30, 3, 129) == [[]] * clique.world


# ---- faults across hosts ---------------------------------------------------------------------------------------
# hydra's default is to end the whole job when one process dies, and UCX ends a process whose connected peer died
# (its keepalive); -disable-auto-cleanup and UCX_KEEPALIVE_INTERVAL=inf leave the others running, so that what cncl
# itself does about the loss shows.

FAULT_ENV = {"MLUSIM_CNCL_TIMEOUT": "3", "UCX_KEEPALIVE_INTERVAL": "inf"}
KEEP_GOING = ("-disable-auto-cleanup",)


def _failures(clique, ranks, task=("all_reduce_expecting_failure", (1000,))):
    for rank in ranks:
        clique.connections[rank].send(task)


def _answers(clique, ranks, timeout=20.0):
    answers = []
    for rank in ranks:
        assert clique.connections[rank].poll(timeout), f"rank {rank} did not answer within {timeout} s"
        try:
            status, value = clique.connections[rank].recv()
        except EOFError:
            raise AssertionError(f"rank {rank} ended:\n{clique.text()}") from None
        assert status == "ok", value
        answers.append(value)
    return answers


def _stop(clique):
    for rank in range(clique.world):
        try:
            os.kill(clique.pids[rank], signal.SIGKILL)
        except ProcessLookupError:
            pass
    clique.close()


@pytest.mark.parametrize("how", ["normal_exit", "abort"])
def test_a_rank_that_leaves_on_the_other_host_fails_every_peer_fast_naming_it(machines, how):
    clique = HostsClique(machines, [2, 2], env=FAULT_ENV, options=KEEP_GOING)
    try:
        _failures(clique, [0, 1, 2])
        time.sleep(0.3)
        lost = time.monotonic()
        if how == "normal_exit":
            clique.connections[3].send(("exit_like_the_interpreter", ()))
        else:
            clique.connections[3].send(("abort_after", (0.0,)))
        answers = _answers(clique, [0, 1, 2])
        waited = time.monotonic() - lost
    finally:
        _stop(clique)
    words = {"normal_exit": "is gone", "abort": "aborted"}[how]
    for seconds, text, async_error in answers[:2]:
        assert "CNCL_RET_ERR_SYSTEM" in text and f"rank 3 on host {machines.names[1]}" in text, text
        assert words in text, text
        assert async_error == cncl.CNCL_RET_ASYNC_ERROR
    assert "rank 3" in answers[2][1] and words in answers[2][1], answers[2]  # its neighbour, over shared memory
    assert waited < 2.0, f"the peers noticed the lost rank only after {waited:.2f} s"


def test_a_killed_rank_ends_or_fails_the_other_hosts_within_the_timeout(machines):
    # MPICH's process manager kills the other ranks of the host of a rank that died (they cannot tell anyone), and
    # MPICH may end a process whose MPI calls meet the dead one: a surviving rank fails at its timeout naming the
    # host; either way nothing hangs
    clique = HostsClique(machines, [2, 2], env=FAULT_ENV, options=KEEP_GOING)
    try:
        _failures(clique, [0, 1, 2])
        time.sleep(0.3)
        killed = time.monotonic()
        os.kill(clique.pids[3], signal.SIGKILL)
        outcomes = []
        for rank in (0, 1):
            assert clique.connections[rank].poll(3 + 5), f"rank {rank} neither failed nor ended"
            try:
                outcomes.append(clique.connections[rank].recv())
            except EOFError:
                outcomes.append(("ended", None))
        waited = time.monotonic() - killed
    finally:
        _stop(clique)
    assert waited < 3 + 5
    for status, value in outcomes:
        if status == "ok":
            seconds, text, async_error = value
            assert "CNCL_RET_ERR_SYSTEM" in text and f"on host {machines.names[1]}" in text, text
            assert "timed out after 3 s" in text or "died" in text, text
            assert async_error == cncl.CNCL_RET_ASYNC_ERROR


def test_a_rank_that_stops_answering_fails_its_peers_at_the_timeout(machines):
    clique = HostsClique(machines, [1, 1], env=FAULT_ENV, options=KEEP_GOING)
    try:
        os.kill(clique.pids[1], signal.SIGSTOP)
        _failures(clique, [0])
        (seconds, text, async_error), = _answers(clique, [0])
    finally:
        _stop(clique)
    assert f"timed out after 3 s waiting for rank 1 on host {machines.names[1]}" in text, text
    assert 2.9 < seconds < 6, seconds


def test_mismatched_calls_across_hosts_are_reported_on_every_rank(machines):
    clique = HostsClique(machines, [1, 1], env=FAULT_ENV, options=KEEP_GOING)
    try:
        for rank, count in enumerate([100, 101]):
            clique.connections[rank].send(("all_reduce_expecting_failure", (count,)))
        answers = _answers(clique, [0, 1])
    finally:
        _stop(clique)
    for seconds, text, async_error in answers:
        assert "CNCL_RET_ERR" in text and seconds < 2, text
        assert async_error == cncl.CNCL_RET_ASYNC_ERROR
    assert any("mismatched calls" in text and "count=100" in text and "count=101" in text
               for _, text, _ in answers), answers


def test_a_lost_host_ends_the_job_without_a_hang_or_leftovers():
    with simulated.SimulatedHosts(2) as machines:  # its own: one of them is lost
        clique = HostsClique(machines, [2, 2])
        _failures(clique, [0, 1])
        time.sleep(0.3)
        machines.power_off(1)
        status = clique.launcher.wait(20)
        left = machines.run(0, ["sh", "-c", "ls /dev/shm | grep mlusim-cncl"], stdout=-1).communicate()[0].split()
    assert status != 0
    for rank in (0, 1):
        assert clique.connections[rank].poll(5)
        with pytest.raises(EOFError):  # hydra ended the processes of host 0 too
            clique.connections[rank].recv()
    assert left == []


# ---- launchers ---------------------------------------------------------------------------------------------------

LAUNCHED = textwrap.dedent("""
    import os, socket
    import numpy as np
    import cncl, cnrt
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    comm, = cncl.initComms(1, [0], [rank], world, cncl.cnclCliqueId.from_env())
    buffer = cnrt.malloc(4 * 3000)
    cnrt.memcpy(buffer, np.full(3000, rank + 1, np.float32), 4 * 3000, cnrt.cnrtMemcpyHostToDev)
    cncl.allReduce(buffer, buffer, 3000, cncl.cnclFloat, cncl.cnclSum, comm, None)
    cnrt.syncDevice()
    out = np.empty(3000, np.float32)
    cnrt.memcpy(out, buffer, 4 * 3000, cnrt.cnrtMemcpyDevToHost)
    print(f"host={socket.gethostname()} local={os.environ['LOCAL_RANK']}/{os.environ['LOCAL_WORLD_SIZE']} "
          f"master={os.environ['MASTER_ADDR']} sum={out.min():g}-{out.max():g}")
    cncl.destroyComms([comm], 1)
""")

MPI_PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    from mpi4py import MPI
    import cncl, cnrt
    world = MPI.COMM_WORLD
    clique = world.bcast(bytes(cncl.getCliqueId()) if world.rank == 0 else None, root=0)
    comm, = cncl.initComms(1, [0], [world.rank], world.size, clique)
    n = 100000
    data = np.arange(n, dtype=np.float32) * (world.rank + 1)  # sums exact in float32 in any order
    buffer = cnrt.malloc(4 * n)
    cnrt.memcpy(buffer, data, 4 * n, cnrt.cnrtMemcpyHostToDev)
    cncl.allReduce(buffer, buffer, n, cncl.cnclFloat, cncl.cnclSum, comm, None)
    cnrt.syncDevice()
    out = np.empty(n, np.float32)
    cnrt.memcpy(out, buffer, 4 * n, cnrt.cnrtMemcpyDevToHost)
    mine = np.empty(n, np.float32)
    world.Allreduce(data, mine)
    sys.stdout.write(f"same as MPI_Allreduce: {np.array_equal(out, mine)} "
                     f"remote: {sorted(comm.fabric.network.remote)}\\n")
    cncl.destroyComms([comm], 1)
""")


def _in_host(machines, command, timeout=120):
    done = machines.run(0, command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                        env={**os.environ, **TEST_ENV})
    out, err = done.communicate(timeout=timeout)
    return done.returncode, out, err


def test_mlusim_run_spreads_ranks_over_hosts(machines, tmp_path):
    script = tmp_path / "job.py"
    script.write_text(LAUNCHED)
    hosts = f"{machines.names[0]}:2,{machines.names[1]}:2"
    status, out, err = _in_host(machines, [sys.executable, "-m", "mlutools.run", "-n", "4", "--hosts", hosts,
                                           "--launcher-exec", machines.launcher, str(script)])
    assert status == 0, err
    want = [f"[rank {rank}] host={machines.names[rank // 2]} local={rank % 2}/2 master={machines.names[0]} "
            f"sum=10-10" for rank in range(4)]
    assert sorted(out.splitlines()) == want, out + err


def test_mlusim_run_over_hosts_fails_with_a_failing_rank(machines, tmp_path):
    script = tmp_path / "job.py"
    script.write_text("import os, sys\nsys.exit(3 if os.environ['RANK'] == '2' else 0)\n")
    status, out, err = _in_host(machines, [sys.executable, "-m", "mlutools.run", "-n", "2", "--hosts",
                                           f"{machines.names[0]}:1,{machines.names[1]}:1", "--launcher-exec",
                                           machines.launcher, str(script)])
    assert status == 0  # rank 2 does not exist: both ranks succeed
    status, out, err = _in_host(machines, [sys.executable, "-m", "mlutools.run", "-n", "3", "--hosts",
                                           f"{machines.names[0]}:1,{machines.names[1]}:2", "--launcher-exec",
                                           machines.launcher, str(script)])
    assert status == 3, (status, out, err)


def test_a_plain_mpiexec_program_builds_its_clique_across_hosts(machines, tmp_path):
    program = tmp_path / "prog.py"
    program.write_text(MPI_PROGRAM)
    status, out, err = _in_host(machines, machines.mpiexec([1, 2], [sys.executable, str(program)]))
    assert status == 0, err
    assert sorted(out.splitlines()) == ["same as MPI_Allreduce: True remote: [0]"] * 2 + \
        ["same as MPI_Allreduce: True remote: [1, 2]"], out
