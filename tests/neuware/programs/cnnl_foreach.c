/* The foreach ops and cnnl's memory of validated descriptors, from C: cnnlForeachBinaryOp with a tensor list and
 * alpha, a scalar list of the scalar descriptor's type, cnnlForeachPointwiseOp with one value, cnnlForeachLerp with
 * one weight behind an array entry, cnnlForeachUnaryOp_v2 in place; then cnnlOpTensor called again with the same
 * descriptor handles (remembered), and again after one of them was set to another shape (validated again: an
 * error naming the computation type). Every value is checked against what this program computes. */
#include <stdint.h>

#include <cnnl.h>

#include "check.h"

static cnnlHandle_t handle;

static cnnlTensorDescriptor_t tensor(int n) {
  cnnlTensorDescriptor_t desc = NULL;
  int dims[1] = {n};
  OK(cnnlCreateTensorDescriptor(&desc));
  OK(cnnlSetTensorDescriptor(desc, CNNL_LAYOUT_ARRAY, CNNL_DTYPE_FLOAT, 1, dims));
  return desc;
}

static void *upload(const float *host, int n) {
  void *device = NULL;
  OK(cnrtMalloc(&device, n * sizeof(float)));
  OK(cnrtMemcpy(device, (void *)host, n * sizeof(float), cnrtMemcpyHostToDev));
  return device;
}

static void download(float *host, void *device, int n) {
  cnrtQueue_t queue = NULL;
  OK(cnnlGetQueue(handle, &queue));
  OK(cnrtQueueSync(queue));
  OK(cnrtMemcpy(host, device, n * sizeof(float), cnrtMemcpyDevToHost));
}

static void foreach_ops(void) {
  float a0[3] = {1, 2, 3}, a1[2] = {-4, 0.5f}, b0[3] = {10, 20, 30}, b1[2] = {1, 1}, got0[3], got1[2];
  cnnlTensorDescriptor_t descs[2] = {tensor(3), tensor(2)};
  void *a[2] = {upload(a0, 3), upload(a1, 2)}, *b[2] = {upload(b0, 3), upload(b1, 2)}, *out[2] = {NULL, NULL};
  OK(cnrtMalloc(&out[0], sizeof got0));
  OK(cnrtMalloc(&out[1], sizeof got1));
  size_t workspace = 99;
  OK(cnnlGetForeachBinaryOpWorkspaceSize(handle, 2, descs, &workspace));
  EXPECT(workspace == 0, "workspace %zu", workspace);
  float alpha = 0.5f;
  OK(cnnlForeachBinaryOp(handle, CNNL_FOREACH_ADD, FOREACH_BINARY_TENSOR_LIST, 2, descs, (const void *const *)a,
                         descs, (const void *const *)b, NULL, NULL, &alpha, NULL, 0, descs, out));
  download(got0, out[0], 3);
  download(got1, out[1], 2);
  EXPECT(got0[0] == 6 && got0[2] == 18 && got1[0] == -3.5f && got1[1] == 1, "a + 0.5 b: %g %g %g %g", got0[0],
         got0[2], got1[0], got1[1]);
  float scalars[2] = {2, -1};
  OK(cnnlForeachBinaryOp(handle, CNNL_FOREACH_MUL, FOREACH_BINARY_SCALAR_LIST, 2, descs, (const void *const *)a,
                         NULL, NULL, descs[0], scalars, NULL, NULL, 0, descs, out));
  download(got0, out[0], 3);
  download(got1, out[1], 2);
  EXPECT(got0[1] == 4 && got1[0] == 4 && got1[1] == -0.5f, "a * [2, -1]: %g %g %g", got0[1], got1[0], got1[1]);
  float value = 0.25f;
  OK(cnnlForeachPointwiseOp(handle, CNNL_FOREACH_ADDCMUL, FOREACH_POINTWISE_SCALAR, 2, descs,
                            (const void *const *)a, descs, (const void *const *)b, descs, (const void *const *)b,
                            &value, descs, out));
  download(got0, out[0], 3);
  EXPECT(got0[0] == 26 && got0[2] == 228, "a + b * b / 4: %g %g", got0[0], got0[2]);
  float weight = 0.25f;
  const void *weight_entry[1] = {&weight};
  OK(cnnlForeachLerp(handle, FOREACH_LERP_SCALAR, 2, descs, (const void *const *)a, descs, (const void *const *)b,
                     NULL, weight_entry, NULL, 0, descs, out));
  download(got0, out[0], 3);
  download(got1, out[1], 2);
  EXPECT(got0[0] == 3.25f && got1[0] == -2.75f, "lerp: %g %g", got0[0], got1[0]);
  OK(cnnlForeachUnaryOp_v2(handle, CNNL_FOREACH_SQRT, CNNL_COMPUTATION_HIGH_PRECISION, 2, descs,
                           (const void *const *)b, NULL, 0, descs, b)); /* in place */
  download(got0, b[0], 3);
  EXPECT(fabsf(got0[0] - 3.1622777f) < 1e-6f && fabsf(got0[2] - 5.4772256f) < 1e-6f, "sqrt: %g %g", got0[0],
         got0[2]);
  float three[1] = {3};
  FAILS_WITH(cnnlForeachBinaryOp(handle, CNNL_FOREACH_DIV, FOREACH_BINARY_SCALAR, 2, descs,
                                 (const void *const *)a, NULL, NULL, NULL, three, NULL, NULL, 0, descs, out),
             CNNL_STATUS_BAD_PARAM, "scalar_desc");
  for (int i = 0; i < 2; i++) {
    OK(cnrtFree(a[i]));
    OK(cnrtFree(b[i]));
    OK(cnrtFree(out[i]));
    OK(cnnlDestroyTensorDescriptor(descs[i]));
  }
}

static void remembered_descriptors(void) {
  float x[4] = {1, 2, 3, 4}, y[4];
  cnnlTensorDescriptor_t desc = tensor(4);
  cnnlOpTensorDescriptor_t op = NULL;
  OK(cnnlCreateOpTensorDescriptor(&op));
  OK(cnnlSetOpTensorDescriptor(op, CNNL_OP_TENSOR_MUL, CNNL_DTYPE_FLOAT, CNNL_NOT_PROPAGATE_NAN));
  void *px = upload(x, 4), *py = NULL;
  OK(cnrtMalloc(&py, sizeof y));
  float one = 1, zero = 0;
  for (int i = 0; i < 3; i++) {
    OK(cnnlOpTensor(handle, op, &one, desc, px, &one, desc, px, NULL, 0, &zero, desc, py));
  }
  download(y, py, 4);
  EXPECT(y[0] == 1 && y[3] == 16, "x * x: %g %g", y[0], y[3]);
  int same[1] = {4};
  OK(cnnlSetTensorDescriptor(desc, CNNL_LAYOUT_ARRAY, CNNL_DTYPE_INT32, 1, same));
  FAILS_WITH(cnnlOpTensor(handle, op, &one, desc, px, &one, desc, px, NULL, 0, &zero, desc, py),
             CNNL_STATUS_BAD_PARAM, "computation type"); /* FLOAT computation for INT32 tensors: checked again */
  OK(cnrtFree(px));
  OK(cnrtFree(py));
  OK(cnnlDestroyOpTensorDescriptor(op));
  OK(cnnlDestroyTensorDescriptor(desc));
}

int main(void) {
  OK(cnnlCreate(&handle));
  foreach_ops();
  remembered_descriptors();
  OK(cnnlDestroy(handle));
  DONE();
}
