/* What the C programs against NCCL's nccl.h share: CHECK counts a failed condition in
 * `failures` and prints the line and a message; main returns failures != 0. */
#ifndef BRAID_TESTS_NCCL_CHECK_H
#define BRAID_TESTS_NCCL_CHECK_H

#include <stdio.h>

static int failures = 0;

#define CHECK(cond, ...)                      \
  do {                                        \
    if (!(cond)) {                            \
      fprintf(stderr, "line %d: ", __LINE__); \
      fprintf(stderr, __VA_ARGS__);           \
      fputc('\n', stderr);                    \
      ++failures;                             \
    }                                         \
  } while (0)

#endif
