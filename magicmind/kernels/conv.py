"""MagicMind's convolution layer on channel-last tensors: im2col + GEMM with the layer's epilogue fused in, in
float (16-bit floats computed in float32) or quantized (int8 / int16) arithmetic.

Why its own kernel (and not cnnlConvolutionForward): a built model's conv layer is conv + bias + the elementwise
ops after it (BN folded in, a residual add, an activation, a cast) as ONE pass, and a quantized layer computes in
integers, which CNNL's float convolution does not offer.

Shapes: x (N, *S, C) dense channel-last (1 to 3 spatial axes S), weights packed for the GEMM as (G, Cog, K*Cg)
(`pack_weights`: K the kernel positions in (kd, kh, kw) order, Cg = C / G input and Cog = Co / G output channels
per group), output (N, *So, Co). The output positions P = N * prod(So) are cut into blocks of rows; per block the
windows are gathered into a (rows, K*Cg) matrix (padding read as 0), multiplied by each group's weights on a
single-threaded BLAS (blocks run on the host's cores), and the epilogue computes the block's outputs from that
accumulator while it is in cache. A 1x1 convolution with stride 1 and no padding multiplies the input rows
directly; a depthwise convolution (one channel per group) is a direct loop.

Quantized arithmetic is exact integer arithmetic: the window values are quantized as they are gathered,
q = clip(rint(x / scale) + zero, qmin, qmax), and the GEMM multiplies (q - zero) by the integer weights. For int8
the products are summed by float32 GEMMs over chunks of at most 1024 terms (|sum| < 2^24, exact), the chunks in
float64; int16 products are summed in float64 (exact below 2^53). The epilogue's first input is the integer sum.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numba
import numpy as np

from mlusim.host import blas
from mlusim.host.parallel import even_ranges, map_parallel, thread_count

from .codegen import Elementwise

#: target bytes of one block's window matrix (it stays in the core's L2 cache while the GEMM reads it)
BLOCK_BYTES = 1 << 19
#: fewest output rows per block (smaller GEMMs run far below the BLAS's peak)
MIN_BLOCK_ROWS = 64
#: a convolution of at most this many multiply-adds runs on the calling thread in one block
INLINE_MACS = 1 << 20
#: fewer output positions than this per host thread: the product is split over output channels instead of rows
#: (each thread then packs only its share of the weights; with few rows packing them costs as much as the product)
NARROW_ROWS = 128
#: terms per float32 GEMM of a quantized int8 product (127 * 128 * 1024 < 2^24: every partial sum exact)
INT8_CHUNK = 1024


def pack_weights(w: np.ndarray, groups: int) -> np.ndarray:
    """OI<spatial> weights (Co, Cg, *K) as the GEMM operand (G, Cog, K*Cg): per group, one row of window weights
    per output channel (the window matrix multiplies its transpose, as BLAS's "NT" product)."""
    co, cg = w.shape[:2]
    kernel = w.shape[2:]
    per = co // groups
    grouped = w.reshape((groups, per, cg) + kernel)
    order = (0, 1) + tuple(range(3, 3 + len(kernel))) + (2,)
    return np.ascontiguousarray(grouped.transpose(order)).reshape(groups, per, math.prod(kernel) * cg)


def as_3d(values: Sequence[int], fill: int) -> tuple:
    values = tuple(int(v) for v in values)
    return (fill,) * (3 - len(values)) + values


@numba.njit(nogil=True, cache=True, inline="always")
def _output_position(p, od_n, oh_n, ow_n):
    """(n, od, oh, ow) of the row-major output position p over (N, Do, Ho, Wo)."""
    ow = p % ow_n
    t = p // ow_n
    oh = t % oh_n
    t = t // oh_n
    return t // od_n, t % od_n, oh, ow


@numba.njit(nogil=True, cache=True)
def _quantize(value, inverse, zero, qmin, qmax):
    q = np.rint(value * inverse) + zero
    if q < qmin:
        q = qmin
    elif q > qmax:
        q = qmax
    return q - zero


@numba.njit(nogil=True, cache=True)
def _gather(x, p0, p1, g0, cg, od_n, oh_n, ow_n, kd_n, kh_n, kw_n, sd, sh, sw, pd, ph, pw, dd, dh, dw,
            quantized, inverse, zero, qmin, qmax, cols):
    """cols[r, (kd, kh, kw, c)] = x[n, id, ih, iw, g0 + c] for the output positions p0 + r (0 outside x); quantized,
    the values are q - zero (exact integers; padding is a real 0, so q - zero = 0)."""
    depth, height, width = x.shape[1], x.shape[2], x.shape[3]
    for r in range(p1 - p0):
        n, od, oh, ow = _output_position(p0 + r, od_n, oh_n, ow_n)
        col = 0
        for kd in range(kd_n):
            i_d = od * sd - pd + kd * dd
            for kh in range(kh_n):
                ih = oh * sh - ph + kh * dh
                for kw in range(kw_n):
                    iw = ow * sw - pw + kw * dw
                    if 0 <= i_d < depth and 0 <= ih < height and 0 <= iw < width:
                        if quantized:
                            for c in range(cg):
                                cols[r, col + c] = _quantize(np.float64(x[n, i_d, ih, iw, g0 + c]), inverse, zero,
                                                             qmin, qmax)
                        else:
                            for c in range(cg):
                                cols[r, col + c] = x[n, i_d, ih, iw, g0 + c]
                    else:
                        for c in range(cg):
                            cols[r, col + c] = 0
                    col += cg


@numba.njit(nogil=True, cache=True)
def _depthwise(x, w, p0, p1, od_n, oh_n, ow_n, kd_n, kh_n, kw_n, sd, sh, sw, pd, ph, pw, dd, dh, dw,
               quantized, inverse, zero, qmin, qmax, acc):
    """acc[r, c] = sum over the window of x[n, id, ih, iw, c] * w[k, c] (one channel per group)."""
    depth, height, width = x.shape[1], x.shape[2], x.shape[3]
    channels = x.shape[4]
    for r in range(p1 - p0):
        n, od, oh, ow = _output_position(p0 + r, od_n, oh_n, ow_n)
        for c in range(channels):
            acc[r, c] = 0
        k = 0
        for kd in range(kd_n):
            i_d = od * sd - pd + kd * dd
            for kh in range(kh_n):
                ih = oh * sh - ph + kh * dh
                for kw in range(kw_n):
                    iw = ow * sw - pw + kw * dw
                    if 0 <= i_d < depth and 0 <= ih < height and 0 <= iw < width:
                        if quantized:
                            for c in range(channels):
                                acc[r, c] += _quantize(np.float64(x[n, i_d, ih, iw, c]), inverse, zero, qmin,
                                                       qmax) * w[k, c]
                        else:
                            for c in range(channels):
                                acc[r, c] += x[n, i_d, ih, iw, c] * w[k, c]
                    k += 1


class Quantization:
    """How a quantized layer reads its input: bits (8 or 16), the activation's scale and zero point, and whether
    the integers are unsigned (asymmetric quantization: 0 .. 2^bits - 1) or signed and symmetric
    (-(2^(bits-1) - 1) .. 2^(bits-1) - 1)."""

    def __init__(self, bits: int, scale: float, zero: int = 0, unsigned: Optional[bool] = None):
        self.bits, self.scale, self.zero = int(bits), float(scale), int(zero)
        self.unsigned = bool(self.zero) if unsigned is None else bool(unsigned)
        if self.unsigned:
            self.qmin, self.qmax = 0, (1 << self.bits) - 1
        else:
            self.qmin, self.qmax = -(1 << (self.bits - 1)) + 1, (1 << (self.bits - 1)) - 1
        self.inverse = 1.0 / self.scale if self.scale > 0 else 0.0

    @property
    def gemm_dtype(self):
        """The float type whose GEMM sums the integer products exactly (float32 per chunk for int8)."""
        return np.dtype(np.float32) if self.bits == 8 else np.dtype(np.float64)

    @property
    def chunk(self) -> Optional[int]:
        """Terms per exact float32 GEMM (None: the float64 GEMM of int16 needs no chunks)."""
        if self.bits != 8:
            return None
        return INT8_CHUNK if not self.unsigned else INT8_CHUNK // 2


class Conv:
    """One convolution layer prepared for one input shape: call it with x (N, *S, C), the packed weights, the
    epilogue's extra inputs and the output (N, *So, Co)."""

    def __init__(self, x_shape, kernel, co, groups, strides, pads, dilations, out_shape, epilogue: dict,
                 extra_shapes: Sequence[tuple], quant: Optional[Quantization] = None, constant_weights: bool = False):
        self.x_shape, self.out_shape = tuple(x_shape), tuple(out_shape)
        spatial = len(kernel)
        self.kernel = as_3d(kernel, 1)
        self.strides, self.dilations = as_3d(strides, 1), as_3d(dilations, 1)
        self.pads = as_3d([b for b, _ in pads], 0)
        self.in3 = as_3d(x_shape[1:-1], 1)
        self.out3 = as_3d(out_shape[1:-1], 1)
        self.batch, self.channels = x_shape[0], x_shape[-1]
        self.groups, self.co = groups, co
        self.cg, self.cog = self.channels // groups, co // groups
        self.depth_k = math.prod(self.kernel)
        self.columns = self.depth_k * self.cg
        self.positions = self.batch * math.prod(self.out3)
        self.quant = quant
        self.depthwise = self.cg == 1 and self.cog == 1 and groups > 1
        self.pointwise = (self.depth_k == 1 and all(s == 1 for s in self.strides) and not any(self.pads)
                          and groups == 1 and spatial == len(x_shape) - 2)
        self.gemm_dtype = quant.gemm_dtype if quant is not None else np.dtype(np.float32)
        # the epilogue over the (P, Co) accumulator; extra inputs fit it by rows when each is per channel (its
        # leading axes 1) or of the output's shape, else it runs once over the whole output
        rows = [self._as_rows(s) for s in extra_shapes]
        self.by_rows = all(r is not None for r in rows)
        if self.by_rows:
            self.extra_rows = rows
            self.epilogue = Elementwise(epilogue, [(self.positions, co)] + [r for r in rows], (self.positions, co))
        else:
            self.epilogue = Elementwise(epilogue, [self.out_shape] + [tuple(s) for s in extra_shapes],
                                        self.out_shape)
        self.macs = self.positions * co * self.columns
        self.constant_weights = constant_weights
        self._weights = None

    def _as_rows(self, shape):
        shape = (1,) * (len(self.out_shape) - len(shape)) + tuple(shape)
        if len(shape) != len(self.out_shape) or shape[-1] not in (1, self.co):
            return None
        leading = shape[:-1]
        if all(d == 1 for d in leading):
            return (1, shape[-1])
        if leading == self.out_shape[:-1]:
            return (self.positions, shape[-1])
        return None

    @property
    def flops(self) -> float:
        return 2.0 * self.macs

    def _blocks(self) -> list:
        rows = max(MIN_BLOCK_ROWS, BLOCK_BYTES // max(1, self.columns * self.gemm_dtype.itemsize))
        count = -(-self.positions // rows)
        threads = thread_count()
        if self.macs <= INLINE_MACS:
            count = 1
        elif count < threads and self.positions >= threads * MIN_BLOCK_ROWS:
            count = threads
        count = max(1, min(count, self.positions))
        bounds = [self.positions * k // count for k in range(count + 1)]
        return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]

    def _gemm_weights(self, w: np.ndarray) -> np.ndarray:
        """The packed weights in the GEMM's type; a converted copy is kept across calls for constant weights
        (keyed by where they are: constants never change)."""
        if w.dtype == self.gemm_dtype and not self.depthwise:
            return w
        key = w.__array_interface__["data"][0]
        if self.constant_weights and self._weights is not None and self._weights[0] == key:
            return self._weights[1]
        converted = w.astype(self.gemm_dtype)
        if self.depthwise:
            converted = np.ascontiguousarray(converted[:, 0, :].T)  # (K, C)
        if self.constant_weights:
            self._weights = (key, converted)
        return converted

    def __call__(self, x: np.ndarray, w: np.ndarray, extras: Sequence[np.ndarray], out: np.ndarray) -> None:
        if self.positions == 0 or self.co == 0:
            return
        x5 = x.reshape((self.batch,) + self.in3 + (self.channels,))
        if x5.dtype == np.float16:
            x5 = x5.astype(np.float32)
        weights = self._gemm_weights(w)
        out2 = out.reshape(self.positions, self.co)
        whole = None if self.by_rows else np.empty((self.positions, self.co), np.float32)
        extras2 = [e.reshape(r) for e, r in zip(extras, self.extra_rows)] if self.by_rows else list(extras)

        def block(bounds):
            p0, p1 = bounds
            acc = self._accumulate(x5, weights, p0, p1)
            if self.by_rows:
                views = [e if e.shape[0] == 1 else e[p0:p1] for e in extras2]
                self.epilogue.run_block([acc] + views, out2[p0:p1])
            else:
                whole[p0:p1] = acc

        # every GEMM runs on one BLAS thread, the layer's work shared out on the team: BLAS's own threads spin-wait
        # for each other, which on a 2-core host shared with other processes made whole layers 10x slower
        # (docs/magicmind.md, host time)
        with blas.single_threaded_blas():
            threads = thread_count()
            if self.macs > INLINE_MACS and self.groups == 1 and not self.depthwise and threads > 1 and \
                    self.positions < threads * NARROW_ROWS:
                acc = self._accumulate_by_channels(x5, weights)
                if self.by_rows:
                    self.epilogue.run_block([acc] + extras2, out2, True)
                else:
                    whole[...] = acc
            else:
                blocks = self._blocks()
                if len(blocks) == 1:
                    block(blocks[0])
                else:
                    map_parallel(block, blocks)
        if whole is not None:
            self.epilogue([whole.reshape(self.out_shape)] + extras2, out)

    def _accumulate_by_channels(self, x5, weights) -> np.ndarray:
        """The whole (P, Co) accumulator, the windows gathered once and the product split over output channels."""
        if self.pointwise and self.quant is None:
            cols = x5.reshape(self.positions, self.channels)
            cols = cols.astype(np.float32) if cols.dtype != np.float32 else cols
        else:
            cols = np.empty((self.positions, self.columns), self.gemm_dtype)
            self._gather(x5, 0, self.positions, 0, self._geometry(), cols, True)
        acc = np.empty((self.positions, self.co), np.float32)
        wmat = weights[0]

        def part(bounds):
            c0, c1 = bounds
            self._product(cols, wmat[c0:c1].T, acc[:, c0:c1])

        map_parallel(part, even_ranges(self.co, min(self.co, 2 * thread_count())))
        return acc

    def _geometry(self):
        return (self.out3 + self.kernel + self.strides + self.pads + self.dilations)

    def _accumulate(self, x5, weights, p0, p1) -> np.ndarray:
        """The (rows, Co) float32 accumulator of output positions p0..p1 (the integer sums when quantized)."""
        rows = p1 - p0
        quant = self.quant
        geometry = self._geometry()
        if self.depthwise:
            acc = np.empty((rows, self.co), np.float32 if quant is None else np.float64)
            if quant is None:
                _depthwise(x5, weights, p0, p1, *geometry, False, 0.0, 0, 0, 0, acc)
            else:
                _depthwise(x5, weights, p0, p1, *geometry, True, quant.inverse, quant.zero, quant.qmin, quant.qmax,
                           acc)
            return acc.astype(np.float32) if acc.dtype != np.float32 else acc
        acc = np.empty((rows, self.co), np.float32)
        cols = None
        for g in range(self.groups):
            if self.pointwise and quant is None:
                cols = x5.reshape(self.positions, self.channels)[p0:p1]
                if cols.dtype != np.float32:
                    cols = cols.astype(np.float32)
            else:
                if cols is None or self.groups > 1:
                    cols = np.empty((rows, self.columns), self.gemm_dtype)
                self._gather(x5, p0, p1, g, geometry, cols, False)
            target = acc[:, g * self.cog:(g + 1) * self.cog]
            self._product(cols, weights[g].T, target)
        return acc

    def _gather(self, x5, p0, p1, g, geometry, cols, parallel) -> None:
        quant = self.quant
        scale = (1.0, 0.0, 0.0, 0.0) if quant is None else \
            (float(quant.inverse), float(quant.zero), float(quant.qmin), float(quant.qmax))

        def rows(bounds):
            a, b = bounds
            _gather(x5, p0 + a, p0 + b, g * self.cg, self.cg, *geometry, quant is not None, *scale, cols[a:b])

        count = p1 - p0
        if parallel and count >= 2 * MIN_BLOCK_ROWS:
            map_parallel(rows, even_ranges(count, 2 * thread_count()))
        else:
            rows((0, count))

    def _product(self, cols, wmat, target) -> None:
        quant = self.quant
        chunk = quant.chunk if quant is not None else None
        if quant is not None and quant.bits != 8:
            target[...] = cols @ wmat  # float64 GEMM, exact integer sums, rounded once into float32
            return
        if chunk is None or cols.shape[1] <= chunk:
            if target.flags.c_contiguous:
                np.matmul(cols, wmat, out=target)
            else:
                target[...] = cols @ wmat
            return
        total = np.zeros(target.shape, np.float64)
        for start in range(0, cols.shape[1], chunk):
            total += cols[:, start:start + chunk] @ wmat[start:start + chunk]
        target[...] = total
