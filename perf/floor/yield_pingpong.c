/* The cost of handing a core to another process: two processes pinned to one CPU
 * pass a token through a shared cache line, each calling sched_yield while it
 * waits, so one round trip is two context switches and nothing else. This is
 * the floor under any wait when ranks outnumber cores (4 ranks on 2 cores):
 * each rank that must run before a collective can finish costs one switch.
 * Also prints a lone sched_yield (nothing else runnable: the system call alone).
 *
 * Build and run (not a CMake target):
 *   cc -O2 -o /tmp/yield-pingpong perf/floor/yield_pingpong.c
 *   /tmp/yield-pingpong [round trips] [cpu]    (chrt -f 10 to keep other work off)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double secondsSince(const struct timespec* start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + (now.tv_nsec - start->tv_nsec) * 1e-9;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 100000;
  const int cpu = argc > 2 ? atoi(argv[2]) : 0;
  if (n <= 0 || cpu < 0 || cpu >= CPU_SETSIZE) {
    fprintf(stderr, "yield-pingpong: round trips must be positive and cpu a CPU number\n");
    return 2;
  }
  atomic_long* token = mmap(NULL, 64, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (token == MAP_FAILED) {
    perror("yield-pingpong: mmap");
    return 1;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    perror("yield-pingpong: sched_setaffinity");
    return 1;
  }
  const pid_t child = fork(); /* inherits the affinity: both on `cpu` */
  if (child < 0) {
    perror("yield-pingpong: fork");
    return 1;
  }
  const long mine = child == 0 ? 1 : 0; /* the parent moves even tokens, the child odd */
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long i = mine; i < 2 * n; i += 2) {
    while (atomic_load(token) != i) sched_yield();
    atomic_store(token, i + 1);
  }
  const double elapsed = secondsSince(&start);
  if (child == 0) return 0;
  waitpid(child, NULL, 0);
  printf("yield ping-pong on CPU %d: %.3f us per round trip (two context switches)\n", cpu,
         elapsed / n * 1e6);
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long i = 0; i < n; ++i) sched_yield();
  printf("lone sched_yield: %.3f us\n", secondsSince(&start) / n * 1e6);
  return 0;
}
