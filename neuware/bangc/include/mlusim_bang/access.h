/* mlusim BANG C: the check of every scalar load and store a kernel makes.
 *
 * cncc compiles user code with GCC's kernel address sanitizer in its call form (-fsanitize=kernel-address
 * --param asan-instrumentation-with-call-threshold=0, no globals, stack or scope instrumentation), so every memory
 * access the optimiser leaves calls __asan_{load,store}{1,2,4,8,16,N}_noabort(address[, size]) first. Those calls
 * land here: outside a kernel (host code of the same file) they return; inside one the access must lie in the task's
 * NRAM, WRAM, the cluster's SRAM, the task's stack (NRAM on the device), a GDRAM allocation the launch was given, or
 * this object's own static data (tables, __mlu_const__), else the task stops with a trap naming the address as the
 * user knows it (the device address for GDRAM). A pointer into another allocation passed to the same launch is that
 * allocation's: the check cannot tell an overflow that lands there from a use of it. */
#ifndef MLUSIM_BANG_ACCESS_H
#define MLUSIM_BANG_ACCESS_H

#include "core.h"

/* ---- the static data of this object (executable or shared object): its loaded segments, found once ---------- */
enum { __MLU_MAX_SEGMENTS = 16 };
struct __mlu_segments {
  int ready;
  int count;
  uintptr_t lo[__MLU_MAX_SEGMENTS], hi[__MLU_MAX_SEGMENTS];
};
extern struct __mlu_segments __mlu_own_segments __MLU_WEAK;
struct __mlu_segments __mlu_own_segments __MLU_WEAK = {0, 0, {0}, {0}};

__MLU_NOINLINE static int __mlu_visit_object(struct dl_phdr_info *info, size_t, void *data) {
  struct __mlu_segments *found = (struct __mlu_segments *)data;
  uintptr_t anchor = (uintptr_t)&__mlu_own_segments;
  int mine = 0, count = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || count == __MLU_MAX_SEGMENTS) continue;
    uintptr_t lo = (uintptr_t)(info->dlpi_addr + ph->p_vaddr), hi = lo + (uintptr_t)ph->p_memsz;
    found->lo[count] = lo;
    found->hi[count++] = hi;
    mine |= anchor >= lo && anchor < hi;
  }
  if (!mine) return 0;
  found->count = count;
  return 1;
}

__MLU_NOINLINE static const struct __mlu_segments *__mlu_segments_of_object(void) {
  if (!__atomic_load_n(&__mlu_own_segments.ready, __ATOMIC_ACQUIRE)) {
    struct __mlu_segments found;
    memset(&found, 0, sizeof found);
    dl_iterate_phdr(__mlu_visit_object, &found);
    memcpy(__mlu_own_segments.lo, found.lo, sizeof found.lo);
    memcpy(__mlu_own_segments.hi, found.hi, sizeof found.hi);
    __mlu_own_segments.count = found.count;
    __atomic_store_n(&__mlu_own_segments.ready, 1, __ATOMIC_RELEASE);
  }
  return &__mlu_own_segments;
}

/* ---- the check -------------------------------------------------------------------------------------------- */
/* An argument block near `p` (within 1 GiB of host memory) for the message: the nearest one ending at or below `p`
   (`below`), or the nearest one starting above it. */
__MLU_NOINLINE static int __mlu_near_block(uintptr_t p, int below, struct __mlu_region *r) {
  int64_t *launch = __mlu_launch_row();
  const int64_t *blocks = (const int64_t *)launch[__MLU_L_BLOCKS];
  uintptr_t best = 0, gap = (uintptr_t)1 << 30;
  r->space = -1;
  for (int64_t i = 0; i < launch[__MLU_L_NBLOCKS]; ++i) {
    const int64_t *b = blocks + 4 * i;
    uintptr_t lo = (uintptr_t)b[0], hi = (uintptr_t)b[1];
    uintptr_t distance = below ? (hi <= p ? p - hi : gap) : (lo > p ? lo - p : gap);
    if (distance < gap && (r->space < 0 || distance < best)) {
      best = distance;
      r->space = __MLU_GDRAM; r->lo = lo; r->hi = hi; r->device = (uint64_t)b[2]; r->name = (const char *)b[3];
    }
  }
  return r->space == __MLU_GDRAM;
}

__attribute__((noreturn)) __MLU_NOINLINE static void __mlu_bad_access(uintptr_t p, int64_t n, int store) {
  int64_t *c = __mlu_ctx;
  const char *op = store ? "scalar store" : "scalar load";
  struct __mlu_region r;
  static const int spaces[3] = {__MLU_NRAM, __MLU_WRAM, __MLU_SRAM};
  for (int i = 0; i < 3; ++i) {
    uintptr_t lo = (uintptr_t)c[__MLU_C_NRAM + 2 * i], size = (uintptr_t)c[__MLU_C_NRAM_SIZE + 2 * i];
    if (lo != 0 && p - lo < size + 4096)  /* in it, or just past its end */
      __mlu_trapf("%s of %lld bytes at %s byte %llu runs past the end of %s (%llu bytes)", op, (long long)n,
                  __mlu_space_name(spaces[i]), (unsigned long long)(p - lo), __mlu_space_name(spaces[i]),
                  (unsigned long long)size);
  }
  int64_t *launch = __mlu_launch_row();
  const int64_t *blocks = (const int64_t *)launch[__MLU_L_BLOCKS];
  for (int64_t i = 0; i < launch[__MLU_L_NBLOCKS]; ++i) {
    const int64_t *b = blocks + 4 * i;
    if (p >= (uintptr_t)b[0] && p < (uintptr_t)b[1])
      __mlu_trapf("%s of %lld bytes at 0x%llx runs past the end of its allocation (argument '%s': 0x%llx, %llu "
                  "bytes)", op, (long long)n, (unsigned long long)(b[2] + (p - (uintptr_t)b[0])),
                  (const char *)b[3], (unsigned long long)b[2], (unsigned long long)(b[1] - b[0]));
  }
  struct __mlu_region above;
  int has_below = __mlu_near_block(p, 1, &r), has_above = __mlu_near_block(p, 0, &above);
  if (has_above && (!has_below || above.lo - p < p - r.hi))
    __mlu_trapf("%s of %lld bytes at 0x%llx is outside its allocation (argument '%s': 0x%llx, %llu bytes; %llu "
                "bytes before its start)", op, (long long)n, (unsigned long long)above.device - (above.lo - p),
                above.name, (unsigned long long)above.device, (unsigned long long)(above.hi - above.lo),
                (unsigned long long)(above.lo - p));
  if (has_below)
    __mlu_trapf("%s of %lld bytes at 0x%llx is outside its allocation (argument '%s': 0x%llx, %llu bytes; %llu "
                "bytes past its end)", op, (long long)n, (unsigned long long)(r.device + (p - r.lo)), r.name,
                (unsigned long long)r.device, (unsigned long long)(r.hi - r.lo), (unsigned long long)(p - r.hi));
  uint64_t base = (uint64_t)launch[__MLU_L_DEVICE_BASE], span = (uint64_t)launch[__MLU_L_DEVICE_SPAN];
  if ((uint64_t)p - base < span)
    __mlu_trapf("%s of %lld bytes at 0x%llx: a device address dereferenced directly (a pointer read from memory?); "
                "mlusim gives a kernel its GDRAM through its pointer arguments, which it maps to host memory, and "
                "cannot follow a device address stored in GDRAM", op, (long long)n, (unsigned long long)p);
  if (p < 65536)
    __mlu_trapf("%s of %lld bytes at address 0x%llx: a null pointer", op, (long long)n, (unsigned long long)p);
  __mlu_trapf("%s of %lld bytes at host address 0x%llx is in no memory the task can reach (a GDRAM allocation the "
              "kernel was given, NRAM, WRAM, SRAM, its stack)", op, (long long)n, (unsigned long long)p);
}

/* One access of `n` bytes at `ptr`: returns when it is allowed, traps otherwise. */
__MLU_INLINE void __mlu_access(const void *ptr, int64_t n, int store) {
  int64_t *c = __mlu_ctx;
  if (c == 0 || n == 0) return;  /* host code; nothing accessed */
  uintptr_t p = (uintptr_t)ptr, end = p + (uintptr_t)n;
  for (int i = 0; i < 3; ++i) {  /* NRAM, WRAM, SRAM */
    uintptr_t lo = (uintptr_t)c[__MLU_C_NRAM + 2 * i];
    if (p - lo < (uintptr_t)c[__MLU_C_NRAM_SIZE + 2 * i]) {
      if (end - lo <= (uintptr_t)c[__MLU_C_NRAM_SIZE + 2 * i]) return;
      __mlu_bad_access(p, n, store);
    }
  }
  uintptr_t slo = (uintptr_t)c[__MLU_C_STACK_LO];
  if (p - slo < (uintptr_t)c[__MLU_C_STACK_HI] - slo) return;
  int64_t *launch = __mlu_launch_row();
  const int64_t *blocks = (const int64_t *)launch[__MLU_L_BLOCKS];
  for (int64_t i = 0, count = launch[__MLU_L_NBLOCKS]; i < count; ++i) {
    uintptr_t lo = (uintptr_t)blocks[4 * i], size = (uintptr_t)blocks[4 * i + 1] - lo;
    if (p - lo < size && end - lo <= size) return;
  }
  const struct __mlu_segments *own = __mlu_segments_of_object();
  for (int i = 0; i < own->count; ++i)
    if (p >= own->lo[i] && end <= own->hi[i]) return;
  __mlu_bad_access(p, n, store);
}

/* The compiler's calls (GCC's builtin prototypes: void *, and long for the N forms). Weak and hidden: one per
   object, whichever translation unit's copy the linker keeps. */
#define __MLU_ACCESS_HOOKS(N)                                                                                     \
  extern "C" __MLU_WEAK __MLU_UNCHECKED void __asan_load##N##_noabort(void *p) { __mlu_access(p, N, 0); }        \
  extern "C" __MLU_WEAK __MLU_UNCHECKED void __asan_store##N##_noabort(void *p) { __mlu_access(p, N, 1); }
__MLU_ACCESS_HOOKS(1)
__MLU_ACCESS_HOOKS(2)
__MLU_ACCESS_HOOKS(4)
__MLU_ACCESS_HOOKS(8)
__MLU_ACCESS_HOOKS(16)
extern "C" __MLU_WEAK __MLU_UNCHECKED void __asan_loadN_noabort(void *p, long n) { __mlu_access(p, n, 0); }
extern "C" __MLU_WEAK __MLU_UNCHECKED void __asan_storeN_noabort(void *p, long n) { __mlu_access(p, n, 1); }
/* and the calls it brackets other code with, which need nothing here */
extern "C" __MLU_WEAK __MLU_UNCHECKED void __asan_handle_no_return(void) {}
extern "C" __MLU_WEAK __MLU_UNCHECKED void __asan_before_dynamic_init(const void *) {}
extern "C" __MLU_WEAK __MLU_UNCHECKED void __asan_after_dynamic_init(void) {}

#endif
