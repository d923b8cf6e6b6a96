// The device executor's data primitives, over either protocol (Simple or LL).
//
// Each primitive moves one slice — at most one FIFO slot's payload — and is the same
// element loop with different operands present:
//   value = incoming (from `in`) or src;  with both: value = src (op) incoming
//   then value goes to dst (local memory) and/or out (the next peer's FIFO).
// Fusing the receive, the reduction and the forward in one pass (recvReduceSend and
// friends) reads and writes each byte once, which is what makes ring algorithms run at
// memory bandwidth. The caller has checked (leader + Group::agree) that `in` has a full slot
// and `out` a free one. The loop runs pack by pack (16 bytes Simple, 8 bytes LL), strided
// over the group's threads. Returns false when an LL line never arrived (stalled peer).
#pragma once

#include <cstddef>
#include <cstdint>

#include "braid.h"
#include "collectives/device/element_ops.h"
#include "collectives/device/fifo.h"
#include "collectives/device/pack.h"
#include "collectives/device/portability.h"

namespace braid::device {

template <class T, class Proto>
struct Primitives {
  using RecvEnd = typename Proto::RecvEnd;
  using SendEnd = typename Proto::SendEnd;
  static constexpr size_t kPack = Proto::kPackBytes;

  /// The general slice; the named primitives below are its useful cases.
  template <class G>
  BRAID_HD static bool slice(const G& group, RecvEnd* in, SendEnd* out, const uint8_t* src,
                             uint8_t* dst, size_t bytes, braidRedOp_t op, SpinBudget* budget) {
    const size_t packs = (bytes + kPack - 1) / kPack;
    withOp(op, [&](auto opTag) {
      using Op = decltype(opTag);
      for (size_t i = group.rank(); i < packs; i += group.size()) {
        const size_t at = i * kPack;
        const size_t valid = bytes - at < kPack ? bytes - at : kPack;
        Pack<kPack> value;
        if (in != nullptr) {
          value = in->load(i, budget);
          if (src != nullptr) value = reducePack<T, Op>(loadPack<kPack>(src + at, valid), value);
        } else {
          value = loadPack<kPack>(src + at, valid);
        }
        if (dst != nullptr) storePack(dst + at, value, valid);
        if (out != nullptr) out->store(i, value);
      }
    });
    const bool stalled = group.any(budget->exhausted());
    if (in != nullptr) in->release(group);
    if (out != nullptr) out->post(group);
    return !stalled;
  }

  template <class G>
  BRAID_HD static bool send(const G& g, SendEnd* out, const uint8_t* src, size_t n, SpinBudget* b) {
    return slice(g, nullptr, out, src, nullptr, n, braidSum, b);
  }
  template <class G>
  BRAID_HD static bool recv(const G& g, RecvEnd* in, uint8_t* dst, size_t n, SpinBudget* b) {
    return slice(g, in, nullptr, nullptr, dst, n, braidSum, b);
  }
  /// dst = src (op) incoming: the schedule's kRecvReduce.
  template <class G>
  BRAID_HD static bool recvReduceCopy(const G& g, RecvEnd* in, const uint8_t* src, uint8_t* dst,
                                      size_t n, braidRedOp_t op, SpinBudget* b) {
    return slice(g, in, nullptr, src, dst, n, op, b);
  }
  /// out = src (op) incoming, nothing stored locally.
  template <class G>
  BRAID_HD static bool recvReduceSend(const G& g, RecvEnd* in, SendEnd* out, const uint8_t* src,
                                      size_t n, braidRedOp_t op, SpinBudget* b) {
    return slice(g, in, out, src, nullptr, n, op, b);
  }
  /// dst = out = src (op) incoming.
  template <class G>
  BRAID_HD static bool recvReduceCopySend(const G& g, RecvEnd* in, SendEnd* out, const uint8_t* src,
                                          uint8_t* dst, size_t n, braidRedOp_t op, SpinBudget* b) {
    return slice(g, in, out, src, dst, n, op, b);
  }
  /// dst = out = incoming.
  template <class G>
  BRAID_HD static bool recvCopySend(const G& g, RecvEnd* in, SendEnd* out, uint8_t* dst, size_t n,
                                    SpinBudget* b) {
    return slice(g, in, out, nullptr, dst, n, braidSum, b);
  }
  /// dst = out = src.
  template <class G>
  BRAID_HD static bool copySend(const G& g, SendEnd* out, const uint8_t* src, uint8_t* dst,
                                size_t n, SpinBudget* b) {
    return slice(g, nullptr, out, src, dst, n, braidSum, b);
  }
};

}  // namespace braid::device
