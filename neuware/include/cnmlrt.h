/*
 * cnmlrt.h: the CNML runtime header of mlusim's Neuware tree.
 *
 * DIOPI's camb implementation and its test runtime include cnmlrt.h and link libcnmlrt.so, but call only CNRT
 * through it. mlusim has no CNML (the graph library of the MLU270 generation): this header brings in cnrt.h, and
 * libcnmlrt.so is a library with no symbols of its own that depends on libcnrt.so. A CNML runtime function a program
 * calls is an undeclared identifier at compile time.
 */
#ifndef MLUSIM_CNMLRT_H_
#define MLUSIM_CNMLRT_H_

#include "cnrt.h"

#endif /* MLUSIM_CNMLRT_H_ */
