/* More cnnl argument forms from C, each against values this program computes: typed host arrays (cnnlPad's int32
 * paddings), host scalars of the tensor's type (cnnlPad's value, cnnlThreshold in half), scalars chosen by pointer
 * mode (cnnlTransform_v2) or by operation (cnnlMasked_v4), several counted arrays (cnnlRoll), optional arrays
 * (cnnlSetInterpDescriptorEx's NULL scales), part-3 descriptors (trigon, interp). */
#include <stdint.h>

#include <cnnl.h>

#include "check.h"

static cnnlHandle_t handle;

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
  cnrtQueue_t queue = NULL;
  OK(cnnlGetQueue(handle, &queue));
  OK(cnrtQueueSync(queue));
  OK(cnrtMemcpy(host, device, bytes, cnrtMemcpyDevToHost));
}

static void pad(void) {
  float x[6] = {1, 2, 3, 4, 5, 6}, y[15];
  int dx[2] = {2, 3}, dy[2] = {3, 5};
  int32_t paddings[4] = {1, 0, 0, 2}; /* (before, after) per axis */
  float value = 9.5f;
  cnnlTensorDescriptor_t xd = tensor(CNNL_DTYPE_FLOAT, 2, dx), yd = tensor(CNNL_DTYPE_FLOAT, 2, dy);
  void *px = upload(x, sizeof x), *py = NULL;
  OK(cnrtMalloc(&py, sizeof y));
  OK(cnnlPad(handle, xd, px, paddings, &value, yd, py));
  download(y, py, sizeof y);
  float want[15] = {9.5f, 9.5f, 9.5f, 9.5f, 9.5f, 1, 2, 3, 9.5f, 9.5f, 4, 5, 6, 9.5f, 9.5f};
  EXPECT(memcmp(y, want, sizeof y) == 0, "pad %g %g %g %g", y[0], y[5], y[8], y[14]);
  OK(cnrtFree(px));
  OK(cnrtFree(py));
}

static void transform_and_threshold(void) {
  int32_t ix[4] = {1, -2, 3, -4}, iy[4];
  int dims[1] = {4};
  cnnlTensorDescriptor_t id = tensor(CNNL_DTYPE_INT32, 1, dims);
  void *px = upload(ix, sizeof ix), *py = NULL;
  OK(cnrtMalloc(&py, sizeof iy));
  int32_t alpha = 3, beta = -1; /* an integer tensor's host scalars are int32_t */
  OK(cnnlTransform_v2(handle, CNNL_POINTER_MODE_HOST, &alpha, id, px, &beta, id, py));
  download(iy, py, sizeof iy);
  EXPECT(iy[0] == 2 && iy[1] == -7 && iy[3] == -13, "int32 transform %d %d %d", iy[0], iy[1], iy[3]);

  _Float16 hx[4] = {(_Float16)0.5f, (_Float16)1.5f, (_Float16)-3.0f, (_Float16)2.0f}, hy[4];
  cnnlTensorDescriptor_t hd = tensor(CNNL_DTYPE_HALF, 1, dims);
  void *phx = upload(hx, sizeof hx), *phy = NULL;
  OK(cnrtMalloc(&phy, sizeof hy));
  _Float16 threshold = (_Float16)1.0f, value = (_Float16)-7.0f; /* half elements, as the tensor */
  OK(cnnlThreshold(handle, hd, phx, &threshold, &value, hd, phy));
  download(hy, phy, sizeof hy);
  EXPECT((float)hy[0] == -7 && (float)hy[1] == 1.5f && (float)hy[2] == -7 && (float)hy[3] == 2, "threshold %g %g",
         (float)hy[0], (float)hy[1]);
  void *buffers[] = {px, py, phx, phy};
  for (int i = 0; i < 4; i++) OK(cnrtFree(buffers[i]));
}

static void masked_scale_and_roll(void) {
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6];
  bool mask[6] = {true, false, true, true, false, true};
  int dims[2] = {2, 3};
  cnnlTensorDescriptor_t xd = tensor(CNNL_DTYPE_FLOAT, 2, dims), md = tensor(CNNL_DTYPE_BOOL, 2, dims);
  void *px = upload(x, sizeof x), *pm = upload(mask, sizeof mask), *py = NULL;
  OK(cnrtMalloc(&py, sizeof y));
  float scale = 0.5f; /* MASKED_SCALE: a host float */
  OK(cnnlMasked_v4(handle, CNNL_MASKED_SCALE, xd, px, md, pm, NULL, NULL, &scale, NULL, 0, xd, py, NULL));
  download(y, py, sizeof y);
  EXPECT(y[0] == 0.5f && y[1] == 0 && y[5] == 3, "masked scale %g %g %g", y[0], y[1], y[5]);

  int shifts[1] = {1}, axes[1] = {1};
  size_t ws_size = 0;
  void *ws = NULL;
  OK(cnnlGetRollWorkspaceSize(handle, xd, &ws_size));
  if (ws_size) OK(cnrtMalloc(&ws, ws_size));
  OK(cnnlRoll(handle, xd, px, shifts, 1, axes, 1, ws, ws_size, xd, py));
  download(y, py, sizeof y);
  EXPECT(y[0] == 3 && y[1] == 1 && y[3] == 6 && y[5] == 5, "roll %g %g %g %g", y[0], y[1], y[3], y[5]);
  FAILS_WITH(cnnlRoll(handle, xd, px, NULL, 1, axes, 1, ws, ws_size, xd, py), CNNL_STATUS_BAD_PARAM, "shifts");
  void *buffers[] = {px, pm, py, ws};
  for (int i = 0; i < 4; i++)
    if (buffers[i]) OK(cnrtFree(buffers[i]));
}

static void trigon_and_interp(void) {
  float x[4] = {0.0f, 0.5f, 1.0f, -2.0f}, y[4];
  int dims[1] = {4};
  cnnlTensorDescriptor_t xd = tensor(CNNL_DTYPE_FLOAT, 1, dims);
  void *px = upload(x, sizeof x), *py = NULL;
  OK(cnrtMalloc(&py, sizeof y));
  cnnlTrigonDescriptor_t trigon = NULL;
  OK(cnnlCreateTrigonDescriptor(&trigon));
  OK(cnnlSetTrigonDescriptor(trigon, CNNL_TRIGON_SIN));
  OK(cnnlTrigonForward(handle, trigon, xd, px, xd, py));
  download(y, py, sizeof y);
  int bad = 0;
  for (int i = 0; i < 4; i++) bad += !close_to(y[i], sin(x[i]), 1e-6);
  EXPECT(bad == 0, "sin %g %g", y[1], y[3]);
  OK(cnnlDestroyTrigonDescriptor(trigon));

  /* nearest 2x upsampling of a [1, 1, 2, 2] NCHW image, the scales taken from the sizes (NULL) */
  float image[4] = {1, 2, 3, 4}, up[16];
  int di[4] = {1, 1, 2, 2}, du[4] = {1, 1, 4, 4};
  cnnlTensorDescriptor_t id = NULL, ud = NULL;
  OK(cnnlCreateTensorDescriptor(&id));
  OK(cnnlCreateTensorDescriptor(&ud));
  OK(cnnlSetTensorDescriptor(id, CNNL_LAYOUT_NCHW, CNNL_DTYPE_FLOAT, 4, di));
  OK(cnnlSetTensorDescriptor(ud, CNNL_LAYOUT_NCHW, CNNL_DTYPE_FLOAT, 4, du));
  cnnlInterpDescriptor_t interp = NULL;
  OK(cnnlCreateInterpDescriptor(&interp));
  OK(cnnlSetInterpDescriptor(interp, CNNL_INTERP_NEAREST, CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO3));
  OK(cnnlSetInterpDescriptorEx(interp, id, CNNL_INTERP_FLOOR, NULL, NULL, -0.75f, false));
  void *pi = upload(image, sizeof image), *pu = NULL;
  OK(cnrtMalloc(&pu, sizeof up));
  OK(cnnlInterp_v3(handle, interp, id, pi, ud, pu));
  download(up, pu, sizeof up);
  EXPECT(up[0] == 1 && up[1] == 1 && up[2] == 2 && up[5] == 1 && up[10] == 4 && up[15] == 4, "upsampled %g %g %g",
         up[2], up[10], up[15]);
  OK(cnnlDestroyInterpDescriptor(interp));
  void *buffers[] = {px, py, pi, pu};
  for (int i = 0; i < 4; i++) OK(cnrtFree(buffers[i]));
}

int main(void) {
  OK(cnnlCreate(&handle));
  trigon_and_interp();
  pad();
  transform_and_threshold();
  masked_scale_and_roll();
  OK(cnnlDestroy(handle));
  DONE();
}
