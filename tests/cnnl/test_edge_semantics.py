"""NaN, inf and boundary semantics against PyTorch's CPU kernels (what backend CI compares with): NLL / cross entropy
leave ignored rows out, dropout keeps NaN and inf NaN, activation gradients at NaN and at hardswish's +-3,
sign(NaN), matmul and convolution with alpha 0 (BLAS: the operands are not read), softmax over a fully masked row,
uniform random numbers of 16-bit types in [min, max)."""
import warnings

import numpy as np
import pytest

import cnnl
import cnrt

from .helpers import DeviceTensor, sync

torch = pytest.importorskip("torch")

F, H, BF = cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_BFLOAT16
I32, U8 = cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_UINT8
NAN, INF = float("nan"), float("inf")

pytestmark = pytest.mark.filterwarnings("error")  # ops on NaN/inf give PyTorch's values without numpy warnings


def T(values, code=F) -> DeviceTensor:
    values = np.asarray(values)
    return DeviceTensor(values.shape, code, fill=values)


def blank(dims, code=F) -> DeviceTensor:
    return DeviceTensor(dims, code)


def _same(actual, expected):
    np.testing.assert_array_equal(np.asarray(actual, np.float64), np.asarray(expected, np.float64))


def test_nll_and_cross_entropy_leave_ignored_rows_out(handle):
    logits = np.array([[NAN, INF, 1.0], [0.5, -1.0, 2.0], [-INF, 3.0, NAN]], np.float32)
    labels = np.array([-100, 2, -100], np.int32)  # the rows full of NaN/inf are ignored
    log_probs = torch.log_softmax(torch.tensor(logits), -1)
    for reduction, name in ((cnnl.CNNL_REDUCTION_NONE, "none"), (cnnl.CNNL_REDUCTION_MEAN, "mean"),
                            (cnnl.CNNL_REDUCTION_SUM, "sum")):
        x, t, w, total = T(log_probs.numpy()), T(labels, I32), T(np.ones(3, np.float32)), blank((1,))
        y = blank((3,) if name == "none" else (1,))
        size = cnnl.getNlllossWorkspaceSize(handle, x.desc)
        cnnl.nlllossForward(handle, reduction, cnrt.malloc(size) if size else None, size, x.desc, x.ptr, t.desc,
                            t.ptr, -100, w.desc, w.ptr, total.desc, total.ptr, y.desc, y.ptr)
        sync(handle)
        want = torch.nn.functional.nll_loss(log_probs, torch.tensor(labels, dtype=torch.long), reduction=name)
        _same(y.read().reshape(-1), want.reshape(-1).numpy())
        grad = blank((3, 3))
        dy = T(np.ones(3 if name == "none" else 1, np.float32) * np.float32(NAN if name == "sum" else 1.0))
        cnnl.nlllossBackward(handle, reduction, dy.desc, dy.ptr, t.desc, t.ptr, -100, w.desc, w.ptr, total.desc,
                             total.ptr, grad.desc, grad.ptr)
        sync(handle)
        assert (grad.read()[[0, 2]] == 0).all(), name  # ignored rows get 0 whatever the upstream gradient


def test_dropout_keeps_nan_and_inf_nan(handle):
    values = np.array([NAN, INF, -INF, 1.0] * 64, np.float32)
    x, y, mask = T(values), blank(values.shape), blank(values.shape, U8)
    gen = cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_PHILOX)
    cnnl.fusedDropout_v2(handle, gen, x.desc, x.ptr, 0.5, None, mask.desc, mask.ptr, y.desc, y.ptr)
    sync(handle)
    kept, out = mask.read().astype(bool), y.read()
    assert (~kept).any() and kept.any()
    special = ~np.isfinite(values)
    assert np.isnan(out[special & ~kept]).all(), "a dropped NaN or inf must stay NaN (x * 0), as in PyTorch"
    np.testing.assert_array_equal(out[special & kept], values[special & kept] * 2)
    np.testing.assert_array_equal(out[~special & ~kept], 0.0)


_TORCH_ACTIVATIONS = {
    cnnl.CNNL_ACTIVATION_RELU: (0.0, torch.nn.functional.relu),
    cnnl.CNNL_ACTIVATION_RELU6: (0.0, torch.nn.functional.relu6),
    cnnl.CNNL_ACTIVATION_LEAKYRELU: (0.01, lambda v: torch.nn.functional.leaky_relu(v, 0.01)),
    cnnl.CNNL_ACTIVATION_ELU: (1.0, torch.nn.functional.elu),
    cnnl.CNNL_ACTIVATION_HARDSWISH: (0.0, torch.nn.functional.hardswish),
}  # the piecewise functions, whose values at kinks and NaN are conventions (the smooth ones are NaN at NaN)


@pytest.mark.parametrize("mode", sorted(_TORCH_ACTIVATIONS))
def test_activation_gradients_at_nan_and_at_the_kinks_are_torchs(handle, mode):
    coef, function = _TORCH_ACTIVATIONS[mode]
    points = np.array([NAN, 0.0, -0.0, 3.0, -3.0, 6.0, INF, -INF, 2.5, -2.5], np.float32)
    reference = torch.tensor(points, requires_grad=True)
    forward = function(reference)
    (gradient,) = torch.autograd.grad(forward.sum(), reference)
    desc = cnnl.createActivationDescriptor()
    cnnl.setActivationDescriptor(desc, mode, cnnl.CNNL_NOT_PROPAGATE_NAN, coef)
    x, y, dy, dx = T(points), blank(points.shape), T(np.ones_like(points)), blank(points.shape)
    cnnl.activationForward(handle, desc, None, x.desc, x.ptr, None, y.desc, y.ptr)
    cnnl.activationBackward(handle, desc, None, y.desc, y.ptr, dy.desc, dy.ptr, x.desc, x.ptr, None, dx.desc, dx.ptr)
    sync(handle)
    np.testing.assert_allclose(y.read(), forward.detach().numpy(), rtol=1e-6, atol=1e-7, equal_nan=True)
    np.testing.assert_allclose(dx.read(), gradient.numpy(), rtol=1e-6, atol=1e-7, equal_nan=True)


def test_sign_of_nan_is_zero_and_of_signed_zeros_zero(handle):
    values = np.array([NAN, -0.0, 0.0, INF, -INF, -2.0], np.float32)
    for code in (F, H):
        x, y = T(values.astype(np.float16) if code == H else values, code), blank(values.shape, code)
        cnnl.sign(handle, x.desc, x.ptr, y.desc, y.ptr)
        sync(handle)
        _same(y.read(), torch.sign(torch.tensor(values)).numpy())


def test_alpha_zero_reads_no_operand_as_blas(handle):
    a, b = T(np.full((2, 3), NAN, np.float32)), T(np.full((3, 2), INF, np.float32))
    c = T(np.full((2, 2), 4.0, np.float32))
    cnnl.matMul(handle, False, False, 0.0, a.desc, a.ptr, b.desc, b.ptr, 0.5, c.desc, c.ptr)
    sync(handle)
    _same(c.read(), np.full((2, 2), 2.0))
    cnnl.matMul(handle, False, False, 0.0, a.desc, a.ptr, b.desc, b.ptr, 0.0, c.desc, c.ptr)
    sync(handle)
    _same(c.read(), np.zeros((2, 2)))


def test_softmax_over_a_fully_masked_row_is_torchs_and_warns_nothing(handle):
    rows = np.array([[-INF] * 4, [0.0, 1.0, 2.0, 3.0]], np.float32)
    x, y, dy, dx = T(rows), blank(rows.shape), T(np.ones_like(rows)), blank(rows.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning turned into an error must not make the op fail
        cnnl.softmaxForward(handle, cnnl.CNNL_SOFTMAX_ACCURATE, cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION, None, x.desc,
                            x.ptr, None, y.desc, y.ptr)
        cnnl.softmaxBackward(handle, cnnl.CNNL_SOFTMAX_ACCURATE, cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION, None, y.desc,
                             y.ptr, dy.desc, dy.ptr, None, dx.desc, dx.ptr)
        sync(handle)
    reference = torch.tensor(rows, requires_grad=True)
    forward = torch.softmax(reference, -1)
    forward.backward(torch.ones_like(forward))
    np.testing.assert_allclose(y.read(), forward.detach().numpy(), rtol=1e-6, equal_nan=True)
    np.testing.assert_allclose(dx.read(), reference.grad.numpy(), atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("code", [H, BF, F])
def test_uniform_numbers_never_reach_max(handle, code):
    """A range so narrow that most float64 draws round up to `max` in the stored type."""
    gen = cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_PHILOX)
    count = 4096
    out = blank((count,), code)
    low, high = 1.0, 1.0 + (2.0 ** -8 if code != F else 2.0 ** -20)
    cnnl.randGenerateUniform(handle, gen, code, None, count, low, high, out.ptr)
    sync(handle)
    values = out.read().astype(np.float64)
    assert (values >= low).all() and (values < high).all(), (values.min(), values.max())
