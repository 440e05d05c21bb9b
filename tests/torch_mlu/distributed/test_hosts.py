"""torch.distributed "cncl" across simulated hosts (mlutools.hosts): DDP and FSDP2 on 2 hosts x 2 ranks, started by
`mlusim run --hosts` (mpiexec), train like the same script on cpu through gloo across the same hosts."""
import os
import sys

import pytest

from mlutools import hosts as simulated
from tests.cncl.ranks import HostsClique
from tests.torch_mlu.distributed.ranks import ENV

pytestmark = pytest.mark.child_processes

if simulated.mpi_unavailable():
    pytest.skip(f"simulated hosts are not available here: {simulated.mpi_unavailable()}", allow_module_level=True)


@pytest.fixture(scope="module")
def job():
    with simulated.SimulatedHosts(2) as machines:
        env = {**ENV, "MASTER_ADDR": machines.names[0], "MASTER_PORT": "29511", "GLOO_SOCKET_IFNAME": "eth0"}
        ranks = HostsClique(machines, [2, 2], env=env, timeout=180,
                            program="mlutools.mpirank", arguments=["-m", "tests.torch_mlu.distributed.host_rank"])
        yield ranks
        assert ranks.close() == 0, ranks.text()


def test_ranks_are_on_two_hosts(job):
    assert job.hostnames == [job.hosts.names[0]] * 2 + [job.hosts.names[1]] * 2


@pytest.mark.parametrize("find_unused", [False, True], ids=["all_used", "find_unused"])
def test_ddp_across_hosts_matches_gloo(job, find_unused):
    for result in job.run("ddp", 5, find_unused, timeout=300):
        assert result["moved"] > 1e-3
        assert result["between_ranks"] == 0.0
        assert result["mlu_vs_cpu"] < 1e-5


def test_fsdp2_across_hosts_matches_gloo(job):
    for result in job.run("fsdp", 4, timeout=300):
        assert result["moved"] > 1e-3
        assert result["mlu_vs_cpu"] < 1e-5
