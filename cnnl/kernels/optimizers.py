"""Optimizer steps (`cnnlGradientDescent`, `cnnlApplyAdadelta`) as PyTorch's SGD and Adadelta updates, in place.

Each block of the parameters is loaded into the compute dtype (float32 for half/bfloat16), updated, and every
stored tensor is rounded once; blocks run on both cores.
- gradient descent: param -= lr * grad
- Adadelta: square_avg = rho * square_avg + (1 - rho) * grad^2; delta = sqrt(acc_delta + eps) /
  sqrt(square_avg + eps) * grad; acc_delta = rho * acc_delta + (1 - rho) * delta^2; param -= lr * delta.
"""
import functools

import numpy as np

from .dtypes import FLOAT_DTYPES, check_dtype, check_same_dtype
from .parallel import detach_inputs, run_blocked
from .staging import load, store


def _descent_block(lr, param, grad):
    values = load(param)
    kind = values.dtype.type
    store(values - kind(lr) * load(grad), param)


def gradient_descent(grad, lr, param):
    """param -= lr * grad."""
    check_same_dtype(grad=grad, param=param)
    check_dtype("param", param, FLOAT_DTYPES)
    (grad,) = detach_inputs(param, grad)
    run_blocked(functools.partial(_descent_block, lr), param.shape, [param, grad])


def _adadelta_block(lr, rho, eps, param, square_avg, acc_delta, grad):
    g = load(grad)
    kind = g.dtype.type
    lr, rho, eps = kind(lr), kind(rho), kind(eps)
    with np.errstate(all="ignore"):
        average = rho * load(square_avg) + (1 - rho) * g * g
        accumulated = load(acc_delta)
        delta = np.sqrt(accumulated + eps) / np.sqrt(average + eps) * g
        store(rho * accumulated + (1 - rho) * delta * delta, acc_delta)
        store(average, square_avg)
        store(load(param) - lr * delta, param)


def adadelta(param, square_avg, acc_delta, grad, lr, rho, eps):
    """One Adadelta step, updating param, square_avg and acc_delta in place."""
    check_same_dtype(param=param, square_avg=square_avg, acc_delta=acc_delta, grad=grad)
    check_dtype("param", param, FLOAT_DTYPES)
    (grad,) = detach_inputs(param, grad)
    run_blocked(functools.partial(_adadelta_block, lr, rho, eps), param.shape, [param, square_avg, acc_delta, grad])
