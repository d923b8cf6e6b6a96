#include "support/loopback_pair.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstring>

namespace braid::testing {

using transport::socket::Fd;

LoopbackPair connectLoopback(bool nonBlocking) {
  LoopbackPair pair;
  Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_TRUE(listener.valid());
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  EXPECT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), length), 0);
  EXPECT_EQ(::listen(listener.get(), 1), 0);
  EXPECT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length), 0);
  pair.ends[0] = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_EQ(::connect(pair.ends[0].get(), reinterpret_cast<sockaddr*>(&address), length), 0);
  pair.ends[1] = Fd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  EXPECT_TRUE(pair.ends[1].valid());
  if (nonBlocking) {
    for (const Fd& end : pair.ends) {
      EXPECT_EQ(::fcntl(end.get(), F_SETFL, ::fcntl(end.get(), F_GETFL) | O_NONBLOCK), 0);
    }
  }
  return pair;
}

std::string congestionOf(int fd) {
  char name[32] = {};
  socklen_t length = sizeof(name);
  EXPECT_EQ(::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &length), 0);
  return std::string(name, strnlen(name, sizeof(name)));
}

}  // namespace braid::testing
