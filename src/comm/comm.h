// The communicator: one rank's membership in a group of ranks.
//
// A Comm owns its bootstrap network and its transport (connections to every
// peer). It is created by joining through a unique id, holds the config the
// ranks agreed on, and carries the sticky error that turns a failure on one
// rank into an error on every later call (and, through Transport::abort, on
// every peer).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "bootstrap/unique_id.h"
#include "comm/direct_p2p.h"
#include "comm/flight_recorder.h"
#include "comm/grow.h"
#include "comm/join_plan.h"
#include "comm/registrations.h"
#include "comm/schedule_cache.h"
#include "comm/shrink.h"
#include "comm/user_ops.h"
#include "core/config.h"
#include "core/status.h"
#include "transports/connector.h"

namespace braid {

class DeviceSide;  // comm/device_side.h
struct DeviceSideDeleter {
  void operator()(DeviceSide* side) const;
};

class Comm {
 public:
  /// Joins the communicator of `id` as `rank` of `nranks` (collective over all ranks).
  static Result<std::unique_ptr<Comm>> create(const bootstrap::UniqueId& id, int nranks, int rank,
                                              const std::string& tagPrefix);
  ~Comm();

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const Config& config() const { return config_; }
  /// BRAID_ALGO and BRAID_PROTO as agreed (rank 0's), parsed once at init.
  const coll::Overrides& overrides() const { return overrides_; }
  /// Polls a waiting rank spins before it yields, in the calling thread's
  /// placement now: BRAID_SPIN when set, else more while the thread is pinned
  /// to a core no other rank of this host shares (core_spreading.h).
  int spinRounds() const;
  /// Whether every collective first compares the ranks' arguments (BRAID_CHECK=1, agreed at
  /// init, on more than one rank): the one switch every path reads. Such a call runs in the
  /// engine, whose first stage exchanges the signatures (comm/argument_check.h).
  bool checksCalls() const { return checksCalls_; }
  /// Whether calls on this communicator may pin the calling thread (core_spreading.h):
  /// only when its ranks on this host are one per process.
  bool placesRanks() const { return placesRanks_; }
  /// The transport to the peers; null for a single-rank communicator.
  transport::Transport* transport() { return transport_.get(); }
  transport::Bootstrap& bootstrap() { return *bootstrap_; }

  /// Collective: the communicator of this rank's color, or null for BRAID_SPLIT_NOCOLOR.
  Result<std::unique_ptr<Comm>> split(int color, int key);
  /// The agreement half of split(): what this rank joins (nothing for BRAID_SPLIT_NOCOLOR).
  Result<JoinPlan> planSplit(int color, int key);

  /// Whether the communicator was created blocking (braidConfig_t.blocking): what a
  /// communicator derived from it with a NULL config inherits.
  bool blocking() const { return blocking_.load(std::memory_order_relaxed); }
  void setBlocking(bool blocking) { blocking_.store(blocking, std::memory_order_relaxed); }
  /// The id of a grow this rank coordinates (comm/grow.h).
  GrowIds& growIds() { return growIds_; }

  /// Where survivors meet to shrink this communicator (comm/shrink.h); only
  /// communicators of more than one rank have one.
  ShrinkRendezvous& shrinkRendezvous() { return *shrink_; }
  /// The prefix of commTag() this communicator was created with (kept by children).
  const std::string& tagPrefix() const { return tagPrefix_; }
  /// The last stages run on this communicator, for diagnosing hangs.
  FlightRecorder& flightRecorder() { return *flight_; }

  /// Ok while healthy; otherwise the error that broke the communicator. Every call asks;
  /// only a failed communicator pays for the lock and the copy.
  Status health() const {
    if (!failed_.load(std::memory_order_acquire)) return Status::ok();
    return failure();
  }
  /// Records `error` as sticky and tells every peer (their waits fail naming this rank).
  void fail(const Status& error);
  /// Ok when the communicator takes new work: not finalized (braidInvalidUsage naming
  /// `api`) and healthy (its sticky error).
  Status usable(const char* api) const {
    if (!finalized_.load(std::memory_order_relaxed) && !failed_.load(std::memory_order_acquire)) {
      return Status::ok();
    }
    return unusable(api);
  }
  /// Marks the communicator finalized (braidCommFinalize); false when it already was.
  bool markFinalized() { return !finalized_.exchange(true); }

  /// The CUDA device the communicator is bound to: braidCommInitAll's devlist entry, or the
  /// device of its first device-buffer collective; -1 while it has none (host only).
  int device() const { return device_.load(std::memory_order_relaxed); }
  void setDevice(int device) { device_.store(device, std::memory_order_relaxed); }

  /// This rank's part of the device path (comm/device_side.h); null until the communicator
  /// first meets device buffers or CUDA devices. Released with the Comm.
  DeviceSide* deviceSide() const { return deviceSide_.get(); }
  /// deviceSide(), made empty if there is none yet.
  DeviceSide& ensureDeviceSide();

  /// Asks every operation in flight on this communicator to stop; any thread.
  void requestAbort();
  bool abortRequested() const { return abortRequested_.load(std::memory_order_relaxed); }

  /// The last error message on this communicator (empty when none).
  std::string lastError() const;
  void setLastError(const std::string& message);

  /// Scratch memory of at least `bytes`, reused across operations (ops on one
  /// communicator run one at a time, so one buffer serves them all).
  uint8_t* scratch(size_t bytes);

  /// The host index of every rank (see comm/host_identity.h); the same on every rank.
  const std::shared_ptr<const std::vector<int>>& hosts() const { return hosts_; }
  /// Every rank's L3 domain (-1: unknown), for ring orders (rank_cache_domain.h).
  const std::shared_ptr<const std::vector<int>>& domains() const { return domains_; }

  /// Schedules already built on this communicator (used by one call at a time).
  ScheduleCache& schedules() { return schedules_; }
  /// Whether every link is shared memory (the shm transport): selection's view of the
  /// transport (CollArgs::sharedMemory).
  bool sharedMemoryLinks() const { return sharedMemoryLinks_; }
  /// The direct path for this communicator's sends and receives (comm/direct_p2p.h).
  DirectPointToPoint& pointToPoint() { return p2p_; }

  /// Buffers registered with braidCommRegister (comm/registrations.h).
  Registrations& registrations() { return registrations_; }
  /// Operators of braidRedOpCreatePreMulSum (comm/user_ops.h).
  UserOps& userOps() { return userOps_; }

  /// Counts operations in flight (a group's run holds no handle lease), so releasing the
  /// communicator (comm/handle_table.h) can wait for them to leave.
  void enter() { active_.fetch_add(1); }
  void leave() { active_.fetch_sub(1); }
  int inFlight() const { return active_.load(); }

 private:
  Comm(int rank, int nranks, Config config)
      : rank_(rank),
        nranks_(nranks),
        config_(std::move(config)),
        flight_(std::make_unique<FlightRecorder>(rank, nranks)) {}
  Status agreeOnConfig();
  Status agreeOnCacheDomains(int pinnedCpu);
  Status failure() const;                  // health() of a failed communicator
  Status unusable(const char* api) const;  // usable() of a finalized or failed one
  Status connectTransport();

  const int rank_;
  const int nranks_;
  Config config_;
  bool placesRanks_ = false;
  bool sharedMemoryLinks_ = false;
  bool checksCalls_ = false;
  coll::Overrides overrides_;
  bool spinAuto_ = false;  // BRAID_SPIN unset: spinRounds() follows the placement
  std::unique_ptr<transport::Bootstrap> bootstrap_;
  std::unique_ptr<transport::Transport> transport_;
  std::unique_ptr<ShrinkRendezvous> shrink_;
  const std::unique_ptr<FlightRecorder> flight_;
  std::string tagPrefix_;
  std::atomic<bool> abortRequested_{false};
  std::atomic<int> active_{0};
  std::atomic<bool> finalized_{false};
  std::atomic<int> device_{-1};
  std::atomic<bool> blocking_{true};
  GrowIds growIds_;
  Registrations registrations_;
  UserOps userOps_;

  mutable std::mutex mu_;  // guards error_ and lastError_
  Status error_;
  std::atomic<bool> failed_{false};  // error_ is set (read without the lock)
  std::string lastError_;

  std::shared_ptr<const std::vector<int>> hosts_;
  std::shared_ptr<const std::vector<int>> domains_;
  std::vector<uint8_t> scratch_;
  ScheduleCache schedules_;
  DirectPointToPoint p2p_{*this};
  // Last: destroyed first (in ~Comm, explicitly), while everything its proxy uses is alive.
  std::unique_ptr<DeviceSide, DeviceSideDeleter> deviceSide_;
};

}  // namespace braid
