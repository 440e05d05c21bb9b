"""Kernels that ask __is_mpu() / __is_ipu() run a memory-core task per cluster in their Union launches: it shares
the cluster's SRAM and its barriers (__sync_cluster waits for it, __sync_all_ipu does not), sees coreId 0x80 and
the ids of its cluster's first core, and has no NRAM."""
from __future__ import annotations

import numpy as np
import pytest

import cnrt

from .conftest import SOURCES, cncc
from .test_kernels import _from_device, _sync_error, _to_device

PART = 64


@pytest.fixture(scope="module")
def kernels(tmp_path_factory, library_dir):
    from neuware import bangc
    library = tmp_path_factory.mktemp("memory_core") / "libmemorycore.so"
    cncc("-shared", "-O1", SOURCES / "memory_core.mlu", "-o", library)
    return bangc.load(library)


def _launch(kernels, name, dim, ktype, *args):
    queue = cnrt.queueCreate()
    kernels[name][dim, ktype, queue](*args)
    return queue


@pytest.mark.parametrize("union, ktype", [(1, cnrt.cnrtFuncTypeUnion1), (2, cnrt.cnrtFuncTypeUnion2)])
def test_the_memory_core_loads_sram_for_its_cluster(kernels, union, ktype):
    tasks = 4 * union * 2  # two rounds
    x = np.arange(tasks * PART, dtype=np.float32)
    px, py, pids = _to_device(x), cnrt.malloc(4 * x.size), _to_device(np.full(3, -1, np.int32))
    cnrt.queueSync(_launch(kernels, "staged_double", (tasks, 1, 1), ktype, px, py, pids))
    # each round's clusters stage their own part (clusterId counts within the union, so the stage of a cluster
    # is the same for both rounds: tasks of round r read x[clusterId * 4 * PART ...])
    cluster_of_task = (np.arange(tasks) % (4 * union)) // 4
    core_of_task = np.arange(tasks) % 4
    want = np.concatenate([2 * x[(c * 4 + k) * PART:(c * 4 + k + 1) * PART]
                           for c, k in zip(cluster_of_task, core_of_task)])
    np.testing.assert_array_equal(_from_device(py, x.size), want)
    core, cluster, task = _from_device(pids, 3, np.int32)
    assert core == 0x80 and 0 <= cluster < union and task % 4 == 0 and task // 4 % union == cluster


def test_a_memory_core_that_returns_leaves_the_compute_barriers_alone(kernels):
    counts = _to_device(np.zeros(8, np.int32))
    cnrt.queueSync(_launch(kernels, "compute_cores_only", (8, 1, 1), cnrt.cnrtFuncTypeUnion2, counts))
    np.testing.assert_array_equal(_from_device(counts, 8, np.int32), np.arange(1, 9))


def test_the_memory_core_has_no_nram(kernels):
    py = cnrt.malloc(64)
    error = _sync_error(_launch(kernels, "mpu_touches_nram", (4, 1, 1), cnrt.cnrtFuncTypeUnion1, py))
    assert error.code == cnrt.cnrtErrorKernelTrap and "memory core (coreId=0x80) of cluster 0" in str(error)


def test_block_launches_run_no_memory_core(kernels):
    counts = _to_device(np.zeros(8, np.int32))
    queue = _launch(kernels, "compute_cores_only", (3, 1, 1), cnrt.cnrtFuncTypeBlock, counts)
    error = _sync_error(queue)  # __sync_all_ipu in a Block task: no union to wait with
    assert "Block tasks have no cluster or union" in str(error)
