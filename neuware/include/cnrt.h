/*
 * cnrt.h: the CNRT runtime API of mlusim, the software Cambricon MLU.
 *
 * Written for mlusim from Cambricon's public documentation: the names, types, signatures and values are those of
 * CNRT v6 (with the v4 names real code still uses); the implementation is libcnrt.so of mlusim, which runs every
 * call on the simulated devices of the `cnrt` Python package. Device pointers are addresses in the simulator's
 * address space; queues and notifiers are opaque handles. A failing call returns its cnrtRet_t value and keeps the
 * simulator's message: cnrtGetErrorStr(code) appends it, and MLUSIM_CAPI_VERBOSE=1 prints each failure.
 */
#ifndef MLUSIM_CNRT_H_
#define MLUSIM_CNRT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CNRT_MAJOR_VERSION 6
#define CNRT_MINOR_VERSION 14
#define CNRT_PATCH_VERSION 1

#ifndef CNRT_VERSION
#define CNRT_VERSION (CNRT_MAJOR_VERSION * 10000 + CNRT_MINOR_VERSION * 100 + CNRT_PATCH_VERSION)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ----------------------------------------------------------------------------------------------- */

/* Every function returns one of these (0 = success). The v4 names CNRT_RET_* are kept for old code. */
typedef enum {
  cnrtSuccess = 0,
  cnrtErrorNotReady = 1,
  cnrtErrorInit = 100002,
  cnrtErrorNoDevice = 100004,
  cnrtErrorDeviceInvalid = 100005,
  cnrtErrorArgsInvalid = 100006,
  cnrtErrorSys = 100007,
  cnrtErrorSysNoMem = 100010,
  cnrtErrorInvalidResourceHandle = 100014,
  cnrtErrorIllegalState = 100015,
  cnrtErrorNotSupport = 100050,
  cnrtErrorOpsNotPermitted = 100051,
  cnrtErrorQueue = 100060,
  cnrtErrorNoMem = 100100,
  cnrtErrorAssert = 100128,
  cnrtErrorKernelTrap = 100132,
  cnrtErrorKernelUserTrap = 100133,
  cnrtErrorNotFound = 100301,
  cnrtErrorInvalidKernel = 100302,
  cnrtErrorNoKernel = 101312,
  cnrtErrorSetOnActiveProcess = 632002,
  cnrtErrorDevice = 632006,
  cnrtErrorNoAttribute = 632009,
  cnrtErrorMemcpyDirectionInvalid = 632013,
  cnrtErrorBusy = 632014,
  cnrtErrorNoCnrtContext = 632019,
  cnrtErrorInvalidSymbol = 632100,
  cnrtErrorUnknown = 999991,
  CNRT_RET_SUCCESS = 0,
  CNRT_RET_ERR_INVALID = 632007,
  CNRT_RET_ERR_NOMEM = 632008,
  CNRT_RET_ERR_NODEV = 632009,
  CNRT_RET_ERR_SYS = 632011,
  CNRT_RET_ERR_BUSY = 632014,
  CNRT_RET_ERR_UNKNOWN = 999991
} cnrtRet_t;

/* ---- enums ------------------------------------------------------------------------------------------------ */

typedef enum {
  cnrtMemcpyHostToDev = 0,
  cnrtMemcpyDevToDev = 1,
  cnrtMemcpyDevToHost = 2,
  cnrtMemcpyHostToHost = 3,
  cnrtMemcpyPeerToPeer = 4,
  cnrtMemcpyNoDirection = 5,
  CNRT_MEM_TRANS_DIR_HOST2DEV = 0,
  CNRT_MEM_TRANS_DIR_DEV2DEV = 1,
  CNRT_MEM_TRANS_DIR_DEV2HOST = 2,
  CNRT_MEM_TRANS_DIR_HOST2HOST = 3,
  CNRT_MEM_TRANS_DIR_PEER2PEER = 4,
  CNRT_MEM_TRANS_DIR_NODIR = 5
} cnrtMemTransDir_t;

/* Kernel function types: UnionN runs on N clusters (value 4N = cores), Block on one core. */
typedef enum {
  cnrtFuncTypeBlock = 1,
  cnrtFuncTypeBlock0 = 1,
  cnrtFuncTypeBlock1 = 2,
  cnrtFuncTypeUnion1 = 4,
  cnrtFuncTypeUnion2 = 8,
  cnrtFuncTypeUnion4 = 16,
  cnrtFuncTypeUnion8 = 32,
  cnrtFuncTypeUnion16 = 64,
  cnrtFuncTypeMutable = -1,
  CNRT_FUNC_TYPE_BLOCK = 1,
  CNRT_FUNC_TYPE_BLOCK0 = 1,
  CNRT_FUNC_TYPE_BLOCK1 = 2,
  CNRT_FUNC_TYPE_UNION1 = 4,
  CNRT_FUNC_TYPE_UNION2 = 8,
  CNRT_FUNC_TYPE_UNION4 = 16,
  CNRT_FUNC_TYPE_UNION8 = 32,
  CNRT_FUNC_TYPE_UNION16 = 64,
  CNRT_FUNC_TYPE_MUTABLE = -1,
  cnrtJobTypeBlock = 1,
  cnrtJobTypeUnion1 = 4,
  cnrtJobTypeUnion2 = 8,
  cnrtJobTypeUnion4 = 16,
  CNRT_JOB_TYPE_BLOCK = 1,
  CNRT_JOB_TYPE_UNION1 = 4,
  CNRT_JOB_TYPE_UNION2 = 8,
  CNRT_JOB_TYPE_UNION4 = 16
} cnrtFunctionType_t;

typedef cnrtFunctionType_t cnrtJobType_t;

/* What cnrtPointerGetAttributes reports in cnrtPointerAttributes_t.type. */
typedef enum {
  cnrtMemTypeUnregistered = 0,
  cnrtMemTypeHost = 1,
  cnrtMemTypeDevice = 2
} cnrtMemoryType_t;

/* Element types of the host conversion helpers (cnrtCastDataType, cnrtDataTypeSize): the v4 names and the
 * CNRT 5/6 ones, same values. */
typedef enum cnrtDataType {
  CNRT_INVALID = 0x0,
  CNRT_FLOAT16 = 0x12,
  CNRT_FLOAT32 = 0x13,
  CNRT_FLOAT64 = 0x14,
  CNRT_INT4 = 0x20,
  CNRT_INT8 = 0x21,
  CNRT_INT16 = 0x22,
  CNRT_INT32 = 0x23,
  CNRT_INT64 = 0x24,
  CNRT_AUTO = 0x25,
  CNRT_UINT8 = 0x31,
  CNRT_UINT16 = 0x32,
  CNRT_UINT32 = 0x33,
  CNRT_FIX8 = 0x41,
  CNRT_QUANT8 = 0x51,
  CNRT_BOOL = 0x61,
  cnrtInvalid = 0x0,
  cnrtFloat16 = 0x12,
  cnrtFloat32 = 0x13,
  cnrtFloat64 = 0x14,
  cnrtInt4 = 0x20,
  cnrtInt8 = 0x21,
  cnrtInt16 = 0x22,
  cnrtInt32 = 0x23,
  cnrtInt64 = 0x24,
  cnrtAuto = 0x25,
  cnrtUInt8 = 0x31,
  cnrtUInt16 = 0x32,
  cnrtUInt32 = 0x33,
  cnrtFix8 = 0x41,
  cnrtQuant8 = 0x51,
  cnrtBool = 0x61
} cnrtDataType_t;

/* Element types of cnrtCastDataType_V2. */
typedef enum cnrtDataType_V2 {
  cnrtUnknown = 0x0,
  cnrtDouble = 0x1,
  cnrtFloat = 0x2,
  cnrtHalf = 0x3,
  cnrtBfloat = 0x4,
  cnrtUlonglong = 0x11,
  cnrtUint = 0x12,
  cnrtUshort = 0x13,
  cnrtUchar = 0x14,
  cnrtLonglong = 0x21,
  cnrtInt = 0x22,
  cnrtShort = 0x23,
  cnrtChar = 0x24,
  cnrtBoolean = 0x31
} cnrtDataType_V2_t;

/* Rounding of cnrtCastDataType_V2: to nearest even, toward zero, down, up, away from zero, to nearest with ties
 * away from zero. */
typedef enum cnrtRoundingMode {
  cnrtRounding_rn = 0,
  cnrtRounding_rz = 1,
  cnrtRounding_rd = 2,
  cnrtRounding_ru = 3,
  cnrtRounding_ro = 4,
  cnrtRounding_rm = 5,
  cnrtRounding_max = 6
} cnrtRoundingMode_t;

/* v4 host memory kinds of cnrtMallocHost. */
typedef enum {
  CNRT_MEMTYPE_DEFAULT = 0,
  CNRT_MEMTYPE_LOCKED = 1
} cnrtMemType_t;

typedef enum {
  CNRT_NOTIFIER_DEFAULT = 0x0,
  CNRT_NOTIFIER_DISABLE_TIMING_SW = 0x2,
  CNRT_NOTIFIER_DISABLE_TIMING_ALL = 0x4,
  CNRT_NOTIFIER_INTERPROCESS = 0x8
} cnrtNotifierFlags_t;

/* Host wait policies of cnrtSetDeviceFlag (recorded; the simulator's host waits always block). */
typedef enum {
  cnrtDeviceScheduleSpin = 0,
  cnrtDeviceScheduleBlock = 1,
  cnrtDeviceScheduleYield = 2,
  cnrtDeviceScheduleAuto = 3
} cnrtDeviceFlags_t;

typedef enum {
  cnrtAttrComputeCapabilityMajor = 0x01,
  cnrtAttrComputeCapabilityMinor = 0x02,
  cnrtAttrSparseComputingSupported = 0x03,
  cnrtAttrFP16ComputingSupported = 0x04,
  cnrtAttrINT4ComputingSupported = 0x05,
  cnrtAttrINT8ComputingSupported = 0x06,
  cnrtAttrBF16ComputingSupported = 0x07,
  cnrtAttrTF32ComputingSupported = 0x08,
  cnrtAttrComputeMode = 0x09,
  cnrtAttrQueueSize = 0x101,
  cnrtAttrNotifierSize = 0x102,
  cnrtAttrSupportQueuePriorities = 0x103,
  cnrtAttrMaxDimX = 0x201,
  cnrtAttrMaxDimY = 0x202,
  cnrtAttrMaxDimZ = 0x203,
  cnrtAttrMaxClusterCountPerUnionTask = 0x204,
  cnrtAttrClusterCount = 0x205,
  cnrtAttrMcorePerCluster = 0x206,
  cnrtAttrISAVersion = 0x20a,
  cnrtAttrMaxL2CacheSize = 0x301,
  cnrtAttrNramSizePerMcore = 0x302,
  cnrtAttrWramSizePerMcore = 0x303,
  cnrtAttrLmemSizePerMcore = 0x305,
  cnrtAttrSramSizePerMcore = 0x306,
  cnrtAttrAvailableGlobalMemorySize = 0x312,
  cnrtAttrEccEnable = 0x401,
  cnrtAttrIpuClockRate = 0x402,
  cnrtAttrMemClockRate = 0x403,
  cnrtAttrGmemBusWidth = 0x404,
  cnrtAttrTotalMemSize = 0x405,
  cnrtAttrPciBusID = 0x406,
  cnrtAttrPciDeviceID = 0x407,
  cnrtAttrPciDomainID = 0x408
} cnrtDeviceAttr_t;

/* ---- handles and structs ---------------------------------------------------------------------------------- */

typedef struct CNqueue_st *cnrtQueue_t;
typedef struct CNnotifier_st *cnrtNotifier_t;
typedef struct cnrtKernelParamsBuffer_st *cnrtKernelParamsBuffer_t;
typedef struct cnrtQuantizedParam *cnrtQuantizedParam_t;  /* position, scale, offset of a quantized cast */
typedef uint64_t cnrtDev_t;

/* The implicit queues: NULL is the current device's default queue. */
#define cnrtQueuePerThread ((cnrtQueue_t)1)
#define cnrtQueueLegacy ((cnrtQueue_t)2)

/* A host function queued by cnrtInvokeHostFunc. */
typedef void (*cnrtHostFn_t)(void *userData);

typedef struct {
  unsigned int x;
  unsigned int y;
  unsigned int z;
} cnrtDim3_t;

typedef struct {
  cnrtMemoryType_t type;
  int device;
  size_t size;
  void *devicePointer;
  void *hostPointer;
  int cacheMode;
  void *deviceBasePointer;
} cnrtPointerAttributes_t;

typedef struct cnrtUUID_st {
  char uuid[16];
} cnrtUUID_t;

/* Device properties (totalMem in MB, clock rates in kHz, on-chip sizes in bytes). */
typedef struct cnrtDeviceProp_V3 {
  char name[256];
  int totalMem;
  int maxDim[3];
  int ipuClockRate;
  int memClockRate;
  int totalConstMem;
  int major;
  int minor;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int maxL2CacheSize;
  int persistingL2CacheMaxSize;
  int queuePrioritiesSupported;
  int sparseComputingSupported;
  int FP16ComputingSupported;
  int INT4ComputingSupported;
  int INT8ComputingSupported;
  int BF16ComputingSupported;
  int TF32ComputingSupported;
  int maxQueueSize;
  int maxNotifierSize;
  int tinyCoreSupported;
  int codecJPEGSupported;
  int codecH264Supported;
  int codecH265Supported;
  int maxClusterCountPerUnionTask;
  int clusterCount;
  int McorePerCluster;
  int maxQuadrantCount;
  int maxUnionTypePerQuadrant;
  int maxClusterPerUnionLimitTask;
  int ISAVersion;
  int isMultipleTensorProcessor;
  int NramSizePerMcore;
  int WramSizePerMcore;
  int LmemSizePerMcore;
  int SramSizePerMcore;
  int globalMemoryNodeCount;
  int cacheSize;
  int GmemBusWidth;
  int computeMode;
  int MDRMemorySize;
  int availableGlobalMemorySize;
  cnrtUUID_t uuid;
  uint64_t totalGlobalMemSize;
  int reserved[30];
} cnrtDeviceProp_t;

/* ---- initialisation and devices --------------------------------------------------------------------------- */

cnrtRet_t cnrtInit(unsigned int flags);                               /* v4; flags must be 0 */
void cnrtDestroy(void);                                               /* v4; waits for all devices */
cnrtRet_t cnrtGetDeviceCount(unsigned int *count);
cnrtRet_t cnrtSetDevice(int device);
cnrtRet_t cnrtGetDevice(int *device);
cnrtRet_t cnrtGetDeviceHandle(cnrtDev_t *handle, int ordinal);        /* v4 */
cnrtRet_t cnrtSetCurrentDevice(cnrtDev_t device);                      /* v4 */
cnrtRet_t cnrtDeviceGetAttribute(int *value, cnrtDeviceAttr_t attr, int device);
cnrtRet_t cnrtGetDeviceProperties(cnrtDeviceProp_t *prop, int device);
cnrtRet_t cnrtGetDeviceProperties_V3(cnrtDeviceProp_t *prop, int device);
cnrtRet_t cnrtDeviceGetPCIBusId(char *pciBusId, int len, int device);
cnrtRet_t cnrtDeviceGetQueuePriorityRange(int *leastPriority, int *greatestPriority);
cnrtRet_t cnrtDeviceReset(void);
cnrtRet_t cnrtSyncDevice(void);
cnrtRet_t cnrtSetDeviceFlag(unsigned int flags);
cnrtRet_t cnrtGetDeviceFlag(unsigned int *flags);
cnrtRet_t cnrtGetPeerAccessibility(unsigned int *canAccessPeer, int device, int peer);
cnrtRet_t cnrtGetLibVersion(int *major, int *minor, int *patch);
cnrtRet_t cnrtDriverGetVersion(int *major, int *minor, int *patch);

/* ---- errors ----------------------------------------------------------------------------------------------- */

cnrtRet_t cnrtGetLastError(void);                                      /* this thread's last error; resets it */
cnrtRet_t cnrtPeekAtLastError(void);
cnrtRet_t cnrtGetLastErr(void);                                        /* v4 */
const char *cnrtGetErrorName(cnrtRet_t error);
const char *cnrtGetErrorStr(cnrtRet_t error);

/* ---- memory ----------------------------------------------------------------------------------------------- */

cnrtRet_t cnrtMalloc(void **pPtr, size_t bytes);
cnrtRet_t cnrtMallocConstant(void **pPtr, size_t bytes);  /* the same GDRAM as cnrtMalloc; freed by cnrtFree */
cnrtRet_t cnrtFree(void *ptr);                                         /* cnrtFree(NULL) does nothing */
cnrtRet_t cnrtMemAllocAsync(void **pPtr, size_t bytes, cnrtQueue_t queue);
cnrtRet_t cnrtMemFreeAsync(void *ptr, cnrtQueue_t queue);
cnrtRet_t cnrtHostMalloc(void **pPtr, size_t bytes);
cnrtRet_t cnrtMallocHost(void **pPtr, size_t bytes, cnrtMemType_t type); /* v4 */
cnrtRet_t cnrtFreeHost(void *ptr);
cnrtRet_t cnrtMemGetInfo(size_t *free, size_t *total);
cnrtRet_t cnrtPointerGetAttributes(cnrtPointerAttributes_t *attr, const void *ptr);

cnrtRet_t cnrtMemcpy(void *dst, void *src, size_t bytes, cnrtMemTransDir_t dir);
cnrtRet_t cnrtMemcpyAsync(void *dst, void *src, size_t bytes, cnrtQueue_t queue, cnrtMemTransDir_t dir);
cnrtRet_t cnrtMemcpyAsync_V2(void *dst, void *src, size_t bytes, cnrtQueue_t queue, cnrtMemTransDir_t dir);
cnrtRet_t cnrtMemcpyPeer(void *dst, int dstDev, void *src, int srcDev, size_t bytes);
cnrtRet_t cnrtMemcpyPeerAsync(void *dst, int dstDev, void *src, int srcDev, size_t bytes, cnrtQueue_t queue);
cnrtRet_t cnrtMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                       cnrtMemTransDir_t dir);

cnrtRet_t cnrtMemset(void *ptr, int value, size_t bytes);
cnrtRet_t cnrtMemsetAsync(void *ptr, int value, size_t bytes, cnrtQueue_t queue);
cnrtRet_t cnrtMemsetD8(void *ptr, uint8_t value, size_t count);
cnrtRet_t cnrtMemsetD8Async(void *ptr, uint8_t value, size_t count, cnrtQueue_t queue);
cnrtRet_t cnrtMemsetD16(void *ptr, uint16_t value, size_t count);
cnrtRet_t cnrtMemsetD16Async(void *ptr, uint16_t value, size_t count, cnrtQueue_t queue);
cnrtRet_t cnrtMemsetD32(void *ptr, uint32_t value, size_t count);
cnrtRet_t cnrtMemsetD32Async(void *ptr, uint32_t value, size_t count, cnrtQueue_t queue);

/* ---- queues ----------------------------------------------------------------------------------------------- */

cnrtRet_t cnrtQueueCreate(cnrtQueue_t *pQueue);
cnrtRet_t cnrtQueueCreateWithPriority(cnrtQueue_t *pQueue, unsigned int flags, int priority);
cnrtRet_t cnrtQueueDestroy(cnrtQueue_t queue);
cnrtRet_t cnrtQueueSync(cnrtQueue_t queue);
cnrtRet_t cnrtQueueQuery(cnrtQueue_t queue);                          /* cnrtErrorNotReady while busy */
cnrtRet_t cnrtQueueGetPriority(cnrtQueue_t queue, int *priority);
cnrtRet_t cnrtQueueWaitNotifier(cnrtNotifier_t notifier, cnrtQueue_t queue, unsigned int flag);
cnrtRet_t cnrtInvokeHostFunc(cnrtQueue_t queue, cnrtHostFn_t fn, void *userData);
cnrtRet_t cnrtCreateQueue(cnrtQueue_t *pQueue);                        /* v4 */
cnrtRet_t cnrtDestroyQueue(cnrtQueue_t queue);                         /* v4 */
cnrtRet_t cnrtSyncQueue(cnrtQueue_t queue);                            /* v4 */

/* ---- notifiers -------------------------------------------------------------------------------------------- */

cnrtRet_t cnrtNotifierCreate(cnrtNotifier_t *notifier);
cnrtRet_t cnrtNotifierCreateWithFlags(cnrtNotifier_t *notifier, unsigned int flags);
cnrtRet_t cnrtNotifierDestroy(cnrtNotifier_t notifier);
cnrtRet_t cnrtPlaceNotifier(cnrtNotifier_t notifier, cnrtQueue_t queue);
cnrtRet_t cnrtWaitNotifier(cnrtNotifier_t notifier);
cnrtRet_t cnrtQueryNotifier(cnrtNotifier_t notifier);                /* cnrtErrorNotReady until reached */
cnrtRet_t cnrtNotifierElapsedTime(cnrtNotifier_t start, cnrtNotifier_t end, float *ms);  /* host time, ms */
cnrtRet_t cnrtNotifierDuration(cnrtNotifier_t start, cnrtNotifier_t end, float *us);     /* modelled time, us */
cnrtRet_t cnrtCreateNotifier(cnrtNotifier_t *notifier);                /* v4 */
cnrtRet_t cnrtDestroyNotifier(cnrtNotifier_t *notifier);               /* v4: takes the handle's address */

/* ---- kernels ---------------------------------------------------------------------------------------------- */
/* `kernel` is a kernel exported to C by neuware.export_kernel (a BANG kernel written with mlusim.bang, or any
 * Python callable): C code cannot carry MLU machine code of its own. */

cnrtRet_t cnrtInvokeKernel(const void *kernel, cnrtDim3_t dim, cnrtFunctionType_t ktype, void **args,
                           size_t reserved, cnrtQueue_t queue);
cnrtRet_t cnrtGetKernelParamsBuffer(cnrtKernelParamsBuffer_t *params);                      /* v4 */
cnrtRet_t cnrtKernelParamsBufferAddParam(cnrtKernelParamsBuffer_t params, void *data, size_t bytes);
cnrtRet_t cnrtDestroyKernelParamsBuffer(cnrtKernelParamsBuffer_t params);
cnrtRet_t cnrtInvokeKernel_V2(const void *kernel, cnrtDim3_t dim, cnrtKernelParamsBuffer_t params,
                              cnrtFunctionType_t ktype, cnrtQueue_t queue);

/* ---- v4 host conversion helpers ----------------------------------------------------------------------------- */
cnrtRet_t cnrtConvertFloatToHalf(uint16_t *f16, float d);
cnrtRet_t cnrtConvertDoubleToHalf(uint16_t *f16, double d);
cnrtRet_t cnrtConvertHalfToFloat(float *d, uint16_t f16);
cnrtRet_t cnrtConvertHalfToDouble(double *d, uint16_t f16);
int cnrtDataTypeSize(cnrtDataType_t dt);
cnrtRet_t cnrtCastDataType(void *src_addr, cnrtDataType_t src_data_type, void *dst_addr,
                           cnrtDataType_t dst_data_type, int data_num, cnrtQuantizedParam_t param);
cnrtRet_t cnrtCastDataType_V2(void *src_addr, cnrtDataType_V2_t src_data_type, void *dst_addr,
                              cnrtDataType_V2_t dst_data_type, int data_num, cnrtQuantizedParam_t param,
                              cnrtRoundingMode_t round_mode);
/* Quantized casts (float <-> int8/int16/...): int = round(float * scale / 2^pos + offset), saturating. */
cnrtRet_t cnrtCreateQuantizedParam(cnrtQuantizedParam_t *param, int pos, float scale, int offset);
cnrtRet_t cnrtDestroyQuantizedParam(cnrtQuantizedParam_t param);

/* ---- CNRT_CHECK --------------------------------------------------------------------------------------------- */
/* A failed status prints "CNRT error: file:line: call returned name (code): description" on stderr. */
void cnrtCheck(cnrtRet_t result, const char *const func, const char *const file, int const line);
#define CNRT_CHECK(val) cnrtCheck((val), #val, __FILE__, __LINE__)

#ifdef __cplusplus
}
#endif

#endif /* MLUSIM_CNRT_H_ */
