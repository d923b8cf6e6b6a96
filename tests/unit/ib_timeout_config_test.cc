// BRAID_IB_TIMEOUT: the ib queue pairs' local ACK timeout exponent (4.096 us * 2^t before a
// packet is sent again; transports/ibverbs/ib_connector.cc). 1..31, default 18; anything
// else fails communicator creation with a sentence naming the variable and the range.
#include <gtest/gtest.h>

#include <string>

#include "core/config.h"
#include "support/spawn.h"

namespace braid {
namespace {

using testing::ScopedEnv;

TEST(IbTimeoutConfig, DefaultsToEighteenAndAcceptsOneToThirtyOne) {
  {
    ScopedEnv env("BRAID_IB_TIMEOUT", "");
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << config.status().message();
    EXPECT_EQ(config->ibTimeout, 18);
    EXPECT_EQ(Config::kDefaultIbTimeout, 18);
  }
  for (int value : {1, 14, 31}) {
    ScopedEnv env("BRAID_IB_TIMEOUT", std::to_string(value).c_str());
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << value << ": " << config.status().message();
    EXPECT_EQ(config->ibTimeout, value);
  }
}

TEST(IbTimeoutConfig, RejectsOtherValuesNamingTheVariable) {
  for (const char* value : {"0", "32", "-1", "long", "18 "}) {
    ScopedEnv env("BRAID_IB_TIMEOUT", value);
    Result<Config> config = Config::fromEnv();
    ASSERT_FALSE(config.isOk()) << value;
    const std::string& message = config.status().message();
    EXPECT_NE(message.find("BRAID_IB_TIMEOUT"), std::string::npos) << message;
    EXPECT_NE(message.find("[1, 31]"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace braid
