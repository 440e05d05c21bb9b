/*
 * cncl.h: the CNCL collectives API of mlusim, the software Cambricon MLU.
 *
 * Written for mlusim from Cambricon's public documentation of CNCL 1.25: names, types, signatures and values as
 * there; the implementation is libcncl.so of mlusim over the `cncl` Python package. Communicators of one clique may
 * live in one process or in several processes of one host (after fork(), or with the clique id handed over in a
 * file or the environment). Buffers are device pointers; queues are cnrtQueue_t (NULL: the default queue).
 */
#ifndef MLUSIM_CNCL_H_
#define MLUSIM_CNCL_H_

#define CNCL_MAJOR_VERSION 1
#define CNCL_MINOR_VERSION 25
#define CNCL_PATCH_VERSION 0

#ifndef CNCL_VERSION
#define CNCL_VERSION (CNCL_MAJOR_VERSION * 10000 + CNCL_MINOR_VERSION * 100 + CNCL_PATCH_VERSION)
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "cnrt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  CNCL_RET_SUCCESS = 0x0,
  CNCL_RET_ERR_INTERNAL = 0x01,
  CNCL_RET_ERR_UNSUPPORTED = 0x11,
  CNCL_RET_ERR_NULL_POINTER = 0x21,
  CNCL_RET_ERR_BUILD_RING = 0x31,
  CNCL_RET_ERR_BUILD_TREE = 0x41,
  CNCL_RET_ERR_INIT = 0x51,
  CNCL_RET_ERR_NOT_INIT = 0x61,
  CNCL_RET_ERR_REINIT = 0x71,
  CNCL_RET_ERR_NO_ALGO = 0x81,
  CNCL_RET_ERR_INVALID_VERSION = 0x91,
  CNCL_RET_ERR_SYSTEM = 0x02,
  CNCL_RET_ERR_SYS_MALLOC = 0x12,
  CNCL_RET_ERR_SYS_SOCKET = 0x22,
  CNCL_RET_ERR_SYS_IBV = 0x32,
  CNCL_RET_ERR_MLU_RUNTIME = 0x03,
  CNCL_RET_ERR_CNRT_DEVICE = 0x13,
  CNCL_RET_ERR_CNRT_MEMCOPY = 0x23,
  CNCL_RET_ERR_CNRT_MALLOC = 0x33,
  CNCL_RET_ERR_MLU_DEVICE = 0x04,
  CNCL_RET_ERR_CNDEV_NODE = 0x14,
  CNCL_RET_ERR_CNDEV_RELATIONSHIP = 0x24,
  CNCL_RET_ERR_MLU_INNETWORK_COMPUTE = 0x05,
  CNCL_RET_ERR_CNLINC_TASK = 0x15,
  CNCL_RET_ERR_CNLINC_WR = 0x25,
  CNCL_RET_ERR_CNLINC_KERNEL = 0x35,
  CNCL_RET_ASYNC_IN_PROGRESS = 0x06,
  CNCL_RET_ASYNC_ERROR = 0x16,
  CNCL_RET_ASYNC_UNKNOWN_ERROR = 0x26,
  CNCL_RET_ERR_ARGUMENTS = 0x07,
  CNCL_RET_ERR_MLU_ALLOCATE = 0x08,
  CNCL_RET_ERR_MLU_DEALLOCATE = 0x18,
  CNCL_RET_IB_RECV_NOTREADY = 0x09
} cnclResult_t;

typedef enum {
  cnclInvalid = 0x0,
  cnclHalf = 0x10,
  cnclFloat16 = 0x10,
  cnclBfloat16 = 0x11,
  cnclFloat = 0x12,
  cnclFloat32 = 0x12,
  cnclInt8 = 0x20,
  cnclChar = 0x20,
  cnclInt16 = 0x21,
  cnclInt = 0x22,
  cnclInt32 = 0x22,
  cnclInt64 = 0x23,
  cnclUint8 = 0x30,
  cnclUint16 = 0x31,
  cnclUint32 = 0x32,
  cnclUint64 = 0x33
} cnclDataType_t;

typedef enum {
  cnclSum = 0,
  cnclProd = 1,
  cnclMax = 2,
  cnclMin = 3
} cnclReduceOp_t;

typedef enum {
  CNCL_PRIORITY_DEFAULT = 0x0,
  CNCL_PRIORITY_HIGH = 0x10,
  CNCL_PRIORITY_HIGH_FOR_ONCE = 0x11
} cnclPriority_t;

typedef struct cnclComm *cnclComm_t;

#define CNCL_CLIQUE_ID_BYTES_SIZE 128

/* The id that names a clique; the same bytes in every process of the clique. */
struct cnclCliqueId {
  char data[CNCL_CLIQUE_ID_BYTES_SIZE];
  uint64_t hash;
};
typedef struct cnclCliqueId cnclCliqueId;
typedef struct cnclCliqueId *cnclCliqueId_t;

struct cnclCommConfig {
  cnclPriority_t priority;
};
typedef struct cnclCommConfig cnclCommConfig;
typedef struct cnclCommConfig *cnclCommConfig_t;

/* Prints the failing call and its message, then exits (as the CNCL documentation's examples use it). */
#define CNCL_CHECK(call)                                                                                \
  do {                                                                                                  \
    cnclResult_t cncl_check_result_ = (call);                                                           \
    if (cncl_check_result_ != CNCL_RET_SUCCESS) {                                                       \
      printf("[%s:%d] CNCL error, msg: %s, code: %#x\n", __FILE__, __LINE__,                            \
             cnclGetErrorStr(cncl_check_result_), (unsigned)cncl_check_result_);                        \
      exit(1);                                                                                          \
    }                                                                                                   \
  } while (0)

/* ---- communicators ---------------------------------------------------------------------------------------- */

/* clique_id NULL: every rank lives in this process (num_comm == nrank). */
cnclResult_t cnclInitComms(cnclComm_t *comms, int num_comm, const int *dev_list, const int *rank_list, int nrank,
                           const cnclCliqueId_t clique_id);
cnclResult_t cnclGetCliqueId(cnclCliqueId_t clique_id);
cnclResult_t cnclDestroyComms(cnclComm_t *comms, int num_comm);
cnclResult_t cnclFreeComm(cnclComm_t comm);
cnclResult_t cnclAbortComm(cnclComm_t comm);
cnclResult_t cnclSetCommConfig(cnclComm_t comm, const cnclCommConfig_t config);
cnclResult_t cnclGetCommCount(int *count, const cnclComm_t comm);
cnclResult_t cnclGetCommRank(int *rank, const cnclComm_t comm);
cnclResult_t cnclGetCommDevice(int *device, const cnclComm_t comm);

/* ---- collectives (queued on `queue`) ---------------------------------------------------------------------- */

cnclResult_t cnclBcast(void *buffer, size_t count, cnclDataType_t data_type, int root, cnclComm_t comm,
                       cnrtQueue_t queue);
cnclResult_t cnclBroadcast(const void *send_buffer, void *recv_buffer, size_t count, cnclDataType_t data_type,
                           int root, cnclComm_t comm, cnrtQueue_t queue);
cnclResult_t cnclAllGather(const void *send_buffer, void *recv_buffer, size_t count, cnclDataType_t data_type,
                           cnclComm_t comm, cnrtQueue_t queue);
cnclResult_t cnclReduce(const void *send_buffer, void *recv_buffer, size_t count, cnclDataType_t data_type,
                        cnclReduceOp_t reduce_op, int root, cnclComm_t comm, cnrtQueue_t queue);
cnclResult_t cnclAllReduce(const void *send_buffer, void *recv_buffer, size_t count, cnclDataType_t data_type,
                           cnclReduceOp_t reduce_op, cnclComm_t comm, cnrtQueue_t queue);
cnclResult_t cnclReduceScatter(const void *send_buffer, void *recv_buffer, size_t count, cnclDataType_t data_type,
                               cnclReduceOp_t reduce_op, cnclComm_t comm, cnrtQueue_t queue);
/* One buffer, count and type per rank (the arrays have the clique's number of ranks). */
cnclResult_t cnclAlltoAllv(const void **send_buffers, uint32_t *send_counts, cnclDataType_t *send_types,
                           void **recv_buffers, uint32_t *recv_counts, cnclDataType_t *recv_types,
                           cnclComm_t comm, cnrtQueue_t queue);
cnclResult_t cnclAlltoAll(const void *send_buffer, void *recv_buffer, size_t count, cnclDataType_t data_type,
                          cnclComm_t comm, cnrtQueue_t queue);

/* ---- point to point --------------------------------------------------------------------------------------- */

cnclResult_t cnclRecv(void *buffer, const size_t count, cnclDataType_t data_type, const int source,
                      const cnclComm_t comm, cnrtQueue_t queue);
cnclResult_t cnclSend(void *buffer, const size_t count, cnclDataType_t data_type, const int dest,
                      const cnclComm_t comm, cnrtQueue_t queue);
cnclResult_t cnclGroupStart(void);
cnclResult_t cnclGroupEnd(void);

/* ---- errors and version ----------------------------------------------------------------------------------- */

const char *cnclGetErrorStr(cnclResult_t ret);
cnclResult_t cnclGetCommAsyncError(const cnclComm_t comm);
cnclResult_t cnclGetLibVersion(int *major, int *minor, int *patch);

#ifdef __cplusplus
}
#endif

#endif /* MLUSIM_CNCL_H_ */
