// cnnl.h from C++ as DIOPI, torch_mlu and mlu-ops call it: the casts between the unsigned 32/64-bit types and the
// signed ones, cnnlAsStridedBackward's uint32_t strides, offset and workspace size, the flash attention
// descriptors' cnnlActivationPreference_t, cnnlCopy_v2 and the newer matmul descriptor names; with bad arguments.
#include <cnnl.h>

#include <cstdint>
#include <vector>

#include "check.h"

static cnnlHandle_t handle;
static cnrtQueue_t queue;

static cnnlTensorDescriptor_t tensor(cnnlDataType_t dtype, std::vector<int> dims) {
  cnnlTensorDescriptor_t desc;
  OK(cnnlCreateTensorDescriptor(&desc));
  OK(cnnlSetTensorDescriptor(desc, CNNL_LAYOUT_ARRAY, dtype, (int)dims.size(), dims.data()));
  return desc;
}

template <typename From, typename To>
static std::vector<To> cast(const std::vector<From> &in, cnnlDataType_t from, cnnlDataType_t to,
                            cnnlCastDataType_t how, cnnlStatus_t expected = CNNL_STATUS_SUCCESS) {
  int n = (int)in.size();
  void *src, *dst;
  OK(cnrtMalloc(&src, n * sizeof(From)));
  OK(cnrtMalloc(&dst, n * sizeof(To)));
  OK(cnrtMemcpy(src, (void *)in.data(), n * sizeof(From), cnrtMemcpyHostToDev));
  cnnlTensorDescriptor_t a = tensor(from, {n}), b = tensor(to, {n});
  std::vector<To> out(n);
  cnnlStatus_t status = cnnlCastDataType(handle, a, src, how, b, dst);
  EXPECT(status == expected, "status %d, expected %d: %s", (int)status, (int)expected, mlusimGetLastErrorMessage());
  OK(cnrtQueueSync(queue));
  OK(cnrtMemcpy(out.data(), dst, n * sizeof(To), cnrtMemcpyDevToHost));
  cnnlDestroyTensorDescriptor(a);
  cnnlDestroyTensorDescriptor(b);
  cnrtFree(src);
  cnrtFree(dst);
  return out;
}

static void unsigned_casts() {
  std::vector<uint32_t> u32 = {0u, 7u, 4000000000u};
  auto wide = cast<uint32_t, int64_t>(u32, CNNL_DTYPE_UINT32, CNNL_DTYPE_INT64, CNNL_CAST_UINT32_TO_INT64);
  EXPECT(wide[0] == 0 && wide[1] == 7 && wide[2] == 4000000000ll, "%lld", (long long)wide[2]);
  auto u64 = cast<uint32_t, uint64_t>(u32, CNNL_DTYPE_UINT32, CNNL_DTYPE_UINT64, CNNL_CAST_UINT32_TO_UINT64);
  EXPECT(u64[2] == 4000000000ull, "%llu", (unsigned long long)u64[2]);
  std::vector<int64_t> signed64 = {-5, 12, 5000000000ll};
  auto narrowed = cast<int64_t, uint32_t>(signed64, CNNL_DTYPE_INT64, CNNL_DTYPE_UINT32, CNNL_CAST_INT64_TO_UINT32);
  EXPECT(narrowed[0] == 0u && narrowed[1] == 12u && narrowed[2] == 4294967295u, "saturates: %u %u %u",
         narrowed[0], narrowed[1], narrowed[2]);
  std::vector<uint64_t> big = {1ull << 40, 3};
  auto back = cast<uint64_t, uint32_t>(big, CNNL_DTYPE_UINT64, CNNL_DTYPE_UINT32, CNNL_CAST_UINT64_TO_UINT32);
  EXPECT(back[0] == 4294967295u && back[1] == 3u, "%u %u", back[0], back[1]);
  /* the cast enum must name the tensors' types */
  cast<uint32_t, int64_t>(u32, CNNL_DTYPE_UINT32, CNNL_DTYPE_INT64, CNNL_CAST_UINT64_TO_UINT32,
                          CNNL_STATUS_BAD_PARAM);
}

static void as_strided_backward() {
  // dy = as_strided(x, (2, 2), stride (1, 1), offset 1) of a 4-element x: dx[1] += dy[0,0], dx[2] += dy[0,1] + dy[1,0]
  cnnlTensorDescriptor_t dy_desc = tensor(CNNL_DTYPE_FLOAT, {2, 2}), dx_desc = tensor(CNNL_DTYPE_FLOAT, {4});
  uint32_t workspace_size = 12345;
  OK(cnnlGetAsStridedBackwardWorkspaceSize(handle, dx_desc, &workspace_size));
  EXPECT(workspace_size == 0, "float needs no workspace, got %u", workspace_size);
  float dy_host[4] = {1, 2, 3, 4}, dx_host[4];
  void *dy, *dx;
  OK(cnrtMalloc(&dy, sizeof dy_host));
  OK(cnrtMalloc(&dx, sizeof dx_host));
  OK(cnrtMemcpy(dy, dy_host, sizeof dy_host, cnrtMemcpyHostToDev));
  std::vector<uint32_t> stride = {1, 1};
  OK(cnnlAsStridedBackward(handle, dy_desc, dy, dx_desc, dx, stride.data(), 1, nullptr, workspace_size));
  OK(cnrtQueueSync(queue));
  OK(cnrtMemcpy(dx_host, dx, sizeof dx_host, cnrtMemcpyDevToHost));
  EXPECT(dx_host[0] == 0 && dx_host[1] == 1 && dx_host[2] == 5 && dx_host[3] == 4, "%g %g %g %g", dx_host[0],
         dx_host[1], dx_host[2], dx_host[3]);
  FAILS_WITH(cnnlAsStridedBackward(handle, dy_desc, dy, dx_desc, dx, stride.data(), 3, nullptr, 0),
             CNNL_STATUS_BAD_PARAM, "stride");
  FAILS_WITH(cnnlAsStridedBackward(handle, dy_desc, dy, dx_desc, dx, nullptr, 0, nullptr, 0), CNNL_STATUS_BAD_PARAM,
             "stride");
  FAILS_WITH(cnnlGetAsStridedBackwardWorkspaceSize(handle, dx_desc, nullptr), CNNL_STATUS_BAD_PARAM, "size");
  cnrtFree(dy);
  cnrtFree(dx);
  cnnlDestroyTensorDescriptor(dy_desc);
  cnnlDestroyTensorDescriptor(dx_desc);
}

static void flash_attention_preference() {
  cnnlFlashAttentionDescriptor_t desc;
  OK(cnnlCreateFlashAttentionDescriptor(&desc));
  OK(cnnlSetFlashAttentionDescriptor(desc, CNNL_DTYPE_FLOAT, CNNL_ACTIVATION_HIGH_PRECISION, CNNL_ATTN_MASK_CAUSAL,
                                     true, false, false, 16, 16, 0.0f, 0.125f));
  OK(cnnlSetFlashAttentionBackwardDescriptor(desc, CNNL_DTYPE_FLOAT, CNNL_ACTIVATION_FAST, CNNL_ATTN_MASK_NONE, true,
                                             false, false, 16, 16, 0.0f, 0.125f));
  FAILS_WITH(cnnlSetFlashAttentionDescriptor(desc, CNNL_DTYPE_FLOAT, (cnnlActivationPreference_t)9,
                                             CNNL_ATTN_MASK_NONE, true, false, false, 16, 16, 0.0f, 0.125f),
             CNNL_STATUS_BAD_PARAM, "prefer");
  OK(cnnlDestroyFlashAttentionDescriptor(desc));
}

static void copy_v2_and_matmul_names() {
  // a transposing copy: a 2x3 view with strides (1, 2) of a dense 3x2 buffer into a dense 2x3
  cnnlTensorDescriptor_t in_desc, out_desc = tensor(CNNL_DTYPE_FLOAT, {2, 3});
  OK(cnnlCreateTensorDescriptor(&in_desc));
  int dims[2] = {2, 3}, strides[2] = {1, 2};
  OK(cnnlSetTensorDescriptorEx(in_desc, CNNL_LAYOUT_ARRAY, CNNL_DTYPE_FLOAT, 2, dims, strides));
  float host[6] = {0, 1, 2, 3, 4, 5}, out[6];
  void *src, *dst;
  OK(cnrtMalloc(&src, sizeof host));
  OK(cnrtMalloc(&dst, sizeof out));
  OK(cnrtMemcpy(src, host, sizeof host, cnrtMemcpyHostToDev));
  size_t workspace_size = 99;
  OK(cnnlGetCopyWorkspaceSize(handle, in_desc, out_desc, &workspace_size));
  EXPECT(workspace_size == 0, "%zu", workspace_size);
  OK(cnnlCopy_v2(handle, in_desc, src, out_desc, dst, nullptr, 0));
  OK(cnrtQueueSync(queue));
  OK(cnrtMemcpy(out, dst, sizeof out, cnrtMemcpyDevToHost));
  float want[6] = {0, 2, 4, 1, 3, 5};
  for (int i = 0; i < 6; i++) EXPECT(out[i] == want[i], "out[%d] = %g", i, out[i]);
  FAILS_WITH(cnnlCopy_v2(handle, in_desc, src, out_desc, dst, nullptr, 16), CNNL_STATUS_BAD_PARAM, "workspace");
  cnnlTensorDescriptor_t other = tensor(CNNL_DTYPE_FLOAT, {3, 2});
  FAILS_WITH(cnnlCopy_v2(handle, in_desc, src, other, dst, nullptr, 0), CNNL_STATUS_BAD_PARAM, "output_desc");
  FAILS_WITH(cnnlGetCopyWorkspaceSize(handle, in_desc, out_desc, nullptr), CNNL_STATUS_BAD_PARAM, "workspace_size");
  cnnlDestroyTensorDescriptor(other);
  cnnlDestroyTensorDescriptor(in_desc);
  cnnlDestroyTensorDescriptor(out_desc);
  cnrtFree(src);
  cnrtFree(dst);

  cnnlMatMulDescriptor_t matmul;
  cnnlMatMulAlgo_t algo;
  OK(cnnlCreateMatMulDescriptor(&matmul));
  OK(cnnlCreateMatMulAlgo(&algo));
  int32_t transpose_a = 1;
  OK(cnnlSetMatMulDescAttr(matmul, CNNL_MATMUL_DESC_TRANSA, &transpose_a, sizeof transpose_a));
  OK(cnnlDestroyMatMulAlgo(algo));
  OK(cnnlDestroyMatMulDescriptor(matmul));
  FAILS_WITH(cnnlDestroyMatMulDescriptor(matmul), CNNL_STATUS_BAD_PARAM, "destroyed");
  FAILS_WITH(cnnlCreateMatMulAlgo(nullptr), CNNL_STATUS_BAD_PARAM, "algo");
}

int main() {
  OK(cnnlCreate(&handle));
  OK(cnrtQueueCreate(&queue));
  OK(cnnlSetQueue(handle, queue));
  unsigned_casts();
  as_strided_backward();
  flash_attention_preference();
  copy_v2_and_matmul_names();
  OK(cnnlDestroy(handle));
  DONE();
}
