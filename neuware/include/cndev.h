/*
 * cndev.h: the CNDev device-management API of mlusim, the software Cambricon MLU.
 *
 * Written for mlusim from Cambricon's public documentation and open-source users of CNDev (device plugins,
 * exporters): the names, types, struct layouts and values of the queries programs make. The implementation is
 * libcndev.so of mlusim over the `cndev` Python package: answers come from the simulated boards. Only what the
 * simulator can answer is declared (no temperature, power, fan or utilisation queries). A device handle is the
 * device ordinal. Every query but cndevGetErrorString, cndevGetLastError and cndevGetLibVersion needs cndevInit
 * first. In each result struct, `version` is the caller's input (one of CNDEV_VERSION_*) and is left as set.
 */
#ifndef MLUSIM_CNDEV_H_
#define MLUSIM_CNDEV_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CNDEV_VERSION_1 1
#define CNDEV_VERSION_2 2
#define CNDEV_VERSION_3 3
#define CNDEV_VERSION_4 4
#define CNDEV_VERSION_5 5
#define CNDEV_VERSION_6 6

#define CNDEV_UUID_SIZE 37

/* Statuses. */
typedef enum {
  CNDEV_SUCCESS = 0,
  CNDEV_ERROR_NO_DRIVER = 1,
  CNDEV_ERROR_LOW_DRIVER_VERSION = 2,
  CNDEV_ERROR_UNSUPPORTED_API_VERSION = 3,
  CNDEV_ERROR_UNINITIALIZED = 4,      /* cndevInit was not called (or cndevRelease was) */
  CNDEV_ERROR_INVALID_ARGUMENT = 5,   /* a NULL pointer, a value out of range */
  CNDEV_ERROR_INVALID_DEVICE_ID = 6,  /* no device has that handle */
  CNDEV_ERROR_UNKNOWN = 7,
  CNDEV_ERROR_MALLOC = 8,
  CNDEV_ERROR_INSUFFICIENT_SPACE = 9,
  CNDEV_ERROR_NOT_SUPPORTED = 10,
  CNDEV_ERROR_INVALID_LINK = 11,
  CNDEV_ERROR_NO_DEVICES = 12,
  CNDEV_ERROR_NO_PERMISSION = 13,
  CNDEV_ERROR_NOT_FOUND = 14,
  CNDEV_ERROR_IN_USE = 15,
  CNDEV_ERROR_DUPLICATE = 16,
  CNDEV_ERROR_TIMEOUT = 17,
  CNDEV_ERROR_IN_PROBLEM = 18
} cndevRet_t;

/* Card families (cndevGetCardName). */
typedef enum {
  CNDEV_DEVICE_TYPE_MLU100 = 0,
  CNDEV_DEVICE_TYPE_MLU270 = 1,
  CNDEV_DEVICE_TYPE_MLU220_M2 = 16,
  CNDEV_DEVICE_TYPE_MLU220_EDGE = 17,
  CNDEV_DEVICE_TYPE_MLU220_EVB = 18,
  CNDEV_DEVICE_TYPE_MLU220_M2i = 19,
  CNDEV_DEVICE_TYPE_MLU290 = 20,
  CNDEV_DEVICE_TYPE_MLU370 = 23,
  CNDEV_DEVICE_TYPE_MLU365 = 24,
  CNDEV_DEVICE_TYPE_CE3226 = 25,
  CNDEV_DEVICE_TYPE_MLU590 = 26,
  CNDEV_DEVICE_TYPE_MLU585 = 27,
  CNDEV_DEVICE_TYPE_MLU580 = 30,
  CNDEV_DEVICE_TYPE_MLU570 = 31
} cndevNameEnum_t;

typedef int cndevDevice_t; /* a device handle: the device ordinal */

typedef struct {
  int version;
  unsigned int number; /* devices */
} cndevCardInfo_t;

typedef struct {
  int version;
  cndevNameEnum_t id;
} cndevCardName_t;

typedef struct {
  int version;
  int count;
} cndevCardCoreCount_t;

typedef struct {
  int version;
  int count;
} cndevCardClusterCount_t;

/* Memory sizes in MB. */
typedef struct {
  int64_t physicalMemoryTotal;
  int64_t physicalMemoryUsed;
  int64_t reservedMemory;
  int64_t virtualMemoryTotal;
  int64_t virtualMemoryUsed;
  uint64_t globalMemory;
  uint64_t reserved[16];
} cndevMemoryInfoV2_t;

typedef struct {
  int version;
  uint8_t uuid[CNDEV_UUID_SIZE]; /* NUL-terminated text */
  uint64_t ncsUUID64;
} cndevUUID_t;

typedef struct {
  uint32_t subsystemId;
  uint32_t deviceId;
  uint16_t vendor;
  uint16_t subsystemVendor;
  uint32_t domain;
  uint32_t bus;
  uint32_t device;
  uint32_t function;
  uint16_t moduleId;
  uint16_t slotId;
  uint32_t reserved[8];
} cndevPCIeInfoV2_t;

typedef struct {
  int version;
  unsigned int libMajorVersion;
  unsigned int libMinorVersion;
  unsigned int libBuildVersion;
} cndevLibVersionInfo_t;

typedef struct {
  int version;
  unsigned int mcuMajorVersion;
  unsigned int mcuMinorVersion;
  unsigned int mcuBuildVersion;
  unsigned int driverMajorVersion;
  unsigned int driverMinorVersion;
  unsigned int driverBuildVersion;
} cndevVersionInfo_t;

/* The board's published figures: GDRAM bus width (bits) and bandwidth (GB/s, integer part and two decimals). */
typedef struct {
  int version;
  uint32_t dataWidth;
  uint32_t bandWidth;
  uint32_t bandWidthDecimal;
} cndevDDRInfo_t;

#define CNDEV_MLU_CLUSTER_FREQUENCY_COUNT 20

/* Clocks in MHz (the simulated boards run at one fixed clock); ddrFreq is the GDRAM transfer rate in MT/s. */
typedef struct {
  int version;
  int boardFreq;
  int ddrFreq;
  uint8_t overtempDfsFlag;
  uint8_t fastDfsFlag;
  uint16_t mluClusterFreqCount;
  uint16_t mluClusterFreq[CNDEV_MLU_CLUSTER_FREQUENCY_COUNT];
  int boardDefaultFreq;
  int boardFreqArange[2];
} cndevFrequencyInfo_t;

/* Peak MACs (tensor) and operations (vector: 0, not in the board catalog) per cycle per core. */
typedef struct {
  uint32_t version;
  uint64_t int4Tensor;
  uint64_t int8Tensor;
  uint64_t int16Tensor;
  uint64_t fp16Tensor;
  uint64_t bf16Tensor;
  uint64_t fp32Tensor;
  uint64_t fp16Vector;
  uint64_t bf16Vector;
  uint64_t fp32Vector;
  uint64_t int8Vector;
  uint64_t int16Vector;
} cndevDeviceMaxPerformance_t;

cndevRet_t cndevInit(int reserved);
cndevRet_t cndevRelease(void);
const char *cndevGetErrorString(cndevRet_t errorId);
cndevRet_t cndevGetLastError(void);
cndevRet_t cndevGetLibVersion(cndevLibVersionInfo_t *libVerInfo);
cndevRet_t cndevGetVersionInfo(cndevVersionInfo_t *versInfo, cndevDevice_t device);
cndevRet_t cndevGetDeviceCount(cndevCardInfo_t *cardNum);
cndevRet_t cndevGetDeviceHandleByIndex(int index, cndevDevice_t *handle);
cndevRet_t cndevGetCardName(cndevCardName_t *cardName, cndevDevice_t device);
const char *cndevGetCardNameString(cndevNameEnum_t cardName);
const char *cndevGetCardNameStringByDevId(cndevDevice_t device);
cndevRet_t cndevGetMemoryUsageV2(cndevMemoryInfoV2_t *memInfo, cndevDevice_t device);
cndevRet_t cndevGetCoreCount(cndevCardCoreCount_t *cardCoreCount, cndevDevice_t device);
cndevRet_t cndevGetClusterCount(cndevCardClusterCount_t *clusCount, cndevDevice_t device);
cndevRet_t cndevGetUUID(cndevUUID_t *uuidInfo, cndevDevice_t device);
cndevRet_t cndevGetPCIeInfoV2(cndevPCIeInfoV2_t *deviceInfo, cndevDevice_t device);
cndevRet_t cndevGetDDRInfo(cndevDDRInfo_t *ddrinfo, cndevDevice_t device);
cndevRet_t cndevGetFrequencyInfo(cndevFrequencyInfo_t *freqInfo, cndevDevice_t device);
cndevRet_t cndevGetDeviceMaxPerformance(cndevDeviceMaxPerformance_t *maxPerformance, cndevDevice_t device);

/* Exits with the status's description when a CNDev call fails. */
#define cndevCheckErrors(call)                                                                               \
  do {                                                                                                       \
    cndevRet_t cndev_check_status_ = (call);                                                                 \
    if (cndev_check_status_ != CNDEV_SUCCESS) {                                                              \
      fprintf(stderr, "cndevCheckErrors(%d): %s, from file <%s>, line %i.\n", (int)cndev_check_status_,       \
              cndevGetErrorString(cndev_check_status_), __FILE__, __LINE__);                                 \
      exit(1);                                                                                               \
    }                                                                                                        \
  } while (0)

#ifdef __cplusplus
}
#endif

#endif /* MLUSIM_CNDEV_H_ */
