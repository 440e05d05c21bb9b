/*
 * cnnl_extra.h: the CNNL-Extra header of mlusim's Neuware tree.
 *
 * Real back ends (DIOPI's camb implementation, torch_mlu) include cnnl_extra.h next to cnnl.h and link
 * libcnnl_extra.so. mlusim implements no CNNL-Extra function of its own yet: this header brings in cnnl.h, whose
 * functions are what those back ends call through it, and libcnnl_extra.so is a library with no symbols of its own
 * that depends on libcnnl.so. A CNNL-Extra function a program calls (cnnlExtraSetGenCaseMode, ...) is therefore an
 * undeclared identifier at compile time, never a call that pretends to work.
 */
#ifndef MLUSIM_CNNL_EXTRA_H_
#define MLUSIM_CNNL_EXTRA_H_

#include "cnnl.h"

#endif /* MLUSIM_CNNL_EXTRA_H_ */
