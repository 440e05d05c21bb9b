/*
 * cn_api.h: the CNDrv driver API of mlusim, the software Cambricon MLU (the part programs use next to CNRT).
 *
 * Written for mlusim from Cambricon's public documentation of CNDrv and the open-source code that calls it
 * (mlu-ops, torch_mlu, samples): names, types, signatures and values as there. The implementation is libcndrv.so
 * of mlusim over the `cndrv` Python package, on the same simulated devices as libcnrt: an MLU address (CNaddr) is
 * the address cnrtMalloc returns, a device handle (CNdev) is the device ordinal, and a thread's context decides its
 * device (CNRT's current device follows it). Declared: initialisation and versions, device queries, contexts and
 * shared contexts, device memory and synchronous copies, error strings.
 */
#ifndef MLUSIM_CN_API_H_
#define MLUSIM_CN_API_H_

#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CN_MAJOR_VERSION 2
#define CN_MINOR_VERSION 15
#define CN_PATCH_VERSION 5
#define CN_VERSION (CN_MAJOR_VERSION * 100000 + CN_MINOR_VERSION * 1000 + CN_PATCH_VERSION)

typedef uint64_t cn_uint64_t;
typedef int64_t cn_int64_t;
typedef uint32_t cn_uint32_t;

/* Statuses. */
typedef enum {
  CN_SUCCESS = 0,
  CN_ERROR_NOT_READY = 1,
  CN_ERROR_NOT_INITIALIZED = 100002, /* cnInit was not called (and no CNRT call brought the devices up) */
  CN_ERROR_DEINITIALIZED = 100003,
  CN_ERROR_NO_DEVICE = 100004,
  CN_ERROR_INVALID_DEVICE = 100005,  /* no device has that handle or ordinal */
  CN_ERROR_INVALID_VALUE = 100006,   /* a NULL pointer, a value out of range, a string longer than its buffer */
  CN_ERROR_OPERATING_SYSTEM = 100007,
  CN_ERROR_SYSTEM_NOT_READY = 100008,
  CN_ERROR_SYSTEM_DRIVER_MISMATCH = 100009,
  CN_ERROR_SYSTEM_OUT_OF_MEMORY = 100010,
  CN_ERROR_INVALID_ADDRESS = 100011,
  CN_ERROR_FILE_NOT_FOUND = 100012,
  CN_ERROR_COMPAT_NOT_SUPPORT_ON_SYSTEM = 100013,
  CN_ERROR_INVALID_HANDLE = 100014,
  CN_ERROR_ILLEGAL_STATE = 100015,
  CN_ERROR_ECC_UNCORRECTABLE = 100016,
  CN_OPS_ERROR_NOT_SUPPORTED = 100050,
  CN_OPS_ERROR_NOT_PERMITTED = 100051,
  CN_OPS_ERROR_TIMEOUT = 100052,
  CN_OPS_ERROR_OUT_OF_RESOURCES = 100053,
  CN_QUEUE_ERROR_INVALID = 100060,
  CN_QUEUE_ERROR_OUT_OF_RESOURCES = 100061,
  CN_NOTIFIER_ERROR_INVALID = 100080,
  CN_NOTIFIER_ERROR_OUT_OF_RESOURCES = 100081,
  CN_MEMORY_ERROR_OUT_OF_MEMORY = 100100,
  CN_MEMORY_ERROR_OUT_OF_PROCESS_MAX_MEMORY = 100101,
  CN_MEMORY_ERROR_INVALID_ADDRESS = 100102, /* not an allocated block (unknown, freed, inside a block) */
  CN_INVOKE_ERROR = 100200,
  CN_CONTEXT_ERROR_INVALID = 100201,        /* no context bound to the thread, or a destroyed one */
  CN_CONTEXT_ERROR_OUT_OF_RESOURCES = 100202,
  CN_ERROR_NOT_FOUND = 100301,
  CN_ERROR_INVALID_KERNEL = 100302,
  CN_ERROR_UNKNOWN = 200000
} CNresult;

/* Device attributes (cnDeviceGetAttribute): the values cnrtDeviceGetAttribute answers. */
typedef enum CNdevice_attribute_enum {
  CN_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 0x01,
  CN_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 0x02,
  CN_DEVICE_ATTRIBUTE_SPARSE_COMPUTING_SUPPORTED = 0x03,
  CN_DEVICE_ATTRIBUTE_FP16_COMPUTING_SUPPORTED = 0x04,
  CN_DEVICE_ATTRIBUTE_INT4_COMPUTING_SUPPORTED = 0x05,
  CN_DEVICE_ATTRIBUTE_INT8_COMPUTING_SUPPORTED = 0x06,
  CN_DEVICE_ATTRIBUTE_BF16_COMPUTING_SUPPORTED = 0x07,
  CN_DEVICE_ATTRIBUTE_TF32_COMPUTING_SUPPORTED = 0x08,
  CN_DEVICE_ATTRIBUTE_COMPUTE_MODE = 0x09,
  CN_DEVICE_ATTRIBUTE_MAX_QUEUE_COUNT = 0x101,
  CN_DEVICE_ATTRIBUTE_MAX_NOTIFIER_COUNT = 0x102,
  CN_DEVICE_ATTRIBUTE_QUEUE_PRIORITIES_SUPPORTED = 0x103,
  CN_DEVICE_ATTRIBUTE_MAX_BLOCK_TASK_DIM_X = 0x201,
  CN_DEVICE_ATTRIBUTE_MAX_BLOCK_TASK_DIM_Y = 0x202,
  CN_DEVICE_ATTRIBUTE_MAX_BLOCK_TASK_DIM_Z = 0x203,
  CN_DEVICE_ATTRIBUTE_MAX_CLUSTER_COUNT_PER_UNION_TASK = 0x204,
  CN_DEVICE_ATTRIBUTE_MAX_CLUSTER_COUNT = 0x205,
  CN_DEVICE_ATTRIBUTE_MAX_CORE_COUNT_PER_CLUSTER = 0x206,
  CN_DEVICE_ATTRIBUTE_MLU_ISA_VERSION = 0x20a,
  CN_DEVICE_ATTRIBUTE_MAX_L2_CACHE_SIZE = 0x301,
  CN_DEVICE_ATTRIBUTE_NRAM_SIZE_PER_CORE = 0x302,
  CN_DEVICE_ATTRIBUTE_WEIGHT_RAM_SIZE_PER_CORE = 0x303,
  CN_DEVICE_ATTRIBUTE_LOCAL_MEMORY_SIZE_PER_CORE = 0x305,
  CN_DEVICE_ATTRIBUTE_MAX_SHARED_RAM_SIZE_PER_CLUSTER = 0x306,
  CN_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 0x309, /* 0: the simulator has no persisting L2 lines */
  CN_DEVICE_ATTRIBUTE_AVAILABLE_GLOBAL_MEMORY_SIZE = 0x312,
  CN_DEVICE_ATTRIBUTE_ECC_ENABLED = 0x401,
  CN_DEVICE_ATTRIBUTE_CLUSTER_CLOCK_RATE = 0x402,
  CN_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 0x403,
  CN_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 0x404,
  CN_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_TOTAL_SIZE = 0x405,
  CN_DEVICE_ATTRIBUTE_PCI_BUS_ID = 0x406,
  CN_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 0x407,
  CN_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 0x408
} CNdevice_attribute;

/* Context schedule flags (cnCtxCreate). */
typedef enum CNCtxSchedEnum {
  CN_CTX_SCHED_SYNC_SPIN = 0,
  CN_CTX_SCHED_SYNC_WAIT = 1,
  CN_CTX_SCHED_SYNC_YIELD = 2,
  CN_CTX_SCHED_SYNC_AUTO = 3
} CNCtxSched;

/* The classes of kernel tasks; the value is the task's core count. */
typedef enum cn_kernel_class {
  CN_KERNEL_CLASS_BLOCK = 1,
  CN_KERNEL_CLASS_UNION = 4,
  CN_KERNEL_CLASS_UNION2 = 8,
  CN_KERNEL_CLASS_UNION4 = 16,
  CN_KERNEL_CLASS_UNION8 = 32,
  CN_KERNEL_CLASS_UNION16 = 64,
  CN_KERNEL_CLASS_NONE = 0xFF
} KernelClass;

/* Per-thread context configuration (cnGetCtxConfigParam / cnSetCtxConfigParam). */
typedef enum cn_ctx_config_type {
  CN_CTX_CONFIG_VISIBLE_CLUSTER = 0,     /* the visible cluster bitmap (all of the board's by default) */
  CN_CTX_CONFIG_VISIBLE_CLUSTER_NUM = 1, /* their number (read-only) */
  CN_CTX_CONFIG_UNION_LIMIT = 2,         /* the widest KernelClass (the board's widest union by default) */
  CN_CTX_CONFIG_NUM = 3
} CNctxConfigParamType;

typedef union cn_ctx_config_param {
  cn_uint64_t visibleCluster;
  cn_uint64_t visibleClusterNumber;
  KernelClass unionLimit;
} CNctxConfigParam;

/* The pointer attributes cnGetMemAttribute answers. */
typedef enum CNmem_attribute_enum {
  CN_MEM_ATTRIBUTE_DEVICE_ORDINAL = 0x7,   /* int */
  CN_MEM_ATTRIBUTE_RANGE_START_ADDR = 0x11, /* CNaddr: the start of the block */
  CN_MEM_ATTRIBUTE_RANGE_SIZE = 0x12,      /* cn_uint64_t: the block's size */
  CN_MEM_ATTRIBUTE_ISLINEAR = 0x18         /* int: 0 (no linear mapping window) */
} CNmem_attribute;

typedef cn_uint64_t CNaddr;              /* an MLU address: the simulator's device address */
typedef cn_uint64_t CNdev;               /* a device handle: the device ordinal */
typedef struct CNcontext_st *CNcontext;  /* a device context */
typedef struct CNqueue_st *CNqueue;      /* a queue: the same handle as cnrtQueue_t */

/* Errors. */
CNresult cnGetErrorString(CNresult error, const char **pStr);
CNresult cnGetErrorName(CNresult error, const char **pStr);

/* Initialisation and versions. */
CNresult cnInit(unsigned int flags);
CNresult cnDriverGetVersion(int *major, int *minor, int *patch);
CNresult cnGetLibVersion(int *major, int *minor, int *patch);
CNresult cnGetDriverVersion(int *major, int *minor, int *patch);

/* Devices. */
CNresult cnDeviceGet(CNdev *pdev, int ordinal);
CNresult cnDeviceGetCount(int *pcount);
CNresult cnDeviceGetName(char *name, unsigned int len, CNdev dev);
CNresult cnDeviceTotalMem(cn_uint64_t *pbytes, CNdev dev);
CNresult cnDeviceGetAttribute(int *pi, CNdevice_attribute attrib, CNdev dev);
CNresult cnDeviceGetPCIBusId(char *pciBusId, int len, CNdev dev);
CNresult cnDeviceGetUuidStr(char *uuid_str, int len, CNdev dev);

/* Contexts. */
CNresult cnCtxCreate(CNcontext *pcontext, unsigned int flags, CNdev dev);
CNresult cnCtxDestroy(CNcontext context);
CNresult cnCtxGetCurrent(CNcontext *pcontext);
CNresult cnCtxSetCurrent(CNcontext context);
CNresult cnCtxGetDevice(CNdev *pdev);
CNresult cnCtxGetFlags(unsigned int *pflags);
CNresult cnCtxSync(void);
CNresult cnSharedContextAcquire(CNcontext *pctx, CNdev dev);
CNresult cnSharedContextRelease(CNdev dev);
CNresult cnGetCtxConfigParam(CNcontext context, CNctxConfigParamType type, CNctxConfigParam *param);
CNresult cnSetCtxConfigParam(CNcontext context, CNctxConfigParamType type, CNctxConfigParam *param);
CNresult cnGetCtxMaxParallelUnionTasks(CNcontext context, KernelClass c, int *number);
CNresult cnQueueGetContext(CNqueue hqueue, CNcontext *pctx);

/* Memory. */
CNresult cnMemGetInfo(cn_uint64_t *pfreeBytes, cn_uint64_t *ptotalBytes);
CNresult cnMalloc(CNaddr *pmluAddr, cn_uint64_t bytes);
CNresult cnFree(CNaddr mluAddr);
CNresult cnMallocConstant(CNaddr *pmluAddr, cn_uint64_t bytes);
CNresult cnGetMemAttribute(void *data, CNmem_attribute attribute, CNaddr ptr);
CNresult cnMemcpyHtoD(CNaddr dstAddr, const void *srcAddr, cn_uint64_t bytes);
CNresult cnMemcpyDtoH(void *dstAddr, CNaddr srcAddr, cn_uint64_t bytes);
CNresult cnMemcpyDtoD(CNaddr dstAddr, CNaddr srcAddr, cn_uint64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* MLUSIM_CN_API_H_ */
