// What CNNL accepts and the simulator's checks are stricter about, called as DIOPI calls it: a 1-D bias
// descriptor set with CNNL_LAYOUT_NHWC, and an op-tensor descriptor created but never set (CNNL adds). Run with no
// argument: both run (the library warns on stderr); with "strict" (and MLUSIM_STRICT=1): both are CNNL_STATUS_BAD_PARAM.
#include <cnnl.h>

#include <cstring>
#include <vector>

#include "check.h"

int main(int argc, char **argv) {
  bool strict = argc > 1 && std::strcmp(argv[1], "strict") == 0;
  cnnlHandle_t handle;
  cnrtQueue_t queue;
  OK(cnnlCreate(&handle));
  OK(cnrtQueueCreate(&queue));
  OK(cnnlSetQueue(handle, queue));

  cnnlTensorDescriptor_t bias;
  OK(cnnlCreateTensorDescriptor(&bias));
  int channels[1] = {4};
  cnnlStatus_t status = cnnlSetTensorDescriptor(bias, CNNL_LAYOUT_NHWC, CNNL_DTYPE_FLOAT, 1, channels);
  if (strict) {
    EXPECT(status == CNNL_STATUS_BAD_PARAM && std::strstr(mlusimGetLastErrorMessage(), "layout"), "%d: %s",
           (int)status, mlusimGetLastErrorMessage());
  } else {
    EXPECT(status == CNNL_STATUS_SUCCESS, "%d: %s", (int)status, mlusimGetLastErrorMessage());
    cnnlTensorLayout_t layout;
    cnnlDataType_t dtype;
    int rank = 0, dims[8];
    OK(cnnlGetTensorDescriptor(bias, &layout, &dtype, &rank, dims));
    EXPECT(layout == CNNL_LAYOUT_NHWC && rank == 1 && dims[0] == 4, "kept as set");
  }

  const int n = 6;
  std::vector<float> a(n), b(n), c(n, -1.0f);
  for (int i = 0; i < n; i++) {
    a[i] = 0.5f * i;
    b[i] = 10.0f - i;
  }
  void *da, *db, *dc;
  OK(cnrtMalloc(&da, n * sizeof(float)));
  OK(cnrtMalloc(&db, n * sizeof(float)));
  OK(cnrtMalloc(&dc, n * sizeof(float)));
  OK(cnrtMemcpy(da, a.data(), n * sizeof(float), cnrtMemcpyHostToDev));
  OK(cnrtMemcpy(db, b.data(), n * sizeof(float), cnrtMemcpyHostToDev));
  OK(cnrtMemcpy(dc, c.data(), n * sizeof(float), cnrtMemcpyHostToDev));
  cnnlTensorDescriptor_t desc;
  OK(cnnlCreateTensorDescriptor(&desc));
  int dims[1] = {n};
  OK(cnnlSetTensorDescriptor(desc, CNNL_LAYOUT_ARRAY, CNNL_DTYPE_FLOAT, 1, dims));
  cnnlOpTensorDescriptor_t unset;
  OK(cnnlCreateOpTensorDescriptor(&unset));
  float one = 1.0f, zero = 0.0f;
  for (int repeat = 0; repeat < 3; repeat++) {  // three calls from one call site: one warning
    status = cnnlOpTensor(handle, unset, &one, desc, da, &one, desc, db, nullptr, 0, &zero, desc, dc);
    if (strict) {
      EXPECT(status == CNNL_STATUS_BAD_PARAM && std::strstr(mlusimGetLastErrorMessage(), "never set"), "%d",
             (int)status);
    } else {
      EXPECT(status == CNNL_STATUS_SUCCESS, "%d: %s", (int)status, mlusimGetLastErrorMessage());
    }
  }
  OK(cnrtQueueSync(queue));
  OK(cnrtMemcpy(c.data(), dc, n * sizeof(float), cnrtMemcpyDevToHost));
  for (int i = 0; i < n; i++) {
    float want = strict ? -1.0f : a[i] + b[i];  // refused: c untouched
    EXPECT(c[i] == want, "c[%d] = %g, want %g", i, c[i], want);
  }
  OK(cnnlDestroyOpTensorDescriptor(unset));
  OK(cnnlDestroyTensorDescriptor(desc));
  OK(cnnlDestroyTensorDescriptor(bias));
  OK(cnnlDestroy(handle));
  DONE();
}
