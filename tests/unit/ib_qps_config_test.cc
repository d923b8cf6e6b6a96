// BRAID_IB_QPS_PER_PEER: the reliable-connected queue pairs an ib link opens to each
// peer, a large message's zero-copy part striped over them (transports/ibverbs/
// ib_connector.cc). 1..8, default 1; anything else fails communicator creation with a
// sentence naming the variable and the accepted range.
#include <gtest/gtest.h>

#include <string>

#include "core/config.h"
#include "support/spawn.h"

namespace braid {
namespace {

using testing::ScopedEnv;

TEST(IbQpsConfig, DefaultsToOneAndAcceptsOneToEight) {
  {
    ScopedEnv env("BRAID_IB_QPS_PER_PEER", "");
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << config.status().message();
    EXPECT_EQ(config->ibQpsPerPeer, 1);
  }
  for (int value : {1, 2, 4, 8}) {
    ScopedEnv env("BRAID_IB_QPS_PER_PEER", std::to_string(value).c_str());
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << value << ": " << config.status().message();
    EXPECT_EQ(config->ibQpsPerPeer, value);
  }
}

TEST(IbQpsConfig, RejectsOtherValuesNamingTheVariable) {
  for (const char* value : {"0", "9", "-1", "4x", "two", "2 ", "99999999999999999999"}) {
    ScopedEnv env("BRAID_IB_QPS_PER_PEER", value);
    Result<Config> config = Config::fromEnv();
    ASSERT_FALSE(config.isOk()) << value;
    const std::string& message = config.status().message();
    EXPECT_NE(message.find("BRAID_IB_QPS_PER_PEER"), std::string::npos) << message;
    EXPECT_NE(message.find("[1, 8]"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace braid
