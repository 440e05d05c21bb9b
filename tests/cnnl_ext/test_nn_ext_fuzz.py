"""Argument fuzzing of the neural-network half of part 3: whatever a caller passes (junk in every position, or in
one or two positions of a valid call), the call returns or raises CnnlError with BAD_PARAM or NOT_SUPPORTED -
never another exception, a crash or a hang; queued work that fails is reported at sync."""
import inspect

import numpy as np
import pytest

import cnnl
import cnrt

from ..cnnl.helpers import empty, sync, tensor

TRIALS = 30
FUNCTIONS = sorted(name for name, function in ((n, getattr(cnnl, n)) for n in dir(cnnl))  # dir: modules load lazily
                   if name.startswith("cnnl") and callable(function)
                   and getattr(function, "__module__", "").rsplit(".", 1)[-1] in (
                       "flash_attention", "interpolate", "rotary", "sync_batch_norm", "im2col", "losses_v2",
                       "ctc_loss", "cdist", "linalg", "random_sampling", "trigon", "nms", "deform_conv",
                       "pooling_nd") and not name.startswith(("cnnlCreate", "cnnlDestroy")))


def junk(handle):
    destroyed = cnnl.createTensorDescriptor()
    cnnl.destroyTensorDescriptor(destroyed)
    floats, ints = tensor(np.ones((2, 3), np.float32)), tensor(np.arange(3, dtype=np.int32))
    four = tensor(np.ones((1, 2, 2, 3), np.float32))
    descriptors = [cnnl.createFlashAttentionDescriptor(), cnnl.createInterpDescriptor(),
                   cnnl.createRotaryEmbeddingDescriptor(), cnnl.createCTCLossDescriptor(), cnnl.createNmsDescriptor(),
                   cnnl.createDCNDescriptor(), cnnl.createTrigonDescriptor(), cnnl.createPoolingDescriptor(),
                   cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_PHILOX)]
    return [None, 0, 1, -1, 3, 5, 2 ** 64, 1.5, float("nan"), float("inf"), "text", b"x", [], [None], [1, 2],
            [2, 2, 2], (0, 7), {"a": 1}, np.zeros(2), np.int64(2), True, handle, floats.desc, ints.desc, four.desc,
            empty([0]).desc, destroyed, floats.ptr, ints.ptr, four.ptr, floats.ptr + 1, 0x1000, object(),
            cnnl.createTensorDescriptor()] + descriptors


@pytest.mark.parametrize("name", FUNCTIONS)
def test_junk_arguments_raise_cnnl_errors(handle, name):
    function = getattr(cnnl, name)
    arity = len(inspect.signature(function).parameters)
    pool = junk(handle)
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(TRIALS):
        args = [pool[i] for i in rng.integers(len(pool), size=arity)]
        if rng.random() < 0.7 and "handle" in inspect.signature(function).parameters:
            args[0] = handle
        try:
            function(*args)
        except cnnl.CnnlError as error:
            assert error.code in (cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED), error
    try:
        sync(handle)
    except cnrt.CnrtError:
        pass  # junk device contents may fail queued work: reported at sync, as on hardware


def test_the_list_covers_the_half():
    assert {"cnnlFlashAttentionForward", "cnnlInterp_v3", "cnnlNms_v2", "cnnlDCNBackwardData",
            "cnnlSetPoolingNdDescriptor_v2", "cnnlRandGenerateMultinomial_v2"} <= set(FUNCTIONS)
    assert len(FUNCTIONS) >= 50


def _valid_call(case):
    """(function, args) of the one call the case's device function makes (recorded from its small build)."""
    from mlutools.bench.cases import Arena
    arena = Arena()
    call, _ = case.build(arena, case.shapes["small"], case.dtypes[0])
    real = getattr(cnnl, case.function)
    python_name = real.__name__
    recorded = []

    def recorder(*args):
        recorded.append(args)
        return real(*args)

    originals = {name: getattr(cnnl, name) for name in (case.function, python_name)}
    try:
        for name in originals:
            setattr(cnnl, name, recorder)
        call()
    finally:
        for name, function in originals.items():
            setattr(cnnl, name, function)
    arena.sync()
    return arena, real, list(recorded[0])


def _cases():
    from mlutools.bench.cases import CASES
    return [case for case in CASES if case.function in FUNCTIONS]


@pytest.mark.parametrize("case", _cases(), ids=lambda case: case.function)
def test_junk_in_a_valid_call_raises_cnnl_errors(handle, case):
    arena, function, args = _valid_call(case)
    pool = junk(arena.handle)
    rng = np.random.default_rng(sum(map(ord, case.function)))
    try:
        for _ in range(TRIALS):
            bad = list(args)
            for position in rng.choice(len(args), size=rng.integers(1, 3), replace=False):
                bad[position] = pool[rng.integers(len(pool))]
            try:
                function(*bad)
            except cnnl.CnnlError as error:
                assert error.code in (cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED), error
        try:
            arena.sync()
        except cnrt.CnrtError:
            pass
    finally:
        try:
            arena.free()
        except cnrt.CnrtError:
            pass
