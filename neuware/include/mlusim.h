/*
 * mlusim.h: what mlusim's C libraries offer beyond the Cambricon API (exported by libcnrt.so).
 */
#ifndef MLUSIM_MLUSIM_H_
#define MLUSIM_MLUSIM_H_

#ifdef __cplusplus
extern "C" {
#endif

/* The simulator's message for the last failed call of this host thread into libcnrt, libcnnl or libcncl (which
 * function, which argument, why), or "" when none failed. The string stays valid until this thread's next failing
 * call. */
const char *mlusimGetLastErrorMessage(void);

#ifdef __cplusplus
}
#endif

#endif /* MLUSIM_MLUSIM_H_ */
