/* The floor of any one-hop transfer over this machine's loopback TCP: a parent process
 * writes SIZE bytes to a child in pieces of WRITE bytes (one non-blocking sendmsg per
 * piece, retried until the piece is in), the child reads them as they come, and nothing
 * else runs. Each iteration starts when the child asks for it with one byte, so its time
 * is the one-way transfer plus one small hop back. A 2-rank broadcast over TCP is this
 * transfer plus the library's own work; the kernel's copies in and out of the socket
 * buffers are the same for every library.
 *
 * Usage: braid-tcp-floor [SIZE [WRITE [ITERATIONS]]]
 *        defaults 2097152, SIZE (one write), 200; prints the median and quartiles in
 *        microseconds and the median's GB/s (1e9 B/s). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double nowUs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int compareDoubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void fail(const char* what) {
  perror(what);
  exit(1);
}

/* Sends or receives exactly `bytes`, spinning on a non-blocking socket as a library's
 * progress loop does. */
static void moveAll(int fd, char* data, size_t bytes, int sending) {
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = sending ? send(fd, data + done, bytes - done, MSG_DONTWAIT | MSG_NOSIGNAL)
                        : recv(fd, data + done, bytes - done, MSG_DONTWAIT);
    if (n > 0) {
      done += (size_t)n;
    } else if (n == 0) {
      fprintf(stderr, "braid-tcp-floor: peer closed the connection\n");
      exit(1);
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      fail(sending ? "braid-tcp-floor: send" : "braid-tcp-floor: recv");
    }
  }
}

int main(int argc, char** argv) {
  const long size = argc > 1 ? atol(argv[1]) : 2097152;
  const long piece = argc > 2 ? atol(argv[2]) : size;
  const long iterations = argc > 3 ? atol(argv[3]) : 200;
  if (size <= 0 || piece <= 0 || piece > size || iterations <= 0) {
    fprintf(stderr,
            "braid-tcp-floor: SIZE, WRITE (<= SIZE) and ITERATIONS must be positive numbers\n");
    return 2;
  }
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address;
  memset(&address, 0, sizeof(address));
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (listener < 0 || bind(listener, (struct sockaddr*)&address, sizeof(address)) != 0 ||
      listen(listener, 1) != 0 || getsockname(listener, (struct sockaddr*)&address, &length) != 0) {
    fail("braid-tcp-floor: listen on 127.0.0.1");
  }
  char* buffer = malloc((size_t)size);
  if (buffer == NULL) fail("braid-tcp-floor: malloc");
  memset(buffer, 1, (size_t)size);
  const pid_t child = fork();
  if (child < 0) fail("braid-tcp-floor: fork");
  int fd = -1;
  if (child == 0) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr*)&address, sizeof(address)) != 0) {
      fail("braid-tcp-floor: connect");
    }
  } else {
    fd = accept(listener, NULL, NULL);
    if (fd < 0) fail("braid-tcp-floor: accept");
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  double* times = child == 0 ? malloc(sizeof(double) * (size_t)iterations) : NULL;
  char go = 1;
  for (long i = 0; i < iterations; i++) {
    if (child == 0) {  // receiver: asks for the next transfer, times it
      moveAll(fd, &go, 1, 1);
      const double start = nowUs();
      moveAll(fd, buffer, (size_t)size, 0);
      times[i] = nowUs() - start;
    } else {  // sender
      moveAll(fd, &go, 1, 0);
      for (long at = 0; at < size; at += piece) {
        moveAll(fd, buffer + at, (size_t)(at + piece <= size ? piece : size - at), 1);
      }
    }
  }
  if (child != 0) {
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  qsort(times, (size_t)iterations, sizeof(double), compareDoubles);
  const double median = times[iterations / 2];
  printf(
      "loopback TCP, %ld B in writes of %ld B: median %.1f us (quartiles %.1f-%.1f), %.2f GB/s\n",
      size, piece, median, times[iterations / 4], times[3 * iterations / 4], size / median / 1e3);
  return 0;
}
