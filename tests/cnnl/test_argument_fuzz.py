"""Argument fuzzing: whatever a caller passes (junk in every position, or in one or two positions of a valid call),
a cnnl call returns or raises CnnlError with BAD_PARAM or NOT_SUPPORTED - never another exception, a crash or a
hang; queued work that fails is reported at sync, as on hardware."""
import inspect
import sys

import numpy as np
import pytest

import cnnl
import cnrt

from .helpers import empty, sync, tensor

TRIALS = 30
#: the functions whose every position is fuzzed with junk: the families below, by name (create/destroy aside)
FUZZED_NAMES = [
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
    "cnnlGetFrozenBatchNormBackwardWorkspaceSize", "cnnlGetMSELossWorkspaceSize", "cnnlMSELoss_v2",
    "cnnlNlllossForward_v2", "cnnlNlllossBackward_v2", "cnnlSetPoolingNdDescriptor_v2",
]
#: ... and every function of these op modules
FUZZED_MODULES = ("flash_attention", "interpolate", "rotary", "sync_batch_norm", "im2col", "ctc_loss", "cdist",
                  "linalg", "random_sampling", "trigon", "nms", "deform_conv")
FUNCTIONS = FUZZED_NAMES + sorted(
    name for name, function in ((n, getattr(cnnl, n)) for n in dir(cnnl))  # dir: the modules load lazily
    if name.startswith("cnnl") and callable(function)
    and getattr(function, "__module__", "").rsplit(".", 1)[-1] in FUZZED_MODULES
    and not name.startswith(("cnnlCreate", "cnnlDestroy")))


def junk(handle):
    """Arguments of every kind a caller could get wrong: numbers, strings, sequences, live and destroyed
    descriptors of several types, valid and misaligned device pointers."""
    destroyed = cnnl.createTensorDescriptor()
    cnnl.destroyTensorDescriptor(destroyed)
    floats, ints = tensor(np.ones((2, 3), np.float32)), tensor(np.arange(3, dtype=np.int32))
    four = tensor(np.ones((1, 2, 2, 3), np.float32))
    descriptors = [cnnl.createFlashAttentionDescriptor(), cnnl.createInterpDescriptor(),
                   cnnl.createRotaryEmbeddingDescriptor(), cnnl.createCTCLossDescriptor(), cnnl.createNmsDescriptor(),
                   cnnl.createDCNDescriptor(), cnnl.createTrigonDescriptor(), cnnl.createPoolingDescriptor(),
                   cnnl.createUniqueDescriptor(), cnnl.createStdVarMeanDescriptor(),
                   cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_PHILOX)]
    return [None, 0, 1, -1, 3, 5, 2 ** 64, 1.5, float("nan"), float("inf"), "text", b"x", [], [None], [1, 2],
            [2, 2, 2], [[0, 1]], (3, -7), (0, 7), {"a": 1}, np.zeros(2), np.int64(2), True, handle, floats.desc,
            ints.desc, four.desc, empty([0]).desc, destroyed, floats.ptr, ints.ptr, four.ptr, floats.ptr + 1, 0x1000,
            object(), cnnl.createTensorDescriptor()] + descriptors


def _raises_only_cnnl_errors(function, args):
    try:
        function(*args)
    except cnnl.CnnlError as error:
        assert error.code in (cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED), error


def test_the_list_covers_every_family_fuzzed():
    assert {"cnnlFlashAttentionForward", "cnnlInterp_v3", "cnnlNms_v2", "cnnlDCNBackwardData",
            "cnnlSetPoolingNdDescriptor_v2", "cnnlRandGenerateMultinomial_v2"} <= set(FUNCTIONS)
    assert len(FUNCTIONS) >= len(FUZZED_NAMES) + 50


@pytest.mark.parametrize("name", FUNCTIONS)
def test_junk_arguments_raise_cnnl_errors(handle, name):
    function = getattr(cnnl, name)
    parameters = inspect.signature(function).parameters
    pool = junk(handle)
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(TRIALS):
        args = [pool[i] for i in rng.integers(len(pool), size=len(parameters))]
        if rng.random() < 0.6 and "handle" in parameters:
            args[0] = handle
        _raises_only_cnnl_errors(function, args)
    try:
        sync(handle)
    except cnrt.CnrtError:
        pass  # junk device contents may fail queued work: reported at sync, as on hardware


def _cases():
    """The cnnl cases of the benchmark table (each builds a valid call of its function)."""
    from mlutools.bench.cases import CASES
    return [case for case in CASES if case.function.startswith("cnnl")]


def _recorded_call(case, shape):
    """(arena, function, args) of the one call the case's device function makes to its function at `shape` (the
    call itself runs and succeeds). The arguments are read from the function's frame as it is entered, whichever
    name the case calls it by."""
    from mlutools.bench.cases import Arena
    real = getattr(cnnl, case.function)
    body = inspect.unwrap(real)
    names = list(inspect.signature(body).parameters)
    recorded = []

    def profile(frame, event, _):
        if event == "call" and frame.f_code is body.__code__ and not recorded:
            recorded.append([frame.f_locals[name] for name in names])

    arena = Arena()
    try:
        call, _ = case.build(arena, shape, case.dtypes[0])
        sys.setprofile(profile)
        try:
            call()
        finally:
            sys.setprofile(None)
        arena.sync()
    except BaseException:
        arena.free()
        raise
    return arena, real, recorded[0]


def _valid_call(case):
    """The recorded call at a shrunken shape, or at the case's small shape where the op refuses the shrunken one
    (channels that no longer divide into the groups)."""
    try:
        return _recorded_call(case, tuple(max(2, n // 8) for n in case.shapes["small"]))
    except cnnl.CnnlError:
        return _recorded_call(case, case.shapes["small"])


@pytest.mark.parametrize("case", _cases(), ids=lambda case: f"{case.op}-{case.function}")
def test_junk_in_a_valid_call_raises_cnnl_errors(handle, case):
    arena, function, args = _valid_call(case)
    pool = junk(arena.handle)
    rng = np.random.default_rng(sum(map(ord, case.op)))
    try:
        for _ in range(TRIALS):
            bad = list(args)
            for position in rng.choice(len(args), size=min(len(args), int(rng.integers(1, 3))), replace=False):
                bad[position] = pool[rng.integers(len(pool))]
            _raises_only_cnnl_errors(function, bad)
        try:
            arena.sync()
        except cnrt.CnrtError:
            pass  # junk that is valid at the call (another tensor as an index) may fail the queued work
    finally:
        try:
            arena.free()
        except cnrt.CnrtError:
            pass
