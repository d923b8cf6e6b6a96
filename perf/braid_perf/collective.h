// What braid-perf knows about each collective: its name, how a swept size maps
// onto buffer lengths and the count argument, the bus-bandwidth factor, and
// how to call it through the public API.
//
// Sizes and bandwidths follow nccl-tests (src/*.cu and doc/PERFORMANCE.md in
// github.com/NVIDIA/nccl-tests). A swept size S is the larger of the send and
// receive buffers; the count printed is the count argument (per rank):
//
//   collective     count   send  recv  busbw factor  (algbw = S / time, GB = 1e9)
//   allreduce      S       S     S     2(n-1)/n
//   broadcast      S       S     S     1
//   reduce         S       S     S     1
//   allgather      S/n     S/n   S     (n-1)/n       S = the full output
//   reducescatter  S/n     S     S/n   (n-1)/n       S = the full input
//   alltoall       S/n     S     S     (n-1)/n
//   gather         S/n     S/n   S     (n-1)/n       S = the root's full output
//   scatter        S/n     S     S/n   (n-1)/n       S = the root's full input
//   sendrecv       S       S     S     1             to rank+1, from rank-1
//
// In-place, as nccl-tests does it: send = recv + rank * sendInPlaceOffset and
// recv = recv + rank * recvInPlaceOffset, so allgather/gather send their own
// slice of the output and reducescatter/scatter receive into their own slice
// of the input.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "braid.h"

namespace braid::perf {

enum class CollectiveKind {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kGather,
  kScatter,
  kSendRecv,
};

struct CollectiveInfo {
  CollectiveKind kind;
  const char* name;     // as typed on the command line: "allreduce"
  bool reduces;         // takes a reduction operator
  bool rooted;          // takes a root rank
  bool checkedInPlace;  // false where nccl-tests reports in-place #wrong as N/A
  double (*busFactor)(int nranks);
};

const CollectiveInfo& collectiveInfo(CollectiveKind kind);
/// Every collective, in the order "all" runs them.
const std::vector<CollectiveKind>& allCollectives();
std::optional<CollectiveKind> parseCollective(std::string_view name);

/// Element counts of one measurement (see the table above).
struct BufferLayout {
  size_t count = 0;              // the count argument passed to braid
  size_t sendCount = 0;          // elements this rank's send buffer holds
  size_t recvCount = 0;          // elements this rank's receive buffer holds
  size_t sendInPlaceOffset = 0;  // in elements, times the rank
  size_t recvInPlaceOffset = 0;  // in elements, times the rank
};

BufferLayout layoutFor(CollectiveKind kind, size_t bytes, size_t elementSize, int nranks);

/// The size column and the S of algbw: the larger buffer, in bytes.
size_t reportedBytes(const BufferLayout& layout, size_t elementSize);

/// This rank's identity in the communicator under test.
struct RankContext {
  braidComm_t comm;
  int rank;
  int nranks;
  braidStream_t stream = nullptr;  // the rank's cudaStream_t with --memory device
};

/// Where one call reads and writes.
struct CallArgs {
  const void* send;
  void* recv;
  size_t count;
  braidDataType_t type;
  braidRedOp_t op;  // ignored by collectives that do not reduce
  int root;         // ignored by collectives without a root
};

/// Issues one collective through the public API on context.stream. Host buffers complete
/// before it returns, unless the caller has opened a group; device buffers are enqueued.
braidResult_t launchCollective(CollectiveKind kind, const CallArgs& args,
                               const RankContext& context);

/// Name of the braid function `kind` calls, for error messages.
const char* apiName(CollectiveKind kind);

}  // namespace braid::perf
