// The flight recorder: the last collectives of one communicator and how far
// each got, so that a hang or a failure can be diagnosed from the log alone.
//
// Every host call (one thread per call; comm/task.h) records three moments of
// every stage it runs (a collective, its BRAID_CHECK signature exchange, or a
// batch of sends/recvs): begin (the schedules), a progress snapshot taken only
// when the wait loop is about to sleep (step index and bytes moved by each pending
// transfer, and the time waiting began), and the end (done or failed).
// Nothing is computed and no clock is read on the busy path (a clock read
// costs tens of ns, a fair share of a small collective): per-peer
// byte counts are derived from the kept schedules when the recorder is
// printed, on a failure (at BRAID_DEBUG=WARN) or on request from the signal
// thread (flight_signal.h). A mutex makes that reader safe.
//
// Memory is bounded: a ring of BRAID_FLIGHT_RECORDER entries (default 64,
// 0 turns recording off) whose vectors keep their capacity between uses.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/host/schedule_runner.h"
#include "collectives/schedule.h"
#include "comm/op.h"
#include "core/deadline.h"

namespace braid {

class FlightRecorder {
 public:
  using Schedules = std::vector<std::shared_ptr<const coll::Schedule>>;
  using Runners = std::vector<std::unique_ptr<coll::ScheduleRunner>>;
  /// The lists of a call that runs without a schedule (the tiny all-reduce, direct sends).
  static inline const Schedules kNoSchedules{};
  static inline const Runners kNoRunners{};

  FlightRecorder(int rank, int nranks);

  /// A stage starts: `first` is its op (the first of a send/recv batch of
  /// `batchOps`); `signatureCheck` marks BRAID_CHECK's exchange before `first`.
  void begin(const Op& first, int batchOps, bool signatureCheck, const Schedules& schedules);
  /// Snapshots how far the current stage's runners are (called before sleeping).
  void snapshot(const Runners& runners);
  /// The current stage ended; `error` is ok when it completed.
  void end(const Status& error);

  /// The recorder as log lines, oldest first, headed by `why`.
  std::vector<std::string> format(const std::string& why) const;
  /// Writes format(why) to the log: BRAID_WARN, or stderr when `always` and
  /// the log level would hide it.
  void print(const std::string& why, bool always) const;

 private:
  enum class State : uint8_t { kRunning, kDone, kFailed };
  struct Entry {
    uint64_t seq = 0;
    const char* api = "";
    size_t count = 0;
    braidDataType_t type = braidUint8;
    braidRedOp_t op = braidSum;
    int root = 0;
    bool collective = true;
    coll::CollKind kind = coll::CollKind::kAllReduce;
    bool signatureCheck = false;
    int batchOps = 1;
    State state = State::kRunning;
    bool waited = false;  // a snapshot was taken: the stage had to wait
    Clock::time_point waitingSince, ended;
    Schedules schedules;
    // Snapshot, per runner: the step in progress and, per action of that
    // step, the bytes it had moved (flattened; stepActions[i] entries each).
    std::vector<size_t> stepIndex;
    std::vector<size_t> moved;
    std::string error;
  };
  struct PeerBytes {
    int peer;
    uint64_t sent = 0, sendTotal = 0, recv = 0, recvTotal = 0;
    bool waitingSend = false, waitingRecv = false;
  };

  std::string describe(const Entry& e, Clock::time_point now) const;
  std::vector<std::string> describePeers(const Entry& e) const;
  std::vector<PeerBytes> peerBytes(const Entry& e) const;

  const int rank_;
  const int nranks_;
  mutable std::mutex mu_;  // guards everything below; engine thread writes, printers read
  std::vector<Entry> ring_;
  uint64_t next_ = 0;  // sequence number of the next entry
};

}  // namespace braid
