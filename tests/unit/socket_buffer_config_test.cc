// BRAID_SOCKET_BUFFER_BYTES: 0 (the default) leaves both socket buffers to
// the kernel's autotuning, a size of at least 4096 fixes SO_SNDBUF and
// SO_RCVBUF, anything in between is rejected with a sentence naming the
// variable. Checked on the parsed Config and on real sockets: applying the
// default options must leave a fresh socket's buffer sizes as the kernel
// chose them, a fixed size must change them.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <string>

#include "core/config.h"
#include "core/net/socket_util.h"
#include "support/spawn.h"

namespace braid::transport {
namespace {

using testing::ScopedEnv;

TEST(SocketBufferConfig, DefaultsToKernelAutotuning) {
  ScopedEnv env("BRAID_SOCKET_BUFFER_BYTES", "");
  Result<Config> config = Config::fromEnv();
  ASSERT_TRUE(config.isOk()) << config.status().message();
  EXPECT_EQ(config->socketBufferBytes, 0u);
}

TEST(SocketBufferConfig, AcceptsZeroAndSizesFrom4096) {
  {
    ScopedEnv env("BRAID_SOCKET_BUFFER_BYTES", "0");
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << config.status().message();
    EXPECT_EQ(config->socketBufferBytes, 0u);
  }
  {
    ScopedEnv env("BRAID_SOCKET_BUFFER_BYTES", "4096");
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << config.status().message();
    EXPECT_EQ(config->socketBufferBytes, 4096u);
  }
}

TEST(SocketBufferConfig, RejectsSizesBelow4096NamingTheVariable) {
  for (const char* value : {"1", "4095", "-3", "lots"}) {
    ScopedEnv env("BRAID_SOCKET_BUFFER_BYTES", value);
    Result<Config> config = Config::fromEnv();
    ASSERT_FALSE(config.isOk()) << value;
    EXPECT_NE(config.status().message().find("BRAID_SOCKET_BUFFER_BYTES"), std::string::npos)
        << config.status().message();
  }
}

int bufferBytes(int fd, int option) {
  int value = 0;
  socklen_t length = sizeof(value);
  EXPECT_EQ(::getsockopt(fd, SOL_SOCKET, option, &value, &length), 0);
  return value;
}

TEST(SocketBufferConfig, ZeroLeavesTheKernelsSizesAndASizeFixesThem) {
  for (int option : {SO_SNDBUF, SO_RCVBUF}) {
    socket::Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    ASSERT_TRUE(fd.valid());
    const int kernelChoice = bufferBytes(fd.get(), option);
    ASSERT_TRUE(socket::applySocketOptions(fd.get(), socket::SocketOptions{}).isOk());
    EXPECT_EQ(bufferBytes(fd.get(), option), kernelChoice) << "option " << option;

    // 64 KiB is within every default [rw]mem_max, and Linux reports twice
    // the size asked for (its bookkeeping overhead), never the kernel's choice.
    socket::SocketOptions fixed;
    fixed.sendBufferBytes = fixed.recvBufferBytes = 48 << 10;
    ASSERT_TRUE(socket::applySocketOptions(fd.get(), fixed).isOk());
    EXPECT_EQ(bufferBytes(fd.get(), option), 2 * (48 << 10)) << "option " << option;
  }
}

}  // namespace
}  // namespace braid::transport
