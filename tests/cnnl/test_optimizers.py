"""Gradient descent and Adadelta steps (cnnl/ops/optimizers.py) against torch.optim in float64."""
import numpy as np
import pytest

import cnnl

from .helpers import FLOATS, NUMPY, as_float64, empty, random_values, raises_status, sync, tensor
from .tolerances import assert_close
from .nn_helpers import assert_near

torch = pytest.importorskip("torch")  # torch CPU is the reference where numpy would re-implement the op


def _scalar(value, code):
    return tensor(np.array([value]).astype(NUMPY[code]), code).ptr


@pytest.mark.parametrize("code", FLOATS)
def test_gradient_descent_matches_sgd(handle, code):
    rng = np.random.default_rng(code)
    weights, grads = random_values(rng, (4, 6), code), random_values(rng, (4, 6), code)
    param, grad = tensor(weights, code), tensor(grads, code, strides=[1, 4])
    cnnl.gradientDescent(handle, grad.desc, grad.ptr, _scalar(0.125, code), param.desc, param.ptr)
    sync(handle)
    p = torch.tensor(as_float64(weights), requires_grad=True)
    p.grad = torch.from_numpy(as_float64(grads))
    torch.optim.SGD([p], lr=0.125).step()
    assert_close(param.read(), p.detach().numpy(), NUMPY[code], scale=np.abs(as_float64(weights)) + 1)


@pytest.mark.parametrize("code", FLOATS)
def test_adadelta_two_steps_match_torch(handle, code):
    rng = np.random.default_rng(code)
    weights = random_values(rng, (5, 3), code)
    grads = [random_values(rng, (5, 3), code) for _ in range(2)]
    param, avg, acc = tensor(weights, code), tensor(np.zeros((5, 3)), code), tensor(np.zeros((5, 3)), code)
    lr, rho, eps = 0.5, 0.875, 1e-3
    p = torch.tensor(as_float64(weights), requires_grad=True)
    optimizer = torch.optim.Adadelta([p], lr=lr, rho=rho, eps=eps)
    for g in grads:
        grad = tensor(g, code)
        cnnl.applyAdadelta(handle, param.desc, param.ptr, avg.desc, avg.ptr, acc.desc, acc.ptr, grad.desc, grad.ptr,
                           _scalar(lr, code), _scalar(rho, code), _scalar(eps, code))
        p.grad = torch.from_numpy(as_float64(g))
        optimizer.step()
    sync(handle)
    state = optimizer.state[p]  # the states are stored (rounded) between steps: a few roundings of the type
    assert_near(param.read(), p.detach().numpy(), code, what="param")
    assert_near(avg.read(), state["square_avg"].numpy(), code, what="square_avg")
    assert_near(acc.read(), state["acc_delta"].numpy(), code, what="acc_delta")


def test_optimizer_bad_arguments(handle):
    param, other = tensor(np.zeros((2, 3), np.float32)), empty([3, 2])
    lr = _scalar(0.1, cnnl.CNNL_DTYPE_FLOAT)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="grad_desc"):
        cnnl.gradientDescent(handle, other.desc, other.ptr, lr, param.desc, param.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="lr"):
        cnnl.gradientDescent(handle, param.desc, param.ptr, None, param.desc, param.ptr)
    ints = empty([2, 3], cnnl.CNNL_DTYPE_INT32)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="param_desc"):
        cnnl.gradientDescent(handle, ints.desc, ints.ptr, lr, ints.desc, ints.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="accum_update_desc"):
        cnnl.applyAdadelta(handle, param.desc, param.ptr, param.desc, param.ptr, other.desc, other.ptr, param.desc,
                           param.ptr, lr, lr, lr)
