// A schedule: one rank's part of a collective algorithm, written as data.
//
// An algorithm (ring, tree, pairwise, ...) is a pure function from CollArgs to
// a Schedule: an ordered list of Steps. The actions of one step run
// concurrently; a step starts when the previous one has completed on this
// rank (an executor may post a step's transfers earlier where no byte one of
// the two steps writes is touched by the other: schedule_runner.h). Actions
// name buffer regions symbolically (send / recv / scratch + byte offset), so
// a schedule can be built, inspected and simulated without
// memory, transports or peers — which is how the unit tests prove algorithms.
//
// Ordering rule the builders must keep: for every pair of ranks (a, b), the
// sends a posts to b, taken in schedule order (step, then action index),
// match one-to-one and in the same order the receives b posts from a, with
// equal byte counts. Connectors are FIFO; that is the whole matching rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "braid.h"
#include "core/coll_kind.h"

namespace braid::coll {

enum class BufferId : uint8_t { kSend, kRecv, kScratch };

/// A byte range of one of the collective's buffers.
struct Span {
  BufferId buf = BufferId::kRecv;
  size_t offset = 0;
  size_t bytes = 0;
};

enum class ActionKind : uint8_t {
  kSend,        // send `src` to `peer`
  kRecv,        // receive from `peer` into `dst`
  kRecvReduce,  // receive from `peer`; dst = src (op) incoming   (src may equal dst)
  kCopy,        // dst = src, locally (skipped when they are the same memory)
  kDivide,      // dst /= nranks, locally (avg's single division)
  kReduce,      // dst = dst (op) src, locally (a received input folded in, in a fixed order)
};

struct Action {
  ActionKind kind = ActionKind::kCopy;
  int peer = -1;  // comm rank, for kSend / kRecv / kRecvReduce
  Span dst;       // kRecv, kRecvReduce, kCopy, kDivide, kReduce
  Span src;       // kSend, kCopy; kRecvReduce's and kReduce's other operand
  /// Index of an action in the same step that must complete before this one
  /// starts (-1: none). Lets a tree reduce its children in a fixed order.
  int after = -1;
  /// kSend only: the message is a block its receiver only stores (all-to-all), so the
  /// transport may let the peer read it in place (Connector::postBlockSend).
  bool block = false;
};

struct Step {
  std::vector<Action> actions;
};

struct Schedule {
  std::vector<Step> steps;
  size_t scratchBytes = 0;  // size of BufferId::kScratch the executor must provide
  std::string algorithm;    // "ring", "tree", "pairwise", ...
};

/// Everything an algorithm needs to know to build one rank's schedule.
struct CollArgs {
  CollKind kind = CollKind::kAllReduce;
  size_t count = 0;  // per-rank element count, as in the C API
  braidDataType_t type = braidFloat32;
  braidRedOp_t op = braidSum;
  int root = 0;
  int rank = 0;
  int nranks = 1;
  bool inPlace = false;  // send and recv name the same memory as the C API allows
  /// Pipelining granularity: transfers are cut into chunks of at most this many bytes
  /// (rounded down to whole elements), except a 2-rank ring broadcast's one message
  /// (nobody forwards it). Builders must accept any value >= 1 element.
  size_t chunkBytes = size_t(1) << 20;
  /// The host index of every rank (hosts numbered 0, 1, ... by lowest rank), the same on
  /// every rank; hierarchical algorithms read it. Null: unknown, taken as one host.
  std::shared_ptr<const std::vector<int>> hosts;
  /// The cache domain (L3) of every rank, the same on every rank: ring and chain orders
  /// group a host's ranks by it (rank_order.h). Null: unknown, taken as one domain.
  std::shared_ptr<const std::vector<int>> domains;
  /// The transport as selection sees it, the same on every rank: every link is shared
  /// memory, where the exchange all-reduce is preferred up to tinyBytes per rank
  /// (BRAID_TINY_BYTES; 0: never preferred).
  bool sharedMemory = false;
  size_t tinyBytes = 0;
  /// AllToAllv only: element counts and displacements, one entry per rank.
  std::vector<size_t> sendCounts, sendDispls, recvCounts, recvDispls;
};

}  // namespace braid::coll
