"""Empty tensors (a zero extent) through the part 3 ops: the call is accepted, nothing is read or written, and the
queue stays healthy."""
import numpy as np

import cnnl

from ..cnnl_nn.nn_helpers import F32, blank, placed, sync

NHWC = cnnl.CNNL_LAYOUT_NHWC


def test_empty_tensors(handle):
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
