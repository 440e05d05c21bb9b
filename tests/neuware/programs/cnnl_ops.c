/* cnnl from C: each op against values this program computes itself, plus the status of bad calls. */
#include <stdint.h>
#include <stdlib.h>

#include <cnnl.h>

#include "check.h"

static cnnlHandle_t handle;
static cnrtQueue_t queue;

static cnnlTensorDescriptor_t tensor(cnnlDataType_t dtype, int rank, const int *dims) {
  cnnlTensorDescriptor_t desc = NULL;
  OK(cnnlCreateTensorDescriptor(&desc));
  OK(cnnlSetTensorDescriptor(desc, CNNL_LAYOUT_ARRAY, dtype, rank, dims));
  return desc;
}

static void *upload(const void *host, size_t bytes) {
  void *device = NULL;
  OK(cnrtMalloc(&device, bytes));
  OK(cnrtMemcpy(device, (void *)host, bytes, cnrtMemcpyHostToDev));
  return device;
}

static void download(void *host, void *device, size_t bytes) {
  OK(cnrtQueueSync(queue));
  OK(cnrtMemcpy(host, device, bytes, cnrtMemcpyDevToHost));
}

/* c = alpha1 * a + alpha2 * b + beta * c with b [1, 3, 1] broadcast over a [2, 3, 4]; then int32 SUB. */
static void op_tensor(void) {
  enum { N = 24 };
  float a[N], b[3], c[N], want[N];
  for (int i = 0; i < N; i++) a[i] = 0.5f * i - 3, c[i] = 100 + i;
  for (int j = 0; j < 3; j++) b[j] = 10.0f * (j + 1);
  int dims_a[3] = {2, 3, 4}, dims_b[3] = {1, 3, 1};
  cnnlTensorDescriptor_t ad = tensor(CNNL_DTYPE_FLOAT, 3, dims_a), bd = tensor(CNNL_DTYPE_FLOAT, 3, dims_b);
  cnnlTensorDescriptor_t cd = tensor(CNNL_DTYPE_FLOAT, 3, dims_a);
  void *da = upload(a, sizeof a), *db = upload(b, sizeof b), *dc = upload(c, sizeof c);
  cnnlOpTensorDescriptor_t op = NULL;
  OK(cnnlCreateOpTensorDescriptor(&op));
  OK(cnnlSetOpTensorDescriptor(op, CNNL_OP_TENSOR_ADD, CNNL_DTYPE_FLOAT, CNNL_NOT_PROPAGATE_NAN));
  size_t ws_size = 0;
  OK(cnnlGetOpTensorWorkspaceSize(handle, ad, bd, cd, &ws_size));
  EXPECT(ws_size > 0, "a broadcast input needs staging: workspace %zu", ws_size);
  void *ws = NULL;
  OK(cnrtMalloc(&ws, ws_size));
  float alpha1 = 2.0f, alpha2 = -1.0f, beta = 0.5f;
  OK(cnnlOpTensor(handle, op, &alpha1, ad, da, &alpha2, bd, db, ws, ws_size, &beta, cd, dc));
  for (int i = 0; i < N; i++) want[i] = alpha1 * a[i] + alpha2 * b[(i / 4) % 3] + beta * c[i];
  download(c, dc, sizeof c);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += !close_to(c[i], want[i], 1e-6);
  EXPECT(bad == 0, "%d of %d opTensor results wrong (c[5] = %g, want %g)", bad, N, c[5], want[5]);

  /* too small a workspace, a NULL input and a wrong computation type are BAD_PARAM */
  FAILS_WITH(cnnlOpTensor(handle, op, &alpha1, ad, da, &alpha2, bd, db, ws, ws_size - 1, &beta, cd, dc),
             CNNL_STATUS_BAD_PARAM, "workspace");
  FAILS_WITH(cnnlOpTensor(handle, op, &alpha1, ad, NULL, &alpha2, bd, db, ws, ws_size, &beta, cd, dc),
             CNNL_STATUS_BAD_PARAM, "'a'");
  FAILS_WITH(cnnlGetOpTensorWorkspaceSize(handle, ad, bd, cd, NULL), CNNL_STATUS_BAD_PARAM, "'size'");

  /* int32: alpha and beta are int32_t for an integer computation type */
  int32_t ia[N], ib[3], ic[N];
  for (int i = 0; i < N; i++) ia[i] = 3 * i;
  for (int j = 0; j < 3; j++) ib[j] = 1000 * (j + 1);
  cnnlTensorDescriptor_t iad = tensor(CNNL_DTYPE_INT32, 3, dims_a), ibd = tensor(CNNL_DTYPE_INT32, 3, dims_b);
  cnnlTensorDescriptor_t icd = tensor(CNNL_DTYPE_INT32, 3, dims_a);
  void *dia = upload(ia, sizeof ia), *dib = upload(ib, sizeof ib), *dic = NULL;
  OK(cnrtMalloc(&dic, sizeof ic));
  OK(cnnlSetOpTensorDescriptor(op, CNNL_OP_TENSOR_SUB, CNNL_DTYPE_INT32, CNNL_NOT_PROPAGATE_NAN));
  int32_t one = 1, three = 3, zero = 0;
  OK(cnnlOpTensor(handle, op, &three, iad, dia, &one, ibd, dib, ws, ws_size, &zero, icd, dic));
  download(ic, dic, sizeof ic);
  bad = 0;
  for (int i = 0; i < N; i++) bad += ic[i] != 3 * ia[i] - ib[(i / 4) % 3];
  EXPECT(bad == 0, "%d int32 SUB results wrong (ic[7] = %d)", bad, ic[7]);

  OK(cnnlDestroyOpTensorDescriptor(op));
  FAILS_WITH(cnnlSetOpTensorDescriptor(op, CNNL_OP_TENSOR_ADD, CNNL_DTYPE_FLOAT, CNNL_NOT_PROPAGATE_NAN),
             CNNL_STATUS_BAD_PARAM, "destroyed");
  void *buffers[] = {da, db, dc, ws, dia, dib, dic};
  for (unsigned i = 0; i < sizeof buffers / sizeof buffers[0]; i++) OK(cnrtFree(buffers[i]));
  cnnlTensorDescriptor_t descs[] = {ad, bd, cd, iad, ibd, icd};
  for (unsigned i = 0; i < sizeof descs / sizeof descs[0]; i++) OK(cnnlDestroyTensorDescriptor(descs[i]));
}

/* c = alpha * a @ b^T + beta * c (cnnlMatMul), then d = a @ b^T through cnnlMatMul_v2 and its heuristic. */
static void matmul(void) {
  enum { M = 5, K = 7, Nn = 3 };
  float a[M * K], b[Nn * K], c[M * Nn], want[M * Nn];
  for (int i = 0; i < M * K; i++) a[i] = (float)((i * 37) % 11) - 5;
  for (int i = 0; i < Nn * K; i++) b[i] = (float)((i * 13) % 7) * 0.25f;
  for (int i = 0; i < M * Nn; i++) c[i] = (float)i;
  int da_[2] = {M, K}, db_[2] = {Nn, K}, dc_[2] = {M, Nn};
  cnnlTensorDescriptor_t ad = tensor(CNNL_DTYPE_FLOAT, 2, da_), bd = tensor(CNNL_DTYPE_FLOAT, 2, db_);
  cnnlTensorDescriptor_t cd = tensor(CNNL_DTYPE_FLOAT, 2, dc_);
  void *da = upload(a, sizeof a), *db = upload(b, sizeof b), *dc = upload(c, sizeof c);
  float alpha = 1.5f, beta = -1.0f;
  OK(cnnlMatMul(handle, false, true, &alpha, ad, da, bd, db, &beta, cd, dc));
  for (int i = 0; i < M; i++)
    for (int j = 0; j < Nn; j++) {
      double sum = 0;
      for (int k = 0; k < K; k++) sum += a[i * K + k] * b[j * K + k];
      want[i * Nn + j] = (float)(alpha * sum + beta * c[i * Nn + j]);
    }
  float got[M * Nn];
  download(got, dc, sizeof got);
  int bad = 0;
  for (int i = 0; i < M * Nn; i++) bad += !close_to(got[i], want[i], 1e-5);
  EXPECT(bad == 0, "%d cnnlMatMul results wrong (got[4] = %g, want %g)", bad, got[4], want[4]);

  cnnlMatMulDescriptor_t desc = NULL;
  cnnlMatMulAlgo_t algo = NULL;
  cnnlMatMulHeuristicResult_t results[2] = {NULL, NULL};
  OK(cnnlMatMulDescCreate(&desc));
  OK(cnnlMatMulAlgoCreate(&algo));
  OK(cnnlCreateMatMulHeuristicResult(&results[0]));
  OK(cnnlCreateMatMulHeuristicResult(&results[1]));
  int32_t trans_b = 1, read_back = 0;
  size_t written = 0;
  OK(cnnlSetMatMulDescAttr(desc, CNNL_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b));
  OK(cnnlGetMatMulDescAttr(desc, CNNL_MATMUL_DESC_TRANSB, &read_back, sizeof read_back, &written));
  EXPECT(read_back == 1 && written == sizeof read_back, "attribute read back %d (%zu bytes)", read_back, written);
  FAILS_WITH(cnnlSetMatMulDescAttr(desc, CNNL_MATMUL_DESC_TRANSB, &trans_b, 3), CNNL_STATUS_BAD_PARAM,
             "size_in_bytes");
  int returned = 0;
  size_t ws_size = 99;
  OK(cnnlGetMatMulAlgoHeuristic(handle, desc, ad, bd, cd, cd, NULL, 2, results, &returned));
  EXPECT(returned >= 1, "heuristic returned %d", returned);
  OK(cnnlGetMatMulHeuristicResult(results[0], algo, &ws_size));
  float zero = 0, unit = 1;
  void *dd = NULL;
  OK(cnrtMalloc(&dd, sizeof got));
  OK(cnnlMatMul_v2(handle, desc, algo, &unit, ad, da, bd, db, &zero, cd, dc, NULL, ws_size, cd, dd));
  download(got, dd, sizeof got);
  bad = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < Nn; j++) {
      double sum = 0;
      for (int k = 0; k < K; k++) sum += a[i * K + k] * b[j * K + k];
      bad += !close_to(got[i * Nn + j], sum, 1e-5);
    }
  EXPECT(bad == 0 && ws_size == 0, "%d cnnlMatMul_v2 results wrong, workspace %zu", bad, ws_size);

  OK(cnnlDestroyMatMulHeuristicResult(results[0]));
  OK(cnnlDestroyMatMulHeuristicResult(results[1]));
  OK(cnnlMatMulAlgoDestroy(algo));
  OK(cnnlMatMulDescDestroy(desc));
  void *buffers[] = {da, db, dc, dd};
  for (unsigned i = 0; i < 4; i++) OK(cnrtFree(buffers[i]));
  OK(cnnlDestroyTensorDescriptor(ad));
  OK(cnnlDestroyTensorDescriptor(bd));
  OK(cnnlDestroyTensorDescriptor(cd));
}

/* NHWC convolution, 3x3 filter, padding 1, stride 2, with bias, in float and in half (which needs a
 * workspace: the float32 accumulator of y). */
enum { CN = 2, CH = 5, CW = 5, CC = 3, CO = 4, KH = 3, KW = 3, OH = 3, OW = 3 };

static void conv_reference(const float *x, const float *w, const float *bias, float *y) {
  for (int n = 0; n < CN; n++)
    for (int oh = 0; oh < OH; oh++)
      for (int ow = 0; ow < OW; ow++)
        for (int co = 0; co < CO; co++) {
          double sum = bias[co];
          for (int kh = 0; kh < KH; kh++)
            for (int kw = 0; kw < KW; kw++) {
              int ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw;
              if (ih < 0 || ih >= CH || iw < 0 || iw >= CW) continue;
              for (int ci = 0; ci < CC; ci++)
                sum += x[((n * CH + ih) * CW + iw) * CC + ci] * w[((co * KH + kh) * KW + kw) * CC + ci];
            }
          y[((n * OH + oh) * OW + ow) * CO + co] = (float)sum;
        }
}

static int convolve(cnnlDataType_t dtype, const void *x, const void *w, const void *bias, void *y, size_t item,
                    size_t *workspace_used) {
  int xd_[4] = {CN, CH, CW, CC}, wd_[4] = {CO, KH, KW, CC}, yd_[4] = {CN, OH, OW, CO}, bd_[1] = {CO};
  cnnlTensorDescriptor_t xd, wd, yd, bd;
  OK(cnnlCreateTensorDescriptor(&xd));
  OK(cnnlCreateTensorDescriptor(&wd));
  OK(cnnlCreateTensorDescriptor(&yd));
  OK(cnnlSetTensorDescriptor(xd, CNNL_LAYOUT_NHWC, dtype, 4, xd_));
  OK(cnnlSetTensorDescriptor(wd, CNNL_LAYOUT_NHWC, dtype, 4, wd_));
  OK(cnnlSetTensorDescriptor(yd, CNNL_LAYOUT_NHWC, dtype, 4, yd_));
  bd = tensor(dtype, 1, bd_);
  cnnlConvolutionDescriptor_t conv = NULL;
  OK(cnnlCreateConvolutionDescriptor(&conv));
  int pad[4] = {1, 1, 1, 1}, stride[2] = {2, 2}, dilation[2] = {1, 1};
  OK(cnnlSetConvolutionDescriptor(conv, 4, pad, stride, dilation, 1, CNNL_DTYPE_FLOAT));
  cnnlConvolutionForwardAlgo_t algo;
  OK(cnnlGetConvolutionForwardAlgorithm(handle, conv, xd, wd, yd, CNNL_CONVOLUTION_FWD_FASTEST, &algo));
  size_t ws_size = 0;
  OK(cnnlGetConvolutionForwardWorkspaceSize(handle, xd, wd, yd, bd, conv, algo, &ws_size));
  *workspace_used = ws_size;
  size_t xs = (size_t)CN * CH * CW * CC * item, wsz = (size_t)CO * KH * KW * CC * item;
  void *dx = upload(x, xs), *dw = upload(w, wsz), *db = upload(bias, CO * item), *dy = NULL, *ws = NULL;
  OK(cnrtMalloc(&dy, (size_t)CN * OH * OW * CO * item));
  if (ws_size) {
    OK(cnrtMalloc(&ws, ws_size));
    FAILS_WITH(cnnlConvolutionForward(handle, conv, algo, NULL, xd, dx, wd, dw, bd, db, NULL, ws_size, NULL, yd,
                                      dy),
               CNNL_STATUS_BAD_PARAM, "workspace");
  }
  OK(cnnlConvolutionForward(handle, conv, algo, NULL, xd, dx, wd, dw, bd, db, ws, ws_size, NULL, yd, dy));
  download(y, dy, (size_t)CN * OH * OW * CO * item);
  void *buffers[] = {dx, dw, db, dy, ws};
  for (unsigned i = 0; i < 5; i++) OK(cnrtFree(buffers[i]));
  OK(cnnlDestroyConvolutionDescriptor(conv));
  cnnlTensorDescriptor_t descs[] = {xd, wd, yd, bd};
  for (unsigned i = 0; i < 4; i++) OK(cnnlDestroyTensorDescriptor(descs[i]));
  return 0;
}

static void convolution(void) {
  static float x[CN * CH * CW * CC], w[CO * KH * KW * CC], bias[CO], y[CN * OH * OW * CO], want[CN * OH * OW * CO];
  for (int i = 0; i < CN * CH * CW * CC; i++) x[i] = (float)((i * 7) % 13) / 4 - 1;
  for (int i = 0; i < CO * KH * KW * CC; i++) w[i] = (float)((i * 5) % 9) / 8 - 0.5f;
  for (int i = 0; i < CO; i++) bias[i] = 0.25f * i;
  conv_reference(x, w, bias, want);
  size_t ws_size = 1;
  convolve(CNNL_DTYPE_FLOAT, x, w, bias, y, sizeof(float), &ws_size);
  int bad = 0;
  for (int i = 0; i < CN * OH * OW * CO; i++) bad += !close_to(y[i], want[i], 1e-5);
  EXPECT(bad == 0, "%d float convolution results wrong (y[0] = %g, want %g)", bad, y[0], want[0]);

  static _Float16 hx[CN * CH * CW * CC], hw[CO * KH * KW * CC], hb[CO], hy[CN * OH * OW * CO];
  static float rx[CN * CH * CW * CC], rw[CO * KH * KW * CC], rb[CO];
  for (int i = 0; i < CN * CH * CW * CC; i++) rx[i] = (float)(hx[i] = (_Float16)x[i]);
  for (int i = 0; i < CO * KH * KW * CC; i++) rw[i] = (float)(hw[i] = (_Float16)w[i]);
  for (int i = 0; i < CO; i++) rb[i] = (float)(hb[i] = (_Float16)bias[i]);
  conv_reference(rx, rw, rb, want);
  convolve(CNNL_DTYPE_HALF, hx, hw, hb, hy, sizeof(_Float16), &ws_size);
  EXPECT(ws_size >= sizeof(float) * CN * OH * OW * CO, "half convolution workspace %zu", ws_size);
  bad = 0;
  for (int i = 0; i < CN * OH * OW * CO; i++) bad += !close_to((float)hy[i], (float)(_Float16)want[i], 2e-3);
  EXPECT(bad == 0, "%d half convolution results wrong (y[1] = %g, want %g)", bad, (float)hy[1], want[1]);
}

/* softmax and log-softmax along the last axis */
static void softmax(void) {
  enum { R = 3, L = 6 };
  float x[R * L], y[R * L];
  for (int i = 0; i < R * L; i++) x[i] = (float)((i * 17) % 10) - 4;
  int dims[2] = {R, L};
  cnnlTensorDescriptor_t xd = tensor(CNNL_DTYPE_FLOAT, 2, dims);
  void *dx = upload(x, sizeof x), *dy = NULL;
  OK(cnrtMalloc(&dy, sizeof y));
  for (int log = 0; log < 2; log++) {
    OK(cnnlSoftmaxForward(handle, log ? CNNL_SOFTMAX_LOG : CNNL_SOFTMAX_ACCURATE, CNNL_SOFTMAX_MODE_LOW_DIMENSION,
                          NULL, xd, dx, NULL, xd, dy));
    download(y, dy, sizeof y);
    int bad = 0;
    for (int r = 0; r < R; r++) {
      double top = x[r * L], sum = 0;
      for (int j = 1; j < L; j++) top = fmax(top, x[r * L + j]);
      for (int j = 0; j < L; j++) sum += exp(x[r * L + j] - top);
      for (int j = 0; j < L; j++) {
        double want = log ? x[r * L + j] - top - log1p(sum - 1) : exp(x[r * L + j] - top) / sum;
        bad += !close_to(y[r * L + j], want, 1e-5);
      }
    }
    EXPECT(bad == 0, "%d %s results wrong", bad, log ? "log-softmax" : "softmax");
  }
  FAILS_WITH(cnnlSoftmaxForward(handle, (cnnlSoftmaxAlgorithm_t)9, CNNL_SOFTMAX_MODE_LOW_DIMENSION, NULL, xd, dx,
                                NULL, xd, dy),
             CNNL_STATUS_BAD_PARAM, "algorithm");
  OK(cnrtFree(dx));
  OK(cnrtFree(dy));
  OK(cnnlDestroyTensorDescriptor(xd));
}

/* transpose [2, 3, 4] by (2, 0, 1), and the descriptor read back */
static void transpose(void) {
  float x[24], y[24];
  for (int i = 0; i < 24; i++) x[i] = (float)i;
  int xd_[3] = {2, 3, 4}, yd_[3] = {4, 2, 3}, permute[3] = {2, 0, 1};
  cnnlTensorDescriptor_t xd = tensor(CNNL_DTYPE_FLOAT, 3, xd_), yd = tensor(CNNL_DTYPE_FLOAT, 3, yd_);
  cnnlTransposeDescriptor_t td = NULL;
  OK(cnnlCreateTransposeDescriptor(&td));
  OK(cnnlSetTransposeDescriptor(td, 3, permute));
  int dims = 0, back[CNNL_DIM_MAX] = {0};
  OK(cnnlGetTransposeDescriptor(td, &dims, back));
  EXPECT(dims == 3 && back[0] == 2 && back[1] == 0 && back[2] == 1, "permute read back %d: %d %d %d", dims,
         back[0], back[1], back[2]);
  size_t ws_size = 0;
  OK(cnnlGetTransposeWorkspaceSize(handle, xd, td, &ws_size));
  void *dx = upload(x, sizeof x), *dy = NULL, *ws = NULL;
  OK(cnrtMalloc(&dy, sizeof y));
  if (ws_size) OK(cnrtMalloc(&ws, ws_size));
  OK(cnnlTranspose_v2(handle, td, xd, dx, yd, dy, ws, ws_size));
  download(y, dy, sizeof y);
  int bad = 0;
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++) bad += y[(k * 2 + i) * 3 + j] != x[(i * 3 + j) * 4 + k];
  EXPECT(bad == 0, "%d transposed elements wrong", bad);
  int wrong[3] = {4, 3, 2};
  cnnlTensorDescriptor_t wd = tensor(CNNL_DTYPE_FLOAT, 3, wrong);
  FAILS_WITH(cnnlTranspose_v2(handle, td, xd, dx, wd, dy, ws, ws_size), CNNL_STATUS_BAD_PARAM, "y_desc");
  OK(cnnlDestroyTransposeDescriptor(td));
  OK(cnrtFree(dx));
  OK(cnrtFree(dy));
  if (ws) OK(cnrtFree(ws));
  OK(cnnlDestroyTensorDescriptor(xd));
  OK(cnnlDestroyTensorDescriptor(yd));
  OK(cnnlDestroyTensorDescriptor(wd));
}

/* arrays of descriptors and pointers (cnnlConcat), per-rank arrays (cnnlStridedSlice), a typed host scalar
 * (cnnlFill_v3 with a half value), strided descriptors read back */
static void arrays_and_scalars(void) {
  float a[4] = {1, 2, 3, 4}, b[6] = {5, 6, 7, 8, 9, 10}, out[10];
  int da_[2] = {2, 2}, db_[2] = {2, 3}, do_[2] = {2, 5};
  cnnlTensorDescriptor_t descs[2] = {tensor(CNNL_DTYPE_FLOAT, 2, da_), tensor(CNNL_DTYPE_FLOAT, 2, db_)};
  cnnlTensorDescriptor_t od = tensor(CNNL_DTYPE_FLOAT, 2, do_);
  const void *inputs[2] = {upload(a, sizeof a), upload(b, sizeof b)};
  void *dout = NULL, *ws = NULL;
  OK(cnrtMalloc(&dout, sizeof out));
  size_t ws_size = 0;
  OK(cnnlGetConcatWorkspaceSize(handle, 2, &ws_size));
  if (ws_size) OK(cnrtMalloc(&ws, ws_size));
  OK(cnnlConcat(handle, 2, 1, descs, inputs, ws, ws_size, od, dout));
  download(out, dout, sizeof out);
  float want[10] = {1, 2, 5, 6, 7, 3, 4, 8, 9, 10};
  EXPECT(memcmp(out, want, sizeof out) == 0, "concat %g %g %g %g %g", out[0], out[1], out[2], out[3], out[4]);
  FAILS_WITH(cnnlConcat(handle, 2, 1, NULL, inputs, ws, ws_size, od, dout), CNNL_STATUS_BAD_PARAM,
             "'inputs_desc'");

  int begin[2] = {1, 4}, end[2] = {2, 0}, stride[2] = {1, -2}, ds_[2] = {1, 2};
  cnnlTensorDescriptor_t sd = tensor(CNNL_DTYPE_FLOAT, 2, ds_);
  float sliced[2];
  void *dsliced = NULL;
  OK(cnrtMalloc(&dsliced, sizeof sliced));
  OK(cnnlStridedSlice(handle, od, dout, begin, end, stride, sd, dsliced));
  download(sliced, dsliced, sizeof sliced);
  EXPECT(sliced[0] == 10 && sliced[1] == 8, "out[1, 4:0:-2] = %g %g", sliced[0], sliced[1]);

  _Float16 fill = (_Float16)-2.5f, filled[4];
  int dh_[1] = {4};
  cnnlTensorDescriptor_t hd = tensor(CNNL_DTYPE_HALF, 1, dh_);
  void *dh = NULL;
  OK(cnrtMalloc(&dh, sizeof filled));
  OK(cnnlFill_v3(handle, CNNL_POINTER_MODE_HOST, &fill, hd, dh));
  download(filled, dh, sizeof filled);
  EXPECT((float)filled[0] == -2.5f && (float)filled[3] == -2.5f, "half fill %g", (float)filled[0]);

  int dims3[3] = {2, 3, 4}, strides3[3] = {1, 2, 6}, got_dims[CNNL_DIM_MAX], got_strides[CNNL_DIM_MAX], nb = 0;
  cnnlTensorDescriptor_t xd = NULL;
  cnnlTensorLayout_t layout;
  cnnlDataType_t dtype;
  OK(cnnlCreateTensorDescriptor(&xd));
  OK(cnnlSetTensorDescriptorEx(xd, CNNL_LAYOUT_ARRAY, CNNL_DTYPE_INT16, 3, dims3, strides3));
  OK(cnnlGetTensorDescriptorEx(xd, &layout, &dtype, &nb, got_dims, got_strides));
  EXPECT(layout == CNNL_LAYOUT_ARRAY && dtype == CNNL_DTYPE_INT16 && nb == 3 && got_dims[2] == 4 &&
             got_strides[1] == 2 && got_strides[2] == 6,
         "read back %d %d %d [%d %d %d]", layout, dtype, nb, got_strides[0], got_strides[1], got_strides[2]);
  EXPECT(cnnlGetTensorElementNum(xd) == 24, "%zu elements", cnnlGetTensorElementNum(xd));
  FAILS_WITH(cnnlSetTensorDescriptor(xd, CNNL_LAYOUT_ARRAY, CNNL_DTYPE_FLOAT, -1, dims3), CNNL_STATUS_BAD_PARAM,
             "negative");
  FAILS_WITH(cnnlSetTensorDescriptor(xd, CNNL_LAYOUT_ARRAY, CNNL_DTYPE_FLOAT, 3, NULL), CNNL_STATUS_BAD_PARAM,
             "NULL array");
  FAILS_WITH(cnnlSetTensorDescriptor((cnnlTensorDescriptor_t)queue, CNNL_LAYOUT_ARRAY, CNNL_DTYPE_FLOAT, 3, dims3),
             CNNL_STATUS_BAD_PARAM, "not a cnnlTensorDescriptor_t");

  OK(cnrtFree((void *)inputs[0]));
  OK(cnrtFree((void *)inputs[1]));
  void *buffers[] = {dout, dsliced, dh, ws};
  for (unsigned i = 0; i < 4; i++)
    if (buffers[i]) OK(cnrtFree(buffers[i]));
  cnnlTensorDescriptor_t all[] = {descs[0], descs[1], od, sd, hd, xd};
  for (unsigned i = 0; i < 6; i++) OK(cnnlDestroyTensorDescriptor(all[i]));
}

/* an error inside queued work surfaces at the next sync, as a cnrt error */
static void queued_error(void) {
  int64_t index[2] = {0, 7};
  float table[6] = {0, 1, 2, 3, 4, 5}, rows[4];
  int dt_[2] = {3, 2}, di_[1] = {2}, dr_[2] = {2, 2};
  cnnlTensorDescriptor_t td = tensor(CNNL_DTYPE_FLOAT, 2, dt_), id = tensor(CNNL_DTYPE_INT64, 1, di_);
  cnnlTensorDescriptor_t rd = tensor(CNNL_DTYPE_FLOAT, 2, dr_);
  void *dt = upload(table, sizeof table), *di = upload(index, sizeof index), *dr = NULL;
  OK(cnrtMalloc(&dr, sizeof rows));
  OK(cnnlIndexSelect(handle, 0, td, dt, id, di, rd, dr));
  cnrtRet_t status = cnrtQueueSync(queue);
  EXPECT(status != cnrtSuccess, "an out-of-range index must fail at the sync");
  EXPECT(strstr(mlusimGetLastErrorMessage(), "index") != NULL, "message: %s", mlusimGetLastErrorMessage());
  OK(cnrtQueueSync(queue));
  OK(cnrtFree(dt));
  OK(cnrtFree(di));
  OK(cnrtFree(dr));
  OK(cnnlDestroyTensorDescriptor(td));
  OK(cnnlDestroyTensorDescriptor(id));
  OK(cnnlDestroyTensorDescriptor(rd));
}

int main(void) {
  OK(cnnlCreate(&handle));
  OK(cnrtQueueCreate(&queue));
  OK(cnnlSetQueue(handle, queue));
  cnrtQueue_t got = NULL;
  OK(cnnlGetQueue(handle, &got));
  EXPECT(got == queue, "cnnlGetQueue gives back the queue set");
  op_tensor();
  matmul();
  convolution();
  softmax();
  transpose();
  arrays_and_scalars();
  queued_error();
  EXPECT(strcmp(cnnlGetErrorString(CNNL_STATUS_SUCCESS), cnnlGetErrorString(CNNL_STATUS_SUCCESS)) == 0, "stable");
  OK(cnnlDestroy(handle));
  FAILS_WITH(cnnlSetQueue(handle, queue), CNNL_STATUS_BAD_PARAM, "destroyed");
  OK(cnrtQueueDestroy(queue));
  DONE();
}
