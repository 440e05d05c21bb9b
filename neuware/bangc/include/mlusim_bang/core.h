/* mlusim BANG C device runtime: the task context, built-in variables, traps, memory spaces, static on-chip arrays.
 *
 * A BANG C kernel compiled by mlusim's cncc is host code run by mlusim.bang's task engine: each task is one call of
 * the kernel's entry trampoline on a host thread (with the GIL released) with a context row (int64 slots below)
 * that the engine fills. Every rule a kernel breaks jumps back to the trampoline (__mlu_leave), which turns it into the task's
 * fault (kernel, task and ids are added by the engine). Header-only: nothing but libcnrt is linked. */
#ifndef MLUSIM_BANG_CORE_H
#define MLUSIM_BANG_CORE_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdio.h>
#include <stdarg.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <link.h>
#include <new>

#ifndef __BANG_ARCH__
#define __BANG_ARCH__ 372
#endif
#ifndef __BANG__
#define __BANG__ 1
#endif
#ifndef __MLU_NRAM_SIZE__
#define __MLU_NRAM_SIZE__ 768
#define __MLU_WRAM_SIZE__ 1024
#define __MLU_SRAM_SIZE__ 4096
#endif
#define __NRAM_SIZE__ __MLU_NRAM_SIZE__
#define __WRAM_SIZE__ __MLU_WRAM_SIZE__
#define __SRAM_SIZE__ __MLU_SRAM_SIZE__

/* __mlu_global__, __mlu_entry__, __mlu_func__, __nram__, __wram__ and __mlu_shared__ are read by cncc's rewriter
   (neuware/bangc/rewrite.py), not macros. */
#define __mlu_device__
#define __mlu_host__
#define __ldram__
#define __mlu_const__ static const

#define __MLU_HIDDEN __attribute__((visibility("hidden")))
#define __MLU_WEAK __attribute__((weak, visibility("hidden")))
/* cncc instruments every load and store of user code (-fsanitize=kernel-address calling the checks below); this
   library checks its own accesses as the intrinsics it implements, so none of it is instrumented. */
#define __MLU_UNCHECKED __attribute__((no_sanitize_address))
#define __MLU_INLINE static inline __MLU_UNCHECKED
#define __MLU_NOINLINE __attribute__((noinline, cold)) __MLU_UNCHECKED

/* ---- context slots (must match neuware/bangc/program.py) --------------------------------------------------- */
enum {
  __MLU_C_ENGINE_TASK = 0, /* the engine's number of the task (a memory core's is past taskDim): barriers use it */
  __MLU_C_TASK = 1,        /* taskIdX, taskIdY, taskIdZ, taskDimX, taskDimY, taskDimZ, taskId, taskDim, clusterId,
                              clusterDim, coreId, coreDim: slots 1..12 */
  __MLU_C_NRAM = 13, __MLU_C_NRAM_SIZE = 14, __MLU_C_WRAM = 15, __MLU_C_WRAM_SIZE = 16,
  __MLU_C_SRAM = 17, __MLU_C_SRAM_SIZE = 18,
  __MLU_C_STATE = 19, __MLU_C_LIMITS = 20, __MLU_C_STOP = 21, __MLU_C_LAUNCH = 22,
  __MLU_C_ERROR = 23, __MLU_C_ERROR_SIZE = 24, __MLU_C_ERROR_KIND = 25, __MLU_C_SERIAL = 26,
  __MLU_C_STACK_LO = 27, __MLU_C_STACK_HI = 28, __MLU_C_INITED = 29, /* 30..61: initialised static sites */
  __MLU_C_PENDING = 62, __MLU_C_PENDING_COUNT = 63 /* async copies not yet done */, __MLU_C_SLOTS = 64
};
enum { __MLU_INITED_MAX = 32, __MLU_MAX_PENDING = 256 };
/* launch row (shared by the tasks of one launch) */
enum {
  __MLU_L_ID = 0, __MLU_L_NBLOCKS = 1, __MLU_L_BLOCKS = 2, __MLU_L_BARRIER = 3,
  __MLU_L_LOCK = 5, __MLU_L_CURSOR = 6 /* 6, 7, 8: NRAM, WRAM, SRAM bytes of static arrays */, __MLU_L_NSITES = 9,
  __MLU_L_BARRIER_KEY = 10, __MLU_L_PRINT = 11,
  __MLU_L_DEVICE_BASE = 12, __MLU_L_DEVICE_SPAN = 13 /* the device's GDRAM addresses */,
  __MLU_L_SRAMS = 14, __MLU_L_NSRAMS = 15 /* the union's SRAMs by clusterId (Union launches' rounds) */,
  __MLU_L_SITES = 16
};
enum { __MLU_SITE_WORDS = 6, __MLU_MAX_SITES = 1024 };
/* state row slots (mlusim/bang/context.py) and limits row */
enum { __MLU_S_SRAM_HIGH = 6, __MLU_S_COPY_BYTES = 8, __MLU_S_COPY_COUNT = 32, __MLU_S_VECTOR = 33,
       __MLU_S_MACS = 34, __MLU_S_BARRIERS = 41 };
enum { __MLU_LIM_ADDRESS_ALIGN = 4, __MLU_LIM_LENGTH_ALIGN = 5 };
/* element kinds of the MACS counters (mlusim.bang.dtypes.ELEMENT_TYPES order) */
enum { __MLU_K_FLOAT = 0, __MLU_K_HALF = 1, __MLU_K_BFLOAT16 = 2, __MLU_K_INT8 = 3, __MLU_K_UINT8 = 4,
       __MLU_K_INT16 = 5, __MLU_K_INT32 = 6 };
/* fault kinds */
enum { __MLU_OK = 0, __MLU_TRAP = 1, __MLU_ASSERT = 2, __MLU_USER_TRAP = 3, __MLU_STOPPED = 4, __MLU_ABORTED = 5 };
/* memory spaces (mlusim.bang.pointer order) */
enum { __MLU_GDRAM = 0, __MLU_NRAM = 1, __MLU_WRAM = 2, __MLU_SRAM = 3, __MLU_LDRAM = 4 };

__MLU_INLINE const char *__mlu_space_name(int space) {
  static const char *const names[] = {"GDRAM", "NRAM", "WRAM", "SRAM", "LDRAM"};
  return space >= 0 && space <= 4 ? names[space] : "?";
}

/* ---- the current task ----------------------------------------------------------------------------------------- */
/* The running task of this thread: defined once, in libcnrt (neuware/build.py), in initial-exec thread-local
   storage, so that the check of every scalar access reads it with one instruction (a dlopened object's own
   thread-locals are reached through a call). */
#define __MLU_TLS __attribute__((tls_model("initial-exec")))
extern __thread int64_t *__mlu_ctx __MLU_TLS;
extern __thread int taskIdX __MLU_TLS, taskIdY __MLU_TLS, taskIdZ __MLU_TLS, taskDimX __MLU_TLS, taskDimY __MLU_TLS,
    taskDimZ __MLU_TLS, taskId __MLU_TLS, taskDim __MLU_TLS, clusterId __MLU_TLS, clusterDim __MLU_TLS,
    coreId __MLU_TLS, coreDim __MLU_TLS;

#define __mlu_launch_row() ((int64_t *)__mlu_ctx[__MLU_C_LAUNCH])
#define __mlu_state() ((int64_t *)__mlu_ctx[__MLU_C_STATE])
#define __mlu_limits() ((const int64_t *)__mlu_ctx[__MLU_C_LIMITS])

/* ---- traps ----------------------------------------------------------------------------------------------------
   A broken rule ends the task by a jump back to its trampoline (longjmp), not a C++ exception: the checks of scalar
   accesses are calls the compiler takes for non-throwing, and an exception leaving one would reach std::terminate;
   nor can a user's catch (...) or noexcept function get in the way. Destructors of the kernel's locals do not run:
   the task is abandoned, as on the device. */
extern __thread jmp_buf *__mlu_escape __MLU_TLS;

__attribute__((noreturn)) __MLU_NOINLINE static void __mlu_leave(int kind) {
  __mlu_ctx[__MLU_C_ERROR_KIND] = kind;
  longjmp(*__mlu_escape, 1);
}

__attribute__((noreturn)) __MLU_NOINLINE static void __mlu_vtrap(int kind, const char *format, va_list list) {
  int64_t *c = __mlu_ctx;
  if (c == 0 || __mlu_escape == 0) {  /* device code called outside a kernel launch */
    fprintf(stderr, "mlusim BANG C: ");
    vfprintf(stderr, format, list);
    fprintf(stderr, " (device code called outside a kernel)\n");
    abort();
  }
  char *buffer = (char *)c[__MLU_C_ERROR];
  vsnprintf(buffer, (size_t)c[__MLU_C_ERROR_SIZE], format, list);
  __mlu_leave(kind);
}

__attribute__((noreturn, format(printf, 2, 3))) __MLU_NOINLINE static void __mlu_fail(int kind, const char *format,
                                                                                       ...) {
  va_list list;
  va_start(list, format);
  __mlu_vtrap(kind, format, list);
}
#define __mlu_trapf(...) __mlu_fail(__MLU_TRAP, __VA_ARGS__)

/* ---- polling (the watchdog and Ctrl-C: mlusim/bang/cancel.py's stop table) ------------------------------------- */
__MLU_NOINLINE static void __mlu_poll_slow(const uint64_t *table) {
  uint64_t me = (uint64_t)pthread_self();
  for (int slot = 1; slot <= 255; ++slot)
    if (__atomic_load_n(&table[slot], __ATOMIC_RELAXED) == me) __mlu_fail(__MLU_STOPPED, "stopped");
}

__MLU_INLINE void __mlu_poll(void) {
  int64_t *c = __mlu_ctx;
  if (c == 0) return;
  const uint64_t *table = (const uint64_t *)c[__MLU_C_STOP];
  if (__builtin_expect(__atomic_load_n(&table[0], __ATOMIC_RELAXED) != 0, 0)) __mlu_poll_slow(table);
}
/* a loop head's poll (inserted by cncc): always false */
__MLU_INLINE int __mlu_loop_poll(void) { __mlu_poll(); return 0; }

/* ---- memory spaces -------------------------------------------------------------------------------------------- */
struct __mlu_region {
  int space;
  uintptr_t lo, hi;       /* host bytes [lo, hi) */
  uint64_t device;        /* device address of lo (GDRAM) */
  const char *name;       /* the allocation's name (kernel argument) */
};

__MLU_INLINE int __mlu_in(uintptr_t p, uintptr_t lo, uintptr_t hi) { return p >= lo && p < hi; }

__MLU_NOINLINE static int __mlu_gdram_region(uintptr_t p, struct __mlu_region *r) {
  int64_t *launch = __mlu_launch_row();
  int64_t count = launch[__MLU_L_NBLOCKS];
  const int64_t *blocks = (const int64_t *)launch[__MLU_L_BLOCKS];
  /* inside a block first; then one past a block's end (a pointer C may form), which is the block's too */
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t i = 0; i < count; ++i) {
      const int64_t *b = blocks + 4 * i;
      if (pass == 0 ? __mlu_in(p, (uintptr_t)b[0], (uintptr_t)b[1]) : p == (uintptr_t)b[1]) {
        r->space = __MLU_GDRAM; r->lo = (uintptr_t)b[0]; r->hi = (uintptr_t)b[1]; r->device = (uint64_t)b[2];
        r->name = (const char *)b[3];
        return 1;
      }
    }
  return 0;
}

/* The space and extent of the memory `p` points into: the core's NRAM (its stack included, which lives in NRAM on
   the device), WRAM, the cluster's SRAM, or a GDRAM allocation. */
__MLU_INLINE int __mlu_region_of(const void *ptr, struct __mlu_region *r) {
  int64_t *c = __mlu_ctx;
  uintptr_t p = (uintptr_t)ptr;
  static const int spaces[3] = {__MLU_NRAM, __MLU_WRAM, __MLU_SRAM};
  for (int i = 0; i < 3; ++i) {
    uintptr_t lo = (uintptr_t)c[__MLU_C_NRAM + 2 * i], hi = lo + (uintptr_t)c[__MLU_C_NRAM_SIZE + 2 * i];
    if (__mlu_in(p, lo, hi) || (p == hi && lo != 0)) {
      r->space = spaces[i]; r->lo = lo; r->hi = hi; r->device = 0; r->name = __mlu_space_name(spaces[i]);
      return 1;
    }
  }
  uintptr_t slo = (uintptr_t)c[__MLU_C_STACK_LO], shi = (uintptr_t)c[__MLU_C_STACK_HI];
  if (__mlu_in(p, slo, shi)) {
    r->space = __MLU_NRAM; r->lo = slo; r->hi = shi; r->device = 0; r->name = "the NRAM stack";
    return 1;
  }
  return __mlu_gdram_region(p, r);
}

/* The argument block below `ptr` nearest to it (a pointer computed past an argument's end), for the message. */
__MLU_NOINLINE static int __mlu_nearest_block(const void *ptr, struct __mlu_region *r) {
  int64_t *launch = __mlu_launch_row();
  const int64_t *blocks = (const int64_t *)launch[__MLU_L_BLOCKS];
  uintptr_t p = (uintptr_t)ptr, best = 0;
  r->space = -1;
  for (int64_t i = 0; i < launch[__MLU_L_NBLOCKS]; ++i) {
    const int64_t *b = blocks + 4 * i;
    if ((uintptr_t)b[1] <= p && (uintptr_t)b[1] > best) {
      best = (uintptr_t)b[1];
      r->space = __MLU_GDRAM; r->lo = (uintptr_t)b[0]; r->hi = (uintptr_t)b[1]; r->device = (uint64_t)b[2];
      r->name = (const char *)b[3];
    }
  }
  return r->space == __MLU_GDRAM && p - best < ((uintptr_t)1 << 30);
}

/* The address a user reads in a message: the device address for GDRAM, the offset into the space otherwise. */
__MLU_INLINE unsigned long long __mlu_shown(const struct __mlu_region *r, uintptr_t p) {
  return r->space == __MLU_GDRAM ? (unsigned long long)(r->device + (p - r->lo)) : (unsigned long long)(p - r->lo);
}

/* Trap unless [p, p + nbytes) lies in one region of `space` (-1: any); returns the region. */
__MLU_INLINE void __mlu_check_span(const char *what, const char *role, const void *ptr, int64_t nbytes, int space,
                                    struct __mlu_region *r) {
  __mlu_poll();
  if (nbytes < 0) __mlu_trapf("%s: negative size %lld", what, (long long)nbytes);
  if (!__mlu_region_of(ptr, r) && __mlu_nearest_block(ptr, r))
    __mlu_trapf("%s: %s 0x%llx + %lld bytes is outside its allocation (argument '%s': 0x%llx, %llu bytes; %llu "
                "bytes past its end)", what, role, __mlu_shown(r, (uintptr_t)ptr), (long long)nbytes, r->name,
                (unsigned long long)r->device, (unsigned long long)(r->hi - r->lo),
                (unsigned long long)((uintptr_t)ptr - r->hi));
  if (r->space < 0)
    __mlu_trapf("%s: %s %p is in no memory the task can reach (no GDRAM allocation of this device, not on-chip)",
                what, role, ptr);
  uintptr_t p = (uintptr_t)ptr;
  if (space >= 0 && r->space != space)
    __mlu_trapf("%s: %s is in %s (%s at 0x%llx), but %s is needed", what, role, __mlu_space_name(r->space), r->name,
                __mlu_shown(r, p), __mlu_space_name(space));
  if ((uint64_t)nbytes > (uint64_t)(r->hi - p)) {
    if (r->space == __MLU_GDRAM)
      __mlu_trapf("%s: %s 0x%llx + %lld bytes is outside its allocation (argument '%s': 0x%llx, %llu bytes)", what,
                  role, __mlu_shown(r, p), (long long)nbytes, r->name, (unsigned long long)r->device,
                  (unsigned long long)(r->hi - r->lo));
    __mlu_trapf("%s: %s at %s byte %llu + %lld bytes is outside the %llu bytes of %s", what, role,
                __mlu_space_name(r->space), __mlu_shown(r, p), (long long)nbytes,
                (unsigned long long)(r->hi - r->lo), r->name);
  }
}

/* ---- static on-chip arrays (__nram__ / __wram__ / __mlu_shared__): laid out per launch ------------------------ */
struct __mlu_site { int64_t serial; char *address; };

__MLU_INLINE void __mlu_lock(int64_t *word) {
  while (__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE)) while (__atomic_load_n(word, __ATOMIC_RELAXED)) {}
}
__MLU_INLINE void __mlu_unlock(int64_t *word) { __atomic_store_n(word, 0, __ATOMIC_RELEASE); }

/* site words: key (name or site marker address), by_name, space, offset, bytes, file */
__MLU_NOINLINE static char *__mlu_static_slow(int space, int64_t nbytes, struct __mlu_site *site, const char *name,
                                              const void *marker, const void *init, const char *file, int line) {
  int64_t *c = __mlu_ctx;
  if (c == 0) {
    fprintf(stderr, "mlusim BANG C: %s array '%s' (%s:%d) used outside a kernel\n", __mlu_space_name(space), name,
            file, line);
    abort();
  }
  int64_t *launch = __mlu_launch_row();
  int by_name = marker == 0;
  const void *key = by_name ? (const void *)name : marker;
  int64_t offset = -1;
  __mlu_lock(&launch[__MLU_L_LOCK]);
  int64_t count = launch[__MLU_L_NSITES];
  int64_t *sites = launch + __MLU_L_SITES;
  int64_t *entry = 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t *s = sites + __MLU_SITE_WORDS * i;
    if (s[2] == space && (by_name ? (s[1] && strcmp((const char *)s[0], name) == 0) : (!s[1] && (const void *)s[0] == key))) {
      entry = s;
      break;
    }
  }
  int slot = space - __MLU_NRAM;
  int64_t capacity = c[__MLU_C_NRAM_SIZE + 2 * slot];
  if (entry != 0) {
    if (entry[4] < nbytes) {  /* an extern declaration and the definition may give different sizes */
      if (entry[3] + entry[4] == launch[__MLU_L_CURSOR + slot] && nbytes <= capacity - entry[3]) {
        launch[__MLU_L_CURSOR + slot] = entry[3] + nbytes;
        entry[4] = nbytes;
      } else {
        __mlu_unlock(&launch[__MLU_L_LOCK]);
        __mlu_trapf("%s array '%s' is declared with %lld bytes at %s:%d and %lld bytes elsewhere (%s)",
                    __mlu_space_name(space), name, (long long)nbytes, file, line, (long long)entry[4],
                    (const char *)entry[5]);
      }
    }
    offset = entry[3];
  } else {
    int64_t start = (launch[__MLU_L_CURSOR + slot] + 63) / 64 * 64;
    if (nbytes <= 0 || nbytes > capacity - start || count >= __MLU_MAX_SITES) {
      __mlu_unlock(&launch[__MLU_L_LOCK]);
      if (count >= __MLU_MAX_SITES)
        __mlu_trapf("%s array '%s' (%s:%d): more than %d static on-chip arrays in one launch",
                    __mlu_space_name(space), name, file, line, (int)__MLU_MAX_SITES);
      __mlu_trapf("%s array '%s' (%s:%d) of %lld bytes does not fit: %lld of the %lld bytes of %s are already "
                  "taken by the launch's other static arrays", __mlu_space_name(space), name, file, line,
                  (long long)nbytes, (long long)start, (long long)capacity, __mlu_space_name(space));
    }
    entry = sites + __MLU_SITE_WORDS * count;
    entry[0] = (int64_t)(uintptr_t)key; entry[1] = by_name; entry[2] = space; entry[3] = start; entry[4] = nbytes;
    entry[5] = (int64_t)(uintptr_t)file;
    launch[__MLU_L_NSITES] = count + 1;
    launch[__MLU_L_CURSOR + slot] = start + nbytes;
    offset = start;
  }
  __mlu_unlock(&launch[__MLU_L_LOCK]);
  char *address = (char *)c[__MLU_C_NRAM + 2 * slot] + offset;
  if (space == __MLU_SRAM) {
    int64_t *state = __mlu_state();
    if (state[__MLU_S_SRAM_HIGH] < offset + nbytes) state[__MLU_S_SRAM_HIGH] = offset + nbytes;
  }
  /* Each task declares its arrays afresh (as mlusim.bang does): an initialised one gets its values, any other is
     poisoned, once per task and array (SRAM is shared by the cluster and poisoned between rounds instead); on the
     memory core, whose NRAM is a scratch no copy fills, they read as zeros. */
  int64_t inited = c[__MLU_C_INITED], mine = 0;
  for (int64_t i = 0; i < inited; ++i)
    if (c[__MLU_C_INITED + 1 + i] == (int64_t)(uintptr_t)entry) mine = 1;
  if (!mine) {
    if (init != 0) memcpy(address, init, (size_t)nbytes);
    else if (space != __MLU_SRAM) memset(address, coreId == 0x80 ? 0 : 0xFF, (size_t)nbytes);
    if (inited < __MLU_INITED_MAX) {
      c[__MLU_C_INITED + 1 + inited] = (int64_t)(uintptr_t)entry;
      c[__MLU_C_INITED] = inited + 1;
    }
  }
  site->serial = c[__MLU_C_SERIAL];
  site->address = address;
  return address;
}

__MLU_INLINE char *__mlu_static(int space, int64_t nbytes, struct __mlu_site *site, const char *name,
                                 const void *marker, const void *init, const char *file, int line) {
  int64_t *c = __mlu_ctx;
  if (__builtin_expect(c != 0 && site->serial == c[__MLU_C_SERIAL], 1)) return site->address;
  return __mlu_static_slow(space, nbytes, site, name, marker, init, file, line);
}

/* ---- counters ------------------------------------------------------------------------------------------------- */
__MLU_INLINE void __mlu_count_vector(int64_t n) { __mlu_state()[__MLU_S_VECTOR] += n; }

#endif
