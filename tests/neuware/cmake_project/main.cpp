// Built by CMake against a Neuware tree: cnrt, cnnl and a single-process cncl clique on the simulator.
#include <cncl.h>
#include <cnnl.h>
#include <cnrt.h>

#include <cmath>
#include <cstdio>
#include <vector>

static int failures = 0;
#define CHECK(x)                                                               \
  do {                                                                         \
    if (!(x)) {                                                                \
      failures++;                                                              \
      std::printf("FAILED line %d: %s\n", __LINE__, #x);                       \
    }                                                                          \
  } while (0)

int main() {
  static_assert(CNRT_MAJOR_VERSION == FOUND_CNRT_MAJOR, "the version CMake found is the header's");
  int major = 0, minor = 0, patch = 0;
  CHECK(cnrtGetLibVersion(&major, &minor, &patch) == cnrtSuccess && major == CNRT_MAJOR_VERSION);
  CHECK(cnclGetLibVersion(&major, &minor, &patch) == CNCL_RET_SUCCESS && minor == CNCL_MINOR_VERSION);

  const int n = 256;
  std::vector<float> host(n);
  for (int i = 0; i < n; i++) host[i] = float(i) - 128.0f;
  void *x = nullptr, *y = nullptr;
  CHECK(cnrtMalloc(&x, n * sizeof(float)) == cnrtSuccess);
  CHECK(cnrtMalloc(&y, n * sizeof(float)) == cnrtSuccess);
  CHECK(cnrtMemcpy(x, host.data(), n * sizeof(float), cnrtMemcpyHostToDev) == cnrtSuccess);

  cnnlHandle_t handle;
  cnnlTensorDescriptor_t desc;
  CHECK(cnnlCreate(&handle) == CNNL_STATUS_SUCCESS);
  CHECK(cnnlCreateTensorDescriptor(&desc) == CNNL_STATUS_SUCCESS);
  CHECK(cnnlSetTensorDescriptor(desc, CNNL_LAYOUT_ARRAY, CNNL_DTYPE_FLOAT, 1, &n) == CNNL_STATUS_SUCCESS);
  CHECK(cnnlAbs(handle, desc, x, desc, y) == CNNL_STATUS_SUCCESS);

  int device = 0, rank = 0;
  cnclComm_t comm;
  cnrtQueue_t queue;
  CHECK(cnnlGetQueue(handle, &queue) == CNNL_STATUS_SUCCESS);
  CHECK(cnclInitComms(&comm, 1, &device, &rank, 1, nullptr) == CNCL_RET_SUCCESS);
  CHECK(cnclAllReduce(y, y, n, cnclFloat, cnclSum, comm, queue) == CNCL_RET_SUCCESS);
  CHECK(cnrtQueueSync(queue) == cnrtSuccess);
  CHECK(cnrtMemcpy(host.data(), y, n * sizeof(float), cnrtMemcpyDevToHost) == cnrtSuccess);
  for (int i = 0; i < n; i++) CHECK(host[i] == std::fabs(float(i) - 128.0f));
  CHECK(cnclDestroyComms(&comm, 1) == CNCL_RET_SUCCESS);
  CHECK(cnnlDestroyTensorDescriptor(desc) == CNNL_STATUS_SUCCESS);
  CHECK(cnnlDestroy(handle) == CNNL_STATUS_SUCCESS);
  CHECK(cnrtFree(x) == cnrtSuccess && cnrtFree(y) == cnrtSuccess);
  std::printf("neuware_user: %d failure(s)\n", failures);
  return failures != 0;
}
