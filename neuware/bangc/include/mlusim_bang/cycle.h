/* mlusim BANG C: the intrinsics that reuse an operand cyclically (__bang_cycle_*) and the fused two-step
 * arithmetic (__bang_fusion).
 *
 * __bang_cycle_OP(dst, src, seg, n, m): dst[i] = src[i] OP seg[i % m], n a multiple of m. __bang_fusion(op, dst,
 * src0, src1, src2, n[, m]): two operations in one pass, named by their order (FUSION_FMA = (src0 * src1) + src2,
 * FUSION_FSM = (src0 - src1) * src2, ...); src1 and src2 are vectors or scalars, and with m, a vector src1 of m
 * elements is reused cyclically. As on MLU300 (no vector FMA), each step rounds to the operand type. Operands are
 * checked as vector.h's (NRAM, bounds, alignment). */
#ifndef MLUSIM_BANG_CYCLE_H
#define MLUSIM_BANG_CYCLE_H

#include "vector.h"

__MLU_INLINE void __mlu_check_cycle(const char *what, int64_t n, int64_t m) {
  if (n < 0 || m <= 0) __mlu_trapf("%s: element counts %lld and %lld (the cycle must be positive)", what,
                                   (long long)n, (long long)m);
  if (n % m != 0) __mlu_trapf("%s: %lld elements are not a multiple of the cycle's %lld", what, (long long)n,
                              (long long)m);
}

/* dst, src0 (n elements) and the segment src1 (m elements) of a cyclic form, checked */
#define __MLU_CYCLE_OPERANDS(NAME)                                                                                 \
  __mlu_check_cycle(#NAME, n, m);                                                                                  \
  __MLU_OPERAND(#NAME, "dst", dst, n);                                                                             \
  __MLU_OPERAND(#NAME, "src", src0, n);                                                                            \
  __MLU_OPERAND(#NAME, "seg", src1, m);
#define __MLU_CYCLE(NAME, EXPR)                                                                                    \
  template <typename T>                                                                                            \
  __MLU_INLINE void NAME(T *dst, const T *src0, const T *src1, int n, int m) {                                    \
    __MLU_CYCLE_OPERANDS(NAME)                                                                                     \
    __MLU_BINARY_LOOP(EXPR, i % m)                                                                                 \
  }
__MLU_CYCLE(__bang_cycle_add, a + b)
__MLU_CYCLE(__bang_cycle_sub, a - b)
__MLU_CYCLE(__bang_cycle_mul, a * b)
__MLU_CYCLE(__bang_cycle_div, a / b)
__MLU_CYCLE(__bang_cycle_maxequal, a > b ? a : b)
__MLU_CYCLE(__bang_cycle_minequal, a < b ? a : b)
__MLU_CYCLE(__bang_cycle_eq, (A)(a == b))
__MLU_CYCLE(__bang_cycle_ne, (A)(a != b))
__MLU_CYCLE(__bang_cycle_lt, (A)(a < b))
__MLU_CYCLE(__bang_cycle_le, (A)(a <= b))
__MLU_CYCLE(__bang_cycle_gt, (A)(a > b))
__MLU_CYCLE(__bang_cycle_ge, (A)(a >= b))
__MLU_CYCLE(__bang_cycle_and, (A)(a != 0 && b != 0))
__MLU_CYCLE(__bang_cycle_or, (A)(a != 0 || b != 0))
__MLU_CYCLE(__bang_cycle_xor, (A)((a != 0) != (b != 0)))

#define __MLU_CYCLE_BITS(NAME, OP)                                                                                 \
  template <typename T>                                                                                            \
  __MLU_INLINE void NAME(T *dst, const T *src0, const T *src1, int n, int m) {                                    \
    __MLU_CYCLE_OPERANDS(NAME)                                                                                     \
    __MLU_BITS_LOOP(OP, i % m)                                                                                     \
  }
__MLU_CYCLE_BITS(__bang_cycle_band, &)
__MLU_CYCLE_BITS(__bang_cycle_bor, |)
__MLU_CYCLE_BITS(__bang_cycle_bxor, ^)

/* ---- __bang_fusion ---------------------------------------------------------------------------------------------- */
enum __mlu_fusion_op { FUSION_FMA = 0, FUSION_FMS, FUSION_FAM, FUSION_FSM, FUSION_FAS, FUSION_FSA };

/* one step, rounded to T as the hardware's two passes are */
template <typename T>
__MLU_INLINE T __mlu_step(int op, T a, T b) {
  typedef typename __mlu_acc<T>::type A;
  return (T)(op == 0 ? (A)a * (A)b : op == 1 ? (A)a + (A)b : (A)a - (A)b);
}
/* the two steps of each fusion: 0 multiply, 1 add, 2 subtract */
__MLU_INLINE void __mlu_fusion_steps(int op, int *first, int *second) {
  static const int steps[6][2] = {{0, 1}, {0, 2}, {1, 0}, {2, 0}, {1, 2}, {2, 1}};
  if (op < 0 || op > 5) __mlu_trapf("__bang_fusion: unknown operation %d (FUSION_FMA .. FUSION_FSA)", op);
  *first = steps[op][0];
  *second = steps[op][1];
}

template <typename T> struct __mlu_operand {
  const T *vector;
  T scalar;
  __mlu_operand(const T *v) : vector(v), scalar(0) {}
  __mlu_operand(T *v) : vector(v), scalar(0) {}
  template <typename S> __mlu_operand(S s, typename __mlu_enable_scalar<S>::type * = 0) : vector(0), scalar((T)s) {}
  T at(int64_t i) const { return vector ? vector[i] : scalar; }
};

template <typename T>
__MLU_INLINE void __mlu_fusion(int op, T *dst, const T *src0, __mlu_operand<T> src1, __mlu_operand<T> src2, int n,
                               int m) {
  int first, second;
  __mlu_fusion_steps(op, &first, &second);
  __mlu_check_cycle("__bang_fusion", n, m);
  __MLU_OPERAND("__bang_fusion", "dst", dst, n);
  __MLU_OPERAND("__bang_fusion", "src0", src0, n);
  if (src1.vector) __MLU_OPERAND("__bang_fusion", "src1", src1.vector, m);
  if (src2.vector) __MLU_OPERAND("__bang_fusion", "src2", src2.vector, n);
  for (int i = 0; i < n; ++i)
    dst[i] = __mlu_step<T>(second, __mlu_step<T>(first, src0[i], src1.at(i % m)), src2.at(i));
  __mlu_count_vector(2 * (int64_t)n);
}
template <typename T, typename B, typename C>
__MLU_INLINE void __bang_fusion(int op, T *dst, const T *src0, B src1, C src2, int n) {
  __mlu_fusion<T>(op, dst, src0, __mlu_operand<T>(src1), __mlu_operand<T>(src2), n, n > 0 ? n : 1);
}
template <typename T, typename B, typename C>
__MLU_INLINE void __bang_fusion(int op, T *dst, const T *src0, B src1, C src2, int n, int m) {
  __mlu_fusion<T>(op, dst, src0, __mlu_operand<T>(src1), __mlu_operand<T>(src2), n, m);
}

#endif
