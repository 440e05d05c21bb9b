"""Pooling on channel-last arrays x (N, H, W, C) or (N, D, H, W, C): max (with input-plane indices), average (padding
counted or not), their backward passes, and adaptive average and max pooling (`cnnlPooling*`,
`cnnlAdaptivePooling*`).

Windows: `kernel`, `strides`, `dilations` per spatial axis and (before, after) `pads`. With ceil mode an extra window
is kept when it starts inside the input or its leading padding (PyTorch's rule); positions past the padding count as
padding. Max indices are flat positions in the unpadded input plane (h * W + w), the first maximum (in window order:
rows, then columns) winning; NaN wins when `propagate_nan`, else it is skipped (a window of NaNs gives NaN). Padding
never wins. The average divides by the window positions inside the padded input (count_include_pad) or inside the
input. Computation in float32 (float64 for double), one rounding into 16-bit storage.

Every pooling is *separable*: an output position (i, j) reads the input positions (a, b) with a in the tap list of
row i and b in the tap list of column j, weighted by w0[a-tap] * w1[b-tap]. One tap table per axis (`taps.TapAxis`:
taps in window order, padding left out, and their weights) describes windows of any geometry, adaptive bins, and -
transposed - the gradients of both averages (each input position gathers the outputs whose windows hold it). So two
nogil numba kernels do all the work (`loops.py`): `window_kernel` (weighted sum or max, with or without indices) and
`max_scatter` (the max gradient through indices). Both take flat arrays with element strides, so NHWC and NCHW (any
layout whose memory is a permutation of the axes) share one compiled specialisation per dtype; channel-last memory
runs the channel loop innermost (vectorised), other layouts run along output rows. The work is cut into blocks of
output rows (planes for the scatter) shared between the cores by `map_parallel` (`operands.py`). 3-D pooling
(`pool3d.py`) is 2-D pooling of each depth slice and a pass over the depth axis.

Modules: taps.py (window geometry -> tap tables), loops.py (the kernels), operands.py (staging and blocks), pool2d.py
and pool3d.py (the ops).
"""
from .pool2d import (adaptive_avg_backward, adaptive_avg_forward, adaptive_max_forward, avg_pool_backward,
                     avg_pool_forward, depth_sum, max_pool_backward, max_pool_forward, separable_sum)
from .pool3d import avg_pool3d_backward, avg_pool3d_forward, max_pool3d_backward, max_pool3d_forward
from .taps import TapAxis, Windows, pooled_extent

__all__ = ["TapAxis", "Windows", "adaptive_avg_backward", "adaptive_avg_forward", "adaptive_max_forward",
           "avg_pool3d_backward", "avg_pool3d_forward", "avg_pool_backward", "avg_pool_forward", "depth_sum",
           "max_pool3d_backward", "max_pool3d_forward", "max_pool_backward", "max_pool_forward", "pooled_extent",
           "separable_sum"]
