"""Convolution on channel-last arrays: forward, backward data, backward filter (`cnnlConvolution*`).

Shapes: x (N, *S, C), w (Co, *K, C/groups), y (N, *So, Co), for 1, 2 or 3 spatial axes S; any strides (the API layer
passes NCHW tensors as transposed views). `pads` is one (before, after) pair per spatial axis.

Method: im2col + GEMM on the host BLAS. A numba kernel (`columns.py`) gathers a block of output lines' windows
into a dense (K*C, positions) matrix (padding read as 0, never materialised); forward multiplies the (Co, K*C)
weight matrix by it, the filter gradient multiplies dy by its transpose, and the data gradient multiplies the
transposed weights by dy and sums the columns back into their windows (col2im, numba). Blocks run on the kernel
thread pool with single-threaded GEMMs, so the copies of one block overlap the GEMM of another; outputs in NCHW or
NHWC memory are written in place. A 1x1 convolution with stride 1 and no padding is one GEMM on the input. Depthwise
convolutions (one input channel per group) take a direct path: one multiply-add of the whole tensor per kernel
position. Numerics: half/bfloat16 compute in float32, float32 and float64 in themselves; one rounding into the
output.

Modules: directions.py (the three entry points), geometry.py (how the work is cut), gemm.py (the im2col + GEMM
paths), columns.py (the numba window copies), depthwise.py, windows.py (window views shared with im2col).
"""
from .directions import conv_backward_data, conv_backward_filter, conv_forward
from .windows import kernel_offsets, output_extent, padded, window_view

__all__ = ["conv_backward_data", "conv_backward_filter", "conv_forward", "kernel_offsets", "output_extent", "padded",
           "window_view"]
