/* bang_fusor.h: included by code that uses the fused intrinsics; they are part of mlusim's bang.h. */
#ifndef MLUSIM_BANG_FUSOR_H
#define MLUSIM_BANG_FUSOR_H
#include "bang.h"
#endif
