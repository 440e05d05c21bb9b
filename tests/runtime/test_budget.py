"""The host-wide memory budget: shared by the processes of the host, reclaimed from processes that died, bounded by
the cgroup limit, and counting pinned host memory."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import cnrt
from mlusim import hostmem, memory
from mlusim.host import budget

from .helpers import raises_code

MiB = 1 << 20


def _holder(path: str, limit: int, nbytes: int) -> subprocess.Popen:
    """Another process that takes `nbytes` of a budget shared through `path`, says so, and waits."""
    code = textwrap.dedent(f"""
        import sys, time
        from mlusim.host.budget import HostBudget
        budget = HostBudget(limit={limit}, table_path={path!r})
        print(budget.take({nbytes}), flush=True)
        sys.stdin.read()
    """)
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)
    assert process.stdout.readline().strip() == "True"
    return process


def test_processes_share_one_budget_and_a_dead_process_holds_nothing(tmp_path):
    path = str(tmp_path / "budget")
    limit = 1000 * MiB
    other = _holder(path, limit, 700 * MiB)
    try:
        mine = budget.HostBudget(limit=limit, table_path=path)
        assert not mine.take(400 * MiB), "two processes together committed more than the host-wide limit"
        assert mine.take(250 * MiB)
        assert mine.shared_total() >= 950 * MiB
        other.send_signal(signal.SIGKILL)
        other.wait(10)
        assert mine.take(600 * MiB), "a killed process still held its share of the budget"
    finally:
        other.kill()
        other.wait(10)


def test_small_allocations_are_served_from_a_reservation_and_given_back(tmp_path):
    mine = budget.HostBudget(limit=10_000 * MiB, table_path=str(tmp_path / "budget"))
    for _ in range(100):
        assert mine.take(MiB)
    assert mine.used == 100 * MiB and mine.shared_total() == mine.reserved >= mine.used
    for _ in range(100):
        mine.give(MiB)
    assert mine.used == 0 and mine.reserved <= 2 * budget.CHUNK_BYTES


def test_the_limit_follows_a_lower_cgroup_limit(tmp_path):
    (tmp_path / "cgroup").write_text("0::/ci/job\n")
    job = tmp_path / "fs" / "ci" / "job"
    job.mkdir(parents=True)
    (job / "memory.max").write_text(f"{512 * MiB}\n")
    assert budget.cgroup_memory_limit(str(tmp_path / "cgroup"), str(tmp_path / "fs")) == 512 * MiB
    (job / "memory.max").write_text("max\n")
    assert budget.cgroup_memory_limit(str(tmp_path / "cgroup"), str(tmp_path / "fs")) is None
    (tmp_path / "cgroup1").write_text("7:memory:/legacy\n")
    legacy = tmp_path / "fs" / "memory" / "legacy"
    legacy.mkdir(parents=True)
    (legacy / "memory.limit_in_bytes").write_text(f"{256 * MiB}\n")
    assert budget.cgroup_memory_limit(str(tmp_path / "cgroup1"), str(tmp_path / "fs")) == 256 * MiB
    limit = budget.cgroup_memory_limit()
    assert budget.host_memory_limit() <= int(min(limit or 1 << 62, os.sysconf("SC_PHYS_PAGES")
                                                  * os.sysconf("SC_PAGE_SIZE")) * budget.HOST_MEMORY_FRACTION) + 1


@pytest.fixture
def small_budget(monkeypatch, tmp_path):
    """A 4 MiB budget of this test's own, used by device memory and pinned host memory alike."""
    small = budget.HostBudget(limit=4 * MiB, table_path=str(tmp_path / "budget"))
    monkeypatch.setattr(memory, "HOST_BUDGET", small)
    monkeypatch.setattr(hostmem, "HOST_BUDGET", small)
    return small


def test_pinned_host_memory_counts_in_the_budget(small_budget):
    pinned = cnrt.hostMalloc(3 * MiB)
    assert small_budget.used == 3 * MiB
    error = raises_code(cnrt.cnrtErrorNoMem, cnrt.malloc, 2 * MiB)
    assert "limit" in str(error)
    error = raises_code(cnrt.cnrtErrorSysNoMem, cnrt.hostMalloc, 2 * MiB)
    assert "cnrtHostMalloc" in str(error)
    cnrt.freeHost(pinned)
    assert small_budget.used == 0
    device = cnrt.malloc(2 * MiB)
    cnrt.free(device)


def test_zero_byte_host_allocation_is_null():
    assert cnrt.hostMalloc(0) is None and cnrt.mallocHost(0, cnrt.CNRT_MEMTYPE_LOCKED) is None
    cnrt.freeHost(None)
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.hostMalloc, -5)
