"""YOLO detection output (add_i_detection_output_node): box decoding of the heads, per-class NMS, a fixed-size
box list per image.

Outputs: [N, num_box_limit, 7] float32 rows (image index, class, score, x1, y1, x2, y2; rows past the count
are zero) and [N] int32 detection counts. Decoding, for a head of extent (H, W) and stride image / extent:
  YOLOV3, YOLOV4: x = (sigmoid(tx) + gx) * stride, w = exp(tw) * anchor_w, score = sigmoid(obj) * sigmoid(cls)
  YOLOV5:         x = (2 sigmoid(tx) - 0.5 + gx) * stride, w = (2 sigmoid(tw))^2 * anchor_w
scaled by `scale`; boxes are (x -+ w/2, y -+ h/2). Suppression per class with the NMS IoU threshold (DIOU_NMS:
IoU minus the centre-distance term to the power diou_power_exp), candidates above the confidence threshold.
"""
from __future__ import annotations

import numpy as np

from ...status import invalid
from . import Op, register


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def decode(attrs, heads, anchors):
    """(boxes [N, B, 4], scores [N, B, classes]) of all heads."""
    algo = attrs.get("algo", "YOLOV5")
    num_class, num_anchor = int(attrs["num_class"]), int(attrs["num_anchor"])
    image_h, image_w = attrs.get("image_shape", (640, 640))
    scale = float(attrs.get("scale", 1.0))
    anchors = np.asarray(anchors, np.float32).reshape(len(heads), num_anchor, 2)
    all_boxes, all_scores = [], []
    for level, head in enumerate(heads):
        n, channels, h, w = head.shape
        if channels != num_anchor * (5 + num_class):
            raise ValueError(f"detection head {level}: {channels} channels, expected {num_anchor} x "
                             f"(5 + {num_class})")
        t = head.astype(np.float32).reshape(n, num_anchor, 5 + num_class, h, w)
        gy, gx = np.meshgrid(np.arange(h, dtype=np.float32), np.arange(w, dtype=np.float32), indexing="ij")
        stride_y, stride_x = image_h / h, image_w / w
        s = _sigmoid(t)
        aw = anchors[level, :, 0][None, :, None, None]
        ah = anchors[level, :, 1][None, :, None, None]
        if algo == "YOLOV5":
            cx = (s[:, :, 0] * 2 - 0.5 + gx) * stride_x
            cy = (s[:, :, 1] * 2 - 0.5 + gy) * stride_y
            bw = (s[:, :, 2] * 2) ** 2 * aw
            bh = (s[:, :, 3] * 2) ** 2 * ah
        else:
            cx = (s[:, :, 0] + gx) * stride_x
            cy = (s[:, :, 1] + gy) * stride_y
            bw = np.exp(t[:, :, 2]) * aw
            bh = np.exp(t[:, :, 3]) * ah
        boxes = np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], axis=-1) * scale
        scores = s[:, :, 4:5] * s[:, :, 5:]
        all_boxes.append(boxes.reshape(n, -1, 4))
        all_scores.append(np.moveaxis(scores, 2, -1).reshape(n, -1, num_class))
    return np.concatenate(all_boxes, axis=1), np.concatenate(all_scores, axis=1)


def nms_keep(boxes, scores, threshold, limit, diou_power=None):
    """Indices of the boxes greedy NMS keeps, best score first: a box is suppressed by a kept one whose IoU with it
    is at least `threshold` (DIoU: IoU minus (centre distance / enclosing diagonal) ** diou_power)."""
    order = np.argsort(-scores, kind="stable")
    keep = []
    suppressed = np.zeros(order.size, bool)
    for a in range(order.size):
        if suppressed[a]:
            continue
        i = order[a]
        keep.append(i)
        if len(keep) >= limit:
            break
        rest = order[a + 1:]
        bi, br = boxes[i], boxes[rest]
        iw = np.clip(np.minimum(bi[2], br[:, 2]) - np.maximum(bi[0], br[:, 0]), 0, None)
        ih = np.clip(np.minimum(bi[3], br[:, 3]) - np.maximum(bi[1], br[:, 1]), 0, None)
        inter = iw * ih
        union = (bi[2] - bi[0]) * (bi[3] - bi[1]) + (br[:, 2] - br[:, 0]) * (br[:, 3] - br[:, 1]) - inter
        iou = np.where(union > 0, inter / np.where(union > 0, union, 1), 0)
        if diou_power is None:
            suppressed[a + 1:] |= (union > 0) & (iou >= threshold)
            continue
        cw = np.maximum(bi[2], br[:, 2]) - np.minimum(bi[0], br[:, 0])
        ch = np.maximum(bi[3], br[:, 3]) - np.minimum(bi[1], br[:, 1])
        diagonal = cw * cw + ch * ch
        dx = (bi[0] + bi[2] - br[:, 0] - br[:, 2]) / 2
        dy = (bi[1] + bi[3] - br[:, 1] - br[:, 3]) / 2
        penalty = np.where(diagonal > 0, ((dx * dx + dy * dy) / np.where(diagonal > 0, diagonal, 1)) ** diou_power,
                           0)
        suppressed[a + 1:] |= (iou - penalty) >= threshold
    return np.asarray(keep, np.int64)


@register
class DetectionOutput(Op):
    """detection_output(*heads, anchors)."""

    name = "detection_output"
    arity = (2, None)

    def infer(self, attrs, ins):
        for key in ("num_class", "num_anchor"):
            if int(attrs.get(key, 0)) < 1:
                raise invalid(f"detection_output: set {key} (set_{key}) to a positive count")
        limit = int(attrs.get("num_box_limit", 100))
        if limit < 1:
            raise invalid(f"detection_output: num_box_limit {limit} must be positive")
        batch = ins[0].shape[0] if ins[0].shape is not None else -1
        return [((batch, limit, 7), np.dtype(np.float32)), ((batch,), np.dtype(np.int32))]

    def run(self, attrs, ins, outs):
        boxes, scores = decode(attrs, ins[:-1], ins[-1])
        limit = int(attrs.get("num_box_limit", 100))
        confidence, iou = float(attrs.get("confidence_thresh", 0.25)), float(attrs.get("nms_thresh", 0.45))
        diou = attrs.get("nms_type", "NMS") == "DIOU_NMS"
        result, counts = outs
        result[...] = 0
        for image in range(boxes.shape[0]):
            rows = []
            for cls in range(scores.shape[2]):
                s = scores[image, :, cls]
                candidates = np.flatnonzero(s > confidence)
                power = float(attrs.get("diou_power_exp", 1.0)) if diou else None
                keep = candidates[nms_keep(boxes[image, candidates], s[candidates], iou, limit, power)]
                kept_boxes, kept_scores = boxes[image, keep], s[keep]
                for box, score in zip(kept_boxes, kept_scores):
                    rows.append((float(score), cls, box))
            rows.sort(key=lambda r: -r[0])
            rows = rows[:limit]
            for k, (score, cls, box) in enumerate(rows):
                result[image, k] = (image, cls, score, *box)
            counts[image] = len(rows)
