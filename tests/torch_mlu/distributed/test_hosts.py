"""torch.distributed "cncl" across simulated hosts (mlutools.hosts): DDP and FSDP2 on 2 hosts x 2 ranks, started by
mpiexec (as `mlusim run --hosts` does) or by a torchrun on each host (c10d rendezvous), train like the same script on
cpu through gloo across the same hosts."""
import os
import sys

import pytest

from mlutools import hosts as simulated
from tests.cncl.ranks import HostsClique
from tests.torch_mlu.distributed.ranks import ENV

pytestmark = pytest.mark.child_processes

if simulated.mpi_unavailable():
    pytest.skip(f"simulated hosts are not available here: {simulated.mpi_unavailable()}", allow_module_level=True)


PROGRAM = "tests.torch_mlu.distributed.host_rank"


@pytest.fixture(scope="module", params=["mpiexec", "torchrun"])
def job(request):
    with simulated.SimulatedHosts(2) as machines:
        env = {**ENV, "GLOO_SOCKET_IFNAME": "eth0"}
        if request.param == "mpiexec":  # (torchrun sets MASTER_ADDR and MASTER_PORT itself)
            env.update(MASTER_ADDR=machines.names[0], MASTER_PORT="29511")
            ranks = HostsClique(machines, [2, 2], env=env, timeout=180, program="mlutools.mpirank",
                                arguments=["-m", PROGRAM])
        else:
            ranks = HostsClique(machines, [2, 2], env=env, timeout=180, program=PROGRAM, launch="torchrun")
        yield ranks
        assert ranks.close() == 0, ranks.text()


def test_ranks_are_on_two_hosts(job):
    # (torchrun numbers the workers of a host consecutively, mpiexec in the order of its host list)
    assert sorted(job.hostnames) == sorted(job.hosts.names * 2)
    assert job.hostnames[0] == job.hostnames[1] != job.hostnames[2] == job.hostnames[3]


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
