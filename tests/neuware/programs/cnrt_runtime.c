/* cnrt from C: devices, memory, copies, queues, notifiers, host functions and the error codes of bad calls. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

static void devices(void) {
  unsigned int count = 0;
  OK(cnrtGetDeviceCount(&count));
  EXPECT(count >= 1, "%u devices", count);
  int device = -1;
  OK(cnrtGetDevice(&device));
  EXPECT(device == 0, "current device %d", device);
  FAILS_WITH(cnrtSetDevice((int)count), cnrtErrorDeviceInvalid, "does not exist");
  FAILS_WITH(cnrtGetDeviceCount(NULL), cnrtErrorArgsInvalid, "'count'");

  int major = 0, minor = 0, patch = 0;
  OK(cnrtGetLibVersion(&major, &minor, &patch));
  EXPECT(major == CNRT_MAJOR_VERSION && minor == CNRT_MINOR_VERSION && patch == CNRT_PATCH_VERSION,
         "library %d.%d.%d", major, minor, patch);

  cnrtDeviceProp_t prop;
  OK(cnrtGetDeviceProperties(&prop, 0));
  int clusters = 0, cores = 0, nram = 0;
  OK(cnrtDeviceGetAttribute(&clusters, cnrtAttrClusterCount, 0));
  OK(cnrtDeviceGetAttribute(&cores, cnrtAttrMcorePerCluster, 0));
  OK(cnrtDeviceGetAttribute(&nram, cnrtAttrNramSizePerMcore, 0));
  EXPECT(strncmp(prop.name, "MLU", 3) == 0, "name %s", prop.name);
  EXPECT(prop.clusterCount == clusters && clusters > 0, "clusters %d vs %d", prop.clusterCount, clusters);
  EXPECT(prop.McorePerCluster == cores && prop.NramSizePerMcore == nram, "cores %d nram %d",
         prop.McorePerCluster, prop.NramSizePerMcore);
  EXPECT(prop.totalGlobalMemSize > 0 && prop.major >= 2, "memory %llu, compute %d.%d",
         (unsigned long long)prop.totalGlobalMemSize, prop.major, prop.minor);
  FAILS_WITH(cnrtDeviceGetAttribute(&clusters, (cnrtDeviceAttr_t)0x7777, 0), cnrtErrorArgsInvalid, "attr");

  OK(cnrtInit(0));
  FAILS_WITH(cnrtInit(1), cnrtErrorArgsInvalid, "flags");
}

static void memory_and_copies(void) {
  size_t free_before = 0, total = 0, free_after = 0;
  OK(cnrtMemGetInfo(&free_before, &total));
  void *a = NULL, *b = NULL;
  OK(cnrtMalloc(&a, 4096));
  OK(cnrtMalloc(&b, 4096));
  OK(cnrtMemGetInfo(&free_after, &total));
  EXPECT(free_after < free_before && free_before <= total, "free %zu -> %zu of %zu", free_before, free_after, total);

  int32_t host[1024], back[1024];
  for (int i = 0; i < 1024; i++) host[i] = i * 7 - 3;
  OK(cnrtMemcpy(a, host, sizeof host, cnrtMemcpyHostToDev));
  OK(cnrtMemcpy(b, a, sizeof host, cnrtMemcpyDevToDev));
  memset(back, 0, sizeof back);
  OK(cnrtMemcpy(back, b, sizeof back, cnrtMemcpyDevToHost));
  EXPECT(memcmp(host, back, sizeof host) == 0, "host -> device -> device -> host round trip");

  /* cnrtMemcpyNoDirection: the pointers say which side is the device */
  int32_t twice[1024];
  for (int i = 0; i < 1024; i++) twice[i] = 2 * i;
  OK(cnrtMemcpy(a, twice, sizeof twice, cnrtMemcpyNoDirection));
  OK(cnrtMemcpy(back, a, sizeof back, cnrtMemcpyNoDirection));
  EXPECT(memcmp(twice, back, sizeof back) == 0, "no-direction round trip");

  OK(cnrtMemset(a, 0xAB, 4096));
  unsigned char bytes[4096];
  OK(cnrtMemcpy(bytes, a, sizeof bytes, cnrtMemcpyDevToHost));
  EXPECT(bytes[0] == 0xAB && bytes[4095] == 0xAB, "memset %x %x", bytes[0], bytes[4095]);
  OK(cnrtMemsetD32(a, 0x01020304u, 1024));
  OK(cnrtMemcpy(back, a, sizeof back, cnrtMemcpyDevToHost));
  EXPECT(back[0] == 0x01020304 && back[1023] == 0x01020304, "memsetD32 %x", back[0]);

  /* a pitched 2-D copy: 3 rows of 8 bytes out of a host matrix with 16-byte rows */
  unsigned char matrix[48], rows[24];
  for (int i = 0; i < 48; i++) matrix[i] = (unsigned char)i;
  OK(cnrtMemcpy2D(b, 8, matrix, 16, 8, 3, cnrtMemcpyHostToDev));
  OK(cnrtMemcpy(rows, b, 24, cnrtMemcpyDevToHost));
  EXPECT(rows[0] == 0 && rows[7] == 7 && rows[8] == 16 && rows[23] == 39, "2-D copy %d %d %d %d", rows[0],
         rows[7], rows[8], rows[23]);

  /* bad pointers give the C codes, with the simulator's reason */
  void *none = (void *)&none;
  OK(cnrtMalloc(&none, 0)); /* 0 bytes: success and the NULL pointer, which cnrtFree accepts */
  EXPECT(none == NULL, "cnrtMalloc of 0 bytes gave %p", none);
  OK(cnrtFree(none));
  FAILS_WITH(cnrtMalloc(NULL, 16), cnrtErrorArgsInvalid, "'pPtr'");
  FAILS_WITH(cnrtMemcpy(a, host, 8192, cnrtMemcpyHostToDev), cnrtErrorArgsInvalid, "past the end");
  FAILS_WITH(cnrtMemcpy(NULL, host, 16, cnrtMemcpyHostToDev), cnrtErrorArgsInvalid, "null device pointer");
  FAILS_WITH(cnrtMemcpy(a, NULL, 16, cnrtMemcpyHostToDev), cnrtErrorArgsInvalid, "NULL host pointer");
  FAILS_WITH(cnrtMemcpy(NULL, a, 16, cnrtMemcpyNoDirection), cnrtErrorArgsInvalid, "null device pointer");
  FAILS_WITH(cnrtMemcpy(a, host, 16, (cnrtMemTransDir_t)9), cnrtErrorMemcpyDirectionInvalid, "9");
  FAILS_WITH(cnrtFree((char *)a + 4), cnrtErrorArgsInvalid, "inside block");
  OK(cnrtFree(a));
  FAILS_WITH(cnrtFree(a), cnrtErrorArgsInvalid, "double free");
  FAILS_WITH(cnrtMemcpy(back, a, 16, cnrtMemcpyDevToHost), cnrtErrorArgsInvalid, "use after free");
  OK(cnrtFree(NULL));
  OK(cnrtFree(b));

  /* the thread's last error and the error strings */
  FAILS_WITH(cnrtFree(a), cnrtErrorArgsInvalid, "double free");
  EXPECT(cnrtPeekAtLastError() == cnrtErrorArgsInvalid, "peek");
  EXPECT(cnrtGetLastError() == cnrtErrorArgsInvalid, "get");
  EXPECT(cnrtGetLastError() == cnrtSuccess, "get resets");
  EXPECT(strcmp(cnrtGetErrorName(cnrtErrorArgsInvalid), "cnrtErrorArgsInvalid") == 0, "%s",
         cnrtGetErrorName(cnrtErrorArgsInvalid));
  FAILS_WITH(cnrtFree(a), cnrtErrorArgsInvalid, "double free");
  EXPECT(strstr(cnrtGetErrorStr(cnrtErrorArgsInvalid), "double free") != NULL, "%s",
         cnrtGetErrorStr(cnrtErrorArgsInvalid));
  EXPECT(strstr(cnrtGetErrorStr(cnrtErrorNoMem), "double free") == NULL, "%s", cnrtGetErrorStr(cnrtErrorNoMem));
}

static void pinned_host_memory(void) {
  void *pinned = NULL, *device = NULL;
  OK(cnrtHostMalloc(&pinned, 256));
  OK(cnrtMalloc(&device, 256));
  for (int i = 0; i < 256; i++) ((unsigned char *)pinned)[i] = (unsigned char)(255 - i);
  OK(cnrtMemcpy(device, pinned, 256, cnrtMemcpyHostToDev));
  unsigned char back[256];
  OK(cnrtMemcpy(back, device, 256, cnrtMemcpyDevToHost));
  EXPECT(back[0] == 255 && back[255] == 0, "pinned copy %d %d", back[0], back[255]);

  cnrtPointerAttributes_t attr;
  OK(cnrtPointerGetAttributes(&attr, device));
  EXPECT(attr.type == cnrtMemTypeDevice && attr.device == 0 && attr.devicePointer == device, "device attr %d %d",
         attr.type, attr.device);
  OK(cnrtPointerGetAttributes(&attr, (char *)pinned + 10));
  EXPECT(attr.type == cnrtMemTypeHost, "pinned attr %d", attr.type);
  OK(cnrtPointerGetAttributes(&attr, back));
  EXPECT(attr.type == cnrtMemTypeUnregistered, "stack attr %d", attr.type);

  OK(cnrtFreeHost(pinned));
  FAILS_WITH(cnrtFreeHost(pinned), cnrtErrorArgsInvalid, "already freed");
  FAILS_WITH(cnrtFreeHost(back), cnrtErrorArgsInvalid, "not a buffer returned by hostMalloc");
  OK(cnrtFree(device));
}

/* ---- queues, host functions, notifiers ---- */
static int order[8];
static int order_count = 0;
static volatile int flag = 0;

static void record(void *data) { order[order_count++] = (int)(intptr_t)data; }
static void slow_then_set(void *data) { (void)data; usleep(100000); flag = 1; }
static void read_flag(void *data) { *(int *)data = flag; }

static void queues_and_notifiers(void) {
  cnrtQueue_t q = NULL, q2 = NULL;
  OK(cnrtQueueCreate(&q));
  OK(cnrtQueueCreateWithPriority(&q2, 0, -1));
  int least = 1, greatest = 1, priority = 1;
  OK(cnrtDeviceGetQueuePriorityRange(&least, &greatest));
  OK(cnrtQueueGetPriority(q2, &priority));
  EXPECT(greatest <= priority && priority <= least, "priority %d in [%d, %d]", priority, greatest, least);

  /* host functions run in queue order */
  for (intptr_t i = 1; i <= 3; i++) OK(cnrtInvokeHostFunc(q, record, (void *)i));
  OK(cnrtQueueSync(q));
  EXPECT(order_count == 3 && order[0] == 1 && order[1] == 2 && order[2] == 3, "order %d: %d %d %d", order_count,
         order[0], order[1], order[2]);

  /* a busy queue answers cnrtErrorNotReady (and makes it the last error) */
  OK(cnrtInvokeHostFunc(q, slow_then_set, NULL));
  cnrtRet_t busy = cnrtQueueQuery(q);
  EXPECT(busy == cnrtErrorNotReady, "query while busy -> %d", busy);
  EXPECT(cnrtGetLastError() == cnrtErrorNotReady, "last error after a busy query");
  OK(cnrtQueueSync(q));
  EXPECT(cnrtQueueQuery(q) == cnrtSuccess && flag == 1, "query after sync");

  /* queue q2 waits for a notifier placed on q behind slow work */
  flag = 0;
  int seen = -1;
  cnrtNotifier_t n = NULL, start = NULL, end = NULL;
  OK(cnrtNotifierCreate(&n));
  OK(cnrtInvokeHostFunc(q, slow_then_set, NULL));
  OK(cnrtPlaceNotifier(n, q));
  OK(cnrtQueueWaitNotifier(n, q2, 0));
  OK(cnrtInvokeHostFunc(q2, read_flag, &seen));
  OK(cnrtQueueSync(q2));
  EXPECT(seen == 1, "q2 ran before the notifier on q was reached (saw %d)", seen);
  OK(cnrtWaitNotifier(n));
  EXPECT(cnrtQueryNotifier(n) == cnrtSuccess, "reached notifier");

  /* both clocks around a copy */
  void *d = NULL;
  static char big[1 << 20];
  OK(cnrtMalloc(&d, sizeof big));
  OK(cnrtNotifierCreate(&start));
  OK(cnrtCreateNotifier(&end));
  OK(cnrtPlaceNotifier(start, q));
  OK(cnrtMemcpyAsync(d, big, sizeof big, q, cnrtMemcpyHostToDev));
  OK(cnrtPlaceNotifier(end, q));
  OK(cnrtQueueSync(q));
  float ms = -1, us = -1;
  OK(cnrtNotifierElapsedTime(start, end, &ms));
  OK(cnrtNotifierDuration(start, end, &us));
  EXPECT(ms >= 0 && us > 0, "elapsed %g ms, modelled %g us", ms, us);
  OK(cnrtFree(d));

  /* NULL is the default queue; the implicit queues work too */
  int value = 5;
  void *p = NULL;
  OK(cnrtMalloc(&p, 4));
  OK(cnrtMemcpyAsync(p, &value, 4, NULL, cnrtMemcpyHostToDev));
  OK(cnrtQueueSync(NULL));
  OK(cnrtMemsetAsync(p, 0, 4, cnrtQueuePerThread));
  OK(cnrtQueueSync(cnrtQueuePerThread));
  OK(cnrtMemcpy(&value, p, 4, cnrtMemcpyDevToHost));
  EXPECT(value == 0, "per-thread queue memset -> %d", value);
  OK(cnrtFree(p));

  /* destroyed and made-up handles */
  OK(cnrtQueueDestroy(q2));
  FAILS_WITH(cnrtQueueSync(q2), cnrtErrorInvalidResourceHandle, "destroyed");
  FAILS_WITH(cnrtQueueSync((cnrtQueue_t)0x5000), cnrtErrorInvalidResourceHandle, "unknown C handle");
  OK(cnrtNotifierDestroy(n));
  FAILS_WITH(cnrtPlaceNotifier(n, q), cnrtErrorInvalidResourceHandle, "destroyed");
  OK(cnrtDestroyNotifier(&end));
  OK(cnrtNotifierDestroy(start));
  FAILS_WITH(cnrtDestroyNotifier(NULL), cnrtErrorArgsInvalid, "'notifier'");
  OK(cnrtQueueDestroy(q));
  OK(cnrtSyncDevice());
}

int main(void) {
  devices();
  memory_and_copies();
  pinned_host_memory();
  queues_and_notifiers();
  cnrtDestroy();
  DONE();
}
