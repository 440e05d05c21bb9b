"""The convolution entry points of a PrivateUse1 backend. torch's convolution sends every backend other than
CPU/CUDA/MKLDNN to `convolution_overrideable` / `convolution_backward_overrideable`, whose default is an error, not
the boxed fallback: these kernels run aten::convolution / aten::convolution_backward on the CPU fallback (counted
and refused in error mode like any fallback) until they get cnnl kernels (cnnlConvolutionForward/Backward*)."""
from __future__ import annotations

from ._core import aten, fallback, register


@register("aten::convolution_overrideable")
def convolution_overrideable(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """aten::convolution_overrideable -> aten::convolution on the CPU fallback."""
    return fallback(aten.convolution.default, input, weight, bias, stride, padding, dilation, transposed,
                    output_padding, groups)


@register("aten::convolution_backward_overrideable")
def convolution_backward_overrideable(grad_output, input, weight, stride, padding, dilation, transposed,
                                      output_padding, groups, output_mask):
    """aten::convolution_backward_overrideable -> aten::convolution_backward on the CPU fallback."""
    bias_sizes = [weight.shape[1] * groups] if transposed else [weight.shape[0]]
    return fallback(aten.convolution_backward.default, grad_output, input, weight, bias_sizes, stride, padding,
                    dilation, transposed, output_padding, groups, output_mask)
