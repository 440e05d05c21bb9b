"""mlusim.hostpool: the host's cores, the shared pool, and the core slot a thread runs on."""
import os
import threading

import pytest

from mlusim import hostpool


def test_the_cpu_slot_names_the_core_the_thread_runs_on():
    if hostpool._read_cpu is None:
        assert hostpool.cpu_slot() is None
        return
    slot = hostpool.cpu_slot()
    cpus = sorted(os.sched_getaffinity(0))
    assert slot == cpus.index(hostpool._read_cpu()) % hostpool.host_cores()
    assert 0 <= slot < hostpool.host_cores()


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two CPUs and thread affinity")
def test_a_thread_held_on_one_cpu_gets_that_cpus_slot():
    cpus = sorted(os.sched_getaffinity(0))
    seen = {}

    def on(cpu):
        os.sched_setaffinity(0, {cpu})  # (0: this thread)
        seen[cpu] = hostpool.cpu_slot()

    for cpu in cpus[:2]:
        thread = threading.Thread(target=on, args=(cpu,))
        thread.start()
        thread.join()
    assert seen == {cpus[0]: 0, cpus[1]: 1 % hostpool.host_cores()}


def test_without_sched_getcpu_there_is_no_slot(monkeypatch):
    monkeypatch.setattr(hostpool, "_read_cpu", None)
    assert hostpool.cpu_slot() is None
