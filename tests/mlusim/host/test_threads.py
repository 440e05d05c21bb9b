"""mlusim.host.threads: the host's cores, the shared pool, the core slot a thread runs on, and the fork-join team."""
import os
import threading
import time

import numpy as np
import pytest

from mlusim.host import threads as host_threads


def test_the_cpu_slot_names_the_core_the_thread_runs_on():
    if host_threads._read_cpu is None:
        assert host_threads.cpu_slot() is None
        return
    slot = host_threads.cpu_slot()
    cpus = sorted(os.sched_getaffinity(0))
    assert slot == cpus.index(host_threads._read_cpu()) % host_threads.host_cores()
    assert 0 <= slot < host_threads.host_cores()


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two CPUs and thread affinity")
def test_a_thread_held_on_one_cpu_gets_that_cpus_slot():
    cpus = sorted(os.sched_getaffinity(0))
    seen = {}

    def on(cpu):
        os.sched_setaffinity(0, {cpu})  # (0: this thread)
        seen[cpu] = host_threads.cpu_slot()

    for cpu in cpus[:2]:
        thread = threading.Thread(target=on, args=(cpu,))
        thread.start()
        thread.join()
    assert seen == {cpus[0]: 0, cpus[1]: 1 % host_threads.host_cores()}


def test_without_sched_getcpu_there_is_no_slot(monkeypatch):
    monkeypatch.setattr(host_threads, "_read_cpu", None)
    assert host_threads.cpu_slot() is None


# ---- the fork-join team ---------------------------------------------------------------------------------------------

def _two_cores(monkeypatch):
    """A team of its own on a host of two cores."""
    monkeypatch.setattr(host_threads, "_cores", 2)
    return host_threads.Team()


def test_a_fork_runs_the_work_on_a_helper_thread_and_the_join_waits_for_it_to_spin_again(monkeypatch):
    team = _two_cores(monkeypatch)
    ran_on, progress = [], np.zeros(1, np.int64)

    def work():
        ran_on.append(threading.current_thread().name)
        progress[0] = 1

    forks = team.fork(work, 1)
    assert len(forks) == 1
    helper, generation = forks[0]
    team.join(forks, progress, 1, 5.0)
    assert ran_on == [helper.thread.name] and helper.thread is not threading.current_thread()
    assert helper.started == generation and team.counters[2 * helper.slot + 1] == generation  # back to spinning


def test_the_team_never_grows_beyond_one_helper_per_core_but_one(monkeypatch):
    team = _two_cores(monkeypatch)
    release = threading.Event()
    busy = team.fork(release.wait, 5)
    assert len(busy) == 1  # two cores: the caller and one helper
    assert team.fork(lambda: None, 1) == []  # that helper is busy: the caller does the work alone
    release.set()
    progress = np.ones(1, np.int64)
    team.join(busy, progress, 1, 5.0)
    deadline = time.perf_counter() + 5
    while not team.idle and time.perf_counter() < deadline:
        time.sleep(0.001)
    again = team.fork(lambda: None, 1)
    assert [helper for helper, _ in again] == [busy[0][0]]  # the same thread, its generation one higher
    assert again[0][1] == busy[0][1] + 1


def test_a_helper_lives_on_after_its_work_raised(monkeypatch):
    team = _two_cores(monkeypatch)
    done = threading.Event()

    def fail():
        raise RuntimeError("the work reports its own errors")

    progress = np.zeros(1, np.int64)
    forks = team.fork(fail, 1)
    deadline = time.perf_counter() + 5
    while not team.idle and time.perf_counter() < deadline:
        time.sleep(0.001)
    again = team.fork(done.set, 1)
    assert again and again[0][0] is forks[0][0]
    assert done.wait(5)
    team.join(again, progress, 0, 1.0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_starts_its_own_team():
    parent_team = host_threads.team()
    parent_team.fork(lambda: None, 1)
    pid = os.fork()
    if pid == 0:  # the child: none of the parent's helpers exist here
        code = 0 if host_threads._team is None and host_threads.team() is not parent_team else 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
