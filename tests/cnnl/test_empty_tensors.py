"""Zero-size tensors in every op: no op crashes or refuses an empty tensor where a result is defined, and the results
are PyTorch's: a sum over nothing is 0, a product 1, a mean NaN, a norm 0; max/argmax of nothing is an error; an
empty batch gives convolution and normalisation gradients of 0 and leaves running statistics alone."""
import warnings

import numpy as np
import pytest

import cnnl
import cnrt

from .helpers import DeviceTensor, raises_status, sync
from .nn_helpers import F32, blank, placed

F, H = cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_HALF
I32, U8, B = cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_UINT8, cnnl.CNNL_DTYPE_BOOL
NHWC = cnnl.CNNL_LAYOUT_NHWC

pytestmark = pytest.mark.filterwarnings("error")  # an op on empty tensors warns of nothing (numpy's empty-slice)


def T(dims, code=F, layout=cnnl.CNNL_LAYOUT_ARRAY, fill=None) -> DeviceTensor:
    tensor = DeviceTensor(dims, code, fill=fill)
    cnnl.setTensorDescriptor(tensor.desc, layout, code, list(dims))
    return tensor


def workspace(size):
    return cnrt.malloc(size) if size else None


def reduce(handle, op, x_dims, axes, out_dims, code=F, indices=cnnl.CNNL_REDUCE_NO_INDICES):
    x, out = T(x_dims, code), T(out_dims, code, fill=np.full(out_dims, 7))
    desc = cnnl.createReduceDescriptor()
    cnnl.setReduceDescriptor(desc, axes, op, code, cnnl.CNNL_NOT_PROPAGATE_NAN, indices, cnnl.CNNL_32BIT_INDICES)
    size = cnnl.getReduceOpWorkspaceSize(handle, x.desc, out.desc, desc)
    index = T(out_dims, I32) if indices else None
    cnnl.reduce(handle, desc, workspace(size), size, None, x.desc, x.ptr, 4 * index.elements if index else 0,
                index.ptr if index else None, None, out.desc, out.ptr)
    sync(handle)
    return out.read()


@pytest.mark.parametrize("op, expected", [(cnnl.CNNL_REDUCE_ADD, 0.0), (cnnl.CNNL_REDUCE_MUL, 1.0),
                                          (cnnl.CNNL_REDUCE_AVG, np.nan), (cnnl.CNNL_REDUCE_NORM1, 0.0),
                                          (cnnl.CNNL_REDUCE_NORM2, 0.0)])
@pytest.mark.parametrize("code", [F, H])
def test_reductions_over_an_empty_axis_are_pytorchs(handle, op, expected, code):
    np.testing.assert_array_equal(reduce(handle, op, (3, 0, 2), [1], (3, 1, 2), code),
                                  np.full((3, 1, 2), expected))


def test_max_min_and_argmax_of_nothing_are_errors_and_integer_means_too(handle):
    for op in (cnnl.CNNL_REDUCE_MAX, cnnl.CNNL_REDUCE_MIN):
        with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input_desc"):
            reduce(handle, op, (3, 0), [1], (3, 1))
        with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input_desc"):
            reduce(handle, op, (3, 0), [1], (3, 1), indices=cnnl.CNNL_REDUCE_ONLY_INDICES)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input_desc"):
        reduce(handle, cnnl.CNNL_REDUCE_AVG, (3, 0), [1], (3, 1), I32)
    np.testing.assert_array_equal(reduce(handle, cnnl.CNNL_REDUCE_ADD, (3, 0), [1], (3, 1), I32), 0)
    assert reduce(handle, cnnl.CNNL_REDUCE_MAX, (0, 4), [1], (0, 1)).shape == (0, 1)  # nothing to reduce at all


# operands of empty products are left unwritten: an empty op reads none of them (the read set is declared whole)
@pytest.mark.mlusim_sanitize(exclude="initcheck")
def test_matmul_with_an_empty_inner_dimension_is_beta_c(handle):
    a, b, c = T((2, 0)), T((0, 3)), T((2, 3), fill=np.full((2, 3), 2.0))
    cnnl.matMul(handle, False, False, 1.0, a.desc, a.ptr, b.desc, b.ptr, 0.5, c.desc, c.ptr)
    sync(handle)
    np.testing.assert_array_equal(c.read(), 1.0)
    a, b, c = T((0, 2)), T((2, 3)), T((0, 3))
    cnnl.matMul(handle, False, False, 1.0, a.desc, a.ptr, b.desc, b.ptr, 0.0, c.desc, c.ptr)
    sync(handle)


def _conv_descriptor():
    desc = cnnl.createConvolutionDescriptor()
    cnnl.setConvolutionDescriptor(desc, 4, [0, 0, 0, 0], [1, 1], [1, 1], 1, F)
    return desc


# operands of empty products are left unwritten: an empty op reads none of them (the read set is declared whole)
@pytest.mark.mlusim_sanitize(exclude="initcheck")
def test_convolution_of_an_empty_batch(handle):
    x, w, y = T((0, 5, 5, 4), layout=NHWC), T((3, 3, 3, 4), layout=NHWC), T((0, 3, 3, 3), layout=NHWC)
    conv = _conv_descriptor()
    algo = cnnl.getConvolutionForwardAlgorithm(handle, conv, x.desc, w.desc, y.desc, 0)
    size = cnnl.getConvolutionForwardWorkspaceSize(handle, x.desc, w.desc, y.desc, None, conv, algo)
    cnnl.convolutionForward(handle, conv, algo, None, x.desc, x.ptr, w.desc, w.ptr, None, None, workspace(size),
                            size, None, y.desc, y.ptr)
    size = cnnl.getConvolutionBackwardDataWorkspaceSize(handle, w.desc, y.desc, conv, x.desc, 0)
    cnnl.convolutionBackwardData(handle, None, w.desc, w.ptr, y.desc, y.ptr, conv, 0, workspace(size), size, None,
                                 x.desc, x.ptr)
    dw = T((3, 3, 3, 4), layout=NHWC, fill=np.full((3, 3, 3, 4), 9.0))
    size = cnnl.getConvolutionBackwardFilterWorkspaceSize(handle, x.desc, y.desc, dw.desc, conv, 0)
    cnnl.convolutionBackwardFilter(handle, None, x.desc, x.ptr, y.desc, y.ptr, conv, 0, workspace(size), size, None,
                                   dw.desc, dw.ptr)
    sync(handle)
    np.testing.assert_array_equal(dw.read(), 0.0)  # torch: no sample, no gradient


@pytest.mark.parametrize("rows", [0, 3])
def test_layer_and_rms_norm_of_no_rows_or_empty_rows(handle, rows):
    cols = 8 if rows == 0 else 0
    x, y, dx = T((rows, cols)), T((rows, cols)), T((rows, cols))
    weight = T((cols,), fill=np.ones(cols))
    stats, rstd = T((rows,)), T((rows,))
    size = cnnl.getLayerNormOpWorkspaceSize(handle, 1, x.desc)
    cnnl.layerNormForward(handle, x.desc, x.ptr, 1, weight.desc, weight.ptr, weight.ptr, 1e-5, workspace(size), size,
                          y.desc, y.ptr, stats.desc, stats.ptr, rstd.ptr)
    grads = T((cols,), fill=np.full(cols, 5.0))
    size = cnnl.getLayerNormBackwardWorkspaceSize(handle, x.desc, 1)
    cnnl.layerNormBackward_v2(handle, x.desc, x.ptr, 1, y.desc, y.ptr, weight.desc, weight.ptr, stats.desc,
                              stats.ptr, rstd.ptr, workspace(size), size, dx.desc, dx.ptr, grads.ptr, grads.ptr)
    size = cnnl.getRmsNormOpWorkspaceSize(handle, 1, x.desc)
    cnnl.rmsNormForward(handle, 1, x.desc, x.ptr, weight.desc, weight.ptr, None, 1e-5, workspace(size), size,
                        y.desc, y.ptr, rstd.desc, rstd.ptr)
    sync(handle)
    assert (grads.read() == 0).all()
    if rows:  # rows of no elements: mean NaN, as torch
        assert np.isnan(stats.read()).all()


def test_batch_norm_of_an_empty_batch_keeps_the_running_statistics(handle):
    x, y = T((0, 2, 2, 3), layout=NHWC), T((0, 2, 2, 3), layout=NHWC)
    weight, bias = T((3,), fill=np.ones(3)), T((3,), fill=np.zeros(3))
    mean, var = T((3,), fill=[0.5, 1.5, 2.5]), T((3,), fill=[2.0, 3.0, 4.0])
    saved_mean, saved_invstd = T((3,)), T((3,))
    cnnl.batchNormForwardTraining(handle, None, None, x.desc, x.ptr, weight.desc, weight.ptr, bias.ptr, mean.ptr,
                                  var.ptr, 1e-5, 0.1, y.desc, y.ptr, saved_mean.ptr, saved_invstd.ptr)
    dweight, dbias = T((3,), fill=np.full(3, 9.0)), T((3,), fill=np.full(3, 9.0))
    assert cnnl.getBatchNormBackwardWorkspaceSize(handle, x.desc) == 0
    cnnl.batchNormBackward(handle, None, None, None, None, x.desc, x.ptr, y.desc, y.ptr, weight.desc, weight.ptr,
                           saved_mean.ptr, saved_invstd.ptr, 1e-5, x.desc, x.ptr, dweight.ptr, dbias.ptr)
    sync(handle)
    np.testing.assert_array_equal(mean.read(), [0.5, 1.5, 2.5])
    np.testing.assert_array_equal(var.read(), [2.0, 3.0, 4.0])
    assert (dweight.read() == 0).all() and (dbias.read() == 0).all()


@pytest.mark.parametrize("reduction, expected", [(cnnl.CNNL_MSE_LOSS_MEAN, np.nan), (cnnl.CNNL_MSE_LOSS_SUM, 0.0)])
def test_losses_of_no_elements(handle, reduction, expected):
    x, t, y = T((0,)), T((0,)), T((1,))
    cnnl.mSELoss(handle, reduction, x.desc, x.ptr, t.desc, t.ptr, y.desc, y.ptr)
    logits, labels, weight, total = T((0, 3)), T((0,), I32), T((3,), fill=np.ones(3)), T((1,))
    out = T((1,))
    size = cnnl.getNlllossWorkspaceSize(handle, logits.desc)
    cnnl.nlllossForward(handle, reduction, workspace(size), size, logits.desc, logits.ptr, labels.desc, labels.ptr,
                        -100, weight.desc, weight.ptr, total.desc, total.ptr, out.desc, out.ptr)
    sync(handle)
    np.testing.assert_array_equal(y.read(), [expected])
    np.testing.assert_array_equal(out.read(), [expected])


def _sweep(handle):
    """(name, call) of ops on empty tensors that must simply succeed."""
    a, c = T((0, 3)), T((0, 3))
    op_desc = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(op_desc, cnnl.CNNL_OP_TENSOR_ADD, F, cnnl.CNNL_NOT_PROPAGATE_NAN)
    act = cnnl.createActivationDescriptor()
    cnnl.setActivationDescriptor(act, cnnl.CNNL_ACTIVATION_GELU, cnnl.CNNL_NOT_PROPAGATE_NAN, 0)
    transpose = cnnl.createTransposeDescriptor()
    cnnl.setTransposeDescriptor(transpose, [1, 0])
    gen = cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_PHILOX)
    pool = cnnl.createPoolingDescriptor()
    cnnl.setPooling2dDescriptor(pool, cnnl.CNNL_POOLING_MAX, cnnl.CNNL_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 0, 0, 2, 2)
    px, py = T((0, 4, 4, 2), layout=NHWC), T((0, 2, 2, 2), layout=NHWC)
    return [
        ("opTensor", lambda: cnnl.opTensor(handle, op_desc, 1, a.desc, a.ptr, 1, a.desc, a.ptr, None, 0, 0, c.desc,
                                           c.ptr)),
        ("sign", lambda: cnnl.sign(handle, a.desc, a.ptr, c.desc, c.ptr)),
        ("activation", lambda: cnnl.activationForward(handle, act, None, a.desc, a.ptr, None, c.desc, c.ptr)),
        ("cast", lambda: cnnl.castDataType(handle, a.desc, a.ptr, cnnl.CNNL_CAST_FLOAT_TO_HALF, T((0, 3), H).desc,
                                           None)),
        ("fill", lambda: cnnl.fill_v3(handle, cnnl.CNNL_POINTER_MODE_HOST, 1.0, c.desc, None)),
        ("transpose", lambda: cnnl.transpose(handle, transpose, a.desc, a.ptr, T((3, 0)).desc, None)),
        ("cumsum", lambda: cnnl.cumsum(handle, a.desc, a.ptr, 0, False, False, 0, c.desc, c.ptr)),
        ("softmax", lambda: cnnl.softmaxForward(handle, cnnl.CNNL_SOFTMAX_ACCURATE,
                                                cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION, None, T((3, 0)).desc, None,
                                                None, T((3, 0)).desc, None)),
        ("pooling", lambda: cnnl.poolingForward(handle, pool, None, px.desc, px.ptr, None, py.desc, py.ptr, None, 0)),
        ("uniform", lambda: cnnl.randGenerateUniform(handle, gen, F, None, 0, 0.0, 1.0, None)),
        ("dropout", lambda: cnnl.fusedDropout_v2(handle, gen, a.desc, a.ptr, 0.5, None, T((0, 3), U8).desc, None,
                                                 c.desc, c.ptr)),
        ("indexSelect", lambda: cnnl.indexSelect(handle, 0, T((4, 3)).desc, T((4, 3)).ptr, T((0,), I32).desc, None,
                                                 T((0, 3)).desc, None)),
        ("numTrue", lambda: cnnl.numTrue_v2(handle, T((0,), B).desc, None, T((1,), I32).desc, T((1,), I32).ptr)),
    ]


# operands of empty products are left unwritten: an empty op reads none of them (the read set is declared whole)
@pytest.mark.mlusim_sanitize(exclude="initcheck")
def test_every_op_takes_empty_tensors(handle):
    failures = []
    for name, call in _sweep(handle):
        try:
            call()
            sync(handle)
        except (cnnl.CnnlError, cnrt.CnrtError) as error:
            failures.append(f"{name}: {error}")
    assert not failures, failures


def _backward_cases():
    from mlutools.bench import cases
    return [case for case in cases.CASES if case.function.startswith("cnnl") and (
        "Backward" in case.function or "bwd" in case.op or "backward" in case.op)]


@pytest.mark.parametrize("case", _backward_cases(), ids=lambda case: case.function)
def test_every_backward_op_of_the_bench_table_takes_an_empty_tensor_in_each_dim(handle, case):
    """Each dim of the case's shape at 0 in turn: the op refuses the shape at the call with a status, or runs;
    never an internal error at the sync (cnnlBiasAddBackward_v2 over zero channels was a ValueError there)."""
    from mlutools.bench import cases
    base = tuple(max(2, n // 8) for n in case.shapes["small"])
    ran = 0
    for axis in range(len(base)):
        arena = cases.Arena()
        try:
            try:
                with warnings.catch_warnings():  # the case's own numpy reference may warn of empty slices
                    warnings.simplefilter("ignore")
                    call, _ = case.build(arena, base[:axis] + (0,) + base[axis + 1:], case.dtypes[0])
            except (cnnl.CnnlError, ArithmeticError, ValueError):
                continue  # the shape is refused by a setup call, or the case's numpy reference cannot take it
            arena.sync()
            try:
                call()
            except cnnl.CnnlError as error:
                assert error.code in (cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED), error
                continue
            arena.sync()
            ran += 1
        finally:
            arena.free()
    assert ran or case.function in _REFUSED_EVERYWHERE, "no empty shape reached the op"


#: backward cases whose builders take no empty shape at all (their references divide by the count)
_REFUSED_EVERYWHERE = {"cnnlMSELossBackward", "cnnlBceLossBackward", "cnnlBceWithLogitsBackward",
                       "cnnlSmoothL1LossBackward_v2"}


def test_bias_add_backward_of_zero_channels_and_of_an_empty_batch(handle):
    """Zero channels: an empty gradient and nothing to do; an empty batch: every channel's gradient is 0."""
    for dims, channels in (((2, 3, 0), 0), ((0, 3, 4), 4)):
        dy, db = T(dims), T([channels], fill=np.full(channels, 7))
        size = cnnl.getBiasAddBackwardWorkspaceSize(handle, dy.desc, db.desc, 2)
        cnnl.biasAddBackward_v2(handle, dy.desc, dy.ptr, 2, db.desc, db.ptr, workspace(size), size)
        sync(handle)
        np.testing.assert_array_equal(db.read(), np.zeros(channels, np.float32))


def test_attention_vision_and_sampling_ops_take_empty_tensors(handle):
    """The call is accepted, nothing is read or written, and the queue stays healthy."""
    # trigonometric functions
    desc = cnnl.createTrigonDescriptor()
    cnnl.setTrigonDescriptor(desc, cnnl.CNNL_TRIGON_TAN)
    e = blank((0, 3), F32)
    cnnl.trigonForward(handle, desc, e.desc, None, e.desc, None)
    # synchronised batch norm elementwise pass over an empty batch
    x, stats = blank((0, 4, 4, 3), F32, NHWC), placed(np.ones(3), F32)
    cnnl.syncBatchNormElemt(handle, x.desc, None, stats.desc, stats.ptr, stats.desc, stats.ptr, None, None, None,
                            None, x.desc, None)
    # deformable convolution of an empty batch
    dcn = cnnl.createDCNDescriptor()
    cnnl.setDCNDescriptor(dcn, 4, [1, 1, 1, 1], [1, 1], [1, 1], 1, 1, 1, cnnl.CNNL_DTYPE_FLOAT)
    offset, mask = blank((0, 4, 4, 18), F32, NHWC), blank((0, 4, 4, 9), F32, NHWC)
    w, y = placed(np.ones((2, 3, 3, 3)), F32, NHWC), blank((0, 4, 4, 2), F32, NHWC)
    cnnl.dCNForward(handle, dcn, x.desc, None, offset.desc, None, mask.desc, None, w.desc, w.ptr, None, None, None, 0,
                    y.desc, None)
    # sampling nothing
    generator = cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_PHILOX)
    cnnl.randGenerateDescreteUniform(handle, generator, F32, None, 0, 0, 5, None)
    weights, draws = placed(np.ones((2, 3)), F32), blank((2, 0), cnnl.CNNL_DTYPE_INT32)
    cnnl.randGenerateMultinomial_v2(handle, generator, weights.desc, weights.ptr, True, False, None,
                                    blank((24,), F32).ptr, 24, draws.desc, None)
    assert cnnl.randGetPseudoRandomGeneratorOffset(generator) == 0
    # losses of nothing
    rows = blank((0, 4), F32)
    cnnl.mSELoss_v2(handle, cnnl.CNNL_MSE_LOSS_NONE, rows.desc, None, rows.desc, None, None, 0, rows.desc, None)
    # rotary embedding and unfold
    rotary = cnnl.createRotaryEmbeddingDescriptor()
    cnnl.setRotaryEmbeddingDescriptor(rotary, True, cnnl.CNNL_SEQDATA_NTBC)
    halves, angles = blank((1, 0, 2, 4), F32), blank((0, 1, 4), F32)
    cnnl.rotaryEmbedding(handle, rotary, halves.desc, None, halves.desc, None, angles.desc, None, angles.desc, None,
                         None, 0, halves.desc, None, halves.desc, None)
    cnnl.unfold(handle, 1, 2, 1, rows.desc, None, blank((0, 3, 2), F32).desc, None)
    sync(handle)
