// The launcher environment's secret: BRAID_SECRET must be exactly 32 hex digits (no sign,
// space or prefix that strtol would have let through), and without it every rank of a
// job derives the same secret from the job's identity, different for another job.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "bootstrap/launch_env.h"

namespace braid::bootstrap {
namespace {

// Sets the braidrun variables for the test's lifetime, and clears them after.
class BraidrunEnv {
 public:
  BraidrunEnv(const char* root, const char* secret) {
    setenv("BRAID_RANK", "0", 1);
    setenv("BRAID_NRANKS", "2", 1);
    setenv("BRAID_ROOT", root, 1);
    if (secret != nullptr) setenv("BRAID_SECRET", secret, 1);
  }
  ~BraidrunEnv() {
    for (const char* name : {"BRAID_RANK", "BRAID_NRANKS", "BRAID_ROOT", "BRAID_SECRET"}) {
      unsetenv(name);
    }
  }
};

TEST(BootstrapLaunchEnv, SecretMustBeExactly32HexDigits) {
  {
    BraidrunEnv env("127.0.0.1:1234", "00112233445566778899aAbBcCdDeEfF");
    auto info = launchInfoFromEnv();
    ASSERT_TRUE(info.isOk()) << info.status().message();
    const uint8_t expected[kSecretBytes] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                            0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    EXPECT_EQ(std::memcmp(info->secret, expected, kSecretBytes), 0);
  }
  for (const char* bad : {"-0112233445566778899aabbccddeeff", " 0112233445566778899aabbccddeeff",
                          "+0112233445566778899aabbccddeeff", "0x112233445566778899aabbccddeeff",
                          "00112233445566778899aabbccddeefg", "00112233445566778899aabbccddeef",
                          "00112233445566778899aabbccddeeff0"}) {
    BraidrunEnv env("127.0.0.1:1234", bad);
    auto info = launchInfoFromEnv();
    ASSERT_FALSE(info.isOk()) << bad;
    EXPECT_NE(info.status().message().find("BRAID_SECRET"), std::string::npos);
  }
}

TEST(BootstrapLaunchEnv, DerivedSecretIsSharedByAJobAndDiffersBetweenJobs) {
  uint8_t first[kSecretBytes], again[kSecretBytes], other[kSecretBytes];
  auto read = [](const char* root, uint8_t* out) {
    BraidrunEnv env(root, nullptr);
    auto info = launchInfoFromEnv();
    ASSERT_TRUE(info.isOk()) << info.status().message();
    std::memcpy(out, info->secret, kSecretBytes);
  };
  read("127.0.0.1:1234", first);
  read("127.0.0.1:1234", again);
  read("127.0.0.1:1235", other);
  EXPECT_EQ(std::memcmp(first, again, kSecretBytes), 0);
  EXPECT_NE(std::memcmp(first, other, kSecretBytes), 0);
}

}  // namespace
}  // namespace braid::bootstrap
