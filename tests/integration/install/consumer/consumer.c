/* An outside C99 program: 3 ranks in one process (braidCommInitAll) driven
 * from one thread inside a group, all-reducing; exits 0 iff the sums are right. */
#include <braid.h>
#include <stdio.h>

#define NRANKS 3
#define COUNT 1000

int main(void) {
  braidComm_t comms[NRANKS];
  static float send[NRANKS][COUNT], recv[NRANKS][COUNT];
  int version = 0, r, i;
  if (braidGetVersion(&version) != braidSuccess || version != BRAID_VERSION_CODE) {
    fprintf(stderr, "version mismatch: %d vs %d\n", version, BRAID_VERSION_CODE);
    return 1;
  }
  if (braidCommInitAll(comms, NRANKS, NULL) != braidSuccess) {
    fprintf(stderr, "init failed: %s\n", braidGetLastError(NULL));
    return 1;
  }
  for (r = 0; r < NRANKS; ++r)
    for (i = 0; i < COUNT; ++i) send[r][i] = (float)(r + 1) * (float)i;
  braidGroupStart();
  for (r = 0; r < NRANKS; ++r)
    braidAllReduce(send[r], recv[r], COUNT, braidFloat32, braidSum, comms[r], NULL);
  if (braidGroupEnd() != braidSuccess) {
    fprintf(stderr, "allreduce failed: %s\n", braidGetLastError(comms[0]));
    return 1;
  }
  for (r = 0; r < NRANKS; ++r)
    for (i = 0; i < COUNT; ++i)
      if (recv[r][i] != 6.0f * (float)i) {
        fprintf(stderr, "rank %d element %d: %g, expected %g\n", r, i, recv[r][i], 6.0f * i);
        return 1;
      }
  for (r = 0; r < NRANKS; ++r) braidCommDestroy(comms[r]);
  printf("consumer: braid %d, %d ranks, allreduce ok\n", version, NRANKS);
  return 0;
}
