/* mlu.h: the 2019 BANG dialect's header (__mlu_entry__ kernels of MLU270-era code); the same library as bang.h. */
#ifndef MLUSIM_MLU_H
#define MLUSIM_MLU_H
#include "bang.h"
#endif
