#include "comm/comm.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "bootstrap/root_server.h"
#include "bootstrap/tcp_bootstrap.h"
#include "collectives/select.h"
#include "comm/core_spreading.h"
#include "comm/cpu_share.h"
#include "comm/device_side.h"
#include "comm/flight_signal.h"
#include "comm/host_identity.h"
#include "comm/rank_cache_domain.h"
#include "core/log.h"
#include "topology/search.h"
#include "topology/startup.h"
#include "transports/ibverbs/ib_transport.h"
#include "transports/mixed/mixed_transport.h"
#include "transports/shm/shm_transport.h"
#include "transports/socket/socket_transport.h"

namespace braid {
namespace {

// Polls before a waiting rank yields, when the host's ranks fit its cores but
// are not bound apart. Few: a poll round is a fraction of a cache-line round
// trip, so 10 rounds outlast a peer's reply from another core, and a yield
// with nothing else to run returns at once, so waiting goes on almost as
// cheaply. When other work shares the cores the peer is often off-CPU, and
// every round spun keeps it from running; with cores to themselves a longer
// spin gains nothing (perf/RESULTS.md, "Waiting").
constexpr int kSpinIterations = 10;

// The settings that shape schedules and wire formats; every rank must use the
// same, so rank 0's win (a rank whose environment differs gets a warning).
struct SharedSettings {
  uint64_t host = 0;
  uint64_t machine = 0;  // CPU sharing; differs from host only for namespaces and overrides
  uint64_t process = 0;  // getpid(): ranks that are threads of one process share it
  cpu_set_t cpus{};      // the CPUs this rank may use (cpu_share.h)
  uint64_t chunkBytes = 0;
  uint64_t shmSlotBytes = 0;
  uint64_t tinyBytes = 0;  // BRAID_TINY_BYTES
  int32_t shmSlots = 0;
  int32_t socketStreams = 0;
  int32_t checkArguments = 0;  // BRAID_CHECK: its signature exchange is a stage of its own
  char transport[16] = {};
  char algorithm[Config::kMaxSpecLength + 1] = {};  // BRAID_ALGO spec
  char protocol[Config::kMaxSpecLength + 1] = {};   // BRAID_PROTO spec
};

// Ranks on more cores than they have: each rank process takes a core of its
// own share (core_spreading.h). Ranks that are threads of one process are left
// alone: *places stays false, and their calls never pin (placeForCall).
// Ranks a launcher already bound apart (CpuShare::apart) are left where they are.
Status spreadLocalRanks(const std::vector<SharedSettings>& all, int rank, const CpuShare& share,
                        bool* places, int* pinnedCpu) {
  *places = false;
  *pinnedCpu = -1;
  if (share.apart) return Status::ok();
  const SharedSettings& mine = all[rank];
  int localIndex = 0, localRanks = 0;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].machine != mine.machine) continue;
    if (static_cast<int>(r) != rank && all[r].process == mine.process) return Status::ok();
    if (static_cast<int>(r) < rank) ++localIndex;
    ++localRanks;
  }
  *places = true;
  return spreadOverCores(localIndex, localRanks, pinnedCpu);
}

template <size_t N>
void copyName(char (&out)[N], const std::string& in) {
  std::snprintf(out, sizeof(out), "%s", in.c_str());
}

}  // namespace

Result<std::unique_ptr<Comm>> Comm::create(const bootstrap::UniqueId& id, int nranks, int rank,
                                           const std::string& tagPrefix) {
  BRAID_ASSIGN_OR_RETURN(Config config, Config::fromEnv());
  std::unique_ptr<Comm> comm(new Comm(rank, nranks, std::move(config)));
  comm->tagPrefix_ = tagPrefix;
  registerFlightRecorder(comm->flight_.get());
  setLogRank(rank);
  BRAID_ASSIGN_OR_RETURN(comm->bootstrap_, bootstrap::TcpBootstrap::join(
                                               id, rank, nranks, comm->config_.timeoutSeconds,
                                               tagPrefix, comm->config_.socketTls));
  BRAID_RETURN_IF_ERROR(comm->agreeOnConfig());
  comm->checksCalls_ = comm->config_.checkArguments && nranks > 1;
  BRAID_RETURN_IF_ERROR(comm->connectTransport());
  comm->sharedMemoryLinks_ =
      comm->transport_ != nullptr && std::strcmp(comm->transport_->name(), "shm") == 0;
  if (nranks > 1) {  // a single rank shrinks without meeting anyone
    BRAID_ASSIGN_OR_RETURN(comm->shrink_,
                           ShrinkRendezvous::create(*comm->bootstrap_, comm->config_.socketIfname,
                                                    comm->config_.socketTls));
  }
  const std::vector<int>& hosts = *comm->hosts_;
  BRAID_INFO("rank %d of %d ready (transport %s, host %d of %d)", rank, nranks,
             comm->transport_ ? comm->transport_->name() : "none", hosts[rank],
             *std::max_element(hosts.begin(), hosts.end()) + 1);
  return comm;
}

Comm::~Comm() {
  deviceSide_.reset();  // its proxy may still run queued ops on this communicator
  unregisterFlightRecorder(flight_.get());
}

DeviceSide& Comm::ensureDeviceSide() {
  if (deviceSide_ == nullptr) deviceSide_.reset(new DeviceSide);
  return *deviceSide_;
}

// With a core of its own (pinned, ranks no more than cores) the peer a rank
// waits for runs elsewhere, so a longer spin catches its reply without the
// system call of a yield, which also hands the core to any other job. 100
// polls cover a peer's reply from another core; more gain nothing and only
// lengthen the spin while a late peer is away (perf/RESULTS.md, "Waiting").
constexpr int kOwnCoreSpinIterations = 100;

int Comm::spinRounds() const {
  return spinAuto_ && pinnedToOwnCore() ? kOwnCoreSpinIterations : config_.spinIterations;
}

Status Comm::agreeOnConfig() {
  std::vector<SharedSettings> all(nranks_);
  SharedSettings& mine = all[rank_];
  BRAID_ASSIGN_OR_RETURN(mine.host, hostIdentity(rank_, nranks_));
  mine.machine = machineIdentity();
  mine.process = static_cast<uint64_t>(getpid());
  mine.cpus = usableCpus();
  mine.chunkBytes =
      config_.chunkBytesSet ? config_.chunkBytes : Config::defaultChunkBytes(config_.transport);
  mine.shmSlotBytes = config_.shmSlotBytes;
  mine.shmSlots = config_.shmSlots;
  mine.socketStreams = config_.socketStreams;
  mine.tinyBytes = config_.tinyBytes;
  mine.checkArguments = config_.checkArguments ? 1 : 0;
  copyName(mine.transport, config_.transport);
  copyName(mine.algorithm, config_.algorithm);
  copyName(mine.protocol, config_.protocol);
  BRAID_RETURN_IF_ERROR(bootstrap_->allGather(all.data(), sizeof(SharedSettings)));

  const SharedSettings& root = all[0];
  if (rank_ != 0 &&
      (std::memcmp(&root.chunkBytes, &mine.chunkBytes,
                   sizeof(SharedSettings) - offsetof(SharedSettings, chunkBytes)) != 0)) {
    BRAID_WARN("rank %d: BRAID_* settings differ from rank 0's; using rank 0's", rank_);
  }
  config_.chunkBytes = root.chunkBytes;
  config_.shmSlotBytes = root.shmSlotBytes;
  config_.shmSlots = root.shmSlots;
  config_.socketStreams = root.socketStreams;
  config_.tinyBytes = root.tinyBytes;
  config_.checkArguments = root.checkArguments != 0;
  config_.transport = root.transport;
  config_.algorithm = root.algorithm;
  config_.protocol = root.protocol;

  std::vector<uint64_t> identities;
  for (const SharedSettings& s : all) identities.push_back(s.host);
  hosts_ = std::make_shared<const std::vector<int>>(hostIndices(identities));
  bool oneHost = std::all_of(all.begin(), all.end(),
                             [&](const SharedSettings& s) { return s.host == root.host; });
  std::vector<cpu_set_t> localMasks;
  for (const SharedSettings& s : all) {
    if (s.machine == mine.machine) localMasks.push_back(s.cpus);
  }
  const CpuShare share = shareCpus(localMasks);
  config_.hostCpus = share.cpus;
  spinAuto_ = config_.spinIterations < 0;
  if (config_.spinIterations < 0) {
    // Spinning only pays when every local rank has a core: when ranks share
    // cores, a spinning rank steals the time slice of the peer it waits for.
    // Ranks a launcher bound apart have cores of their own, as pinned ones do.
    config_.spinIterations = share.oversubscribed() ? 0
                             : share.apart          ? kOwnCoreSpinIterations
                                                    : kSpinIterations;
  }
  int pinnedCpu = -1;
  BRAID_RETURN_IF_ERROR(spreadLocalRanks(all, rank_, share, &placesRanks_, &pinnedCpu));
  BRAID_RETURN_IF_ERROR(agreeOnCacheDomains(pinnedCpu));
  // Rank 0's BRAID_ALGO and BRAID_PROTO now rule; a name no algorithm has fails here, on
  // every rank.
  BRAID_ASSIGN_OR_RETURN(overrides_, coll::Overrides::parse(config_.algorithm, config_.protocol));
  BRAID_RETURN_IF_ERROR(topo::prepareTopology(rank_).status());
  if (config_.transport.empty()) {
    config_.transport = oneHost ? "shm" : "mixed";  // mixed: shm inside each host
  } else if (config_.transport == "shm" && !oneHost) {
    return invalidUsage("BRAID_TRANSPORT=shm, but the ranks run on more than one host");
  }
  return Status::ok();
}

// After placement: a rank braid pins is in its CPU's domain and node (rank_cache_domain.h).
// Only the L3 domains are exchanged: the NUMA node places this rank's own segment, whose
// FIFOs this rank alone reads (transports/shm/numa_placement.h).
Status Comm::agreeOnCacheDomains(int pinnedCpu) {
  std::vector<int32_t> all(nranks_, -1);
  BRAID_ASSIGN_OR_RETURN(all[rank_], rankCacheDomain(rank_, nranks_, pinnedCpu));
  BRAID_ASSIGN_OR_RETURN(config_.numaNode, rankNumaNode(rank_, nranks_, pinnedCpu));
  if (nranks_ > 1) BRAID_RETURN_IF_ERROR(bootstrap_->allGather(all.data(), sizeof(int32_t)));
  domains_ = std::make_shared<const std::vector<int>>(all.begin(), all.end());
  const std::vector<int> order = topo::hostLocalRingOrder(*hosts_, *domains_);
  if (rank_ == 0 && order != topo::hostLocalRingOrder(*hosts_)) {
    std::string text;
    for (int r : order) text += " " + std::to_string(r);
    BRAID_INFO("rings follow the ranks' L3 domains: rank order%s", text.c_str());
  }
  return Status::ok();
}

Status Comm::connectTransport() {
  if (nranks_ == 1) return Status::ok();
  if (config_.transport == "shm") {
    BRAID_ASSIGN_OR_RETURN(transport_, transport::createShmTransport(*bootstrap_, config_));
  } else if (config_.transport == "mixed") {
    BRAID_ASSIGN_OR_RETURN(transport_,
                           transport::createMixedTransport(*bootstrap_, config_, *hosts_));
  } else if (config_.transport == "ib") {
    BRAID_ASSIGN_OR_RETURN(transport_, transport::createIbTransport(*bootstrap_, config_));
  } else {
    BRAID_ASSIGN_OR_RETURN(transport_, transport::createSocketTransport(*bootstrap_, config_));
  }
  return Status::ok();
}

Result<std::unique_ptr<Comm>> Comm::split(int color, int key) {
  BRAID_ASSIGN_OR_RETURN(JoinPlan plan, planSplit(color, key));
  if (!plan.joins()) return std::unique_ptr<Comm>();
  return Comm::create(plan.id, plan.nranks, plan.rank, plan.tagPrefix);
}

Result<JoinPlan> Comm::planSplit(int color, int key) {
  struct Entry {
    int32_t color, key, rank;
  };
  std::vector<Entry> entries(nranks_);
  entries[rank_] = {color, key, rank_};
  BRAID_RETURN_IF_ERROR(bootstrap_->allGather(entries.data(), sizeof(Entry)));

  std::vector<Entry> group;
  for (const Entry& e : entries) {
    if (color != BRAID_SPLIT_NOCOLOR && e.color == color) group.push_back(e);
  }
  std::stable_sort(group.begin(), group.end(), [](const Entry& a, const Entry& b) {
    return a.key != b.key ? a.key < b.key : a.rank < b.rank;
  });
  int newRank = -1;
  for (size_t i = 0; i < group.size(); ++i) {
    if (group[i].rank == rank_) newRank = static_cast<int>(i);
  }

  // Each group's first rank starts a root; everyone learns the ids in one exchange.
  std::vector<braidUniqueId> ids(nranks_);
  std::memset(ids.data(), 0, ids.size() * sizeof(braidUniqueId));
  Status leaderStatus;
  if (newRank == 0) {
    auto id = bootstrap::createUniqueId(config_.socketIfname, config_.timeoutSeconds);
    if (id.isOk()) id->writeTo(&ids[rank_]);
    leaderStatus = id.status();
  }
  BRAID_RETURN_IF_ERROR(bootstrap_->allGather(ids.data(), sizeof(braidUniqueId)));
  BRAID_RETURN_IF_ERROR(leaderStatus);
  JoinPlan plan;
  if (color == BRAID_SPLIT_NOCOLOR) return plan;

  BRAID_ASSIGN_OR_RETURN(plan.id, bootstrap::UniqueId::readFrom(ids[group[0].rank]));
  plan.nranks = static_cast<int>(group.size());
  plan.rank = newRank;
  plan.tagPrefix = tagPrefix_;
  return plan;
}

Status Comm::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

Status Comm::unusable(const char* api) const {
  if (finalized_.load(std::memory_order_relaxed)) {
    return invalidUsage(std::string(api) + ": rank " + std::to_string(rank_) +
                        "'s communicator was finalized; it takes no more calls (only "
                        "braidCommDestroy)");
  }
  return health();
}

void Comm::fail(const Status& error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.isOk()) return;
    error_ = error;
    failed_.store(true, std::memory_order_release);
  }
  BRAID_WARN("communicator failed: %s", error.message().c_str());
  if (transport_) transport_->abort(error);
}

void Comm::requestAbort() {
  abortRequested_.store(true);
  if (transport_) transport_->abort(Status(braidRemoteError, "braidCommAbort was called"));
}

std::string Comm::lastError() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lastError_;
}

void Comm::setLastError(const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  lastError_ = message;
}

uint8_t* Comm::scratch(size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

}  // namespace braid
