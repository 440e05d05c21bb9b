/* mlusim BANG C: the pooling intrinsics of the vector unit (__bang_sumpool, __bang_avgpool, __bang_maxpool,
 * __bang_minpool).
 *
 * __bang_Xpool(dst, src, channel, height, width, kernel_height, kernel_width, stride_width, stride_height): src is
 * height x width x channel in NRAM (channel innermost), dst (out_h x out_w x channel) gets each window's sum,
 * mean, maximum or minimum, out_h = (height - kernel_height) / stride_height + 1 and out_w likewise. Sums are
 * accumulated in float (int64 for integers) and rounded once to the element type. */
#ifndef MLUSIM_BANG_POOL_H
#define MLUSIM_BANG_POOL_H

#include "vector.h"

template <typename T>
__MLU_INLINE void __mlu_pool(const char *what, int how, T *dst, const T *src, int channel, int height, int width,
                             int kernel_height, int kernel_width, int stride_width, int stride_height) {
  if (channel < 0 || height < 0 || width < 0)
    __mlu_trapf("%s: negative channel %d, height %d or width %d", what, channel, height, width);
  if (kernel_height <= 0 || kernel_width <= 0 || stride_width <= 0 || stride_height <= 0)
    __mlu_trapf("%s: kernel %d x %d and strides %d, %d must be positive", what, kernel_height, kernel_width,
                stride_width, stride_height);
  if (kernel_height > height || kernel_width > width)
    __mlu_trapf("%s: the %d x %d window is larger than the %d x %d input", what, kernel_height, kernel_width,
                height, width);
  int64_t out_h = (height - kernel_height) / stride_height + 1, out_w = (width - kernel_width) / stride_width + 1;
  __MLU_OPERAND(what, "src", src, (int64_t)height * width * channel);
  __MLU_OPERAND(what, "dst", dst, out_h * out_w * channel);
  typedef typename __mlu_acc<T>::type A;
  for (int64_t oy = 0; oy < out_h; ++oy)
    for (int64_t ox = 0; ox < out_w; ++ox)
      for (int64_t c = 0; c < channel; ++c) {
        A result = (A)src[((oy * stride_height) * width + ox * stride_width) * channel + c];
        if (how <= 1) result = 0;
        for (int64_t ky = 0; ky < kernel_height; ++ky)
          for (int64_t kx = 0; kx < kernel_width; ++kx) {
            A v = (A)src[((oy * stride_height + ky) * width + ox * stride_width + kx) * channel + c];
            if (how <= 1) result += v;
            else if (how == 2 ? v > result : v < result) result = v;
          }
        if (how == 1) result = result / (A)(kernel_height * kernel_width);
        dst[(oy * out_w + ox) * channel + c] = (T)result;
      }
  __mlu_count_vector(out_h * out_w * channel * kernel_height * kernel_width);
}
#define __MLU_POOL(NAME, HOW)                                                                                      \
  template <typename T>                                                                                            \
  __MLU_INLINE void NAME(T *dst, const T *src, int channel, int height, int width, int kernel_height,             \
                         int kernel_width, int stride_width, int stride_height) {                                 \
    __mlu_pool(#NAME, HOW, dst, src, channel, height, width, kernel_height, kernel_width, stride_width,           \
               stride_height);                                                                                     \
  }
__MLU_POOL(__bang_sumpool, 0)
__MLU_POOL(__bang_avgpool, 1)
__MLU_POOL(__bang_maxpool, 2)
__MLU_POOL(__bang_minpool, 3)

#endif
