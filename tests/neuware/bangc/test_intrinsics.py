"""The BANG C intrinsic families of mlusim_bang/cycle.h, search.h, atomic.h and vector.h's bitwise, relun, MLU200
const and fixed-point conversion forms (the ones DIOPI's and mmcv's kernels call), against numpy."""
from __future__ import annotations

import numpy as np
import pytest

import cnrt

from .conftest import SOURCES, cncc
from .test_kernels import _from_device, _sync_error, _to_device

N, M = 256, 32
rng = np.random.default_rng(11)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory, library_dir):
    from neuware import bangc
    library = tmp_path_factory.mktemp("intrinsics") / "libintrinsics.so"
    cncc("-shared", "-O2", SOURCES / "intrinsics.mlu", "-o", library)
    return bangc.load(library)


def _launch(kernels, name, *args, tasks=1, kind=None):
    queue = cnrt.queueCreate()
    kernels[name][(tasks, 1, 1), kind if kind is not None else cnrt.cnrtFuncTypeBlock, queue](*args)
    return queue


def _run(kernels, name, *args, **kw):
    queue = _launch(kernels, name, *args, **kw)
    cnrt.queueSync(queue)
    cnrt.queueDestroy(queue)


CYCLE = {0: np.add, 1: np.subtract, 2: np.multiply, 3: np.maximum, 4: np.minimum,
         5: lambda a, b: (a == b).astype(np.float32), 6: lambda a, b: (a < b).astype(np.float32),
         7: lambda a, b: (a > b).astype(np.float32)}


@pytest.mark.parametrize("op", range(10))
def test_cycle_ops_reuse_their_segment(kernels, op):
    x = rng.integers(-4, 5, N).astype(np.float32)
    seg = rng.integers(-4, 5, M).astype(np.float32)
    px, ps, py = _to_device(x), _to_device(seg), cnrt.malloc(4 * N)
    _run(kernels, "cycle_ops", px, ps, py, op)
    got = _from_device(py, N)
    tiled = np.tile(seg, N // M)
    if op < 8:
        np.testing.assert_array_equal(got, CYCLE[op](x, tiled))
    else:
        bits = (np.bitwise_and if op == 8 else np.bitwise_or)(x.view(np.int32), tiled.view(np.int32))
        np.testing.assert_array_equal(got.view(np.int32), bits)


def test_a_count_that_is_no_multiple_of_the_cycle_traps(kernels):
    px, ps, py = _to_device(np.zeros(N, np.float32)), _to_device(np.zeros(M, np.float32)), cnrt.malloc(4 * N)
    error = _sync_error(_launch(kernels, "cycle_ops", px, ps, py, 99))
    assert error.code == cnrt.cnrtErrorKernelTrap and "not a multiple of the cycle's 48" in str(error)


#: the two steps of each fusion, in order (FUSION_FMA .. FUSION_FSA), each rounded to float32
FUSION = [lambda a, b, c: a * b + c, lambda a, b, c: a * b - c, lambda a, b, c: (a + b) * c,
          lambda a, b, c: (a - b) * c, lambda a, b, c: (a + b) - c, lambda a, b, c: (a - b) + c]


@pytest.mark.parametrize("op", range(12))
def test_fusion_with_vector_and_scalar_operands(kernels, op):
    x, p, q = (rng.standard_normal(N).astype(np.float32) for _ in range(3))
    py = cnrt.malloc(4 * N)
    _run(kernels, "fusion", _to_device(x), _to_device(p), _to_device(q), py, op, np.float32(0.75))
    got = _from_device(py, N)
    if op < 6:
        want = FUSION[op](x, p, q)
    else:
        want = FUSION[op - 6](x, np.tile(p[:M], N // M), np.float32(0.75))
    np.testing.assert_array_equal(got, want.astype(np.float32))


def test_half_fusion_rounds_each_step_to_half(kernels):
    x = rng.standard_normal(N).astype(np.float16)
    p = rng.standard_normal(N).astype(np.float16)
    py = cnrt.malloc(2 * N)
    _run(kernels, "half_fusion", _to_device(x), _to_device(p), py, np.float32(0.3))
    got = _from_device(py, N, np.float16)
    product = (x.astype(np.float32) * p.astype(np.float32)).astype(np.float16)
    want = (product.astype(np.float32) + np.float32(np.float16(0.3))).astype(np.float16)
    np.testing.assert_array_equal(got, want)


def test_bitwise_ops_on_the_bits(kernels):
    a = rng.integers(-2 ** 31, 2 ** 31, N, dtype=np.int64).astype(np.int32)
    b = rng.integers(-2 ** 31, 2 ** 31, N, dtype=np.int64).astype(np.int32)
    py = cnrt.malloc(4 * 4 * N)
    _run(kernels, "bitwise", _to_device(a), _to_device(b), py)
    got = _from_device(py, 4 * N, np.int32).reshape(4, N)
    np.testing.assert_array_equal(got, [a & b, a | b, a ^ b, ~a])


@pytest.mark.parametrize("case", ["mixed", "none", "nan", "ties"])
def test_count_find_and_extrema_with_their_index(kernels, case):
    n = 200
    x = np.zeros(n, np.float32)
    if case == "mixed":
        x[[5, 17, 150]] = [2.0, -7.5, 9.25]
    elif case == "nan":
        x[[3, 9]] = [np.nan, 4.0]
        x[40] = -1.0
    elif case == "ties":
        x[[20, 60, 90]] = [3.0, 3.0, -2.0]
    py = cnrt.malloc(4 * 7)
    _run(kernels, "search", _to_device(x), n, py)
    y = _from_device(py, 7, np.uint32)
    nonzero = np.flatnonzero(x != 0)
    assert y[0] == nonzero.size
    assert y[1] == (nonzero[0] if nonzero.size else 0xFFFFFFFF)
    assert y[2] == (nonzero[-1] if nonzero.size else 0xFFFFFFFF)
    values = y[[3, 5]].view(np.float32)
    assert values[0] == np.nanmax(x) and y[4] == np.nanargmax(x)
    assert values[1] == np.nanmin(x) and y[6] == np.nanargmin(x)


def test_half_max_keeps_its_index_in_16_bits(kernels):
    x = rng.standard_normal(100).astype(np.float16)
    py = cnrt.malloc(4)
    _run(kernels, "half_max", _to_device(x), x.size, py)
    y = _from_device(py, 2, np.uint16)
    assert y[:1].view(np.float16)[0] == x.max() and y[1] == np.argmax(x)


@pytest.mark.parametrize("position", [0, 3, -2])
def test_relun_const_forms_and_fixed_point_conversions(kernels, position):
    x = np.concatenate([[2.5, -2.5, 7.75, -0.0, 3e9, -3e9, np.nan, 0.5],
                        rng.uniform(-20, 20, N - 8)]).astype(np.float32)
    k = rng.integers(-1000, 1000, N).astype(np.int32)
    py, pz = cnrt.malloc(4 * 3 * N), cnrt.malloc(4 * 3 * N)
    _run(kernels, "conversions", _to_device(x), _to_device(k), py, pz, position)
    y = _from_device(py, 3 * N).reshape(3, N)
    z = _from_device(pz, 3 * N, np.int32).reshape(3, N)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(y[0], np.minimum(np.where(x > 0, x, x * 0), 6))  # -0 for negatives, as relu
        np.testing.assert_array_equal(y[1], x * np.float32(3) - np.float32(1))
    np.testing.assert_array_equal(y[2], np.ldexp(k.astype(np.float64), position).astype(np.float32))
    scaled = np.ldexp(x.astype(np.float64), -position)
    for row, rounding in zip(z, (np.trunc, np.trunc, np.rint)):
        with np.errstate(invalid="ignore"):
            want = np.clip(np.nan_to_num(rounding(scaled), nan=0.0), -2 ** 31, 2 ** 31 - 1).astype(np.int64)
        np.testing.assert_array_equal(row, want)


def test_atomic_add_from_every_task(kernels):
    tasks = 8
    rows = rng.integers(-8, 9, (tasks, 64)).astype(np.float32)
    rows[:, 0] = 2.0 ** np.arange(tasks)
    total = _to_device(np.zeros(65, np.float32))
    seen = cnrt.malloc(4 * tasks)
    _run(kernels, "atomic_rows", _to_device(rows), total, seen, tasks=tasks)
    got = _from_device(total, 65)
    np.testing.assert_array_equal(got[:64], 50 * rows.sum(0))
    assert got[64] == rows[:, 0].sum()
    before = np.sort(_from_device(seen, tasks))
    # each task saw the sum of the tasks before it: the sorted values grow by one distinct row value each time
    steps = np.diff(np.append(before, got[64]))
    assert before[0] == 0 and sorted(steps) == sorted(rows[:, 0])


def test_a_lock_makes_a_read_modify_write_safe(kernels):
    counter = _to_device(np.zeros(1, np.int32))
    _run(kernels, "locked_counter", counter, 200, tasks=8)
    assert _from_device(counter, 1, np.int32)[0] == 8 * 200


def test_an_unknown_lock_traps(kernels):
    error = _sync_error(_launch(kernels, "bad_lock"))
    assert error.code == cnrt.cnrtErrorKernelTrap and "lock (9, 0)" in str(error)


def _pool_reference(x, how):
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 2), axis=(0, 1))[::2, ::1]  # (2, 4, 8, 3, 2)
    reduce = {0: np.sum, 1: np.mean, 2: np.max, 3: np.min}[how]
    return reduce(windows.astype(np.float64), axis=(-2, -1)).astype(np.float32)


@pytest.mark.parametrize("how", range(4))
def test_pooling_over_height_width_channel(kernels, how):
    x = rng.integers(-9, 10, (6, 5, 8)).astype(np.float32)
    py = cnrt.malloc(4 * 2 * 4 * 8)
    _run(kernels, "pools", _to_device(x), py, how)
    got = _from_device(py, 2 * 4 * 8).reshape(2, 4, 8)
    np.testing.assert_allclose(got, _pool_reference(x, how), rtol=1e-6)


def test_filter_log2_pow2_nan_maximum_rem_rotate_incseq_move(kernels):
    x = rng.uniform(0.25, 8, N).astype(np.float32)
    mask = (rng.random(N) < 0.3).astype(np.float32)
    x[3], mask[5] = np.nan, np.nan
    py, pc = cnrt.malloc(4 * 8 * N), cnrt.malloc(4)
    _run(kernels, "selects", _to_device(x), _to_device(mask), py, pc)
    y = _from_device(py, 8 * N).reshape(8, N)
    kept = x[mask != 0]
    assert _from_device(pc, 1, np.int32)[0] == kept.size
    np.testing.assert_array_equal(y[0, :kept.size], kept)
    assert (y[0, kept.size:] == -1).all()
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(y[1], np.log2(x), rtol=1e-6)
        np.testing.assert_allclose(y[2], np.exp2(x), rtol=1e-6)
        np.testing.assert_array_equal(y[3], np.where(np.isnan(x) | np.isnan(mask), np.nan, np.maximum(x, mask)))
        np.testing.assert_allclose(y[4], np.fmod(x, np.float32(1.5)), rtol=1e-6)
    np.testing.assert_array_equal(y[5], x[::-1])
    np.testing.assert_array_equal(y[6].view(np.int32), np.arange(N))
    np.testing.assert_array_equal(y[7], x)


def test_bitwise_scalars_and_integer_remainder(kernels):
    a = rng.integers(-2 ** 31, 2 ** 31, N, dtype=np.int64).astype(np.int32)
    py = cnrt.malloc(4 * 4 * N)
    _run(kernels, "int_scalars", _to_device(a), py)
    got = _from_device(py, 4 * N, np.int32).reshape(4, N)
    np.testing.assert_array_equal(got[:3], [a & 0x00ff00ff, a | 0x0f000000, ~a])
    np.testing.assert_array_equal(got[3], np.fmod(a, 7))  # C's remainder: the dividend's sign


def test_atomic_reductions_from_every_task(kernels):
    tasks = 8
    rows = rng.integers(-50, 50, (tasks, 64)).astype(np.float32)
    sums, tops, bottoms = (_to_device(np.full(64, start, np.float32)) for start in (0.0, -1e9, 1e9))
    _run(kernels, "atomic_reduce", _to_device(rows), sums, tops, bottoms, tasks=tasks)
    np.testing.assert_array_equal(_from_device(sums, 64), rows.sum(0))
    np.testing.assert_array_equal(_from_device(tops, 64), rows.max(0))
    np.testing.assert_array_equal(_from_device(bottoms, 64), rows.min(0))


def test_the_strided_nramset_async_is_refused_by_name(kernels):
    py = cnrt.malloc(4 * 64)
    error = _sync_error(_launch(kernels, "strided_nramset", py))
    assert error.code == cnrt.cnrtErrorKernelTrap and "__nramset_async: the strided form" in str(error)
    np.testing.assert_array_equal(_from_device(py, 64), np.ones(64, np.float32))


def test_pad_and_table_lookup(kernels):
    x = rng.standard_normal((3, 4, 2)).astype(np.float32)
    index = rng.integers(0, 8, 64).astype(np.uint32)
    py, pl = cnrt.malloc(4 * 6 * 7 * 2), cnrt.malloc(4 * 64)
    _run(kernels, "pad_and_lut", _to_device(x), _to_device(index), py, pl, 0)
    np.testing.assert_array_equal(_from_device(py, 6 * 7 * 2).reshape(6, 7, 2),
                                  np.pad(x, ((1, 2), (0, 3), (0, 0))))
    np.testing.assert_array_equal(_from_device(pl, 64, np.int32), (100 * np.arange(8) - 3)[index])
    error = _sync_error(_launch(kernels, "pad_and_lut", _to_device(x), _to_device(index), py, pl, 1))
    assert error.code == cnrt.cnrtErrorKernelTrap and "index[5] = 9 is outside the table of 8" in str(error)


def test_template_kernels_launched_with_deduced_and_explicit_arguments(kernels, tmp_path):
    """`k<<<dim, ktype, queue>>>(args)` of a template kernel deduces its template arguments from the call, as
    CUDA and cncc do (mlu-ops' prior_box launches so), converting an int to a float parameter."""
    import ctypes

    from neuware import bangc
    library = tmp_path / "libtemplates.so"
    cncc("-shared", "-O1", SOURCES / "intrinsics.mlu", "-o", library)
    host = ctypes.CDLL(str(library))
    x = np.arange(64, dtype=np.float32)
    px, py, pz = _to_device(x), cnrt.malloc(4 * 64), cnrt.malloc(4 * 64)
    host.launch_template_kernels(None, ctypes.c_void_p(px), ctypes.c_void_p(py), ctypes.c_void_p(pz), 64)
    cnrt.syncDevice()  # the launches went to the default queue
    np.testing.assert_array_equal(_from_device(py, 64), x + 2)
    np.testing.assert_array_equal(_from_device(pz, 64), x * 3 + 1)
    assert {"deduced_copy", "scaled_copy<float, 3>"} <= set(bangc.load(library).kernels)
