"""The window geometry of pooling as tap tables: per output position of an axis, the input coordinates it reads
(padding left out) and their weights. One table per axis describes windows of any geometry, adaptive bins and -
transposed - the gradients of both averages (each input position gathers the outputs whose windows hold it); with
weights of its own (`TapAxis.from_weights`) an interpolation. The tables are cached per geometry."""
import functools

import numpy as np


def pooled_extent(size, kernel, pad_before, pad_after, stride, dilation, ceil_mode):
    """Output extent of one spatial axis."""
    span = size + pad_before + pad_after - dilation * (kernel - 1) - 1
    extent = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (extent - 1) * stride >= size + pad_before:
        extent -= 1
    return extent


class Windows:
    """The window geometry of one pooling problem."""

    def __init__(self, in_spatial, out_spatial, kernel, strides, dilations, pads):
        self.in_spatial, self.out_spatial = tuple(in_spatial), tuple(out_spatial)
        self.kernel, self.strides, self.dilations, self.pads = tuple(kernel), tuple(strides), tuple(dilations), pads

    def positions(self):
        """(kernel index tuple, slices of the padded input it meets for every output position)."""
        for position in np.ndindex(*self.kernel):
            yield position, tuple(slice(k * d, k * d + s * (o - 1) + 1, s) for k, d, s, o in
                                  zip(position, self.dilations, self.strides, self.out_spatial))

    def axes(self, include_padding=None, transposed=False):
        """The two `TapAxis` tap tables (of the gradient when `transposed`); weights 1 / (window positions counted)
        when averaging (`include_padding` True or False)."""
        return [window_axis(n, o, k, s, d, b, a, include_padding, transposed) for n, (b, a), o, s, d, k in
                zip(self.in_spatial, self.pads, self.out_spatial, self.strides, self.dilations, self.kernel)]


@functools.lru_cache(maxsize=256)
def window_axis(n, o, k, s, d, b, a, include_padding, transposed):
    taps = np.arange(o)[:, None] * s - b + np.arange(k)[None, :] * d
    valid = (taps >= 0) & (taps < n)
    if include_padding is None:
        counted = None
    elif include_padding:
        counted = ((taps >= -b) & (taps < n + a)).sum(axis=1)
    else:
        counted = valid.sum(axis=1)
    axis = TapAxis.from_taps(taps, valid, counted)
    return axis.transposed(n) if transposed else axis


@functools.lru_cache(maxsize=256)
def adaptive_axis(size, extent, transposed):
    axis = TapAxis.adaptive(size, extent)
    return axis.transposed(size) if transposed else axis


class TapAxis:
    """Tap table of one axis: output i reads input coordinates taps[:count[i], i] (ascending) with weights
    weights[:, i]; `first[i]` is the coordinate of its first window position (for the index of an empty window)."""

    def __init__(self, taps, weights, count, first, size):
        self.taps, self.weights, self.count, self.first, self.size = taps, weights, count, first, size
        self._typed = {}
        self._pairs = None

    def is_pairs(self):
        """True when output i reads exactly inputs 2i and 2i + 1 (a window of 2 at stride 2, all inside)."""
        if self._pairs is None:
            doubled = 2 * np.arange(self.count.size)
            self._pairs = bool(self.taps.shape[0] == 2 and (self.count == 2).all() and (self.taps[0] == doubled).all()
                               and (self.taps[1] == doubled + 1).all())
        return self._pairs

    def weights_as(self, kind):
        """The weights in dtype `kind` (kept: the tables are cached per geometry)."""
        typed = self._typed.get(kind)
        if typed is None:
            typed = self._typed[kind] = self.weights.astype(kind)
        return typed

    @classmethod
    def from_taps(cls, taps, valid, counted):
        """From (outputs, window) coordinates, the valid ones marked; weights 1 / counted (1 without)."""
        outputs, window = taps.shape
        count = valid.sum(axis=1)
        order = np.argsort(~valid, axis=1, kind="stable")  # the valid taps first, in window order
        table = np.where(np.take_along_axis(valid, order, axis=1), np.take_along_axis(taps, order, axis=1), -1)
        width = max(1, int(count.max(initial=0)))
        table = np.ascontiguousarray(table[:, :width].T, np.int64)
        weight = np.ones(outputs) if counted is None else 1.0 / np.maximum(counted, 1)
        weights = np.ascontiguousarray(np.broadcast_to(weight, (width, outputs)))
        return cls(table, weights, count.astype(np.int64), taps[:, 0].astype(np.int64), None)

    @classmethod
    def from_weights(cls, taps, weights):
        """From (outputs, k) input coordinates (each in range; repeats allowed, their weights add up) and their
        weights: the table of an interpolation."""
        outputs, width = taps.shape
        return cls(np.ascontiguousarray(taps.T, np.int64), np.ascontiguousarray(weights.T, np.float64),
                   np.full(outputs, width, np.int64), taps[:, 0].astype(np.int64), None)

    @classmethod
    def adaptive(cls, size, extent):
        """Adaptive bins: output i covers [floor(i * size / extent), ceil((i + 1) * size / extent))."""
        i = np.arange(extent)
        start, stop = (i * size) // extent, -((-(i + 1) * size) // extent)
        width = int((stop - start).max())
        taps = start[:, None] + np.arange(width)[None, :]
        return cls.from_taps(taps, taps < stop[:, None], stop - start)

    @classmethod
    def identity(cls, size, dtype=np.float64):
        """Output i reads input i with weight 1 (an axis a separable op leaves alone)."""
        return cls.from_weights(np.arange(size)[:, None], np.ones((size, 1), dtype))

    def transposed(self, size):
        """The table of the gradient: input coordinate a gathers every output i whose taps hold a, weighted by
        output i's weight."""
        width, outputs = self.taps.shape
        k = np.arange(width)[:, None]
        held = k < self.count[None, :]
        coordinate = self.taps[held]
        output = np.broadcast_to(np.arange(outputs), self.taps.shape)[held]
        weight = self.weights[held]
        order = np.lexsort((output, coordinate))
        coordinate, output, weight = coordinate[order], output[order], weight[order]
        count = np.bincount(coordinate, minlength=size).astype(np.int64)
        start = np.concatenate(([0], np.cumsum(count)[:-1]))
        slot = np.arange(coordinate.size) - start[coordinate]
        depth = max(1, int(count.max(initial=0)))
        taps = np.full((depth, size), -1, np.int64)
        weights = np.zeros((depth, size))
        taps[slot, coordinate] = output
        weights[slot, coordinate] = weight
        return TapAxis(taps, weights, count, np.zeros(size, np.int64), outputs)
