"""Argument fuzzing of every part-3 function: whatever a caller passes, the call returns or raises CnnlError with
a C status (never another exception, a crash or a hang)."""
import inspect

import numpy as np
import pytest

import cnnl
import cnrt

from ..cnnl.helpers import empty, sync, tensor

FUNCTIONS = [
    "cnnlAddcmul", "cnnlAddcdiv", "cnnlGetAddcmulWorkspaceSize", "cnnlGetAddcdivWorkspaceSize", "cnnlLerp",
    "cnnlGetLerpWorkspaceSize", "cnnlAtan2", "cnnlGetAtan2WorkspaceSize", "cnnlFloorDiv_v2", "cnnlFloorDivTrunc",
    "cnnlFloorMod", "cnnlGetFloorDivWorkspaceSize", "cnnlGetFloorDivTruncWorkspaceSize", "cnnlGetFloorModWorkspaceSize",
    "cnnlMulN", "cnnlTransform_v2", "cnnlClip_v2", "cnnlBitCompute_v2", "cnnlGetBitComputeWorkspaceSize",
    "cnnlErf_v2", "cnnlErfinv", "cnnlLog", "cnnlTrunc", "cnnlIsNan", "cnnlThreshold", "cnnlThresholdBackward",
    "cnnlHardtanh", "cnnlHardtanhBackward", "cnnlBiasAdd", "cnnlBiasAddBackward_v2", "cnnlGetBiasAddWorkspaceSize",
    "cnnlGetBiasAddBackwardWorkspaceSize", "cnnlPad", "cnnlReflectionPad2d", "cnnlReplicationPad2d", "cnnlRoll",
    "cnnlGetRollWorkspaceSize", "cnnlFlip", "cnnlTile", "cnnlTri", "cnnlArange_v2", "cnnlLinspace", "cnnlOneHot",
    "cnnlSetUniqueDescriptor", "cnnlGetUniqueWorkspaceSize", "cnnlUnique_v2", "cnnlSetStdVarMeanDescriptor",
    "cnnlGetStdVarMeanWorkspaceSize", "cnnlStdVarMean", "cnnlMasked_v4", "cnnlAdvancedIndex",
    "cnnlGetAdvancedIndexOutputDim", "cnnlGetAdvancedIndexWorkspaceSize", "cnnlIndexAdd", "cnnlIndexFill",
    "cnnlIndexFill_v2", "cnnlStridedSliceBackward", "cnnlAsStridedBackward", "cnnlGetAsStridedBackwardWorkspaceSize",
    "cnnlGradientDescent", "cnnlApplyAdadelta", "cnnlFrozenBatchNormBackward_v2",
    "cnnlGetFrozenBatchNormBackwardWorkspaceSize",
]


def _junk(handle):
    destroyed = cnnl.createTensorDescriptor()
    cnnl.destroyTensorDescriptor(destroyed)
    floats, ints = tensor(np.ones((2, 3), np.float32)), tensor(np.arange(3, dtype=np.int32))
    unique, stats = cnnl.createUniqueDescriptor(), cnnl.createStdVarMeanDescriptor()
    return [None, 0, 1, -1, 3, 2 ** 64, 1.5, float("nan"), "text", b"x", [], [None], [1, 2], [[0, 1]], (3, -7),
            np.zeros(2), handle, floats.desc, ints.desc, empty([0]).desc, destroyed, floats.ptr, ints.ptr,
            floats.ptr + 1, 0x1000, unique, stats, cnnl.createTensorDescriptor(), object()]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_junk_arguments_raise_cnnl_errors(handle, name):
    function = getattr(cnnl, name)
    arity = len(inspect.signature(function).parameters)
    pool = _junk(handle)
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(40):
        args = [pool[i] for i in rng.integers(len(pool), size=arity)]
        if rng.random() < 0.5:
            args[0] = handle
        try:
            function(*args)
        except cnnl.CnnlError as error:
            assert error.code in (cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED), error
    try:
        sync(handle)
    except cnrt.CnrtError:
        pass  # a junk index may fail queued work: reported at sync, as on hardware


def _valid_calls():
    """(case name, function name, arguments of a valid call) of each part-3 benchmark case, at a small shape."""
    from mlutools.bench import cases
    first = next(i for i, c in enumerate(cases.CASES) if c.function == "cnnlPad")
    return [(c.op, c.function, c) for c in cases.CASES[first:]]


@pytest.mark.parametrize("op,function,case", _valid_calls(), ids=lambda v: v if isinstance(v, str) else "")
def test_one_bad_argument_in_a_valid_call(handle, monkeypatch, op, function, case):
    from mlutools.bench import cases
    arena = cases.Arena()
    try:
        shape = tuple(max(2, n // 8) for n in case.shapes["small"])
        python_name = function[len("cnnl"):][:1].lower() + function[len("cnnl") + 1:]
        real, captured = getattr(cnnl, python_name), []
        monkeypatch.setattr(cnnl, python_name, lambda *args: captured.append(args))
        call, _ = case.build(arena, shape, case.dtypes[0])
        call()
        monkeypatch.setattr(cnnl, python_name, real)
        (args,) = captured
        real(*args)  # the valid call itself succeeds
        arena.sync()
        pool = _junk(arena.handle)
        rng = np.random.default_rng(sum(map(ord, op)))
        for _ in range(30):
            bad = list(args)
            for position in rng.integers(1, len(args), size=int(rng.integers(1, 3))):
                bad[position] = pool[rng.integers(len(pool))]
            try:
                real(*bad)
            except cnnl.CnnlError as error:
                assert error.code in (cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED), error
        try:
            arena.sync()
        except cnrt.CnrtError:
            pass  # junk that is valid at the call (e.g. another tensor as an index) may fail the queued work
    finally:
        try:
            arena.free()
        except cnrt.CnrtError:
            pass
