"""The __bang_active_* family against numpy: every function of the family (one compiled loop, the op a run-time
value), special values and signed zeros, the domain-restricted forms' traps, a named intrinsic on half buffers,
and a compile error for integer buffers."""
import numba
import numpy as np
import pytest
from numba.core.errors import TypingError

import cnrt
from mlusim import bang
from mlusim.bang import activations as A
from mlusim.bang.pointer import NRAM, Ptr

from ..conftest import from_device, to_device
from .robust_kernels import every_activation, named_recip, reference

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 88.0], np.float32)
UNRESTRICTED = [op for op in range(len(A._NAMES)) if op not in (A.RECIP_GREATER_1, A.EXP_LESS_0)]


def _run(queue, x, ops):
    y = cnrt.malloc(len(ops) * 256)
    every_activation[(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](to_device(x), y, to_device(np.array(ops, np.int32)),
                                                               len(ops))
    cnrt.queueSync(queue)
    return from_device(y, len(ops) * 64, np.float32).reshape(len(ops), 64)


def test_every_function_of_the_family_matches_numpy(queue):
    x = np.concatenate([np.linspace(-6, 6, 56, dtype=np.float32), SPECIAL])
    out = _run(queue, x, UNRESTRICTED)
    for row, op in enumerate(UNRESTRICTED):
        expected = reference(op, x).astype(np.float32)
        name = A._NAMES[op]
        np.testing.assert_allclose(out[row], expected, rtol=2e-6, atol=1e-6, equal_nan=True, err_msg=name)
        finite = np.isfinite(expected) & (expected == 0)
        np.testing.assert_array_equal(np.signbit(out[row][finite]), np.signbit(expected[finite]), err_msg=name)


@pytest.mark.parametrize("op, inside, outside", [(A.RECIP_GREATER_1, 2.0, 0.5), (A.EXP_LESS_0, -2.0, 0.25)])
def test_domain_restricted_forms_trap_outside_their_domain(queue, op, inside, outside):
    x = np.full(64, inside, np.float32)
    np.testing.assert_allclose(_run(queue, x, [op])[0], reference(op, x), rtol=1e-6)
    x[17] = outside
    with pytest.raises(cnrt.CnrtError) as error:
        _run(queue, x, [op])
    assert "element 17" in str(error.value) and error.value.code == cnrt.cnrtErrorKernelTrap


def test_a_named_intrinsic_on_half_buffers_rounds_once(queue):
    x = np.concatenate([[0.0, -0.0], np.linspace(0.01, 15, 62)]).astype(np.float16)
    y = cnrt.malloc(128)
    named_recip[(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](to_device(x), y)
    cnrt.queueSync(queue)
    with np.errstate(divide="ignore"):
        expected = (1 / x.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(from_device(y, 64, np.float16), expected)  # +-inf at +-0 included


def test_every_named_intrinsic_is_exported_and_calls_its_function():
    for name in A.ACTIVATIONS:
        function = getattr(bang, name)
        documented = "active_pow2" if name == "active_exp2" else name  # exp2 is pow2's other name
        assert function is getattr(A, name) and f"__bang_{documented}" in function.__doc__, name
        stem = name.removeprefix("active_").removesuffix("hp").upper()
        stem = {"EXP2": "POW2", "EXPHP": "EXP", "GELUP": "GELU", "EXP": "EXP"}.get(stem, stem)
        code = getattr(function, "py_func", function).__code__
        assert stem in code.co_names, (name, code.co_names)


def test_an_activation_of_integers_is_a_typing_error_that_says_so():
    @numba.njit
    def check(ptr):
        A.require_float(ptr, "active_sqrt")

    with pytest.raises(TypingError, match=r"active_sqrt: needs half, bfloat16 or float buffers"):
        check(Ptr(np.zeros(4, np.int32), 0, NRAM, "a", bang.int32))
