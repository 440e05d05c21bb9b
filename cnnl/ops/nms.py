"""Non-maximum suppression: cnnlCreate/DestroyNmsDescriptor, cnnlSetNmsDescriptor_v5, cnnlGetNmsWorkspaceSize_v3
and cnnlNms_v2.

The signatures are those Cambricon's public mlu-ops library forwards its mluOpNms family to; the parameters follow
the mluOpSetNmsDescriptor / mluOpNms documentation of mlu_op.h. (DIOPI's Cambricon backend names cnnlNms_v2 only in
an error message of its own NMS kernel; it does not call it.) boxes: HALF or FLOAT [N, 4] (input_layout 0) or
[4, N] (layout 1), corners [x1, y1, x2, y2] or centres [cx, cy, w, h]; confidence [N] (HALF or FLOAT). Output
modes: INDICES (INT32 or INT64 [>= kept]), CONFIDENCE_AND_POS_1 ([>= kept, 5] rows of confidence, x1, y1, x2, y2
in the boxes' type), CONFIDENCE_AND_POS_2 (the same planar, [5, >= kept]); output_size is one INT32 in device
memory. pad_to_max_output_size fills the output up to max_output_size with zeros. Hard NMS only: the soft methods,
the batched [B, N, 4] form with per-class confidences and 3-D boxes are NOT_SUPPORTED, as mlu-ops documents for
its current version. Numerics in `cnnl.kernels.nms`.
"""
from __future__ import annotations

import math

import numpy as np

from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_enum, as_int, as_number

from .. import checks
from .. import enums as E
from ..descriptors import Descriptor, lifecycle, live, ready
from ..handle import handle_arg
from ..kernels import nms as K
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from . import nn_common as N

_BOX_TYPES = (E.CNNL_DTYPE_HALF, E.CNNL_DTYPE_FLOAT)
_INDEX_TYPES = (E.CNNL_DTYPE_INT32, E.CNNL_DTYPE_INT64)


class NmsDescriptor(Descriptor):
    """cnnlNmsDescriptor_t: box and output modes, algorithm, method, thresholds, limits, layout, padding."""

    c_type = "cnnlNmsDescriptor_t"
    setter = "cnnlSetNmsDescriptor_v5"


createNmsDescriptor, destroyNmsDescriptor = lifecycle(NmsDescriptor, "cnnlCreateNmsDescriptor",
                                                      "cnnlDestroyNmsDescriptor")


@api("cnnlSetNmsDescriptor_v5")
def setNmsDescriptor_v5(nms_desc, box_mode, output_mode, algo, method_mode, iou_threshold, soft_nms_sigma,
                        max_output_size, confidence_threshold, offset, input_layout,
                        pad_to_max_output_size) -> None:
    """cnnlSetNmsDescriptor_v5(nms_desc, box_mode, output_mode, algo, method_mode, float iou_threshold, float
    soft_nms_sigma, int max_output_size, float confidence_threshold, float offset, int input_layout, bool
    pad_to_max_output_size)."""
    target = live(nms_desc, NmsDescriptor, "nms_desc")
    values = dict(box_mode=as_enum(box_mode, "box_mode", E.NMS_BOX_MODES, "cnnlNmsBoxPointMode_t"),
                  output_mode=as_enum(output_mode, "output_mode", E.NMS_OUTPUT_MODES, "cnnlNmsOutputMode_t"),
                  algo=as_enum(algo, "algo", E.NMS_ALGOS, "cnnlNmsAlgo_t"),
                  method=as_enum(method_mode, "method_mode", E.NMS_METHOD_MODES, "cnnlNmsMethodMode_t"),
                  max_output=as_int(max_output_size, "max_output_size", minimum=0, maximum=2 ** 31 - 1),
                  layout=as_enum(input_layout, "input_layout", (0, 1), "input layout"),
                  pad=checks.flag(pad_to_max_output_size, "pad_to_max_output_size"))
    numbers = {name: float(as_number(value, name)) for name, value in (
        ("iou_threshold", iou_threshold), ("soft_nms_sigma", soft_nms_sigma),
        ("confidence_threshold", confidence_threshold), ("offset", offset))}
    if not all(math.isfinite(v) for v in numbers.values()):
        raise ArgumentFault("thresholds, sigma and offset must be finite", "iou_threshold")
    if numbers["soft_nms_sigma"] < 0:
        raise ArgumentFault("soft_nms_sigma must not be negative", "soft_nms_sigma")
    if numbers["offset"] not in (0.0, 1.0):
        raise ArgumentFault(f"offset {numbers['offset']} must be 0 or 1", "offset")
    for name, value in values.items():
        setattr(target, name, value)
    target.iou, target.sigma = numbers["iou_threshold"], numbers["soft_nms_sigma"]
    target.confidence, target.offset = numbers["confidence_threshold"], numbers["offset"]
    target.is_set = True


def _boxes(op, boxes_desc, layout: int) -> TensorDescriptor:
    boxes = tensor_arg(boxes_desc, "boxes_desc")
    checks.supported_dtype(boxes, "boxes_desc", _BOX_TYPES, op)
    if len(boxes.dims) != 2:
        raise NotSupportedFault(f"{len(boxes.dims)}-D boxes are not supported (only [N, 4] or [4, N])",
                                "boxes_desc")
    coordinates = boxes.dims[1] if layout == 0 else boxes.dims[0]
    if coordinates != 4:
        raise ArgumentFault(f"dims {list(boxes.dims)}; layout {layout} takes {'[N, 4]' if layout == 0 else '[4, N]'}"
                            f" boxes (3-D boxes of 7 values are not supported)", "boxes_desc")
    return boxes


@api("cnnlGetNmsWorkspaceSize_v3")
def getNmsWorkspaceSize_v3(handle, boxes_desc, confidence_desc) -> int:
    """cnnlGetNmsWorkspaceSize_v3(handle, boxes_desc, confidence_desc, &size) -> size: the sorted scores and the
    suppression flags (8 bytes per box)."""
    handle_arg(handle)
    boxes = tensor_arg(boxes_desc, "boxes_desc")
    if len(boxes.dims) != 2:
        raise NotSupportedFault(f"{len(boxes.dims)}-D boxes are not supported", "boxes_desc")
    if confidence_desc is not None:
        tensor_arg(confidence_desc, "confidence_desc")
    return 8 * (boxes.size // 4)


@api("cnnlNms_v2")
def nms_v2(handle, nms_desc, boxes_desc, boxes, confidence_desc, confidence, workspace, workspace_size, output_desc,
           output, output_size) -> None:
    """cnnlNms_v2(handle, nms_desc, boxes_desc, boxes, confidence_desc, confidence, workspace, workspace_size,
    output_desc, output, output_size): the boxes kept by hard NMS, in decreasing confidence, and their count."""
    op = "cnnlNms_v2"
    with OpCall(op, handle) as call:
        desc = ready(nms_desc, NmsDescriptor, "nms_desc")
        if desc.method != E.CNNL_NMS_HARD_NMS:
            raise NotSupportedFault("soft NMS methods are not supported (hard NMS only)", "nms_desc")
        if desc.output_mode == E.CNNL_NMS_OUTPUT_TARGET_BATCH_AND_CLASS:
            raise NotSupportedFault("the batch-and-class output needs batched boxes, which are not supported",
                                    "nms_desc")
        bd = _boxes(op, boxes_desc, desc.layout)
        count = bd.size // 4
        if confidence_desc is None:
            raise ArgumentFault("confidence is required for 2-D boxes", "confidence_desc")
        cd = tensor_arg(confidence_desc, "confidence_desc")
        checks.supported_dtype(cd, "confidence_desc", _BOX_TYPES, op)
        if cd.dims != (count,):
            raise ArgumentFault(f"dims {list(cd.dims)}; expected [{count}] (one confidence per box)",
                                "confidence_desc")
        od = tensor_arg(output_desc, "output_desc")
        needed = desc.max_output if desc.pad else min(desc.max_output, count)
        if desc.output_mode == E.CNNL_NMS_OUTPUT_TARGET_INDICES:
            checks.supported_dtype(od, "output_desc", _INDEX_TYPES, op)
            rows = od.size
        else:
            checks.same_dtype(bd, "boxes_desc", (od, "output_desc"))
            axis = 1 if desc.output_mode == E.CNNL_NMS_OUTPUT_TARGET_CONFIDENCE_AND_POS_1 else 0
            if len(od.dims) != 2 or od.dims[axis] != 5:
                raise ArgumentFault(f"dims {list(od.dims)}; this output mode writes "
                                    f"{'[M, 5]' if axis else '[5, M]'}", "output_desc")
            rows = od.dims[1 - axis]
        if rows < needed:
            raise ArgumentFault(f"the output holds {rows} boxes; up to {needed} may be written", "output_desc")
        bv = call.input(bd, boxes, "boxes")
        cv = call.input(cd, confidence, "confidence")
        ov = call.output(od, output, "output")
        sv = call.output(N.raw_buffer(E.CNNL_DTYPE_INT32, 1, "output_size"), output_size, "output_size")
        call.workspace(workspace, workspace_size, 8 * count, "cnnlGetNmsWorkspaceSize_v3")
        settings = (desc.iou, desc.confidence, desc.offset if desc.algo == E.CNNL_NMS_ALGO_INCLUDE_BOUNDARY else 0.0,
                    desc.max_output, desc.box_mode == E.CNNL_NMS_BOX_CENTER)
        mode, pad, planar = desc.output_mode, desc.pad, desc.layout == 1

        def run():
            boxes_nx4 = bv.T if planar else bv
            keep, corners, scores = K.nms(boxes_nx4, cv, *settings)
            kept = keep.size
            if mode == E.CNNL_NMS_OUTPUT_TARGET_INDICES:
                ov[:kept] = keep
                if pad:
                    ov[kept:needed] = 0
            else:
                table = np.concatenate([scores[:, None], corners], axis=1)
                target = ov if mode == E.CNNL_NMS_OUTPUT_TARGET_CONFIDENCE_AND_POS_1 else ov.T
                target[:kept] = table
                if pad:
                    target[kept:needed] = 0
            sv[0] = kept

        call.submit(run, flops=10.0 * count * count, dtype=bd.dtype)
