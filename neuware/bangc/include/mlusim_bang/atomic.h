/* mlusim BANG C: atomic read-modify-write of GDRAM (__bang_atomic_add, __bang_atomic_reduce_*) and the locks tasks take around shared
 * updates (__bang_lock / __bang_unlock).
 *
 * Tasks run concurrently on host threads, so each element's update is a compare-and-swap on its own bytes: atomic
 * against every other task of every launch, as on the device. The locks are process-wide spin locks, one per lock
 * id pair, shared by every kernel library loaded (one table, in whichever object defined it first). */
#ifndef MLUSIM_BANG_ATOMIC_H
#define MLUSIM_BANG_ATOMIC_H

#include "vector.h"

/* one element's update: 0 add, 1 max, 2 min; returns the value before it */
template <typename T>
__MLU_INLINE T __mlu_atomic_update(T *address, T value, int how) {
  typedef typename __mlu_bits<sizeof(T)>::type U;
  typedef typename __mlu_acc<T>::type A;
  U *word = (U *)address;
  U seen = __atomic_load_n(word, __ATOMIC_RELAXED), next;
  T old, result;
  do {
    memcpy(&old, &seen, sizeof(T));
    A a = (A)old, b = (A)value;
    result = (T)(how == 0 ? a + b : how == 1 ? (b > a ? b : a) : (b < a ? b : a));
    memcpy(&next, &result, sizeof(T));
  } while (!__atomic_compare_exchange_n(word, &seen, next, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
  return old;
}

template <typename T>
__MLU_INLINE void __mlu_check_gdram_target(const char *what, T *target, int n) {
  struct __mlu_region r;
  __mlu_check_span(what, "dst", target, (int64_t)n * (int64_t)sizeof(T), __MLU_GDRAM, &r);
  if ((uintptr_t)target % sizeof(T) != 0)
    __mlu_trapf("%s: %p is not aligned to its %d-byte elements", what, (void *)target, (int)sizeof(T));
}

/** __bang_atomic_add(dst, src1, src2, n): src1 (GDRAM) += src2 (NRAM), element by element atomically; dst (NRAM,
    may be src2) receives src1's values from before the addition. */
template <typename T>
__MLU_INLINE void __bang_atomic_add(T *dst, T *src1, const T *src2, int n) {
  __mlu_check_operand("__bang_atomic_add", "dst", dst, n, (int64_t)sizeof(T), __MLU_NRAM);
  __mlu_check_gdram_target("__bang_atomic_add", src1, n);
  __mlu_check_operand("__bang_atomic_add", "src2", src2, n, (int64_t)sizeof(T), __MLU_NRAM);
  for (int i = 0; i < n; ++i) {
    T added = src2[i];
    dst[i] = __mlu_atomic_update(src1 + i, added, 0);
  }
  __mlu_count_copy(GDRAM2NRAM, (int64_t)n * (int64_t)sizeof(T));
  __mlu_count_copy(NRAM2GDRAM, (int64_t)n * (int64_t)sizeof(T));
}

#define __MLU_ATOMIC_REDUCE(NAME, HOW)                                                                           \
  template <typename T>                                                                                          \
  __MLU_INLINE void NAME(T *dst, const T *src, int n) {                                                         \
    __mlu_check_gdram_target(#NAME, dst, n);                                                                     \
    __mlu_check_operand(#NAME, "src", src, n, (int64_t)sizeof(T), __MLU_NRAM);                                  \
    for (int i = 0; i < n; ++i) __mlu_atomic_update(dst + i, src[i], HOW);                                       \
    __mlu_count_copy(NRAM2GDRAM, (int64_t)n * (int64_t)sizeof(T));                                               \
  }
/* __bang_atomic_reduce_add/max/min(dst, src, n): dst (GDRAM) = dst op src (NRAM), each element atomically */
__MLU_ATOMIC_REDUCE(__bang_atomic_reduce_add, 0)
__MLU_ATOMIC_REDUCE(__bang_atomic_reduce_max, 1)
__MLU_ATOMIC_REDUCE(__bang_atomic_reduce_min, 2)

enum { __MLU_LOCKS = 64 };
/* one table per process: a vague-linkage (inline, default visibility) function's static */
__attribute__((visibility("default"))) __MLU_UNCHECKED inline int64_t *__mlu_lock_table() {
  static int64_t table[__MLU_LOCKS];
  return table;
}
__MLU_INLINE int64_t *__mlu_lock_word(const char *what, int lock_id, int lock_sub) {
  if (lock_id < 0 || lock_sub < 0 || lock_id * 8 + lock_sub >= __MLU_LOCKS)
    __mlu_trapf("%s: lock (%d, %d) is not one of the device's locks", what, lock_id, lock_sub);
  return __mlu_lock_table() + lock_id * 8 + lock_sub;
}
/** __bang_lock(lock_id, lock_sub): wait until this lock is free and take it. */
__MLU_INLINE void __bang_lock(int lock_id, int lock_sub) {
  int64_t *word = __mlu_lock_word("__bang_lock", lock_id, lock_sub);
  while (__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE)) {
    while (__atomic_load_n(word, __ATOMIC_RELAXED)) __mlu_poll();
  }
}
/** __bang_unlock(lock_id, lock_sub): release a lock this task took. */
__MLU_INLINE void __bang_unlock(int lock_id, int lock_sub) {
  __atomic_store_n(__mlu_lock_word("__bang_unlock", lock_id, lock_sub), 0, __ATOMIC_RELEASE);
}

#endif
