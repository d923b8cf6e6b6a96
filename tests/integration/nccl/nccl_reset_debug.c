/* ncclResetDebugInit through braid's libnccl.so.2: NCCL_DEBUG and NCCL_DEBUG_FILE changed
 * after the library started logging take effect only after the reset, and a second reset
 * follows the next change. Reached by dlsym, since NCCL 2.30+'s nccl.h may define the call
 * away. Each step creates a one-rank communicator, whose creation braid logs at INFO, and
 * counts the INFO lines in the file. Usage: nccl_reset_debug LOG_FILE. Exit 0 on success. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* INFO lines braid wrote to `path` so far. */
static int infoLines(const char* path) {
  FILE* f = fopen(path, "r");
  if (f == NULL) return 0;
  char line[4096];
  int n = 0;
  while (fgets(line, sizeof(line), f) != NULL) n += strstr(line, "[braid INFO]") != NULL;
  fclose(f);
  return n;
}

static void makeComm(void) {
  ncclComm_t comm;
  CHECK(ncclCommInitAll(&comm, 1, NULL) == ncclSuccess, "init: %s", ncclGetLastError(NULL));
  ncclCommDestroy(comm);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const char* path = argv[1];
  remove(path);
  void (*reset)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "ncclResetDebugInit");
  void (*resetInternal)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "ncclResetDebugInitInternal");
  CHECK(reset != NULL && resetInternal != NULL, "the reset functions are not exported");
  if (failures) return 1;

  makeComm(); /* logging settings read now: no NCCL_DEBUG, nothing logged */
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_FILE", path, 1);
  makeComm();
  CHECK(infoLines(path) == 0, "logged before the reset: %d lines", infoLines(path));

  reset();
  makeComm();
  const int after = infoLines(path);
  CHECK(after > 0, "NCCL_DEBUG=INFO ignored after ncclResetDebugInit");

  setenv("NCCL_DEBUG", "WARN", 1); /* replaces the BRAID_DEBUG the first reset mapped */
  resetInternal();
  makeComm();
  CHECK(infoLines(path) == after, "INFO lines after NCCL_DEBUG=WARN and a reset: %d, was %d",
        infoLines(path), after);

  setenv("BRAID_DEBUG", "INFO", 1); /* the user's BRAID_DEBUG wins over NCCL_DEBUG */
  setenv("NCCL_DEBUG", "WARN", 1);
  resetInternal();
  makeComm();
  CHECK(infoLines(path) > after, "BRAID_DEBUG=INFO lost to NCCL_DEBUG=WARN");
  if (failures == 0) printf("ncclResetDebugInit: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
