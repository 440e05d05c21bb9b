"""Convolution on mlu over cnnl: torch sends every backend other than CPU/CUDA/MKLDNN to convolution_overrideable and
convolution_backward_overrideable (their default is an error, not the CPU fallback).

1-D convolutions run as 2-D ones over a height of 1; 2-D and 3-D ones map to cnnlConvolutionForward /
BackwardData / BackwardFilter with NCHW (NCDHW) descriptors, or NHWC (NDHWC) ones over the same memory when the
input is channels-last (the output then is channels-last too, as torch's suggest_memory_format). A transposed
convolution is the data gradient of the forward convolution whose filter is its weight; its gradients swap the
roles accordingly. The bias gradient is a sum of grad_output over every dim but the channels.
"""
from __future__ import annotations

import torch

import cnnl
from mlusim.memo import BoundedMemo

from ._core import FLOATING, aten, check_same_device, desc, fallback, feature_desc, handle, register, workspace
from .reduce import ADD as SUM, run_reduce

_descriptors = BoundedMemo(4096)  # made cnnl descriptors, by what they were set to
#: (direction, handle, convolution and tensor descriptors) -> (algorithm, workspace size): cnnl's answer for one
#: problem never changes, and the descriptors are cached objects, so the two queries run once per problem
_plans = BoundedMemo(4096)


def _plan(key: tuple, ask) -> tuple:
    """(algorithm, workspace size) of the problem `key` names: ask() the first time, remembered after."""
    return _plans.get_or_make(key, ask)


def _channel_last(t: torch.Tensor) -> bool:
    if t.dim() == 4:
        return t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous()
    if t.dim() == 5:
        return t.is_contiguous(memory_format=torch.channels_last_3d) and not t.is_contiguous()
    return False


def _laid_out(t: torch.Tensor, channel_last: bool) -> torch.Tensor:
    if channel_last:
        return t.contiguous(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)
    return t.contiguous()


def _empty(shape, like: torch.Tensor, channel_last: bool) -> torch.Tensor:
    if channel_last:
        fmt = torch.channels_last if len(shape) == 4 else torch.channels_last_3d
        return torch.empty(shape, dtype=like.dtype, device=like.device, memory_format=fmt)
    return torch.empty(shape, dtype=like.dtype, device=like.device)


def _conv_descriptor(rank: int, padding, stride, dilation, groups: int, dtype: torch.dtype):
    key = (rank, tuple(padding), tuple(stride), tuple(dilation), groups, dtype)
    found = _descriptors.get(key)
    if found is None:
        compute = cnnl.CNNL_DTYPE_DOUBLE if dtype == torch.float64 else cnnl.CNNL_DTYPE_FLOAT
        found = cnnl.createConvolutionDescriptor()
        pads = [p for p in padding for _ in range(2)]  # [before, after] per spatial dim
        cnnl.setConvolutionDescriptor(found, rank, pads, list(stride), list(dilation), groups, compute)
        _descriptors.put(key, found)
    return found


class _Problem:
    """One convolution with 1-D turned into 2-D: the (possibly unsqueezed) tensors and parameters."""

    def __init__(self, input, weight, stride, padding, dilation, groups, unpadded: bool = False):
        self.one_d = input.dim() == 3
        unsqueeze = (lambda t: t.unsqueeze(2)) if self.one_d else (lambda t: t)
        self.input, self.weight = unsqueeze(input), unsqueeze(weight)
        extend = (lambda v, fill: [fill, *v]) if self.one_d else (lambda v, fill: list(v))
        self.stride, self.padding = extend(stride, 1), extend(padding, 0)
        self.dilation = extend(dilation, 1)
        self.requested_padding = list(self.padding)
        if unpadded:  # (a transposed convolution with output_padding: computed whole, then cropped)
            self.padding = [0] * len(self.padding)
        self.groups = groups
        self.rank = self.input.dim()
        self.channel_last = _channel_last(self.input) or _channel_last(self.weight)
        self.descriptor = _conv_descriptor(self.rank, self.padding, self.stride, self.dilation, groups,
                                           input.dtype)

    def shaped(self, t: torch.Tensor) -> torch.Tensor:
        """A result in the caller's rank (1-D problems lose the height of 1 again)."""
        return t.squeeze(2) if self.one_d else t

    def unsqueezed(self, t: torch.Tensor) -> torch.Tensor:
        return t.unsqueeze(2) if self.one_d else t

    def laid_out(self, t: torch.Tensor):
        t = _laid_out(t, self.channel_last)
        return t, feature_desc(t, self.channel_last)

    def out_shape(self, x: torch.Tensor, weight: torch.Tensor, transposed: bool, output_padding) -> tuple:
        spatial = []
        for i in range(self.rank - 2):
            n, k = x.shape[2 + i], weight.shape[2 + i]
            s, p, d = self.stride[i], self.padding[i], self.dilation[i]
            if transposed:
                extra = ([0] + list(output_padding))[i] if self.one_d else output_padding[i]
                spatial.append((n - 1) * s - 2 * p + d * (k - 1) + extra + 1)
            else:
                spatial.append((n + 2 * p - d * (k - 1) - 1) // s + 1)
        channels = weight.shape[1] * self.groups if transposed else weight.shape[0]
        return (x.shape[0], channels, *spatial)


def _forward(problem: _Problem, x: torch.Tensor, w: torch.Tensor, out_shape, bias) -> torch.Tensor:
    """cnnlConvolutionForward of x with filter w into a new tensor of out_shape (+ bias)."""
    y = _empty(out_shape, x, problem.channel_last)
    if y.numel() == 0:
        return y
    (x, x_desc), (w, w_desc) = problem.laid_out(x), problem.laid_out(w)
    y_desc = feature_desc(y, problem.channel_last)
    h = handle(y)
    conv = problem.descriptor
    bias_desc = desc(bias) if bias is not None else None
    def ask():
        algo = cnnl.getConvolutionForwardAlgorithm(h, conv, x_desc, w_desc, y_desc, cnnl.CNNL_CONVOLUTION_FWD_FASTEST)
        return algo, cnnl.getConvolutionForwardWorkspaceSize(h, x_desc, w_desc, y_desc, bias_desc, conv, algo)

    algo, size = _plan(("forward", h, conv, x_desc, w_desc, y_desc, bias_desc), ask)
    ws, _keep = workspace(size, y.device)
    cnnl.convolutionForward(h, conv, algo, 1.0, x_desc, x.data_ptr(), w_desc, w.data_ptr(), bias_desc,
                            None if bias is None else bias.data_ptr(), ws, size, 0.0, y_desc, y.data_ptr())
    return y


def _gradient_operands(problem: _Problem, operand: torch.Tensor, dy: torch.Tensor, shape):
    """(gradient, None) when a backward pass needs no kernel (an empty gradient, or 0 from empty operands), else
    (gradient, ((operand, its desc), (dy, its desc), the gradient's desc, handle)) for the cnnl call."""
    grad = _empty(shape, dy, problem.channel_last)
    if grad.numel() == 0:
        return grad, None
    if operand.numel() == 0 or dy.numel() == 0:
        return grad.zero_(), None
    return grad, (problem.laid_out(operand), problem.laid_out(dy), feature_desc(grad, problem.channel_last),
                  handle(grad))


def _data_gradient(problem: _Problem, w: torch.Tensor, dy: torch.Tensor, dx_shape) -> torch.Tensor:
    """cnnlConvolutionBackwardData: the gradient (of dx_shape) of the forward convolution's input."""
    dx, operands = _gradient_operands(problem, w, dy, dx_shape)
    if operands is None:
        return dx
    (w, w_desc), (dy, dy_desc), dx_desc, h = operands
    conv = problem.descriptor
    def ask():
        algo = cnnl.getConvolutionBackwardDataAlgorithm(h, w_desc, dy_desc, conv, dx_desc,
                                                        cnnl.CNNL_CONVOLUTION_BWD_DATA_FASTEST)
        return algo, cnnl.getConvolutionBackwardDataWorkspaceSize(h, w_desc, dy_desc, conv, dx_desc, algo)

    algo, size = _plan(("data", h, conv, w_desc, dy_desc, dx_desc), ask)
    ws, _keep = workspace(size, dx.device)
    cnnl.convolutionBackwardData(h, 1.0, w_desc, w.data_ptr(), dy_desc, dy.data_ptr(), conv, algo, ws, size, 0.0,
                                 dx_desc, dx.data_ptr())
    return dx


def _filter_gradient(problem: _Problem, x: torch.Tensor, dy: torch.Tensor, dw_shape) -> torch.Tensor:
    """cnnlConvolutionBackwardFilter: the gradient (of dw_shape) of the forward convolution's filter."""
    dw, operands = _gradient_operands(problem, x, dy, dw_shape)
    if operands is None:
        return dw
    (x, x_desc), (dy, dy_desc), dw_desc, h = operands
    conv = problem.descriptor
    def ask():
        algo = cnnl.getConvolutionBackwardFilterAlgorithm(h, conv, x_desc, dy_desc, dw_desc,
                                                          cnnl.CNNL_CONVOLUTION_BWD_FILTER_FASTEST)
        return algo, cnnl.getConvolutionBackwardFilterWorkspaceSize(h, x_desc, dy_desc, dw_desc, conv, algo)

    algo, size = _plan(("filter", h, conv, x_desc, dy_desc, dw_desc), ask)
    ws, _keep = workspace(size, dw.device)
    cnnl.convolutionBackwardFilter(h, 1.0, x_desc, x.data_ptr(), dy_desc, dy.data_ptr(), conv, algo, ws, size, 0.0,
                                   dw_desc, dw.data_ptr())
    return dw


def _native(*tensors) -> bool:
    present = [t for t in tensors if t is not None]
    return all(t.device.type == "mlu" and t.dtype in FLOATING and t.dtype == present[0].dtype for t in present) and \
        present[0].dim() in (3, 4, 5)


def _crop_windows(problem: _Problem, whole_shape, target_shape):
    """(slices into the unpadded transposed result, slices into the target): torch's output is the whole result
    cropped by the padding at the start, its end extended by output_padding (with zeros past the whole result)."""
    source, target = [slice(None), slice(None)], [slice(None), slice(None)]
    for whole, wanted, pad in zip(whole_shape[2:], target_shape[2:], problem.requested_padding):
        kept = max(0, min(wanted, whole - pad))
        source.append(slice(pad, pad + kept))
        target.append(slice(0, kept))
    return tuple(source), tuple(target)


def _transposed_with_output_padding(input, weight, stride, padding, dilation, groups, output_padding):
    """A transposed convolution whose output_padding the data gradient cannot express: computed unpadded whole,
    then cropped (and zero-extended) to torch's output."""
    problem = _Problem(input, weight, stride, padding, dilation, groups, unpadded=True)
    x, w = problem.input, problem.weight
    whole = _data_gradient(problem, w, x, problem.out_shape(x, w, True, [0] * len(output_padding)))
    shape = _Problem(input, weight, stride, padding, dilation, groups).out_shape(x, w, True, output_padding)
    y = torch.zeros(shape, dtype=whole.dtype, device=whole.device)
    source, target = _crop_windows(problem, whole.shape, shape)
    y[target] = whole[source]
    return problem, y


@register("aten::convolution_overrideable")
def convolution_overrideable(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """aten::convolution_overrideable (cnnlConvolutionForward; transposed: cnnlConvolutionBackwardData)."""
    check_same_device(input, weight, *([bias] if bias is not None else []))
    if not _native(input, weight, bias):
        return fallback(aten.convolution.default, input, weight, bias, stride, padding, dilation, transposed,
                        output_padding, groups)
    problem = _Problem(input, weight, stride, padding, dilation, groups)
    x, w = problem.input, problem.weight
    shape = problem.out_shape(x, w, transposed, output_padding)
    if transposed:
        if any(output_padding):
            problem, y = _transposed_with_output_padding(input, weight, stride, padding, dilation, groups,
                                                         output_padding)
        else:
            y = _data_gradient(problem, w, x, shape)
        if bias is not None and y.numel():
            y.add_(bias.reshape((1, -1) + (1,) * (y.dim() - 2)))
    else:
        y = _forward(problem, x, w, shape, bias)
    return problem.shaped(y)


@register("aten::convolution_backward_overrideable")
def convolution_backward_overrideable(grad_output, input, weight, stride, padding, dilation, transposed,
                                      output_padding, groups, output_mask):
    """aten::convolution_backward_overrideable -> (grad_input, grad_weight, grad_bias) (cnnlConvolutionBackwardData
    / BackwardFilter; a transposed convolution's input gradient is cnnlConvolutionForward)."""
    check_same_device(grad_output, input, weight)
    if not _native(input, weight, grad_output):
        bias_sizes = [weight.shape[1] * groups] if transposed else [weight.shape[0]]
        return fallback(aten.convolution_backward.default, grad_output, input, weight, bias_sizes, stride, padding,
                        dilation, transposed, output_padding, groups, output_mask)
    padded_output = transposed and any(output_padding)
    problem = _Problem(input, weight, stride, padding, dilation, groups, unpadded=padded_output)
    x, w, dy = problem.input, problem.weight, problem.unsqueezed(grad_output)
    if padded_output:  # the gradient of the cropped whole result: dy placed back into the whole
        whole_shape = problem.out_shape(x, w, True, [0] * len(output_padding))
        whole = torch.zeros(whole_shape, dtype=dy.dtype, device=dy.device)
        source, target = _crop_windows(problem, whole_shape, dy.shape)
        whole[source] = dy[target]
        dy = whole
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        grad_input = _forward(problem, dy, w, tuple(x.shape), None) if transposed else \
            _data_gradient(problem, w, dy, tuple(x.shape))
        grad_input = problem.shaped(grad_input)
    if output_mask[1]:
        grad_weight = _filter_gradient(problem, dy, x, tuple(w.shape)) if transposed else \
            _filter_gradient(problem, x, dy, tuple(w.shape))
        grad_weight = problem.shaped(grad_weight)
    if output_mask[2]:
        grad_bias = _bias_gradient(grad_output)
    return grad_input, grad_weight, grad_bias


def _bias_gradient(grad_output: torch.Tensor) -> torch.Tensor:
    """grad_output summed over every axis but the channels (axis 1): the cnnlReduce torch.sum would queue, without
    the round trip through torch's dispatcher."""
    grad_bias = torch.empty(grad_output.shape[1], dtype=grad_output.dtype, device=grad_output.device)
    if grad_output.numel() == 0:
        return grad_bias.zero_()
    run_reduce(SUM, grad_output, tuple(d for d in range(grad_output.dim()) if d != 1), grad_bias)
    return grad_bias
