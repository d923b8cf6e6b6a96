#include "collective.h"

#include <algorithm>
#include <array>

namespace braid::perf {
namespace {

// Bus-bandwidth factors from nccl-tests' doc/PERFORMANCE.md ("Summary"), and
// its gather.cu / scatter.cu / sendrecv.cu for the collectives that page omits.
double allReduceFactor(int nranks) { return 2.0 * (nranks - 1) / nranks; }
double shareFactor(int nranks) { return static_cast<double>(nranks - 1) / nranks; }
double unitFactor(int /*nranks*/) { return 1.0; }

constexpr std::array<CollectiveInfo, 9> kCollectives = {{
    {CollectiveKind::kAllReduce, "allreduce", true, false, true, allReduceFactor},
    {CollectiveKind::kBroadcast, "broadcast", false, true, true, unitFactor},
    {CollectiveKind::kReduce, "reduce", true, true, true, unitFactor},
    {CollectiveKind::kAllGather, "allgather", false, false, true, shareFactor},
    {CollectiveKind::kReduceScatter, "reducescatter", true, false, true, shareFactor},
    {CollectiveKind::kAllToAll, "alltoall", false, false, true, shareFactor},
    {CollectiveKind::kGather, "gather", false, true, true, shareFactor},
    {CollectiveKind::kScatter, "scatter", false, true, true, shareFactor},
    // Sending and receiving the same buffer is a race, so nccl-tests times
    // in-place sendrecv but does not judge its result.
    {CollectiveKind::kSendRecv, "sendrecv", false, false, false, unitFactor},
}};

braidResult_t sendRecvRing(const CallArgs& args, const RankContext& context) {
  const int next = (context.rank + 1) % context.nranks;
  const int previous = (context.rank + context.nranks - 1) % context.nranks;
  braidResult_t result = braidGroupStart();
  if (result != braidSuccess) return result;
  // The group must be closed even when a call inside it fails.
  result = braidSend(args.send, args.count, args.type, next, context.comm, context.stream);
  if (result == braidSuccess) {
    result = braidRecv(args.recv, args.count, args.type, previous, context.comm, context.stream);
  }
  const braidResult_t endResult = braidGroupEnd();
  return result != braidSuccess ? result : endResult;
}

}  // namespace

const CollectiveInfo& collectiveInfo(CollectiveKind kind) {
  return kCollectives[static_cast<size_t>(kind)];
}

const std::vector<CollectiveKind>& allCollectives() {
  static const std::vector<CollectiveKind> kinds = [] {
    std::vector<CollectiveKind> all;
    for (const CollectiveInfo& info : kCollectives) all.push_back(info.kind);
    return all;
  }();
  return kinds;
}

std::optional<CollectiveKind> parseCollective(std::string_view name) {
  for (const CollectiveInfo& info : kCollectives) {
    if (name == info.name) return info.kind;
  }
  return std::nullopt;
}

BufferLayout layoutFor(CollectiveKind kind, size_t bytes, size_t elementSize, int nranks) {
  const size_t total = bytes / elementSize;
  const size_t n = static_cast<size_t>(nranks);
  const size_t share = total / n;
  BufferLayout layout;
  switch (kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
    case CollectiveKind::kSendRecv:
      layout = {total, total, total, 0, 0};
      break;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kGather:
      layout = {share, share, share * n, share, 0};
      break;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kScatter:
      layout = {share, share * n, share, 0, share};
      break;
    case CollectiveKind::kAllToAll:
      layout = {share, share * n, share * n, 0, 0};
      break;
  }
  return layout;
}

size_t reportedBytes(const BufferLayout& layout, size_t elementSize) {
  return std::max(layout.sendCount, layout.recvCount) * elementSize;
}

braidResult_t launchCollective(CollectiveKind kind, const CallArgs& args,
                               const RankContext& context) {
  braidComm_t comm = context.comm;
  braidStream_t stream = context.stream;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return braidAllReduce(args.send, args.recv, args.count, args.type, args.op, comm, stream);
    case CollectiveKind::kBroadcast:
      return braidBroadcast(args.send, args.recv, args.count, args.type, args.root, comm, stream);
    case CollectiveKind::kReduce:
      return braidReduce(args.send, args.recv, args.count, args.type, args.op, args.root, comm,
                         stream);
    case CollectiveKind::kAllGather:
      return braidAllGather(args.send, args.recv, args.count, args.type, comm, stream);
    case CollectiveKind::kReduceScatter:
      return braidReduceScatter(args.send, args.recv, args.count, args.type, args.op, comm, stream);
    case CollectiveKind::kAllToAll:
      return braidAllToAll(args.send, args.recv, args.count, args.type, comm, stream);
    case CollectiveKind::kGather:
      return braidGather(args.send, args.recv, args.count, args.type, args.root, comm, stream);
    case CollectiveKind::kScatter:
      return braidScatter(args.send, args.recv, args.count, args.type, args.root, comm, stream);
    case CollectiveKind::kSendRecv:
      return sendRecvRing(args, context);
  }
  return braidInternalError;
}

const char* apiName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "braidAllReduce";
    case CollectiveKind::kBroadcast:
      return "braidBroadcast";
    case CollectiveKind::kReduce:
      return "braidReduce";
    case CollectiveKind::kAllGather:
      return "braidAllGather";
    case CollectiveKind::kReduceScatter:
      return "braidReduceScatter";
    case CollectiveKind::kAllToAll:
      return "braidAllToAll";
    case CollectiveKind::kGather:
      return "braidGather";
    case CollectiveKind::kScatter:
      return "braidScatter";
    case CollectiveKind::kSendRecv:
      return "braidSend/braidRecv";
  }
  return "braid";
}

}  // namespace braid::perf
