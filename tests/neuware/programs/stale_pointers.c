/* A stale device pointer from C: malloc/free/malloc of the same size, then the freed pointer in every cnrt call
 * that takes a device pointer, in cnnl ops (inputs, outputs, workspaces, pointer arrays) and in cncl calls (two
 * communicators of this process on devices 0 and 1: run with MLUSIM_DEVICE_COUNT=2). Each call must fail with the
 * library's argument status and a message naming the use after free and the cnrtFree that freed the block, and the
 * block that took the freed capacity must keep its bytes. */
#include <stdint.h>
#include <stdlib.h>

#include <cncl.h>
#include <cnnl.h>

#include "check.h"

enum { COUNT = 64, BYTES = COUNT * 4 };

#define STALE(call, status) FAILS_WITH(call, status, "use after free")

static void *stale_pointer(void **fresh) {
  void *old = NULL;
  OK(cnrtMalloc(&old, 2 * BYTES));
  OK(cnrtFree(old));
  OK(cnrtMalloc(fresh, 2 * BYTES));
  EXPECT(*fresh != old, "malloc after free of the same size returned the freed address %p", old);
  OK(cnrtMemset(*fresh, 0x22, 2 * BYTES));
  return old;
}

static void expect_untouched(void *fresh) {
  unsigned char host[2 * BYTES];
  OK(cnrtSyncDevice());
  OK(cnrtMemcpy(host, fresh, sizeof host, cnrtMemcpyDevToHost));
  int bad = 0;
  for (size_t i = 0; i < sizeof host; i++) bad += host[i] != 0x22;
  EXPECT(bad == 0, "%d bytes of the block allocated after the free changed", bad);
}

static void runtime_calls(void *old, void *live, cnrtQueue_t queue) {
  unsigned char host[BYTES];
  const cnrtRet_t bad = cnrtErrorArgsInvalid;
  FAILS_WITH(cnrtMemcpy(old, host, 64, cnrtMemcpyHostToDev), bad, "which cnrtFree freed");
  STALE(cnrtMemcpy(host, (char *)old + 128, 64, cnrtMemcpyDevToHost), bad);
  STALE(cnrtMemcpy(old, live, 64, cnrtMemcpyDevToDev), bad);
  STALE(cnrtMemcpy(live, old, 64, cnrtMemcpyDevToDev), bad);
  STALE(cnrtMemcpyAsync(old, host, 64, queue, cnrtMemcpyHostToDev), bad);
  STALE(cnrtMemcpyAsync(host, old, 64, queue, cnrtMemcpyDevToHost), bad);
  STALE(cnrtMemcpyAsync(live, old, 64, queue, cnrtMemcpyDevToDev), bad);
  STALE(cnrtMemcpyPeer(old, 0, live, 0, 64), bad);
  STALE(cnrtMemcpyPeer(live, 0, old, 0, 64), bad);
  STALE(cnrtMemcpyPeerAsync(live, 0, old, 0, 64, queue), bad);
  STALE(cnrtMemcpy2D(old, 128, live, 128, 64, 2, cnrtMemcpyDevToDev), bad);
  STALE(cnrtMemcpy2D(host, 128, old, 128, 64, 2, cnrtMemcpyDevToHost), bad);
  STALE(cnrtMemset(old, 0, 64), bad);
  STALE(cnrtMemsetAsync((char *)old + 4, 0, 64, queue), bad);
  STALE(cnrtMemsetD8(old, 1, 64), bad);
  STALE(cnrtMemsetD8Async(old, 1, 64, queue), bad);
  STALE(cnrtMemsetD16(old, 1, 32), bad);
  STALE(cnrtMemsetD16Async(old, 1, 32, queue), bad);
  STALE(cnrtMemsetD32(old, 1, 16), bad);
  STALE(cnrtMemsetD32Async(old, 1, 16, queue), bad);
  FAILS_WITH(cnrtFree(old), bad, "double free");
  FAILS_WITH(cnrtMemFreeAsync(old, queue), bad, "double free");
  cnrtPointerAttributes_t attributes;
  OK(cnrtPointerGetAttributes(&attributes, old));
  EXPECT(attributes.type == cnrtMemTypeUnregistered, "a freed pointer has type %d", (int)attributes.type);
}

static cnnlTensorDescriptor_t vector(int n) {
  cnnlTensorDescriptor_t desc = NULL;
  OK(cnnlCreateTensorDescriptor(&desc));
  OK(cnnlSetTensorDescriptor(desc, CNNL_LAYOUT_ARRAY, CNNL_DTYPE_FLOAT, 1, &n));
  return desc;
}

static void cnnl_calls(void *old, void *live, cnrtQueue_t queue) {
  const cnnlStatus_t bad = CNNL_STATUS_BAD_PARAM;
  cnnlHandle_t handle = NULL;
  OK(cnnlCreate(&handle));
  OK(cnnlSetQueue(handle, queue));
  cnnlTensorDescriptor_t x = vector(COUNT), two = vector(2 * COUNT);
  STALE(cnnlAbs(handle, x, old, x, live), bad);
  STALE(cnnlAbs(handle, x, live, x, old), bad);
  STALE(cnnlCopy(handle, x, (char *)old + BYTES, x, live), bad);

  cnnlOpTensorDescriptor_t op = NULL;
  OK(cnnlCreateOpTensorDescriptor(&op));
  OK(cnnlSetOpTensorDescriptor(op, CNNL_OP_TENSOR_ADD, CNNL_DTYPE_FLOAT, CNNL_NOT_PROPAGATE_NAN));
  float one = 1.0f, zero = 0.0f;
  STALE(cnnlOpTensor(handle, op, &one, x, live, &one, x, old, NULL, 0, &zero, x, live), bad);
  STALE(cnnlOpTensor(handle, op, &one, x, live, &one, x, live, old, 256, &zero, x, (char *)live + BYTES), bad);
  OK(cnnlDestroyOpTensorDescriptor(op));

  size_t ws_size = 0;
  OK(cnnlGetConcatWorkspaceSize(handle, 2, &ws_size));
  cnnlTensorDescriptor_t parts[2] = {x, x};
  const void *inputs[2] = {live, old};
  STALE(cnnlConcat(handle, 2, 0, parts, inputs, NULL, ws_size, two, live), bad);
  inputs[1] = live;
  STALE(cnnlConcat(handle, 2, 0, parts, inputs, NULL, ws_size, two, old), bad);
  OK(cnnlDestroyTensorDescriptor(x));
  OK(cnnlDestroyTensorDescriptor(two));
  OK(cnnlDestroy(handle));
}

static void cncl_calls(void *old, void *live, cnrtQueue_t queue) {
  const cnclResult_t bad = CNCL_RET_ERR_ARGUMENTS;
  int devices[2] = {0, 1}, ranks[2] = {0, 1};
  cnclComm_t comms[2] = {NULL, NULL};
  OK(cnclInitComms(comms, 2, devices, ranks, 2, NULL));
  cnclComm_t comm = comms[0];
  STALE(cnclAllReduce(old, live, COUNT, cnclFloat, cnclSum, comm, queue), bad);
  STALE(cnclAllReduce(live, old, COUNT, cnclFloat, cnclSum, comm, queue), bad);
  STALE(cnclBroadcast(old, live, COUNT, cnclFloat, 0, comm, queue), bad);
  STALE(cnclBroadcast(live, old, COUNT, cnclFloat, 0, comm, queue), bad);
  STALE(cnclBcast(old, COUNT, cnclFloat, 0, comm, queue), bad);
  STALE(cnclReduce(old, live, COUNT, cnclFloat, cnclSum, 0, comm, queue), bad);
  STALE(cnclReduce(live, old, COUNT, cnclFloat, cnclSum, 0, comm, queue), bad);
  STALE(cnclAllGather(old, live, COUNT / 2, cnclFloat, comm, queue), bad);
  STALE(cnclAllGather(live, old, COUNT / 2, cnclFloat, comm, queue), bad);
  STALE(cnclReduceScatter(old, live, COUNT / 2, cnclFloat, cnclSum, comm, queue), bad);
  STALE(cnclReduceScatter(live, old, COUNT / 2, cnclFloat, cnclSum, comm, queue), bad);
  STALE(cnclAlltoAll(old, live, COUNT / 2, cnclFloat, comm, queue), bad);
  STALE(cnclAlltoAll(live, old, COUNT / 2, cnclFloat, comm, queue), bad);
  const void *sends[2] = {live, old};
  void *recvs[2] = {(char *)live + BYTES, (char *)live + BYTES + 32};
  uint32_t counts[2] = {8, 8};
  cnclDataType_t types[2] = {cnclFloat, cnclFloat};
  STALE(cnclAlltoAllv(sends, counts, types, recvs, counts, types, comm, queue), bad);
  sends[1] = (char *)live + 32;
  recvs[0] = old;
  STALE(cnclAlltoAllv(sends, counts, types, recvs, counts, types, comm, queue), bad);
  STALE(cnclSend(old, COUNT, cnclFloat, 1, comm, queue), bad);
  STALE(cnclRecv(old, COUNT, cnclFloat, 1, comm, queue), bad);
  OK(cnclDestroyComms(comms, 2));
}

int main(void) {
  cnrtQueue_t queue = NULL;
  OK(cnrtSetDevice(0));
  OK(cnrtQueueCreate(&queue));
  void *fresh = NULL, *live = NULL;
  void *old = stale_pointer(&fresh);
  OK(cnrtMalloc(&live, 2 * BYTES));
  runtime_calls(old, live, queue);
  cnnl_calls(old, live, queue);
  cncl_calls(old, live, queue);
  OK(cnrtQueueSync(queue));
  expect_untouched(fresh);
  OK(cnrtFree(fresh));
  OK(cnrtFree(live));
  OK(cnrtQueueDestroy(queue));
  DONE();
}
