/* ncclCommSplit inside ncclGroupStart/End from one thread, through braid's libnccl.so.2, in
 * a program compiled against NCCL's own nccl.h: four host ranks of one process
 * (ncclCommInitAll with no devices) split into two halves in one group, completed together
 * at ncclGroupEnd; then an all-reduce on each half checks who landed where. Then bad input:
 * a refused color fails the group at once, and its other splits report the error instead of
 * waiting for the refused rank. Exit 0 on success. */
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

enum { kRanks = 4 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
  setenv("BRAID_TIMEOUT", "20", 0);
  ncclComm_t comms[kRanks], halves[kRanks];
  CHECK(ncclCommInitAll(comms, kRanks, NULL) == ncclSuccess, "init: %s", ncclGetLastError(NULL));
  if (failures) return 1;

  /* Colors 0 = {0, 1}, 1 = {2, 3}; keys reverse the order within each half. */
  double start = now();
  CHECK(ncclGroupStart() == ncclSuccess, "group start");
  for (int r = 0; r < kRanks; ++r) {
    CHECK(ncclCommSplit(comms[r], r / 2, -r, &halves[r], NULL) == ncclSuccess, "split %d: %s", r,
          ncclGetLastError(comms[r]));
  }
  CHECK(ncclGroupEnd() == ncclSuccess, "group end: %s", ncclGetLastError(NULL));
  CHECK(now() - start < 15, "the group's splits took %.1f s", now() - start);
  int64_t mine[kRanks], sum[kRanks];
  CHECK(ncclGroupStart() == ncclSuccess, "group start");
  for (int r = 0; r < kRanks; ++r) {
    int count = 0, rank = -1;
    CHECK(ncclCommCount(halves[r], &count) == ncclSuccess && count == 2, "rank %d: count %d", r,
          count);
    CHECK(ncclCommUserRank(halves[r], &rank) == ncclSuccess && rank == 1 - r % 2,
          "rank %d: new rank %d", r, rank);
    mine[r] = 1 << r;
    CHECK(ncclAllReduce(&mine[r], &sum[r], 1, ncclInt64, ncclSum, halves[r], NULL) == ncclSuccess,
          "all-reduce %d: %s", r, ncclGetLastError(halves[r]));
  }
  CHECK(ncclGroupEnd() == ncclSuccess, "group end: %s", ncclGetLastError(NULL));
  for (int r = 0; r < kRanks; ++r) {
    CHECK(sum[r] == (r < 2 ? 1 + 2 : 4 + 8), "rank %d: sum %lld", r, (long long)sum[r]);
    ncclCommDestroy(halves[r]);
  }

  /* Bad input: rank 1's color is refused at its call; the group fails at once. */
  start = now();
  CHECK(ncclGroupStart() == ncclSuccess, "group start");
  for (int r = 0; r < kRanks; ++r) {
    ncclResult_t result = ncclCommSplit(comms[r], r == 1 ? -7 : 0, r, &halves[r], NULL);
    CHECK(result == (r == 1 ? ncclInvalidArgument : ncclSuccess), "split %d: %d", r, result);
  }
  ncclResult_t end = ncclGroupEnd();
  CHECK(end == ncclInvalidArgument && strstr(ncclGetLastError(NULL), "color -7") != NULL,
        "group end %d: %s", end, ncclGetLastError(NULL));
  CHECK(now() - start < 5, "the failed group took %.1f s", now() - start);
  for (int r = 0; r < kRanks; ++r) {
    int count = 0;
    if (r == 1) continue;
    CHECK(ncclCommCount(halves[r], &count) != ncclSuccess, "rank %d's split was created", r);
    ncclCommDestroy(halves[r]);
  }
  for (int r = 0; r < kRanks; ++r) ncclCommDestroy(comms[r]);
  if (failures == 0) printf("group splits from one thread: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
