/* mlusim BANG C: the __bang_* vector, activation, reduction, layout and matrix intrinsics.
 *
 * Each checks that its operands are in NRAM (matmul weights in WRAM), lie inside it and meet the board's alignment
 * (64-byte addresses; lengths a multiple of 128 bytes on mtp_2xx), as mlusim/bang/intrinsics.py does; it computes in
 * float (half, bfloat16_t) and rounds to the destination type. Work is counted in the task's state row. */
#ifndef MLUSIM_BANG_VECTOR_H
#define MLUSIM_BANG_VECTOR_H

#include "core.h"

typedef _Float16 half;

/** bfloat16_t: the upper 16 bits of a float (round to nearest even on conversion). */
struct bfloat16_t {
  uint16_t bits;
  bfloat16_t() = default;
  bfloat16_t(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) bits = (uint16_t)((u >> 16) | 0x40);
    else bits = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  bfloat16_t(double d) : bfloat16_t((float)d) {}
  bfloat16_t(int i) : bfloat16_t((float)i) {}
  bfloat16_t(half h) : bfloat16_t((float)h) {}
  operator float() const {
    uint32_t u = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
};

template <typename T> struct __mlu_kind { enum { value = -1 }; };
template <> struct __mlu_kind<float> { enum { value = __MLU_K_FLOAT }; };
template <> struct __mlu_kind<half> { enum { value = __MLU_K_HALF }; };
template <> struct __mlu_kind<bfloat16_t> { enum { value = __MLU_K_BFLOAT16 }; };
template <> struct __mlu_kind<int8_t> { enum { value = __MLU_K_INT8 }; };
template <> struct __mlu_kind<uint8_t> { enum { value = __MLU_K_UINT8 }; };
template <> struct __mlu_kind<int16_t> { enum { value = __MLU_K_INT16 }; };
template <> struct __mlu_kind<int32_t> { enum { value = __MLU_K_INT32 }; };

/* the type a vector op computes in: float for the float kinds, int64 for integers */
template <typename T> struct __mlu_acc { typedef int64_t type; };
template <> struct __mlu_acc<float> { typedef float type; };
template <> struct __mlu_acc<half> { typedef float type; };
template <> struct __mlu_acc<bfloat16_t> { typedef float type; };
template <> struct __mlu_acc<double> { typedef double type; };

__MLU_INLINE void __mlu_check_operand(const char *what, const char *role, const void *ptr, int64_t count,
                                       int64_t item, int space) {
  struct __mlu_region r;
  if (count < 0) __mlu_trapf("%s: negative element count %lld", what, (long long)count);
  if (item != 0 && count > INT64_MAX / item) __mlu_trapf("%s: %lld elements overflow", what, (long long)count);
  __mlu_check_span(what, role, ptr, count * item, space, &r);
  const int64_t *limits = __mlu_limits();
  int64_t align = limits[__MLU_LIM_ADDRESS_ALIGN], length_align = limits[__MLU_LIM_LENGTH_ALIGN];
  if (align > 1 && (uintptr_t)ptr % (uintptr_t)align != 0)
    __mlu_trapf("%s: %s at %s byte %llu is not %lld-byte aligned", what, role, __mlu_space_name(r.space),
                __mlu_shown(&r, (uintptr_t)ptr), (long long)align);
  if (length_align > 1 && (count * item) % length_align != 0)
    __mlu_trapf("%s: %lld elements of %lld bytes are not a multiple of %lld bytes, which this board requires", what,
                (long long)count, (long long)item, (long long)length_align);
}
#define __MLU_OPERAND(what, role, p, n) __mlu_check_operand(what, role, p, n, (int64_t)sizeof(*(p)), __MLU_NRAM)

/* ---- elementwise ----------------------------------------------------------------------------------------------- */
/* the loops of the binary and bitwise forms over dst, src0, src1 and n; src1 is read at SEG (i, or i % m for the
   cyclic forms of cycle.h) */
#define __MLU_BINARY_LOOP(EXPR, SEG)                                                                               \
  typedef typename __mlu_acc<T>::type A;                                                                           \
  for (int i = 0; i < n; ++i) {                                                                                    \
    A a = (A)src0[i], b = (A)src1[SEG];                                                                            \
    dst[i] = (T)(EXPR);                                                                                            \
  }                                                                                                                \
  __mlu_count_vector(n);
#define __MLU_BITS_LOOP(OP, SEG)                                                                                   \
  typedef typename __mlu_bits<sizeof(T)>::type U;                                                                  \
  for (int i = 0; i < n; ++i) {                                                                                    \
    U a, b;                                                                                                        \
    memcpy(&a, src0 + i, sizeof(T));                                                                               \
    memcpy(&b, src1 + (SEG), sizeof(T));                                                                           \
    a = (U)(a OP b);                                                                                               \
    memcpy(dst + i, &a, sizeof(T));                                                                                \
  }                                                                                                                \
  __mlu_count_vector(n);
#define __MLU_BINARY(NAME, EXPR)                                                                                   \
  template <typename T>                                                                                            \
  __MLU_INLINE void NAME(T *dst, const T *src0, const T *src1, int n) {                                           \
    __MLU_OPERAND(#NAME, "dst", dst, n);                                                                           \
    __MLU_OPERAND(#NAME, "src0", src0, n);                                                                         \
    __MLU_OPERAND(#NAME, "src1", src1, n);                                                                         \
    __MLU_BINARY_LOOP(EXPR, i)                                                                                     \
  }
__MLU_BINARY(__bang_add, a + b)
__MLU_BINARY(__bang_sub, a - b)
__MLU_BINARY(__bang_mul, a * b)
__MLU_BINARY(__bang_div, a / b)
__MLU_BINARY(__bang_maximum, a > b ? a : b)
__MLU_BINARY(__bang_minimum, a < b ? a : b)
__MLU_BINARY(__bang_maxequal, a > b ? a : b)
__MLU_BINARY(__bang_minequal, a < b ? a : b)
__MLU_BINARY(__bang_eq, (A)(a == b))
__MLU_BINARY(__bang_ne, (A)(a != b))
__MLU_BINARY(__bang_lt, (A)(a < b))
__MLU_BINARY(__bang_le, (A)(a <= b))
__MLU_BINARY(__bang_gt, (A)(a > b))
__MLU_BINARY(__bang_ge, (A)(a >= b))
__MLU_BINARY(__bang_and, (A)(a != 0 && b != 0))
__MLU_BINARY(__bang_or, (A)(a != 0 || b != 0))
__MLU_BINARY(__bang_xor, (A)((a != 0) != (b != 0)))
__MLU_BINARY(__bang_squared_diff, (a - b) * (a - b))
/* NaN in either operand gives NaN (__bang_maximum/minimum take the other operand, as fmax/fmin) */
__MLU_BINARY(__bang_nan_maximum, a != a || b != b ? a + b : (a > b ? a : b))
__MLU_BINARY(__bang_nan_minimum, a != a || b != b ? a + b : (a < b ? a : b))

/* the bitwise intrinsics work on each element's bits (any element type) */
template <int N> struct __mlu_bits;
template <> struct __mlu_bits<1> { typedef uint8_t type; };
template <> struct __mlu_bits<2> { typedef uint16_t type; };
template <> struct __mlu_bits<4> { typedef uint32_t type; };
template <> struct __mlu_bits<8> { typedef uint64_t type; };
#define __MLU_BITWISE(NAME, OP)                                                                                    \
  template <typename T>                                                                                            \
  __MLU_INLINE void NAME(T *dst, const T *src0, const T *src1, int n) {                                           \
    __MLU_OPERAND(#NAME, "dst", dst, n);                                                                           \
    __MLU_OPERAND(#NAME, "src0", src0, n);                                                                         \
    __MLU_OPERAND(#NAME, "src1", src1, n);                                                                         \
    __MLU_BITS_LOOP(OP, i)                                                                                         \
  }
__MLU_BITWISE(__bang_band, &)
__MLU_BITWISE(__bang_bor, |)
__MLU_BITWISE(__bang_bxor, ^)
/** __bang_bnot(dst, src, n): each element's bits inverted. */
template <typename T>
__MLU_INLINE void __bang_bnot(T *dst, const T *src, int n) {
  __MLU_OPERAND("__bang_bnot", "dst", dst, n);
  __MLU_OPERAND("__bang_bnot", "src", src, n);
  typedef typename __mlu_bits<sizeof(T)>::type U;
  for (int i = 0; i < n; ++i) {
    U a;
    memcpy(&a, src + i, sizeof(T));
    a = (U)~a;
    memcpy(dst + i, &a, sizeof(T));
  }
  __mlu_count_vector(n);
}

#define __MLU_BITWISE_SCALAR(NAME, OP)                                                                             \
  template <typename T, typename S>                                                                                \
  __MLU_INLINE void NAME(T *dst, const T *src, S value, int n) {                                                  \
    __MLU_OPERAND(#NAME, "dst", dst, n);                                                                           \
    __MLU_OPERAND(#NAME, "src", src, n);                                                                           \
    typedef typename __mlu_bits<sizeof(T)>::type U;                                                                \
    T typed = (T)value;                                                                                            \
    U b;                                                                                                           \
    memcpy(&b, &typed, sizeof(T));                                                                                 \
    for (int i = 0; i < n; ++i) {                                                                                  \
      U a;                                                                                                         \
      memcpy(&a, src + i, sizeof(T));                                                                              \
      a = (U)(a OP b);                                                                                             \
      memcpy(dst + i, &a, sizeof(T));                                                                              \
    }                                                                                                              \
    __mlu_count_vector(n);                                                                                         \
  }
__MLU_BITWISE_SCALAR(__bang_band_scalar, &)
__MLU_BITWISE_SCALAR(__bang_bor_scalar, |)
__MLU_BITWISE_SCALAR(__bang_bxor_scalar, ^)

/** __bang_rem(dst, src, value, n): the remainder of each element divided by value, with C's sign rule (the
    dividend's: fmod for floating types, % for integers); a zero integer divisor traps. */
template <typename T, typename S>
__MLU_INLINE void __bang_rem(T *dst, const T *src, S value, int n) {
  __MLU_OPERAND("__bang_rem", "dst", dst, n);
  __MLU_OPERAND("__bang_rem", "src", src, n);
  typedef typename __mlu_acc<T>::type A;
  A b = (A)(T)value;
  if ((A)1 / 2 == 0 && b == 0) __mlu_trapf("__bang_rem: integer division by zero");
  for (int i = 0; i < n; ++i) {
    A a = (A)src[i];
    dst[i] = (T)((A)1 / 2 == 0 ? (A)((int64_t)a % (int64_t)b) : (A)fmod((double)a, (double)b));
  }
  __mlu_count_vector(n);
}

/** __bang_incseq(dst, n): dst[i] = i. */
template <typename T>
__MLU_INLINE void __bang_incseq(T *dst, int n) {
  __MLU_OPERAND("__bang_incseq", "dst", dst, n);
  for (int i = 0; i < n; ++i) dst[i] = (T)i;
  __mlu_count_vector(n);
}

/** __bang_move(dst, src, bytes): copy bytes within the core's on-chip memory (the vector unit's move; the
    ranges may overlap). */
__MLU_INLINE void __bang_move(void *dst, const void *src, int bytes) {
  __mlu_check_operand("__bang_move", "dst", dst, bytes, 1, __MLU_NRAM);
  __mlu_check_operand("__bang_move", "src", src, bytes, 1, __MLU_NRAM);
  memmove(dst, src, (size_t)bytes);
  __mlu_count_vector(bytes / 4);
}

/** __bang_printf(format, ...): the device printf. */
__attribute__((format(printf, 1, 2))) __MLU_INLINE int __bang_printf(const char *format, ...) {
  va_list list;
  va_start(list, format);
  int written = vprintf(format, list);
  va_end(list);
  return written;
}

/* a scalar operand: anything but a pointer (templates taking a vector or a scalar dispatch on it) */
template <typename S> struct __mlu_enable_scalar { typedef int type; };
template <typename S> struct __mlu_enable_scalar<S *> {};

#define __MLU_SCALAR(NAME, EXPR)                                                                                   \
  template <typename T, typename S>                                                                                \
  __MLU_INLINE void NAME(T *dst, const T *src, S value, int n) {                                                  \
    __MLU_OPERAND(#NAME, "dst", dst, n);                                                                           \
    __MLU_OPERAND(#NAME, "src", src, n);                                                                           \
    typedef typename __mlu_acc<T>::type A;                                                                         \
    A b = (A)(T)value;                                                                                             \
    for (int i = 0; i < n; ++i) {                                                                                  \
      A a = (A)src[i];                                                                                             \
      dst[i] = (T)(EXPR);                                                                                          \
    }                                                                                                              \
    __mlu_count_vector(n);                                                                                         \
  }
__MLU_SCALAR(__bang_add_scalar, a + b)
__MLU_SCALAR(__bang_sub_scalar, a - b)
__MLU_SCALAR(__bang_mul_scalar, a * b)
__MLU_SCALAR(__bang_div_scalar, a / b)
__MLU_SCALAR(__bang_maxeq_scalar, a > b ? a : b)
__MLU_SCALAR(__bang_mineq_scalar, a < b ? a : b)
__MLU_SCALAR(__bang_eq_scalar, (A)(a == b))
__MLU_SCALAR(__bang_ne_scalar, (A)(a != b))
__MLU_SCALAR(__bang_lt_scalar, (A)(a < b))
__MLU_SCALAR(__bang_le_scalar, (A)(a <= b))
__MLU_SCALAR(__bang_gt_scalar, (A)(a > b))
__MLU_SCALAR(__bang_ge_scalar, (A)(a >= b))
/* the MLU200 names of the scalar forms, which MLU200-era kernels (mmcv's, DIOPI's) still call */
__MLU_SCALAR(__bang_add_const, a + b)
__MLU_SCALAR(__bang_mul_const, a * b)
__MLU_SCALAR(__bang_sub_const, a - b)

/** __bang_write_value(dst, n, value): fill n elements of NRAM with value. */
template <typename T, typename V>
__MLU_INLINE void __bang_write_value(T *dst, int n, V value) {
  __MLU_OPERAND("__bang_write_value", "dst", dst, n);
  T v = (T)value;
  for (int i = 0; i < n; ++i) dst[i] = v;
  __mlu_count_vector(n);
}
/** __bang_write_zero(dst, n). */
template <typename T>
__MLU_INLINE void __bang_write_zero(T *dst, int n) { __bang_write_value(dst, n, 0); }

/* ---- unary: activations and math --------------------------------------------------------------------------- */
#define __MLU_UNARY(NAME, EXPR)                                                                                    \
  template <typename T>                                                                                            \
  __MLU_INLINE void NAME(T *dst, const T *src, int n) {                                                           \
    __MLU_OPERAND(#NAME, "dst", dst, n);                                                                           \
    __MLU_OPERAND(#NAME, "src", src, n);                                                                           \
    typedef typename __mlu_acc<T>::type A;                                                                         \
    for (int i = 0; i < n; ++i) {                                                                                  \
      A x = (A)src[i];                                                                                             \
      dst[i] = (T)(EXPR);                                                                                          \
    }                                                                                                              \
    __mlu_count_vector(n);                                                                                         \
  }
__MLU_INLINE float __mlu_gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__MLU_INLINE float __mlu_sign(float x) { return x > 0 ? 1.0f : (x < 0 ? -1.0f : 0.0f); }
__MLU_UNARY(__bang_active_relu, x > 0 ? x : x * 0)
__MLU_UNARY(__bang_relu, x > 0 ? x : x * 0)
__MLU_UNARY(__bang_active_sigmoid, 1.0f / (1.0f + expf(-(float)x)))
__MLU_UNARY(__bang_active_exp, expf((float)x))
__MLU_UNARY(__bang_active_exphp, expf((float)x))
__MLU_UNARY(__bang_active_tanh, tanhf((float)x))
__MLU_UNARY(__bang_active_abs, fabsf((float)x))
__MLU_UNARY(__bang_active_sign, __mlu_sign((float)x))
__MLU_UNARY(__bang_active_sqrt, sqrtf((float)x))
__MLU_UNARY(__bang_active_sqrthp, sqrtf((float)x))
__MLU_UNARY(__bang_active_rsqrt, 1.0f / sqrtf((float)x))
__MLU_UNARY(__bang_active_rsqrthp, 1.0f / sqrtf((float)x))
__MLU_UNARY(__bang_active_recip, 1.0f / (float)x)
__MLU_UNARY(__bang_active_reciphp, 1.0f / (float)x)
__MLU_UNARY(__bang_active_log, logf((float)x))
__MLU_UNARY(__bang_active_loghp, logf((float)x))
__MLU_UNARY(__bang_active_pow2, exp2f((float)x))
__MLU_UNARY(__bang_active_exp2, exp2f((float)x))
__MLU_UNARY(__bang_active_sin, sinf((float)x))
__MLU_UNARY(__bang_active_cos, cosf((float)x))
__MLU_UNARY(__bang_active_gelu, __mlu_gelu((float)x))
__MLU_UNARY(__bang_active_gelup, __mlu_gelu((float)x))
__MLU_UNARY(__bang_exp, expf((float)x))
__MLU_UNARY(__bang_log, logf((float)x))
__MLU_UNARY(__bang_sqrt, sqrtf((float)x))
__MLU_UNARY(__bang_rsqrt, 1.0f / sqrtf((float)x))
__MLU_UNARY(__bang_recip, 1.0f / (float)x)
__MLU_UNARY(__bang_abs, x < 0 ? -x : x)
__MLU_UNARY(__bang_square, x * x)
__MLU_UNARY(__bang_sin, sinf((float)x))
__MLU_UNARY(__bang_cos, cosf((float)x))
__MLU_UNARY(__bang_floor, floorf((float)x))
__MLU_UNARY(__bang_ceil, ceilf((float)x))
__MLU_UNARY(__bang_round, nearbyintf((float)x))
__MLU_UNARY(__bang_not, (A)(x == 0))
__MLU_UNARY(__bang_log2, log2f((float)x))
__MLU_UNARY(__bang_pow2, exp2f((float)x))

/** __bang_relun(dst, src, n, threshold): __bang_relu's value (a negative gives -0, NaN stays NaN), at most
    threshold. */
template <typename T, typename S>
__MLU_INLINE void __bang_relun(T *dst, const T *src, int n, S threshold) {
  __MLU_OPERAND("__bang_relun", "dst", dst, n);
  __MLU_OPERAND("__bang_relun", "src", src, n);
  typedef typename __mlu_acc<T>::type A;
  A top = (A)(T)threshold;
  for (int i = 0; i < n; ++i) {
    A x = (A)src[i];
    x = x > 0 ? x : x * 0;
    dst[i] = (T)(x < top || x != x ? x : top);
  }
  __mlu_count_vector(n);
}

/* ---- reductions ---------------------------------------------------------------------------------------------- */
/** __bang_reduce_sum(dst, src, n): dst[0] = the sum of src[0:n] (as mlusim.bang.reduce_sum: one result). */
template <typename T>
__MLU_INLINE void __bang_reduce_sum(T *dst, const T *src, int n) {
  __mlu_check_operand("__bang_reduce_sum", "dst", dst, 1, (int64_t)sizeof(T), __MLU_NRAM);
  __MLU_OPERAND("__bang_reduce_sum", "src", src, n);
  typename __mlu_acc<T>::type total = 0;
  for (int i = 0; i < n; ++i) total += (typename __mlu_acc<T>::type)src[i];
  dst[0] = (T)total;
  __mlu_count_vector(n);
}
/** __bang_reduce_max(dst, src, n): dst[0] = the maximum of src[0:n]. */
template <typename T>
__MLU_INLINE void __bang_reduce_max(T *dst, const T *src, int n) {
  __mlu_check_operand("__bang_reduce_max", "dst", dst, 1, (int64_t)sizeof(T), __MLU_NRAM);
  __MLU_OPERAND("__bang_reduce_max", "src", src, n);
  if (n < 1) __mlu_trapf("__bang_reduce_max: needs at least one element");
  typename __mlu_acc<T>::type best = (typename __mlu_acc<T>::type)src[0];
  for (int i = 1; i < n; ++i)
    if ((typename __mlu_acc<T>::type)src[i] > best) best = (typename __mlu_acc<T>::type)src[i];
  dst[0] = (T)best;
  __mlu_count_vector(n);
}

/* ---- layout --------------------------------------------------------------------------------------------------- */
/** __bang_transpose(dst, src, height, width): src is height x width, dst becomes width x height. */
template <typename T>
__MLU_INLINE void __bang_transpose(T *dst, const T *src, int height, int width) {
  if (height < 0 || width < 0) __mlu_trapf("__bang_transpose: negative height %d or width %d", height, width);
  int64_t count = (int64_t)height * width;
  __MLU_OPERAND("__bang_transpose", "dst", dst, count);
  __MLU_OPERAND("__bang_transpose", "src", src, count);
  if ((const void *)dst == (const void *)src) __mlu_trapf("__bang_transpose: dst and src must be different buffers");
  for (int64_t r = 0; r < height; ++r)
    for (int64_t c = 0; c < width; ++c) dst[c * height + r] = src[r * width + c];
  __mlu_count_vector(count);
}

/** __bang_rotate180(dst, src, height, width): the height x width matrix turned by half a turn. */
template <typename T>
__MLU_INLINE void __bang_rotate180(T *dst, const T *src, int height, int width) {
  if (height < 0 || width < 0) __mlu_trapf("__bang_rotate180: negative height %d or width %d", height, width);
  int64_t count = (int64_t)height * width;
  __MLU_OPERAND("__bang_rotate180", "dst", dst, count);
  __MLU_OPERAND("__bang_rotate180", "src", src, count);
  if ((const void *)dst == (const void *)src) __mlu_trapf("__bang_rotate180: dst and src must be different buffers");
  for (int64_t i = 0; i < count; ++i) dst[count - 1 - i] = src[i];
  __mlu_count_vector(count);
}

/** __bang_pad(dst, src, channel, height, width, top, bottom, left, right): src (height x width x channel) in the
    middle of dst ((top + height + bottom) x (left + width + right) x channel), the border zero. */
template <typename T>
__MLU_INLINE void __bang_pad(T *dst, const T *src, int channel, int height, int width, int top, int bottom,
                             int left, int right) {
  if (channel < 0 || height < 0 || width < 0 || top < 0 || bottom < 0 || left < 0 || right < 0)
    __mlu_trapf("__bang_pad: negative size (channel %d, height %d, width %d, pads %d %d %d %d)", channel, height,
                width, top, bottom, left, right);
  int64_t out_h = (int64_t)top + height + bottom, out_w = (int64_t)left + width + right;
  __MLU_OPERAND("__bang_pad", "src", src, (int64_t)height * width * channel);
  __MLU_OPERAND("__bang_pad", "dst", dst, out_h * out_w * channel);
  if ((const void *)dst == (const void *)src) __mlu_trapf("__bang_pad: dst and src must be different buffers");
  memset((void *)dst, 0, (size_t)(out_h * out_w * channel) * sizeof(T));
  for (int64_t y = 0; y < height; ++y)
    memcpy(dst + ((y + top) * out_w + left) * channel, src + y * width * channel,
           (size_t)width * channel * sizeof(T));
  __mlu_count_vector(out_h * out_w * channel);
}

/** __bang_lut(dst, index, table, n, table_length): dst[i] = table[index[i]]; an index past the table traps. */
template <typename T, typename I>
__MLU_INLINE void __bang_lut(T *dst, const I *index, const T *table, int n, int table_length) {
  __MLU_OPERAND("__bang_lut", "dst", dst, n);
  __MLU_OPERAND("__bang_lut", "index", index, n);
  __mlu_check_operand("__bang_lut", "table", table, table_length, (int64_t)sizeof(T), __MLU_NRAM);
  for (int i = 0; i < n; ++i) {
    int64_t at = (int64_t)index[i];
    if (at < 0 || at >= table_length)
      __mlu_trapf("__bang_lut: index[%d] = %lld is outside the table of %d entries", i, (long long)at,
                  table_length);
    dst[i] = table[at];
  }
  __mlu_count_vector(n);
}

/* ---- conversions ---------------------------------------------------------------------------------------------- */
#define __MLU_CONVERT(NAME, D, S)                                                                                 \
  __MLU_INLINE void NAME(D *dst, const S *src, int n) {                                                         \
    __MLU_OPERAND(#NAME, "dst", dst, n);                                                                          \
    __MLU_OPERAND(#NAME, "src", src, n);                                                                          \
    for (int i = 0; i < n; ++i) dst[i] = (D)(float)src[i];                                                       \
    __mlu_count_vector(n);                                                                                        \
  }
__MLU_CONVERT(__bang_half2float, float, half)
__MLU_CONVERT(__bang_float2half_rn, half, float)
__MLU_CONVERT(__bang_float2half, half, float)
__MLU_CONVERT(__bang_bfloat162float, float, bfloat16_t)
__MLU_CONVERT(__bang_float2bfloat16_rn, bfloat16_t, float)
__MLU_CONVERT(__bang_float2bfloat16, bfloat16_t, float)
__MLU_CONVERT(__bang_int322float, float, int32_t)
__MLU_CONVERT(__bang_int162float, float, int16_t)
__MLU_CONVERT(__bang_int82float, float, int8_t)
__MLU_CONVERT(__bang_half2int16_rn, int16_t, half)

/* round toward zero / down / up / to nearest for float -> half and float -> int */
/* the next half after h toward +inf (up = 1) or -inf (up = 0); h finite */
__MLU_INLINE half __mlu_half_step(half h, int up) {
  uint16_t bits;
  memcpy(&bits, &h, 2);
  if ((bits & 0x7fff) == 0) bits = up ? 0x0001 : 0x8001;
  else if ((bits & 0x8000) == 0) bits = up ? bits + 1 : bits - 1;
  else bits = up ? bits - 1 : bits + 1;
  memcpy(&h, &bits, 2);
  return h;
}
__MLU_INLINE half __mlu_half_toward(float x, int mode) {
  half h = (half)x;
  float back = (float)h;
  if (mode == 0 || back == x || x != x) return h;  /* 0: nearest */
  if (isinf((float)h)) return h;
  half up = __mlu_half_step(h, 1), down = __mlu_half_step(h, 0);
  if (mode == 1) return back > x ? down : h;       /* down */
  if (mode == 2) return back < x ? up : h;         /* up */
  return (back > x) == (x > 0) ? (x > 0 ? down : up) : h;  /* toward zero */
}
__MLU_INLINE void __bang_float2half_rd(half *dst, const float *src, int n) {
  __MLU_OPERAND("__bang_float2half_rd", "dst", dst, n); __MLU_OPERAND("__bang_float2half_rd", "src", src, n);
  for (int i = 0; i < n; ++i) dst[i] = __mlu_half_toward(src[i], 1);
  __mlu_count_vector(n);
}
__MLU_INLINE void __bang_float2half_up(half *dst, const float *src, int n) {
  __MLU_OPERAND("__bang_float2half_up", "dst", dst, n); __MLU_OPERAND("__bang_float2half_up", "src", src, n);
  for (int i = 0; i < n; ++i) dst[i] = __mlu_half_toward(src[i], 2);
  __mlu_count_vector(n);
}
__MLU_INLINE void __bang_float2half_tz(half *dst, const float *src, int n) {
  __MLU_OPERAND("__bang_float2half_tz", "dst", dst, n); __MLU_OPERAND("__bang_float2half_tz", "src", src, n);
  for (int i = 0; i < n; ++i) dst[i] = __mlu_half_toward(src[i], 3);
  __mlu_count_vector(n);
}
/* float -> integer: the value times 2^-position, rounded, NaN as 0, saturated to the destination type */
template <typename D, typename S>
__MLU_INLINE void __mlu_float2int(const char *what, D *dst, const S *src, int n, int position, double (*round)(double)) {
  __mlu_check_operand(what, "dst", dst, n, (int64_t)sizeof(D), __MLU_NRAM);
  __mlu_check_operand(what, "src", src, n, (int64_t)sizeof(S), __MLU_NRAM);
  const double top = sizeof(D) == 4 ? 2147483647.0 : 32767.0, bottom = -top - 1;
  for (int i = 0; i < n; ++i) {
    double v = round(ldexp((double)(float)src[i], -position));
    dst[i] = v != v ? (D)0 : v >= top ? (D)top : v <= bottom ? (D)bottom : (D)v;
  }
  __mlu_count_vector(n);
}
#define __MLU_FLOAT2INT(NAME, D, S, ROUND)                                                                        \
  __MLU_INLINE void NAME(D *dst, const S *src, int n) { __mlu_float2int(#NAME, dst, src, n, 0, ROUND); }
__MLU_FLOAT2INT(__bang_float2int32_tz, int32_t, float, trunc)
__MLU_FLOAT2INT(__bang_float2int32_rn, int32_t, float, nearbyint)
__MLU_FLOAT2INT(__bang_float2int32_dn, int32_t, float, floor)
__MLU_FLOAT2INT(__bang_float2int32_up, int32_t, float, ceil)
__MLU_FLOAT2INT(__bang_float2int32, int32_t, float, trunc)
__MLU_FLOAT2INT(__bang_float2int16_tz, int16_t, float, trunc)
__MLU_FLOAT2INT(__bang_float2int16_rn, int16_t, float, nearbyint)
__MLU_FLOAT2INT(__bang_half2int32_tz, int32_t, half, trunc)

/* the MLU300 forms with a fixed-point position: the integer is the value times 2^-position (real = int * 2^pos) */
#define __MLU_FLOAT2INT_POSITION(NAME, D, S, ROUND)                                                               \
  __MLU_INLINE void NAME(D *dst, const S *src, int n, int position) {                                           \
    __mlu_float2int(#NAME, dst, src, n, position, ROUND);                                                        \
  }
__MLU_FLOAT2INT_POSITION(__bang_float2int32, int32_t, float, trunc)
__MLU_FLOAT2INT_POSITION(__bang_float2int_tz, int32_t, float, trunc)
__MLU_FLOAT2INT_POSITION(__bang_float2int_rn, int32_t, float, nearbyint)
__MLU_FLOAT2INT_POSITION(__bang_float2int_dn, int32_t, float, floor)
__MLU_FLOAT2INT_POSITION(__bang_float2int_up, int32_t, float, ceil)
__MLU_FLOAT2INT_POSITION(__bang_float2int16_tz, int16_t, float, trunc)
__MLU_FLOAT2INT_POSITION(__bang_float2int16_rn, int16_t, float, nearbyint)
__MLU_FLOAT2INT_POSITION(__bang_float2int16_dn, int16_t, float, floor)
__MLU_FLOAT2INT_POSITION(__bang_float2int16_up, int16_t, float, ceil)
#define __MLU_INT2FLOAT_POSITION(NAME, D, S)                                                                      \
  __MLU_INLINE void NAME(D *dst, const S *src, int n, int position) {                                           \
    __MLU_OPERAND(#NAME, "dst", dst, n);                                                                          \
    __MLU_OPERAND(#NAME, "src", src, n);                                                                          \
    for (int i = 0; i < n; ++i) dst[i] = (D)ldexp((double)src[i], position);                                     \
    __mlu_count_vector(n);                                                                                        \
  }
__MLU_INT2FLOAT_POSITION(__bang_int2float, float, int32_t)
__MLU_INT2FLOAT_POSITION(__bang_int2float_rn, float, int32_t)
__MLU_INT2FLOAT_POSITION(__bang_int322float_rn, float, int32_t)
__MLU_INT2FLOAT_POSITION(__bang_int162float, float, int16_t)
__MLU_INT2FLOAT_POSITION(__bang_int2half, half, int32_t)
__MLU_INT2FLOAT_POSITION(__bang_int162half, half, int16_t)

/* scalar conversions */
__MLU_INLINE float __half2float(half x) { return (float)x; }
__MLU_INLINE half __float2half(float x) { return (half)x; }
__MLU_INLINE half __float2half_rn(float x) { return (half)x; }
__MLU_INLINE half __float2half_rd(float x) { return __mlu_half_toward(x, 1); }
__MLU_INLINE half __float2half_tz(float x) { return __mlu_half_toward(x, 3); }
__MLU_INLINE float __bfloat162float(bfloat16_t x) { return (float)x; }
__MLU_INLINE bfloat16_t __float2bfloat16(float x) { return bfloat16_t(x); }
__MLU_INLINE int __float2int_rn(float x) { return (int)nearbyintf(x); }
__MLU_INLINE int __float2int_tz(float x) { return (int)truncf(x); }
__MLU_INLINE int __float2int_dn(float x) { return (int)floorf(x); }
__MLU_INLINE int __float2int_up(float x) { return (int)ceilf(x); }

/* ---- matrix ---------------------------------------------------------------------------------------------------- */
/** __bang_matmul(dst, lhs, rhs, m, k, n): dst (m x n, NRAM) = lhs (m x k, NRAM) @ rhs (k x n, WRAM), row-major,
    accumulated in float (int64 for integers) and rounded once to dst's type (as mlusim.bang.matmul). */
template <typename D, typename T>
__MLU_INLINE void __bang_matmul(D *dst, const T *lhs, const T *rhs, int m, int k, int n) {
  if (m < 0 || k < 0 || n < 0) __mlu_trapf("__bang_matmul: negative dimension m=%d, k=%d, n=%d", m, k, n);
  __mlu_check_operand("__bang_matmul", "dst", dst, (int64_t)m * n, (int64_t)sizeof(D), __MLU_NRAM);
  __mlu_check_operand("__bang_matmul", "lhs", lhs, (int64_t)m * k, (int64_t)sizeof(T), __MLU_NRAM);
  __mlu_check_operand("__bang_matmul", "rhs", rhs, (int64_t)k * n, (int64_t)sizeof(T), __MLU_WRAM);
  typedef typename __mlu_acc<T>::type A;
  A row[256];
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j0 = 0; j0 < n; j0 += 256) {
      int64_t width = n - j0 < 256 ? n - j0 : 256;
      for (int64_t j = 0; j < width; ++j) row[j] = 0;
      for (int64_t p = 0; p < k; ++p) {
        A a = (A)lhs[i * k + p];
        const T *r = rhs + p * n + j0;
        for (int64_t j = 0; j < width; ++j) row[j] += a * (A)r[j];
      }
      for (int64_t j = 0; j < width; ++j) dst[i * n + j0 + j] = (D)row[j];
    }
  }
  int kind = __mlu_kind<T>::value;
  if (kind >= 0) __mlu_state()[__MLU_S_MACS + kind] += (int64_t)m * k * n;
}

#endif
