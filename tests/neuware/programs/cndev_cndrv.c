/* cndev.h and cn_api.h from C: CNDev's device queries and CNDrv's devices, contexts and memory, checked against
 * what cnrt.h reports for the same simulated devices, with the status codes of bad calls. */
#include <stdint.h>

#include <cn_api.h>
#include <cndev.h>

#include "check.h"

static void uuid_text(const char bytes[16], char text[37]) {
  const char *digits = "0123456789abcdef";
  int at = 0;
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text[at++] = '-';
    text[at++] = digits[(bytes[i] >> 4) & 0xf];
    text[at++] = digits[bytes[i] & 0xf];
  }
  text[at] = '\0';
}

/* Before anything brings the devices up, CNDrv needs cnInit. */
static void driver_before_init(void) {
  int count = -1;
  FAILS_WITH(cnDeviceGetCount(&count), CN_ERROR_NOT_INITIALIZED, "cnInit");
  FAILS_WITH(cnInit(1), CN_ERROR_INVALID_VALUE, "flags");
  OK(cnInit(0));
  OK(cnDeviceGetCount(&count));
  EXPECT(count >= 1, "count %d", count);
}

static void cndev_queries(const cnrtDeviceProp_t *prop, unsigned int devices) {
  cndevCardInfo_t info;
  info.version = CNDEV_VERSION_5;
  EXPECT(cndevGetDeviceCount(&info) == CNDEV_ERROR_UNINITIALIZED, "a query before cndevInit");
  EXPECT(cndevGetLastError() == CNDEV_ERROR_UNINITIALIZED, "last error %d", (int)cndevGetLastError());
  OK(cndevInit(0));
  OK(cndevGetDeviceCount(&info));
  EXPECT(info.number == devices && info.version == CNDEV_VERSION_5, "number %u version %d", info.number,
         info.version);
  EXPECT(cndevGetDeviceCount(NULL) == CNDEV_ERROR_INVALID_ARGUMENT, "NULL cardNum");

  cndevDevice_t handle = -1;
  OK(cndevGetDeviceHandleByIndex(0, &handle));
  EXPECT(handle == 0, "handle %d", handle);
  EXPECT(cndevGetDeviceHandleByIndex((int)devices, &handle) == CNDEV_ERROR_INVALID_DEVICE_ID, "index = count");
  EXPECT(cndevGetLastError() == CNDEV_ERROR_INVALID_DEVICE_ID, "last error %d", (int)cndevGetLastError());
  EXPECT(strstr(cndevGetErrorString(CNDEV_ERROR_INVALID_DEVICE_ID), "Invalid device ID") != NULL, "%s",
         cndevGetErrorString(CNDEV_ERROR_INVALID_DEVICE_ID));
  EXPECT(cndevGetDeviceHandleByIndex(0, NULL) == CNDEV_ERROR_INVALID_ARGUMENT, "NULL handle");

  cndevCardName_t name;
  name.version = CNDEV_VERSION_5;
  OK(cndevGetCardName(&name, handle));
  const char *family = cndevGetCardNameString(name.id);
  EXPECT(family != NULL && strncmp(prop->name, family, strlen(family)) == 0, "family %s of board %s", family,
         prop->name);
  EXPECT(strcmp(cndevGetCardNameStringByDevId(handle), prop->name) == 0, "%s", cndevGetCardNameStringByDevId(0));
  EXPECT(cndevGetCardNameStringByDevId(99) == NULL, "a name for device 99");
  EXPECT(cndevGetCardName(&name, 99) == CNDEV_ERROR_INVALID_DEVICE_ID, "device 99");

  cndevCardCoreCount_t cores;
  cndevCardClusterCount_t clusters;
  cores.version = clusters.version = CNDEV_VERSION_5;
  OK(cndevGetCoreCount(&cores, handle));
  OK(cndevGetClusterCount(&clusters, handle));
  EXPECT(clusters.count == prop->clusterCount && cores.count == prop->clusterCount * prop->McorePerCluster,
         "clusters %d cores %d", clusters.count, cores.count);

  cndevMemoryInfoV2_t before, after;
  OK(cndevGetMemoryUsageV2(&before, handle));
  EXPECT(before.physicalMemoryTotal == prop->totalMem, "total %lld MB, cnrt says %d",
         (long long)before.physicalMemoryTotal, prop->totalMem);
  void *block;
  OK(cnrtMalloc(&block, 3 << 20));
  OK(cndevGetMemoryUsageV2(&after, handle));
  EXPECT(after.physicalMemoryUsed >= before.physicalMemoryUsed + 3, "used %lld MB after 3 MB more than %lld",
         (long long)after.physicalMemoryUsed, (long long)before.physicalMemoryUsed);
  OK(cnrtFree(block));

  cndevUUID_t uuid;
  char expected[37];
  uuid.version = CNDEV_VERSION_5;
  OK(cndevGetUUID(&uuid, handle));
  uuid_text(prop->uuid.uuid, expected);
  EXPECT(strcmp((const char *)uuid.uuid, expected) == 0, "cndev %s, cnrt %s", (const char *)uuid.uuid, expected);

  cndevPCIeInfoV2_t pcie;
  OK(cndevGetPCIeInfoV2(&pcie, handle));
  EXPECT(pcie.vendor == 0xCABC && (int)pcie.bus == prop->pciBusID && (int)pcie.domain == prop->pciDomainID,
         "vendor %x bus %u", pcie.vendor, pcie.bus);

  int major, minor, patch;
  cndevVersionInfo_t version;
  OK(cnrtDriverGetVersion(&major, &minor, &patch));
  OK(cndevGetVersionInfo(&version, handle));
  EXPECT((int)version.driverMajorVersion == major && (int)version.driverMinorVersion == minor &&
         (int)version.driverBuildVersion == patch, "driver %u.%u", version.driverMajorVersion,
         version.driverMinorVersion);

  OK(cndevRelease());
  EXPECT(cndevGetCoreCount(&cores, handle) == CNDEV_ERROR_UNINITIALIZED, "a query after cndevRelease");
  EXPECT(cndevRelease() == CNDEV_ERROR_UNINITIALIZED, "a second cndevRelease");
  cndevLibVersionInfo_t lib;
  OK(cndevGetLibVersion(&lib)); /* needs no cndevInit */
  EXPECT(lib.libMajorVersion > 0, "lib %u", lib.libMajorVersion);
}

static void driver_devices(const cnrtDeviceProp_t *prop, unsigned int devices) {
  CNdev dev = 99;
  OK(cnDeviceGet(&dev, 0));
  EXPECT(dev == 0, "dev %llu", (unsigned long long)dev);
  FAILS_WITH(cnDeviceGet(&dev, (int)devices), CN_ERROR_INVALID_DEVICE, "ordinal");
  FAILS_WITH(cnDeviceGet(NULL, 0), CN_ERROR_INVALID_VALUE, "pdev");

  char name[256] = "untouched";
  OK(cnDeviceGetName(name, sizeof name, dev));
  EXPECT(strcmp(name, prop->name) == 0, "name %s", name);
  strcpy(name, "untouched");
  FAILS_WITH(cnDeviceGetName(name, 3, dev), CN_ERROR_INVALID_VALUE, "len");
  EXPECT(strcmp(name, "untouched") == 0, "a failed call wrote %s", name);

  int clusters = -1, cnrt_clusters = -2;
  OK(cnDeviceGetAttribute(&clusters, CN_DEVICE_ATTRIBUTE_MAX_CLUSTER_COUNT, dev));
  OK(cnrtDeviceGetAttribute(&cnrt_clusters, cnrtAttrClusterCount, 0));
  EXPECT(clusters == cnrt_clusters && clusters == prop->clusterCount, "clusters %d", clusters);
  FAILS_WITH(cnDeviceGetAttribute(&clusters, (CNdevice_attribute)0x999, dev), CN_ERROR_INVALID_VALUE,
             "argument 'attrib'");
  FAILS_WITH(cnDeviceGetAttribute(&clusters, CN_DEVICE_ATTRIBUTE_MAX_CLUSTER_COUNT, 99), CN_ERROR_INVALID_DEVICE,
             "device 99");

  cn_uint64_t total = 0;
  size_t cnrt_free, cnrt_total;
  OK(cnDeviceTotalMem(&total, dev));
  OK(cnrtMemGetInfo(&cnrt_free, &cnrt_total));
  EXPECT(total == cnrt_total, "total %llu, cnrt %zu", (unsigned long long)total, cnrt_total);

  char uuid[40], expected[37], bus[16];
  OK(cnDeviceGetUuidStr(uuid, sizeof uuid, dev));
  uuid_text(prop->uuid.uuid, expected);
  EXPECT(strcmp(uuid, expected) == 0, "uuid %s, cnrt %s", uuid, expected);
  OK(cnDeviceGetPCIBusId(bus, sizeof bus, dev));
  char expected_bus[16];
  snprintf(expected_bus, sizeof expected_bus, "%04x:%02x:%02x.0", prop->pciDomainID, prop->pciBusID,
           prop->pciDeviceID);
  EXPECT(strcmp(bus, expected_bus) == 0, "bus %s", bus);

  int major, minor, patch, driver[3];
  OK(cnGetLibVersion(&major, &minor, &patch));
  EXPECT(major == CN_MAJOR_VERSION && minor == CN_MINOR_VERSION && patch == CN_PATCH_VERSION, "%d.%d.%d", major,
         minor, patch);
  OK(cnGetDriverVersion(&major, &minor, &patch));
  OK(cnrtDriverGetVersion(&driver[0], &driver[1], &driver[2]));
  EXPECT(major == driver[0] && minor == driver[1] && patch == driver[2], "driver %d.%d.%d", major, minor, patch);
}

static void driver_contexts(void) {
  CNcontext ctx = NULL, shared = NULL, other = NULL, now = NULL;
  CNdev dev = 99;
  OK(cnrtSetDevice(0));
  OK(cnCtxGetCurrent(&ctx));
  EXPECT(ctx != NULL, "no context after cnrtSetDevice");
  OK(cnCtxGetDevice(&dev));
  EXPECT(dev == 0, "context device %llu", (unsigned long long)dev);
  OK(cnSharedContextAcquire(&shared, 0));
  EXPECT(shared == ctx, "the shared context is not the current one");
  OK(cnSharedContextRelease(0));
  FAILS_WITH(cnSharedContextRelease(0), CN_CONTEXT_ERROR_INVALID, "not acquired");

  OK(cnCtxSetCurrent(NULL));
  OK(cnCtxGetCurrent(&now));
  EXPECT(now == NULL, "a context after unbinding");
  FAILS_WITH(cnCtxGetDevice(&dev), CN_CONTEXT_ERROR_INVALID, "no context");
  CNaddr none;
  FAILS_WITH(cnMalloc(&none, 64), CN_CONTEXT_ERROR_INVALID, "no context");

  unsigned int flags = 99;
  OK(cnCtxCreate(&other, CN_CTX_SCHED_SYNC_YIELD, 0));
  OK(cnCtxGetCurrent(&now));
  EXPECT(now == other && other != ctx, "cnCtxCreate binds its context");
  OK(cnCtxGetFlags(&flags));
  EXPECT(flags == CN_CTX_SCHED_SYNC_YIELD, "flags %u", flags);
  FAILS_WITH(cnCtxCreate(&now, 7, 0), CN_ERROR_INVALID_VALUE, "flags");
  FAILS_WITH(cnCtxCreate(&now, 0, 99), CN_ERROR_INVALID_DEVICE, "device 99");
  OK(cnCtxDestroy(other));
  FAILS_WITH(cnCtxSetCurrent(other), CN_CONTEXT_ERROR_INVALID, "destroyed");
  FAILS_WITH(cnCtxDestroy(shared), CN_CONTEXT_ERROR_INVALID, "shared");
  OK(cnCtxSetCurrent(ctx));
  OK(cnCtxSync());
}

static void driver_memory(void) {
  float in[16], out[16], through_cnrt[16];
  for (int i = 0; i < 16; i++) in[i] = (float)i * 1.5f - 4.0f;
  cn_uint64_t free_before, total, free_after;
  CNaddr a = 0, b = 0;
  OK(cnMemGetInfo(&free_before, &total));
  OK(cnMalloc(&a, sizeof in));
  OK(cnMalloc(&b, sizeof in));
  OK(cnMemGetInfo(&free_after, &total));
  EXPECT(free_after < free_before, "free %llu after %llu", (unsigned long long)free_after,
         (unsigned long long)free_before);
  OK(cnMemcpyHtoD(a, in, sizeof in));
  OK(cnMemcpyDtoD(b, a, sizeof in));
  OK(cnMemcpyDtoH(out, b, sizeof out));
  OK(cnrtMemcpy(through_cnrt, (void *)(uintptr_t)b, sizeof through_cnrt, cnrtMemcpyDevToHost));
  EXPECT(memcmp(in, out, sizeof in) == 0 && memcmp(in, through_cnrt, sizeof in) == 0, "copies differ");
  FAILS_WITH(cnMemcpyHtoD(a, NULL, sizeof in), CN_ERROR_INVALID_VALUE, "srcAddr");
  static char large[4096];
  FAILS_WITH(cnMemcpyDtoH(large, a, sizeof large), CN_MEMORY_ERROR_INVALID_ADDRESS, "srcAddr");
  cnrtGetLastError(); /* clears it */
  FAILS_WITH(cnFree(a + 4), CN_MEMORY_ERROR_INVALID_ADDRESS, "argument 'mluAddr'");
  EXPECT(cnrtPeekAtLastError() == cnrtSuccess, "a CNDrv failure set CNRT's last error");
  OK(cnFree(a));
  FAILS_WITH(cnFree(a), CN_MEMORY_ERROR_INVALID_ADDRESS, "free");
  OK(cnFree(b));
  FAILS_WITH(cnMemGetInfo(NULL, &total), CN_ERROR_INVALID_VALUE, "pfreeBytes");
}

static void driver_errors(void) {
  const char *text = NULL;
  OK(cnGetErrorName(CN_MEMORY_ERROR_INVALID_ADDRESS, &text));
  EXPECT(text != NULL && strcmp(text, "CN_MEMORY_ERROR_INVALID_ADDRESS") == 0, "%s", text);
  OK(cnGetErrorString(CN_ERROR_INVALID_VALUE, &text));
  EXPECT(text != NULL && strstr(text, "invalid argument") != NULL, "%s", text);
  OK(cnGetErrorString((CNresult)12345, &text));
  EXPECT(text != NULL && strstr(text, "not in the scope") != NULL, "%s", text);
  FAILS_WITH(cnGetErrorString(CN_SUCCESS, NULL), CN_ERROR_INVALID_VALUE, "pStr");
}

int main(void) {
  driver_before_init();
  unsigned int devices = 0;
  cnrtDeviceProp_t prop;
  OK(cnrtGetDeviceCount(&devices));
  OK(cnrtGetDeviceProperties(&prop, 0));
  cndev_queries(&prop, devices);
  driver_devices(&prop, devices);
  driver_contexts();
  driver_memory();
  driver_errors();
  DONE();
}
