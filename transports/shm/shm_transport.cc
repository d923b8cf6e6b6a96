// The shm transport: setup, sleeping, failure detection and abort.
//
// Setup (collective, every step taken by every rank so no rank is left
// waiting in the bootstrap when another fails):
//   1. create this rank's segment /braid-<tag>-<rank> (its inbound FIFOs and
//      control block) on this rank's NUMA node (numa_placement.h) and initialise it;
//   2. allGather {pid, pid namespace, slot config, created?};
//   3. open and map every peer's segment;
//   4. allGather {opened?, could read peer p's memory (CMA probe)?} — the
//      barrier after which nobody opens a name; single copy (single_copy.h)
//      is used between two ranks only when both could read each other;
//   5. unlink the own name at once, so /dev/shm is clean even if a process
//      crashes later; the mappings keep the memory alive.
//
// Waiting: waitForActivity sleeps on the own doorbell (see control_block.h)
// until a peer publishes data or frees slots, aborts, or closes. A dead peer
// cannot ring, so while any peer process is watched the sleep is cut into
// ~100 ms pieces and peers are checked between them.
//
// Rank numbers: the bootstrap's, used for segment names and indexing. When the
// bootstrap covers some ranks of a communicator (the mixed transport gives it
// one host's), errors, aborts and connectors name the communicator's ranks.
#include "transports/shm/shm_transport.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <new>
#include <string>
#include <vector>

#include "core/kernels/copy.h"
#include "core/log.h"
#include "transports/failure_report.h"
#include "transports/shm/control_block.h"
#include "transports/shm/peer_watch.h"
#include "transports/shm/shm_connector.h"
#include "transports/shm/shm_segment.h"
#include "transports/shm/single_copy.h"

namespace braid::transport {
namespace {

using shm::ControlBlock;
using shm::PeerWatch;
using shm::SegmentLayout;
using shm::ShmConnector;
using shm::ShmSegment;

constexpr auto kLivenessPeriod = std::chrono::milliseconds(100);

// Ranks as errors and aborts name them: the bootstrap's own numbering, or the
// communicator's when the bootstrap covers only some of its ranks (mixed transport).
class RankLabels {
 public:
  RankLabels(std::vector<int> global, int nranks) : global_(std::move(global)) {
    if (global_.empty()) {
      for (int r = 0; r < nranks; ++r) global_.push_back(r);
    }
  }
  int operator()(int local) const { return global_[local]; }
  /// The local index of communicator rank `global`; -1 when not on this host.
  int local(int global) const {
    for (size_t i = 0; i < global_.size(); ++i) {
      if (global_[i] == global) return static_cast<int>(i);
    }
    return -1;
  }
  std::string name(int local) const { return "rank " + std::to_string(global_[local]); }

 private:
  std::vector<int> global_;
};

// What ranks tell each other in step 2.
struct PeerInfo {
  int32_t pid;
  int32_t created;  // 1 when the rank's segment exists
  uint64_t pidNamespace;
  uint64_t slotBytes;
  int64_t slots;
  shm::ProbeTarget probe;  // address 0: this rank does not use single copy
};

class ShmTransport : public Transport {
 public:
  static Result<std::unique_ptr<Transport>> create(Bootstrap& bootstrap, const Config& config,
                                                   std::vector<int> globalRanks);
  ~ShmTransport() override;

  const char* name() const override { return "shm"; }
  size_t streamStoreBytes() const override { return streamStoreBytes_; }
  Connector* connector(int peer) override {
    return peer >= 0 && peer < nranks_ ? connectors_[peer].get() : nullptr;
  }
  Status waitForActivity(const Deadline& deadline, int maxWaitMs) override;
  void abort(const Status& reason) override;
  void reportWait(int peer) override;
  std::vector<int> waitChain(int peer) override;

 private:
  ShmTransport(int rank, int nranks, RankLabels labels)
      : rank_(rank), nranks_(nranks), label_(std::move(labels)) {}

  ControlBlock& ownControl() const { return *SegmentLayout::control(own_->base()); }
  ControlBlock& peerControl(int peer) const {
    return *SegmentLayout::control(peerSegments_[peer]->base());
  }
  bool peerClosed(int peer) const {
    return peerControl(peer).closed.load(std::memory_order_acquire) != 0;
  }
  // Whether a wait must end now: work to do, an abort, or a closed peer we wait on.
  bool hasWork() const;
  // The error to report when a peer aborted, closed on us or died; ok otherwise.
  Status checkPeers();

  const int rank_;
  const int nranks_;
  const RankLabels label_;
  std::unique_ptr<ShmSegment> own_;
  std::vector<std::unique_ptr<ShmSegment>> peerSegments_;  // by rank; null for this rank
  // Declared after the segments: connectors point into them and die first.
  std::vector<std::unique_ptr<ShmConnector>> connectors_;  // by rank; null for this rank
  std::vector<PeerWatch> watches_;                         // by rank
  bool watchesAnyPeer_ = false;
  size_t streamStoreBytes_ = 0;  // as each connector's; see Config::streamStoreBytes
  Clock::time_point nextLivenessCheck_ = Clock::now();
  std::atomic<bool> aborted_{false};
  uint64_t probePattern_[2] = {0, 0};  // read by peers at setup (single_copy.h)
};

// Says once per process why FIFO pages are not placed (an unknown node, or a refused mbind):
// it is the same for every communicator a process creates, and not an error.
void noteUnplaced(int rank, const std::string& why) {
  static std::atomic<bool> said{false};
  if (said.exchange(true)) return;
  BRAID_INFO(
      "shm: rank %d's inbound FIFOs are not bound to a NUMA node: %s; their pages go "
      "where first touched",
      rank, why.c_str());
}

// Step 1: the own segment with a fresh control block and empty FIFOs, on the NUMA node of
// this rank, which reads every FIFO in it (numa_placement.h).
Result<std::unique_ptr<ShmSegment>> createOwnSegment(const std::string& tag, int rank,
                                                     const SegmentLayout& layout, int numaNode) {
  BRAID_ASSIGN_OR_RETURN(auto segment,
                         ShmSegment::create(shm::segmentName(tag, rank), layout.totalBytes,
                                            shm::segmentPlacement(layout, rank, numaNode)));
  auto* control = new (segment->base()) ControlBlock();
  control->ownerRank = rank;
  control->ownerPid = getpid();
  for (int peer = 0; peer < layout.nranks; ++peer) {
    if (peer != rank) new (layout.fifo(segment->base(), rank, peer).counters) shm::FifoCounters();
  }
  return segment;
}

// Step 3, for one peer.
Result<std::unique_ptr<ShmSegment>> openPeerSegment(const std::string& tag, int peer,
                                                    const SegmentLayout& layout,
                                                    const RankLabels& label) {
  BRAID_ASSIGN_OR_RETURN(auto segment,
                         ShmSegment::open(shm::segmentName(tag, peer), layout.totalBytes));
  const ControlBlock* control = SegmentLayout::control(segment->base());
  if (control->magic != shm::kSegmentMagic || control->ownerRank != peer) {
    return internalError("shm: segment " + segment->name() + " is not " + label.name(peer) +
                         "'s (stale segment or tag collision)");
  }
  return segment;
}

// The same slot configuration everywhere, or an error naming the first rank that differs.
Status checkSameConfig(const std::vector<PeerInfo>& infos, const RankLabels& label) {
  for (size_t r = 1; r < infos.size(); ++r) {
    if (infos[r].slotBytes != infos[0].slotBytes || infos[r].slots != infos[0].slots) {
      return Status(braidInvalidUsage,
                    "shm: " + label.name(static_cast<int>(r)) +
                        " uses BRAID_SHM_SLOT_BYTES=" + std::to_string(infos[r].slotBytes) +
                        " BRAID_SHM_SLOTS=" + std::to_string(infos[r].slots) + " but " +
                        label.name(0) + " uses " + std::to_string(infos[0].slotBytes) + " and " +
                        std::to_string(infos[0].slots),
                    label(static_cast<int>(r)));
    }
  }
  return Status::ok();
}

Result<std::unique_ptr<Transport>> ShmTransport::create(Bootstrap& bootstrap, const Config& config,
                                                        std::vector<int> globalRanks) {
  const int rank = bootstrap.rank();
  const int nranks = bootstrap.nranks();
  const std::string& tag = bootstrap.commTag();
  if (!globalRanks.empty() && static_cast<int>(globalRanks.size()) != nranks) {
    return invalidArgument("shm: " + std::to_string(globalRanks.size()) +
                           " global rank numbers for " + std::to_string(nranks) + " ranks");
  }
  std::unique_ptr<ShmTransport> t(new ShmTransport(rank, nranks, RankLabels(globalRanks, nranks)));
  const RankLabels& label = t->label_;

  // A local failure is not returned before the collective steps are done:
  // the peers would wait in the bootstrap until their deadline.
  auto layout = SegmentLayout::compute(nranks, config.shmSlotBytes, config.shmSlots);
  Status local = layout.status();
  if (local.isOk()) {
    auto own = createOwnSegment(tag, rank, *layout, config.numaNode);
    local = own.status();
    if (local.isOk()) t->own_ = std::move(*own);
  }

  const size_t singleCopyBytes = config.shmSingleCopyBytes;
  const size_t streamStoreBytes = config.streamStoreBytes == Config::kAutoBytes
                                      ? coll::defaultStreamStoreBytes(nranks)
                                      : config.streamStoreBytes;
  t->streamStoreBytes_ = streamStoreBytes;
  shm::ProbeTarget probe{0, static_cast<int32_t>(getpid()), rank};
  if (singleCopyBytes != 0) {
    shm::fillProbePattern(t->probePattern_, probe.pid, rank);
    probe.address = reinterpret_cast<uint64_t>(t->probePattern_);
  }
  std::vector<PeerInfo> infos(nranks);
  infos[rank] = PeerInfo{static_cast<int32_t>(getpid()),
                         local.isOk() ? 1 : 0,
                         shm::pidNamespaceId(),
                         config.shmSlotBytes,
                         config.shmSlots,
                         probe};
  BRAID_RETURN_IF_ERROR(bootstrap.allGather(infos.data(), sizeof(PeerInfo)));
  BRAID_RETURN_IF_ERROR(local);
  for (int r = 0; r < nranks; ++r) {
    if (!infos[r].created) {
      return remoteError("shm: " + label.name(r) + " could not create its shared-memory segment",
                         label(r));
    }
  }
  BRAID_RETURN_IF_ERROR(checkSameConfig(infos, label));

  t->peerSegments_.resize(nranks);
  for (int peer = 0; peer < nranks && local.isOk(); ++peer) {
    if (peer == rank) continue;
    auto segment = openPeerSegment(tag, peer, *layout, label);
    if (segment.isOk()) {
      t->peerSegments_[peer] = std::move(*segment);
    } else {
      local = Status(segment.status().code(), segment.status().message(), label(peer));
    }
  }
  // Row r of `opened`: [r mapped every segment?, r can read peer 0, 1, ...].
  const size_t row = nranks + 1;
  std::vector<uint8_t> opened(nranks * row);
  opened[rank * row] = local.isOk() ? 1 : 0;
  for (int peer = 0; peer < nranks; ++peer) {
    bool samePidNamespace = infos[peer].pidNamespace == infos[rank].pidNamespace;
    opened[rank * row + 1 + peer] = peer != rank && probe.address != 0 &&
                                    infos[peer].probe.address != 0 && samePidNamespace &&
                                    shm::canReadPeer(infos[peer].probe);
  }
  Status barrier = bootstrap.allGather(opened.data(), row);
  // Nobody opens a name after the barrier (or after a failure); remove ours now.
  t->own_->unlink();
  BRAID_RETURN_IF_ERROR(barrier);
  BRAID_RETURN_IF_ERROR(local);
  for (int r = 0; r < nranks; ++r) {
    if (!opened[r * row]) {
      return remoteError("shm: " + label.name(r) + " could not map its peers' segments", label(r));
    }
  }

  t->connectors_.resize(nranks);
  int singleCopyPeers = 0;
  size_t blockExtentBelow = 0;  // the links' (all alike where CMA works)
  const int cpus = shm::hostCpuCount(config.hostCpus);
  for (int peer = 0; peer < nranks; ++peer) {
    bool samePidNamespace = infos[peer].pidNamespace == infos[rank].pidNamespace;
    t->watches_.emplace_back(infos[peer].pid, samePidNamespace);
    if (peer == rank) continue;
    if (!samePidNamespace) {
      BRAID_WARN("shm: rank %d is in another pid namespace; a crash there shows as a timeout",
                 label(peer));
    }
    t->watchesAnyPeer_ = t->watchesAnyPeer_ || t->watches_.back().watched();
    // Both directions, so that sender and receiver agree on the framing.
    bool singleCopy = opened[rank * row + 1 + peer] && opened[peer * row + 1 + rank];
    singleCopyPeers += singleCopy ? 1 : 0;
    shm::SingleCopyLink link{
        singleCopy ? singleCopyBytes : 0,
        shm::PeerMemory{label(peer), infos[peer].pid, infos[peer].pid == getpid()}};
    if (singleCopy) {
      link.blockExtentBelow =
          shm::blockSingleCopyExtentBelow(singleCopyBytes, nranks, cpus, streamStoreBytes);
    }
    blockExtentBelow = std::max(blockExtentBelow, link.blockExtentBelow);
    const shm::FifoView inbound = layout->fifo(t->own_->base(), rank, peer);
    const shm::FifoView outbound = layout->fifo(t->peerSegments_[peer]->base(), peer, rank);
    shm::prefault(inbound);
    shm::prefault(outbound);
    t->connectors_[peer] = std::make_unique<ShmConnector>(
        label(rank), label(peer), inbound, outbound, &t->ownControl(), &t->peerControl(peer), link,
        streamStoreBytes);
  }
  const std::string singleCopyRule =
      singleCopyBytes == Config::kAutoBytes
          ? "from " + std::to_string(shm::kAutoSingleCopyBytes) + " bytes for buffers in huge pages"
          : "from " + std::to_string(singleCopyBytes) + " bytes";
  const std::string blockRule =
      blockExtentBelow == 0
          ? ""
          : ", all-to-all blocks from " + std::to_string(shm::kBlockSingleCopyBytes) +
                " bytes in buffers below " + std::to_string(blockExtentBelow);
  const bool placed = config.numaNode >= 0 && t->own_->placementStatus().isOk();
  if (config.numaNode < 0) {
    noteUnplaced(label(rank),
                 "its node is unknown (its CPUs span several nodes, or braid cannot tell)");
  } else if (!placed) {
    noteUnplaced(label(rank), t->own_->placementStatus().message());
  }
  const std::string placement =
      placed ? "on NUMA node " + std::to_string(config.numaNode) : "not bound to a NUMA node";
  BRAID_INFO(
      "shm: rank %d connected to %d peer(s), %d slots of %zu bytes per peer, single copy %s%s "
      "with %d of them, inbound FIFOs %s",
      label(rank), nranks - 1, config.shmSlots, config.shmSlotBytes, singleCopyRule.c_str(),
      blockRule.c_str(), singleCopyPeers, placement.c_str());
  return std::unique_ptr<Transport>(std::move(t));
}

ShmTransport::~ShmTransport() {
  if (own_ == nullptr || connectors_.empty()) return;  // setup did not finish
  ownControl().closed.store(1, std::memory_order_release);
  // A peer blocked on this rank learns that nothing more will come.
  for (int peer = 0; peer < nranks_; ++peer) {
    if (peer != rank_) shm::ring(peerControl(peer));
  }
}

bool ShmTransport::hasWork() const {
  if (shm::isAborted(ownControl())) return true;
  for (int peer = 0; peer < nranks_; ++peer) {
    const ShmConnector* c = connectors_[peer].get();
    if (c == nullptr || !c->hasPendingWork()) continue;
    if (c->canProgress() || peerClosed(peer)) return true;
  }
  return false;
}

Status ShmTransport::checkPeers() {
  BRAID_RETURN_IF_ERROR(shm::abortStatus(ownControl(), label_(rank_)));
  for (int peer = 0; peer < nranks_; ++peer) {
    const ShmConnector* c = connectors_[peer].get();
    if (c != nullptr && c->hasPendingWork() && peerClosed(peer) && !c->canProgress()) {
      return remoteError(
          "shm: " + label_.name(peer) + " closed its transport while this rank still waits on it",
          label_(peer));
    }
  }
  if (!watchesAnyPeer_ || Clock::now() < nextLivenessCheck_) return Status::ok();
  nextLivenessCheck_ = Clock::now() + kLivenessPeriod;
  for (int peer = 0; peer < nranks_; ++peer) {
    // A clean exit after closing is not a failure; the closed check above covers it.
    if (peer != rank_ && watches_[peer].exited() && !peerClosed(peer)) {
      return remoteError(
          "shm: " + label_.name(peer) + " (pid " + std::to_string(watches_[peer].pid()) + ") died",
          label_(peer));
    }
  }
  return Status::ok();
}

Status ShmTransport::waitForActivity(const Deadline& deadline, int maxWaitMs) {
  BRAID_RETURN_IF_ERROR(checkPeers());
  int timeoutMs = deadline.remainingMs(std::max(maxWaitMs, 0));
  if (watchesAnyPeer_) {
    auto untilCheck =
        std::chrono::duration_cast<std::chrono::milliseconds>(nextLivenessCheck_ - Clock::now());
    timeoutMs = std::min<int>(timeoutMs, std::max<int>(1, untilCheck.count() + 1));
  }
  if (timeoutMs > 0)
    shm::sleepUnlessWork(
        ownControl(), [this] { return hasWork(); }, timeoutMs);
  return checkPeers();
}

void ShmTransport::abort(const Status& reason) {
  if (aborted_.exchange(true)) return;
  std::string why =
      reason.message().empty() ? "abort requested" : firstHandAccount(reason.message());
  // Peers blame the rank the reason blames (a dead peer, or one a notice
  // named); reasons name ranks in the communicator's numbering.
  const int origin = reason.peer() >= 0 ? reason.peer() : label_(rank_);
  for (int peer = 0; peer < nranks_; ++peer) {
    if (peer == rank_) continue;
    shm::postAbort(peerControl(peer), label_(rank_), origin, why);
    shm::ring(peerControl(peer));
  }
  shm::postAbort(ownControl(), label_(rank_), origin, why);
  shm::ring(ownControl());
}

// Stalls: each rank's control block says whom it waited BRAID_TIMEOUT for;
// the chain from the awaited peer ends at a rank that says nothing.
void ShmTransport::reportWait(int peer) {
  ownControl().waitsFor.store(peer, std::memory_order_release);
}

std::vector<int> ShmTransport::waitChain(int peer) {
  // Reports and `peer` use the communicator's numbering; a chain that leaves
  // this host (mixed transport) ends at the first rank outside it.
  std::vector<int> chain{peer};
  std::vector<bool> onChain(nranks_, false);
  onChain[rank_] = true;
  for (int at = label_.local(peer); at >= 0 && at != rank_;) {
    onChain[at] = true;
    const int next = peerControl(at).waitsFor.load(std::memory_order_acquire);
    if (next < 0) break;
    at = label_.local(next);
    // A cycle of live ranks waiting for each other (mismatched calls): blame the peer.
    if (at >= 0 && onChain[at]) return {peer};
    chain.push_back(next);
  }
  return chain;
}

}  // namespace

Result<std::unique_ptr<Transport>> createShmTransport(Bootstrap& bootstrap, const Config& config,
                                                      std::vector<int> globalRanks) {
  return ShmTransport::create(bootstrap, config, std::move(globalRanks));
}

}  // namespace braid::transport
