"""`mlusim bench cncl --hosts` (mlutools/bench/bench_cncl_hosts.py) on small sizes: the MPI comparison across
simulated hosts, the weak-scaling DDP step, the checks it prints."""
import pytest

from mlutools import hosts as simulated
from mlutools.bench import bench_cncl_hosts

pytestmark = pytest.mark.child_processes

if simulated.mpi_unavailable():
    pytest.skip(f"simulated hosts are not available here: {simulated.mpi_unavailable()}", allow_module_level=True)


def test_the_suite_measures_cncl_against_mpi_and_a_ddp_step_across_hosts():
    lines = []
    results = bench_cncl_hosts.run(report=lines.append, sizes=[8, 64 * 1024 * 1024 // 64], scaling=((1,), (1, 1)))
    rows = [r for r in results if "cncl_us" in r]
    assert [r["size"] for r in rows] == [8, 1 << 20]
    assert all(r["cncl_us"] > 0 and r["mpi_us"] > 0 and r["cncl_busbw"] > 0 for r in rows)
    checks = [r for r in results if "pass" in r]
    assert [c["name"] for c in checks] == ["allReduce 8 B time across hosts / MPI's (2x2)"]
    steps = [r for r in results if r["name"].startswith("DDP step")]
    assert len(steps) == 2 and all(r["time_us"] > 0 for r in steps)
    assert any(line.startswith("weak scaling: 2 ranks over 2 hosts") for line in lines), lines
