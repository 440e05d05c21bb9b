"""The numba kernels: pointwise, reduction and persistent-reduction kernels give eager CPU's results, in every
dtype the device has, on odd sizes, non-contiguous inputs, masked and indirect loads and accumulating stores."""
import pytest
import torch
import torch.nn.functional as F

from .helpers import assert_close, kernel_records, commands_of

torch.manual_seed(0)


def compiled_vs_eager(fn, *inputs, tol=1e-5):
    expected = fn(*inputs)
    actual = torch.compile(fn)(*[x.to("mlu") for x in inputs])
    assert_close(actual, expected, tol)
    return actual


def test_pointwise_chain_is_one_kernel():
    def fn(x, y):
        return torch.tanh(x * y + 1.0).relu() * 2.0 - x.exp() / (y.abs() + 1)
    x, y = torch.randn(37, 129), torch.randn(37, 129)
    compiled_vs_eager(fn, x, y)
    records = commands_of(torch.compile(fn), x.mlu(), y.mlu())
    assert [r.kind for r in records] == ["kernel"]
    assert records[0].name.startswith("mlu_poi_fused")


def test_broadcast_and_non_contiguous_inputs():
    def fn(x, bias, t):
        return (x + bias) * t.t()
    compiled_vs_eager(fn, torch.randn(17, 33), torch.randn(33), torch.randn(33, 17))


def test_reductions_keepdim_odd_sizes():
    def fn(x):
        kept = [getattr(x, op)(dim=1, keepdim=True).float()
                for op in ("sum", "mean", "amax", "amin", "prod", "var", "std", "argmax", "argmin")]
        inner = [x.sum((0, 2)), x.amax((0, 2)), x.var((0, 2)), x.argmax(2).float(), x.argmin(0).float()]
        return torch.cat([t.flatten() for t in kept + inner])
    compiled_vs_eager(fn, torch.rand(5, 7, 13) + 0.5, tol=1e-4)


def test_reductions_of_booleans_and_integers():
    def fn(x, i):
        return (x > 0).any(1).int() + (x > -2).all(1).int() + i.sum(1) + i.amax(1)
    compiled_vs_eager(fn, torch.randn(6, 11), torch.randint(-50, 50, (6, 11), dtype=torch.int32))


def test_full_and_large_reductions_are_split_and_exact():
    # Inductor splits reductions over few rows into partial and final kernels (welford_combine for the variance)
    def fn(x):
        return x.sum(), x.double().mean(-1), x.var()
    x = torch.randn(3, 200003) + 5
    expected = fn(x)
    total, means, variance = torch.compile(fn)(x.mlu())
    assert_close(total, expected[0], 1e-4)
    assert_close(means, expected[1], 1e-9)
    assert_close(variance, expected[2], 1e-5)


def test_softmax_layer_norm_gelu_chain_is_a_persistent_reduction():
    def fn(x, w, b):
        y = F.gelu(x * 1.5) + x
        return torch.softmax(F.layer_norm(y, y.shape[-1:], w, b), -1)
    x, w, b = torch.randn(19, 257), torch.randn(257), torch.randn(257)
    compiled_vs_eager(fn, x, w, b)
    records = kernel_records(commands_of(torch.compile(fn), x.mlu(), w.mlu(), b.mlu()))
    assert len(records) <= 2 and any(r.name.startswith("mlu_per") for r in records)


def test_looped_reduction_of_a_dynamic_size():
    # a reduction range of unknown size is looped: each stage loads (and computes) its inputs again
    def fn(x):
        return torch.softmax(x, -1)
    compiled = torch.compile(fn, dynamic=True)
    for columns in (70, 301):
        x = torch.randn(3, columns)
        assert_close(compiled(x.mlu()), fn(x))
    records = kernel_records(commands_of(compiled, torch.randn(3, 301, device="mlu")))
    assert any(r.name.startswith("mlu_red") for r in records)


@pytest.mark.parametrize("dtype, tol", [(torch.float16, 1e-2), (torch.bfloat16, 5e-2)])
def test_sixteen_bit_floats_compute_in_float32(dtype, tol):
    def fn(x):
        return F.layer_norm(F.gelu(x) + x, x.shape[-1:]) * 3 + x.to(torch.float32).sum(-1, keepdim=True).to(dtype)
    compiled_vs_eager(fn, torch.randn(9, 65, dtype=dtype), tol=tol)


def test_double_precision_stays_double():
    def fn(x):
        return F.layer_norm(F.gelu(x) + x, x.shape[-1:]) * 3 + x.sum(-1, keepdim=True) + x.var(0)
    compiled_vs_eager(fn, torch.randn(9, 65, dtype=torch.float64), tol=1e-12)


def test_special_values_follow_torch():
    def fn(x):
        return torch.stack([torch.maximum(x, x.flip(0)), torch.minimum(x, x.flip(0)), x.sign(), x.sqrt(),
                            torch.where(x > 0, x, x * 0.5), torch.erf(x), torch.remainder(x, 1.5),
                            torch.fmod(x, -1.5), x.clamp(-1, 1), x.round(), x.trunc()])
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 2.5, -2.5, 1e-30, -7.25, 3.5])
    compiled_vs_eager(fn, x)


def test_integer_semantics():
    def fn(a, b):
        return torch.stack([a // b, a % b, torch.fmod(a, b), a * b, a - b, a << 2, a >> 1, a & b, a | b, a ^ b,
                            torch.div(a, b, rounding_mode="trunc"), a.abs(), torch.maximum(a, b)])
    a = torch.randint(-100, 100, (31,), dtype=torch.int32)
    b = torch.randint(1, 9, (31,), dtype=torch.int32) * torch.where(torch.rand(31) > 0.5, 1, -1).int()
    compiled_vs_eager(fn, a, b)


def test_masked_loads_of_cat_and_pad():
    def fn(x, y):
        return torch.cat([F.pad(x, (1, 2, 0, 1), value=-1.0), y], 0).flip(1)
    compiled_vs_eager(fn, torch.randn(5, 6), torch.randn(3, 9))


def test_indirect_loads_and_accumulating_stores():
    def fn(x, index, values):
        gathered = x[index] * 2 + x.gather(0, index.clamp(max=4))
        return gathered, torch.zeros(9, device=x.device).index_put((index,), values, accumulate=True)
    x, index, values = torch.randn(9), torch.tensor([0, 8, 3, 3, 3, 1, 0]), torch.arange(7.0)
    expected = fn(x, index, values)
    actual = torch.compile(fn)(x.mlu(), index.mlu(), values.mlu())
    assert_close(actual[0], expected[0])
    assert_close(actual[1], expected[1])


def test_an_out_of_bounds_index_is_an_error_not_a_read():
    fn = torch.compile(lambda x, index: x[index] + 1)
    fn(torch.randn(5, device="mlu"), torch.tensor([1, 2], device="mlu"))
    torch.mlu.synchronize()
    with pytest.raises(RuntimeError, match="index out of bounds in a compiled mlu kernel"):
        fn(torch.randn(5, device="mlu"), torch.tensor([1, 5], device="mlu"))
        torch.mlu.synchronize()
    with pytest.raises(Exception):  # the queue reports its sticky error once more, then works again
        torch.mlu.current_stream().synchronize()
    assert torch.compile(lambda x: x + 1)(torch.ones(2, device="mlu")).cpu().tolist() == [2.0, 2.0]


def test_dropout_keeps_the_rate_and_scales_and_is_reproducible():
    def fn(x):
        return F.dropout(x, p=0.25, training=True)
    compiled = torch.compile(fn)
    x = torch.ones(256, 256, device="mlu")
    torch.manual_seed(3)
    first = compiled(x).cpu()
    torch.manual_seed(3)
    again = compiled(x).cpu()
    other = compiled(x).cpu()
    kept = first != 0
    assert set(first.unique().tolist()) <= {0.0, torch.tensor(1.0 / 0.75).item()}
    assert abs(kept.float().mean().item() - 0.75) < 0.01
    assert torch.equal(first, again) and not torch.equal(first, other)


def test_table_generated_ops_match_eager():
    # the ops generated from overrides.py's tables: NaN propagation of the extremes, integer extremes in their own
    # dtype, logical ops of non-boolean values, classification of integers, the two-argument float functions
    def fn(x, y, i, j):
        exact = [torch.maximum(x, y), torch.minimum(x, y), torch.copysign(x, y), torch.nextafter(x, y),
                 torch.isnan(x).float(), torch.isinf(y).float(), torch.logical_and(x, i).float(),
                 torch.logical_or(x, j).float(), torch.logical_xor(i, j).float()]
        libm = [torch.hypot(x, y), torch.atan2(x, y)]  # the host's libm and numba's may differ in the last bit
        ints = [torch.maximum(i, j), torch.minimum(i, j), torch.isnan(i).int(), torch.isinf(j).int()]
        return tuple(torch.cat([t.flatten() for t in part]) for part in (exact, libm, ints))
    x, y = torch.randn(7, 19), torch.randn(7, 19)
    x[0, :4] = torch.tensor([float("nan"), float("inf"), -0.0, 0.0])
    y[0, :4] = torch.tensor([1.0, float("nan"), 0.0, -0.0])
    y[1, 0] = float("-inf")
    i = torch.randint(-3, 3, (7, 19), dtype=torch.int16)
    j = torch.randint(-3, 3, (7, 19), dtype=torch.int16)
    expected = fn(x, y, i, j)
    actual = torch.compile(fn)(x.mlu(), y.mlu(), i.mlu(), j.mlu())
    for got, want, tol in zip(actual, expected, (0, 1e-6, 0)):
        assert_close(got, want, tol)


def test_counter_based_random_numbers_repeat_with_the_seed():
    def fn(x):
        return x + torch.rand_like(x), torch.randn_like(x)
    compiled = torch.compile(fn)
    x = torch.zeros(4, 1000, device="mlu")
    torch.manual_seed(7)
    first = [t.cpu() for t in compiled(x)]
    torch.manual_seed(7)
    again = [t.cpu() for t in compiled(x)]
    for a, b in zip(first, again):
        assert torch.equal(a, b)
    uniform, normal = first
    assert 0.0 <= uniform.min() and uniform.max() < 1.0 and abs(uniform.mean() - 0.5) < 0.02
    assert abs(normal.mean()) < 0.05 and abs(normal.std() - 1.0) < 0.05
