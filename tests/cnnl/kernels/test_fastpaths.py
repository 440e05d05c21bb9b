"""The fast paths: small ops inline vs split over the pool, the one-pass top-k, the tiled transposing copy, the
numba float sum and the single-call concat/split: each gives exactly what the general path gives."""
import importlib
import itertools

import numpy as np
import pytest

from cnnl import kernels as K
from cnnl.kernels import parallel
from mlusim.host import threads as host_threads

from .strategies import ALL, FLOATS, random_values

BINARY = importlib.import_module("cnnl.kernels.binary")
ARITHMETIC = importlib.import_module("cnnl.kernels.arithmetic")

topk_module = importlib.import_module("cnnl.kernels.topk")
reduce_module = importlib.import_module("cnnl.kernels.reduce")
movement_module = importlib.import_module("cnnl.kernels.movement")


@pytest.fixture
def threaded(monkeypatch):
    """Force every blocked op onto the pool in many small blocks."""
    def force():
        monkeypatch.setattr(parallel, "INLINE_ELEMENTS", 0)
        monkeypatch.setattr(parallel, "INLINE_DIRECT_ELEMENTS", 0)
        monkeypatch.setattr(parallel, "STAGED_BLOCK", 64)
        monkeypatch.setattr(host_threads, "_cores", 2)
    return force


def _bits(array):
    return np.ascontiguousarray(array).view(np.uint8)


def _ops(rng, dtype):
    """(name, fn) pairs of ops writing a fresh output from random inputs of `dtype`."""
    a = random_values(rng, (37, 41), dtype)
    b = random_values(rng, (37, 41), dtype)
    row = random_values(rng, (1, 41), dtype)

    def run(name, fn, *shapes_dtypes):
        outs = [np.zeros(s, d) for s, d in shapes_dtypes]
        fn(*outs)
        return name, outs

    results = [run("copy", lambda o: K.copy(a, o), ((37, 41), dtype)),
               run("expand", lambda o: K.copy(row, o), ((37, 41), dtype)),
               run("transpose", lambda o: K.transpose(a, (1, 0), o), ((41, 37), dtype)),
               run("cast", lambda o: K.cast(a, o), ((37, 41), np.float32)),
               run("concat", lambda o: K.concat([a, b], 1, o), ((37, 82), dtype)),
               run("topk", lambda v, i: K.topk(a, 5, 1, v, i), ((37, 5), dtype), ((37, 5), np.int32))]
    if dtype != np.bool_:
        results += [run("add", lambda o: K.op_tensor("add", a, row, o), ((37, 41), dtype)),
                    run("sum", lambda o: K.reduce("sum", a, o, (1,)), ((37, 1), dtype)),
                    run("max", lambda o, i: K.reduce("max", a, o, (0,), indices=i), ((1, 41), dtype),
                        ((1, 41), np.int32)),
                    run("cumsum", lambda o: K.cumsum(a, o, 0), ((37, 41), dtype)),
                    run("cumsum rows", lambda o: K.cumsum(a, o, 1), ((37, 41), dtype)),
                    run("cumsum reversed", lambda o: K.cumsum(a, o, 1, reverse=True), ((37, 41), dtype))]
    return results


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_inline_and_threaded_paths_agree(dtype, threaded):
    inline = _ops(np.random.default_rng(3), dtype)
    threaded()
    split = _ops(np.random.default_rng(3), dtype)
    for (name, got), (_, want) in zip(split, inline):
        for g, w in zip(got, want):
            assert np.array_equal(_bits(g), _bits(w)), name


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int32], ids=str)
def test_flat_ranges_and_blocks_of_the_elementwise_driver_agree(dtype, monkeypatch):
    """Streaming elementwise ops on dense operands of one shape run over one flat range per host thread; the
    results are the blocked driver's (broadcast or strided operands, which keep the blocks, are checked too)."""
    rng = np.random.default_rng(8)
    a = random_values(rng, (67, 33), dtype)
    b = random_values(rng, (67, 33), dtype)
    floating = np.dtype(dtype).kind == "f"

    def ops():
        def out(dtype=a.dtype):
            return np.zeros(a.shape, dtype)

        results = [out(), out(), out(np.bool_), out(), out()]
        K.copy(a, results[0])
        K.copy(a[::-1], results[1])  # a strided input: blocks
        K.compare("lt", a, b, results[2])
        K.unary("abs", a, results[3])
        K.op_tensor("add", a, b[:1], results[4])  # a broadcast operand: blocks
        if floating:
            results += [out(), a.copy()]
            K.activation_forward("sigmoid", a, results[5])
            K.activation_forward("relu", results[6], results[6])  # in place
        return results

    monkeypatch.setattr(host_threads, "_cores", 2)
    general = ops()  # (small: one block of the general driver)
    ranges = []
    monkeypatch.setattr(parallel, "INLINE_DIRECT_ELEMENTS", 0)
    spread = parallel.map_flat_ranges
    monkeypatch.setattr(parallel, "map_flat_ranges", lambda fn, count, *arrays: ranges.append(count) or
                        spread(fn, count, *arrays))
    flat = ops()
    assert ranges  # the dense ops took the flat ranges
    for got, want in zip(flat, general):
        assert np.array_equal(_bits(got), _bits(want))


# ---- top-k ---------------------------------------------------------------------------------------------------------

def _sorted_topk(x, k, axis, largest):
    """The general (stable sort) path."""
    values = np.empty(x.shape[:axis] + (k,) + x.shape[axis + 1:], x.dtype)
    indices = np.empty(values.shape, np.int32)
    topk_module._sort_block(k, axis, largest, values, indices, x)
    return values, indices


@pytest.mark.parametrize("dtype", ALL, ids=str)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_selection_matches_sort_with_ties_and_nan(dtype, largest):
    rng = np.random.default_rng(7)
    for trial in range(12):
        shape = tuple(int(n) for n in rng.integers(1, 12, size=int(rng.integers(1, 4))))
        axis = int(rng.integers(0, len(shape)))
        x = rng.integers(-3, 4, size=shape).astype(np.float64)  # many ties
        if dtype in FLOATS:
            x[rng.random(shape) < 0.25] = np.nan
            x[rng.random(shape) < 0.1] = -0.0
            x[rng.random(shape) < 0.05] = -np.inf
        x = x.astype(dtype)
        k = int(rng.integers(1, shape[axis] + 1))
        want_values, want_indices = _sorted_topk(x, k, axis, largest)
        values, indices = np.empty_like(want_values), np.empty_like(want_indices)
        K.topk(x, k, axis, values, indices, largest=largest)
        np.testing.assert_array_equal(indices, want_indices)
        assert np.array_equal(_bits(values), _bits(want_values))


def test_topk_nan_first_for_largest_last_for_smallest():
    x = np.array([[1.0, np.nan, 5.0, np.nan, 5.0, -np.inf]], np.float32)
    values, indices = np.empty((1, 4), np.float32), np.empty((1, 4), np.int32)
    K.topk(x, 4, 1, values, indices, largest=True)
    assert indices.tolist() == [[1, 3, 2, 4]]
    K.topk(x, 4, 1, values, indices, largest=False)
    assert indices.tolist() == [[5, 0, 2, 4]]


def test_topk_large_rows_threaded_and_large_k(threaded):
    rng = np.random.default_rng(1)
    x = np.round(rng.normal(size=(300, 700)) * 20).astype(np.float32)
    for k in (8, topk_module.SELECT_K + 1):
        want = _sorted_topk(x, k, 1, True)
        got = np.empty_like(want[0]), np.empty_like(want[1])
        K.topk(x, k, 1, *got)
        np.testing.assert_array_equal(got[1], want[1])
        threaded()
        K.topk(x, k, 1, *got)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0], want[0])


# ---- tiled transposing copy --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.dtype(t) for t in (np.bool_, np.int8, np.float16, np.float32, np.float64)],
                         ids=str)
def test_tiled_transpose_every_permutation(dtype):
    rng = np.random.default_rng(0)
    for shape in [(70, 90), (3, 40, 50), (2, 3, 20, 30), (1, 64, 1, 65)]:
        x = random_values(rng, shape, dtype)
        for perm in itertools.permutations(range(len(shape))):
            want = x.transpose(perm)
            out = np.zeros(want.shape, dtype)
            K.transpose(x, perm, out)
            assert np.array_equal(out, want), (shape, perm)
            wide = np.zeros(tuple(2 * n for n in want.shape), dtype)  # strided output
            strided = wide[tuple(slice(None, None, 2) for _ in want.shape)]
            K.transpose(x, perm, strided)
            assert np.array_equal(strided, want), (shape, perm)


def test_tiled_transpose_threaded_and_in_place(threaded):
    rng = np.random.default_rng(2)
    x = rng.random((4, 300, 200)).astype(np.float32)
    out = np.empty((4, 200, 300), np.float32)
    threaded()
    K.transpose(x, (0, 2, 1), out)
    assert np.array_equal(out, x.transpose(0, 2, 1))
    y = np.empty((200, 4, 300), np.float32)
    K.transpose(x, (2, 0, 1), y)  # leading axes that do not merge into one batch axis
    assert np.array_equal(y, x.transpose(2, 0, 1))
    square = rng.random((128, 128)).astype(np.float32)
    want = square.T.copy()
    K.transpose(square, (1, 0), square)  # the output is the input: it is copied first
    assert np.array_equal(square, want)


def test_transposing_copy_used_only_when_it_fits():
    x = np.zeros((64, 64), np.float32)
    assert movement_module._transposing_copy(x.T, np.empty((64, 64), np.float32))
    assert not movement_module._transposing_copy(x, np.empty((64, 64), np.float32))  # already row order
    assert not movement_module._transposing_copy(x[:8, :8].T, np.empty((8, 8), np.float32))  # small
    assert not movement_module._transposing_copy(np.broadcast_to(x[:1], (64, 64)), np.empty((64, 64), np.float32))


# ---- sums, concat, split -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_float_sum_is_float64_accurate(dtype):
    rng = np.random.default_rng(4)
    x = rng.random(1 << 19).astype(dtype)
    out = np.empty(1, dtype)
    rtol = 1e-12 if dtype == np.float64 else 2.0 ** -23  # float32: within one rounding of the float64 sum
    K.reduce("sum", x, out, (0,))
    np.testing.assert_allclose(out[0], np.sum(x, dtype=np.float64), rtol=rtol)
    K.reduce("mean", x.reshape(1, -1), out.reshape(1, 1), (1,))
    np.testing.assert_allclose(out[0], np.mean(x, dtype=np.float64), rtol=rtol)
    for special in (np.nan, np.inf):
        y = x.copy()
        y[12345] = special
        K.reduce("sum", y, out, (0,))
        assert np.isnan(out[0]) if np.isnan(special) else out[0] == np.inf


@pytest.mark.parametrize("n", [8, 400])
def test_concat_and_split_with_overlapping_operands(n):
    rng = np.random.default_rng(5)
    buffer = rng.random(4 * n * n).astype(np.float32)
    out = buffer[:2 * n * n].reshape(n, 2 * n)
    a = rng.random((n, n)).astype(np.float32)
    b = buffer[n * n // 2:n * n // 2 + n * n].reshape(n, n)  # overlaps the output's first half
    want = np.concatenate([a, b], axis=1)
    K.concat([a, b], 1, out)
    assert np.array_equal(out, want)
    buffer = rng.random(4 * n * n).astype(np.float32)
    x = buffer[n:n + 2 * n * n].reshape(2 * n, n)  # overlaps both outputs
    want = [x[:n].copy(), x[n:].copy()]
    first, second = buffer[:n * n].reshape(n, n), buffer[2 * n * n:3 * n * n].reshape(n, n)
    K.split(x, 0, [first, second])
    assert np.array_equal(first, want[0]) and np.array_equal(second, want[1])


# ---- 16-bit matmul by fused row blocks ------------------------------------------------------------------------------

matmul_module = importlib.import_module("cnnl.kernels.matmul")


@pytest.mark.parametrize("dtype", [np.dtype(np.float16), FLOATS[1]], ids=str)
@pytest.mark.parametrize("trans_a, trans_b, alpha, beta", [(False, False, 1.0, 0.0), (True, False, 1.0, 0.0),
                                                           (False, True, 0.5, 0.0), (True, True, 2.0, -1.0)])
def test_half_matmul_row_blocks_match_the_whole_product(dtype, trans_a, trans_b, alpha, beta, monkeypatch):
    if not matmul_module.blas_threads.available():
        pytest.skip("the fused path needs per-thread BLAS threading control")
    rng = np.random.default_rng(6)
    m, k, n = 150, 70, 90
    a = random_values(rng, (k, m) if trans_a else (m, k), dtype, -2.0, 2.0)
    b = random_values(rng, (n, k) if trans_b else (k, n), dtype, -2.0, 2.0)
    start = random_values(rng, (m, n), dtype, -2.0, 2.0)
    whole, blocked = start.copy(), start.copy()
    K.matmul(a, b, whole, trans_a, trans_b, alpha, beta)
    monkeypatch.setattr(matmul_module, "FUSED_MIN_MACS", 0)
    monkeypatch.setattr(host_threads, "_cores", 2)
    K.matmul(a, b, blocked, trans_a, trans_b, alpha, beta)
    ulp = 2.0 ** -10 if dtype == np.float16 else 2.0 ** -7  # GEMM blocking may move a rounding by one unit
    np.testing.assert_allclose(blocked.astype(np.float32), whole.astype(np.float32), rtol=ulp, atol=1e-6)
    assert np.mean(blocked.astype(np.float32) == whole.astype(np.float32)) > 0.99


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.int8])
def test_row_scan_is_numpys_cumsum_bit_for_bit(dtype):
    rng = np.random.default_rng(9)
    x = random_values(rng, (33, 517), dtype)
    out = np.empty_like(x)
    K.cumsum(x, out, 1)
    with np.errstate(over="ignore"):
        want = np.cumsum(x, axis=1, dtype=dtype)  # sequential, and integers wrap in their own type
    assert np.array_equal(_bits(out), _bits(want))
    K.cumsum(x, x, 1)  # in place
    assert np.array_equal(_bits(x), _bits(want))


# ---- scaled add (a + alpha * b in one pass) --------------------------------------------------------------------------

def _host_has_fma():
    import llvmlite.binding as llvm
    return "+fma" in llvm.get_host_cpu_features().flatten().split(",")


def _rounded_once(a, scale, b):
    """a + scale * b rounded once (to nearest, ties to even) into a's dtype, from exact rational arithmetic."""
    from fractions import Fraction
    dtype = a.dtype.type
    result = []
    for x, y in zip(a, b):
        exact = Fraction(float(x)) + Fraction(float(scale)) * Fraction(float(y))
        guess = dtype(float(exact))  # within one step of the answer (float() rounds once more on the way)
        candidates = [np.nextafter(guess, dtype(-np.inf)), guess, np.nextafter(guess, dtype(np.inf))]
        distance = [abs(Fraction(float(c)) - exact) for c in candidates]
        best = min(distance)
        ties = [c for c, d in zip(candidates, distance) if d == best]
        result.append(ties[0] if len(ties) == 1 else next(c for c in ties if not c.view(f"u{c.itemsize}") & 1))
    return np.array(result, a.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
@pytest.mark.parametrize("op", ["add", "sub"])
def test_scaled_add_rounds_once_like_torchs_fmadd(dtype, op, threaded):
    rng = np.random.default_rng(11)
    a = (rng.normal(size=3001) * np.exp2(rng.integers(-30, 30, 3001))).astype(dtype)
    b = (rng.normal(size=3001) * np.exp2(rng.integers(-30, 30, 3001))).astype(dtype)
    a[:6] = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0]
    b[:6] = [1.0, np.inf, 2.0, -0.0, -0.0, np.inf]
    scale = dtype(0.37)
    threaded()
    for in_place in (False, True):
        out = a.copy() if in_place else np.full_like(a, np.nan)
        K.op_tensor(op, out if in_place else a, b, out, 1, scale, 0)
        signed = scale if op == "add" else -scale
        if _host_has_fma():
            want = _rounded_once(a[6:], signed, b[6:])
        else:  # two roundings: the scaled b, then the sum
            want = (a[6:] + (b[6:] * signed).astype(dtype)).astype(dtype)
        assert np.array_equal(_bits(out[6:]), _bits(want)), (op, in_place)
        with np.errstate(invalid="ignore"):
            special = a[:6] + signed * b[:6]
        np.testing.assert_array_equal(out[:6], special)  # inf - inf is NaN, -0.0 + 0.37 * -0.0 is -0.0


def test_scaled_add_leaves_the_general_path_for_other_cases():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(40, 30)).astype(np.float32), rng.normal(size=(40, 30)).astype(np.float32)
    for case in [dict(alpha1=2.0, alpha2=0.5, beta=0.0), dict(alpha1=1, alpha2=0.5, beta=1.0),
                 dict(alpha1=1, alpha2=0.5, beta=0.0, strided=True), dict(alpha1=1, alpha2=0.5, beta=0.0, row=True)]:
        x = a[:, ::2] if case.get("strided") else a
        y = b[:1] if case.get("row") else (b[:, ::2] if case.get("strided") else b)
        out = np.ones(x.shape, np.float32)
        previous = out.copy()
        K.op_tensor("add", x, y, out, case["alpha1"], case["alpha2"], case["beta"])
        want = case["alpha1"] * x.astype(np.float64) + case["alpha2"] * y.astype(np.float64) + case["beta"] * previous
        np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("alpha2", [1.0, 0.5])
@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_small_add_into_an_output_that_overlaps_an_input_reads_the_input_before_writing(alpha2, shift):
    """The one-call paths of a small add (plain, and with alpha) take only inputs that are apart from the output or
    its very view; an output shifted against an input by one element must still see the input's old values."""
    rng = np.random.default_rng(3)
    buffer = rng.normal(size=66).astype(np.float32)
    b = rng.normal(size=64).astype(np.float32)
    a = buffer[1:65]
    out = buffer[1 + shift:65 + shift]
    want = a.astype(np.float64) + alpha2 * b.astype(np.float64)
    K.op_tensor("add", a, b, out, 1.0, alpha2, 0.0)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


def _general_binary(patched):
    """Send plain binary ops to the general blocked driver: neither the small call on this thread nor flat ranges."""
    patched.setattr(BINARY, "INLINE_DIRECT_ELEMENTS", 0)
    patched.setattr(BINARY, "_plain_dense", lambda a, b, out: None)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum", "pow"])
def test_large_plain_ops_in_flat_ranges_match_the_general_path(op, dtype, monkeypatch):
    """Plain operands past the small limit, dense, run as one ufunc call per host thread on flat ranges: the
    general driver's bits for a tensor operand, a 0-d and a (1, 1) one, in place (out the very view of a), and
    uneven ranges (an odd element count). Strided operands still take the general path."""
    if dtype == np.int32:
        a = np.random.default_rng(6).integers(-9, 9, (33, 31)).astype(dtype)
        a[0, :3] = [0, 1, -1]
    else:
        a = _special_values((33, 31), dtype, 6)

    def run(a, b, out):
        if op in ("add", "sub", "mul"):
            K.op_tensor(op, a, b, out)
        else:
            K.binary(op, a, b, out)

    monkeypatch.setattr(BINARY, "INLINE_DIRECT_ELEMENTS", 0)
    monkeypatch.setattr(host_threads, "_cores", 2)
    taken = []
    monkeypatch.setattr(BINARY, "map_flat_ranges", lambda fn, count, *arrays: taken.append(count) or
                        parallel.map_flat_ranges(fn, count, *arrays))
    for b in (a[::-1].copy(), np.array(dtype(3)), np.array([[dtype(-2)]]), np.zeros_like(a)):
        fast, general = np.empty_like(a), np.empty_like(a)
        run(a, b, fast)
        with monkeypatch.context() as patched:
            _general_binary(patched)
            run(a, b, general)
        assert _same_bits(fast, general)
    inplace = a.copy()
    run(inplace, a[::-1].copy(), inplace)
    general = np.empty_like(a)
    with monkeypatch.context() as patched:
        _general_binary(patched)
        run(a, a[::-1].copy(), general)
    assert _same_bits(inplace, general)
    assert taken and set(taken) == {a.size}
    taken.clear()
    strided = np.empty((33, 62), dtype)[:, ::2]
    run(a, a[::-1].copy(), strided)
    assert not taken


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # inf - inf, 0 * inf (queued commands are quiet)
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_small_op_with_a_one_element_operand_matches_the_general_path(op, monkeypatch):
    """A tensor op a one-element operand (a scalar broadcast, one ufunc call on this thread) gives the general
    driver's bits, also when that element is the output's first element (read before it is written)."""
    rng = np.random.default_rng(4)
    a = rng.normal(size=(5, 7)).astype(np.float32)
    a[0, :4] = [-0.0, np.nan, np.inf, -np.inf]
    for scalar in (np.array([-0.0], np.float32), np.array([2.5], np.float32), np.array(3.0, np.float32)):
        fast, general = np.empty_like(a), np.empty_like(a)
        K.op_tensor(op, a, scalar, fast)
        with monkeypatch.context() as patched:
            _general_binary(patched)
            K.op_tensor(op, a, scalar, general)
        assert fast.tobytes() == general.tobytes()
    out = a.copy()
    K.op_tensor(op, out, out.reshape(-1)[:1], out)  # the operand is out's first element
    want = getattr(np, {"add": "add", "sub": "subtract", "mul": "multiply"}[op])(a, a[0, 0])
    assert out.tobytes() == want.tobytes()


def _same_bits(*arrays) -> bool:
    """The arrays hold the same bits, NaN aside: they have NaN at the same places (whose sign and payload x86
    leaves to the order of the operands, which vectorised and scalar loops may swap)."""
    first = arrays[0]
    nan = np.isnan(first)
    return all(np.array_equal(np.isnan(a), nan) and np.where(nan, 0, a).tobytes() == np.where(nan, 0, first).tobytes()
               for a in arrays[1:])


def _special_values(shape, dtype, seed):
    values = np.random.default_rng(seed).normal(size=shape).astype(dtype)
    values.reshape(-1)[:6] = [-0.0, np.nan, np.inf, -np.inf, 0.0, 1e-30]
    return values


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("op", ["div", "maximum", "minimum", "pow"])
def test_small_binary_ops_on_this_thread_match_the_general_path(op, dtype, monkeypatch):
    """div, maximum, minimum and pow of plain small operands (one call on this thread) give the general driver's
    bits, for a tensor and for a one-element operand, in place too."""
    a = _special_values((6, 5), np.float64, 5).astype(dtype) if dtype != np.int32 else \
        np.random.default_rng(5).integers(-9, 9, (6, 5)).astype(dtype)
    for b in (a[::-1].copy(), np.array(dtype(3)), np.array([dtype(-2)])):
        fast, general = np.empty_like(a), np.empty_like(a)
        K.binary(op, a, b, fast)
        with monkeypatch.context() as patched:
            _general_binary(patched)
            K.binary(op, a, b, general)
        assert _same_bits(fast, general)
    inplace = a.copy()
    K.binary(op, inplace, inplace, inplace)
    general = np.empty_like(a)
    with monkeypatch.context() as patched:
        _general_binary(patched)
        K.binary(op, a, a.copy(), general)
    assert _same_bits(inplace, general)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_lerp_addcmul_addcdiv_match_the_general_path(dtype, monkeypatch):
    """lerp with one weight (both sides of its formula, NaN), addcmul and addcdiv of small dense operands, computed
    in one call on this thread, give the general driver's bits; in place (out is the first input) too."""
    x, t1, t2 = (_special_values((7, 3), dtype, seed) for seed in (6, 7, 8))
    cases = [(ARITHMETIC.lerp, (x, t1, np.array(w, dtype))) for w in (0.1, -0.3, 0.5, 0.75, 2.0, np.nan)]
    cases += [(function, (x, t1, t2, value)) for function in (ARITHMETIC.addcmul, ARITHMETIC.addcdiv)
              for value in (0.001, -2.5)]
    for function, arguments in cases:
        fast, general = np.empty_like(x), np.empty_like(x)
        inplace = x.copy()
        function(*arguments, fast)
        function(inplace, *arguments[1:], inplace)
        with monkeypatch.context() as patched:
            patched.setattr(ARITHMETIC, "INLINE_ELEMENTS", -1)
            function(*arguments, general)
        assert _same_bits(fast, general, inplace), function.__name__
