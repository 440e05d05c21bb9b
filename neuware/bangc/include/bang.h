/* bang.h: the BANG C device library of mlusim (built-in variables, __memcpy, barriers, __bang_* intrinsics).
 * Compiled by mlusim's cncc, BANG C kernels run on the simulated MLU with the checks of mlusim.bang. */
#ifndef MLUSIM_BANG_H
#define MLUSIM_BANG_H
#include "mlusim_bang/core.h"
#include "mlusim_bang/access.h"
#include "mlusim_bang/memory.h"
#include "mlusim_bang/vector.h"
#include "mlusim_bang/cycle.h"
#include "mlusim_bang/search.h"
#include "mlusim_bang/pool.h"
#include "mlusim_bang/atomic.h"
#include "mlusim_bang/launch.h"
#endif
