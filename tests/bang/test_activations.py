"""The __bang_active_* family against numpy: float32 and half, special values, domain-restricted forms, and a clear
error for integer buffers."""
import numpy as np
import pytest

import cnrt

from .conftest import from_device, to_device
from .robust_kernels import (UNARY, activation_of_integers, domain_restricted, every_activation, half_sqrt_and_recip,
                             reference)

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 88.0], np.float32)


def _inputs() -> np.ndarray:
    values = np.linspace(-6, 6, 56, dtype=np.float32)
    return np.concatenate([values, SPECIAL]).astype(np.float32)


def test_every_activation_matches_numpy_in_float32(queue):
    x = _inputs()
    y = cnrt.malloc(len(UNARY) * 256)
    every_activation[(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](to_device(x), y)
    cnrt.queueSync(queue)
    out = from_device(y, len(UNARY) * 64, np.float32).reshape(len(UNARY), 64)
    for row, name in enumerate(UNARY):
        expected = reference(name, x).astype(np.float32)
        if name == "active_sign":
            expected = np.where(np.isnan(x), 0.0, expected).astype(np.float32)  # torch.sign(nan) = 0
        np.testing.assert_allclose(out[row], expected, rtol=2e-6, atol=1e-6, equal_nan=True, err_msg=name)
        zero = (x == 0)
        np.testing.assert_array_equal(np.signbit(out[row][zero & np.isfinite(out[row])]),
                                      np.signbit(expected[zero & np.isfinite(expected)]), err_msg=name)


def test_half_buffers_round_once(queue):
    x = np.linspace(0.01, 60000, 64).astype(np.float16)
    y = cnrt.malloc(256)
    half_sqrt_and_recip[(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](to_device(x), y)
    cnrt.queueSync(queue)
    out = from_device(y, 128, np.float16)
    np.testing.assert_array_equal(out[:64], np.sqrt(x.astype(np.float32)).astype(np.float16))
    np.testing.assert_array_equal(out[64:], (1 / x.astype(np.float32)).astype(np.float16))


@pytest.mark.parametrize("which, inside, outside", [(0, 2.0, 0.5), (1, -2.0, 0.25)])
def test_domain_restricted_forms_trap_outside_their_domain(queue, which, inside, outside):
    x = np.full(64, inside, np.float32)
    y = cnrt.malloc(256)
    domain_restricted[(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](to_device(x), y, which)
    cnrt.queueSync(queue)
    expected = 1 / x if which == 0 else np.exp(x)
    np.testing.assert_allclose(from_device(y, 64, np.float32), expected, rtol=1e-6)
    x[17] = outside
    domain_restricted[(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](to_device(x), y, which)
    with pytest.raises(cnrt.CnrtError) as error:
        cnrt.queueSync(queue)
    assert "element 17" in str(error.value) and error.value.code == cnrt.cnrtErrorKernelTrap


def test_an_activation_of_integers_fails_at_the_launch(board):
    with pytest.raises(cnrt.CnrtError) as error:
        activation_of_integers[(1, 1, 1), cnrt.cnrtFuncTypeBlock, None](0)
    assert error.value.code == cnrt.cnrtErrorInvalidKernel
    assert "activation_of_integers" in str(error.value) and "half, bfloat16 or float" in str(error.value), str(error.value)
