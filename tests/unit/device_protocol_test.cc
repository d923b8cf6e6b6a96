// The device executor's protocols, compiled as host code: the LL line format and its flags,
// and the Simple and LL FIFOs between two host threads standing in for two thread blocks —
// many messages of assorted sizes through tiny slots, checked byte for byte in order (a
// torn or reordered slot, or a reused slot read too early, changes the bytes).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "collectives/device/element_ops.h"
#include "collectives/device/ll_line.h"
#include "collectives/device/ll_protocol.h"
#include "collectives/device/primitives.h"
#include "collectives/device/simple_protocol.h"
#include "support/input_pattern.h"

namespace braid::device {
namespace {

TEST(LlLine, PacksAndUnpacksEveryTypesBytes) {
  for (int t = 0; t < braidNumTypes; ++t) {
    const auto type = braidDataType_t(t);
    const auto pattern = testing::InputPattern::forMove(type, 7);  // NaNs and all bit patterns
    withType(type, [&](auto tag) {
      using T = decltype(tag);
      constexpr size_t kPerLine = 8 / sizeof(T);
      std::vector<T> in(kPerLine * 64), out(in.size());
      pattern.fill(0, 0, in.size(), in.data());
      for (size_t line = 0; line < 64; ++line) {
        uint64_t payload, got = 0, w0, w1;
        std::memcpy(&payload, &in[line * kPerLine], 8);
        const uint32_t flag = llFlag(line * 977);
        llPackLine(payload, flag, &w0, &w1);
        ASSERT_TRUE(llUnpackLine(w0, w1, flag, &got));
        EXPECT_FALSE(llUnpackLine(w0, w1, flag + 1, &got));
        EXPECT_FALSE(llUnpackLine(w0, llWord(llData(w1), flag ^ 1), flag, &got));  // half-written
        std::memcpy(&out[line * kPerLine], &got, 8);
      }
      EXPECT_EQ(0, std::memcmp(in.data(), out.data(), in.size() * sizeof(T))) << t;
    });
  }
}

TEST(LlLine, FlagsAreNeverZeroAndChangeAcrossTheWrap) {
  EXPECT_EQ(llFlag(0), 1u);
  EXPECT_EQ(llFlag(0xfffffffdull), 0xfffffffeu);
  EXPECT_EQ(llFlag(0xfffffffeull), 0xffffffffu);
  EXPECT_EQ(llFlag(0xffffffffull), 1u);  // wraps past 0
  for (uint64_t s = 0xffffff00ull; s < 0x100000100ull; ++s) {
    ASSERT_NE(llFlag(s), 0u) << s;
    for (uint64_t slots : {1, 2, 8}) ASSERT_NE(llFlag(s), llFlag(s + slots)) << s;
  }
}

// One sender thread, one receiver thread, `messages` messages of pseudo-random sizes.
template <class Proto>
void streamMessages(uint32_t slotCount, uint32_t slotBytes, uint64_t start, int messages) {
  FifoCounters counters{};
  counters.head = counters.tail = start;
  std::vector<Pack<16>> slots(size_t(slotCount) * slotBytes / 16);
  FifoMemory fifo{&counters, reinterpret_cast<uint8_t*>(slots.data()), slotCount, slotBytes};
  using Prims = Primitives<uint8_t, Proto>;
  auto sizeOf = [](int m) { return size_t((m * 2654435761u) % 200); };
  auto byteOf = [](int m, size_t i) { return uint8_t(m * 31 + i * 7 + 1); };
  const Group group;
  bool senderOk = true, receiverOk = true;
  std::thread sender([&] {
    typename Proto::SendEnd out(fifo, start);
    SpinBudget budget{uint64_t(1) << 40, 0};
    for (int m = 0; m < messages; ++m) {
      std::vector<uint8_t> data(sizeOf(m));
      for (size_t i = 0; i < data.size(); ++i) data[i] = byteOf(m, i);
      for (size_t at = 0; at < data.size(); at += out.payloadBytes()) {
        while (!out.ready()) budget.wait();
        const size_t n = std::min(out.payloadBytes(), data.size() - at);
        senderOk &= Prims::send(group, &out, data.data() + at, n, &budget);
      }
    }
  });
  std::thread receiver([&] {
    typename Proto::RecvEnd in(fifo, start);
    SpinBudget budget{uint64_t(1) << 40, 0};
    for (int m = 0; m < messages && receiverOk; ++m) {
      std::vector<uint8_t> data(sizeOf(m));
      for (size_t at = 0; at < data.size(); at += in.payloadBytes()) {
        while (!in.ready()) budget.wait();
        const size_t n = std::min(in.payloadBytes(), data.size() - at);
        receiverOk &= Prims::recv(group, &in, data.data() + at, n, &budget);
      }
      for (size_t i = 0; i < data.size(); ++i) {
        if (data[i] != byteOf(m, i)) {
          ADD_FAILURE() << "message " << m << " byte " << i;
          receiverOk = false;
          break;
        }
      }
    }
  });
  sender.join();
  receiver.join();
  EXPECT_TRUE(senderOk && receiverOk);
}

TEST(SimpleFifo, DeliversManyMessagesThroughTinySlotsInOrder) {
  streamMessages<SimpleProtocol>(2, 16, 0, 3000);
  streamMessages<SimpleProtocol>(4, 64, 0, 3000);
}

TEST(LlFifo, DeliversManyMessagesThroughTinySlotsInOrder) {
  streamMessages<LlProtocol>(2, 16, 0, 3000);  // one line (8 payload bytes) per slot
  streamMessages<LlProtocol>(3, 64, 0, 3000);
}

TEST(LlFifo, KeepsWorkingAcrossTheFlagWrap) {
  // Counters start just below 2^32 slots, so flags wrap from 0xffffffff to 1 mid-stream.
  // Slot memory starts zeroed, as after creation: no flag ever matches zero.
  streamMessages<LlProtocol>(2, 32, 0xffffffffull - 300, 1500);
}

}  // namespace
}  // namespace braid::device
