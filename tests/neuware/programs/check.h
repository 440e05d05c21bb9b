/* Checks shared by the test programs: each failed check prints where and why and counts; main returns the count. */
#ifndef MLUSIM_TEST_CHECK_H_
#define MLUSIM_TEST_CHECK_H_

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cnrt.h>
#include <mlusim.h>

static int check_failures = 0;

#define EXPECT(cond, ...)                                                          \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      check_failures++;                                                            \
      printf("FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond);                     \
      printf(__VA_ARGS__);                                                         \
      printf("\n");                                                                \
    }                                                                              \
  } while (0)

/* A call that must return status 0; on failure prints the status and the simulator's message. */
#define OK(call)                                                                   \
  do {                                                                             \
    int check_status_ = (int)(call);                                               \
    if (check_status_ != 0) {                                                      \
      check_failures++;                                                            \
      printf("FAILED %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call,      \
             check_status_, mlusimGetLastErrorMessage());                          \
    }                                                                              \
  } while (0)

/* A call that must fail with `expected`, leaving a message that contains `part`. */
#define FAILS_WITH(call, expected, part)                                           \
  do {                                                                             \
    int check_status_ = (int)(call);                                               \
    const char *check_message_ = mlusimGetLastErrorMessage();                      \
    if (check_status_ != (int)(expected)) {                                        \
      check_failures++;                                                            \
      printf("FAILED %s:%d: %s returned %d, expected %d (%s)\n", __FILE__,         \
             __LINE__, #call, check_status_, (int)(expected), check_message_);     \
    } else if (strstr(check_message_, (part)) == NULL) {                           \
      check_failures++;                                                            \
      printf("FAILED %s:%d: %s: message \"%s\" lacks \"%s\"\n", __FILE__,          \
             __LINE__, #call, check_message_, (part));                             \
    }                                                                              \
  } while (0)

static inline int close_to(double got, double want, double tolerance) {
  return fabs(got - want) <= tolerance * (1.0 + fabs(want));
}

#define DONE()                                                                     \
  do {                                                                             \
    printf("%s: %d failure(s)\n", __FILE__, check_failures);                       \
    return check_failures != 0;                                                    \
  } while (0)

#endif
