"""Kernels that ask __is_mpu() / __is_ipu() run a memory-core task per cluster in their Union launches: it shares
the cluster's SRAM and its barriers (__sync_cluster waits for it, __sync_all_ipu does not), sees coreId 0x80 and
the ids of its cluster's first core; its NRAM is a scratch no copy reaches."""
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


def test_the_memory_cores_nram_is_a_scratch_no_copy_reaches(kernels):
    """Cambricon's kernels run NRAM code on every core outside their compute-core branches (mmcv's NMS copies the
    global maximum to NRAM everywhere, and loads at offsets made from coreId 0x80): the memory core's vector code
    runs on a scratch NRAM of its own, and its copies to or from NRAM/WRAM do nothing (it has none)."""
    py = _to_device(np.full(16, 5.0, np.float32))
    cnrt.queueSync(_launch(kernels, "mpu_touches_nram", (4, 1, 1), cnrt.cnrtFuncTypeUnion1, py))
    np.testing.assert_array_equal(_from_device(py, 16), np.full(16, 5.0, np.float32))


def test_block_launches_run_no_memory_core(kernels):
    counts = _to_device(np.zeros(8, np.int32))
    queue = _launch(kernels, "compute_cores_only", (3, 1, 1), cnrt.cnrtFuncTypeBlock, counts)
    error = _sync_error(queue)  # __sync_all_ipu in a Block task: no union to wait with
    assert "Block tasks have no cluster or union" in str(error)


def test_a_copy_into_another_clusters_sram(kernels):
    """__memcpy(dst, src, n, SRAM2SRAM, cluster): the bytes land at dst's offset of that cluster's SRAM (DIOPI's and
    mmcv's UnionX NMS gather each cluster's best box so); a cluster past the union traps."""
    x = np.arange(4 * PART, dtype=np.float32)
    px, py = _to_device(x), _to_device(np.zeros(PART, np.float32))
    cnrt.queueSync(_launch(kernels, "sram_to_other_cluster", (16, 1, 1), cnrt.cnrtFuncTypeUnion4, px, py, 3))
    np.testing.assert_array_equal(_from_device(py, PART), x[:PART])
    error = _sync_error(_launch(kernels, "sram_to_other_cluster", (8, 1, 1), cnrt.cnrtFuncTypeUnion2, px, py, 2))
    assert "SRAM2SRAM to cluster 2: the union has 2 cluster(s)" in str(error)


def test_code_for_the_memory_core_written_with_its_core_id_is_a_warning(tmp_path):
    """mmcv's kernels test `coreId == MEMORY_CORE (0x80)` instead of asking __is_mpu(): their memory-core branches do
    not run here (a memory core that runs all of such a kernel's code races the compute cores in them), and cncc
    says so at the comparison's line."""
    source = tmp_path / "by_core_id.mlu"
    source.write_text("#include <bang.h>\n#define MEMORY_CORE (0x80)\n__mlu_global__ void k(int *flags) {\n"
                      "  if (coreId == MEMORY_CORE) flags[clusterId] = 1;\n}\n")
    done = cncc("-c", source, "-o", tmp_path / "k.o")
    assert "by_core_id.mlu:4: warning: code for the memory core (coreId == 0x80) does not run" in done.stderr
