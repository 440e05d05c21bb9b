"""Hard non-maximum suppression (`cnnlNms_v2`): greedy selection in decreasing confidence (ties: lower index
first), each kept box suppressing the later boxes whose IoU with it is >= iou_threshold; boxes with confidence
<= confidence_threshold are dropped first; at most max_output boxes are kept. Box widths and heights are x2 - x1
(+ offset with the boundary included). Boxes [x1, y1, x2, y2] or [cx, cy, w, h]; computation in float32 (float64 for
double) in one nogil numba kernel."""
from __future__ import annotations

import numpy as np
from numba import njit

from .dtypes import compute_dtype
from .staging import load


@njit(nogil=True, cache=True)
def _greedy(x1, y1, x2, y2, order, iou_threshold, offset, limit, keep):
    """Indices (into the boxes) of the kept boxes, in `keep`; returns their count."""
    count = order.size
    suppressed = np.zeros(count, np.bool_)
    area = (x2 - x1 + offset) * (y2 - y1 + offset)
    kept = 0
    for a in range(count):
        if kept >= limit:
            break
        if suppressed[a]:
            continue
        i = order[a]
        keep[kept] = i
        kept += 1
        for b in range(a + 1, count):
            if suppressed[b]:
                continue
            j = order[b]
            w = max(min(x2[i], x2[j]) - max(x1[i], x1[j]) + offset, 0)
            h = max(min(y2[i], y2[j]) - max(y1[i], y1[j]) + offset, 0)
            inter = w * h
            union = area[i] + area[j] - inter
            if union > 0 and inter / union >= iou_threshold:
                suppressed[b] = True
    return kept


def corners(boxes, center):
    """(x1, y1, x2, y2) arrays from (N, 4) boxes in the compute dtype."""
    dtype = compute_dtype(boxes.dtype)
    values = np.ascontiguousarray(load(boxes, dtype))
    a, b, c, d = (np.ascontiguousarray(values[:, k]) for k in range(4))
    if center:
        half_w, half_h = c / dtype.type(2), d / dtype.type(2)
        return a - half_w, b - half_h, a + half_w, b + half_h
    return a, b, c, d


def nms(boxes, scores, iou_threshold, confidence_threshold, offset, limit, center=False):
    """(kept indices int64, the kept boxes as corners (M, 4), their scores) of hard NMS over boxes (N, 4)."""
    dtype = compute_dtype(boxes.dtype)
    x1, y1, x2, y2 = corners(boxes, center)
    confidence = np.asarray(load(scores, dtype))
    candidates = np.flatnonzero(confidence > confidence_threshold)
    order = candidates[np.argsort(-confidence[candidates], kind="stable")].astype(np.int64)
    keep = np.empty(max(min(limit, order.size), 0), np.int64)
    kept = _greedy(x1, y1, x2, y2, order, dtype.type(iou_threshold), dtype.type(offset), keep.size, keep)
    keep = keep[:kept]
    return keep, np.stack([x1[keep], y1[keep], x2[keep], y2[keep]], axis=1), confidence[keep]
