"""Hard NMS through the API against a direct numpy greedy reference (and torchvision-style behaviour): corner and
centre boxes, [N, 4] and [4, N] layouts, thresholds, max_output_size and padding, the three output modes, ties,
empty inputs and bad arguments."""
import numpy as np
import pytest

import cnnl

from .nn_helpers import F16, F32, blank, placed, raises_status, sync

INT32, INT64 = cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_INT64


def reference(boxes, scores, iou_threshold, score_threshold=-np.inf, limit=None, offset=0.0):
    order = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > score_threshold]
    keep = []
    while order and (limit is None or len(keep) < limit):
        i = order.pop(0)
        keep.append(i)
        remaining = []
        for j in order:
            w = min(boxes[i, 2], boxes[j, 2]) - max(boxes[i, 0], boxes[j, 0]) + offset
            h = min(boxes[i, 3], boxes[j, 3]) - max(boxes[i, 1], boxes[j, 1]) + offset
            inter = max(w, 0) * max(h, 0)
            area = lambda k: (boxes[k, 2] - boxes[k, 0] + offset) * (boxes[k, 3] - boxes[k, 1] + offset)  # noqa
            if inter / (area(i) + area(j) - inter) < iou_threshold:
                remaining.append(j)
        order = remaining
    return np.array(keep, np.int64)


def random_boxes(rng, count):
    corner = rng.uniform(0, 50, (count, 2))
    size = rng.uniform(5, 30, (count, 2))
    return np.concatenate([corner, corner + size], axis=1)


def nms(handle, boxes, scores, iou, *, limit=None, score=-1.0, offset=0.0, layout=0, center=False, mode=0, pad=False,
        code=F32, index=INT32, algo=cnnl.CNNL_NMS_ALGO_EXCLUDE_BOUNDARY):
    count = len(scores)
    limit = count if limit is None else limit
    desc = cnnl.createNmsDescriptor()
    cnnl.setNmsDescriptor_v5(desc, cnnl.CNNL_NMS_BOX_CENTER if center else cnnl.CNNL_NMS_BOX_DIAGONAL, mode, algo,
                             cnnl.CNNL_NMS_HARD_NMS, iou, 0.0, limit, score, offset, layout, pad)
    values = boxes
    if center:
        values = np.concatenate([(boxes[:, :2] + boxes[:, 2:]) / 2, boxes[:, 2:] - boxes[:, :2]], axis=1)
    bt = placed(values if layout == 0 else np.ascontiguousarray(values.T), code)
    ct = placed(scores, code)
    rows = max(limit, 1)
    out = blank((rows,), index) if mode == 0 else blank((rows, 5) if mode == 1 else (5, rows), code)
    size_t = blank((1,), INT32)
    size = cnnl.getNmsWorkspaceSize_v3(handle, bt.desc, ct.desc)
    ws = blank((max(size, 1),), cnnl.CNNL_DTYPE_INT8).ptr
    cnnl.nms_v2(handle, desc, bt.desc, bt.ptr, ct.desc, ct.ptr, ws, size, out.desc, out.ptr, size_t.ptr)
    sync(handle)
    return out.read(), int(size_t.read()[0])


@pytest.mark.parametrize("iou", [0.0, 0.3, 0.7, 1.0])
@pytest.mark.parametrize("layout,center", [(0, False), (1, False), (0, True)])
def test_indices(handle, iou, layout, center):
    rng = np.random.default_rng(int(iou * 10) + layout * 3 + center)
    boxes = np.round(random_boxes(rng, 40))  # integral corners: exact in float32 either way
    scores = rng.permutation(40).astype(np.float64) / 40
    out, count = nms(handle, boxes, scores, iou, layout=layout, center=center)
    want = reference(boxes, scores, iou)
    assert count == len(want)
    np.testing.assert_array_equal(out[:count], want)


def test_limits_thresholds_ties_and_padding(handle):
    rng = np.random.default_rng(9)
    boxes = np.round(random_boxes(rng, 30))
    scores = np.round(rng.uniform(0, 1, 30), 1)  # many ties: the lower index first
    out, count = nms(handle, boxes, scores, 0.5, limit=4, score=0.35, pad=True, index=INT64)
    want = reference(boxes, scores, 0.5, 0.35, 4)
    assert count == len(want) <= 4
    np.testing.assert_array_equal(out[:count], want)
    assert np.all(out[count:] == 0)
    out, count = nms(handle, boxes, scores, 0.5, offset=1.0, algo=cnnl.CNNL_NMS_ALGO_INCLUDE_BOUNDARY)
    np.testing.assert_array_equal(out[:count], reference(boxes, scores, 0.5, offset=1.0))


@pytest.mark.parametrize("mode", [1, 2])
def test_confidence_and_position_outputs(handle, mode):
    rng = np.random.default_rng(mode)
    boxes, scores = np.round(random_boxes(rng, 12)), rng.permutation(12) / 12
    table, count = nms(handle, boxes, scores, 0.4, mode=mode)
    rows = table if mode == 1 else table.T
    keep = reference(boxes, scores, 0.4)
    np.testing.assert_allclose(rows[:count], np.concatenate([scores[keep, None], boxes[keep]], axis=1), rtol=1e-6)


def test_matches_torchvision_rule_on_half(handle):
    rng = np.random.default_rng(3)
    boxes = np.round(random_boxes(rng, 25))
    scores = (rng.permutation(25) / 25).astype(np.float16).astype(np.float64)
    out, count = nms(handle, boxes, scores, 0.5, code=F16)
    np.testing.assert_array_equal(out[:count], reference(boxes, scores, 0.5))


def test_empty_and_rejects(handle):
    out, count = nms(handle, np.zeros((0, 4)), np.zeros(0), 0.5)
    assert count == 0
    BAD, UNSUPPORTED = cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED
    desc = cnnl.createNmsDescriptor()
    with raises_status(BAD, arg="offset"):
        cnnl.setNmsDescriptor_v5(desc, 0, 0, 0, 0, 0.5, 0.0, 10, 0.0, 0.5, 0, False)
    with raises_status(BAD, arg="box_mode"):
        cnnl.setNmsDescriptor_v5(desc, 2, 0, 0, 0, 0.5, 0.0, 10, 0.0, 0.0, 0, False)
    boxes, scores = blank((10, 4), F32), blank((10,), F32)
    out, size_t = blank((10,), INT32), blank((1,), INT32)
    args = [handle, desc, boxes.desc, boxes.ptr, scores.desc, scores.ptr, blank((80,), F32).ptr, 80, out.desc,
            out.ptr, size_t.ptr]
    with raises_status(BAD, arg="nms_desc"):
        cnnl.nms_v2(*args)
    cnnl.setNmsDescriptor_v5(desc, 0, 0, 0, cnnl.CNNL_NMS_SOFT_NMS_GAUSSIAN, 0.5, 0.5, 10, 0.0, 0.0, 0, False)
    with raises_status(UNSUPPORTED, arg="nms_desc"):
        cnnl.nms_v2(*args)
    cnnl.setNmsDescriptor_v5(desc, 0, 0, 0, 0, 0.5, 0.0, 10, 0.0, 0.0, 0, False)
    for position, value, arg, status in [(2, blank((10, 5), F32).desc, "boxes_desc", BAD),
                                         (2, blank((2, 10, 4), F32).desc, "boxes_desc", UNSUPPORTED),
                                         (4, blank((9,), F32).desc, "confidence_desc", BAD),
                                         (8, blank((9,), INT32).desc, "output_desc", BAD),
                                         (8, blank((10,), F32).desc, "output_desc", UNSUPPORTED),
                                         (7, 16, "workspace_size", BAD), (10, None, "output_size", BAD)]:
        bad = list(args)
        bad[position] = value
        with raises_status(status, arg=arg):
            cnnl.nms_v2(*bad)
