/* mlusim BANG C: __memcpy / __memcpy_async in every direction, the strided forms, memset, and the barriers. */
#ifndef MLUSIM_BANG_MEMORY_H
#define MLUSIM_BANG_MEMORY_H

#include "core.h"

/* In the order of BANG's enum (mlusim/bang/dma.py DIRECTIONS). */
typedef enum {
  GDRAM2NRAM = 0, NRAM2GDRAM, LDRAM2NRAM, NRAM2LDRAM, GDRAM2WRAM, WRAM2GDRAM, LDRAM2WRAM, WRAM2LDRAM, NRAM2NRAM,
  NRAM2WRAM, WRAM2NRAM, GDRAM2SRAM, SRAM2GDRAM, LDRAM2SRAM, SRAM2LDRAM, SRAM2NRAM, NRAM2SRAM, SRAM2WRAM, WRAM2SRAM,
  GDRAM2GDRAM, GDRAM2LDRAM, LDRAM2GDRAM, SRAM2SRAM
} mluMemcpyDirection_t;

__MLU_INLINE const char *__mlu_direction_name(int d) {
  static const char *const names[] = {
      "GDRAM2NRAM", "NRAM2GDRAM", "LDRAM2NRAM", "NRAM2LDRAM", "GDRAM2WRAM", "WRAM2GDRAM", "LDRAM2WRAM", "WRAM2LDRAM",
      "NRAM2NRAM", "NRAM2WRAM", "WRAM2NRAM", "GDRAM2SRAM", "SRAM2GDRAM", "LDRAM2SRAM", "SRAM2LDRAM", "SRAM2NRAM",
      "NRAM2SRAM", "SRAM2WRAM", "WRAM2SRAM", "GDRAM2GDRAM", "GDRAM2LDRAM", "LDRAM2GDRAM", "SRAM2SRAM"};
  return d >= 0 && d < 23 ? names[d] : "?";
}

/* LDRAM (per-core off-chip memory) is GDRAM here. */
__MLU_INLINE void __mlu_direction_spaces(int d, int *dst, int *src) {
  static const signed char table[23][2] = {
      {1, 0}, {0, 1}, {1, 0}, {0, 1}, {2, 0}, {0, 2}, {2, 0}, {0, 2}, {1, 1}, {2, 1}, {1, 2}, {3, 0},
      {0, 3}, {3, 0}, {0, 3}, {1, 3}, {3, 1}, {2, 3}, {3, 2}, {0, 0}, {0, 0}, {0, 0}, {3, 3}};
  *dst = table[d][0];
  *src = table[d][1];
}

__MLU_INLINE void __mlu_count_copy(int direction, int64_t nbytes) {
  int64_t *state = __mlu_state();
  state[__MLU_S_COPY_BYTES + direction] += nbytes;
  state[__MLU_S_COPY_COUNT] += 1;
}

__MLU_INLINE void __mlu_check_direction(const char *what, int direction) {
  if (direction < 0 || direction >= 23) __mlu_trapf("%s: %d is not a memcpy direction (0..22)", what, direction);
}

/* The memory core has no NRAM or WRAM: a copy with a side there does nothing on it (Cambricon's kernels leave
   such copies outside their compute-core branches, with offsets computed from coreId 0x80). Its vector code runs
   on a scratch NRAM of its own, which no copy fills or drains. */
__MLU_INLINE int __mlu_no_op_on_memory_core(int direction) {
  if (coreId != 0x80) return 0;
  int dspace, sspace;
  __mlu_direction_spaces(direction, &dspace, &sspace);
  return dspace == 1 || dspace == 2 || sspace == 1 || sspace == 2;
}

/* Check one segment of a copy; returns nothing, traps on a violation. */
__MLU_INLINE void __mlu_check_copy(const char *what, void *dst, const void *src, int64_t size, int direction) {
  int dspace, sspace;
  __mlu_direction_spaces(direction, &dspace, &sspace);
  struct __mlu_region rd, rs;
  char role_d[48], role_s[48];
  snprintf(role_d, sizeof role_d, "dst (%s)", __mlu_direction_name(direction));
  snprintf(role_s, sizeof role_s, "src (%s)", __mlu_direction_name(direction));
  __mlu_check_span(what, role_d, dst, size, dspace, &rd);
  __mlu_check_span(what, role_s, src, size, sspace, &rs);
}

/* ---- async copies: checked when issued, performed at the next sync / barrier / the task's end ---------------- */
/* A task's pending copies are in its context row's buffer (not thread-local storage, which the checks of every
   scalar access read and which stays cheap only while an object's part of it is small). */
struct __mlu_pending { char *dst; const char *src; size_t size; };

/** __sync_io() / __sync(): complete this core's pending async copies, in issue order. */
__MLU_INLINE void __sync_io(void) {
  int64_t *c = __mlu_ctx;
  struct __mlu_pending *pending = (struct __mlu_pending *)c[__MLU_C_PENDING];
  for (int64_t i = 0; i < c[__MLU_C_PENDING_COUNT]; ++i) memmove(pending[i].dst, pending[i].src, pending[i].size);
  c[__MLU_C_PENDING_COUNT] = 0;
}
__MLU_INLINE void __sync(void) { __sync_io(); }
__MLU_INLINE void __sync_move(void) { __sync_io(); }
__MLU_INLINE void __sync_compute(void) { __mlu_poll(); }
__MLU_INLINE void __sync_io_move_compute(void) { __sync_io(); }
__MLU_INLINE void __sync_io_move_compute(bool, bool, bool, bool, bool, bool) { __sync_io(); }

__MLU_INLINE void __mlu_copy(const char *what, void *dst, const void *src, int64_t size, int direction, int async) {
  if (async) {
    int64_t *c = __mlu_ctx;
    if (c[__MLU_C_PENDING_COUNT] == __MLU_MAX_PENDING) __sync_io();
    struct __mlu_pending *slot = (struct __mlu_pending *)c[__MLU_C_PENDING] + c[__MLU_C_PENDING_COUNT]++;
    slot->dst = (char *)dst;
    slot->src = (const char *)src;
    slot->size = (size_t)size;
  } else {
    memmove(dst, src, (size_t)size);
  }
}

__MLU_INLINE void __mlu_memcpy(const char *what, void *dst, const void *src, int size, int direction, int async) {
  __mlu_check_direction(what, direction);
  if (__mlu_no_op_on_memory_core(direction)) return;
  if (size < 0) __mlu_trapf("%s: negative size %d", what, size);
  __mlu_check_copy(what, dst, src, size, direction);
  __mlu_copy(what, dst, src, size, direction, async);
  __mlu_count_copy(direction, size);
}

/* segnum + 1 segments of `size` bytes, the i-th at i * stride on each side */
__MLU_INLINE void __mlu_memcpy2d(const char *what, void *dst, const void *src, int size, int direction,
                                  int dst_stride, int src_stride, int segnum, int async) {
  __mlu_check_direction(what, direction);
  if (__mlu_no_op_on_memory_core(direction)) return;
  if (size < 0 || segnum < 0) __mlu_trapf("%s: negative size %d or segnum %d", what, size, segnum);
  for (int64_t i = 0; i <= segnum; ++i) {
    char *d = (char *)dst + i * (int64_t)dst_stride;
    const char *s = (const char *)src + i * (int64_t)src_stride;
    __mlu_check_copy(what, d, s, size, direction);
    __mlu_copy(what, d, s, size, direction, async);
  }
  __mlu_count_copy(direction, (int64_t)size * (segnum + 1));
}

/* the 3-D form: (segnum1 + 1) x (segnum2 + 1) segments */
__MLU_INLINE void __mlu_memcpy3d(const char *what, void *dst, const void *src, int size, int direction,
                                  int dst_stride1, int src_stride1, int segnum1, int dst_stride2, int src_stride2,
                                  int segnum2, int async) {
  if (segnum2 < 0) __mlu_trapf("%s: negative segnum2 %d", what, segnum2);
  for (int64_t j = 0; j <= segnum2; ++j)
    __mlu_memcpy2d(what, (char *)dst + j * (int64_t)dst_stride2, (const char *)src + j * (int64_t)src_stride2, size,
                   direction, dst_stride1, src_stride1, segnum1, async);
}

/** __memcpy(dst, src, size, dir): copy `size` bytes between the spaces `dir` names. */
__MLU_INLINE void __memcpy(void *dst, const void *src, int size, mluMemcpyDirection_t dir) {
  __mlu_memcpy("__memcpy", dst, src, size, dir, 0);
}
/** __memcpy(dst, src, size, dir, dst_stride, src_stride, segnum): segnum + 1 strided segments. */
__MLU_INLINE void __memcpy(void *dst, const void *src, int size, mluMemcpyDirection_t dir, int dst_stride,
                            int src_stride, int segnum) {
  __mlu_memcpy2d("__memcpy", dst, src, size, dir, dst_stride, src_stride, segnum, 0);
}
__MLU_INLINE void __memcpy(void *dst, const void *src, int size, mluMemcpyDirection_t dir, int dst_stride,
                            int src_stride, int segnum, int dst_stride2, int src_stride2, int segnum2) {
  __mlu_memcpy3d("__memcpy", dst, src, size, dir, dst_stride, src_stride, segnum, dst_stride2, src_stride2, segnum2,
                 0);
}
/** The SRAM2SRAM form with a destination cluster: `dst` is an address of this cluster's SRAM, the bytes land at the
    same offset of cluster dst_cluster's SRAM (of the same union and round). */
__MLU_INLINE void __memcpy(void *dst, const void *src, int size, mluMemcpyDirection_t dir, int dst_cluster) {
  if (dst_cluster == clusterId) {
    __mlu_memcpy("__memcpy", dst, src, size, dir, 0);
    return;
  }
  if (dir != SRAM2SRAM)
    __mlu_trapf("__memcpy with a destination cluster takes SRAM2SRAM, got %s", __mlu_direction_name(dir));
  int64_t *launch = __mlu_launch_row();
  int64_t clusters = launch[__MLU_L_NSRAMS];
  if (dst_cluster < 0 || dst_cluster >= clusters)
    __mlu_trapf("__memcpy SRAM2SRAM to cluster %d: the union has %lld cluster(s)%s", dst_cluster,
                (long long)clusters, clusters ? "" : " (a Block task has no union)");
  if (size < 0) __mlu_trapf("__memcpy: negative size %d", size);
  __mlu_check_copy("__memcpy", dst, src, size, dir);
  int64_t *c = __mlu_ctx;
  char *target = (char *)((int64_t *)launch[__MLU_L_SRAMS])[dst_cluster] + ((char *)dst - (char *)c[__MLU_C_SRAM]);
  memmove(target, src, (size_t)size);
  __mlu_count_copy(dir, size);
}
__MLU_INLINE void __memcpy_async(void *dst, const void *src, int size, mluMemcpyDirection_t dir) {
  __mlu_memcpy("__memcpy_async", dst, src, size, dir, 1);
}
__MLU_INLINE void __memcpy_async(void *dst, const void *src, int size, mluMemcpyDirection_t dir, int dst_stride,
                                  int src_stride, int segnum) {
  __mlu_memcpy2d("__memcpy_async", dst, src, size, dir, dst_stride, src_stride, segnum, 1);
}
__MLU_INLINE void __memcpy_async(void *dst, const void *src, int size, mluMemcpyDirection_t dir, int dst_stride,
                                  int src_stride, int segnum, int dst_stride2, int src_stride2, int segnum2) {
  __mlu_memcpy3d("__memcpy_async", dst, src, size, dir, dst_stride, src_stride, segnum, dst_stride2, src_stride2,
                 segnum2, 1);
}

/* ---- barriers: mlusim.bang.barriers through the launch's callback ---------------------------------------------- */
__MLU_INLINE void __mlu_barrier(int scope, const char *what) {
  __sync_io();
  int64_t *c = __mlu_ctx;
  int64_t *launch = __mlu_launch_row();
  typedef int64_t (*barrier_t)(int64_t, int64_t, int64_t, int64_t, char *, int64_t);
  barrier_t arrive = (barrier_t)launch[__MLU_L_BARRIER];
  if (arrive == 0) __mlu_trapf("%s reached, but the kernel was launched without barrier support", what);
  int64_t kind = arrive(__mlu_limits()[6] /* BARRIER_KEY */, c[__MLU_C_ENGINE_TASK], clusterDim, scope,
                        (char *)c[__MLU_C_ERROR], c[__MLU_C_ERROR_SIZE]);
  if (kind != 0) __mlu_leave((int)kind);  /* the message is written */
  __mlu_state()[__MLU_S_BARRIERS] += 1;
}
/** __sync_cluster(): wait for the cores of this cluster (and complete this core's async copies). */
__MLU_INLINE void __sync_cluster(void) { __mlu_barrier(0, "__sync_cluster"); }
/** __sync_all(): wait for every core of this union task. */
__MLU_INLINE void __sync_all(void) { __mlu_barrier(1, "__sync_all"); }
/* the barriers of the compute cores (IPUs) or memory cores (MPUs) alone (mlusim/bang/barriers.py's scopes); a core
   of the other kind passes them without waiting */
__MLU_INLINE void __sync_all_ipu(void) { __mlu_barrier(3, "__sync_all_ipu"); }
__MLU_INLINE void __sync_all_mpu(void) { __mlu_barrier(4, "__sync_all_mpu"); }
__MLU_INLINE void __sync_all_ipu_within_cluster(void) { __mlu_barrier(2, "__sync_all_ipu_within_cluster"); }
/** __is_mpu() / __is_ipu(): whether this task runs on the cluster's memory core (coreId 0x80) or a compute core. A
    kernel that asks runs a memory-core task per cluster in its Union launches; Block tasks run on compute cores. */
__MLU_INLINE bool __is_mpu(void) { return coreId == 0x80; }
__MLU_INLINE bool __is_ipu(void) { return coreId != 0x80; }

/* ---- memset ---------------------------------------------------------------------------------------------------- */
template <typename T>
__MLU_INLINE void __mlu_fill(const char *what, T *dst, int64_t n, T value, int space) {
  struct __mlu_region r;
  if (n < 0) __mlu_trapf("%s: negative count %lld", what, (long long)n);
  __mlu_check_span(what, "dst", dst, n * (int64_t)sizeof(T), space, &r);
  for (int64_t i = 0; i < n; ++i) dst[i] = value;
}
/** __gdramset(dst, n, value): fill n elements of GDRAM. */
template <typename T, typename V>
__MLU_INLINE void __gdramset(T *dst, int n, V value) {
  __mlu_fill("__gdramset", dst, n, (T)value, __MLU_GDRAM);
  __mlu_count_copy(NRAM2GDRAM, (int64_t)n * (int64_t)sizeof(T));
}
/** __nramset(dst, n, value): fill n elements of NRAM. */
template <typename T, typename V>
__MLU_INLINE void __nramset(T *dst, int n, V value) {
  __mlu_fill("__nramset", dst, n, (T)value, __MLU_NRAM);
  __mlu_count_vector(n);
}
/** __nramset_async(dst, n, value, stride, segments): __nramset issued without waiting (it is done at once here);
    the strided form (segments of n elements `stride` bytes apart) is not simulated and traps naming itself. */
template <typename T, typename V>
__MLU_INLINE void __nramset_async(T *dst, int n, V value, int stride, int segments) {
  if (stride != 0 || segments != 0)
    __mlu_trapf("__nramset_async: the strided form (stride %d, segments %d) is not simulated", stride, segments);
  __mlu_fill("__nramset_async", dst, n, (T)value, __MLU_NRAM);
  __mlu_count_vector(n);
}
template <typename T, typename V>
__MLU_INLINE void __sramset(T *dst, int n, V value) {
  __mlu_fill("__sramset", dst, n, (T)value, __MLU_SRAM);
  __mlu_count_vector(n);
}

#endif
