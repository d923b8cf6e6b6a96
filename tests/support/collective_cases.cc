#include "support/collective_cases.h"

#include <algorithm>
#include <cstring>

#include "support/reference.h"

namespace braid::testing {
namespace {

// `count` elements followed by guard bytes; everything starts as kFill, so an
// overrun or a write where nothing was due shows as a changed byte.
class GuardedBuffer {
 public:
  static constexpr unsigned char kFill = 0xA5;

  GuardedBuffer(braidDataType_t type, size_t count)
      : elementSize_(elementBytes(type)),
        bytes_(count * elementSize_),
        storage_(bytes_ + kGuardBytes, kFill) {}

  char* data() { return storage_.data(); }
  const char* data() const { return storage_.data(); }
  char* at(size_t element) { return data() + element * elementSize_; }
  const char* at(size_t element) const { return data() + element * elementSize_; }

  bool guardIntact() const { return untouched(bytes_, kGuardBytes); }

  /// Fills elements [0, count) with `rank`'s pattern elements from `first` and
  /// remembers a checksum of every byte, so unchanged() can tell if anything wrote here.
  void fillAndSeal(const InputPattern& pattern, int rank, size_t first, size_t count) {
    pattern.fill(rank, first, count, data());
    seal_ = checksum();
  }
  bool unchanged() const { return checksum() == seal_; }
  /// True when bytes [first, first + length) still hold kFill.
  bool untouched(size_t first, size_t length) const {
    return std::all_of(storage_.begin() + first, storage_.begin() + first + length,
                       [](char b) { return static_cast<unsigned char>(b) == kFill; });
  }

 private:
  static constexpr size_t kGuardBytes = 64;
  // A multiply-xor hash over 8-byte words: one fast pass, no second copy of the buffer.
  uint64_t checksum() const {
    uint64_t hash = storage_.size();
    size_t i = 0;
    for (; i + 8 <= storage_.size(); i += 8) {
      uint64_t word;
      std::memcpy(&word, storage_.data() + i, 8);
      hash = (hash ^ word) * 0x9E3779B97F4A7C15ull;
      hash ^= hash >> 29;
    }
    for (; i < storage_.size(); ++i) hash = (hash ^ static_cast<unsigned char>(storage_[i])) * 31;
    return hash;
  }

  size_t elementSize_;
  size_t bytes_;
  std::vector<char> storage_;
  uint64_t seal_ = 0;
};

// Everything one case needs to know about where it runs.
struct Context {
  braidComm_t comm;
  int rank;
  int nranks;
  const CollectiveCase& c;
  uint64_t seed;
};

// Accumulates the failed checks of one case into one message.
class Checks {
 public:
  void add(const std::string& what, const std::string& detail) {
    if (!detail.empty()) text_ += what + ": " + detail + "\n";
  }
  void guard(const std::string& what, const GuardedBuffer& buffer) {
    if (!buffer.guardIntact()) text_ += what + ": bytes past the end were overwritten\n";
  }
  CaseOutcome outcome() const { return {braidSuccess, text_}; }

 private:
  std::string text_;
};

CaseOutcome fromCall(braidResult_t result, braidComm_t comm) {
  if (result == braidSuccess) return {};
  return {result, std::string("call returned ") + braidGetErrorString(result) + ": " +
                      braidGetLastError(comm)};
}

// Out of place, the send buffer is const: not one byte of it may change.
void checkSendIntact(Checks& checks, const Context& x, const GuardedBuffer& send) {
  if (!x.c.inPlace && !send.unchanged()) checks.add("sendbuff", "was written to");
}

CaseOutcome runAllReduceOrReduce(const Context& x) {
  const auto& c = x.c;
  const bool isAllReduce = c.collective == Collective::kAllReduce;
  InputPattern pattern(c.type, c.op, x.seed);
  GuardedBuffer send(c.type, c.count), recv(c.type, c.count);
  if (c.inPlace) {
    pattern.fill(x.rank, 0, c.count, recv.data());
  } else {
    send.fillAndSeal(pattern, x.rank, 0, c.count);
  }
  const void* in = c.inPlace ? recv.data() : send.data();
  braidResult_t result =
      isAllReduce ? braidAllReduce(in, recv.data(), c.count, c.type, c.op, x.comm, nullptr)
                  : braidReduce(in, recv.data(), c.count, c.type, c.op, c.root, x.comm, nullptr);
  CaseOutcome call = fromCall(result, x.comm);
  if (!call.ok()) return call;
  Checks checks;
  if (isAllReduce || x.rank == c.root) {
    checks.add("recvbuff", checkReduced(c.type, c.op, x.nranks, recv.data(), c.count,
                                        sourceFromPattern(pattern), 0));
  }
  checks.guard("recvbuff", recv);
  checkSendIntact(checks, x, send);
  return checks.outcome();
}

CaseOutcome runBroadcast(const Context& x) {
  const auto& c = x.c;
  InputPattern pattern = InputPattern::forMove(c.type, x.seed);
  GuardedBuffer send(c.type, c.count), recv(c.type, c.count);
  // Non-roots fill their (ignored) send buffers with their own data: it must not leak out.
  if (!c.inPlace) {
    send.fillAndSeal(pattern, x.rank, 0, c.count);
  } else if (x.rank == c.root) {
    pattern.fill(x.rank, 0, c.count, recv.data());
  }
  const void* in = c.inPlace ? recv.data() : send.data();
  CaseOutcome call =
      fromCall(braidBroadcast(in, recv.data(), c.count, c.type, c.root, x.comm, nullptr), x.comm);
  if (!call.ok()) return call;
  Checks checks;
  checks.add("recvbuff",
             checkCopied(c.type, recv.data(), c.count, sourceFromPattern(pattern), c.root, 0));
  checks.guard("recvbuff", recv);
  checkSendIntact(checks, x, send);
  return checks.outcome();
}

CaseOutcome runAllGatherOrGather(const Context& x) {
  const auto& c = x.c;
  const bool isAllGather = c.collective == Collective::kAllGather;
  InputPattern pattern = InputPattern::forMove(c.type, x.seed);
  GuardedBuffer send(c.type, c.count), recv(c.type, c.count * x.nranks);
  char* ownSlice = recv.at(x.rank * c.count);
  const bool inPlace = c.inPlace && (isAllGather || x.rank == c.root);
  if (inPlace) {
    pattern.fill(x.rank, 0, c.count, ownSlice);
  } else {
    send.fillAndSeal(pattern, x.rank, 0, c.count);
  }
  const void* in = inPlace ? ownSlice : send.data();
  braidResult_t result =
      isAllGather ? braidAllGather(in, recv.data(), c.count, c.type, x.comm, nullptr)
                  : braidGather(in, recv.data(), c.count, c.type, c.root, x.comm, nullptr);
  CaseOutcome call = fromCall(result, x.comm);
  if (!call.ok()) return call;
  Checks checks;
  if (isAllGather || x.rank == c.root) {
    for (int r = 0; r < x.nranks; ++r) {
      checks.add(
          "recvbuff block from rank " + std::to_string(r),
          checkCopied(c.type, recv.at(r * c.count), c.count, sourceFromPattern(pattern), r, 0));
    }
  }
  checks.guard("recvbuff", recv);
  checkSendIntact(checks, x, send);
  return checks.outcome();
}

CaseOutcome runReduceScatter(const Context& x) {
  const auto& c = x.c;
  const size_t total = c.count * x.nranks;
  InputPattern pattern(c.type, c.op, x.seed);
  GuardedBuffer send(c.type, total), recv(c.type, c.count);
  send.fillAndSeal(pattern, x.rank, 0, total);
  const void* in = send.data();
  void* out = c.inPlace ? send.at(x.rank * c.count) : recv.data();
  CaseOutcome call =
      fromCall(braidReduceScatter(in, out, c.count, c.type, c.op, x.comm, nullptr), x.comm);
  if (!call.ok()) return call;
  Checks checks;
  checks.add("recvbuff", checkReduced(c.type, c.op, x.nranks, out, c.count,
                                      sourceFromPattern(pattern), x.rank * c.count));
  checks.guard(c.inPlace ? "sendbuff" : "recvbuff", c.inPlace ? send : recv);
  if (!c.inPlace) checkSendIntact(checks, x, send);
  return checks.outcome();
}

CaseOutcome runAllToAll(const Context& x) {
  const auto& c = x.c;
  const size_t total = c.count * x.nranks;
  InputPattern pattern = InputPattern::forMove(c.type, x.seed);
  GuardedBuffer send(c.type, total), recv(c.type, total);
  if (c.inPlace) {
    pattern.fill(x.rank, 0, total, recv.data());
  } else {
    send.fillAndSeal(pattern, x.rank, 0, total);
  }
  const void* in = c.inPlace ? recv.data() : send.data();
  CaseOutcome call =
      fromCall(braidAllToAll(in, recv.data(), c.count, c.type, x.comm, nullptr), x.comm);
  if (!call.ok()) return call;
  Checks checks;
  for (int r = 0; r < x.nranks; ++r) {  // block r came from rank r's block for us
    checks.add("recvbuff block from rank " + std::to_string(r),
               checkCopied(c.type, recv.at(r * c.count), c.count, sourceFromPattern(pattern), r,
                           x.rank * c.count));
  }
  checks.guard("recvbuff", recv);
  checkSendIntact(checks, x, send);
  return checks.outcome();
}

// AllToAllv layout: rank s sends count * ((s + 2d) % 3 + 1) / 3 elements to d
// (so some blocks are empty for small counts). Send blocks are packed in peer
// order with a one-element gap after odd peers; receive blocks are placed in
// reverse peer order with a one-element gap after each, so displacements are
// neither packed nor monotone, and the gaps must stay untouched.
size_t vCount(size_t count, int src, int dst) { return count * ((src + 2 * dst) % 3 + 1) / 3; }

std::vector<size_t> vSendDispls(size_t count, int src, int nranks) {
  std::vector<size_t> displs(nranks);
  size_t offset = 0;
  for (int d = 0; d < nranks; ++d) {
    displs[d] = offset;
    offset += vCount(count, src, d) + (d % 2);
  }
  return displs;
}

CaseOutcome runAllToAllv(const Context& x) {
  const auto& c = x.c;
  const int n = x.nranks;
  std::vector<size_t> sendCounts(n), recvCounts(n), recvDispls(n);
  std::vector<size_t> sendDispls = vSendDispls(c.count, x.rank, n);
  size_t recvTotal = 0;
  for (int p = n - 1; p >= 0; --p) {
    sendCounts[p] = vCount(c.count, x.rank, p);
    recvCounts[p] = vCount(c.count, p, x.rank);
    recvDispls[p] = recvTotal;
    recvTotal += recvCounts[p] + 1;
  }
  const size_t sendTotal = sendDispls[n - 1] + sendCounts[n - 1];
  InputPattern pattern = InputPattern::forMove(c.type, x.seed);
  GuardedBuffer send(c.type, sendTotal), recv(c.type, recvTotal);
  send.fillAndSeal(pattern, x.rank, 0, sendTotal);
  CaseOutcome call =
      fromCall(braidAllToAllv(send.data(), sendCounts.data(), sendDispls.data(), recv.data(),
                              recvCounts.data(), recvDispls.data(), c.type, x.comm, nullptr),
               x.comm);
  if (!call.ok()) return call;
  Checks checks;
  const size_t elementSize = elementBytes(c.type);
  for (int p = 0; p < n; ++p) {
    size_t theirDispl = vSendDispls(c.count, p, n)[x.rank];
    checks.add("recvbuff block from rank " + std::to_string(p),
               checkCopied(c.type, recv.at(recvDispls[p]), recvCounts[p],
                           sourceFromPattern(pattern), p, theirDispl));
    if (!recv.untouched((recvDispls[p] + recvCounts[p]) * elementSize, elementSize)) {
      checks.add("recvbuff",
                 "the gap after the block from rank " + std::to_string(p) + " was written");
    }
  }
  checks.guard("recvbuff", recv);
  checkSendIntact(checks, x, send);
  return checks.outcome();
}

CaseOutcome runScatter(const Context& x) {
  const auto& c = x.c;
  const size_t total = c.count * x.nranks;
  InputPattern pattern = InputPattern::forMove(c.type, x.seed);
  GuardedBuffer send(c.type, total), recv(c.type, c.count);
  send.fillAndSeal(pattern, x.rank, 0, total);
  const bool inPlace = c.inPlace && x.rank == c.root;
  void* out = inPlace ? send.at(x.rank * c.count) : recv.data();
  CaseOutcome call =
      fromCall(braidScatter(send.data(), out, c.count, c.type, c.root, x.comm, nullptr), x.comm);
  if (!call.ok()) return call;
  Checks checks;
  checks.add("recvbuff", checkCopied(c.type, out, c.count, sourceFromPattern(pattern), c.root,
                                     x.rank * c.count));
  checks.guard("recvbuff", recv);
  // Every rank's send buffer (ignored off the root) must stay intact.
  if (!inPlace && !send.unchanged()) checks.add("sendbuff", "was written to");
  return checks.outcome();
}

CaseOutcome runSendRecvRing(const Context& x) {
  const auto& c = x.c;
  const int right = (x.rank + 1) % x.nranks;
  const int left = (x.rank + x.nranks - 1) % x.nranks;
  InputPattern pattern = InputPattern::forMove(c.type, x.seed);
  GuardedBuffer send(c.type, c.count), recv(c.type, c.count);
  send.fillAndSeal(pattern, x.rank, 0, c.count);
  braidResult_t result = braidGroupStart();
  if (result == braidSuccess) {
    braidResult_t sent = braidSend(send.data(), c.count, c.type, right, x.comm, nullptr);
    braidResult_t received = braidRecv(recv.data(), c.count, c.type, left, x.comm, nullptr);
    result = braidGroupEnd();
    if (sent != braidSuccess) result = sent;
    if (received != braidSuccess) result = received;
  }
  CaseOutcome call = fromCall(result, x.comm);
  if (!call.ok()) return call;
  Checks checks;
  checks.add("recvbuff from rank " + std::to_string(left),
             checkCopied(c.type, recv.data(), c.count, sourceFromPattern(pattern), left, 0));
  checks.guard("recvbuff", recv);
  checkSendIntact(checks, x, send);
  return checks.outcome();
}

CaseOutcome runSendRecvAllPairs(const Context& x) {
  const auto& c = x.c;
  const size_t total = c.count * x.nranks;
  InputPattern pattern = InputPattern::forMove(c.type, x.seed);
  GuardedBuffer send(c.type, total), recv(c.type, total);
  send.fillAndSeal(pattern, x.rank, 0, total);
  braidResult_t result = braidGroupStart();
  for (int p = 0; p < x.nranks && result == braidSuccess; ++p) {
    if (p == x.rank) continue;
    result = braidSend(send.at(p * c.count), c.count, c.type, p, x.comm, nullptr);
  }
  // Receives posted in the opposite order, after all sends: the group must still match them.
  for (int p = x.nranks - 1; p >= 0 && result == braidSuccess; --p) {
    if (p == x.rank) continue;
    result = braidRecv(recv.at(p * c.count), c.count, c.type, p, x.comm, nullptr);
  }
  braidResult_t ended = braidGroupEnd();
  if (result == braidSuccess) result = ended;
  CaseOutcome call = fromCall(result, x.comm);
  if (!call.ok()) return call;
  Checks checks;
  for (int p = 0; p < x.nranks; ++p) {
    if (p == x.rank) continue;
    checks.add("recvbuff block from rank " + std::to_string(p),
               checkCopied(c.type, recv.at(p * c.count), c.count, sourceFromPattern(pattern), p,
                           x.rank * c.count));
  }
  if (!recv.untouched(x.rank * c.count * elementBytes(c.type), c.count * elementBytes(c.type))) {
    checks.add("recvbuff", "this rank's own block was written though nothing was sent to it");
  }
  checks.guard("recvbuff", recv);
  checkSendIntact(checks, x, send);
  return checks.outcome();
}

}  // namespace

const char* collectiveName(Collective collective) {
  switch (collective) {
    case Collective::kAllReduce:
      return "AllReduce";
    case Collective::kBroadcast:
      return "Broadcast";
    case Collective::kReduce:
      return "Reduce";
    case Collective::kAllGather:
      return "AllGather";
    case Collective::kReduceScatter:
      return "ReduceScatter";
    case Collective::kAllToAll:
      return "AllToAll";
    case Collective::kAllToAllv:
      return "AllToAllv";
    case Collective::kGather:
      return "Gather";
    case Collective::kScatter:
      return "Scatter";
    case Collective::kSendRecvRing:
      return "SendRecvRing";
    case Collective::kSendRecvAllPairs:
      return "SendRecvAllPairs";
    case Collective::kBarrier:
      return "Barrier";
  }
  return "?";
}

bool isReducing(Collective collective) {
  return collective == Collective::kAllReduce || collective == Collective::kReduce ||
         collective == Collective::kReduceScatter;
}

bool isRooted(Collective collective) {
  return collective == Collective::kBroadcast || collective == Collective::kReduce ||
         collective == Collective::kGather || collective == Collective::kScatter;
}

std::string CollectiveCase::describe() const {
  std::string text = std::string(collectiveName(collective)) + " " + typeLabel(type);
  if (isReducing(collective)) text += std::string(" ") + opLabel(op);
  text += " count=" + std::to_string(count);
  if (isRooted(collective)) text += " root=" + std::to_string(root);
  text += inPlace ? " in-place" : " out-of-place";
  return text;
}

CaseOutcome runCase(braidComm_t comm, const CollectiveCase& c, uint64_t seed) {
  int nranks = 0, rank = 0;
  CaseOutcome info = fromCall(braidCommCount(comm, &nranks), comm);
  if (info.ok()) info = fromCall(braidCommUserRank(comm, &rank), comm);
  if (!info.ok()) return info;
  Context x{comm, rank, nranks, c, seed};
  switch (c.collective) {
    case Collective::kAllReduce:
    case Collective::kReduce:
      return runAllReduceOrReduce(x);
    case Collective::kBroadcast:
      return runBroadcast(x);
    case Collective::kAllGather:
    case Collective::kGather:
      return runAllGatherOrGather(x);
    case Collective::kReduceScatter:
      return runReduceScatter(x);
    case Collective::kAllToAll:
      return runAllToAll(x);
    case Collective::kAllToAllv:
      return runAllToAllv(x);
    case Collective::kScatter:
      return runScatter(x);
    case Collective::kSendRecvRing:
      return runSendRecvRing(x);
    case Collective::kSendRecvAllPairs:
      return runSendRecvAllPairs(x);
    case Collective::kBarrier:
      return fromCall(braidBarrier(comm, nullptr), comm);
  }
  return {braidInternalError, "unknown collective"};
}

int runCases(braidComm_t comm, const std::vector<CollectiveCase>& cases, uint64_t seed,
             const FailureSink& onFailure) {
  int failures = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    CaseOutcome outcome = runCase(comm, cases[i], seed + i);
    if (outcome.ok()) continue;
    ++failures;
    onFailure(cases[i], outcome);
    if (outcome.result != braidSuccess) break;
  }
  return failures;
}

}  // namespace braid::testing
