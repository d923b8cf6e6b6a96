/* The latency floor of any shared-memory collective on this machine: two processes
 * bounce a counter through two cache lines (one each way), so each round trip is two
 * cache-line transfers between cores and nothing else. A 2-rank all-reduce needs at least
 * half a round trip (each rank's data reaches the other once).
 *
 * Usage: braid-latency-floor [round trips]      prints the mean round trip in microseconds */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  _Alignas(64) atomic_long ping; /* written by the parent */
  _Alignas(64) atomic_long pong; /* written by the child */
} Lines;

static void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 2000000;
  if (n <= 0) {
    fprintf(stderr, "braid-latency-floor: round trips must be a positive number\n");
    return 2;
  }
  Lines* lines =
      mmap(NULL, sizeof(Lines), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (lines == MAP_FAILED) {
    perror("braid-latency-floor: mmap");
    return 1;
  }
  pid_t child = fork();
  if (child < 0) {
    perror("braid-latency-floor: fork");
    return 1;
  }
  if (child == 0) {
    for (long i = 1; i <= n; i++) {
      while (atomic_load(&lines->ping) != i) relax();
      atomic_store(&lines->pong, i);
    }
    _exit(0);
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 1; i <= n; i++) {
    atomic_store(&lines->ping, i);
    while (atomic_load(&lines->pong) != i) relax();
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  waitpid(child, NULL, 0);
  double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
  printf("cache-line round trip: %.3f us (mean of %ld)\n", ns / n / 1e3, n);
  return 0;
}
