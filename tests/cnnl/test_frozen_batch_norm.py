"""Frozen (eval-mode) batch norm backward (cnnl/ops/frozen_batch_norm.py) against torch autograd."""
import numpy as np
import pytest

import cnnl

from .helpers import NUMPY, empty, raises_status, sync, tensor
from .nn_helpers import FLOATS, assert_near, rounded

torch = pytest.importorskip("torch")  # torch CPU is the reference where numpy would re-implement the op

NCHW, NHWC = cnnl.CNNL_LAYOUT_NCHW, cnnl.CNNL_LAYOUT_NHWC
BN, SPATIAL = cnnl.CNNL_BATCHNORM_OPS_BN, cnnl.CNNL_BATCHNORM_SPATIAL


def _placed(values, code, layout=cnnl.CNNL_LAYOUT_ARRAY):
    t = tensor(np.asarray(values).astype(NUMPY[code]), code)
    cnnl.setTensorDescriptor(t.desc, layout, code, list(t.dims))
    return t


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("layout", [NCHW, NHWC])
def test_frozen_batch_norm_backward_matches_autograd(handle, code, layout):
    rng = np.random.default_rng(code)
    x_nchw, dy_nchw = rounded(rng, (2, 3, 4, 5), code), rounded(rng, (2, 3, 4, 5), code)
    weight, mean = rounded(rng, (3,), code), rounded(rng, (3,), code)
    var = rounded(rng, (3,), code, 0.5, 2.0)
    eps = 1e-3
    tx = torch.tensor(x_nchw, requires_grad=True)
    tw, tb = torch.tensor(weight, requires_grad=True), torch.zeros(3, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.batch_norm(tx, torch.tensor(mean), torch.tensor(var), tw, tb, training=False,
                                   eps=eps).backward(torch.tensor(dy_nchw))
    to_layout = (lambda a: a) if layout == NCHW else (lambda a: np.ascontiguousarray(a.transpose(0, 2, 3, 1)))
    x, dy = _placed(to_layout(x_nchw), code, layout), _placed(to_layout(dy_nchw), code, layout)
    dx = _placed(np.zeros_like(to_layout(x_nchw)), code, layout)
    w, m, v = (_placed(a, code) for a in (weight, mean, var))
    dw, db = empty([3], code), empty([3], code)
    size = cnnl.getFrozenBatchNormBackwardWorkspaceSize(handle, x.desc)
    cnnl.frozenBatchNormBackward_v2(handle, None, SPATIAL, BN, x.desc, x.ptr, None, None, dy.desc, dy.ptr, w.desc,
                                    w.ptr, None, m.ptr, v.ptr, eps, None, size, None, None, dx.desc, dx.ptr, dw.ptr,
                                    db.ptr)
    sync(handle)
    assert_near(dx.read(), to_layout(tx.grad.numpy()), code, what="dx")
    assert_near(dw.read(), tw.grad.numpy(), code, scale=np.abs(dy_nchw).sum() * 4, what="dweight")
    assert_near(db.read(), tb.grad.numpy(), code, scale=np.abs(dy_nchw).sum(), what="dbias")


def test_frozen_batch_norm_bad_arguments(handle):
    x = _placed(np.zeros((2, 3, 2, 2)), cnnl.CNNL_DTYPE_FLOAT, NCHW)
    w = _placed(np.ones(4), cnnl.CNNL_DTYPE_FLOAT)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="wbmv_desc"):
        cnnl.frozenBatchNormBackward_v2(handle, None, SPATIAL, BN, x.desc, x.ptr, None, None, x.desc, x.ptr, w.desc,
                                        w.ptr, None, w.ptr, w.ptr, 1e-5, None, 0, None, None, x.desc, x.ptr, None,
                                        None)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="bnOps"):
        cnnl.frozenBatchNormBackward_v2(handle, None, SPATIAL, cnnl.CNNL_BATCHNORM_OPS_BN_ACTIVATION, x.desc, x.ptr,
                                        None, None, x.desc, x.ptr, w.desc, w.ptr, None, w.ptr, w.ptr, 1e-5, None, 0,
                                        None, None, x.desc, x.ptr, None, None)
    assert cnnl.getFrozenBatchNormBackwardWorkspaceSize(handle, x.desc) == 0
