/*
 * cnnl.h: the CNNL op library API of mlusim, the software Cambricon MLU.
 *
 * Written for mlusim from Cambricon's public documentation, the open mlu-ops headers and the call sites of public
 * CNNL users (DIOPI, torch_mlu). Names, argument orders and the enum values the public sources give are CNNL's;
 * enum values that are not public are mlusim's own, stable choices (docs/cnnl.md and its family pages list them).
 * The implementation is libcnnl.so of mlusim over the `cnnl` Python package: every op validates its arguments
 * when called and runs on the handle's queue.
 *
 * Host scalars: alpha and beta point to a float (for cnnlOpTensor: to the operation's computation type, float for
 * HALF/FLOAT/BFLOAT16, double for DOUBLE, int32_t for integer types); NULL means 1 for alpha and 0 for beta.
 * cnnlFill_v3 in CNNL_POINTER_MODE_HOST reads one element of the output's data type.
 */
#ifndef MLUSIM_CNNL_H_
#define MLUSIM_CNNL_H_

#define CNNL_MAJOR 1
#define CNNL_MINOR 26
#define CNNL_PATCHLEVEL 0

#define CNNL_VERSION (CNNL_MAJOR * 10000 + CNNL_MINOR * 100 + CNNL_PATCHLEVEL)

#define CNNL_DIM_MAX 8

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cnrt.h"

#ifndef CNNL_WIN_API
#define CNNL_WIN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ==== status and common enums ================================================================================ */

typedef enum {
  CNNL_STATUS_SUCCESS = 0,
  CNNL_STATUS_NOT_INITIALIZED = 1,
  CNNL_STATUS_ALLOC_FAILED = 2,
  CNNL_STATUS_BAD_PARAM = 3,
  CNNL_STATUS_INTERNAL_ERROR = 4,
  CNNL_STATUS_ARCH_MISMATCH = 5,
  CNNL_STATUS_EXECUTION_FAILED = 6,
  CNNL_STATUS_NOT_SUPPORTED = 7,
  CNNL_STATUS_NUMERICAL_OVERFLOW = 8
} cnnlStatus_t;

typedef enum {
  CNNL_LAYOUT_NCHW = 0,
  CNNL_LAYOUT_NHWC = 1,
  CNNL_LAYOUT_HWCN = 2,
  CNNL_LAYOUT_NDHWC = 3,
  CNNL_LAYOUT_ARRAY = 4,
  CNNL_LAYOUT_NCDHW = 5,
  CNNL_LAYOUT_TNC = 6,
  CNNL_LAYOUT_NTC = 7,
  CNNL_LAYOUT_NC = 8,
  CNNL_LAYOUT_NLC = 9
} cnnlTensorLayout_t;

typedef enum {
  CNNL_DTYPE_INVALID = 0,
  CNNL_DTYPE_HALF = 1,
  CNNL_DTYPE_FLOAT = 2,
  CNNL_DTYPE_INT8 = 3,
  CNNL_DTYPE_INT16 = 4,
  CNNL_DTYPE_INT31 = 5,
  CNNL_DTYPE_INT32 = 6,
  CNNL_DTYPE_UINT8 = 7,
  CNNL_DTYPE_BOOL = 8,
  CNNL_DTYPE_INT64 = 9,
  CNNL_DTYPE_UINT32 = 11,
  CNNL_DTYPE_UINT64 = 12,
  CNNL_DTYPE_UINT16 = 13,
  CNNL_DTYPE_DOUBLE = 14,
  CNNL_DTYPE_COMPLEX_HALF = 15,
  CNNL_DTYPE_COMPLEX_FLOAT = 16,
  CNNL_DTYPE_BFLOAT16 = 17
} cnnlDataType_t;

typedef enum {
  CNNL_COMPUTATION_FAST = 0,
  CNNL_COMPUTATION_HIGH_PRECISION = 1,
  CNNL_COMPUTATION_ULTRAHIGH_PRECISION = 2
} cnnlComputationPreference_t;

typedef enum {
  CNNL_NOT_PROPAGATE_NAN = 0,
  CNNL_PROPAGATE_NAN = 1
} cnnlNanPropagation_t;

typedef enum {
  CNNL_POINTER_MODE_HOST = 0,
  CNNL_POINTER_MODE_DEVICE = 1
} cnnlPointerMode_t;

/* ==== op enums ================================================================================================ */

typedef enum {
  CNNL_OP_TENSOR_ADD = 0,
  CNNL_OP_TENSOR_MUL = 1,
  CNNL_OP_TENSOR_SUB = 2
} cnnlOpTensorDesc_t;

typedef enum {
  CNNL_LOGIC_OP_EQ = 0,
  CNNL_LOGIC_OP_NE = 1,
  CNNL_LOGIC_OP_LT = 2,
  CNNL_LOGIC_OP_LE = 3,
  CNNL_LOGIC_OP_GT = 4,
  CNNL_LOGIC_OP_GE = 5,
  CNNL_LOGIC_OP_AND = 6,
  CNNL_LOGIC_OP_OR = 7,
  CNNL_LOGIC_OP_XOR = 8,
  CNNL_LOGIC_OP_NOT = 9
} cnnlLogicOp_t;

typedef enum {
  CNNL_LOG_E = 0,
  CNNL_LOG_2 = 1,
  CNNL_LOG_10 = 2
} cnnlLogBase_t;

typedef enum {
  CNNL_ACTIVATION_SIGMOID = 0,
  CNNL_ACTIVATION_RELU = 1,
  CNNL_ACTIVATION_TANH = 2,
  CNNL_ACTIVATION_CLIPPED_RELU = 3,
  CNNL_ACTIVATION_ELU = 4,
  CNNL_ACTIVATION_IDENTITY = 5,
  CNNL_ACTIVATION_RELU6 = 6,
  CNNL_ACTIVATION_GELU = 7,
  CNNL_ACTIVATION_LEAKYRELU = 8,
  CNNL_ACTIVATION_SILU = 9,
  CNNL_ACTIVATION_HARDSWISH = 10,
  CNNL_ACTIVATION_ELU_V2 = 11,
  CNNL_ACTIVATION_SELU = 12,
  CNNL_ACTIVATION_HARDSIGMOID = 13,
  CNNL_ACTIVATION_LOGSIGMOID = 14,
  CNNL_ACTIVATION_GLU = 15
} cnnlActivationMode_t;

typedef enum {
  CNNL_ACTIVATION_FAST = 0,
  CNNL_ACTIVATION_HIGH_PRECISION = 1
} cnnlActivationPreference_t;

typedef enum {
  CNNL_REDUCE_ADD = 0,
  CNNL_REDUCE_AVG = 1,
  CNNL_REDUCE_MUL = 2,
  CNNL_REDUCE_MAX = 3,
  CNNL_REDUCE_MIN = 4,
  CNNL_REDUCE_AND = 5,
  CNNL_REDUCE_OR = 6,
  CNNL_REDUCE_NORM1 = 7,
  CNNL_REDUCE_NORM2 = 8,
  CNNL_REDUCE_MAX_LAST_INDEX = 9,
  CNNL_REDUCE_MIN_LAST_INDEX = 10,
  CNNL_REDUCE_NORMP = 11,
  CNNL_REDUCE_ASUM = 12,
  CNNL_REDUCE_SUMSQ = 13
} cnnlReduceOp_t;

typedef enum {
  CNNL_REDUCE_NO_INDICES = 0,
  CNNL_REDUCE_FLATTENED_INDICES = 1,
  CNNL_REDUCE_ONLY_INDICES = 2
} cnnlReduceIndices_t;

typedef enum {
  CNNL_32BIT_INDICES = 0,
  CNNL_16BIT_INDICES = 1
} cnnlIndicesType_t;

typedef enum {
  CNNL_MATMUL_DESC_COMPUTE_TYPE = 0,
  CNNL_MATMUL_DESC_SCALE_TYPE = 1,
  CNNL_MATMUL_DESC_POINTER_MODE = 2,
  CNNL_MATMUL_DESC_TRANSA = 3,
  CNNL_MATMUL_DESC_TRANSB = 4,
  CNNL_MATMUL_DESC_TRANSC = 5,
  CNNL_MATMUL_DESC_EPILOGUE = 6,
  CNNL_MATMUL_DESC_BIAS_POINTER = 7,
  CNNL_MATMUL_DESC_EPILOGUE_TYPE = 8,
  CNNL_MATMUL_DESC_EPILOGUE_OPERAND = 9,
  CNNL_MATMUL_ALLOW_TF32 = 10,
  CNNL_MATMUL_USE_BETA = 11,
  CNNL_MATMUL_CAST_MODE = 12,
  CNNL_MATMUL_USE_STRIDE = 13
} cnnlMatMulDescAttribute_t;

typedef enum {
  CNNL_MATMUL_FASTEST = 0,
  CNNL_MATMUL_LOW_MEMORY_OCCUPY = 1
} cnnlMatMulPreference_t;

typedef enum {
  CNNL_CONVOLUTION_FWD_ALGO_DIRECT = 0,
  CNNL_CONVOLUTION_FWD_ALGO_GEMM = 1
} cnnlConvolutionForwardAlgo_t;

typedef enum {
  CNNL_CONVOLUTION_BWD_DATA_ALGO_DIRECT = 0,
  CNNL_CONVOLUTION_BWD_DATA_ALGO_GEMM = 1
} cnnlConvolutionBwdDataAlgo_t;

typedef enum {
  CNNL_CONVOLUTION_BWD_FILTER_ALGO_DIRECT = 0,
  CNNL_CONVOLUTION_BWD_FILTER_ALGO_GEMM = 1
} cnnlConvolutionBwdFilterAlgo_t;

typedef enum {
  CNNL_CONVOLUTION_FWD_FASTEST = 0
} cnnlConvolutionFwdPreference_t;

typedef enum {
  CNNL_CONVOLUTION_BWD_DATA_FASTEST = 0
} cnnlConvolutionBwdDataPreference_t;

typedef enum {
  CNNL_CONVOLUTION_BWD_FILTER_FASTEST = 0
} cnnlConvolutionBwdFilterPreference_t;

typedef enum {
  CNNL_POOLING_MAX = 0,
  CNNL_POOLING_AVERAGE_COUNT_INCLUDE_PADDING = 1,
  CNNL_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING = 2
} cnnlPoolingMode_t;

typedef enum {
  CNNL_SOFTMAX_FAST = 0,
  CNNL_SOFTMAX_ACCURATE = 1,
  CNNL_SOFTMAX_LOG = 2
} cnnlSoftmaxAlgorithm_t;

/* The axis softmax runs along: the third-to-last (HIGH), second-to-last (MEDIUM) or last (LOW). */
typedef enum {
  CNNL_SOFTMAX_MODE_HIGH_DIMENSION = 0,
  CNNL_SOFTMAX_MODE_MEDIUM_DIMENSION = 1,
  CNNL_SOFTMAX_MODE_LOW_DIMENSION = 2
} cnnlSoftmaxMode_t;

typedef enum {
  CNNL_BATCHNORM_SPATIAL = 0,
  CNNL_BATCHNORM_PER_ACTIVATION = 1,
  CNNL_BATCHNORM_SPATIAL_PERSISTENT = 2
} cnnlBatchNormMode_t;

typedef enum {
  CNNL_BATCHNORM_OPS_BN = 0,
  CNNL_BATCHNORM_OPS_BN_ACTIVATION = 1,
  CNNL_BATCHNORM_OPS_BN_ADD_ACTIVATION = 2
} cnnlBatchNormOps_t;

typedef enum {
  CNNL_SCATTER = 0,
  CNNL_SCATTER_ADD = 1
} cnnlScatterMode_t;

typedef enum {
  CNNL_MASKED_FILL = 0,
  CNNL_MASKED_SCATTER = 1,
  CNNL_MASKED_SELECT = 2,
  CNNL_MASKED_FILL_HOST = 3,
  CNNL_MASKED_SCALE = 4
} cnnlMaskedOp_t;

typedef enum {
  CNNL_RAND_RNG_FAST = 0,
  CNNL_RAND_RNG_MTGP32 = 1,
  CNNL_RAND_RNG_PHILOX = 2
} cnnlRandRngType_t;

typedef enum {
  CNNL_RAND_MTGP32_P11213 = 0
} cnnlRandMTGP32Period_t;

typedef enum {
  CNNL_REDUCTION_NONE = 0,
  CNNL_REDUCTION_MEAN = 1,
  CNNL_REDUCTION_SUM = 2
} cnnlNlllossAlgorithm_t;

typedef enum {
  CNNL_MSE_LOSS_NONE = 0,
  CNNL_MSE_LOSS_MEAN = 1,
  CNNL_MSE_LOSS_SUM = 2
} cnnlMSELossReduction_t;

typedef enum {
  CNNL_BCE_LOSS_NONE = 0,
  CNNL_BCE_LOSS_MEAN = 1,
  CNNL_BCE_LOSS_SUM = 2
} cnnlBceLossReduction_t;

typedef enum {
  CNNL_BCE_WITH_LOGITS_NONE = 0,
  CNNL_BCE_WITH_LOGITS_MEAN = 1,
  CNNL_BCE_WITH_LOGITS_SUM = 2
} cnnlBceWithLogitsReduction_t;

typedef enum {
  CNNL_SMOOTHL1LOSS_REDUCTION_NONE = 0,
  CNNL_SMOOTHL1LOSS_REDUCTION_MEAN = 1,
  CNNL_SMOOTHL1LOSS_REDUCTION_SUM = 2
} cnnlSmoothL1LossAlgorithm_t;

/* ---- part 3 enums ---- */


typedef enum {
  CNNL_ATTN_MASK_NONE = 0,
  CNNL_ATTN_MASK_CAUSAL = 1,
  CNNL_ATTN_MASK_CAUSAL_TOP_LEFT = 2,
  CNNL_ATTN_MASK_CAUSAL_BOTTOM_RIGHT = 3,
  CNNL_ATTN_MASK_LOCAL_TOP_LEFT = 4,
  CNNL_ATTN_MASK_LOCAL_BOTTOM_RIGHT = 5
} cnnlAttentionMaskMode_t;

typedef enum {
  CNNL_INTERP_NEAREST = 0,
  CNNL_INTERP_LINEAR = 1,
  CNNL_INTERP_BILINEAR = 2,
  CNNL_INTERP_BICUBIC = 3,
  CNNL_INTERP_TRILINEAR = 4
} cnnlInterpMode_t;

typedef enum {
  CNNL_INTERP_BACKWARD_NEAREST = 0,
  CNNL_INTERP_BACKWARD_LINEAR = 1,
  CNNL_INTERP_BACKWARD_BILINEAR = 2,
  CNNL_INTERP_BACKWARD_BICUBIC = 3,
  CNNL_INTERP_BACKWARD_TRILINEAR = 4
} cnnlInterpBackwardMode_t;

/* ALGO0 half pixel, ALGO1 PyTorch half pixel, ALGO2 align corners, ALGO3 asymmetric, ALGO4 TensorFlow half pixel
 * for nearest, ALGO7 nearest-exact; ALGO5 and ALGO6 are not computed. */
typedef enum {
  CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO0 = 0,
  CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO1 = 1,
  CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO2 = 2,
  CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO3 = 3,
  CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO4 = 4,
  CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO5 = 5,
  CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO6 = 6,
  CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO7 = 7
} cnnlInterpCoordinateTransformationMode_t;

typedef enum {
  CNNL_INTERP_FLOOR = 0,
  CNNL_INTERP_CEIL = 1,
  CNNL_INTERP_ROUND_PERFER_FLOOR = 2,
  CNNL_INTERP_ROUND_PERFER_CEIL = 3
} cnnlInterpRoundMode_t;

typedef enum {
  CNNL_SEQDATA_TNC = 0,
  CNNL_SEQDATA_TNC_PACKED = 1,
  CNNL_SEQDATA_NTC = 2,
  CNNL_SEQDATA_NC = 3,
  CNNL_SEQDATA_TNBC = 4,
  CNNL_SEQDATA_TBNC = 5,
  CNNL_SEQDATA_NBTC = 6,
  CNNL_SEQDATA_NTBC = 7,
  CNNL_SEQDATA_BNTC = 8,
  CNNL_SEQDATA_BTNC = 9
} cnnlSeqDataLayout_t;

typedef enum {
  CNNL_NONE_NORMALIZATION = 0,
  CNNL_SOFTMAX_NORMALIZATION = 1,
  CNNL_LOG_SOFTMAX_NORMALIZATION = 2
} cnnlCTCLossNormalizationMode_t;

typedef enum {
  CNNL_REDUCE_MODE_NONE = 0,
  CNNL_REDUCE_MODE_SUM = 1,
  CNNL_REDUCE_MODE_MEAN_BY_LABEL_LENGTH_AND_BATCH = 2
} cnnlCTCLossReduceMode_t;

typedef enum {
  CNNL_NONE_ZERO_INFINITY = 0,
  CNNL_ZERO_INFINITY = 1
} cnnlCTCLossZeroInfinityMode_t;

typedef enum {
  CNNL_TRIGON_SIN = 0,
  CNNL_TRIGON_COS = 1,
  CNNL_TRIGON_TAN = 2,
  CNNL_TRIGON_ASIN = 3,
  CNNL_TRIGON_ACOS = 4,
  CNNL_TRIGON_ATAN = 5,
  CNNL_TRIGON_SINH = 6,
  CNNL_TRIGON_COSH = 7,
  CNNL_TRIGON_TANH = 8,
  CNNL_TRIGON_ASINH = 9,
  CNNL_TRIGON_ACOSH = 10,
  CNNL_TRIGON_ATANH = 11
} cnnlTrigonFunctionMode_t;

/* the multi-tensor (foreach) ops: names from Cambricon's torch_mlu, values chosen by mlusim (docs/cnnl_elementwise.md) */
typedef enum {
  CNNL_FOREACH_ADD = 0,
  CNNL_FOREACH_SUB = 1,
  CNNL_FOREACH_MUL = 2,
  CNNL_FOREACH_DIV = 3,
  CNNL_FOREACH_SQRT = 4,
  CNNL_FOREACH_ZERO = 5,
  CNNL_FOREACH_ADDCMUL = 6,
  CNNL_FOREACH_ADDCDIV = 7
} cnnlForeachOpMode_t;

typedef enum {
  FOREACH_BINARY_TENSOR_LIST = 0,
  FOREACH_BINARY_SCALAR = 1,
  FOREACH_BINARY_SCALAR_LIST = 2,
  FOREACH_BINARY_SCALAR_TENSOR = 3
} cnnlForeachBinaryMode_t;

typedef enum {
  FOREACH_POINTWISE_SCALAR = 0,
  FOREACH_POINTWISE_SCALAR_LIST = 1
} cnnlForeachPointWiseMode_t;

typedef enum {
  FOREACH_LERP_TENSOR_LIST = 0,
  FOREACH_LERP_SCALAR = 1,
  FOREACH_LERP_SCALAR_LIST = 2
} cnnlForeachLerpMode_t;

typedef enum {
  CNNL_NMS_BOX_DIAGONAL = 0,
  CNNL_NMS_BOX_CENTER = 1
} cnnlNmsBoxPointMode_t;

typedef enum {
  CNNL_NMS_OUTPUT_TARGET_INDICES = 0,
  CNNL_NMS_OUTPUT_TARGET_CONFIDENCE_AND_POS_1 = 1,
  CNNL_NMS_OUTPUT_TARGET_CONFIDENCE_AND_POS_2 = 2,
  CNNL_NMS_OUTPUT_TARGET_BATCH_AND_CLASS = 3
} cnnlNmsOutputMode_t;

typedef enum {
  CNNL_NMS_HARD_NMS = 0,
  CNNL_NMS_SOFT_NMS_LINEAR = 1,
  CNNL_NMS_SOFT_NMS_GAUSSIAN = 2
} cnnlNmsMethodMode_t;

typedef enum {
  CNNL_NMS_ALGO_EXCLUDE_BOUNDARY = 0,
  CNNL_NMS_ALGO_INCLUDE_BOUNDARY = 1
} cnnlNmsAlgo_t;

typedef enum {
  CNNL_UNSORT_FORWARD = 0,
  CNNL_SORT_ASCEND = 1,
  CNNL_UNSORT_REVERSE = 2
} cnnlUniqueSort_t;

typedef enum {
  CNNL_CYCLE_BAND_OP = 0,
  CNNL_CYCLE_BOR_OP = 1,
  CNNL_CYCLE_BXOR_OP = 2,
  CNNL_BNOT_OP = 3,
  CNNL_BLEFT_SHIFT_OP_V = 4,
  CNNL_BRIGHT_SHIFT_OP_V = 5
} cnnlBitComputeOp_t;

typedef enum {
  CNNL_STD = 0,
  CNNL_VAR = 1
} cnnlStdVarMeanOp_t;

/* CNNL_CAST_<X>_TO_<Y> = 10 * i(X) + i(Y) in the order FLOAT, HALF, BFLOAT16, DOUBLE, INT8, INT16, INT32, INT64,
 * UINT8, BOOL (mlusim's numbering). */
typedef enum {
  CNNL_CAST_FLOAT_TO_HALF = 1, CNNL_CAST_FLOAT_TO_BFLOAT16 = 2, CNNL_CAST_FLOAT_TO_DOUBLE = 3,
  CNNL_CAST_FLOAT_TO_INT8 = 4, CNNL_CAST_FLOAT_TO_INT16 = 5, CNNL_CAST_FLOAT_TO_INT32 = 6,
  CNNL_CAST_FLOAT_TO_INT64 = 7, CNNL_CAST_FLOAT_TO_UINT8 = 8, CNNL_CAST_FLOAT_TO_BOOL = 9,
  CNNL_CAST_HALF_TO_FLOAT = 10, CNNL_CAST_HALF_TO_BFLOAT16 = 12, CNNL_CAST_HALF_TO_DOUBLE = 13,
  CNNL_CAST_HALF_TO_INT8 = 14, CNNL_CAST_HALF_TO_INT16 = 15, CNNL_CAST_HALF_TO_INT32 = 16,
  CNNL_CAST_HALF_TO_INT64 = 17, CNNL_CAST_HALF_TO_UINT8 = 18, CNNL_CAST_HALF_TO_BOOL = 19,
  CNNL_CAST_BFLOAT16_TO_FLOAT = 20, CNNL_CAST_BFLOAT16_TO_HALF = 21, CNNL_CAST_BFLOAT16_TO_DOUBLE = 23,
  CNNL_CAST_BFLOAT16_TO_INT8 = 24, CNNL_CAST_BFLOAT16_TO_INT16 = 25, CNNL_CAST_BFLOAT16_TO_INT32 = 26,
  CNNL_CAST_BFLOAT16_TO_INT64 = 27, CNNL_CAST_BFLOAT16_TO_UINT8 = 28, CNNL_CAST_BFLOAT16_TO_BOOL = 29,
  CNNL_CAST_DOUBLE_TO_FLOAT = 30, CNNL_CAST_DOUBLE_TO_HALF = 31, CNNL_CAST_DOUBLE_TO_BFLOAT16 = 32,
  CNNL_CAST_DOUBLE_TO_INT8 = 34, CNNL_CAST_DOUBLE_TO_INT16 = 35, CNNL_CAST_DOUBLE_TO_INT32 = 36,
  CNNL_CAST_DOUBLE_TO_INT64 = 37, CNNL_CAST_DOUBLE_TO_UINT8 = 38, CNNL_CAST_DOUBLE_TO_BOOL = 39,
  CNNL_CAST_INT8_TO_FLOAT = 40, CNNL_CAST_INT8_TO_HALF = 41, CNNL_CAST_INT8_TO_BFLOAT16 = 42,
  CNNL_CAST_INT8_TO_DOUBLE = 43, CNNL_CAST_INT8_TO_INT16 = 45, CNNL_CAST_INT8_TO_INT32 = 46,
  CNNL_CAST_INT8_TO_INT64 = 47, CNNL_CAST_INT8_TO_UINT8 = 48, CNNL_CAST_INT8_TO_BOOL = 49,
  CNNL_CAST_INT16_TO_FLOAT = 50, CNNL_CAST_INT16_TO_HALF = 51, CNNL_CAST_INT16_TO_BFLOAT16 = 52,
  CNNL_CAST_INT16_TO_DOUBLE = 53, CNNL_CAST_INT16_TO_INT8 = 54, CNNL_CAST_INT16_TO_INT32 = 56,
  CNNL_CAST_INT16_TO_INT64 = 57, CNNL_CAST_INT16_TO_UINT8 = 58, CNNL_CAST_INT16_TO_BOOL = 59,
  CNNL_CAST_INT32_TO_FLOAT = 60, CNNL_CAST_INT32_TO_HALF = 61, CNNL_CAST_INT32_TO_BFLOAT16 = 62,
  CNNL_CAST_INT32_TO_DOUBLE = 63, CNNL_CAST_INT32_TO_INT8 = 64, CNNL_CAST_INT32_TO_INT16 = 65,
  CNNL_CAST_INT32_TO_INT64 = 67, CNNL_CAST_INT32_TO_UINT8 = 68, CNNL_CAST_INT32_TO_BOOL = 69,
  CNNL_CAST_INT64_TO_FLOAT = 70, CNNL_CAST_INT64_TO_HALF = 71, CNNL_CAST_INT64_TO_BFLOAT16 = 72,
  CNNL_CAST_INT64_TO_DOUBLE = 73, CNNL_CAST_INT64_TO_INT8 = 74, CNNL_CAST_INT64_TO_INT16 = 75,
  CNNL_CAST_INT64_TO_INT32 = 76, CNNL_CAST_INT64_TO_UINT8 = 78, CNNL_CAST_INT64_TO_BOOL = 79,
  CNNL_CAST_UINT8_TO_FLOAT = 80, CNNL_CAST_UINT8_TO_HALF = 81, CNNL_CAST_UINT8_TO_BFLOAT16 = 82,
  CNNL_CAST_UINT8_TO_DOUBLE = 83, CNNL_CAST_UINT8_TO_INT8 = 84, CNNL_CAST_UINT8_TO_INT16 = 85,
  CNNL_CAST_UINT8_TO_INT32 = 86, CNNL_CAST_UINT8_TO_INT64 = 87, CNNL_CAST_UINT8_TO_BOOL = 89,
  CNNL_CAST_BOOL_TO_FLOAT = 90, CNNL_CAST_BOOL_TO_HALF = 91, CNNL_CAST_BOOL_TO_BFLOAT16 = 92,
  CNNL_CAST_BOOL_TO_DOUBLE = 93, CNNL_CAST_BOOL_TO_INT8 = 94, CNNL_CAST_BOOL_TO_INT16 = 95,
  CNNL_CAST_BOOL_TO_INT32 = 96, CNNL_CAST_BOOL_TO_INT64 = 97, CNNL_CAST_BOOL_TO_UINT8 = 98,
  /* the 32/64-bit unsigned pairs: 100 + 10 * i(X) + i(Y) in the order INT32, INT64, UINT32, UINT64 */
  CNNL_CAST_INT32_TO_UINT32 = 102, CNNL_CAST_INT32_TO_UINT64 = 103, CNNL_CAST_INT64_TO_UINT32 = 112,
  CNNL_CAST_INT64_TO_UINT64 = 113, CNNL_CAST_UINT32_TO_INT32 = 120, CNNL_CAST_UINT32_TO_INT64 = 121,
  CNNL_CAST_UINT32_TO_UINT64 = 123, CNNL_CAST_UINT64_TO_INT32 = 130, CNNL_CAST_UINT64_TO_INT64 = 131,
  CNNL_CAST_UINT64_TO_UINT32 = 132
} cnnlCastDataType_t;

/* ==== handles and descriptors ================================================================================= */

typedef struct cnnlContext *cnnlHandle_t;
typedef struct cnnlTensorStruct *cnnlTensorDescriptor_t;
typedef struct cnnlOpTensorStruct *cnnlOpTensorDescriptor_t;
typedef struct cnnlActivationStruct *cnnlActivationDescriptor_t;
typedef struct cnnlConvolutionStruct *cnnlConvolutionDescriptor_t;
typedef struct cnnlPoolingStruct *cnnlPoolingDescriptor_t;
typedef struct cnnlReduceStruct *cnnlReduceDescriptor_t;
typedef struct cnnlTransposeStruct *cnnlTransposeDescriptor_t;
typedef struct cnnlMatMulStruct *cnnlMatMulDescriptor_t;
typedef struct cnnlMatMulAlgoStruct *cnnlMatMulAlgo_t;
typedef struct cnnlMatMulHeuristicResultStruct *cnnlMatMulHeuristicResult_t;
typedef struct cnnlMatMulPrefStruct *cnnlMatMulPrefer_t;  /* no preference object is made: pass NULL */
typedef struct cnnlRandGeneratorStruct *cnnlRandGenerator_t;
typedef struct cnnlUniqueStruct *cnnlUniqueDescriptor_t;
typedef struct cnnlStdVarMeanStruct *cnnlStdVarMeanDescriptor_t;
typedef struct cnnlTrigonStruct *cnnlTrigonDescriptor_t;
typedef struct cnnlInterpStruct *cnnlInterpDescriptor_t;
typedef struct cnnlDCNStruct *cnnlDCNDescriptor_t;
typedef struct cnnlFlashAttentionStruct *cnnlFlashAttentionDescriptor_t;
typedef struct cnnlRotaryEmbeddingStruct *cnnlRotaryEmbeddingDescriptor_t;
typedef struct cnnlNmsStruct *cnnlNmsDescriptor_t;
typedef struct cnnlCTCLossStruct *cnnlCTCLossDescriptor_t;

/* ==== handle ================================================================================================= */

/* The handle is bound to the current cnrt device; its ops run on that device's default queue until
 * cnnlSetQueue. */
cnnlStatus_t CNNL_WIN_API cnnlCreate(cnnlHandle_t *handle);
cnnlStatus_t CNNL_WIN_API cnnlDestroy(cnnlHandle_t handle);
cnnlStatus_t CNNL_WIN_API cnnlSetQueue(cnnlHandle_t handle, cnrtQueue_t queue);
cnnlStatus_t CNNL_WIN_API cnnlGetQueue(cnnlHandle_t handle, cnrtQueue_t *queue);
const char *cnnlGetErrorString(cnnlStatus_t status);

/* ==== tensor descriptors (strides in elements) ================================================================ */

cnnlStatus_t CNNL_WIN_API cnnlCreateTensorDescriptor(cnnlTensorDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyTensorDescriptor(cnnlTensorDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlResetTensorDescriptor(cnnlTensorDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlSetTensorDescriptor(cnnlTensorDescriptor_t desc, cnnlTensorLayout_t layout,
                                                  cnnlDataType_t dtype, int dimNb, const int dims[]);
cnnlStatus_t CNNL_WIN_API cnnlSetTensorDescriptor_v2(cnnlTensorDescriptor_t desc, cnnlTensorLayout_t layout,
                                                     cnnlDataType_t dtype, int dimNb, const int64_t dims[]);
cnnlStatus_t CNNL_WIN_API cnnlSetTensorDescriptorEx(cnnlTensorDescriptor_t desc, cnnlTensorLayout_t layout,
                                                    cnnlDataType_t dtype, int dimNb, const int dims[],
                                                    const int strides[]);
cnnlStatus_t CNNL_WIN_API cnnlSetTensorDescriptorEx_v2(cnnlTensorDescriptor_t desc, cnnlTensorLayout_t layout,
                                                       cnnlDataType_t dtype, int dimNb, const int64_t dims[],
                                                       const int64_t strides[]);
/* dims (and strides) must hold CNNL_DIM_MAX elements. */
cnnlStatus_t CNNL_WIN_API cnnlGetTensorDescriptor(const cnnlTensorDescriptor_t desc, cnnlTensorLayout_t *layout,
                                                  cnnlDataType_t *dtype, int *dimNb, int dims[]);
cnnlStatus_t CNNL_WIN_API cnnlGetTensorDescriptor_v2(const cnnlTensorDescriptor_t desc, cnnlTensorLayout_t *layout,
                                                     cnnlDataType_t *dtype, int *dimNb, int64_t dims[]);
cnnlStatus_t CNNL_WIN_API cnnlGetTensorDescriptorEx(const cnnlTensorDescriptor_t desc, cnnlTensorLayout_t *layout,
                                                    cnnlDataType_t *dtype, int *dimNb, int dims[], int strides[]);
cnnlStatus_t CNNL_WIN_API cnnlGetTensorDescriptorEx_v2(const cnnlTensorDescriptor_t desc,
                                                       cnnlTensorLayout_t *layout, cnnlDataType_t *dtype,
                                                       int *dimNb, int64_t dims[], int64_t strides[]);
cnnlStatus_t CNNL_WIN_API cnnlSetTensorDescriptorOnchipDataType(cnnlTensorDescriptor_t desc,
                                                                cnnlDataType_t onchip_dtype);
cnnlStatus_t CNNL_WIN_API cnnlGetTensorDescriptorOnchipDataType(const cnnlTensorDescriptor_t desc,
                                                                cnnlDataType_t *onchip_dtype);
size_t CNNL_WIN_API cnnlGetTensorElementNum(const cnnlTensorDescriptor_t desc);

/* ==== element-wise ============================================================================================ */

cnnlStatus_t CNNL_WIN_API cnnlCreateOpTensorDescriptor(cnnlOpTensorDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyOpTensorDescriptor(cnnlOpTensorDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlSetOpTensorDescriptor(cnnlOpTensorDescriptor_t desc, cnnlOpTensorDesc_t op,
                                                    cnnlDataType_t comp_dtype, cnnlNanPropagation_t nan);
cnnlStatus_t CNNL_WIN_API cnnlGetOpTensorDescriptor(const cnnlOpTensorDescriptor_t desc, cnnlOpTensorDesc_t *op,
                                                    cnnlDataType_t *comp_dtype, cnnlNanPropagation_t *nan);
cnnlStatus_t CNNL_WIN_API cnnlGetOpTensorWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t a_desc,
                                                       const cnnlTensorDescriptor_t b_desc,
                                                       const cnnlTensorDescriptor_t c_desc, size_t *size);
/* The workspace of exactly this cnnlOpTensor call (checked as the call is; the data pointers are not read). */
cnnlStatus_t CNNL_WIN_API cnnlGetOpTensorWorkspaceSize_v2(cnnlHandle_t handle, const cnnlOpTensorDescriptor_t op_desc,
                                                          const void *alpha1, const cnnlTensorDescriptor_t a_desc,
                                                          const void *a, const void *alpha2,
                                                          const cnnlTensorDescriptor_t b_desc, const void *b,
                                                          const void *beta, const cnnlTensorDescriptor_t c_desc,
                                                          const void *c, size_t *size);
/* c = op(alpha1 * a, alpha2 * b) + beta * c, a and b broadcasting to c. */
cnnlStatus_t CNNL_WIN_API cnnlOpTensor(cnnlHandle_t handle, const cnnlOpTensorDescriptor_t op_desc,
                                       const void *alpha1, const cnnlTensorDescriptor_t a_desc, const void *a,
                                       const void *alpha2, const cnnlTensorDescriptor_t b_desc, const void *b,
                                       void *workspace, size_t workspace_size, const void *beta,
                                       const cnnlTensorDescriptor_t c_desc, void *c);
cnnlStatus_t CNNL_WIN_API cnnlGetDivWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc,
                                                  const cnnlTensorDescriptor_t y_desc,
                                                  const cnnlTensorDescriptor_t z_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlDiv_v2(cnnlHandle_t handle, cnnlComputationPreference_t prefer,
                                     const cnnlTensorDescriptor_t x_desc, const void *x,
                                     const cnnlTensorDescriptor_t y_desc, const void *y, void *workspace,
                                     size_t workspace_size, const cnnlTensorDescriptor_t z_desc, void *z);
cnnlStatus_t CNNL_WIN_API cnnlGetPowWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc,
                                                  const cnnlTensorDescriptor_t y_desc,
                                                  const cnnlTensorDescriptor_t z_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlPow(cnnlHandle_t handle, cnnlComputationPreference_t prefer,
                                  const cnnlTensorDescriptor_t x_desc, const void *x,
                                  const cnnlTensorDescriptor_t y_desc, const void *y, void *workspace,
                                  size_t workspace_size, const cnnlTensorDescriptor_t z_desc, void *z);
cnnlStatus_t CNNL_WIN_API cnnlGetMaximumWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t c_desc,
                                                      size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlMaximum(cnnlHandle_t handle, const cnnlTensorDescriptor_t a_desc, const void *a,
                                      const cnnlTensorDescriptor_t b_desc, const void *b,
                                      const cnnlTensorDescriptor_t c_desc, void *c, void *workspace,
                                      size_t workspace_size);
cnnlStatus_t CNNL_WIN_API cnnlGetMinimumWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t c_desc,
                                                      size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlMinimum(cnnlHandle_t handle, const cnnlTensorDescriptor_t a_desc, const void *a,
                                      const cnnlTensorDescriptor_t b_desc, const void *b,
                                      const cnnlTensorDescriptor_t c_desc, void *c, void *workspace,
                                      size_t workspace_size);
cnnlStatus_t CNNL_WIN_API cnnlGetLogicOpWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t a_desc,
                                                      const cnnlTensorDescriptor_t b_desc,
                                                      const cnnlTensorDescriptor_t c_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlLogicOp(cnnlHandle_t handle, cnnlLogicOp_t logic_op,
                                      const cnnlTensorDescriptor_t a_desc, const void *a,
                                      const cnnlTensorDescriptor_t b_desc, const void *b, void *workspace,
                                      size_t workspace_size, const cnnlTensorDescriptor_t c_desc, void *c);

cnnlStatus_t CNNL_WIN_API cnnlAbs(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
                                  const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlNegTensor(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
                                        const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlSquare(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
                                     const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlReciprocal(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
                                         const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlFloor(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
                                    const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlCeil(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
                                   const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlRound(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
                                    const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlSign(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
                                   const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlExp_v2(cnnlHandle_t handle, cnnlComputationPreference_t prefer,
                                     const cnnlTensorDescriptor_t x_desc, const void *x,
                                     const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlLog_v2(cnnlHandle_t handle, cnnlComputationPreference_t prefer, cnnlLogBase_t base,
                                     const cnnlTensorDescriptor_t x_desc, const void *x,
                                     const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlSqrt_v2(cnnlHandle_t handle, cnnlComputationPreference_t prefer,
                                      const cnnlTensorDescriptor_t x_desc, const void *x,
                                      const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlRsqrt_v2(cnnlHandle_t handle, cnnlComputationPreference_t prefer,
                                       const cnnlTensorDescriptor_t x_desc, const void *x,
                                       const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlSin_v2(cnnlHandle_t handle, cnnlComputationPreference_t prefer,
                                     const cnnlTensorDescriptor_t x_desc, const void *x,
                                     const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlCos_v2(cnnlHandle_t handle, cnnlComputationPreference_t prefer,
                                     const cnnlTensorDescriptor_t x_desc, const void *x,
                                     const cnnlTensorDescriptor_t y_desc, void *y);

cnnlStatus_t CNNL_WIN_API cnnlFill_v3(cnnlHandle_t handle, cnnlPointerMode_t pointer_mode, const void *value,
                                      const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlCastDataType(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                           const void *input, cnnlCastDataType_t cast_type,
                                           const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetSelectV2WorkspaceSize(cnnlHandle_t handle,
                                                       const cnnlTensorDescriptor_t condition_desc,
                                                       const cnnlTensorDescriptor_t then_desc,
                                                       const cnnlTensorDescriptor_t else_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlSelectV2(cnnlHandle_t handle, const cnnlTensorDescriptor_t condition_desc,
                                       const void *condition, const cnnlTensorDescriptor_t then_desc,
                                       const void *then, const cnnlTensorDescriptor_t else_desc, const void *other,
                                       void *workspace, size_t workspace_size,
                                       const cnnlTensorDescriptor_t output_desc, void *output);

/* ==== activations ============================================================================================= */

cnnlStatus_t CNNL_WIN_API cnnlCreateActivationDescriptor(cnnlActivationDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyActivationDescriptor(cnnlActivationDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlSetActivationDescriptor(cnnlActivationDescriptor_t activation_desc,
                                                      cnnlActivationMode_t mode, cnnlNanPropagation_t nan,
                                                      float coef);
cnnlStatus_t CNNL_WIN_API cnnlSetActivationDescriptor_v2(cnnlActivationDescriptor_t activation_desc,
                                                         cnnlActivationMode_t mode,
                                                         cnnlActivationPreference_t prefer,
                                                         cnnlNanPropagation_t nan, float coef);
cnnlStatus_t CNNL_WIN_API cnnlSetActivationDescriptor_v3(cnnlActivationDescriptor_t activation_desc,
                                                         cnnlActivationMode_t mode,
                                                         cnnlActivationPreference_t prefer,
                                                         cnnlNanPropagation_t nan, float coef, int sliced_dim);
cnnlStatus_t CNNL_WIN_API cnnlSetActivationDescriptor_v4(cnnlActivationDescriptor_t activation_desc,
                                                         cnnlActivationMode_t mode,
                                                         cnnlActivationPreference_t prefer,
                                                         cnnlNanPropagation_t nan, float coef, int sliced_dim,
                                                         float gamma, float scale);
cnnlStatus_t CNNL_WIN_API cnnlSetActivationDescriptor_v5(cnnlActivationDescriptor_t activation_desc,
                                                         cnnlActivationMode_t mode,
                                                         cnnlActivationPreference_t prefer,
                                                         cnnlNanPropagation_t nan, float coef, int sliced_dim,
                                                         float gamma, float scale, bool is_result);
cnnlStatus_t CNNL_WIN_API cnnlSetActivationDescriptor_v6(cnnlActivationDescriptor_t activation_desc,
                                                         cnnlActivationMode_t mode,
                                                         cnnlActivationPreference_t prefer,
                                                         cnnlNanPropagation_t nan, float coef, int sliced_dim,
                                                         float gamma, float scale, bool is_result,
                                                         bool approximate);
cnnlStatus_t CNNL_WIN_API cnnlGetActivationDescriptor(const cnnlActivationDescriptor_t activation_desc,
                                                      cnnlActivationMode_t *mode, cnnlNanPropagation_t *nan,
                                                      float *coef);
cnnlStatus_t CNNL_WIN_API cnnlActivationForward(cnnlHandle_t handle,
                                                const cnnlActivationDescriptor_t activation_desc,
                                                const void *alpha, const cnnlTensorDescriptor_t x_desc,
                                                const void *x, const void *beta,
                                                const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlActivationBackward(cnnlHandle_t handle,
                                                 const cnnlActivationDescriptor_t activation_desc,
                                                 const void *alpha, const cnnlTensorDescriptor_t y_desc,
                                                 const void *y, const cnnlTensorDescriptor_t diff_y_desc,
                                                 const void *diff_y, const cnnlTensorDescriptor_t x_desc,
                                                 const void *x, const void *beta,
                                                 const cnnlTensorDescriptor_t diff_x_desc, void *diff_x);

/* ==== data movement =========================================================================================== */

cnnlStatus_t CNNL_WIN_API cnnlCopy(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc, const void *input,
                                   const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetCopyWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                                   const cnnlTensorDescriptor_t output_desc, size_t *workspace_size);
cnnlStatus_t CNNL_WIN_API cnnlCopy_v2(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                      const void *input, const cnnlTensorDescriptor_t output_desc, void *output,
                                      void *workspace, size_t workspace_size);
cnnlStatus_t CNNL_WIN_API cnnlExpand(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                     const void *input, const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlCreateTransposeDescriptor(cnnlTransposeDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyTransposeDescriptor(cnnlTransposeDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlSetTransposeDescriptor(cnnlTransposeDescriptor_t desc, const int dims,
                                                     const int permute[]);
cnnlStatus_t CNNL_WIN_API cnnlGetTransposeDescriptor(cnnlTransposeDescriptor_t desc, int *dims, int permute[]);
cnnlStatus_t CNNL_WIN_API cnnlGetTransposeWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc,
                                                        const cnnlTransposeDescriptor_t desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlTranspose(cnnlHandle_t handle, const cnnlTransposeDescriptor_t desc,
                                        const cnnlTensorDescriptor_t x_desc, const void *x,
                                        const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlTranspose_v2(cnnlHandle_t handle, const cnnlTransposeDescriptor_t desc,
                                           const cnnlTensorDescriptor_t x_desc, const void *x,
                                           const cnnlTensorDescriptor_t y_desc, void *y, void *workspace,
                                           size_t workspace_size);
cnnlStatus_t CNNL_WIN_API cnnlGetConcatWorkspaceSize(cnnlHandle_t handle, const int concat_num, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlConcat(cnnlHandle_t handle, const int concat_num, const int axis,
                                     const cnnlTensorDescriptor_t inputs_desc[], const void *const inputs[],
                                     void *workspace, size_t workspace_size,
                                     const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetSplitWorkspaceSize(cnnlHandle_t handle, const int split_num, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlSplit(cnnlHandle_t handle, const int split_num, const int axis,
                                    const cnnlTensorDescriptor_t input_desc, const void *input, void *workspace,
                                    size_t workspace_size, const cnnlTensorDescriptor_t outputs_desc[],
                                    void *outputs[]);
/* begin, end and stride hold one value per dimension of the input. */
cnnlStatus_t CNNL_WIN_API cnnlStridedSlice(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                           const void *input, const int begin[], const int end[],
                                           const int stride[], const cnnlTensorDescriptor_t output_desc,
                                           void *output);

/* ==== reductions, scans, top-k ================================================================================ */

cnnlStatus_t CNNL_WIN_API cnnlCreateReduceDescriptor(cnnlReduceDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyReduceDescriptor(cnnlReduceDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlSetReduceDescriptor(cnnlReduceDescriptor_t reduce_desc, int axis[], int axis_num,
                                                  cnnlReduceOp_t reduce_op, cnnlDataType_t tensor_type,
                                                  cnnlNanPropagation_t nan, cnnlReduceIndices_t indices,
                                                  cnnlIndicesType_t indices_type);
cnnlStatus_t CNNL_WIN_API cnnlSetReduceDescriptor_v2(cnnlReduceDescriptor_t reduce_desc, int axis[],
                                                     int axis_num, cnnlReduceOp_t reduce_op,
                                                     cnnlDataType_t tensor_type, cnnlNanPropagation_t nan,
                                                     cnnlReduceIndices_t indices, cnnlIndicesType_t indices_type,
                                                     float p);
cnnlStatus_t CNNL_WIN_API cnnlGetReduceOpWorkspaceSize(cnnlHandle_t handle,
                                                       const cnnlTensorDescriptor_t input_desc,
                                                       const cnnlTensorDescriptor_t output_desc,
                                                       const cnnlReduceDescriptor_t reduce_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlReduce(cnnlHandle_t handle, const cnnlReduceDescriptor_t reduce_desc,
                                     void *workspace, size_t workspace_size, const void *alpha,
                                     const cnnlTensorDescriptor_t input_desc, const void *input,
                                     const size_t indices_size_inbytes, void *indices, const void *beta,
                                     const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetCumsumWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                                     const int axis, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlCumsum(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                     const void *input, const int axis, const bool exclusive, const bool reverse,
                                     const cnnlNanPropagation_t nan_propagation,
                                     const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetTopKTensorWorkspaceSize(cnnlHandle_t handle,
                                                         const cnnlTensorDescriptor_t input_desc, const int k,
                                                         const int dim, const bool largest,
                                                         const cnnlTensorDescriptor_t values_desc,
                                                         const cnnlTensorDescriptor_t indices_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlTopKTensor_v3(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                            const void *input, const int k, const int dim, const bool largest,
                                            const bool sorted, const bool lower_index_first, void *workspace,
                                            size_t workspace_size, const cnnlTensorDescriptor_t values_desc,
                                            void *values, const cnnlTensorDescriptor_t indices_desc,
                                            void *indices);

/* ==== matrix multiplication =================================================================================== */

cnnlStatus_t CNNL_WIN_API cnnlMatMul(cnnlHandle_t handle, const bool is_trans_a, const bool is_trans_b,
                                     const void *alpha, const cnnlTensorDescriptor_t a_desc, const void *a,
                                     const cnnlTensorDescriptor_t b_desc, const void *b, const void *beta,
                                     const cnnlTensorDescriptor_t c_desc, void *c);
cnnlStatus_t CNNL_WIN_API cnnlMatMulDescCreate(cnnlMatMulDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlMatMulDescDestroy(cnnlMatMulDescriptor_t desc);
/* value points to an integer of size_in_bytes (1, 2, 4 or 8) bytes. */
cnnlStatus_t CNNL_WIN_API cnnlSetMatMulDescAttr(cnnlMatMulDescriptor_t matmul_desc,
                                                cnnlMatMulDescAttribute_t attr, const void *value,
                                                size_t size_in_bytes);
cnnlStatus_t CNNL_WIN_API cnnlGetMatMulDescAttr(const cnnlMatMulDescriptor_t matmul_desc,
                                                cnnlMatMulDescAttribute_t attr, void *buf, size_t size_in_bytes,
                                                size_t *size_written);
cnnlStatus_t CNNL_WIN_API cnnlMatMulAlgoCreate(cnnlMatMulAlgo_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlMatMulAlgoDestroy(cnnlMatMulAlgo_t desc);
/* The newer names of the four above. */
cnnlStatus_t CNNL_WIN_API cnnlCreateMatMulDescriptor(cnnlMatMulDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyMatMulDescriptor(cnnlMatMulDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlCreateMatMulAlgo(cnnlMatMulAlgo_t *algo);
cnnlStatus_t CNNL_WIN_API cnnlDestroyMatMulAlgo(cnnlMatMulAlgo_t algo);
cnnlStatus_t CNNL_WIN_API cnnlCreateMatMulHeuristicResult(cnnlMatMulHeuristicResult_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyMatMulHeuristicResult(cnnlMatMulHeuristicResult_t desc);
/* result_array holds requested_algo_count results. */
cnnlStatus_t CNNL_WIN_API cnnlGetMatMulAlgoHeuristic(cnnlHandle_t handle, const cnnlMatMulDescriptor_t matmul_desc,
                                                     const cnnlTensorDescriptor_t a_desc,
                                                     const cnnlTensorDescriptor_t b_desc,
                                                     const cnnlTensorDescriptor_t c_desc,
                                                     const cnnlTensorDescriptor_t d_desc,
                                                     const cnnlMatMulPrefer_t preference, int requested_algo_count,
                                                     cnnlMatMulHeuristicResult_t result_array[],
                                                     int *return_algo_count);
cnnlStatus_t CNNL_WIN_API cnnlGetMatMulHeuristicResult(cnnlMatMulHeuristicResult_t result, cnnlMatMulAlgo_t algo,
                                                       size_t *workspace_size);
cnnlStatus_t CNNL_WIN_API cnnlMatMul_v2(cnnlHandle_t handle, const cnnlMatMulDescriptor_t matmul_desc,
                                        const cnnlMatMulAlgo_t algo, const void *alpha,
                                        const cnnlTensorDescriptor_t a_desc, const void *a,
                                        const cnnlTensorDescriptor_t b_desc, const void *b, const void *beta,
                                        const cnnlTensorDescriptor_t c_desc, void *c, void *workspace,
                                        size_t workspace_size, const cnnlTensorDescriptor_t d_desc, void *d);
cnnlStatus_t CNNL_WIN_API cnnlGetBatchMatMulBCastWorkspaceSize(cnnlHandle_t handle,
                                                               const cnnlTensorDescriptor_t a_desc,
                                                               const cnnlTensorDescriptor_t b_desc,
                                                               const cnnlTensorDescriptor_t c_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlBatchMatMulBCast(cnnlHandle_t handle, const bool is_trans_a, const bool is_trans_b,
                                               const cnnlTensorDescriptor_t a_desc, const void *a,
                                               const cnnlTensorDescriptor_t b_desc, const void *b,
                                               void *workspace, size_t workspace_size,
                                               const cnnlTensorDescriptor_t c_desc, void *c);
/* The batched forms take a matmul descriptor, algorithm and heuristic results of the cnnlMatMul kind. */
cnnlStatus_t CNNL_WIN_API cnnlGetBatchMatMulAlgoHeuristic(cnnlHandle_t handle,
                                                          const cnnlMatMulDescriptor_t bmm_desc,
                                                          const cnnlTensorDescriptor_t a_desc,
                                                          const cnnlTensorDescriptor_t b_desc,
                                                          const cnnlTensorDescriptor_t c_desc,
                                                          const cnnlMatMulPrefer_t preference,
                                                          int requested_algo_count,
                                                          cnnlMatMulHeuristicResult_t result_array[],
                                                          int *return_algo_count);
cnnlStatus_t CNNL_WIN_API cnnlGetBatchMatMulHeuristicResult(cnnlMatMulHeuristicResult_t result,
                                                            cnnlMatMulAlgo_t algo, size_t *workspace_size);
cnnlStatus_t CNNL_WIN_API cnnlBatchMatMulBCast_v2(cnnlHandle_t handle, const cnnlMatMulDescriptor_t bmm_desc,
                                                  const cnnlMatMulAlgo_t algo, const void *alpha,
                                                  const cnnlTensorDescriptor_t a_desc, const void *a,
                                                  const cnnlTensorDescriptor_t b_desc, const void *b,
                                                  const void *beta, const cnnlTensorDescriptor_t c_desc, void *c,
                                                  void *workspace, size_t workspace_size);

/* ==== convolution ============================================================================================= */

cnnlStatus_t CNNL_WIN_API cnnlCreateConvolutionDescriptor(cnnlConvolutionDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyConvolutionDescriptor(cnnlConvolutionDescriptor_t desc);
/* dimNb is the tensors' rank (4 or 5); pad holds 2 * (dimNb - 2) values (top, bottom, left, right for 2-D),
 * stride and dilation dimNb - 2. */
cnnlStatus_t CNNL_WIN_API cnnlSetConvolutionDescriptor(cnnlConvolutionDescriptor_t conv_desc, int dimNb,
                                                       const int pad[], const int stride[], const int dilation[],
                                                       int group_count, cnnlDataType_t compute_type);
cnnlStatus_t CNNL_WIN_API cnnlGetConvolutionForwardAlgorithm(cnnlHandle_t handle,
                                                             const cnnlConvolutionDescriptor_t conv_desc,
                                                             const cnnlTensorDescriptor_t x_desc,
                                                             const cnnlTensorDescriptor_t w_desc,
                                                             const cnnlTensorDescriptor_t y_desc,
                                                             const cnnlConvolutionFwdPreference_t preference,
                                                             cnnlConvolutionForwardAlgo_t *algo);
cnnlStatus_t CNNL_WIN_API cnnlGetConvolutionForwardWorkspaceSize(cnnlHandle_t handle,
                                                                 const cnnlTensorDescriptor_t x_desc,
                                                                 const cnnlTensorDescriptor_t w_desc,
                                                                 const cnnlTensorDescriptor_t y_desc,
                                                                 const cnnlTensorDescriptor_t bias_desc,
                                                                 const cnnlConvolutionDescriptor_t conv_desc,
                                                                 const cnnlConvolutionForwardAlgo_t algo,
                                                                 size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlConvolutionForward(cnnlHandle_t handle, const cnnlConvolutionDescriptor_t conv_desc,
                                                 const cnnlConvolutionForwardAlgo_t algo, const void *alpha,
                                                 const cnnlTensorDescriptor_t x_desc, const void *x,
                                                 const cnnlTensorDescriptor_t w_desc, const void *w,
                                                 const cnnlTensorDescriptor_t bias_desc, const void *bias,
                                                 void *workspace, size_t workspace_size, const void *beta,
                                                 const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlGetConvolutionBackwardDataAlgorithm(
    cnnlHandle_t handle, const cnnlTensorDescriptor_t w_desc, const cnnlTensorDescriptor_t dy_desc,
    const cnnlConvolutionDescriptor_t conv_desc, const cnnlTensorDescriptor_t dx_desc,
    const cnnlConvolutionBwdDataPreference_t preference, cnnlConvolutionBwdDataAlgo_t *algo);
cnnlStatus_t CNNL_WIN_API cnnlGetConvolutionBackwardDataWorkspaceSize(
    cnnlHandle_t handle, const cnnlTensorDescriptor_t w_desc, const cnnlTensorDescriptor_t dy_desc,
    const cnnlConvolutionDescriptor_t conv_desc, const cnnlTensorDescriptor_t dx_desc,
    const cnnlConvolutionBwdDataAlgo_t algo, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlConvolutionBackwardData(
    cnnlHandle_t handle, const void *alpha, const cnnlTensorDescriptor_t w_desc, const void *w,
    const cnnlTensorDescriptor_t dy_desc, const void *dy, const cnnlConvolutionDescriptor_t conv_desc,
    const cnnlConvolutionBwdDataAlgo_t algo, void *workspace, size_t workspace_size, const void *beta,
    const cnnlTensorDescriptor_t dx_desc, void *dx);
cnnlStatus_t CNNL_WIN_API cnnlGetConvolutionBackwardFilterAlgorithm(
    cnnlHandle_t handle, const cnnlConvolutionDescriptor_t conv_desc, const cnnlTensorDescriptor_t x_desc,
    const cnnlTensorDescriptor_t dy_desc, const cnnlTensorDescriptor_t dw_desc,
    const cnnlConvolutionBwdFilterPreference_t preference, cnnlConvolutionBwdFilterAlgo_t *algo);
cnnlStatus_t CNNL_WIN_API cnnlGetConvolutionBackwardFilterWorkspaceSize(
    cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const cnnlTensorDescriptor_t dy_desc,
    const cnnlTensorDescriptor_t dw_desc, const cnnlConvolutionDescriptor_t conv_desc,
    const cnnlConvolutionBwdFilterAlgo_t algo, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlConvolutionBackwardFilter(
    cnnlHandle_t handle, const void *alpha, const cnnlTensorDescriptor_t x_desc, const void *x,
    const cnnlTensorDescriptor_t dy_desc, const void *dy, const cnnlConvolutionDescriptor_t conv_desc,
    const cnnlConvolutionBwdFilterAlgo_t algo, void *workspace, size_t workspace_size, const void *beta,
    const cnnlTensorDescriptor_t dw_desc, void *dw);

/* ==== pooling ================================================================================================= */

cnnlStatus_t CNNL_WIN_API cnnlCreatePoolingDescriptor(cnnlPoolingDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyPoolingDescriptor(cnnlPoolingDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlSetPooling2dDescriptor(cnnlPoolingDescriptor_t pooling_desc, cnnlPoolingMode_t mode,
                                                     cnnlNanPropagation_t maxpooling_nan_opt, int window_height,
                                                     int window_width, int top_padding, int bottom_padding,
                                                     int left_padding, int right_padding, int vertical_stride,
                                                     int horizon_stride);
cnnlStatus_t CNNL_WIN_API cnnlSetPooling2dDescriptor_v2(cnnlPoolingDescriptor_t pooling_desc,
                                                        cnnlPoolingMode_t mode,
                                                        cnnlNanPropagation_t maxpooling_nan_opt,
                                                        int window_height, int window_width, int top_padding,
                                                        int bottom_padding, int left_padding, int right_padding,
                                                        int vertical_stride, int horizon_stride, int dilation_h,
                                                        int dilation_w, bool ceil_mode);
cnnlStatus_t CNNL_WIN_API cnnlGetPoolingWorkspaceSize(cnnlHandle_t handle, cnnlPoolingMode_t mode, int output_w,
                                                      int output_h, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlGetPoolingWithIndexWorkspaceSize(cnnlHandle_t handle,
                                                               const cnnlTensorDescriptor_t x_desc,
                                                               const cnnlTensorDescriptor_t y_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlPoolingForward(cnnlHandle_t handle, const cnnlPoolingDescriptor_t pooling_desc,
                                             const void *alpha, const cnnlTensorDescriptor_t x_desc,
                                             const void *x, const void *beta, const cnnlTensorDescriptor_t y_desc,
                                             void *y, void *workspace, size_t workspace_size);
/* extra_device_input must be NULL: the simulator needs no precomputed divisors. */
cnnlStatus_t CNNL_WIN_API cnnlPoolingForward_v2(cnnlHandle_t handle, const cnnlPoolingDescriptor_t pooling_desc,
                                                const void *alpha, const cnnlTensorDescriptor_t x_desc,
                                                const void *x, const void *beta, const void *extra_device_input,
                                                const cnnlTensorDescriptor_t y_desc, void *y, void *workspace,
                                                size_t workspace_size);
cnnlStatus_t CNNL_WIN_API cnnlPoolingForwardWithIndex(cnnlHandle_t handle,
                                                      const cnnlPoolingDescriptor_t pooling_desc,
                                                      const void *alpha, const cnnlTensorDescriptor_t x_desc,
                                                      const void *x, const void *beta,
                                                      const cnnlTensorDescriptor_t y_desc, void *y,
                                                      const cnnlTensorDescriptor_t index_desc, void *index,
                                                      void *workspace, size_t workspace_size);
cnnlStatus_t CNNL_WIN_API cnnlPoolingBackward(cnnlHandle_t handle, const cnnlPoolingDescriptor_t pooling_desc,
                                              const void *alpha, const cnnlTensorDescriptor_t y_desc,
                                              const void *y, const cnnlTensorDescriptor_t diff_y_desc,
                                              const void *diff_y, const cnnlTensorDescriptor_t x_desc,
                                              const void *x, const void *beta,
                                              const cnnlTensorDescriptor_t diff_x_desc, void *diff_x);
cnnlStatus_t CNNL_WIN_API cnnlGetAdaptivePoolingForwardWorkspaceSize(cnnlHandle_t handle,
                                                                     const cnnlTensorDescriptor_t input_desc,
                                                                     const cnnlPoolingMode_t mode,
                                                                     const cnnlTensorDescriptor_t output_desc,
                                                                     size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlAdaptivePoolingForward(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                                     const void *input, const cnnlPoolingMode_t mode,
                                                     const cnnlTensorDescriptor_t output_desc, void *output,
                                                     const cnnlTensorDescriptor_t index_desc, void *index);
cnnlStatus_t CNNL_WIN_API cnnlAdaptivePoolingForward_v2(cnnlHandle_t handle,
                                                        const cnnlTensorDescriptor_t input_desc,
                                                        const void *input, const cnnlPoolingMode_t mode,
                                                        void *workspace, size_t workspace_size,
                                                        const cnnlTensorDescriptor_t output_desc, void *output,
                                                        const cnnlTensorDescriptor_t index_desc, void *index);
cnnlStatus_t CNNL_WIN_API cnnlAdaptivePoolingBackward(cnnlHandle_t handle, const cnnlTensorDescriptor_t y_desc,
                                                      const void *y, const cnnlTensorDescriptor_t index_desc,
                                                      const void *index, const cnnlPoolingMode_t mode,
                                                      const cnnlTensorDescriptor_t dx_desc, void *dx);

/* ==== softmax ================================================================================================= */

cnnlStatus_t CNNL_WIN_API cnnlSoftmaxForward(cnnlHandle_t handle, cnnlSoftmaxAlgorithm_t algorithm,
                                             cnnlSoftmaxMode_t mode, const void *alpha,
                                             const cnnlTensorDescriptor_t x_desc, const void *x, const void *beta,
                                             const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlSoftmaxForward_v2(cnnlHandle_t handle, cnnlSoftmaxAlgorithm_t algorithm,
                                                cnnlSoftmaxMode_t mode, cnnlComputationPreference_t prefer,
                                                const void *alpha, const cnnlTensorDescriptor_t x_desc,
                                                const void *x, const void *beta,
                                                const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlSoftmaxBackward(cnnlHandle_t handle, cnnlSoftmaxAlgorithm_t algorithm,
                                              cnnlSoftmaxMode_t mode, const void *alpha,
                                              const cnnlTensorDescriptor_t y_desc, const void *y,
                                              const cnnlTensorDescriptor_t diff_y_desc, const void *diff_y,
                                              const void *beta, const cnnlTensorDescriptor_t diff_x_desc,
                                              void *diff_x);

/* ==== normalisation =========================================================================================== */

cnnlStatus_t CNNL_WIN_API cnnlGetBatchNormForwardWorkspaceSize(cnnlHandle_t handle,
                                                               const cnnlTensorDescriptor_t x_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlBatchNormForwardTraining(
    cnnlHandle_t handle, const void *alpha, const void *beta, const cnnlTensorDescriptor_t x_desc, const void *x,
    const cnnlTensorDescriptor_t wbmv_desc, const void *weight, const void *bias, void *mov_mean, void *mov_var,
    float eps, float momentum, const cnnlTensorDescriptor_t y_desc, void *y, void *save_mean, void *save_std);
cnnlStatus_t CNNL_WIN_API cnnlBatchNormForwardTraining_v2(
    cnnlHandle_t handle, const cnnlActivationDescriptor_t activation_desc, const cnnlBatchNormMode_t mode,
    const cnnlBatchNormOps_t bnOps, const void *alpha, const void *beta, const cnnlTensorDescriptor_t x_desc,
    const void *x, const cnnlTensorDescriptor_t z_desc, const void *z, const cnnlTensorDescriptor_t wbmv_desc,
    const void *weight, const void *bias, void *mov_mean, void *mov_var, const float eps, const float momentum,
    const cnnlTensorDescriptor_t y_desc, void *y, void *save_mean, void *save_std, void *workspace,
    size_t workspace_size, void *reserve_space, size_t reserve_space_size);
cnnlStatus_t CNNL_WIN_API cnnlBatchNormForwardInference(
    cnnlHandle_t handle, const void *alpha, const void *beta, const cnnlTensorDescriptor_t x_desc, const void *x,
    const cnnlTensorDescriptor_t wbmv_desc, const void *weight, const void *bias, const void *mov_mean,
    const void *mov_var, float eps, const cnnlTensorDescriptor_t z_desc, void *z);
cnnlStatus_t CNNL_WIN_API cnnlGetBatchNormBackwardWorkspaceSize(cnnlHandle_t handle,
                                                                const cnnlTensorDescriptor_t x_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlBatchNormBackward(
    cnnlHandle_t handle, const void *alpha_data_diff, const void *beta_data_diff, const void *alpha_param_diff,
    const void *beta_param_diff, const cnnlTensorDescriptor_t x_desc, const void *x,
    const cnnlTensorDescriptor_t diff_z_desc, const void *diff_z, const cnnlTensorDescriptor_t wbmv_desc,
    const void *weight, const void *saved_mean, const void *saved_invstd, float eps,
    const cnnlTensorDescriptor_t diff_x_desc, void *diff_x, void *diff_weight, void *diff_bias);
cnnlStatus_t CNNL_WIN_API cnnlBatchNormBackward_v2(
    cnnlHandle_t handle, const cnnlActivationDescriptor_t activation_desc, const cnnlBatchNormMode_t mode,
    const cnnlBatchNormOps_t bnOps, const void *alpha_data_diff, const void *beta_data_diff,
    const void *alpha_param_diff, const void *beta_param_diff, const cnnlTensorDescriptor_t x_desc, const void *x,
    const cnnlTensorDescriptor_t y_desc, const void *y, const cnnlTensorDescriptor_t diff_y_desc,
    const void *diff_y, const cnnlTensorDescriptor_t wbmv_desc, const void *weight, const void *bias,
    const void *saved_mean, const void *saved_invstd, const float eps, const cnnlTensorDescriptor_t diff_z_desc,
    void *diff_z, const cnnlTensorDescriptor_t diff_x_desc, void *diff_x, void *diff_weight, void *diff_bias,
    void *workspace, size_t workspace_size, void *reserve_space, size_t reserve_space_size);

cnnlStatus_t CNNL_WIN_API cnnlGetLayerNormOpWorkspaceSize(cnnlHandle_t handle, int axis,
                                                          const cnnlTensorDescriptor_t x_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlLayerNormForward(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc,
                                               const void *x, int axis, const cnnlTensorDescriptor_t wb_desc,
                                               const void *weight, const void *bias, float eps, void *workspace,
                                               size_t workspace_size, const cnnlTensorDescriptor_t y_desc, void *y,
                                               const cnnlTensorDescriptor_t mean_rstd_desc, void *saved_mean,
                                               void *saved_rstd);
cnnlStatus_t CNNL_WIN_API cnnlGetLayerNormBackwardWorkspaceSize(cnnlHandle_t handle,
                                                                const cnnlTensorDescriptor_t x_desc, int axis,
                                                                size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlLayerNormBackward_v2(
    cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x, int axis,
    const cnnlTensorDescriptor_t diff_z_desc, const void *diff_z, const cnnlTensorDescriptor_t wb_desc,
    const void *weight, const cnnlTensorDescriptor_t mean_rstd_desc, const void *saved_mean,
    const void *saved_rstd, void *workspace, size_t workspace_size, const cnnlTensorDescriptor_t diff_x_desc,
    void *diff_x, void *diff_weight, void *diff_bias);
cnnlStatus_t CNNL_WIN_API cnnlGetRmsNormOpWorkspaceSize(cnnlHandle_t handle, int axis,
                                                        const cnnlTensorDescriptor_t x_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlRmsNormForward(cnnlHandle_t handle, int axis, const cnnlTensorDescriptor_t x_desc,
                                             const void *x, const cnnlTensorDescriptor_t wb_desc,
                                             const void *weight, const void *bias, float eps, void *workspace,
                                             size_t workspace_size, const cnnlTensorDescriptor_t y_desc, void *y,
                                             const cnnlTensorDescriptor_t rms_desc, void *rms);
cnnlStatus_t CNNL_WIN_API cnnlGetRmsNormBackwardWorkspaceSize(cnnlHandle_t handle,
                                                              const cnnlTensorDescriptor_t x_desc, int axis,
                                                              size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlRmsNormBackward(cnnlHandle_t handle, int axis, const cnnlTensorDescriptor_t x_desc,
                                              const void *x, const cnnlTensorDescriptor_t diff_z_desc,
                                              const void *diff_z, const cnnlTensorDescriptor_t wb_desc,
                                              const void *weight, const cnnlTensorDescriptor_t rms_desc,
                                              const void *rms, void *workspace, size_t workspace_size,
                                              const cnnlTensorDescriptor_t diff_x_desc, void *diff_x,
                                              const cnnlTensorDescriptor_t diff_wb_desc, void *diff_weight,
                                              void *diff_bias);
cnnlStatus_t CNNL_WIN_API cnnlGetGroupNormForwardWorkspaceSize(cnnlHandle_t handle, int num_groups,
                                                               const cnnlTensorDescriptor_t x_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlGroupNormForward_v3(
    cnnlHandle_t handle, float eps, int num_groups, const cnnlTensorDescriptor_t x_desc, const void *x,
    const cnnlTensorDescriptor_t scale_bias_desc, const void *scale, const void *bias, void *workspace,
    size_t workspace_size, const cnnlTensorDescriptor_t y_desc, void *y,
    const cnnlTensorDescriptor_t mean_rstd_desc, void *mean, void *rstd);
cnnlStatus_t CNNL_WIN_API cnnlGetGroupNormBackwardWorkspaceSize(cnnlHandle_t handle, int batch_channels,
                                                                size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlGroupNormBackward(
    cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
    const cnnlTensorDescriptor_t diff_z_desc, const void *diff_z, const cnnlTensorDescriptor_t gamma_desc,
    const void *gamma, const cnnlTensorDescriptor_t mean_desc, const void *mean,
    const cnnlTensorDescriptor_t rstd_desc, const void *rstd, int groups, const cnnlTensorDescriptor_t diff_x_desc,
    void *diff_x, const cnnlTensorDescriptor_t diff_scale_desc, void *diff_scale,
    const cnnlTensorDescriptor_t diff_bias_desc, void *diff_bias, void *workspace, size_t workspace_size);

/* ==== indexing ================================================================================================ */

cnnlStatus_t CNNL_WIN_API cnnlIndexSelect(cnnlHandle_t handle, int dim, const cnnlTensorDescriptor_t x_desc,
                                          const void *x, const cnnlTensorDescriptor_t index_desc,
                                          const void *index, const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlGather(cnnlHandle_t handle, int dim, const cnnlTensorDescriptor_t x_desc,
                                     const void *x, const cnnlTensorDescriptor_t index_desc, const void *index,
                                     const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlScatter(cnnlHandle_t handle, int dim, const cnnlTensorDescriptor_t input_desc,
                                      const void *input, const cnnlTensorDescriptor_t index_desc,
                                      const void *index, const cnnlTensorDescriptor_t src_desc, const void *src,
                                      const cnnlTensorDescriptor_t output_desc, void *output,
                                      cnnlScatterMode_t mode);
/* max_norm and norm_type must be NULL (renormalising rows is not supported). */
cnnlStatus_t CNNL_WIN_API cnnlEmbeddingForward_v2(cnnlHandle_t handle, const cnnlTensorDescriptor_t weight_desc,
                                                  const void *weight, const cnnlTensorDescriptor_t indices_desc,
                                                  const void *indices, int padding_idx, const float *max_norm,
                                                  const float *norm_type, const cnnlTensorDescriptor_t output_desc,
                                                  void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetEmbeddingBackwardWorkspaceSize(cnnlHandle_t handle,
                                                                const cnnlTensorDescriptor_t diff_desc,
                                                                const cnnlTensorDescriptor_t output_desc,
                                                                bool scale_grad_by_freq, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlEmbeddingBackward(cnnlHandle_t handle, int padding_idx, bool scale_grad_by_freq,
                                                const cnnlTensorDescriptor_t indices_desc, const void *indices,
                                                const cnnlTensorDescriptor_t diff_desc, const void *diff,
                                                void *workspace, size_t workspace_size,
                                                const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetMaskedWorkspaceSize(cnnlHandle_t handle, cnnlMaskedOp_t masked_op,
                                                     const cnnlTensorDescriptor_t input_desc,
                                                     const cnnlTensorDescriptor_t mask_desc,
                                                     const cnnlTensorDescriptor_t value_desc,
                                                     const cnnlTensorDescriptor_t output_desc, size_t *size);
/* number: a device pointer to one int32 that receives the count of selected elements (MASKED_SELECT). */
cnnlStatus_t CNNL_WIN_API cnnlMasked_v3(cnnlHandle_t handle, cnnlMaskedOp_t masked_op,
                                        const cnnlTensorDescriptor_t input_desc, const void *input,
                                        const cnnlTensorDescriptor_t mask_desc, const void *mask,
                                        const cnnlTensorDescriptor_t value_desc, const void *value,
                                        void *workspace, size_t workspace_size,
                                        const cnnlTensorDescriptor_t output_desc, void *output, uint32_t *number);
cnnlStatus_t CNNL_WIN_API cnnlGetIndexPutWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                                       const cnnlTensorDescriptor_t indices_descs[],
                                                       int indices_num, const cnnlTensorDescriptor_t value_desc,
                                                       bool accumulate, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlIndexPut(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                       const void *input, const cnnlTensorDescriptor_t indices_descs[],
                                       const void *const indices[], int indices_num,
                                       const cnnlTensorDescriptor_t value_desc, const void *value,
                                       void *workspace, size_t workspace_size, bool accumulate, bool inplace,
                                       const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlNumTrue_v2(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
                                         const cnnlTensorDescriptor_t num_true_desc, void *num_true);
cnnlStatus_t CNNL_WIN_API cnnlGetWhereWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t num_true_desc,
                                                    size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlWhere_v2(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
                                       const cnnlTensorDescriptor_t num_true_desc, const void *num_true,
                                       const bool as_tuple, void *workspace, size_t workspace_size,
                                       const cnnlTensorDescriptor_t y_desc, void *y);

/* ==== random numbers ========================================================================================== */

cnnlStatus_t CNNL_WIN_API cnnlRandCreateGenerator(cnnlRandGenerator_t *generator, cnnlRandRngType_t rng_type);
cnnlStatus_t CNNL_WIN_API cnnlRandDestroyGenerator(cnnlRandGenerator_t generator);
cnnlStatus_t CNNL_WIN_API cnnlRandSetPseudoRandomGeneratorSeed(cnnlRandGenerator_t generator,
                                                               unsigned long long seed);
/* The offset, in Philox counter steps (names of mlusim's choice: CNNL's offset functions are not public). */
cnnlStatus_t CNNL_WIN_API cnnlRandSetPseudoRandomGeneratorOffset(cnnlRandGenerator_t generator, uint64_t offset);
cnnlStatus_t CNNL_WIN_API cnnlRandGetPseudoRandomGeneratorOffset(cnnlRandGenerator_t generator, uint64_t *offset);
cnnlStatus_t CNNL_WIN_API cnnlRandGetMTGP32StateSize(cnnlRandGenerator_t generator, size_t *size);
/* params and kernel_params must be NULL. */
cnnlStatus_t CNNL_WIN_API cnnlRandMakeMTGP32KernelState(cnnlHandle_t handle, void *state, const void *params,
                                                        const void *kernel_params, int seed);
cnnlStatus_t CNNL_WIN_API cnnlRandGenerateUniform(cnnlHandle_t handle, cnnlRandGenerator_t generator,
                                                  cnnlDataType_t dtype, void *state, size_t num, float min,
                                                  float max, void *output);
cnnlStatus_t CNNL_WIN_API cnnlRandGenerateNormal(cnnlHandle_t handle, cnnlRandGenerator_t generator,
                                                 cnnlDataType_t dtype, void *state, size_t num, float mean,
                                                 float std, void *output);
cnnlStatus_t CNNL_WIN_API cnnlFusedDropout_v2(cnnlHandle_t handle, cnnlRandGenerator_t generator,
                                              const cnnlTensorDescriptor_t input_desc, const void *input, float p,
                                              void *state, const cnnlTensorDescriptor_t mask_desc, void *mask,
                                              const cnnlTensorDescriptor_t output_desc, void *output);

/* ==== losses ================================================================================================== */

cnnlStatus_t CNNL_WIN_API cnnlGetNlllossWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc,
                                                      size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlNlllossForward(cnnlHandle_t handle, cnnlNlllossAlgorithm_t algorithm,
                                             void *workspace, size_t workspace_size,
                                             const cnnlTensorDescriptor_t x_desc, const void *x,
                                             const cnnlTensorDescriptor_t t_desc, const void *target,
                                             int ignore_index, const cnnlTensorDescriptor_t w_desc,
                                             const void *filter, const cnnlTensorDescriptor_t tf_desc,
                                             void *total_filter, const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlNlllossBackward(cnnlHandle_t handle, cnnlNlllossAlgorithm_t algorithm,
                                              const cnnlTensorDescriptor_t diff_y_desc, const void *diff_y,
                                              const cnnlTensorDescriptor_t t_desc, const void *target,
                                              int ignore_index, const cnnlTensorDescriptor_t w_desc,
                                              const void *filter, const cnnlTensorDescriptor_t tf_desc,
                                              const void *total_filter, const cnnlTensorDescriptor_t diff_x_desc,
                                              void *diff_x);
cnnlStatus_t CNNL_WIN_API cnnlMSELoss(cnnlHandle_t handle, cnnlMSELossReduction_t reduction,
                                      const cnnlTensorDescriptor_t input_desc, const void *input,
                                      const cnnlTensorDescriptor_t target_desc, const void *target,
                                      const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlMSELossBackward(cnnlHandle_t handle, cnnlMSELossReduction_t reduction,
                                              const cnnlTensorDescriptor_t input_desc, const void *input,
                                              const cnnlTensorDescriptor_t target_desc, const void *target,
                                              const cnnlTensorDescriptor_t grad_desc, const void *grad,
                                              const cnnlTensorDescriptor_t diff_input_desc, void *diff_input);
cnnlStatus_t CNNL_WIN_API cnnlGetBceLossWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                                      const cnnlTensorDescriptor_t weight_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlBceLoss(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                      const void *input, const cnnlTensorDescriptor_t target_desc,
                                      const void *target, const cnnlTensorDescriptor_t weight_desc,
                                      const void *weight, const cnnlBceLossReduction_t reduction, void *workspace,
                                      const size_t workspace_size, const cnnlTensorDescriptor_t output_desc,
                                      void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetBceLossBackwardWorkspaceSize(cnnlHandle_t handle,
                                                              const cnnlTensorDescriptor_t target_desc,
                                                              const cnnlTensorDescriptor_t weight_desc,
                                                              size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlBceLossBackward(cnnlHandle_t handle, const cnnlTensorDescriptor_t grad_desc,
                                              const void *grad, const cnnlTensorDescriptor_t input_desc,
                                              const void *input, const cnnlTensorDescriptor_t target_desc,
                                              const void *target, const cnnlTensorDescriptor_t weight_desc,
                                              const void *weight, const cnnlBceLossReduction_t reduction,
                                              void *workspace, const size_t workspace_size,
                                              const cnnlTensorDescriptor_t diff_input_desc, void *diff_input);
cnnlStatus_t CNNL_WIN_API cnnlGetBceWithLogitsWorkspaceSize(cnnlHandle_t handle,
                                                            const cnnlTensorDescriptor_t input_desc,
                                                            const cnnlTensorDescriptor_t weight_desc,
                                                            const cnnlTensorDescriptor_t pos_weight_desc,
                                                            size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlBceWithLogits_v2(cnnlHandle_t handle, const cnnlComputationPreference_t prefer,
                                               const cnnlTensorDescriptor_t input_desc, const void *input,
                                               const cnnlTensorDescriptor_t target_desc, const void *target,
                                               const cnnlTensorDescriptor_t weight_desc, const void *weight,
                                               const cnnlTensorDescriptor_t pos_weight_desc,
                                               const void *pos_weight, const cnnlBceWithLogitsReduction_t reduction,
                                               void *workspace, const size_t workspace_size,
                                               const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetBceWithLogitsBackwardWorkspaceSize(cnnlHandle_t handle,
                                                                    const cnnlTensorDescriptor_t target_desc,
                                                                    const cnnlTensorDescriptor_t weight_desc,
                                                                    const cnnlTensorDescriptor_t pos_weight_desc,
                                                                    size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlBceWithLogitsBackward(
    cnnlHandle_t handle, const cnnlTensorDescriptor_t grad_desc, const void *grad,
    const cnnlTensorDescriptor_t input_desc, const void *input, const cnnlTensorDescriptor_t target_desc,
    const void *target, const cnnlTensorDescriptor_t weight_desc, const void *weight,
    const cnnlTensorDescriptor_t pos_weight_desc, const void *pos_weight,
    const cnnlBceWithLogitsReduction_t reduction, void *workspace, const size_t workspace_size,
    const cnnlTensorDescriptor_t diff_input_desc, void *diff_input);
cnnlStatus_t CNNL_WIN_API cnnlGetSmoothL1LossForwardWorkspaceSize(cnnlHandle_t handle,
                                                                  const cnnlTensorDescriptor_t input_desc,
                                                                  const cnnlSmoothL1LossAlgorithm_t reduction,
                                                                  size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlSmoothL1LossForward_v2(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                                     const void *input, const cnnlTensorDescriptor_t target_desc,
                                                     const void *target, const float beta,
                                                     const cnnlSmoothL1LossAlgorithm_t reduction, void *workspace,
                                                     const size_t workspace_size,
                                                     const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetSmoothL1LossBackwardWorkspaceSize(cnnlHandle_t handle,
                                                                   const cnnlTensorDescriptor_t input_desc,
                                                                   const cnnlSmoothL1LossAlgorithm_t reduction,
                                                                   size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlSmoothL1LossBackward_v2(
    cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc, const void *input,
    const cnnlTensorDescriptor_t target_desc, const void *target, const cnnlTensorDescriptor_t grad_desc,
    const void *grad, const float beta, const cnnlSmoothL1LossAlgorithm_t reduction, void *workspace,
    const size_t workspace_size, const cnnlTensorDescriptor_t diff_input_desc, void *diff_input);

/* ==== part 3: element-wise, special functions ================================================================= */

cnnlStatus_t CNNL_WIN_API cnnlGetAddcmulWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                                      const cnnlTensorDescriptor_t tensor1_desc,
                                                      const cnnlTensorDescriptor_t tensor2_desc, size_t *size);
/* output = input + alpha * tensor1 * tensor2; alpha points to the computation type (float, double or int32_t). */
cnnlStatus_t CNNL_WIN_API cnnlAddcmul(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc, const void *input,
                                      const void *alpha, const cnnlTensorDescriptor_t tensor1_desc,
                                      const void *tensor1, const cnnlTensorDescriptor_t tensor2_desc,
                                      const void *tensor2, void *workspace, size_t workspace_size,
                                      const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetAddcdivWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                                      const cnnlTensorDescriptor_t tensor1_desc,
                                                      const cnnlTensorDescriptor_t tensor2_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlAddcdiv(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc, const void *input,
                                      const void *alpha, const cnnlTensorDescriptor_t tensor1_desc,
                                      const void *tensor1, const cnnlTensorDescriptor_t tensor2_desc,
                                      const void *tensor2, void *workspace, size_t workspace_size,
                                      const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetLerpWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                                   const cnnlTensorDescriptor_t end_desc,
                                                   const cnnlTensorDescriptor_t weight_desc,
                                                   const cnnlTensorDescriptor_t output_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlLerp(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc, const void *input,
                                   const cnnlTensorDescriptor_t end_desc, const void *end,
                                   const cnnlTensorDescriptor_t weight_desc, const void *weight, void *workspace,
                                   size_t workspace_size, const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetAtan2WorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t input1_desc,
                                                    const cnnlTensorDescriptor_t input2_desc,
                                                    const cnnlTensorDescriptor_t output_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlAtan2(cnnlHandle_t handle, cnnlComputationPreference_t prefer,
                                    const cnnlTensorDescriptor_t input1_desc, const void *input1,
                                    const cnnlTensorDescriptor_t input2_desc, const void *input2, void *workspace,
                                    size_t workspace_size, const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetFloorDivWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                                       const cnnlTensorDescriptor_t other_desc,
                                                       const cnnlTensorDescriptor_t output_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlFloorDiv_v2(cnnlHandle_t handle, cnnlComputationPreference_t prefer,
                                          const cnnlTensorDescriptor_t input_desc, const void *input,
                                          const cnnlTensorDescriptor_t other_desc, const void *other,
                                          const cnnlTensorDescriptor_t output_desc, void *output, void *workspace,
                                          size_t workspace_size);
cnnlStatus_t CNNL_WIN_API cnnlGetFloorDivTruncWorkspaceSize(cnnlHandle_t handle,
                                                            const cnnlTensorDescriptor_t input_desc,
                                                            const cnnlTensorDescriptor_t other_desc,
                                                            const cnnlTensorDescriptor_t output_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlFloorDivTrunc(cnnlHandle_t handle, cnnlComputationPreference_t prefer,
                                            const cnnlTensorDescriptor_t input_desc, const void *input,
                                            const cnnlTensorDescriptor_t other_desc, const void *other,
                                            const cnnlTensorDescriptor_t output_desc, void *output, void *workspace,
                                            size_t workspace_size);
cnnlStatus_t CNNL_WIN_API cnnlGetFloorModWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                                       const cnnlTensorDescriptor_t other_desc,
                                                       const cnnlTensorDescriptor_t output_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlFloorMod(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                       const void *input, const cnnlTensorDescriptor_t other_desc, const void *other,
                                       const cnnlTensorDescriptor_t output_desc, void *output, void *workspace,
                                       size_t workspace_size);
/* torch.fmod: input - trunc(input / other) * other, the sign of input (broadcasting). */
cnnlStatus_t CNNL_WIN_API cnnlGetFloorModTruncWorkspaceSize(cnnlHandle_t handle,
                                                            const cnnlTensorDescriptor_t input_desc,
                                                            const cnnlTensorDescriptor_t other_desc,
                                                            const cnnlTensorDescriptor_t output_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlFloorModTrunc(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                            const void *input, const cnnlTensorDescriptor_t other_desc,
                                            const void *other, const cnnlTensorDescriptor_t output_desc, void *output,
                                            void *workspace, size_t workspace_size);
/* The product of input_num inputs (broadcasting). */
cnnlStatus_t CNNL_WIN_API cnnlMulN(cnnlHandle_t handle, const cnnlTensorDescriptor_t inputs_desc[],
                                   const void *const inputs[], int input_num, const cnnlTensorDescriptor_t output_desc,
                                   void *output);
/* output = alpha * input + beta: host alpha/beta of the computation type, or device pointers (DEVICE mode). */
cnnlStatus_t CNNL_WIN_API cnnlTransform_v2(cnnlHandle_t handle, cnnlPointerMode_t pointer_mode, const void *alpha,
                                           const cnnlTensorDescriptor_t input_desc, const void *input,
                                           const void *beta, const cnnlTensorDescriptor_t output_desc, void *output);
/* min and max: one element of the input's type each, on the host or the device by pointer_mode; either may be
 * NULL (not both). */
cnnlStatus_t CNNL_WIN_API cnnlClip_v2(cnnlHandle_t handle, cnnlPointerMode_t pointer_mode,
                                      const cnnlTensorDescriptor_t input_desc, const void *input, const void *min,
                                      const void *max, const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetBitComputeWorkspaceSize(cnnlHandle_t handle,
                                                         const cnnlTensorDescriptor_t input1_desc,
                                                         const cnnlTensorDescriptor_t input2_desc,
                                                         const cnnlTensorDescriptor_t output_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlBitCompute_v2(cnnlHandle_t handle, cnnlBitComputeOp_t op,
                                            const cnnlTensorDescriptor_t input1_desc, const void *input1,
                                            const cnnlTensorDescriptor_t input2_desc, const void *input2,
                                            const cnnlTensorDescriptor_t output_desc, void *output, void *workspace,
                                            size_t workspace_size);
cnnlStatus_t CNNL_WIN_API cnnlErf_v2(cnnlHandle_t handle, cnnlComputationPreference_t prefer,
                                     const cnnlTensorDescriptor_t x_desc, const void *x,
                                     const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlErfinv(cnnlHandle_t handle, cnnlComputationPreference_t prefer,
                                     const cnnlTensorDescriptor_t x_desc, const void *x,
                                     const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlExpm1(cnnlHandle_t handle, cnnlComputationPreference_t prefer,
                                    const cnnlTensorDescriptor_t x_desc, const void *x,
                                    const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlLog1p(cnnlHandle_t handle, cnnlComputationPreference_t prefer,
                                    const cnnlTensorDescriptor_t x_desc, const void *x,
                                    const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlLog(cnnlHandle_t handle, cnnlLogBase_t base, const cnnlTensorDescriptor_t x_desc,
                                  const void *x, const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlTrunc(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
                                    const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlIsNan(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
                                    const cnnlTensorDescriptor_t y_desc, void *y);
/* threshold and value: one element of the input's type each (host). */
cnnlStatus_t CNNL_WIN_API cnnlThreshold(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                        const void *input, const void *threshold, const void *value,
                                        const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlThresholdBackward(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc,
                                                const void *x, const cnnlTensorDescriptor_t diff_y_desc,
                                                const void *diff_y, const void *threshold,
                                                const cnnlTensorDescriptor_t diff_x_desc, void *diff_x);
cnnlStatus_t CNNL_WIN_API cnnlHardtanh(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
                                       float max_val, float min_val, const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlHardtanhBackward(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc,
                                               const void *x, const cnnlTensorDescriptor_t diff_y_desc,
                                               const void *diff_y, float max_val, float min_val,
                                               const cnnlTensorDescriptor_t diff_x_desc, void *diff_x);
cnnlStatus_t CNNL_WIN_API cnnlGetBiasAddWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t bias_desc,
                                                      const cnnlTensorDescriptor_t output_desc, size_t *size);
/* output = alpha * bias + beta * output; alpha and beta point to the output's computation type. */
cnnlStatus_t CNNL_WIN_API cnnlBiasAdd(cnnlHandle_t handle, const void *alpha, const cnnlTensorDescriptor_t bias_desc,
                                      const void *bias, void *workspace, size_t workspace_size, const void *beta,
                                      const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetBiasAddBackwardWorkspaceSize(cnnlHandle_t handle,
                                                              const cnnlTensorDescriptor_t diff_y_desc,
                                                              const cnnlTensorDescriptor_t diff_bias_desc, int axis,
                                                              size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlBiasAddBackward_v2(cnnlHandle_t handle, const cnnlTensorDescriptor_t diff_y_desc,
                                                 const void *diff_y, int axis,
                                                 const cnnlTensorDescriptor_t diff_bias_desc, void *diff_bias,
                                                 void *workspace, size_t workspace_size);

/* ==== part 3: creation, placement, padding ==================================================================== */

/* start and step point to the output's computation type (float, double or int32_t). */
cnnlStatus_t CNNL_WIN_API cnnlArange_v2(cnnlHandle_t handle, cnnlComputationPreference_t prefer, const void *start,
                                        const void *step, const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlLinspace(cnnlHandle_t handle, float start, float end,
                                       const cnnlTensorDescriptor_t output_desc, void *output);
/* on_value and off_value: device pointers to one element of dtype. */
cnnlStatus_t CNNL_WIN_API cnnlOneHot(cnnlHandle_t handle, const cnnlTensorDescriptor_t indices_desc,
                                     const void *indices, int depth, const void *on_value, const void *off_value,
                                     int axis, cnnlDataType_t dtype, void *output);
cnnlStatus_t CNNL_WIN_API cnnlFlip(cnnlHandle_t handle, const int dimension[], int dimension_len,
                                   const cnnlTensorDescriptor_t input_desc, const void *input,
                                   const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetRollWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                                   size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlRoll(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc, const void *input,
                                   const int shifts[], int shift_num, const int dims[], int dim_num,
                                   void *workspace, size_t workspace_size, const cnnlTensorDescriptor_t output_desc,
                                   void *output);
cnnlStatus_t CNNL_WIN_API cnnlTile(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc, const void *input,
                                   const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlTri(cnnlHandle_t handle, int diagonal, bool tri_up_mode,
                                  const cnnlTensorDescriptor_t input_desc, const void *input,
                                  const cnnlTensorDescriptor_t output_desc, void *output);
/* paddings: host int32_t (before, after) per dimension of the input; padding_value: one host element of the
 * input's type (NULL = 0). */
cnnlStatus_t CNNL_WIN_API cnnlPad(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc, const void *input,
                                  const void *paddings, const void *padding_value,
                                  const cnnlTensorDescriptor_t output_desc, void *output);
/* pad = {left, right, top, bottom} */
cnnlStatus_t CNNL_WIN_API cnnlReflectionPad2d(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                              const void *input, const int pad[4],
                                              const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlReplicationPad2d(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                               const void *input, const int pad[4],
                                               const cnnlTensorDescriptor_t output_desc, void *output);
/* begin, end and stride hold one value per dimension of dx. */
cnnlStatus_t CNNL_WIN_API cnnlStridedSliceBackward(cnnlHandle_t handle, const int begin[], const int end[],
                                                   const int stride[], const cnnlTensorDescriptor_t dy_desc,
                                                   const void *dy, const cnnlTensorDescriptor_t dx_desc, void *dx);
cnnlStatus_t CNNL_WIN_API cnnlGetAsStridedBackwardWorkspaceSize(cnnlHandle_t handle,
                                                                const cnnlTensorDescriptor_t dx_desc,
                                                                uint32_t *size);
/* stride holds one value per dimension of dy. */
cnnlStatus_t CNNL_WIN_API cnnlAsStridedBackward(cnnlHandle_t handle, const cnnlTensorDescriptor_t dy_desc,
                                                const void *dy, const cnnlTensorDescriptor_t dx_desc, void *dx,
                                                const uint32_t stride[], const uint32_t storage_offset,
                                                void *workspace, const uint32_t workspace_size);

/* ==== part 3: indexing ======================================================================================== */

/* indices_desc and indices hold CNNL_DIM_MAX entries (NULL where an axis is not indexed). */
cnnlStatus_t CNNL_WIN_API cnnlGetAdvancedIndexOutputDim(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                                        const cnnlTensorDescriptor_t indices_desc[],
                                                        int *output_dim, int output_dims[]);
cnnlStatus_t CNNL_WIN_API cnnlGetAdvancedIndexWorkspaceSize(cnnlHandle_t handle,
                                                            const cnnlTensorDescriptor_t input_desc,
                                                            const cnnlTensorDescriptor_t indices_desc[],
                                                            size_t *size);
/* output_dims and output_dim: device pointers receiving the output's dims (int32) and rank. */
cnnlStatus_t CNNL_WIN_API cnnlAdvancedIndex(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                            const void *input, const cnnlTensorDescriptor_t indices_desc[],
                                            const void *const indices[], void *workspace, size_t workspace_size,
                                            const cnnlTensorDescriptor_t output_desc, void *output,
                                            void *output_dims, void *output_dim);
cnnlStatus_t CNNL_WIN_API cnnlIndexAdd(cnnlHandle_t handle, int dim, const cnnlTensorDescriptor_t input_desc,
                                       const void *input, const cnnlTensorDescriptor_t index_desc, const void *index,
                                       const cnnlTensorDescriptor_t source_desc, const void *source,
                                       const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlIndexFill(cnnlHandle_t handle, int dim, float value,
                                        const cnnlTensorDescriptor_t input_desc, const void *input,
                                        const cnnlTensorDescriptor_t index_desc, const void *index,
                                        const cnnlTensorDescriptor_t output_desc, void *output);
/* value: one element of the input's type, on the host or the device by pointer_mode. */
cnnlStatus_t CNNL_WIN_API cnnlIndexFill_v2(cnnlHandle_t handle, int dim, cnnlPointerMode_t pointer_mode,
                                           const void *value, const cnnlTensorDescriptor_t input_desc,
                                           const void *input, const cnnlTensorDescriptor_t index_desc,
                                           const void *index, const cnnlTensorDescriptor_t output_desc, void *output);
/* scale: for CNNL_MASKED_FILL_HOST one host element of the input's type, for CNNL_MASKED_SCALE a host float;
 * number: a device pointer to one int32 (MASKED_SELECT's count). */
cnnlStatus_t CNNL_WIN_API cnnlMasked_v4(cnnlHandle_t handle, cnnlMaskedOp_t masked_op,
                                        const cnnlTensorDescriptor_t input_desc, const void *input,
                                        const cnnlTensorDescriptor_t mask_desc, const void *mask,
                                        const cnnlTensorDescriptor_t value_desc, const void *value,
                                        const void *scale, void *workspace, size_t workspace_size,
                                        const cnnlTensorDescriptor_t output_desc, void *output, uint32_t *number);
cnnlStatus_t CNNL_WIN_API cnnlCreateUniqueDescriptor(cnnlUniqueDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyUniqueDescriptor(cnnlUniqueDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlSetUniqueDescriptor(cnnlUniqueDescriptor_t unique_desc, cnnlUniqueSort_t mode,
                                                  int dim, bool return_inverse, bool return_counts);
cnnlStatus_t CNNL_WIN_API cnnlGetUniqueWorkspaceSize(cnnlHandle_t handle, const cnnlUniqueDescriptor_t unique_desc,
                                                     const cnnlTensorDescriptor_t input_desc, size_t *size);
/* output_num: a device pointer to one int32 (the number of unique elements). */
cnnlStatus_t CNNL_WIN_API cnnlUnique_v2(cnnlHandle_t handle, const cnnlUniqueDescriptor_t unique_desc,
                                        const cnnlTensorDescriptor_t input_desc, const void *input, void *workspace,
                                        size_t workspace_size, int *output_num,
                                        const cnnlTensorDescriptor_t output_desc, void *output,
                                        const cnnlTensorDescriptor_t indices_desc, void *inverse_indices,
                                        const cnnlTensorDescriptor_t counts_desc, void *counts);

/* ==== part 3: reductions, statistics, linear algebra ========================================================== */

cnnlStatus_t CNNL_WIN_API cnnlCreateStdVarMeanDescriptor(cnnlStdVarMeanDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyStdVarMeanDescriptor(cnnlStdVarMeanDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlSetStdVarMeanDescriptor(cnnlStdVarMeanDescriptor_t desc, cnnlStdVarMeanOp_t op,
                                                      int axis_num, const int axis[], bool unbiased);
cnnlStatus_t CNNL_WIN_API cnnlGetStdVarMeanWorkspaceSize(cnnlHandle_t handle,
                                                         const cnnlStdVarMeanDescriptor_t desc,
                                                         const cnnlTensorDescriptor_t input_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlStdVarMean(cnnlHandle_t handle, const cnnlStdVarMeanDescriptor_t desc,
                                         const cnnlTensorDescriptor_t input_desc, const void *input,
                                         void *workspace, size_t workspace_size,
                                         const cnnlTensorDescriptor_t std_desc, void *std,
                                         const cnnlTensorDescriptor_t var_desc, void *var,
                                         const cnnlTensorDescriptor_t mean_desc, void *mean);

/* ==== part 3: normalisation, losses, optimizers, random numbers =============================================== */

cnnlStatus_t CNNL_WIN_API cnnlGetFrozenBatchNormBackwardWorkspaceSize(cnnlHandle_t handle,
                                                                      const cnnlTensorDescriptor_t x_desc,
                                                                      size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlFrozenBatchNormBackward_v2(
    cnnlHandle_t handle, const cnnlActivationDescriptor_t activation_desc, const cnnlBatchNormMode_t mode,
    const cnnlBatchNormOps_t bnOps, const cnnlTensorDescriptor_t x_desc, const void *x,
    const cnnlTensorDescriptor_t y_desc, const void *y, const cnnlTensorDescriptor_t diff_y_desc,
    const void *diff_y, const cnnlTensorDescriptor_t filter_bias_mean_var_desc, const void *filter,
    const void *bias, const void *pop_mean, const void *pop_var, const float eps, void *workspace,
    size_t workspace_size, const cnnlTensorDescriptor_t diff_z_desc, void *diff_z,
    const cnnlTensorDescriptor_t diff_x_desc, void *diff_x, void *diff_filter, void *diff_bias);
/* lr: a device pointer to one element of the parameters' type. */
cnnlStatus_t CNNL_WIN_API cnnlGradientDescent(cnnlHandle_t handle, const cnnlTensorDescriptor_t grad_desc,
                                              const void *grad, const void *lr,
                                              const cnnlTensorDescriptor_t param_desc, void *param);
/* lr, rho and epsilon: device pointers to one element of var's type each. */
cnnlStatus_t CNNL_WIN_API cnnlApplyAdadelta(cnnlHandle_t handle, const cnnlTensorDescriptor_t var_desc, void *var,
                                            const cnnlTensorDescriptor_t accum_desc, void *accum,
                                            const cnnlTensorDescriptor_t accum_update_desc, void *accum_update,
                                            const cnnlTensorDescriptor_t grad_desc, const void *grad,
                                            const void *lr, const void *rho, const void *epsilon);

/* ==== part 3: element-wise, special functions ================================================================= */

cnnlStatus_t CNNL_WIN_API cnnlCreateTrigonDescriptor(cnnlTrigonDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyTrigonDescriptor(cnnlTrigonDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlSetTrigonDescriptor(cnnlTrigonDescriptor_t desc, cnnlTrigonFunctionMode_t mode);
cnnlStatus_t CNNL_WIN_API cnnlSetTrigonDescriptor_v2(cnnlTrigonDescriptor_t desc, cnnlTrigonFunctionMode_t mode,
                                                     cnnlComputationPreference_t prefer);
cnnlStatus_t CNNL_WIN_API cnnlTrigonForward(cnnlHandle_t handle, const cnnlTrigonDescriptor_t desc,
                                            const cnnlTensorDescriptor_t x_desc, const void *x,
                                            const cnnlTensorDescriptor_t y_desc, void *y);

/* ==== part 3: creation, placement, padding ==================================================================== */

cnnlStatus_t CNNL_WIN_API cnnlGetIm2ColWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc,
                                                     const cnnlTensorDescriptor_t w_desc,
                                                     const cnnlConvolutionDescriptor_t conv_desc,
                                                     const cnnlTensorDescriptor_t y_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlIm2Col(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc, const void *x,
                                     const cnnlTensorDescriptor_t w_desc,
                                     const cnnlConvolutionDescriptor_t conv_desc,
                                     const cnnlTensorDescriptor_t bias_desc, const void *bias,
                                     const void *extra_input, void *workspace, size_t workspace_size,
                                     const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlGetCol2ImWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t col_desc,
                                                     const cnnlTensorDescriptor_t w_desc,
                                                     const cnnlTensorDescriptor_t y_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlCol2Im(cnnlHandle_t handle, const cnnlTensorDescriptor_t col_desc, const void *col,
                                     const cnnlTensorDescriptor_t w_desc,
                                     const cnnlConvolutionDescriptor_t conv_desc, void *workspace,
                                     size_t workspace_size, const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlUnfold(cnnlHandle_t handle, int dim, int size, int step,
                                     const cnnlTensorDescriptor_t x_desc, const void *x,
                                     const cnnlTensorDescriptor_t y_desc, void *y);

/* ==== part 3: reductions, statistics, linear algebra ========================================================== */

cnnlStatus_t CNNL_WIN_API cnnlCdistForward(cnnlHandle_t handle, const cnnlTensorDescriptor_t x1_desc, const void *x1,
                                           const cnnlTensorDescriptor_t x2_desc, const void *x2, double p,
                                           const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlCdistBackward(cnnlHandle_t handle, const cnnlTensorDescriptor_t x1_desc,
                                            const void *x1, const cnnlTensorDescriptor_t x2_desc, const void *x2,
                                            const cnnlTensorDescriptor_t cdist_desc, const void *cdist,
                                            const cnnlTensorDescriptor_t grad_desc, const void *grad, double p,
                                            const cnnlTensorDescriptor_t grad_x1_desc, void *grad_x1);
cnnlStatus_t CNNL_WIN_API cnnlGetQRWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t a_desc, bool some,
                                                 size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlQR(cnnlHandle_t handle, const cnnlTensorDescriptor_t a_desc, const void *a,
                                 const cnnlTensorDescriptor_t q_desc, void *q, const cnnlTensorDescriptor_t r_desc,
                                 void *r, void *workspace, size_t workspace_size, bool some);
cnnlStatus_t CNNL_WIN_API cnnlGetPolarWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t abs_desc,
                                                    const cnnlTensorDescriptor_t angle_desc,
                                                    const cnnlTensorDescriptor_t out_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlPolar(cnnlHandle_t handle, const cnnlTensorDescriptor_t abs_desc, const void *abs,
                                    const cnnlTensorDescriptor_t angle_desc, const void *angle,
                                    const cnnlTensorDescriptor_t out_desc, void *out, void *workspace,
                                    size_t workspace_size);

/* ==== part 3: pooling, interpolation, convolution variants ==================================================== */

/* window, stride and dilation hold nbDims - 2 values; padding holds nbDims - 2 values (the same before and after). */
cnnlStatus_t CNNL_WIN_API cnnlSetPoolingNdDescriptor_v2(cnnlPoolingDescriptor_t pooling_desc, cnnlPoolingMode_t mode,
                                                        cnnlNanPropagation_t maxpooling_nan_opt, int nbDims,
                                                        const int window[], const int padding[],
                                                        const int stride[], const int dilation[], bool ceil_mode);
cnnlStatus_t CNNL_WIN_API cnnlCreateInterpDescriptor(cnnlInterpDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyInterpDescriptor(cnnlInterpDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlSetInterpDescriptor(cnnlInterpDescriptor_t desc, cnnlInterpMode_t mode,
                                                  cnnlInterpCoordinateTransformationMode_t coordinate_trans_mode);
/* scales: one per spatial axis of the input, or NULL (from the sizes); pad must be NULL. */
cnnlStatus_t CNNL_WIN_API cnnlSetInterpDescriptorEx(cnnlInterpDescriptor_t desc,
                                                    const cnnlTensorDescriptor_t input_desc,
                                                    cnnlInterpRoundMode_t round_mode, const float scales[],
                                                    const float pad[], float cubic_coeff, bool exclude_outside);
cnnlStatus_t CNNL_WIN_API cnnlInterp_v3(cnnlHandle_t handle, const cnnlInterpDescriptor_t desc,
                                        const cnnlTensorDescriptor_t input_desc, const void *input,
                                        const cnnlTensorDescriptor_t output_desc, void *output);
/* scales: one per spatial axis of grad_input, or NULL with use_sizes. */
cnnlStatus_t CNNL_WIN_API cnnlInterpBackward_v2(cnnlHandle_t handle, bool align_corners, bool align_center,
                                                cnnlInterpBackwardMode_t mode, const float scales[], bool use_sizes,
                                                const cnnlTensorDescriptor_t grad_output_desc,
                                                const void *grad_output, const cnnlTensorDescriptor_t grad_input_desc,
                                                void *grad_input);
cnnlStatus_t CNNL_WIN_API cnnlCreateDCNDescriptor(cnnlDCNDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyDCNDescriptor(cnnlDCNDescriptor_t desc);
/* dimNb 4; pad = {top, bottom, left, right}, stride and dilation 2 values. */
cnnlStatus_t CNNL_WIN_API cnnlSetDCNDescriptor(cnnlDCNDescriptor_t dcn_desc, int dimNb, const int pad[],
                                               const int stride[], const int dilation[], int deformable_group,
                                               int conv_group, int im2col_step, cnnlDataType_t compute_type);
cnnlStatus_t CNNL_WIN_API cnnlGetDCNForwardWorkspaceSize(cnnlHandle_t handle, const cnnlDCNDescriptor_t dcn_desc,
                                                         const cnnlTensorDescriptor_t input_desc,
                                                         const cnnlTensorDescriptor_t offset_desc,
                                                         const cnnlTensorDescriptor_t mask_desc,
                                                         const cnnlTensorDescriptor_t filter_desc,
                                                         const cnnlTensorDescriptor_t bias_desc,
                                                         const cnnlTensorDescriptor_t output_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlDCNForward(cnnlHandle_t handle, const cnnlDCNDescriptor_t dcn_desc,
                                         const cnnlTensorDescriptor_t input_desc, const void *input,
                                         const cnnlTensorDescriptor_t offset_desc, const void *offset,
                                         const cnnlTensorDescriptor_t mask_desc, const void *mask,
                                         const cnnlTensorDescriptor_t filter_desc, const void *filter,
                                         const cnnlTensorDescriptor_t bias_desc, const void *bias, void *workspace,
                                         size_t workspace_size, const cnnlTensorDescriptor_t output_desc,
                                         void *output);
/* (the name's spelling is CNNL's) */
cnnlStatus_t CNNL_WIN_API cnnlGetDCNBakcwardDataWorkspaceSize(
    cnnlHandle_t handle, const cnnlDCNDescriptor_t dcn_desc, const cnnlTensorDescriptor_t input_desc,
    const cnnlTensorDescriptor_t offset_desc, const cnnlTensorDescriptor_t mask_desc,
    const cnnlTensorDescriptor_t filter_desc, const cnnlTensorDescriptor_t grad_output_desc,
    const cnnlTensorDescriptor_t grad_input_desc, const cnnlTensorDescriptor_t grad_offset_desc,
    const cnnlTensorDescriptor_t grad_mask_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlDCNBackwardData(
    cnnlHandle_t handle, const cnnlDCNDescriptor_t dcn_desc, const cnnlTensorDescriptor_t input_desc,
    const void *input, const cnnlTensorDescriptor_t offset_desc, const void *offset,
    const cnnlTensorDescriptor_t mask_desc, const void *mask, const cnnlTensorDescriptor_t filter_desc,
    const void *filter, const cnnlTensorDescriptor_t grad_output_desc, const void *grad_output, void *workspace,
    size_t workspace_size, const cnnlTensorDescriptor_t grad_input_desc, void *grad_input,
    const cnnlTensorDescriptor_t grad_offset_desc, void *grad_offset, const cnnlTensorDescriptor_t grad_mask_desc,
    void *grad_mask);
cnnlStatus_t CNNL_WIN_API cnnlGetDCNBackwardWeightWorkspaceSize(
    cnnlHandle_t handle, const cnnlDCNDescriptor_t dcn_desc, const cnnlTensorDescriptor_t input_desc,
    const cnnlTensorDescriptor_t offset_desc, const cnnlTensorDescriptor_t mask_desc,
    const cnnlTensorDescriptor_t grad_output_desc, const cnnlTensorDescriptor_t grad_filter_desc,
    const cnnlTensorDescriptor_t grad_bias_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlDCNBackwardWeight(
    cnnlHandle_t handle, const cnnlDCNDescriptor_t dcn_desc, const cnnlTensorDescriptor_t input_desc,
    const void *input, const cnnlTensorDescriptor_t offset_desc, const void *offset,
    const cnnlTensorDescriptor_t mask_desc, const void *mask, const cnnlTensorDescriptor_t grad_output_desc,
    const void *grad_output, void *workspace, size_t workspace_size, const cnnlTensorDescriptor_t grad_filter_desc,
    void *grad_filter, const cnnlTensorDescriptor_t grad_bias_desc, void *grad_bias);

/* ==== part 3: attention and sequence ops ====================================================================== */

cnnlStatus_t CNNL_WIN_API cnnlCreateFlashAttentionDescriptor(cnnlFlashAttentionDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyFlashAttentionDescriptor(cnnlFlashAttentionDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlSetFlashAttentionDescriptor(
    cnnlFlashAttentionDescriptor_t desc, cnnlDataType_t compute_dtype, cnnlActivationPreference_t prefer,
    cnnlAttentionMaskMode_t attn_mask_mode, bool is_pack_mode, bool is_out_zero, bool return_softmax,
    int max_seq_len_q, int max_seq_len_kv, float dropout_p, float softmax_scale);
cnnlStatus_t CNNL_WIN_API cnnlSetFlashAttentionBackwardDescriptor(
    cnnlFlashAttentionDescriptor_t desc, cnnlDataType_t compute_dtype, cnnlActivationPreference_t prefer,
    cnnlAttentionMaskMode_t attn_mask_mode, bool is_pack_mode, bool is_out_zero, bool is_store_softmax_d,
    int max_seq_len_q, int max_seq_len_kv, float dropout_p, float softmax_scale);
cnnlStatus_t CNNL_WIN_API cnnlSetFlashAttentionSlidingWindowSize(cnnlFlashAttentionDescriptor_t desc,
                                                                 int window_size_left, int window_size_right,
                                                                 int dilation);
cnnlStatus_t CNNL_WIN_API cnnlGetFlashAttentionForwardWorkspaceSize(
    cnnlHandle_t handle, const cnnlFlashAttentionDescriptor_t desc, const cnnlTensorDescriptor_t q_desc,
    const cnnlTensorDescriptor_t k_desc, const cnnlTensorDescriptor_t v_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlGetFlashAttentionBackwardWorkspaceSize(
    cnnlHandle_t handle, const cnnlFlashAttentionDescriptor_t desc, const cnnlTensorDescriptor_t q_desc,
    const cnnlTensorDescriptor_t k_desc, const cnnlTensorDescriptor_t v_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlGetFlashAttentionGeneratedRandomNumbers(
    cnnlHandle_t handle, const cnnlFlashAttentionDescriptor_t desc, const cnnlTensorDescriptor_t q_desc,
    const cnnlTensorDescriptor_t v_desc, const cnnlTensorDescriptor_t cu_seqlens_q_desc, size_t *num);
/* rng_state: host {seed, offset} (NULL without dropout). */
cnnlStatus_t CNNL_WIN_API cnnlFlashAttentionForward(
    cnnlHandle_t handle, const cnnlFlashAttentionDescriptor_t desc, const cnnlTensorDescriptor_t q_desc,
    const void *q, const cnnlTensorDescriptor_t k_desc, const void *k, const cnnlTensorDescriptor_t v_desc,
    const void *v, const cnnlTensorDescriptor_t cu_seqlens_q_desc, const void *cu_seqlens_q,
    const cnnlTensorDescriptor_t cu_seqlens_kv_desc, const void *cu_seqlens_kv, const size_t rng_state[],
    void *workspace, size_t workspace_size, const cnnlTensorDescriptor_t dropout_mask_desc, void *dropout_mask,
    const cnnlTensorDescriptor_t softmax_lse_desc, void *softmax_lse, const cnnlTensorDescriptor_t out_desc,
    void *out);
cnnlStatus_t CNNL_WIN_API cnnlFlashAttentionForward_v2(
    cnnlHandle_t handle, const cnnlFlashAttentionDescriptor_t desc, const cnnlTensorDescriptor_t q_desc,
    const void *q, const cnnlTensorDescriptor_t k_desc, const void *k, const cnnlTensorDescriptor_t v_desc,
    const void *v, const cnnlTensorDescriptor_t cu_seqlens_q_desc, const void *cu_seqlens_q,
    const cnnlTensorDescriptor_t cu_seqlens_kv_desc, const void *cu_seqlens_kv,
    const cnnlTensorDescriptor_t seqused_k_desc, const void *seqused_k, const cnnlTensorDescriptor_t attn_mask_desc,
    const void *attn_mask, const cnnlTensorDescriptor_t alibi_slopes_desc, const void *alibi_slopes,
    const size_t rng_state[], void *workspace, size_t workspace_size,
    const cnnlTensorDescriptor_t dropout_mask_desc, void *dropout_mask,
    const cnnlTensorDescriptor_t softmax_lse_desc, void *softmax_lse, const cnnlTensorDescriptor_t out_desc,
    void *out);
cnnlStatus_t CNNL_WIN_API cnnlFlashAttentionBackward(
    cnnlHandle_t handle, const cnnlFlashAttentionDescriptor_t desc, const cnnlTensorDescriptor_t diff_out_desc,
    const void *diff_out, const cnnlTensorDescriptor_t q_desc, const void *q, const cnnlTensorDescriptor_t k_desc,
    const void *k, const cnnlTensorDescriptor_t v_desc, const void *v, const cnnlTensorDescriptor_t out_desc,
    const void *out, const cnnlTensorDescriptor_t softmax_lse_desc, const void *softmax_lse,
    const cnnlTensorDescriptor_t cu_seqlens_q_desc, const void *cu_seqlens_q,
    const cnnlTensorDescriptor_t cu_seqlens_kv_desc, const void *cu_seqlens_kv, const size_t rng_state[],
    void *workspace, size_t workspace_size, const cnnlTensorDescriptor_t diff_q_desc, void *diff_q,
    const cnnlTensorDescriptor_t diff_k_desc, void *diff_k, const cnnlTensorDescriptor_t diff_v_desc, void *diff_v,
    const cnnlTensorDescriptor_t dropout_mask_desc, const void *dropout_mask,
    const cnnlTensorDescriptor_t softmax_d_desc, void *softmax_d);
cnnlStatus_t CNNL_WIN_API cnnlFlashAttentionBackward_v2(
    cnnlHandle_t handle, const cnnlFlashAttentionDescriptor_t desc, const cnnlTensorDescriptor_t diff_out_desc,
    const void *diff_out, const cnnlTensorDescriptor_t q_desc, const void *q, const cnnlTensorDescriptor_t k_desc,
    const void *k, const cnnlTensorDescriptor_t v_desc, const void *v, const cnnlTensorDescriptor_t out_desc,
    const void *out, const cnnlTensorDescriptor_t softmax_lse_desc, const void *softmax_lse,
    const cnnlTensorDescriptor_t cu_seqlens_q_desc, const void *cu_seqlens_q,
    const cnnlTensorDescriptor_t cu_seqlens_kv_desc, const void *cu_seqlens_kv,
    const cnnlTensorDescriptor_t seqused_k_desc, const void *seqused_k, const cnnlTensorDescriptor_t attn_mask_desc,
    const void *attn_mask, const size_t rng_state[], void *workspace, size_t workspace_size,
    const cnnlTensorDescriptor_t diff_q_desc, void *diff_q, const cnnlTensorDescriptor_t diff_k_desc, void *diff_k,
    const cnnlTensorDescriptor_t diff_v_desc, void *diff_v, const cnnlTensorDescriptor_t dropout_mask_desc,
    const void *dropout_mask, const cnnlTensorDescriptor_t softmax_d_desc, void *softmax_d);
cnnlStatus_t CNNL_WIN_API cnnlCreateRotaryEmbeddingDescriptor(cnnlRotaryEmbeddingDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyRotaryEmbeddingDescriptor(cnnlRotaryEmbeddingDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlSetRotaryEmbeddingDescriptor(cnnlRotaryEmbeddingDescriptor_t desc, bool conj,
                                                           cnnlSeqDataLayout_t seq_layout);
cnnlStatus_t CNNL_WIN_API cnnlRotaryEmbedding(cnnlHandle_t handle, const cnnlRotaryEmbeddingDescriptor_t desc,
                                              const cnnlTensorDescriptor_t x1_desc, const void *x1,
                                              const cnnlTensorDescriptor_t x2_desc, const void *x2,
                                              const cnnlTensorDescriptor_t cos_desc, const void *cos,
                                              const cnnlTensorDescriptor_t sin_desc, const void *sin, void *workspace,
                                              size_t workspace_size, const cnnlTensorDescriptor_t y1_desc, void *y1,
                                              const cnnlTensorDescriptor_t y2_desc, void *y2);
cnnlStatus_t CNNL_WIN_API cnnlCreateNmsDescriptor(cnnlNmsDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyNmsDescriptor(cnnlNmsDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlSetNmsDescriptor_v5(cnnlNmsDescriptor_t nms_desc, cnnlNmsBoxPointMode_t box_mode,
                                                  cnnlNmsOutputMode_t output_mode, cnnlNmsAlgo_t algo,
                                                  cnnlNmsMethodMode_t method_mode, float iou_threshold,
                                                  float soft_nms_sigma, int max_output_size,
                                                  float confidence_threshold, float offset, int input_layout,
                                                  bool pad_to_max_output_size);
cnnlStatus_t CNNL_WIN_API cnnlGetNmsWorkspaceSize_v3(cnnlHandle_t handle, const cnnlTensorDescriptor_t boxes_desc,
                                                     const cnnlTensorDescriptor_t confidence_desc, size_t *size);
/* output_size: a device pointer to one int32 (the number of boxes kept). */
cnnlStatus_t CNNL_WIN_API cnnlNms_v2(cnnlHandle_t handle, const cnnlNmsDescriptor_t nms_desc,
                                     const cnnlTensorDescriptor_t boxes_desc, const void *boxes,
                                     const cnnlTensorDescriptor_t confidence_desc, const void *confidence,
                                     void *workspace, size_t workspace_size,
                                     const cnnlTensorDescriptor_t output_desc, void *output, void *output_size);

/* ==== part 3: normalisation, losses, optimizers, random numbers =============================================== */

cnnlStatus_t CNNL_WIN_API cnnlGetSyncBatchNormStatsWorkspaceSize(cnnlHandle_t handle,
                                                                 const cnnlTensorDescriptor_t x_desc, size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlSyncBatchNormStats_v2(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc,
                                                    const void *x, void *workspace, size_t workspace_size,
                                                    const float eps, const cnnlTensorDescriptor_t mean_desc,
                                                    void *mean, const cnnlTensorDescriptor_t invstd_desc,
                                                    void *invstd);
cnnlStatus_t CNNL_WIN_API cnnlSyncBatchNormGatherStatsWithCounts(
    cnnlHandle_t handle, const cnnlTensorDescriptor_t mean_all_desc, const void *mean_all,
    const cnnlTensorDescriptor_t invstd_all_desc, const void *invstd_all,
    const cnnlTensorDescriptor_t moving_mean_desc, void *moving_mean, const cnnlTensorDescriptor_t moving_var_desc,
    void *moving_var, float momentum, float eps, const cnnlTensorDescriptor_t count_all_desc,
    const void *count_all, const cnnlTensorDescriptor_t mean_desc, void *mean,
    const cnnlTensorDescriptor_t invstd_desc, void *invstd);
cnnlStatus_t CNNL_WIN_API cnnlSyncBatchNormElemt(cnnlHandle_t handle, const cnnlTensorDescriptor_t x_desc,
                                                 const void *x, const cnnlTensorDescriptor_t mean_desc,
                                                 const void *mean, const cnnlTensorDescriptor_t invstd_desc,
                                                 const void *invstd, const cnnlTensorDescriptor_t filter_desc,
                                                 const void *filter, const cnnlTensorDescriptor_t bias_desc,
                                                 const void *bias, const cnnlTensorDescriptor_t y_desc, void *y);
cnnlStatus_t CNNL_WIN_API cnnlGetSyncBatchnormBackwardReduceWorkspaceSize(cnnlHandle_t handle,
                                                                          const cnnlTensorDescriptor_t x_desc,
                                                                          size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlSyncBatchnormBackwardReduce_v2(
    cnnlHandle_t handle, const cnnlTensorDescriptor_t desc_dz, const void *dz, const cnnlTensorDescriptor_t desc_x,
    const void *x, const cnnlTensorDescriptor_t desc_mean, const void *mean,
    const cnnlTensorDescriptor_t desc_ivstd, const void *ivstd, void *workspace, size_t workspace_size,
    const cnnlTensorDescriptor_t desc_dfilter, void *dfilter, const cnnlTensorDescriptor_t desc_dbias, void *dbias,
    const cnnlTensorDescriptor_t desc_sum_dy, void *sum_dy, const cnnlTensorDescriptor_t desc_sum_dy_xmu,
    void *sum_dy_xmu, const bool needs_input_grad0, const bool needs_input_grad1, const bool needs_input_grad2);
cnnlStatus_t CNNL_WIN_API cnnlSyncBatchNormBackwardElemtV2(
    cnnlHandle_t handle, const cnnlTensorDescriptor_t diff_y_desc, const void *diff_y,
    const cnnlTensorDescriptor_t x_desc, const void *x, const cnnlTensorDescriptor_t mean_desc, const void *mean,
    const cnnlTensorDescriptor_t invstd_desc, const void *invstd, const cnnlTensorDescriptor_t filter_desc,
    const void *filter, const cnnlTensorDescriptor_t sum_dy_desc, const void *sum_dy,
    const cnnlTensorDescriptor_t sum_dy_xmu_desc, const void *sum_dy_xmu, const cnnlTensorDescriptor_t count_desc,
    const void *count, const cnnlTensorDescriptor_t diff_x_desc, void *diff_x);
cnnlStatus_t CNNL_WIN_API cnnlCreateCTCLossDescriptor(cnnlCTCLossDescriptor_t *desc);
cnnlStatus_t CNNL_WIN_API cnnlDestroyCTCLossDescriptor(cnnlCTCLossDescriptor_t desc);
cnnlStatus_t CNNL_WIN_API cnnlSetCTCLossDescriptor(cnnlCTCLossDescriptor_t ctc_loss_desc,
                                                   cnnlCTCLossNormalizationMode_t norm_mode,
                                                   cnnlCTCLossReduceMode_t reduce_mode,
                                                   cnnlCTCLossZeroInfinityMode_t zero_infinity, int blank,
                                                   int max_input_length, int max_label_length);
cnnlStatus_t CNNL_WIN_API cnnlGetCTCLossWorkspaceSize(cnnlHandle_t handle,
                                                      const cnnlCTCLossDescriptor_t ctc_loss_desc,
                                                      const cnnlTensorDescriptor_t input_desc, bool is_backward,
                                                      size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlCTCLoss(cnnlHandle_t handle, const cnnlCTCLossDescriptor_t ctc_loss_desc,
                                      const cnnlTensorDescriptor_t input_desc, const void *input,
                                      const cnnlTensorDescriptor_t labels_desc, const void *labels,
                                      const cnnlTensorDescriptor_t input_lengths_desc, const void *input_lengths,
                                      const cnnlTensorDescriptor_t label_lengths_desc, const void *label_lengths,
                                      void *workspace, size_t workspace_size, const cnnlTensorDescriptor_t loss_desc,
                                      void *loss, const cnnlTensorDescriptor_t grads_desc, void *grads);
cnnlStatus_t CNNL_WIN_API cnnlGetMSELossWorkspaceSize(cnnlHandle_t handle, const cnnlTensorDescriptor_t input_desc,
                                                      size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlMSELoss_v2(cnnlHandle_t handle, cnnlMSELossReduction_t reduction,
                                         const cnnlTensorDescriptor_t input_desc, const void *input,
                                         const cnnlTensorDescriptor_t target_desc, const void *target,
                                         void *workspace, size_t workspace_size,
                                         const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlNlllossForward_v2(cnnlHandle_t handle, cnnlNlllossAlgorithm_t reduction,
                                                const cnnlTensorDescriptor_t input_desc, const void *input,
                                                const cnnlTensorDescriptor_t target_desc, const void *target,
                                                int ignore_index, const cnnlTensorDescriptor_t weight_desc,
                                                const void *weight, void *workspace, size_t workspace_size,
                                                const cnnlTensorDescriptor_t total_weight_desc, void *total_weight,
                                                const cnnlTensorDescriptor_t output_desc, void *output);
cnnlStatus_t CNNL_WIN_API cnnlNlllossBackward_v2(cnnlHandle_t handle, cnnlNlllossAlgorithm_t reduction,
                                                 const cnnlTensorDescriptor_t grad_output_desc,
                                                 const void *grad_output, const cnnlTensorDescriptor_t target_desc,
                                                 const void *target, int ignore_index,
                                                 const cnnlTensorDescriptor_t weight_desc, const void *weight,
                                                 const cnnlTensorDescriptor_t total_weight_desc,
                                                 const void *total_weight,
                                                 const cnnlTensorDescriptor_t grad_input_desc, void *grad_input);
cnnlStatus_t CNNL_WIN_API cnnlRandGenerateDescreteUniform(cnnlHandle_t handle, cnnlRandGenerator_t generator,
                                                          cnnlDataType_t dtype, void *state, size_t num, int min,
                                                          int max, void *output);
cnnlStatus_t CNNL_WIN_API cnnlGetRandGenerateMultinomialWorkspaceSize(cnnlHandle_t handle,
                                                                      const cnnlTensorDescriptor_t x_desc,
                                                                      size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlRandGenerateMultinomial_v2(cnnlHandle_t handle, cnnlRandGenerator_t generator,
                                                         const cnnlTensorDescriptor_t x_desc, const void *x,
                                                         bool replacement, bool is_logits, void *state,
                                                         void *workspace, size_t workspace_size,
                                                         const cnnlTensorDescriptor_t y_desc, void *y);

/* ---- the multi-tensor (foreach) ops: tensor_num descriptors and pointers per list; no workspace is needed ---- */
cnnlStatus_t CNNL_WIN_API cnnlGetForeachBinaryOpWorkspaceSize(cnnlHandle_t handle, const int tensor_num,
                                                              const cnnlTensorDescriptor_t input_desc_array[],
                                                              size_t *size);
/* scalar: one (SCALAR) or tensor_num (SCALAR_LIST) values of scalar_desc's type; alpha (TENSOR_LIST): one value of
   the tensors' computation type, NULL = 1 */
cnnlStatus_t CNNL_WIN_API cnnlForeachBinaryOp(cnnlHandle_t handle, cnnlForeachOpMode_t op_mode,
                                              cnnlForeachBinaryMode_t mode, const int tensor_num,
                                              const cnnlTensorDescriptor_t input1_desc_array[],
                                              const void *const input1_ptr_array[],
                                              const cnnlTensorDescriptor_t input2_desc_array[],
                                              const void *const input2_ptr_array[],
                                              const cnnlTensorDescriptor_t scalar_desc, const void *scalar,
                                              const void *alpha, void *workspace, size_t workspace_size,
                                              const cnnlTensorDescriptor_t output_desc_array[],
                                              void *const output_ptr_array[]);
cnnlStatus_t CNNL_WIN_API cnnlGetForeachUnaryOpWorkspaceSize(cnnlHandle_t handle, const int tensor_num,
                                                             const cnnlTensorDescriptor_t input_desc_array[],
                                                             size_t *size);
cnnlStatus_t CNNL_WIN_API cnnlForeachUnaryOp_v2(cnnlHandle_t handle, cnnlForeachOpMode_t mode,
                                                cnnlComputationPreference_t prefer, const int tensor_num,
                                                const cnnlTensorDescriptor_t input_desc_array[],
                                                const void *const input_ptr_array[], void *workspace,
                                                size_t workspace_size,
                                                const cnnlTensorDescriptor_t output_desc_array[],
                                                void *const output_ptr_array[]);
/* scalar: one (SCALAR) or tensor_num (SCALAR_LIST) values of the tensors' computation type */
cnnlStatus_t CNNL_WIN_API cnnlForeachPointwiseOp(cnnlHandle_t handle, cnnlForeachOpMode_t op_mode,
                                                 cnnlForeachPointWiseMode_t scalar_mode, const int tensor_num,
                                                 const cnnlTensorDescriptor_t input_desc_array[],
                                                 const void *const input_ptr_array[],
                                                 const cnnlTensorDescriptor_t tensors1_desc_array[],
                                                 const void *const tensors1_ptr_array[],
                                                 const cnnlTensorDescriptor_t tensors2_desc_array[],
                                                 const void *const tensors2_ptr_array[], const void *scalar,
                                                 const cnnlTensorDescriptor_t output_desc_array[],
                                                 void *const output_ptr_array[]);
cnnlStatus_t CNNL_WIN_API cnnlGetForeachLerpExtraInputSize(cnnlHandle_t handle, cnnlForeachLerpMode_t mode,
                                                           const int tensor_num,
                                                           const cnnlTensorDescriptor_t input1_desc_array[],
                                                           size_t *size);
/* input3_ptr_array: the weights (TENSOR_LIST), or an array whose first entry points to one weight of the tensors'
   type (SCALAR; input3_desc_array is not read) */
cnnlStatus_t CNNL_WIN_API cnnlForeachLerp(cnnlHandle_t handle, cnnlForeachLerpMode_t mode, const int tensor_num,
                                          const cnnlTensorDescriptor_t input1_desc_array[],
                                          const void *const input1_ptr_array[],
                                          const cnnlTensorDescriptor_t input2_desc_array[],
                                          const void *const input2_ptr_array[],
                                          const cnnlTensorDescriptor_t input3_desc_array[],
                                          const void *const input3_ptr_array[], void *workspace,
                                          size_t workspace_size, const cnnlTensorDescriptor_t output_desc_array[],
                                          void *const output_ptr_array[]);

#ifdef __cplusplus
}
#endif

#endif /* MLUSIM_CNNL_H_ */
