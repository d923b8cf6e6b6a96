// The mixed transport: one shm transport per host, one ib or socket transport between hosts.
//
// Setup (collective; every rank takes the same steps in the same order, so no
// rank waits in the bootstrap for one that is elsewhere):
//   1. when there is more than one host: the ranks gather whether each can open
//      an RDMA port; when all can, the ib transport, else the socket transport,
//      over the whole bootstrap, with a peer selection "on another host"
//      (symmetric), so no connection or stream is opened between ranks of one host;
//   2. when some host has two or more ranks: on every rank, the shm transport
//      over a HostBootstrap of its host (host-local rank numbers, a tag per
//      host so /dev/shm names never collide, errors naming communicator ranks).
//      A host with one rank takes part too (its shm transport has no peers and
//      is dropped): the views' collectives are the parent's, entered by all.
// A failure on one host after step 1 leaves the other hosts in the parent's
// collectives until the failing ranks close their bootstrap or BRAID_TIMEOUT.
//
// Waiting: a rank cannot sleep on a futex (shm doorbell) and an epoll set
// (sockets) at once without a helper thread. Instead:
//   - nothing pending on shm: sleep in epoll for the whole wait (no latency
//     added to sockets); local aborts and deaths are checked after it;
//   - shm work pending: poll the sockets (epoll, no sleep), then sleep on the
//     doorbell for at most kSliceMs — shm keeps its wake-up latency, socket
//     traffic is noticed within a slice (the engine spins and yields before it
//     sleeps, so a busy link rarely gets here).
#include "transports/mixed/mixed_transport.h"

#include <algorithm>
#include <string>

#include "core/log.h"
#include "transports/ibverbs/ib_transport.h"
#include "transports/mixed/host_bootstrap.h"
#include "transports/shm/shm_connector.h"
#include "transports/shm/shm_transport.h"
#include "transports/socket/socket_transport.h"

namespace braid::transport {
namespace {

// How long a wait sleeps on the shm doorbell before it looks at the sockets again.
constexpr int kSliceMs = 1;

std::string rankList(const std::vector<int>& ranks) {
  std::string text;
  for (int r : ranks) text += (text.empty() ? "" : ",") + std::to_string(r);
  return text.empty() ? "none" : text;
}

class MixedTransport final : public Transport {
 public:
  MixedTransport(int rank, std::vector<int> hostOfRank)
      : rank_(rank), hostOfRank_(std::move(hostOfRank)), localIndex_(hostOfRank_.size(), -1) {}

  Status init(Bootstrap& bootstrap, const Config& config);

  const char* name() const override { return "mixed"; }
  Connector* connector(int peer) override {
    if (peer < 0 || peer >= static_cast<int>(hostOfRank_.size()) || peer == rank_) return nullptr;
    if (!sameHost(peer)) return socket_->connector(peer);
    return shmConnectors_[localIndex_[peer]];
  }
  Status waitForActivity(const Deadline& deadline, int maxWaitMs) override;
  // Stall reports go to both kinds of peer; a chain is followed as far as
  // the transport of the awaited peer has heard (it ends where the other's begins).
  void reportWait(int peer) override {
    if (shm_) shm_->reportWait(peer);
    if (socket_) socket_->reportWait(peer);
  }
  std::vector<int> waitChain(int peer) override {
    Transport* t = peer >= 0 && peer < static_cast<int>(hostOfRank_.size()) && sameHost(peer)
                       ? shm_.get()
                       : socket_.get();
    return t != nullptr ? t->waitChain(peer) : std::vector<int>{peer};
  }
  void abort(const Status& reason) override {
    if (shm_) shm_->abort(reason);
    if (socket_) socket_->abort(reason);
  }

  bool sameHost(int peer) const { return hostOfRank_[peer] == hostOfRank_[rank_]; }
  /// "ib" or "socket": the transport between hosts.
  const char* remoteName() const { return socket_ ? socket_->name() : "socket"; }

 private:
  bool shmPending() const {
    return std::any_of(shmConnectors_.begin(), shmConnectors_.end(),
                       [](const shm::ShmConnector* c) { return c && c->hasPendingWork(); });
  }

  const int rank_;
  const std::vector<int> hostOfRank_;
  std::vector<int> localIndex_;        // by rank: index in this host's shm transport; -1 elsewhere
  std::unique_ptr<Transport> shm_;     // null when this rank is alone on its host
  std::unique_ptr<Transport> socket_;  // ib or socket; null when every rank is on one host
  std::vector<shm::ShmConnector*> shmConnectors_;  // by local index; null for this rank
};

Status MixedTransport::init(Bootstrap& bootstrap, const Config& config) {
  const int nranks = static_cast<int>(hostOfRank_.size());
  const int hosts = *std::max_element(hostOfRank_.begin(), hostOfRank_.end()) + 1;
  std::vector<int> hostSize(hosts, 0);
  for (int h : hostOfRank_) ++hostSize[h];

  if (hosts > 1) {  // step 1
    std::vector<bool> remote(nranks);
    for (int r = 0; r < nranks; ++r) remote[r] = !sameHost(r);
    const std::string noIb = ibUnavailableReason(config);
    std::vector<uint8_t> canIb(nranks, 0);
    canIb[rank_] = noIb.empty() ? 1 : 0;
    BRAID_RETURN_IF_ERROR(bootstrap.allGather(canIb.data(), 1));
    const bool ib = std::all_of(canIb.begin(), canIb.end(), [](uint8_t c) { return c != 0; });
    if (ib) {
      BRAID_ASSIGN_OR_RETURN(socket_, createIbTransport(bootstrap, config, std::move(remote)));
    } else {
      if (!noIb.empty())
        BRAID_INFO("mixed: rank %d: no RDMA between hosts: %s", rank_, noIb.c_str());
      BRAID_ASSIGN_OR_RETURN(socket_, createSocketTransport(bootstrap, config, std::move(remote)));
    }
  }
  if (*std::max_element(hostSize.begin(), hostSize.end()) > 1) {  // step 2
    mixed::HostBootstrap view(bootstrap, hostOfRank_,
                              bootstrap.commTag() + "-h" + std::to_string(hostOfRank_[rank_]));
    BRAID_ASSIGN_OR_RETURN(shm_, createShmTransport(view, config, view.members()));
    if (view.nranks() == 1) shm_.reset();
    for (int local = 0; shm_ && local < view.nranks(); ++local) {
      localIndex_[view.members()[local]] = local;
      // The shm transport's connectors are ShmConnectors; their queues tell what a wait is for.
      shmConnectors_.push_back(static_cast<shm::ShmConnector*>(shm_->connector(local)));
    }
  }

  std::vector<int> local, remote;
  for (int r = 0; r < nranks; ++r) {
    if (r != rank_) (sameHost(r) ? local : remote).push_back(r);
  }
  BRAID_INFO("mixed: rank %d on host %d of %d: shm to ranks %s; %s to ranks %s", rank_,
             hostOfRank_[rank_], hosts, rankList(local).c_str(),
             socket_ ? socket_->name() : "socket", rankList(remote).c_str());
  return Status::ok();
}

Status MixedTransport::waitForActivity(const Deadline& deadline, int maxWaitMs) {
  if (!socket_) return shm_->waitForActivity(deadline, maxWaitMs);
  if (!shm_) return socket_->waitForActivity(deadline, maxWaitMs);
  if (!shmPending()) {
    BRAID_RETURN_IF_ERROR(socket_->waitForActivity(deadline, maxWaitMs));
    return shm_->waitForActivity(deadline, 0);  // local aborts and deaths; no sleep
  }
  BRAID_RETURN_IF_ERROR(socket_->waitForActivity(deadline, 0));
  return shm_->waitForActivity(deadline, std::min(maxWaitMs, kSliceMs));
}

}  // namespace

Result<std::unique_ptr<Transport>> createMixedTransport(Bootstrap& bootstrap, const Config& config,
                                                        const std::vector<int>& hostOfRank) {
  const int nranks = bootstrap.nranks();
  if (static_cast<int>(hostOfRank.size()) != nranks) {
    return invalidArgument("mixed transport: host indices for " +
                           std::to_string(hostOfRank.size()) + " ranks, but the bootstrap has " +
                           std::to_string(nranks));
  }
  for (int r = 0; r < nranks; ++r) {
    if (hostOfRank[r] < 0 || hostOfRank[r] >= nranks) {
      return invalidArgument("mixed transport: rank " + std::to_string(r) + " has host index " +
                             std::to_string(hostOfRank[r]) + ", outside 0.." +
                             std::to_string(nranks - 1));
    }
  }
  auto transport = std::make_unique<MixedTransport>(bootstrap.rank(), hostOfRank);
  BRAID_RETURN_IF_ERROR(transport->init(bootstrap, config));
  return std::unique_ptr<Transport>(std::move(transport));
}

const char* linkTransportName(Transport& transport, int peer) {
  if (transport.connector(peer) == nullptr) return nullptr;
  auto* mixed = dynamic_cast<MixedTransport*>(&transport);
  if (mixed == nullptr) return transport.name();
  return mixed->sameHost(peer) ? "shm" : mixed->remoteName();
}

}  // namespace braid::transport
