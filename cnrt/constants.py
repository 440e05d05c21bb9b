"""CNRT enums with their C names and values (reference section 1)."""
from __future__ import annotations

from dataclasses import dataclass

# cnrtMemTransDir_t
cnrtMemcpyHostToDev = 0
cnrtMemcpyDevToDev = 1
cnrtMemcpyDevToHost = 2
cnrtMemcpyHostToHost = 3
cnrtMemcpyPeerToPeer = 4
cnrtMemcpyNoDirection = 5
CNRT_MEM_TRANS_DIR_HOST2DEV = 0
CNRT_MEM_TRANS_DIR_DEV2DEV = 1
CNRT_MEM_TRANS_DIR_DEV2HOST = 2
CNRT_MEM_TRANS_DIR_HOST2HOST = 3
CNRT_MEM_TRANS_DIR_PEER2PEER = 4
CNRT_MEM_TRANS_DIR_NODIR = 5
MEMCPY_DIRECTIONS = (0, 1, 2, 3, 4, 5)

# cnrtFunctionType_t
cnrtFuncTypeBlock = 1
cnrtFuncTypeBlock0 = 1
cnrtFuncTypeBlock1 = 2
cnrtFuncTypeUnion1 = 4
cnrtFuncTypeUnion2 = 8
cnrtFuncTypeUnion4 = 16
cnrtFuncTypeUnion8 = 32
cnrtFuncTypeUnion16 = 64
cnrtFuncTypeMutable = -1
CNRT_FUNC_TYPE_BLOCK = 1
CNRT_FUNC_TYPE_BLOCK0 = 1
CNRT_FUNC_TYPE_BLOCK1 = 2
CNRT_FUNC_TYPE_UNION1 = 4
CNRT_FUNC_TYPE_UNION2 = 8
CNRT_FUNC_TYPE_UNION4 = 16
CNRT_FUNC_TYPE_UNION8 = 32
CNRT_FUNC_TYPE_UNION16 = 64
CNRT_FUNC_TYPE_MUTABLE = -1
FUNCTION_TYPES = (1, 2, 4, 8, 16, 32, 64, -1)

# cnrtDataType_t (v4: cnrtCastDataType, cnrtDataTypeSize)
CNRT_INVALID = 0x0
CNRT_FLOAT16 = 0x12
CNRT_FLOAT32 = 0x13
CNRT_FLOAT64 = 0x14
CNRT_INT4 = 0x20
CNRT_INT8 = 0x21
CNRT_INT16 = 0x22
CNRT_INT32 = 0x23
CNRT_INT64 = 0x24
CNRT_AUTO = 0x25
CNRT_UINT8 = 0x31
CNRT_UINT16 = 0x32
CNRT_UINT32 = 0x33
CNRT_FIX8 = 0x41
CNRT_QUANT8 = 0x51
CNRT_BOOL = 0x61
# CNRT 5/6 spell the same cnrtDataType_t values in camel case
cnrtInvalid = CNRT_INVALID
cnrtFloat16 = CNRT_FLOAT16
cnrtFloat32 = CNRT_FLOAT32
cnrtFloat64 = CNRT_FLOAT64
cnrtInt4 = CNRT_INT4
cnrtInt8 = CNRT_INT8
cnrtInt16 = CNRT_INT16
cnrtInt32 = CNRT_INT32
cnrtInt64 = CNRT_INT64
cnrtAuto = CNRT_AUTO
cnrtUInt8 = CNRT_UINT8
cnrtUInt16 = CNRT_UINT16
cnrtUInt32 = CNRT_UINT32
cnrtFix8 = CNRT_FIX8
cnrtQuant8 = CNRT_QUANT8
cnrtBool = CNRT_BOOL

# cnrtDataType_V2_t (cnrtCastDataType_V2)
cnrtUnknown = 0x0
cnrtDouble = 0x1
cnrtFloat = 0x2
cnrtHalf = 0x3
cnrtBfloat = 0x4
cnrtUlonglong = 0x11
cnrtUint = 0x12
cnrtUshort = 0x13
cnrtUchar = 0x14
cnrtLonglong = 0x21
cnrtInt = 0x22
cnrtShort = 0x23
cnrtChar = 0x24
cnrtBoolean = 0x31

# cnrtRoundingMode_t
cnrtRounding_rn = 0
cnrtRounding_rz = 1
cnrtRounding_rd = 2
cnrtRounding_ru = 3
cnrtRounding_ro = 4
cnrtRounding_rm = 5
cnrtRounding_max = 6

# cnrtPointerAttributes_t.type (cnrtMemoryType_t)
cnrtMemTypeUnregistered = 0
cnrtMemTypeHost = 1
cnrtMemTypeDevice = 2

# v4 host memory type for cnrtMallocHost
CNRT_MEMTYPE_DEFAULT = 0
CNRT_MEMTYPE_LOCKED = 1

# Notifier flags
CNRT_NOTIFIER_DEFAULT = 0
CNRT_NOTIFIER_DISABLE_TIMING_SW = 2
CNRT_NOTIFIER_DISABLE_TIMING_ALL = 4
CNRT_NOTIFIER_INTERPROCESS = 8
NOTIFIER_FLAGS = CNRT_NOTIFIER_DISABLE_TIMING_SW | CNRT_NOTIFIER_DISABLE_TIMING_ALL | CNRT_NOTIFIER_INTERPROCESS

# cnrtSetDeviceFlag
cnrtDeviceScheduleSpin = 0
cnrtDeviceScheduleBlock = 1
cnrtDeviceScheduleYield = 2
cnrtDeviceScheduleAuto = 3

# Special queue handles
cnrtQueueDefault = None
cnrtQueuePerThread = 1
cnrtQueueLegacy = 2

# cnrtDeviceAttr_t
cnrtAttrComputeCapabilityMajor = 0x01
cnrtAttrComputeCapabilityMinor = 0x02
cnrtAttrSparseComputingSupported = 0x03
cnrtAttrFP16ComputingSupported = 0x04
cnrtAttrINT4ComputingSupported = 0x05
cnrtAttrINT8ComputingSupported = 0x06
cnrtAttrBF16ComputingSupported = 0x07
cnrtAttrTF32ComputingSupported = 0x08
cnrtAttrComputeMode = 0x09
cnrtAttrQueueSize = 0x101
cnrtAttrNotifierSize = 0x102
cnrtAttrSupportQueuePriorities = 0x103
cnrtAttrMaxDimX = 0x201
cnrtAttrMaxDimY = 0x202
cnrtAttrMaxDimZ = 0x203
cnrtAttrMaxClusterCountPerUnionTask = 0x204
cnrtAttrClusterCount = 0x205
cnrtAttrMcorePerCluster = 0x206
cnrtAttrISAVersion = 0x20a
cnrtAttrMaxL2CacheSize = 0x301
cnrtAttrNramSizePerMcore = 0x302
cnrtAttrWramSizePerMcore = 0x303
cnrtAttrLmemSizePerMcore = 0x305
cnrtAttrSramSizePerMcore = 0x306
cnrtAttrAvailableGlobalMemorySize = 0x312
cnrtAttrEccEnable = 0x401
cnrtAttrIpuClockRate = 0x402
cnrtAttrMemClockRate = 0x403
cnrtAttrGmemBusWidth = 0x404
cnrtAttrTotalMemSize = 0x405
cnrtAttrPciBusID = 0x406
cnrtAttrPciDeviceID = 0x407
cnrtAttrPciDomainID = 0x408

# Chosen (not public): queue priorities run from 0 (lowest) to -4 (highest), like CUDA's "lower is higher".
QUEUE_PRIORITY_LEAST = 0
QUEUE_PRIORITY_GREATEST = -4
# Chosen limits reported by deviceGetAttribute.
from mlusim.launch import MAX_DIM  # noqa: E402  (the task model checks launches against it)
MAX_QUEUES = 4096
MAX_NOTIFIERS = 4096


@dataclass(frozen=True)
class cnrtDim3_t:
    """A launch dimension {x, y, z}."""

    x: int = 1
    y: int = 1
    z: int = 1


Dim3 = cnrtDim3_t
