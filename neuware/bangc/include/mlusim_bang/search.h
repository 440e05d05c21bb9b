/* mlusim BANG C: the intrinsics that search a vector or select from it: __bang_count, __bang_findfirst1 /
 * __bang_findlast1, __bang_max / __bang_min with the position of the extremum, and __bang_filter.
 *
 * __bang_max(dst, src, n) writes the largest element to dst[0] and its index (the first, where several are equal)
 * into the bits of dst[1] as an unsigned integer of the element's width (mmcv's kernels read it as
 * ((uint16_t *)dst)[1] for half, ((uint32_t *)dst)[1] for float). NaN elements are passed over. */
#ifndef MLUSIM_BANG_SEARCH_H
#define MLUSIM_BANG_SEARCH_H

#include "vector.h"

/** __bang_count(src, n): how many of the n elements are not zero. */
template <typename T>
__MLU_INLINE uint32_t __bang_count(const T *src, int n) {
  __MLU_OPERAND("__bang_count", "src", src, n);
  uint32_t found = 0;
  for (int i = 0; i < n; ++i) found += (float)src[i] != 0.0f;
  __mlu_count_vector(n);
  return found;
}
/** __bang_findfirst1(src, n): the index of the first element that is not zero; (uint32_t)-1 when none is. */
template <typename T>
__MLU_INLINE uint32_t __bang_findfirst1(const T *src, int n) {
  __MLU_OPERAND("__bang_findfirst1", "src", src, n);
  __mlu_count_vector(n);
  for (int i = 0; i < n; ++i)
    if ((float)src[i] != 0.0f) return (uint32_t)i;
  return (uint32_t)-1;
}
/** __bang_findlast1(src, n): the index of the last element that is not zero; (uint32_t)-1 when none is. */
template <typename T>
__MLU_INLINE uint32_t __bang_findlast1(const T *src, int n) {
  __MLU_OPERAND("__bang_findlast1", "src", src, n);
  __mlu_count_vector(n);
  for (int i = n - 1; i >= 0; --i)
    if ((float)src[i] != 0.0f) return (uint32_t)i;
  return (uint32_t)-1;
}

template <typename T>
__MLU_INLINE void __mlu_extremum(const char *what, T *dst, const T *src, int n, int largest) {
  __mlu_check_operand(what, "dst", dst, 2, (int64_t)sizeof(T), __MLU_NRAM);
  __MLU_OPERAND(what, "src", src, n);
  if (n < 1) __mlu_trapf("%s: needs at least one element", what);
  typedef typename __mlu_acc<T>::type A;
  int best = -1;
  for (int i = 0; i < n; ++i) {
    A v = (A)src[i];
    if (v != v) continue;
    if (best < 0 || (largest ? v > (A)src[best] : v < (A)src[best])) best = i;
  }
  dst[0] = best < 0 ? src[0] : src[best];
  typename __mlu_bits<sizeof(T)>::type index = (typename __mlu_bits<sizeof(T)>::type)(best < 0 ? 0 : best);
  memcpy(dst + 1, &index, sizeof(T));
  __mlu_count_vector(n);
}
/** __bang_max(dst, src, n): dst[0] = the largest element, dst[1] (its bits) = its index. */
template <typename T>
__MLU_INLINE void __bang_max(T *dst, const T *src, int n) { __mlu_extremum("__bang_max", dst, src, n, 1); }
/** __bang_min(dst, src, n): dst[0] = the smallest element, dst[1] (its bits) = its index. */
template <typename T>
__MLU_INLINE void __bang_min(T *dst, const T *src, int n) { __mlu_extremum("__bang_min", dst, src, n, 0); }
/** __bang_argmax(dst, src, n): the same layout as __bang_max. */
template <typename T>
__MLU_INLINE void __bang_argmax(T *dst, const T *src, int n) { __mlu_extremum("__bang_argmax", dst, src, n, 1); }
/** __bang_argmin(dst, src, n): the same layout as __bang_min. */
template <typename T>
__MLU_INLINE void __bang_argmin(T *dst, const T *src, int n) { __mlu_extremum("__bang_argmin", dst, src, n, 0); }

/** __bang_filter(dst, src, mask, n): the elements of src whose mask element is not zero, packed in order at the
    start of dst (may be src); returns how many (the rest of dst is left as it was). */
template <typename T>
__MLU_INLINE uint32_t __bang_filter(T *dst, const T *src, const T *mask, int n) {
  __MLU_OPERAND("__bang_filter", "dst", dst, n);
  __MLU_OPERAND("__bang_filter", "src", src, n);
  __MLU_OPERAND("__bang_filter", "mask", mask, n);
  uint32_t kept = 0;
  for (int i = 0; i < n; ++i)
    if ((float)mask[i] != 0.0f) dst[kept++] = src[i];
  __mlu_count_vector(n);
  return kept;
}

#endif
