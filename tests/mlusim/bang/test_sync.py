"""SRAM sharing, barriers, deadlock detection, shuffled order, async copies, debug mode, work counts."""
import numpy as np
import pytest

import cnrt
import mlusim.device
from mlusim import bang

from ..conftest import from_device, to_device
from .kernels import (async_then_read, crossed_barriers, debug_probe, last_writer, skips_barrier, sram_exchange,
                      sram_peek, sync_in_block)


def test_sram_is_shared_within_a_cluster_after_sync_cluster(queue):
    out = cnrt.malloc(32 * 16 * 4)
    sram_exchange[(4, 8, 1), cnrt.cnrtFuncTypeUnion1, queue](out)
    cnrt.queueSync(queue)
    seen = from_device(out, 32 * 16, np.float32).reshape(32, 16)
    for task in range(32):
        neighbour = task - task % 4 + (task % 4 + 1) % 4
        assert (seen[task] == neighbour).all()


def test_sram_is_not_shared_between_rounds(queue):
    out = cnrt.malloc(8 * 3 * 16 * 4)
    sram_peek[(8, 3, 1), cnrt.cnrtFuncTypeUnion2, queue](out)
    cnrt.queueSync(queue)
    seen = from_device(out, 8 * 3 * 16, np.float32)
    assert np.isnan(seen).all()  # every round starts with poisoned SRAM, never the 7.0 of another round


def test_barrier_skipped_by_one_core_is_a_deadlock(queue):
    skips_barrier[(4, 1, 1), cnrt.cnrtFuncTypeUnion1, queue]()
    with pytest.raises(cnrt.CnrtError) as error:
        cnrt.queueSync(queue)
    text = str(error.value)
    assert "deadlock" in text and "skips_barrier" in text and "task(s) 2" in text


def test_tasks_at_different_barriers_deadlock(queue):
    crossed_barriers[(4, 1, 1), cnrt.cnrtFuncTypeUnion1, queue]()
    with pytest.raises(cnrt.CnrtError) as error:
        cnrt.queueSync(queue)
    assert "different barriers" in str(error.value)


def test_barrier_timeout_is_configurable(queue):
    @bang.kernel(barrier_timeout=0.2)
    def waits_forever(ctx):
        if ctx.coreId == 0:
            bang.sync_cluster(ctx)
        else:
            while True:
                bang.sync_io(ctx)
                if ctx.coreId > 0:
                    break
            bang.assert_(False, "only core 0 reaches the barrier")

    waits_forever[(4, 1, 1), cnrt.cnrtFuncTypeUnion1, queue]()
    with pytest.raises(cnrt.CnrtError):
        cnrt.queueSync(queue)


def test_barrier_in_block_task_is_an_error(queue):
    sync_in_block[(2, 1, 1), cnrt.cnrtFuncTypeBlock, queue]()
    with pytest.raises(cnrt.CnrtError) as error:
        cnrt.queueSync(queue)
    assert "Block task" in str(error.value)


def order_of(seed: int) -> list:
    mlusim.device.configure(arch="MLU370-X4", memory=64 << 20, seed=seed)
    queue = cnrt.queueCreate()
    out = to_device(np.zeros(33, np.int32))
    last_writer.workers = 1
    last_writer[(32, 1, 1), cnrt.cnrtFuncTypeBlock, queue](out)
    cnrt.queueSync(queue)
    return from_device(out, 33, np.int32).tolist()


@pytest.mark.mlusim_sanitize(exclude="racecheck")  # last_writer's tasks race for one counter on purpose
def test_seeded_shuffle_is_reproducible(board):
    first, again, other = order_of(1), order_of(1), order_of(2)
    assert first == again
    assert first[0] == 32 and sorted(first[1:]) == list(range(32))
    assert first != other
    assert first[1:] == last_writer.last_launch.schedule or other[1:] == last_writer.last_launch.schedule


@pytest.mark.parametrize("synced,expected", [(1, 5.0), (0, -1.0)])
def test_async_copy_lands_at_sync(queue, synced, expected):
    x = to_device(np.full(16, 5.0, np.float32))
    out = cnrt.malloc(4)
    async_then_read[(1, 1, 1), 1, queue](x, out, synced)
    cnrt.queueSync(queue)
    assert from_device(out, 1, np.float32)[0] == expected


def test_debug_mode_runs_python_with_the_same_checks(queue, capsys):
    out = cnrt.malloc(8 * 4)
    debug_probe.debug = True
    try:
        debug_probe[(8, 1, 1), 1, queue](out)
        with pytest.raises(cnrt.CnrtError) as error:
            cnrt.queueSync(queue)
    finally:
        debug_probe.debug = False
    assert "debug task 5" in capsys.readouterr().out
    assert "debug_probe" in str(error.value) and "task 5" in str(error.value) and "'tile'" in str(error.value)
    assert debug_probe.last_launch.debug


def test_work_counts_and_modelled_time(queue):
    from cnrt.samples.vector_add import run, vector_add
    n = 1 << 16
    run(np.ones(n, np.float32), np.ones(n, np.float32), queue)
    record = vector_add.last_launch
    assert record.counts.copy_bytes == {"GDRAM2NRAM": 2 * 4 * n, "NRAM2GDRAM": 4 * n}
    assert record.counts.vector_elements == n and record.counts.tasks == 32
    spec = mlusim.device.get(0).spec
    assert record.model_us == pytest.approx(spec.kernel_launch_us + 12 * n / spec.gdram_bandwidth * 1e6)
