// Tests of CopyPace (transports/shm/copy_pace.h), the shm link's far-placement verdict:
// fed fragment timings against a fixed reference, it turns far after kFarMessages slow
// messages in a row and near after one fast one, judges a message by its fastest 128 KiB of
// timed fragments, ignores what it cannot judge, and asks for a FIFO probe every kProbeEvery-th
// far send. The test hook BRAID_SHM_TEST_PACE fixes the verdict.
#include <gtest/gtest.h>

#include "support/spawn.h"
#include "transports/shm/copy_pace.h"

namespace braid::transport::shm {
namespace {

using braid::testing::ScopedEnv;

constexpr double kReference = 1000;  // ticks per 64 KiB
constexpr size_t k64K = size_t{64} << 10;

// A message of `fragments` 64 KiB fragments, each copied `ratio` times slower than the
// reference.
void message(CopyPace& pace, double ratio, int fragments = 1) {
  for (int i = 0; i < fragments; ++i) {
    pace.recordFragment(k64K, static_cast<uint64_t>(ratio * kReference));
  }
  pace.endMessage();
}

TEST(CopyPace, FarAfterTwoSlowMessagesNearAfterOneFast) {
  CopyPace pace(kReference);
  EXPECT_FALSE(pace.far());
  message(pace, 20);
  EXPECT_FALSE(pace.far()) << "one slow message is not enough";
  message(pace, 20);
  EXPECT_TRUE(pace.far());
  message(pace, 30, 4);
  EXPECT_TRUE(pace.far());
  message(pace, 2);
  EXPECT_FALSE(pace.far()) << "one fast message ends it";
  message(pace, 20);
  message(pace, 3);
  message(pace, 20);
  EXPECT_FALSE(pace.far()) << "slow messages must come in a row";
}

TEST(CopyPace, TheThresholdIsTenTimesTheReference) {
  CopyPace pace(kReference);
  message(pace, 9.9);
  message(pace, 9.9);
  EXPECT_FALSE(pace.far());
  message(pace, 10.1);
  message(pace, 10.1);
  EXPECT_TRUE(pace.far());
}

TEST(CopyPace, AMessageCountsAsItsFastestUnit) {
  CopyPace pace(kReference);
  const size_t unit = CopyPace::kUnitBytes;
  for (int i = 0; i < 2; ++i) {
    pace.recordFragment(unit, 40 * kReference);  // preempted
    pace.recordFragment(unit, 3 * kReference);
    pace.endMessage();
  }
  EXPECT_FALSE(pace.far());
  // Paces are per 64 KiB: 16 KiB in 5x the reference's ticks is 20x.
  for (int i = 0; i < 2; ++i) {
    pace.recordFragment(CopyPace::kTimedBytes, static_cast<uint64_t>(5 * kReference));
    pace.endMessage();
  }
  EXPECT_TRUE(pace.far());
}

// Small fragments are judged together: one fast 32 KiB fragment among slow ones does not make
// the message fast (the fastest fragment alone would).
TEST(CopyPace, SmallFragmentsAreJudgedPerUnit) {
  CopyPace pace(kReference);
  const size_t k32K = size_t{32} << 10;
  for (int i = 0; i < 2; ++i) {
    pace.recordFragment(k32K, static_cast<uint64_t>(0.5 * kReference));      // 1x
    for (int f = 0; f < 3; ++f) pace.recordFragment(k32K, 10 * kReference);  // 20x each
    pace.endMessage();
  }
  EXPECT_TRUE(pace.far()) << "a unit of 1x + 3 x 20x is 15x, above the threshold";
  // A message's last, partial unit counts: two fast 32 KiB fragments end it.
  pace.recordFragment(k32K, static_cast<uint64_t>(0.5 * kReference));
  pace.recordFragment(k32K, static_cast<uint64_t>(0.5 * kReference));
  pace.endMessage();
  EXPECT_FALSE(pace.far());
}

TEST(CopyPace, UntimedMessagesLeaveTheVerdictAlone) {
  CopyPace pace(kReference);
  message(pace, 20);
  message(pace, 20);
  ASSERT_TRUE(pace.far());
  pace.recordFragment(CopyPace::kTimedBytes - 64, 1);  // too small to judge
  pace.recordFragment(k64K, 0);                        // no counter reading
  pace.endMessage();
  pace.endMessage();
  EXPECT_TRUE(pace.far());
  CopyPace noCounter(0);
  message(noCounter, 1000);
  message(noCounter, 1000);
  EXPECT_FALSE(noCounter.far()) << "without a reference nothing is judged";
}

TEST(CopyPace, EverySixtyFourthFarSendProbesTheFifo) {
  CopyPace pace(kReference);
  int probes = 0, firstProbe = 0;
  for (int i = 1; i <= 3 * CopyPace::kProbeEvery; ++i) {
    if (pace.probeDue()) {
      ++probes;
      if (firstProbe == 0) firstProbe = i;
    }
  }
  EXPECT_EQ(probes, 3);
  EXPECT_EQ(firstProbe, CopyPace::kProbeEvery);
}

TEST(CopyPace, MeasuresAReferenceWhereThereIsACounter) {
  CopyPace pace;
  if (CopyPace::now() == 0) {
    EXPECT_EQ(pace.referenceTicks(), 0);
  } else {
    EXPECT_GT(pace.referenceTicks(), 0);
  }
}

TEST(CopyPace, RecalibrationOnlyLowersTheReference) {
  CopyPace pace;
  const double first = pace.referenceTicks();
  if (first == 0) GTEST_SKIP() << "no time stamp counter";
  for (int i = 0; i < 3 * CopyPace::kRecalibrateEvery; ++i) {
    pace.recordFragment(k64K, static_cast<uint64_t>(first));
    pace.endMessage();
  }
  EXPECT_GT(pace.referenceTicks(), 0);
  EXPECT_LE(pace.referenceTicks(), first);
  CopyPace fixed(kReference);
  for (int i = 0; i < CopyPace::kRecalibrateEvery; ++i) message(fixed, 1);
  EXPECT_EQ(fixed.referenceTicks(), kReference) << "a test's reference is never retimed";
}

TEST(CopyPace, TestHookFixesTheVerdict) {
  {
    ScopedEnv env("BRAID_SHM_TEST_PACE", "far");
    CopyPace pace;
    EXPECT_TRUE(pace.far());
    message(pace, 1);
    EXPECT_TRUE(pace.far());
    for (int i = 0; i < 2 * CopyPace::kProbeEvery; ++i) EXPECT_FALSE(pace.probeDue());
  }
  {
    ScopedEnv env("BRAID_SHM_TEST_PACE", "near");
    CopyPace pace;
    message(pace, 100);
    message(pace, 100);
    EXPECT_FALSE(pace.far());
  }
}

}  // namespace
}  // namespace braid::transport::shm
