// BRAID_IB_CREDITS: how many messages an ib receiver grants clear-to-sends for ahead
// (transports/ibverbs/ib_connector.cc). 0..8, default 2; anything else fails
// communicator creation with a sentence naming the variable and the accepted range.
// BRAID_IB_CREDIT_BYTES: the bytes each credit covers, 4 KiB..8 MiB, unset: automatic (0).
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "core/config.h"
#include "support/spawn.h"

namespace braid {
namespace {

using testing::ScopedEnv;

TEST(IbCreditsConfig, DefaultsToTwoAndAcceptsZeroToEight) {
  {
    ScopedEnv env("BRAID_IB_CREDITS", "");
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << config.status().message();
    EXPECT_EQ(config->ibCredits, 2);
  }
  for (int value : {0, 1, 8}) {
    ScopedEnv env("BRAID_IB_CREDITS", std::to_string(value).c_str());
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << value << ": " << config.status().message();
    EXPECT_EQ(config->ibCredits, value);
  }
}

TEST(IbCreditsConfig, RejectsOtherValuesNamingTheVariable) {
  for (const char* value : {"9", "-1", "two", "2 "}) {
    ScopedEnv env("BRAID_IB_CREDITS", value);
    Result<Config> config = Config::fromEnv();
    ASSERT_FALSE(config.isOk()) << value;
    const std::string& message = config.status().message();
    EXPECT_NE(message.find("BRAID_IB_CREDITS"), std::string::npos) << message;
    EXPECT_NE(message.find("[0, 8]"), std::string::npos) << message;
  }
}

TEST(IbCreditsConfig, CreditBytesAutomaticByDefaultAndFrom4KiBTo8MiB) {
  {
    ScopedEnv env("BRAID_IB_CREDIT_BYTES", "");
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << config.status().message();
    EXPECT_EQ(config->ibCreditBytes, 0u);
  }
  const std::pair<const char*, size_t> good[] = {
      {"4096", 4096}, {"256K", 256 << 10}, {"1M", 1 << 20}, {"8M", 8 << 20}};
  for (const auto& [text, bytes] : good) {
    ScopedEnv env("BRAID_IB_CREDIT_BYTES", text);
    Result<Config> config = Config::fromEnv();
    ASSERT_TRUE(config.isOk()) << text << ": " << config.status().message();
    EXPECT_EQ(config->ibCreditBytes, bytes) << text;
  }
  for (const char* value : {"4095", "0", "8388609", "16M", "big", "-1"}) {
    ScopedEnv env("BRAID_IB_CREDIT_BYTES", value);
    Result<Config> config = Config::fromEnv();
    ASSERT_FALSE(config.isOk()) << value;
    EXPECT_NE(config.status().message().find("BRAID_IB_CREDIT_BYTES"), std::string::npos)
        << config.status().message();
  }
}

}  // namespace
}  // namespace braid
