/* mlusim BANG C: kernel entry trampolines, the kernel table Python reads, <<<>>> launches, printf and __assert. */
#ifndef MLUSIM_BANG_LAUNCH_H
#define MLUSIM_BANG_LAUNCH_H

#include "core.h"
#include "memory.h"
#include <cnrt.h>
#include <exception>
#include <tuple>
#include <type_traits>
#include <utility>

/* ---- the kernel table: a linked list per executable / shared object, found by Python through the anchor in the
   "mlusim_bang" ELF section (neuware/bangc/registry.py) ------------------------------------------------------------ */
struct __mlu_kernel_desc {
  uint64_t magic;
  const void *function;                      /* the address host code passes to cnrtInvokeKernel */
  int64_t (*entry)(int64_t *, void **);      /* runs one task */
  const char *name;
  const char *params;                        /* one "<kind><bytes>" per parameter: p8 i4 u8 f4 h2 b1 s16 */
  int64_t flags;                             /* 1: reaches barriers */
  const char *arch;
  struct __mlu_kernel_desc *next;
};
#define __MLU_DESC_MAGIC 0x4d4c5553494d4b31ULL   /* "MLUSIMK1" */
extern struct __mlu_kernel_desc *__mlu_kernel_list __MLU_WEAK;
struct __mlu_kernel_desc *__mlu_kernel_list __MLU_WEAK = 0;
static void *__mlu_anchor[2] __attribute__((section("mlusim_bang"), used)) = {
    (void *)0x4d4c5553494d4131ULL, (void *)&__mlu_kernel_list};

#define __MLU_STR2(x) #x
#define __MLU_STR(x) __MLU_STR2(x)

template <typename T>
__MLU_INLINE void __mlu_param_kind(char *&out) {
  typedef typename std::decay<T>::type U;
  char kind = std::is_pointer<U>::value ? 'p' : std::is_same<U, half>::value ? 'h' : std::is_floating_point<U>::value ? 'f'
            : std::is_same<U, bool>::value ? 'b' : std::is_enum<U>::value ? 'i'
            : std::is_integral<U>::value ? (std::is_signed<U>::value ? 'i' : 'u') : 's';
  out += sprintf(out, "%c%d ", kind, (int)sizeof(U));
}

/* ---- index sequences (C++11) ------------------------------------------------------------------------------ */
template <size_t... I> struct __mlu_indices {};
template <size_t N, size_t... I> struct __mlu_make_indices : __mlu_make_indices<N - 1, N - 1, I...> {};
template <size_t... I> struct __mlu_make_indices<0, I...> { typedef __mlu_indices<I...> type; };

/* ---- one task: set the built-ins, call the kernel, turn a trap into the task's fault ---------------------- */
__MLU_INLINE void __mlu_begin_task(int64_t *ctx) {
  __mlu_ctx = ctx;
  int *ids[12] = {&taskIdX, &taskIdY, &taskIdZ, &taskDimX, &taskDimY, &taskDimZ, &taskId, &taskDim, &clusterId,
                  &clusterDim, &coreId, &coreDim};
  for (int i = 0; i < 12; ++i) *ids[i] = (int)ctx[__MLU_C_TASK + i];
  char here;
  ctx[__MLU_C_STACK_HI] = (int64_t)(uintptr_t)&here;
  ctx[__MLU_C_STACK_LO] = (int64_t)(uintptr_t)&here - (int64_t)(16 << 20);
  ctx[__MLU_C_ERROR_KIND] = 0;
  ctx[__MLU_C_INITED] = 0;
  ctx[__MLU_C_PENDING_COUNT] = 0;
}

__MLU_INLINE int64_t __mlu_end_task(int64_t *ctx, int64_t kind) {
  if (kind != 0) ctx[__MLU_C_PENDING_COUNT] = 0;
  fflush(stdout);
  __mlu_ctx = 0;
  return kind;
}

__MLU_INLINE int64_t __mlu_foreign_fault(int64_t *ctx, const char *what) {
  snprintf((char *)ctx[__MLU_C_ERROR], (size_t)ctx[__MLU_C_ERROR_SIZE], "%s", what);
  ctx[__MLU_C_ERROR_KIND] = __MLU_TRAP;
  return __MLU_TRAP;
}

/* Hidden, as is everything of this library an object defines: a kernel's table entry is a static local of a template
   member, which g++ would otherwise make one STB_GNU_UNIQUE symbol for every object loaded into the process (even
   RTLD_LOCAL ones), so a second shared object with the same kernel found the first's entry taken and left the kernel
   out of its own table. */
template <typename F, F K> struct __MLU_HIDDEN __mlu_kernel;
template <typename... P, void (*K)(P...)>
struct __MLU_HIDDEN __mlu_kernel<void (*)(P...), K> {
  template <size_t... I>
  __MLU_UNCHECKED static void call(void **args, __mlu_indices<I...>) { K(*(typename std::decay<P>::type *)args[I]...); }

  __MLU_UNCHECKED static int64_t entry(int64_t *ctx, void **args) {
    __mlu_begin_task(ctx);
    jmp_buf escape;
    int64_t kind = 0;
    __mlu_escape = &escape;
    if (setjmp(escape) == 0) {
      try {
        call(args, typename __mlu_make_indices<sizeof...(P)>::type());
        __sync_io();
      } catch (const std::exception &error) {
        kind = __mlu_foreign_fault(ctx, error.what());
      } catch (...) {
        kind = __mlu_foreign_fault(ctx, "an exception left the kernel");
      }
    } else {
      kind = ctx[__MLU_C_ERROR_KIND];  /* a trap (__mlu_leave) */
    }
    __mlu_escape = 0;
    return __mlu_end_task(ctx, kind);
  }

  /* The kernel's entry in this object's kernel table (once). */
  __MLU_UNCHECKED static void enter(const char *name, int64_t flags) {
    static struct __mlu_kernel_desc desc;
    static char params[8 * (sizeof...(P) + 1)];
    if (desc.magic == __MLU_DESC_MAGIC) return;
    char *out = params;
    int expand[] = {0, (__mlu_param_kind<P>(out), 0)...};
    (void)expand;
    desc.function = (const void *)K;
    desc.entry = &entry;
    desc.name = name;
    desc.params = params;
    desc.flags = flags;
    desc.arch = __MLU_STR(__BANG_ARCH__);
    desc.next = __mlu_kernel_list;
    __atomic_store_n(&desc.magic, __MLU_DESC_MAGIC, __ATOMIC_RELEASE);
    __mlu_kernel_list = &desc;
  }
};

/* Registration of a kernel defined in this translation unit (cncc emits one after each definition). */
template <typename F, F K>
struct __MLU_HIDDEN __mlu_registrar {
  __MLU_UNCHECKED __mlu_registrar(const char *name, int64_t flags) { __mlu_kernel<F, K>::enter(name, flags); }
};

/* ---- kernel<<<dim, ktype, queue>>>(args...) ------------------------------------------------------------------ */
template <typename T> struct __mlu_held { T value; };

template <typename F, F K> struct __MLU_HIDDEN __mlu_launch_t;
template <typename... P, void (*K)(P...)>
struct __MLU_HIDDEN __mlu_launch_t<void (*)(P...), K> {
  cnrtDim3_t dim;
  cnrtFunctionType_t ktype;
  cnrtQueue_t queue;

  template <size_t... I, typename... A>
  __MLU_UNCHECKED void go(__mlu_indices<I...>, A &&...a) const {
    /* each argument converted to its parameter's type, as a call would */
    void *args[sizeof...(P) + 1];
    std::tuple<typename std::decay<P>::type...> values(std::forward<A>(a)...);
    int expand[] = {0, ((args[I] = (void *)&std::get<I>(values)), 0)...};
    (void)expand;
    cnrtInvokeKernel((const void *)K, dim, ktype, args, 0, queue);
  }

  template <typename... A>
  __MLU_UNCHECKED void operator()(A &&...a) const {
    static_assert(sizeof...(A) == sizeof...(P), "kernel<<<>>> launch: the number of arguments differs from the "
                                                "kernel's parameters");
    go(typename __mlu_make_indices<sizeof...(P)>::type(), std::forward<A>(a)...);
  }
};

template <typename F, F K, typename D, typename T>
__MLU_INLINE __mlu_launch_t<F, K> __mlu_launch(const char *name, int64_t flags, const D &dim, T ktype,
                                                cnrtQueue_t queue = 0) {
  __mlu_kernel<F, K>::enter(name, flags);
  __mlu_launch_t<F, K> launch;
  launch.dim = dim;
  launch.ktype = (cnrtFunctionType_t)ktype;
  launch.queue = queue;
  return launch;
}

/* ---- printf, __assert, traps ---------------------------------------------------------------------------------- */
/** __assert(condition): stop the task with cnrtErrorAssert when it is false. */
#define __assert(condition)                                                                                       \
  ((condition) ? (void)0 : __mlu_fail(__MLU_ASSERT, "assertion failed: %s (%s:%d)", #condition, __FILE__, __LINE__))
/** __bang_trap() / __abort(): stop the task with cnrtErrorKernelUserTrap. */
#define __bang_trap() __mlu_fail(__MLU_USER_TRAP, "user trap: __bang_trap() at %s:%d", __FILE__, __LINE__)
#define __abort() __mlu_fail(__MLU_USER_TRAP, "user trap: __abort() at %s:%d", __FILE__, __LINE__)

#endif
