// BRAID_SOCKET_CONGESTION: "auto" (the default) gives streams between ranks of
// one host reno and leaves the others at the system's default, "system" leaves
// every stream alone, and a name sets that algorithm on every stream. Checked
// on the parsed Config (good and bad values, errors naming the variable), on
// the choice per stream, and on real loopback sockets (what the kernel then
// reports with getsockopt(TCP_CONGESTION)).
#include <gtest/gtest.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstring>
#include <string>

#include "core/config.h"
#include "core/net/socket_util.h"
#include "support/loopback_pair.h"
#include "support/spawn.h"
#include "transports/socket/congestion.h"

namespace braid::transport::socket {
namespace {

using testing::congestionOf;
using testing::connectLoopback;
using testing::LoopbackPair;
using testing::ScopedEnv;

TEST(SocketCongestionConfig, DefaultsToAuto) {
  ScopedEnv env("BRAID_SOCKET_CONGESTION", "");
  Result<Config> config = Config::fromEnv();
  ASSERT_TRUE(config.isOk()) << config.status().message();
  EXPECT_EQ(config->socketCongestion, "auto");
}

TEST(SocketCongestionConfig, AcceptsAutoSystemAndNames) {
  for (const char* value : {"auto", "system", "reno", "cubic", "bbr", "dctcp", "my_cc-2"}) {
    ScopedEnv env("BRAID_SOCKET_CONGESTION", value);
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << value << ": " << config.status().message();
    EXPECT_EQ(config->socketCongestion, value);
  }
}

TEST(SocketCongestionConfig, RejectsWhatCannotBeANameNamingTheVariable) {
  for (const char* value : {"re no", "reno;", "cubic/x", "a-name-of-16-chr", "é"}) {
    ScopedEnv env("BRAID_SOCKET_CONGESTION", value);
    Result<Config> config = Config::fromEnv();
    ASSERT_FALSE(config.isOk()) << value;
    EXPECT_NE(config.status().message().find("BRAID_SOCKET_CONGESTION"), std::string::npos)
        << config.status().message();
  }
}

TEST(SocketCongestionChoice, AutoGivesRenoOnlyWithinAHost) {
  EXPECT_EQ(congestionFor("auto", true), "reno");
  EXPECT_EQ(congestionFor("auto", false), "");
  EXPECT_EQ(congestionFor("", true), "reno");
  EXPECT_EQ(congestionFor("system", true), "");
  EXPECT_EQ(congestionFor("system", false), "");
  EXPECT_EQ(congestionFor("cubic", true), "cubic");
  EXPECT_EQ(congestionFor("cubic", false), "cubic");
}

TEST(SocketCongestion, LoopbackStreamsAreSameHost) {
  LoopbackPair pair = connectLoopback();
  EXPECT_TRUE(sameHostStream(pair.ends[0].get()));
  EXPECT_TRUE(sameHostStream(pair.ends[1].get()));
  Fd unconnected(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_FALSE(sameHostStream(unconnected.get()));
}

TEST(SocketCongestion, AutoSetsRenoOnALoopbackStream) {
  LoopbackPair pair = connectLoopback();
  for (const Fd& end : pair.ends) {
    ASSERT_TRUE(applyCongestionControl(end.get(), "auto").isOk());
    EXPECT_EQ(congestionOf(end.get()), "reno");
  }
}

TEST(SocketCongestion, SystemLeavesTheDefault) {
  LoopbackPair pair = connectLoopback();
  const std::string before = congestionOf(pair.ends[0].get());
  ASSERT_TRUE(applyCongestionControl(pair.ends[0].get(), "system").isOk());
  EXPECT_EQ(congestionOf(pair.ends[0].get()), before);
}

TEST(SocketCongestion, ANameTheKernelRefusesIsAnErrorNamingTheVariable) {
  LoopbackPair pair = connectLoopback();
  const std::string before = congestionOf(pair.ends[0].get());
  Status status = applyCongestionControl(pair.ends[0].get(), "nosuchcc");
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("BRAID_SOCKET_CONGESTION='nosuchcc'"), std::string::npos)
      << status.message();
  EXPECT_EQ(congestionOf(pair.ends[0].get()), before);
}

}  // namespace
}  // namespace braid::transport::socket
