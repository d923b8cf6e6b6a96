#include "ranks.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace braid::perf {
namespace {

// A fixed-size record so that one braidAllGather of bytes collects every rank's.
struct RankRecord {
  int32_t rank;
  int32_t pid;
  int32_t device;
  char host[52];
};
static_assert(sizeof(RankRecord) == 64);

}  // namespace

Outcome checkCall(const char* call, braidResult_t result, const RankContext& context) {
  if (result == braidSuccess) return Outcome::success();
  std::string message = std::string(call) + " failed on rank " + std::to_string(context.rank) +
                        ": " + braidGetErrorString(result);
  const char* detail = braidGetLastError(context.comm);
  if (detail != nullptr && detail[0] != '\0') message += ": " + std::string(detail);
  return Outcome::failure(message);
}

Outcome barrier(const RankContext& context) {
  return checkCall("braidBarrier", braidBarrier(context.comm, nullptr), context);
}

Outcome combineAcrossRanks(const RankContext& context, TimeAggregation how, double* value) {
  braidRedOp_t op = braidSum;
  switch (how) {
    case TimeAggregation::kRank0:
      // A sum in which only rank 0 contributes hands everyone rank 0's value.
      if (context.rank != 0) *value = 0.0;
      break;
    case TimeAggregation::kAverage:
      op = braidAvg;
      break;
    case TimeAggregation::kMin:
      op = braidMin;
      break;
    case TimeAggregation::kMax:
      op = braidMax;
      break;
  }
  return checkCall("braidAllReduce (timing)",
                   braidAllReduce(value, value, 1, braidFloat64, op, context.comm, nullptr),
                   context);
}

Outcome sumAcrossRanks(const RankContext& context, int64_t* value) {
  return checkCall("braidAllReduce (error count)",
                   braidAllReduce(value, value, 1, braidInt64, braidSum, context.comm, nullptr),
                   context);
}

Outcome describeRanks(const RankContext& context, std::vector<std::string>* lines) {
  RankRecord mine{};
  mine.rank = context.rank;
  mine.pid = static_cast<int32_t>(getpid());
  if (braidCommCuDevice(context.comm, &mine.device) != braidSuccess) mine.device = -1;
  if (gethostname(mine.host, sizeof(mine.host) - 1) != 0) {
    std::snprintf(mine.host, sizeof(mine.host), "unknown");
  }
  std::vector<RankRecord> all(static_cast<size_t>(context.nranks));
  Outcome outcome = checkCall(
      "braidAllGather (rank descriptions)",
      braidAllGather(&mine, all.data(), sizeof(RankRecord), braidUint8, context.comm, nullptr),
      context);
  if (!outcome.ok()) return outcome;
  lines->clear();
  for (const RankRecord& record : all) {
    char line[160];
    char device[32];
    if (record.device < 0) {
      std::snprintf(device, sizeof(device), "host memory");
    } else {
      std::snprintf(device, sizeof(device), "device %2d", record.device);
    }
    std::snprintf(line, sizeof(line), "#  Rank %3d Pid %7d on %-20.51s %s", record.rank, record.pid,
                  record.host, device);
    lines->push_back(line);
  }
  return Outcome::success();
}

}  // namespace braid::perf
