"""Task ids of Block and UnionN launches against the reference's rules."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import cnrt
from mlusim.taskmodel import layout

from .conftest import from_device
from .bang.kernels import record_ids

FIELDS = ("taskIdX", "taskIdY", "taskIdZ", "taskDimX", "taskDimY", "taskDimZ", "taskId", "taskDim",
          "clusterId", "clusterDim", "coreId", "coreDim")


def run_ids(dim, ktype, queue):
    count = dim[0] * dim[1] * dim[2]
    out = cnrt.malloc(count * 12 * 4)
    record_ids[dim, ktype, queue](out)
    cnrt.queueSync(queue)
    rows = from_device(out, count * 12, np.int32).reshape(count, 12)
    return [dict(zip(FIELDS, map(int, row))) for row in rows]


def test_union2_dim_8_2_2_runs_four_rounds_of_eight_cores(queue):
    rows = run_ids((8, 2, 2), cnrt.cnrtFuncTypeUnion2, queue)
    assert layout((8, 2, 2), 8, 8, 4, 8).rounds == 4
    for task, ids in enumerate(rows):
        assert ids["taskId"] == task
        assert ids["taskId"] == ids["taskIdZ"] * 16 + ids["taskIdY"] * 8 + ids["taskIdX"]
        assert (ids["taskDim"], ids["clusterDim"], ids["coreDim"]) == (32, 2, 4)
        assert ids["clusterId"] == ids["taskIdX"] // 4
        assert ids["coreId"] == ids["taskIdX"] % 4


def test_block_tasks_have_no_cluster_dim(queue):
    rows = run_ids((5, 1, 1), cnrt.cnrtFuncTypeBlock, queue)
    assert [r["taskId"] for r in rows] == list(range(5))
    assert all(r["clusterDim"] == 0 and r["coreDim"] == 4 and r["taskDim"] == 5 for r in rows)
    assert [r["coreId"] for r in rows] == [0, 1, 2, 3, 0]


@pytest.mark.parametrize("ktype,union", [(4, 1), (8, 2), (16, 4), (32, 8)])
def test_each_union_on_the_board(queue, ktype, union):
    dim = (4 * union, 2, 1)
    rows = run_ids(dim, ktype, queue)
    for ids in rows:
        core = ids["taskId"] % (4 * union)
        assert ids["clusterDim"] == union
        assert (ids["clusterId"], ids["coreId"]) == (core // 4, core % 4)


def test_union16_is_rejected_on_a_union8_board(queue):
    out = cnrt.malloc(64 * 48)
    with pytest.raises(cnrt.CnrtError) as error:
        record_ids[(64, 1, 1), cnrt.cnrtFuncTypeUnion16, queue](out)
    assert "Union8" in str(error.value)


def test_dim_x_must_be_a_multiple_of_the_union_cores(queue):
    out = cnrt.malloc(48 * 12)
    with pytest.raises(cnrt.CnrtError):
        record_ids[(6, 1, 1), cnrt.cnrtFuncTypeUnion1, queue](out)


@given(union=st.sampled_from([1, 2, 4, 8]), groups=st.integers(1, 3), dy=st.integers(1, 3), dz=st.integers(1, 2))
def test_layout_rules(union, groups, dy, dz):
    dim = (4 * union * groups, dy, dz)
    lay = layout(dim, 4 * union, 8, 4, 8)
    assert lay.rounds == dim[0] * dy * dz // (4 * union)
    for t in range(lay.task_dim):
        assert t == lay.task_z[t] * dim[0] * dy + lay.task_y[t] * dim[0] + lay.task_x[t]
        assert lay.cluster_id[t] * 4 + lay.core_id[t] == t % (4 * union)
        assert 0 <= lay.cluster_id[t] < union


def test_layout_rejects_invalid_unions():
    with pytest.raises(ValueError):
        layout((8, 1, 1), 64, 8, 4, 8)
    with pytest.raises(ValueError):
        layout((6, 1, 1), 8, 8, 4, 8)
