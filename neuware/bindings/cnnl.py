"""libcnnl: the annotations of the cnnl.h functions whose C types alone do not say how they map to Python.

Defaults cover the rest: descriptors and handles are objects, `void *` are device pointers, `size_t *` and the
other non-const scalar pointers are outputs. What is left: arrays with their counts, host scalars (alpha/beta are
floats, except cnnlOpTensor's, which follow the operation's computation type), output arrays, and a few one-offs.
"""
from __future__ import annotations

from ..kinds import DevicePtr, FillValue, HostInt, HostScalar, OutArray, OutHostInt, Scalars, Seq, Switch

CNNL_DIM_MAX = 8  # the length of cnnlAdvancedIndex's index arrays

_FLOAT = HostScalar("float")


def _scaled(*names: str) -> dict:
    """alpha/beta-like parameters: host floats (NULL = the Python default)."""
    return {name: _FLOAT for name in names}


def _rank(desc) -> int:
    """The number of dimensions of a tensor descriptor (0 for anything else, which the op then rejects)."""
    dims = getattr(desc, "dims", None)
    return len(dims) if isinstance(dims, tuple) else 0


_ALPHA_BETA = ("alpha", "beta")
_BATCH_NORM_BACKWARD = ("alpha_data_diff", "beta_data_diff", "alpha_param_diff", "beta_param_diff")

ANNOTATIONS = {
    # tensor descriptors
    "cnnlSetTensorDescriptor": {"dims": Seq("dimNb")},
    "cnnlSetTensorDescriptor_v2": {"dims": Seq("dimNb")},
    "cnnlSetTensorDescriptorEx": {"dims": Seq("dimNb"), "strides": Seq("dimNb")},
    "cnnlSetTensorDescriptorEx_v2": {"dims": Seq("dimNb"), "strides": Seq("dimNb")},
    "cnnlGetTensorDescriptor": {"dims": OutArray(count_out="dimNb")},
    "cnnlGetTensorDescriptor_v2": {"dims": OutArray(count_out="dimNb")},
    "cnnlGetTensorDescriptorEx": {"dims": OutArray(count_out="dimNb"), "strides": OutArray()},
    "cnnlGetTensorDescriptorEx_v2": {"dims": OutArray(count_out="dimNb"), "strides": OutArray()},
    # element-wise
    "cnnlOpTensor": {name: HostScalar(compute_of="op_desc") for name in ("alpha1", "alpha2", "beta")},
    "cnnlGetOpTensorWorkspaceSize_v2": {name: HostScalar(compute_of="op_desc") for name in ("alpha1", "alpha2", "beta")},
    "cnnlFill_v3": {"value": FillValue("pointer_mode", "output_desc")},
    "cnnlActivationForward": _scaled(*_ALPHA_BETA),
    "cnnlActivationBackward": _scaled(*_ALPHA_BETA),
    # movement
    "cnnlSetTransposeDescriptor": {"permute": Seq("dims")},
    "cnnlGetTransposeDescriptor": {"permute": OutArray(count_out="dims")},
    "cnnlConcat": {"inputs_desc": Seq("concat_num"), "inputs": Seq("concat_num")},
    "cnnlSplit": {"outputs_desc": Seq("split_num"), "outputs": Seq("split_num")},
    "cnnlStridedSlice": {name: Seq(lambda input_desc: _rank(input_desc)) for name in ("begin", "end", "stride")},
    # reductions
    "cnnlSetReduceDescriptor": {"axis": Seq("axis_num")},
    "cnnlSetReduceDescriptor_v2": {"axis": Seq("axis_num")},
    "cnnlReduce": _scaled(*_ALPHA_BETA),
    # matmul
    "cnnlMatMul": _scaled(*_ALPHA_BETA),
    "cnnlMatMul_v2": _scaled(*_ALPHA_BETA),
    "cnnlBatchMatMulBCast_v2": _scaled(*_ALPHA_BETA),
    "cnnlSetMatMulDescAttr": {"value": HostInt("size_in_bytes")},
    "cnnlGetMatMulDescAttr": {"buf": OutHostInt("size_in_bytes", "size_written")},
    "cnnlGetMatMulAlgoHeuristic": {"result_array": Seq("requested_algo_count")},
    "cnnlGetBatchMatMulAlgoHeuristic": {"result_array": Seq("requested_algo_count")},
    # convolution
    "cnnlSetConvolutionDescriptor": {"pad": Seq(lambda dimNb: max(0, 2 * (dimNb - 2))),
                                     "stride": Seq(lambda dimNb: max(0, dimNb - 2)),
                                     "dilation": Seq(lambda dimNb: max(0, dimNb - 2))},
    "cnnlConvolutionForward": _scaled(*_ALPHA_BETA),
    "cnnlConvolutionBackwardData": _scaled(*_ALPHA_BETA),
    "cnnlConvolutionBackwardFilter": _scaled(*_ALPHA_BETA),
    # pooling, softmax, normalisation
    "cnnlPoolingForward": _scaled(*_ALPHA_BETA),
    "cnnlPoolingForward_v2": _scaled(*_ALPHA_BETA),
    "cnnlPoolingForwardWithIndex": _scaled(*_ALPHA_BETA),
    "cnnlPoolingBackward": _scaled(*_ALPHA_BETA),
    "cnnlSoftmaxForward": _scaled(*_ALPHA_BETA),
    "cnnlSoftmaxForward_v2": _scaled(*_ALPHA_BETA),
    "cnnlSoftmaxBackward": _scaled(*_ALPHA_BETA),
    "cnnlBatchNormForwardTraining": _scaled(*_ALPHA_BETA),
    "cnnlBatchNormForwardTraining_v2": _scaled(*_ALPHA_BETA),
    "cnnlBatchNormForwardInference": _scaled(*_ALPHA_BETA),
    "cnnlBatchNormBackward": _scaled(*_BATCH_NORM_BACKWARD),
    "cnnlBatchNormBackward_v2": _scaled(*_BATCH_NORM_BACKWARD),
    # indexing
    "cnnlEmbeddingForward_v2": _scaled("max_norm", "norm_type"),
    "cnnlMasked_v3": {"number": DevicePtr()},
    "cnnlGetIndexPutWorkspaceSize": {"indices_descs": Seq("indices_num")},
    "cnnlIndexPut": {"indices_descs": Seq("indices_num"), "indices": Seq("indices_num")},
}

DESTROYS = {
    "cnnlDestroy": "handle",
    "cnnlDestroyTensorDescriptor": "desc",
    "cnnlDestroyOpTensorDescriptor": "desc",
    "cnnlDestroyActivationDescriptor": "desc",
    "cnnlDestroyTransposeDescriptor": "desc",
    "cnnlDestroyReduceDescriptor": "desc",
    "cnnlDestroyConvolutionDescriptor": "desc",
    "cnnlDestroyPoolingDescriptor": "desc",
    "cnnlMatMulDescDestroy": "desc",
    "cnnlMatMulAlgoDestroy": "desc",
    "cnnlDestroyMatMulDescriptor": "desc",
    "cnnlDestroyMatMulAlgo": "algo",
    "cnnlDestroyMatMulHeuristicResult": "desc",
    "cnnlRandDestroyGenerator": "generator",
}

ERROR_STRINGS = {"cnnlGetErrorString": "status"}

# ---- elementwise, movement, creation and indexing functions (their family pages: docs/cnnl.md) ----------------------


def _masked_op(name: str) -> int:
    import cnnl
    return getattr(cnnl, name)


ANNOTATIONS.update({
    "cnnlAddcmul": {"alpha": HostScalar(compute_of="input_desc")},
    "cnnlAddcdiv": {"alpha": HostScalar(compute_of="input_desc")},
    "cnnlMulN": {"inputs_desc": Seq("input_num"), "inputs": Seq("input_num")},
    "cnnlTransform_v2": {name: FillValue("pointer_mode", compute_of="input_desc") for name in ("alpha", "beta")},
    "cnnlClip_v2": {name: FillValue("pointer_mode", "input_desc") for name in ("min", "max")},
    "cnnlThreshold": {name: HostScalar(dtype_of="input_desc") for name in ("threshold", "value")},
    "cnnlThresholdBackward": {"threshold": HostScalar(dtype_of="x_desc")},
    "cnnlBiasAdd": {name: HostScalar(compute_of="output_desc") for name in ("alpha", "beta")},
    "cnnlArange_v2": {name: HostScalar(compute_of="output_desc") for name in ("start", "step")},
    "cnnlFlip": {"dimension": Seq("dimension_len")},
    "cnnlRoll": {"shifts": Seq("shift_num"), "dims": Seq("dim_num")},
    "cnnlPad": {"paddings": Seq(lambda input_desc: 2 * _rank(input_desc), ctype="int32_t"),
                "padding_value": HostScalar(dtype_of="input_desc")},
    "cnnlReflectionPad2d": {"pad": Seq(4)},
    "cnnlReplicationPad2d": {"pad": Seq(4)},
    "cnnlStridedSliceBackward": {name: Seq(lambda dx_desc: _rank(dx_desc)) for name in ("begin", "end", "stride")},
    "cnnlAsStridedBackward": {"stride": Seq(lambda dy_desc: _rank(dy_desc))},
    "cnnlGetAdvancedIndexOutputDim": {"indices_desc": Seq(CNNL_DIM_MAX), "output_dims": OutArray()},
    "cnnlGetAdvancedIndexWorkspaceSize": {"indices_desc": Seq(CNNL_DIM_MAX)},
    "cnnlAdvancedIndex": {"indices_desc": Seq(CNNL_DIM_MAX), "indices": Seq(CNNL_DIM_MAX)},
    "cnnlIndexFill_v2": {"value": FillValue("pointer_mode", "input_desc")},
    "cnnlMasked_v4": {"scale": Switch("masked_op", {
                          _masked_op("CNNL_MASKED_FILL_HOST"): HostScalar(dtype_of="input_desc"),  # the input's type
                          _masked_op("CNNL_MASKED_SCALE"): HostScalar("float")}),  # other ops do not read it
                      "number": DevicePtr()},
    "cnnlUnique_v2": {"output_num": DevicePtr()},
    "cnnlSetStdVarMeanDescriptor": {"axis": Seq("axis_num")},
})

ANNOTATIONS.update({
    "cnnlSetPoolingNdDescriptor_v2": {name: Seq(lambda nbDims: max(0, nbDims - 2))
                                      for name in ("window", "padding", "stride", "dilation")},
    "cnnlSetInterpDescriptorEx": {"scales": Seq(lambda input_desc: max(0, _rank(input_desc) - 2), optional=True),
                                  "pad": Seq(lambda input_desc: 2 * max(0, _rank(input_desc) - 2), optional=True)},
    "cnnlInterpBackward_v2": {"scales": Seq(lambda grad_input_desc: max(0, _rank(grad_input_desc) - 2),
                                            optional=True)},
    "cnnlSetDCNDescriptor": {"pad": Seq(lambda dimNb: max(0, 2 * (dimNb - 2))),
                             "stride": Seq(lambda dimNb: max(0, dimNb - 2)),
                             "dilation": Seq(lambda dimNb: max(0, dimNb - 2))},
    **{name: {"rng_state": Seq(2, optional=True)} for name in (  # host {seed, offset}
        "cnnlFlashAttentionForward", "cnnlFlashAttentionForward_v2", "cnnlFlashAttentionBackward",
        "cnnlFlashAttentionBackward_v2")},
})

DESTROYS.update({f"cnnlDestroy{kind}Descriptor": "desc" for kind in (
    "Unique", "StdVarMean", "Trigon", "Interp", "DCN", "FlashAttention", "RotaryEmbedding", "Nms", "CTCLoss")})

# ---- the multi-tensor (foreach) ops ---------------------------------------------------------------------------------


def _lists(*names: str, optional=()) -> dict:
    """Descriptor and pointer arrays of tensor_num entries each (`optional` ones may be NULL: a mode that reads
    none)."""
    return {name: Seq("tensor_num", optional=name in optional) for name in names}


_BINARY_LISTS = ("input1_desc_array", "input1_ptr_array", "input2_desc_array", "input2_ptr_array",
                 "output_desc_array", "output_ptr_array")
ANNOTATIONS.update({
    "cnnlGetForeachBinaryOpWorkspaceSize": _lists("input_desc_array"),
    "cnnlGetForeachUnaryOpWorkspaceSize": _lists("input_desc_array"),
    "cnnlGetForeachLerpExtraInputSize": _lists("input1_desc_array"),
    "cnnlForeachBinaryOp": {**_lists(*_BINARY_LISTS, optional=("input2_desc_array", "input2_ptr_array")),
                            "scalar": Switch("mode", {1: Scalars(dtype_of="scalar_desc"),
                                                      2: Scalars("tensor_num", dtype_of="scalar_desc")}),
                            "alpha": Scalars(first_of="input1_desc_array", compute=True)},
    "cnnlForeachUnaryOp_v2": _lists("input_desc_array", "input_ptr_array", "output_desc_array", "output_ptr_array",
                                    optional=("input_ptr_array",)),
    "cnnlForeachPointwiseOp": {**_lists("input_desc_array", "input_ptr_array", "tensors1_desc_array",
                                        "tensors1_ptr_array", "tensors2_desc_array", "tensors2_ptr_array",
                                        "output_desc_array", "output_ptr_array"),
                               "scalar": Switch("scalar_mode", {
                                   0: Scalars(first_of="input_desc_array", compute=True),
                                   1: Scalars("tensor_num", first_of="input_desc_array", compute=True)})},
    "cnnlForeachLerp": {**_lists("input1_desc_array", "input1_ptr_array", "input2_desc_array", "input2_ptr_array",
                                 "output_desc_array", "output_ptr_array"),
                        "input3_desc_array": Seq("tensor_num", optional=True),
                        "input3_ptr_array": Switch("mode", {1: Scalars(first_of="input1_desc_array",
                                                                       indirect=True)},
                                                   Seq("tensor_num", optional=True))},
})
