/* cn_api.h from C: the per-thread context configuration (visible clusters, union limit) that mlu-ops and DIOPI
 * read to size their launches, the parallel union tasks, cnQueueGetContext, cnMallocConstant and
 * cnGetMemAttribute; every call also with bad arguments. */
#include <cn_api.h>

#include "check.h"

static void context_configuration(void) {
  CNcontext context = NULL;
  OK(cnCtxGetCurrent(&context));
  int clusters = 0, cores = 0;
  OK(cnDeviceGetAttribute(&clusters, CN_DEVICE_ATTRIBUTE_MAX_CLUSTER_COUNT, 0));
  OK(cnDeviceGetAttribute(&cores, CN_DEVICE_ATTRIBUTE_MAX_CORE_COUNT_PER_CLUSTER, 0));
  int widest = 0;
  OK(cnDeviceGetAttribute(&widest, CN_DEVICE_ATTRIBUTE_MAX_CLUSTER_COUNT_PER_UNION_TASK, 0));
  CNctxConfigParam param;
  OK(cnGetCtxConfigParam(context, CN_CTX_CONFIG_VISIBLE_CLUSTER_NUM, &param));
  EXPECT((int)param.visibleClusterNumber == clusters, "%d visible of %d", (int)param.visibleClusterNumber, clusters);
  OK(cnGetCtxConfigParam(context, CN_CTX_CONFIG_VISIBLE_CLUSTER, &param));
  EXPECT(param.visibleCluster == (1ull << clusters) - 1, "bitmap 0x%llx", (unsigned long long)param.visibleCluster);
  OK(cnGetCtxConfigParam(context, CN_CTX_CONFIG_UNION_LIMIT, &param));
  EXPECT((int)param.unionLimit == widest * 4, "union limit %d (board: Union%d)", (int)param.unionLimit, widest);
  int number = -1;
  OK(cnGetCtxMaxParallelUnionTasks(context, CN_KERNEL_CLASS_BLOCK, &number));
  EXPECT(number == clusters * cores, "%d block tasks", number);
  OK(cnGetCtxMaxParallelUnionTasks(context, CN_KERNEL_CLASS_UNION2, &number));
  EXPECT(number == clusters / 2, "%d Union2 tasks", number);

  /* narrow the union limit, then the visible clusters; the two must agree */
  param.unionLimit = CN_KERNEL_CLASS_UNION;
  OK(cnSetCtxConfigParam(context, CN_CTX_CONFIG_UNION_LIMIT, &param));
  param.visibleCluster = 0x3;
  OK(cnSetCtxConfigParam(context, CN_CTX_CONFIG_VISIBLE_CLUSTER, &param));
  OK(cnGetCtxConfigParam(context, CN_CTX_CONFIG_VISIBLE_CLUSTER_NUM, &param));
  EXPECT(param.visibleClusterNumber == 2, "%llu", (unsigned long long)param.visibleClusterNumber);
  OK(cnGetCtxMaxParallelUnionTasks(context, CN_KERNEL_CLASS_UNION, &number));
  EXPECT(number == 2, "%d Union1 tasks on two clusters", number);
  param.unionLimit = CN_KERNEL_CLASS_UNION4;
  FAILS_WITH(cnSetCtxConfigParam(context, CN_CTX_CONFIG_UNION_LIMIT, &param), CN_ERROR_INVALID_VALUE,
             "does not fit");
  param.visibleCluster = 0;
  FAILS_WITH(cnSetCtxConfigParam(context, CN_CTX_CONFIG_VISIBLE_CLUSTER, &param), CN_ERROR_INVALID_VALUE, "empty");
  param.visibleCluster = 1ull << clusters;
  FAILS_WITH(cnSetCtxConfigParam(context, CN_CTX_CONFIG_VISIBLE_CLUSTER, &param), CN_ERROR_INVALID_VALUE, "lacks");
  param.unionLimit = (KernelClass)12;
  FAILS_WITH(cnSetCtxConfigParam(context, CN_CTX_CONFIG_UNION_LIMIT, &param), CN_ERROR_INVALID_VALUE, "KernelClass");
  FAILS_WITH(cnSetCtxConfigParam(context, CN_CTX_CONFIG_VISIBLE_CLUSTER_NUM, &param), CN_ERROR_INVALID_VALUE,
             "read-only");
  FAILS_WITH(cnSetCtxConfigParam(context, CN_CTX_CONFIG_UNION_LIMIT, NULL), CN_ERROR_INVALID_VALUE, "param");
  FAILS_WITH(cnGetCtxConfigParam(context, CN_CTX_CONFIG_UNION_LIMIT, NULL), CN_ERROR_INVALID_VALUE, "param");
  FAILS_WITH(cnGetCtxConfigParam(context, (CNctxConfigParamType)7, &param), CN_ERROR_INVALID_VALUE, "type");
  FAILS_WITH(cnGetCtxConfigParam(NULL, CN_CTX_CONFIG_UNION_LIMIT, &param), CN_CONTEXT_ERROR_INVALID, "context");
  FAILS_WITH(cnGetCtxMaxParallelUnionTasks(context, (KernelClass)3, &number), CN_ERROR_INVALID_VALUE, "c");
  FAILS_WITH(cnGetCtxMaxParallelUnionTasks(context, CN_KERNEL_CLASS_UNION, NULL), CN_ERROR_INVALID_VALUE, "number");

  /* the configuration belongs to this thread and context: a new context starts from the defaults */
  CNcontext other = NULL;
  OK(cnCtxCreate(&other, 0, 0));
  OK(cnGetCtxConfigParam(other, CN_CTX_CONFIG_VISIBLE_CLUSTER_NUM, &param));
  EXPECT((int)param.visibleClusterNumber == clusters, "fresh context: %d", (int)param.visibleClusterNumber);
  OK(cnCtxDestroy(other));
  FAILS_WITH(cnGetCtxConfigParam(other, CN_CTX_CONFIG_UNION_LIMIT, &param), CN_CONTEXT_ERROR_INVALID, "destroyed");
  OK(cnCtxSetCurrent(context));
}

static void queues_and_memory(void) {
  cnrtQueue_t queue;
  OK(cnrtQueueCreate(&queue));
  CNcontext from_queue = NULL, current = NULL;
  OK(cnQueueGetContext((CNqueue)queue, &from_queue));
  OK(cnCtxGetCurrent(&current));
  EXPECT(from_queue == current, "the queue's context is the device's shared context");
  OK(cnQueueGetContext(NULL, &from_queue));
  EXPECT(from_queue == current, "the default queue's too");
  FAILS_WITH(cnQueueGetContext((CNqueue)queue, NULL), CN_ERROR_INVALID_VALUE, "pctx");
  OK(cnrtQueueDestroy(queue));
  FAILS_WITH(cnQueueGetContext((CNqueue)queue, &from_queue), CN_QUEUE_ERROR_INVALID, "destroyed");

  CNaddr block = 0;
  OK(cnMallocConstant(&block, 256));
  int ordinal = -1, linear = -1;
  CNaddr start = 0;
  cn_uint64_t size = 0;
  OK(cnGetMemAttribute(&ordinal, CN_MEM_ATTRIBUTE_DEVICE_ORDINAL, block + 100));
  OK(cnGetMemAttribute(&start, CN_MEM_ATTRIBUTE_RANGE_START_ADDR, block + 100));
  OK(cnGetMemAttribute(&size, CN_MEM_ATTRIBUTE_RANGE_SIZE, block + 100));
  OK(cnGetMemAttribute(&linear, CN_MEM_ATTRIBUTE_ISLINEAR, block));
  EXPECT(ordinal == 0 && start == block && size == 256 && linear == 0, "%d 0x%llx %llu %d", ordinal,
         (unsigned long long)start, (unsigned long long)size, linear);
  FAILS_WITH(cnGetMemAttribute(NULL, CN_MEM_ATTRIBUTE_ISLINEAR, block), CN_ERROR_INVALID_VALUE, "data");
  FAILS_WITH(cnGetMemAttribute(&linear, (CNmem_attribute)0x6, block), CN_ERROR_INVALID_VALUE, "attribute");
  FAILS_WITH(cnGetMemAttribute(&linear, CN_MEM_ATTRIBUTE_ISLINEAR, 0x1234), CN_MEMORY_ERROR_INVALID_ADDRESS, "ptr");
  FAILS_WITH(cnMallocConstant(NULL, 16), CN_ERROR_INVALID_VALUE, "pmluAddr");
  OK(cnFree(block));
  FAILS_WITH(cnGetMemAttribute(&linear, CN_MEM_ATTRIBUTE_ISLINEAR, block), CN_MEMORY_ERROR_INVALID_ADDRESS, "ptr");

  int persisting = -1;
  OK(cnDeviceGetAttribute(&persisting, CN_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, 0));
  EXPECT(persisting == 0, "%d", persisting);
}

int main(void) {
  OK(cnInit(0));
  context_configuration();
  queues_and_memory();
  DONE();
}
