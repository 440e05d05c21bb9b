/* Several C threads use the libraries at once: each has its own queue and cnnl handle, copies, adds and checks;
 * the first calls race to start the interpreter; the last error stays per thread. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <cnnl.h>

#include "check.h"

enum { THREADS = 4, ROUNDS = 25, N = 2048 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int thread_failures = 0;

static void fail(int id, const char *what, int status) {
  pthread_mutex_lock(&lock);
  thread_failures++;
  printf("FAILED thread %d: %s (%d: %s)\n", id, what, status, mlusimGetLastErrorMessage());
  pthread_mutex_unlock(&lock);
}

#define T_OK(call)                                      \
  do {                                                  \
    int t_status_ = (int)(call);                        \
    if (t_status_ != 0) fail(id, #call, t_status_);     \
  } while (0)

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg;
  cnrtQueue_t queue = NULL;
  cnnlHandle_t handle = NULL;
  cnnlTensorDescriptor_t desc = NULL;
  cnnlOpTensorDescriptor_t op = NULL;
  T_OK(cnrtQueueCreate(&queue));
  T_OK(cnnlCreate(&handle));
  T_OK(cnnlSetQueue(handle, queue));
  T_OK(cnnlCreateTensorDescriptor(&desc));
  int dims[1] = {N};
  T_OK(cnnlSetTensorDescriptor(desc, CNNL_LAYOUT_ARRAY, CNNL_DTYPE_FLOAT, 1, dims));
  T_OK(cnnlCreateOpTensorDescriptor(&op));
  T_OK(cnnlSetOpTensorDescriptor(op, CNNL_OP_TENSOR_ADD, CNNL_DTYPE_FLOAT, CNNL_NOT_PROPAGATE_NAN));
  float *host = malloc(sizeof(float) * N), *back = malloc(sizeof(float) * N);
  for (int round = 0; round < ROUNDS; round++) {
    void *x = NULL, *y = NULL;
    T_OK(cnrtMalloc(&x, sizeof(float) * N));
    T_OK(cnrtMalloc(&y, sizeof(float) * N));
    for (int i = 0; i < N; i++) host[i] = (float)(id * 100000 + round * 1000 + i % 1000);
    T_OK(cnrtMemcpyAsync(x, host, sizeof(float) * N, queue, cnrtMemcpyHostToDev));
    float one = 1, zero = 0;
    T_OK(cnnlOpTensor(handle, op, &one, desc, x, &one, desc, x, NULL, 0, &zero, desc, y));
    T_OK(cnrtMemcpyAsync(back, y, sizeof(float) * N, queue, cnrtMemcpyDevToHost));
    T_OK(cnrtQueueSync(queue));
    for (int i = 0; i < N; i++)
      if (back[i] != 2 * host[i]) {
        fail(id, "wrong sum", (int)back[i]);
        break;
      }
    T_OK(cnrtFree(x));
    T_OK(cnrtFree(y));
  }
  /* the last error is per thread: only thread 0 fails a call */
  if (id == 0) {
    if (cnrtMalloc(NULL, 16) != cnrtErrorArgsInvalid) fail(id, "malloc to a NULL pPtr must fail", 0);
    if (cnrtPeekAtLastError() != cnrtErrorArgsInvalid) fail(id, "own last error", 0);
  } else if (cnrtPeekAtLastError() != cnrtSuccess) {
    fail(id, "another thread's error leaked here", cnrtPeekAtLastError());
  }
  free(host);
  free(back);
  T_OK(cnnlDestroyOpTensorDescriptor(op));
  T_OK(cnnlDestroyTensorDescriptor(desc));
  T_OK(cnnlDestroy(handle));
  T_OK(cnrtQueueDestroy(queue));
  return NULL;
}

int main(void) {
  /* no call before the threads: their first calls race to start the embedded interpreter */
  pthread_t threads[THREADS];
  for (intptr_t i = 0; i < THREADS; i++) pthread_create(&threads[i], NULL, worker, (void *)i);
  for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
  EXPECT(thread_failures == 0, "%d failures in the threads", thread_failures);
  DONE();
}
