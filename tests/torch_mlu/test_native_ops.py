"""The native kernels of this issue against torch's CPU kernels: add/sub/mul/div (Tensor, Scalar, in-place, out=,
alpha, type promotion, broadcasting, strides), fill_/zero_, and the matrix products (mm, addmm, bmm, matmul, linear),
none of them falling back to the CPU."""
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cnnl.opcall
from mlusim.observers import CommandRecorder
from torch_mlu import fallback

FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
NUMBERS = FLOATS + [torch.int32, torch.int64, torch.int16, torch.uint8]
TOLERANCE = {torch.float16: dict(rtol=1e-3, atol=1e-3), torch.bfloat16: dict(rtol=8e-3, atol=8e-3)}


def _values(shape, dtype, seed):
    generator = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=generator) * 10).to(dtype)
    low = 0 if dtype == torch.uint8 else -50
    return torch.randint(low, 50, shape, generator=generator).to(dtype)


def _check(device_result, cpu_result):
    assert device_result.device.type == "mlu"
    assert device_result.dtype == cpu_result.dtype and device_result.shape == cpu_result.shape
    torch.testing.assert_close(device_result.cpu(), cpu_result, equal_nan=True,
                               **TOLERANCE.get(cpu_result.dtype, {}))


shapes = st.lists(st.integers(1, 4), min_size=0, max_size=3)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["add", "sub", "mul", "div"]), st.sampled_from(NUMBERS), shapes, shapes,
       st.integers(0, 1000))
def test_binary_tensor_ops_match_cpu_with_broadcasting(name, dtype, left_shape, right_shape, seed):
    try:
        torch.broadcast_shapes(left_shape, right_shape)
    except RuntimeError:
        return
    a, b = _values(left_shape, dtype, seed), _values(right_shape, dtype, seed + 1)
    if name == "div":
        b = torch.where(b == 0, torch.ones_like(b), b)
    op = getattr(torch, name)
    with fallback.mode("error"):
        result = op(a.to("mlu"), b.to("mlu"))
    _check(result, op(a, b))


@pytest.mark.parametrize("dtype", NUMBERS)
def test_scalar_forms_alpha_and_promotion(dtype):
    a = _values((3, 4), dtype, 1)
    d = a.to("mlu")
    for device_result, cpu_result in [
        (d + 3, a + 3), (d * 2, a * 2), (d - 1, a - 1), (d / 4, a / 4),
        (d + 1.5, a + 1.5), (2 * d, 2 * a),
        (torch.add(d, d, alpha=2), torch.add(a, a, alpha=2)), (torch.sub(d, d, alpha=3), torch.sub(a, a, alpha=3)),
        (torch.ops.aten.add.Scalar(d, 2), torch.ops.aten.add.Scalar(a, 2)),
        (torch.ops.aten.mul.Scalar(d, 3), torch.ops.aten.mul.Scalar(a, 3)),
        (d * torch.tensor(2, dtype=torch.int64), a * torch.tensor(2, dtype=torch.int64)),
    ]:
        _check(device_result, cpu_result)
    assert fallback.counts() == {}


SPECIALS = [0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"), 3e38, -1e-45, 7.0]


def _same_bits(got: torch.Tensor, want: torch.Tensor) -> bool:
    """Bit for bit, except the sign of a 16-bit NaN (torch's float -> bfloat16 conversion makes every NaN +0x7FC0,
    the device keeps a NaN's sign): NaN where torch has NaN, the same bits everywhere else."""
    if want.dtype in (torch.float16, torch.bfloat16):
        nan = want.isnan()
        return torch.equal(got.isnan(), nan) and torch.equal(got[~nan].view(torch.int16), want[~nan].view(torch.int16))
    return torch.equal(got.contiguous().view(torch.uint8), want.contiguous().view(torch.uint8))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32,
                                   torch.int64, torch.int8, torch.uint8])
def test_tensor_and_number_are_torchs_bits_on_first_and_later_calls(dtype):
    """add/sub/mul of a tensor and a number (Python or 0-d cpu tensor), out of place and in place, alpha too: one
    cnnlTransform_v2 with the number on the host, on the first call (cnnl validates) and the later ones (cnnl
    remembers); each gives torch's CPU bits (signed zeros, NaN, inf, half rounding, integer wrap)."""
    if dtype.is_floating_point:
        a = torch.tensor(SPECIALS, dtype=dtype)
        numbers = [2.5, -0.0, 0.0, 1e39, -3, float("nan"), torch.tensor(0.1, dtype=torch.float64)]
    else:
        a = torch.arange(-6, 6).to(dtype) if dtype != torch.uint8 else torch.arange(250, 256).to(dtype)
        numbers = [3, -7, 2 ** 40 + 5, 300, torch.tensor(9)]
    d = a.to("mlu")
    with fallback.mode("error"):
        for _ in range(3):
            for number in numbers:
                for name in ("add", "sub", "mul"):
                    op = getattr(torch, name)
                    want = op(a, number)
                    got = op(d, number)
                    assert got.dtype == want.dtype and _same_bits(got.cpu(), want), (name, number)
                    inplace = d.clone()
                    getattr(inplace, f"{name}_")(number)
                    assert _same_bits(inplace.cpu(), want), (name, number)
                if dtype.is_floating_point:
                    want = torch.add(a, number, alpha=-0.5)
                    assert _same_bits(torch.add(d, number, alpha=-0.5).cpu(), want)
    assert _same_bits(d.cpu(), a)  # the operand is untouched


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_strided_tensors_times_a_number_are_torchs_bits(dtype):
    """A transposed or sliced tensor and a number take the same one-command path (cnnlTransform_v2 reads the
    strides); a 16-bit multiplier stays a float32, as torch's (half 1e-3 * 1e5 is about 100, not inf)."""
    a = torch.randn(33, 17).to(dtype)
    a[0, 0] = 1e-3
    d = a.to("mlu")
    for view, cpu_view in [(d.t(), a.t()), (d[::2, 3:], a[::2, 3:])]:
        for number in (0.1, 1e5, -3):
            for name in ("add", "sub", "mul"):
                want = getattr(torch, name)(cpu_view, number)
                assert _same_bits(getattr(torch, name)(view, number).cpu(), want), (name, number)
    assert (d.t() * 1e5).cpu()[0, 0].item() == pytest.approx(100.0, rel=1e-2)  # not inf


def test_a_counter_incremented_in_place_is_one_command_per_call():
    """`num_batches_tracked += 1` (batch norm, every training step): one queued cnnlTransform_v2 per call with the
    number on the host, no fill of a device scalar."""
    counter = torch.zeros((), dtype=torch.int64, device="mlu")
    counter.add_(1)
    torch.mlu.synchronize()
    with CommandRecorder() as recorder:
        for _ in range(5):
            counter.add_(1)
        torch.mlu.synchronize()
    assert [command.name for _, command in recorder.commands] == ["cnnlTransform_v2"] * 5
    assert counter.item() == 6


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_add_and_sub_with_alpha_are_torchs_bits(dtype):
    """a + alpha * b as torch's CPU kernel computes it (one fused multiply-add), out of place and in place."""
    a, b = torch.randn(301, 7, dtype=dtype) * 1e3, torch.randn(301, 7, dtype=dtype)
    d, e = a.to("mlu"), b.to("mlu")
    for device_result, cpu_result in [(torch.add(d, e, alpha=0.3), torch.add(a, b, alpha=0.3)),
                                      (torch.sub(d, e, alpha=1e-3), torch.sub(a, b, alpha=1e-3)),
                                      (d.clone().add_(e, alpha=-7.1), a.clone().add_(b, alpha=-7.1))]:
        assert torch.equal(device_result.cpu(), cpu_result)
    assert fallback.counts() == {}


def test_mixed_dtypes_promote_like_cpu():
    pairs = [(torch.float16, torch.float32), (torch.int32, torch.float64), (torch.int64, torch.int16),
             (torch.uint8, torch.int8), (torch.bfloat16, torch.float16)]
    for left, right in pairs:
        a, b = _values((5,), left, 3), _values((5,), right, 4)
        for op in (torch.add, torch.mul, torch.sub):
            _check(op(a.to("mlu"), b.to("mlu")), op(a, b))
        _check(torch.div(a.to("mlu"), b.to("mlu") + 100), torch.div(a, b + 100))
    ints = torch.tensor([7, -7, 3])
    _check(ints.to("mlu") / 2, ints / 2)  # true division of integers gives floats


def test_in_place_and_out_forms():
    a = torch.randn(4, 5)
    d = a.to("mlu")
    address = d.data_ptr()
    d.add_(torch.ones(5, device="mlu"), alpha=2).mul_(3).sub_(1).div_(2)
    assert d.data_ptr() == address
    _check(d, ((a + 2) * 3 - 1) / 2)
    out = torch.empty(0, device="mlu")
    torch.mul(d, d, out=out)
    _check(out, torch.mul(d.cpu(), d.cpu()))
    half_out = torch.empty(4, 5, dtype=torch.float16, device="mlu")
    torch.add(d, 1, out=half_out)  # the result is cast into out's dtype
    _check(half_out, (d.cpu() + 1).half())
    ints = torch.ones(3, dtype=torch.int32, device="mlu")
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Int"):
        ints.add_(1.5)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        torch.ones(3, device="mlu").add_(torch.ones(2, 3, device="mlu"))
    with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
        torch.add(ints, ints, alpha=0.5)


@pytest.mark.parametrize("dtype", NUMBERS)
def test_in_place_forms_of_one_shape_match_cpu_with_aliases(dtype):
    """add_/sub_/mul_ of a tensor of self's shape and dtype (the optimizers' and running sums' case), with alpha,
    with self as its own operand; an operand that overlaps self shifted by one element is refused, as by torch's
    CPU kernels, and one in the other half of the same storage is not. Half and
    bfloat16 are computed in float32 and rounded once: torch's CPU kernels round alpha * b to the half type first
    (alpha -3: -22.28125 + -3 * -22.28125 gives 44.59375 there, the exact 44.5625 here)."""
    alphas = [1, 2, -3] + ([0.5, 1e-9] if dtype.is_floating_point else [])
    if dtype == torch.uint8:
        alphas = [1, 2]
    reduced = dtype in (torch.float16, torch.bfloat16)

    def reference(name, a, b, kwargs):  # (the results of float32 in place are rounded into a at the end)
        if not reduced:
            return getattr(a, name)(b, **kwargs)
        return a.copy_(getattr(a.float(), name)(b.float(), **kwargs))

    for name in ("add_", "sub_", "mul_"):
        for alpha in alphas if name != "mul_" else [1]:
            kwargs = {} if name == "mul_" else {"alpha": alpha}
            a, b = _values((6, 7), dtype, 5), _values((6, 7), dtype, 6)
            d, e = a.to("mlu"), b.to("mlu")
            _check(getattr(d, name)(e, **kwargs), reference(name, a, b, kwargs))
            _check(getattr(d, name)(d, **kwargs), reference(name, a, a.clone(), kwargs))
            flat_a, flat_d = a.reshape(-1), d.reshape(-1)
            for flat in (flat_a, flat_d):
                with pytest.raises(RuntimeError, match="refer to a single memory location"):
                    getattr(flat[1:], name)(flat[:-1], **kwargs)
            _check(getattr(flat_d[:21], name)(flat_d[21:], **kwargs), reference(name, flat_a[:21], flat_a[21:], kwargs))
            _check(d, a)
    assert fallback.counts() == {}
    if not dtype.is_floating_point:
        d = _values((4,), dtype, 7).to("mlu")
        with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
            d.add_(d, alpha=0.5)


@pytest.mark.parametrize("device", ["cpu", "mlu"])
def test_out_and_broadcast_forms_refuse_a_partial_overlap_like_cpu(device):
    x = torch.arange(1.0, 9.0, device=device)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        torch.add(x[1:], x[:-1], out=x[:-1])
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        torch.mul(x[1:], 2, out=x[:-1])
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        x.view(2, 4)[1:].add_(x[3:7])  # a broadcastable operand, partly inside the written row
    torch.add(x[:4], x[4:], out=x[4:])  # the very view, and memory apart, are fine
    x[::2].add_(x[1::2])  # not dense: torch does not judge these ("too hard"), nor does this
    x.add_(x)
    assert x.cpu().tolist() == [6.0, 4.0, 14.0, 8.0, 28.0, 16.0, 44.0, 24.0]


@pytest.mark.parametrize("name", ["addcdiv", "addcmul"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64])
def test_addcdiv_addcmul_in_place_match_cpu(name, dtype):
    # in place the output is the input itself (or tensor2): the result must not overwrite an operand still to be read
    # (addcdiv_ is AdamW's step, through _foreach_addcdiv_)
    a, t1 = _values((4, 6), dtype, 1), _values((4, 6), dtype, 2)
    t2 = _values((4, 6), dtype, 3).abs() + 1
    with fallback.mode("error"):
        d = a.to("mlu")
        getattr(d, name + "_")(t1.to("mlu"), t2.to("mlu"), value=-0.03)
        _check(d, getattr(a.clone(), name + "_")(t1, t2, value=-0.03))
        d2 = t2.to("mlu")
        getattr(torch, name)(a.to("mlu"), t1.to("mlu"), d2, value=0.5, out=d2)  # out is tensor2
        _check(d2, getattr(torch, name)(a, t1, t2, value=0.5))
        params = [a.to("mlu"), a[:2].to("mlu")]
        getattr(torch, f"_foreach_{name}_")(params, [t1.to("mlu"), t1[:2].to("mlu")], [t2.to("mlu"), t2[:2].to("mlu")],
                                            [-0.03, 2.0])
        _check(params[0], getattr(a.clone(), name + "_")(t1, t2, value=-0.03))
        _check(params[1], getattr(a[:2].clone(), name + "_")(t1[:2], t2[:2], value=2.0))


def test_strided_operands_and_special_values():
    a = torch.randn(6, 4)
    d = a.to("mlu")
    _check(d.t() + d.t(), a.t() + a.t())
    _check(d[::2] * d[1::2], a[::2] * a[1::2])
    special = torch.tensor([float("inf"), -float("inf"), float("nan"), -0.0, 0.0, 1e-45])
    s = special.to("mlu")
    _check(s + s, special + special)
    _check(s * -1, special * -1)
    _check(s / s, special / special)
    _check(s - s, special - special)
    big = torch.tensor([60000.0], dtype=torch.float16)
    _check(big.to("mlu") + big.to("mlu"), big + big)  # half overflow to inf, as on the CPU
    empty = torch.empty(0, 3, device="mlu")
    assert (empty + empty).shape == (0, 3)


def test_fill_and_zero():
    t = torch.empty(3, 4, device="mlu")
    t.fill_(2.5)
    assert t.cpu().tolist() == [[2.5] * 4] * 3
    t[:, 1].fill_(-1)  # a strided view
    assert t.cpu()[:, 1].tolist() == [-1.0] * 3 and t.cpu()[:, 0].tolist() == [2.5] * 3
    t.zero_()
    assert t.cpu().abs().sum().item() == 0
    ints = torch.empty(4, dtype=torch.int32, device="mlu").fill_(2.9)
    assert ints.cpu().tolist() == [2] * 4  # truncated, as on the CPU
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without overflow"):
        torch.empty(2, dtype=torch.uint8, device="mlu").fill_(300)
    flags = torch.empty(2, dtype=torch.bool, device="mlu").fill_(3)
    assert flags.cpu().tolist() == [True, True]
    t.fill_(torch.tensor(7.0, device="mlu"))  # read on the device
    assert t.cpu().tolist() == [[7.0] * 4] * 3
    t.fill_(torch.tensor(-2))  # a cpu 0-d value
    assert t.cpu().tolist() == [[-2.0] * 4] * 3
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
        t.fill_(torch.ones(2, device="mlu"))
    assert torch.zeros(2, 2, device="mlu").cpu().tolist() == [[0, 0], [0, 0]]
    assert torch.full((2,), 4, device="mlu").cpu().tolist() == [4, 4]
    assert fallback.counts() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_matrix_products_match_cpu(dtype):
    a, b, bias = _values((5, 7), dtype, 1), _values((7, 3), dtype, 2), _values((3,), dtype, 3)
    da, db, dbias = a.to("mlu"), b.to("mlu"), bias.to("mlu")
    tolerance = dict(rtol=2e-2, atol=2e-1) if dtype in (torch.float16, torch.bfloat16) else {}

    def check(device_result, cpu_result):
        assert device_result.device.type == "mlu" and device_result.dtype == dtype
        torch.testing.assert_close(device_result.cpu(), cpu_result, **tolerance)

    with fallback.mode("error"):
        check(da @ db, a @ b)
        check(db.t() @ da.t(), b.t() @ a.t())  # transposed operands: cnnl's transpose flags
        check(torch.addmm(dbias, da, db, beta=0.5, alpha=2), torch.addmm(bias, a, b, beta=0.5, alpha=2))
        check(torch.nn.functional.linear(da, db.t(), dbias), torch.nn.functional.linear(a, b.t(), bias))
        a3, b3 = _values((2, 4, 5), dtype, 4), _values((2, 5, 3), dtype, 5)
        check(torch.bmm(a3.to("mlu"), b3.to("mlu")), torch.bmm(a3, b3))
        check(a3.to("mlu") @ b.to("mlu")[:5], a3 @ b[:5])  # torch.matmul folds batches into mm
        check(torch.mm(da[:, :0], db[:0]), torch.mm(a[:, :0], b[:0]))  # an empty inner dimension: zeros
        out = torch.empty(5, 3, dtype=dtype, device="mlu")
        torch.mm(da, db, out=out)
        check(out, a @ b)


def test_matrix_product_errors_are_torchs():
    a = torch.ones(2, 3, device="mlu")
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"):
        a @ a
    with pytest.raises(RuntimeError, match="expected mat1 and mat2 to have the same dtype"):
        torch.mm(a, torch.ones(3, 2, dtype=torch.float64, device="mlu"))


def test_autograd_through_native_ops():
    a = torch.randn(4, 3, requires_grad=True)
    b = torch.randn(3, 2, requires_grad=True)
    da = a.detach().to("mlu").requires_grad_()
    db = b.detach().to("mlu").requires_grad_()
    ((da @ db) * 2 - da.sum() / 3).sum().backward()
    ((a @ b) * 2 - a.sum() / 3).sum().backward()
    torch.testing.assert_close(da.grad.cpu(), a.grad)
    torch.testing.assert_close(db.grad.cpu(), b.grad)


def test_the_adding_an_op_example_of_the_docs_works(monkeypatch):
    # the example of docs/torch.md, registering into a library of its own that is removed afterwards
    import re
    from pathlib import Path
    from torch_mlu.ops import _core
    text = (Path(__file__).parents[2] / "docs" / "torch.md").read_text()
    example = re.search(r"## Adding an op.*?```python\n(.*?)```", text, re.S).group(1)
    library = torch.library.Library("aten", "IMPL")
    monkeypatch.setattr(_core, "LIBRARY", library)
    monkeypatch.setattr(_core, "REGISTERED", {})
    try:
        exec(compile(example, "docs/torch.md", "exec"), {})
        x = torch.arange(12.0).reshape(1, 2, 2, 3)
        d = x.to("mlu")
        with fallback.mode("error"):
            y = torch.nn.functional.pad(d, (1, 2, 1, 0), mode="replicate")
            z = torch.empty(0, device="mlu")
            torch.ops.aten.replication_pad2d.out(d.transpose(2, 3), [0, 1, 2, 0], out=z)  # strided, into out=
        assert torch.equal(y.cpu(), torch.nn.functional.pad(x, (1, 2, 1, 0), mode="replicate"))
        assert torch.equal(z.cpu(), torch.nn.functional.pad(x.transpose(2, 3), (0, 1, 2, 0), mode="replicate"))
        with pytest.raises(RuntimeError, match="padding size is expected to be 4"):
            torch.ops.aten.replication_pad2d.out(d, [1, 1], out=z)  # torch's own error, from the CPU fallback
        assert list(_core.REGISTERED) == ["aten::replication_pad2d.out"]
    finally:
        library._destroy()
    with fallback.mode("error"), pytest.raises(NotImplementedError, match="aten::replication_pad2d.out"):
        torch.nn.functional.pad(d, (1, 2, 1, 0), mode="replicate")  # the example's registration is gone again


def test_a_loop_of_tiny_ops_stays_right_when_shapes_strides_dtypes_and_forms_change():
    """cnnl's memory of validated descriptors, torch_mlu's descriptor cache and the address lookups
    that remember their last block carry nothing over to a call whose shape, strides or dtype differ, nor to the
    in-place and out= forms; freed outputs are reused by the next op at once."""
    with fallback.mode("error"):
        for _ in range(3):
            for shape, dtype in [((1,), torch.float32), ((1,), torch.float32), ((2, 3), torch.float32),
                                 ((1,), torch.float64), ((1,), torch.int32), ((2, 3), torch.int64)]:
                a, b = _values(shape, dtype, 1), _values(shape, dtype, 2)
                da, db = a.mlu(), b.mlu()
                for name in ("add", "sub", "mul"):
                    _check(getattr(torch, name)(da, db), getattr(torch, name)(a, b))
                odd_a, odd_b = (torch.empty_strided((1,) + shape, (100,) + tuple(da.stride()), dtype=dtype,
                                                    device="mlu") for _ in range(2))
                odd_a.copy_(da)  # contiguous, with a stride of 100 on their size-1 axis
                odd_b.copy_(db)
                _check(odd_a + odd_b, (a + b).unsqueeze(0))
                if len(shape) == 2:
                    _check(da.t() * db.t(), a.t() * b.t())  # strided operands
                _check(torch.add(da, db, out=torch.empty(0, dtype=dtype, device="mlu")), a + b)
                target = da.clone()
                target += db
                _check(target, a + b)
                _check(da, a)  # the inputs are untouched


def test_convolutions_repeated_across_shapes_and_dtypes_match_cpu():
    """Each convolution problem asks cnnl for its algorithm and workspace once (torch_mlu caches the answer per
    descriptors): problems alternating in shape and dtype (half needs a float32 workspace) still get their own."""
    import torch.nn.functional as F
    torch.manual_seed(3)
    cases = [((2, 3, 9, 8), (4, 3, 3, 3), torch.float32, 1), ((2, 4, 6, 6), (4, 4, 3, 3), torch.float16, 1),
             ((2, 3, 9, 8), (4, 3, 3, 3), torch.float16, 2), ((1, 4, 5, 7), (6, 2, 3, 1), torch.float32, 1)]
    for _ in range(2):
        for x_shape, w_shape, dtype, stride in cases:
            groups = x_shape[1] // w_shape[1]
            x, w = torch.randn(x_shape), torch.randn(w_shape)
            xd = x.to("mlu", dtype).requires_grad_()
            wd = w.to("mlu", dtype).requires_grad_()
            xc, wc = x.to(dtype).float().requires_grad_(), w.to(dtype).float().requires_grad_()
            y = F.conv2d(xd, wd, stride=stride, padding=1, groups=groups)
            want = F.conv2d(xc, wc, stride=stride, padding=1, groups=groups)
            grad = torch.randn(want.shape)
            y.backward(grad.to("mlu", dtype))
            want.backward(grad.to(dtype).float())
            tolerance = dict(rtol=1e-2, atol=1e-2) if dtype == torch.float16 else dict(rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(y.float().cpu(), want, **tolerance)
            torch.testing.assert_close(xd.grad.float().cpu(), xc.grad, **tolerance)
            torch.testing.assert_close(wd.grad.float().cpu(), wc.grad, **tolerance)
    assert fallback.counts() == {}


@pytest.mark.parametrize("reduction", [0, 1, 2])  # none, mean, sum
def test_nll_loss_backward_writes_every_element_of_its_grad_input(reduction):
    """The gradient of nll_loss is computed straight into a contiguous grad_input (no buffer and copy): every
    element is written (a grad_input full of NaN comes back as CPU's), ignored and weighted labels included; a
    strided grad_input still gets the same values."""
    torch.manual_seed(4)
    x, target, weight = torch.randn(6, 5), torch.tensor([1, 4, 0, 2, 2, 3]), torch.rand(5)
    upstream = torch.randn(6) if reduction == 0 else torch.tensor(1.7)
    total = weight[target][target != 2].sum()
    want = torch.ops.aten.nll_loss_backward(upstream, x, target, weight, reduction, 2, total)
    with fallback.mode("error"):
        for grad_input in (torch.full((6, 5), float("nan"), device="mlu"),
                           torch.full((5, 6), float("nan"), device="mlu").t()):
            got = torch.ops.aten.nll_loss_backward.grad_input(upstream.mlu(), x.mlu(), target.mlu(), weight.mlu(),
                                                              reduction, 2, total.mlu(), grad_input=grad_input)
            assert got is grad_input
            torch.testing.assert_close(got.cpu(), want)


@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_without_class_weights_queues_only_its_own_commands(weighted, monkeypatch):
    """nll_loss forward and backward with no class weight (cross_entropy's usual call) pass NULL to
    cnnlNlllossForward_v2 / cnnlNlllossBackward_v2 (every class weighs 1): no ones tensor is built and filled per
    call. Values and gradients match CPU either way."""
    torch.manual_seed(5)
    logits, target = torch.randn(7, 4), torch.tensor([0, 3, 1, 1, 2, 0, 3])
    weight = torch.rand(4) if weighted else None
    names = []
    submit = cnnl.opcall.OpCall.submit

    def counting(self, *args, **kwargs):
        names.append(self.name)
        return submit(self, *args, **kwargs)

    x = logits.log_softmax(1).mlu().requires_grad_()
    monkeypatch.setattr(cnnl.opcall.OpCall, "submit", counting)
    with fallback.mode("error"):
        loss = torch.ops.aten.nll_loss_forward(x, target.mlu(), None if weight is None else weight.mlu(), 1, -100)[0]
        grad = torch.ops.aten.nll_loss_backward(torch.tensor(1.3).mlu(), x, target.mlu(),
                                                None if weight is None else weight.mlu(), 1, -100,
                                                torch.tensor(7.0 if weight is None else float(weight[target].sum()))
                                                .mlu())
    torch.mlu.synchronize()
    reference = logits.log_softmax(1).requires_grad_()
    want = torch.nn.functional.nll_loss(reference, target, weight=weight)
    want.backward(torch.tensor(1.3))
    torch.testing.assert_close(loss.cpu(), want.detach())
    torch.testing.assert_close(grad.cpu(), reference.grad)
    commands = [n for n in names if "Nll" in n or "Fill" in n]
    assert commands[0] == "cnnlNlllossForward_v2" and commands[-1] == "cnnlNlllossBackward_v2"
    assert weighted or commands == ["cnnlNlllossForward_v2", "cnnlNlllossBackward_v2"]


@pytest.mark.parametrize("dtype", [None, torch.int32, torch.float32, torch.float16])
def test_arange_sizes_values_and_errors_match_cpu(dtype):
    """arange on mlu: integer bounds (sized without the meta device), float bounds and their rounding, empty ranges,
    and torch's errors for a zero step and bounds against the step's sign."""
    with fallback.mode("error"):
        floats = [(0.5, 3.2, 0.7), (1, 2.5, 0.5)] if dtype in (None, torch.float32, torch.float16) else []
        for bounds in [(64,), (3, 17, 4), (5, 0, -2), (5, 0, -3), (0, 0), (-7, 8, 3), (10, 1, -1)] + floats:
            want = torch.arange(*bounds, dtype=dtype)
            got = torch.arange(*bounds, dtype=dtype, device="mlu")
            assert got.dtype == want.dtype and torch.equal(got.cpu(), want), bounds
        for bounds, message in [((0, 5, 0), "step must be nonzero"), ((5, 0, 1), "inconsistent with step sign"),
                                ((0, 5, -1), "inconsistent with step sign")]:
            with pytest.raises(RuntimeError, match=message):
                torch.arange(*bounds, dtype=dtype, device="mlu")
