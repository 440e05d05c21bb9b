/* mlusim BANG C: atomic read-modify-write of GDRAM (__bang_atomic_add) and the locks tasks take around shared
 * updates (__bang_lock / __bang_unlock).
 *
 * Tasks run concurrently on host threads, so each element's update is a compare-and-swap on its own bytes: atomic
 * against every other task of every launch, as on the device. The locks are process-wide spin locks, one per lock
 * id pair, shared by every kernel library loaded (one table, in whichever object defined it first). */
#ifndef MLUSIM_BANG_ATOMIC_H
#define MLUSIM_BANG_ATOMIC_H

#include "vector.h"

template <typename T>
__MLU_INLINE T __mlu_atomic_add_one(T *address, T value) {
  typedef typename __mlu_bits<sizeof(T)>::type U;
  typedef typename __mlu_acc<T>::type A;
  U *word = (U *)address;
  U seen = __atomic_load_n(word, __ATOMIC_RELAXED), next;
  T old, sum;
  do {
    memcpy(&old, &seen, sizeof(T));
    sum = (T)((A)old + (A)value);
    memcpy(&next, &sum, sizeof(T));
  } while (!__atomic_compare_exchange_n(word, &seen, next, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
  return old;
}

/** __bang_atomic_add(dst, src1, src2, n): src1 (GDRAM) += src2 (NRAM), element by element atomically; dst (NRAM,
    may be src2) receives src1's values from before the addition. */
template <typename T>
__MLU_INLINE void __bang_atomic_add(T *dst, T *src1, const T *src2, int n) {
  __mlu_check_operand("__bang_atomic_add", "dst", dst, n, (int64_t)sizeof(T), __MLU_NRAM);
  struct __mlu_region r;
  __mlu_check_span("__bang_atomic_add", "src1", src1, (int64_t)n * (int64_t)sizeof(T), __MLU_GDRAM, &r);
  __mlu_check_operand("__bang_atomic_add", "src2", src2, n, (int64_t)sizeof(T), __MLU_NRAM);
  if ((uintptr_t)src1 % sizeof(T) != 0)
    __mlu_trapf("__bang_atomic_add: src1 %p is not aligned to its %d-byte elements", (void *)src1, (int)sizeof(T));
  for (int i = 0; i < n; ++i) {
    T added = src2[i];
    dst[i] = __mlu_atomic_add_one(src1 + i, added);
  }
  __mlu_count_copy(GDRAM2NRAM, (int64_t)n * (int64_t)sizeof(T));
  __mlu_count_copy(NRAM2GDRAM, (int64_t)n * (int64_t)sizeof(T));
}

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
