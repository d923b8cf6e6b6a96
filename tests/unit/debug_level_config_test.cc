// BRAID_DEBUG: WARN, INFO and TRACE (any case) are accepted; any other value fails
// communicator creation with a sentence naming the variable, as every other setting does,
// instead of leaving the log silently off.
#include <gtest/gtest.h>

#include <string>

#include "core/config.h"
#include "support/spawn.h"

namespace braid {
namespace {

using testing::ScopedEnv;

TEST(DebugLevelConfig, AcceptsTheLevelsInAnyCase) {
  for (const char* value : {"", "WARN", "info", "Trace"}) {
    ScopedEnv env("BRAID_DEBUG", value);
    Result<Config> config = Config::fromEnv();
    EXPECT_TRUE(config.isOk()) << value << ": " << config.status().message();
  }
}

TEST(DebugLevelConfig, RejectsOtherValuesNamingTheVariable) {
  for (const char* value : {"verbose", "1", "WARNING", "info "}) {
    ScopedEnv env("BRAID_DEBUG", value);
    Result<Config> config = Config::fromEnv();
    ASSERT_FALSE(config.isOk()) << value;
    const std::string& message = config.status().message();
    EXPECT_NE(message.find("BRAID_DEBUG='" + std::string(value) + "'"), std::string::npos)
        << message;
    EXPECT_NE(message.find("WARN, INFO, TRACE"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace braid
