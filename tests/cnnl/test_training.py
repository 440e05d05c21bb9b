"""End to end: a small CNN (convolution, batch norm, ReLU, max pooling, a linear layer through cnnlMatMul, softmax
cross entropy) trains for a few SGD steps entirely through cnnl calls on the simulated device; its loss falls, and
every step matches the same computation done in float64 numpy."""
import numpy as np

import cnnl

from .nn_helpers import F32, blank, placed, sync
from .test_convolution import reference as conv_reference

NHWC = cnnl.CNNL_LAYOUT_NHWC
BATCH, SIZE, CHANNELS, FILTERS, CLASSES = 8, 6, 2, 4, 3
POOLED = SIZE // 2
FEATURES = POOLED * POOLED * FILTERS
LEARNING_RATE, EPS, MOMENTUM = 0.2, 1e-5, 0.1


def numpy_step(x, labels, params):
    """One forward/backward/SGD step in float64; returns the loss and updates params in place."""
    conv_w, gamma, beta, fc_w = params["conv"], params["gamma"], params["beta"], params["fc"]
    pads = ((1, 1), (1, 1))
    conv = conv_reference(x, conv_w, pads, (1, 1), (1, 1), 1)
    mean, var = conv.mean(axis=(0, 1, 2)), conv.var(axis=(0, 1, 2))
    invstd = 1 / np.sqrt(var + EPS)
    x_hat = (conv - mean) * invstd
    bn = x_hat * gamma + beta
    relu = np.maximum(bn, 0)
    windows = relu.reshape(BATCH, POOLED, 2, POOLED, 2, FILTERS).transpose(0, 1, 3, 5, 2, 4).reshape(
        BATCH, POOLED, POOLED, FILTERS, 4)
    pooled = windows.max(-1)
    hidden = pooled.reshape(BATCH, FEATURES)
    logits = hidden @ fc_w.T
    shifted = logits - logits.max(1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    loss = -log_p[np.arange(BATCH), labels].mean()
    d_logits = (np.exp(log_p) - np.eye(CLASSES)[labels]) / BATCH
    d_fc = d_logits.T @ hidden
    d_pooled = (d_logits @ fc_w).reshape(pooled.shape)
    winner = windows.argmax(-1)
    d_windows = (np.arange(4) == winner[..., None]) * d_pooled[..., None]
    d_relu = d_windows.reshape(BATCH, POOLED, POOLED, FILTERS, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(relu.shape)
    d_bn = d_relu * (bn > 0)
    d_gamma, d_beta = (d_bn * x_hat).sum(axis=(0, 1, 2)), d_bn.sum(axis=(0, 1, 2))
    m = BATCH * SIZE * SIZE
    d_conv = gamma * invstd / m * (m * d_bn - d_beta - x_hat * d_gamma)
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    d_conv_w = np.zeros_like(conv_w)
    for kh in range(3):
        for kw in range(3):
            d_conv_w[:, kh, kw, :] = np.einsum("nhwo,nhwc->oc", d_conv, padded[:, kh:kh + SIZE, kw:kw + SIZE, :])
    for name, grad in (("conv", d_conv_w), ("gamma", d_gamma), ("beta", d_beta), ("fc", d_fc)):
        params[name] -= LEARNING_RATE * grad
    return loss


class DeviceCNN:
    """The same network with every tensor in device memory and every step a cnnl call."""

    def __init__(self, handle, x, labels, params):
        self.h = handle
        self.x = placed(x, F32, NHWC)
        self.labels = placed(labels, cnnl.CNNL_DTYPE_INT32)
        self.p = {name: placed(value, F32, NHWC if name == "conv" else cnnl.CNNL_LAYOUT_ARRAY)
                  for name, value in params.items()}
        self.g = {name: blank(value.shape, F32, NHWC if name == "conv" else cnnl.CNNL_LAYOUT_ARRAY)
                  for name, value in params.items()}
        shape = (BATCH, SIZE, SIZE, FILTERS)
        self.conv, self.bn, self.relu = (blank(shape, F32, NHWC) for _ in range(3))
        self.d_conv, self.d_bn, self.d_relu = (blank(shape, F32, NHWC) for _ in range(3))
        pooled = (BATCH, POOLED, POOLED, FILTERS)
        self.pooled, self.d_pooled = blank(pooled, F32, NHWC), blank(pooled, F32, NHWC)
        self.index = blank(pooled, cnnl.CNNL_DTYPE_INT32, NHWC)
        self.hidden = cnnl.createTensorDescriptor()  # the pooled map seen as [BATCH, FEATURES] (same memory)
        cnnl.setTensorDescriptor(self.hidden, cnnl.CNNL_LAYOUT_ARRAY, F32, [BATCH, FEATURES])
        self.logits, self.log_p, self.d_log_p, self.d_logits = (blank((BATCH, CLASSES), F32) for _ in range(4))
        self.mean, self.invstd = (blank((FILTERS,), F32) for _ in range(2))
        # the op reads the running statistics to update them: they start as PyTorch's (0 and 1), not unwritten
        self.running_mean, self.running_var = placed(np.zeros(FILTERS), F32), placed(np.ones(FILTERS), F32)
        self.total, self.loss, self.one = blank((1,), F32), blank((1,), F32), placed(np.ones(1), F32)
        self.class_weight = placed(np.ones(CLASSES), F32)
        self.conv_desc = cnnl.createConvolutionDescriptor()
        cnnl.setConvolutionDescriptor(self.conv_desc, 4, [1, 1, 1, 1], [1, 1], [1, 1], 1, F32)
        self.pool_desc = cnnl.createPoolingDescriptor()
        cnnl.setPooling2dDescriptor_v2(self.pool_desc, cnnl.CNNL_POOLING_MAX, cnnl.CNNL_PROPAGATE_NAN, 2, 2, 0, 0, 0,
                                       0, 2, 2, 1, 1, False)
        self.relu_desc = cnnl.createActivationDescriptor()
        cnnl.setActivationDescriptor(self.relu_desc, cnnl.CNNL_ACTIVATION_RELU, cnnl.CNNL_NOT_PROPAGATE_NAN, 0.0)
        self.add = cnnl.createOpTensorDescriptor()
        cnnl.setOpTensorDescriptor(self.add, cnnl.CNNL_OP_TENSOR_ADD, F32, cnnl.CNNL_NOT_PROPAGATE_NAN)

    def step(self):
        h, p, g = self.h, self.p, self.g
        low, log = cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION, cnnl.CNNL_SOFTMAX_LOG
        cnnl.convolutionForward(h, self.conv_desc, cnnl.CNNL_CONVOLUTION_FWD_ALGO_DIRECT, None, self.x.desc,
                                self.x.ptr, p["conv"].desc, p["conv"].ptr, None, None, None, 0, None, self.conv.desc,
                                self.conv.ptr)
        cnnl.batchNormForwardTraining(h, None, None, self.conv.desc, self.conv.ptr, p["gamma"].desc, p["gamma"].ptr,
                                      p["beta"].ptr, self.running_mean.ptr, self.running_var.ptr, EPS, MOMENTUM,
                                      self.bn.desc, self.bn.ptr, self.mean.ptr, self.invstd.ptr)
        cnnl.activationForward(h, self.relu_desc, None, self.bn.desc, self.bn.ptr, None, self.relu.desc,
                               self.relu.ptr)
        cnnl.poolingForwardWithIndex(h, self.pool_desc, None, self.relu.desc, self.relu.ptr, None, self.pooled.desc,
                                     self.pooled.ptr, self.index.desc, self.index.ptr, None, 0)
        cnnl.matMul(h, False, True, None, self.hidden, self.pooled.ptr, p["fc"].desc, p["fc"].ptr, None,
                    self.logits.desc, self.logits.ptr)
        cnnl.softmaxForward(h, log, low, None, self.logits.desc, self.logits.ptr, None, self.log_p.desc,
                            self.log_p.ptr)
        cnnl.nlllossForward(h, cnnl.CNNL_REDUCTION_MEAN, None, 0, self.log_p.desc, self.log_p.ptr, self.labels.desc,
                            self.labels.ptr, -100, self.class_weight.desc, self.class_weight.ptr, self.total.desc,
                            self.total.ptr, self.loss.desc, self.loss.ptr)
        # backward
        cnnl.nlllossBackward(h, cnnl.CNNL_REDUCTION_MEAN, self.one.desc, self.one.ptr, self.labels.desc,
                             self.labels.ptr, -100, self.class_weight.desc, self.class_weight.ptr, self.total.desc,
                             self.total.ptr, self.d_log_p.desc, self.d_log_p.ptr)
        cnnl.softmaxBackward(h, log, low, None, self.log_p.desc, self.log_p.ptr, self.d_log_p.desc, self.d_log_p.ptr,
                             None, self.d_logits.desc, self.d_logits.ptr)
        cnnl.matMul(h, True, False, None, self.d_logits.desc, self.d_logits.ptr, self.hidden, self.pooled.ptr, None,
                    g["fc"].desc, g["fc"].ptr)
        cnnl.matMul(h, False, False, None, self.d_logits.desc, self.d_logits.ptr, p["fc"].desc, p["fc"].ptr, None,
                    self.hidden, self.d_pooled.ptr)
        cnnl.poolingBackward(h, self.pool_desc, None, self.index.desc, self.index.ptr, self.d_pooled.desc,
                             self.d_pooled.ptr, self.relu.desc, self.relu.ptr, None, self.d_relu.desc,
                             self.d_relu.ptr)
        cnnl.activationBackward(h, self.relu_desc, None, None, None, self.d_relu.desc, self.d_relu.ptr, self.bn.desc,
                                self.bn.ptr, None, self.d_bn.desc, self.d_bn.ptr)
        cnnl.batchNormBackward(h, None, None, None, None, self.conv.desc, self.conv.ptr, self.d_bn.desc,
                               self.d_bn.ptr, p["gamma"].desc, p["gamma"].ptr, self.mean.ptr, self.invstd.ptr, EPS,
                               self.d_conv.desc, self.d_conv.ptr, g["gamma"].ptr, g["beta"].ptr)
        cnnl.convolutionBackwardFilter(h, None, self.x.desc, self.x.ptr, self.d_conv.desc, self.d_conv.ptr,
                                       self.conv_desc, cnnl.CNNL_CONVOLUTION_BWD_FILTER_ALGO_DIRECT, None, 0, None,
                                       g["conv"].desc, g["conv"].ptr)
        for name in p:  # SGD: w = w - lr * dw
            cnnl.opTensor(h, self.add, 1.0, p[name].desc, p[name].ptr, -LEARNING_RATE, g[name].desc, g[name].ptr,
                          None, 0, 0.0, p[name].desc, p[name].ptr)
        sync(h)
        return float(self.loss.read()[0])


def test_small_cnn_trains_and_matches_numpy(handle):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SIZE, SIZE, CHANNELS)).astype(np.float32).astype(np.float64)
    labels = rng.integers(0, CLASSES, BATCH)
    params = {"conv": rng.normal(0, 0.5, (FILTERS, 3, 3, CHANNELS)), "gamma": np.ones(FILTERS),
              "beta": np.zeros(FILTERS), "fc": rng.normal(0, 0.3, (CLASSES, FEATURES))}
    params = {name: value.astype(np.float32).astype(np.float64) for name, value in params.items()}
    device = DeviceCNN(handle, x, labels, params)
    losses = []
    for _ in range(6):
        want = numpy_step(x, labels, params)
        got = device.step()
        assert abs(got - want) <= 1e-4 * max(1.0, abs(want)), (got, want)
        losses.append(got)
    assert losses[-1] < 0.7 * losses[0], losses
    for name, value in params.items():
        np.testing.assert_allclose(device.p[name].read(), value, rtol=1e-3, atol=1e-4)
