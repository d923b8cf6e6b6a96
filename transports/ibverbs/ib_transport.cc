// The ib transport: the device's one completion queue serves every queue
// pair, so any connector's progress() drains it for all (completions carry
// the connector's index in their work request id).
//
// Waiting: arm the completion queue, poll it once more (a completion that
// came between the last poll and the arming raises no event), then poll(2)
// the completion channel's descriptor and every peer's side connection
// (peer_link.h) together.
//
// Setup (collective, the same steps on every rank):
//   0. agree on the queue pairs per peer (BRAID_IB_QPS_PER_PEER): the fewest any
//      rank asks for, since both ends of a link must open as many;
//   1. open the device and port; all ranks gather who could and why not;
//   2. create the queue pairs of each selected peer; gather the table of QpInfo;
//   3. move each queue pair to RTS; all ranks gather who failed;
//   4. the side connections (the socket transport's setup, one stream);
//   5. a barrier, so no write reaches a queue pair not yet ready.
#include "transports/ibverbs/ib_transport.h"

#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/log.h"
#include "transports/failure_report.h"
#include "transports/ibverbs/ib_connector.h"
#include "transports/ibverbs/ib_device.h"
#include "transports/ibverbs/peer_link.h"
#include "transports/ibverbs/reg_cache.h"
#include "transports/ibverbs/verbs_api.h"
#include "transports/socket/socket_connector.h"
#include "transports/socket/socket_setup.h"

namespace braid::transport {
namespace {

using ib::IbConnector;
using ib::IbDevice;
using ib::PeerLink;
using ib::QpInfo;

constexpr int kPollBatch = 32;

// One rank's verdict in a setup step, gathered by every rank.
struct Verdict {
  uint8_t ok;
  char reason[247];
};

Verdict verdictOf(const Status& s) {
  Verdict v{};
  v.ok = s.isOk() ? 1 : 0;
  std::strncpy(v.reason, s.message().c_str(), sizeof v.reason - 1);
  return v;
}

// Every rank learns whether every rank succeeded; the first failure is named on all.
Status agree(Bootstrap& bootstrap, const Status& mine, const char* step) {
  std::vector<Verdict> all(bootstrap.nranks());
  all[bootstrap.rank()] = verdictOf(mine);
  BRAID_RETURN_IF_ERROR(bootstrap.allGather(all.data(), sizeof(Verdict)));
  if (!mine.isOk()) return mine;
  for (int r = 0; r < bootstrap.nranks(); ++r) {
    if (all[r].ok) continue;
    return Status(braidRemoteError,
                  "ib transport: rank " + std::to_string(r) + " failed to " + step + ": " +
                      std::string(all[r].reason, strnlen(all[r].reason, sizeof all[r].reason)),
                  r);
  }
  return Status::ok();
}

class IbTransport final : public Transport {
 public:
  IbTransport(int rank, int nranks) : rank_(rank), connectors_(nranks), links_(nranks) {}

  ~IbTransport() override {
    connectors_.clear();  // queue pairs before the registrations and the device
    cache_.reset();
    device_.reset();
  }

  const char* name() const override { return "ib"; }

  // Each step of a collective is one chunk per direction: without the next one posted
  // behind it, the queue pair drains while both ranks wait for the completion and wake up.
  bool postsAhead() const override { return true; }

  Connector* connector(int peer) override {
    if (peer < 0 || peer >= static_cast<int>(connectors_.size())) return nullptr;
    return connectors_[peer].get();
  }

  static Status pollAll(void* self, bool* progressed) {
    return static_cast<IbTransport*>(self)->drainCq(progressed);
  }

  Status drainCq(bool* progressed) {
    ibv_wc wc[kPollBatch];
    for (;;) {
      const int n = ibv_poll_cq(device_->cq(), kPollBatch, wc);
      if (n < 0) {
        return Status(braidSystemError,
                      "ib transport: ibv_poll_cq failed on " + device_->describe());
      }
      for (int i = 0; i < n; ++i) {
        const size_t index = wc[i].wr_id >> 32;
        if (index < connectors_.size() && connectors_[index]) connectors_[index]->complete(wc[i]);
      }
      if (n > 0) *progressed = true;
      if (n < kPollBatch) return Status::ok();
    }
  }

  Status waitForActivity(const Deadline& deadline, int maxWaitMs) override {
    if (abort_.triggered()) return abort_.error();
    BRAID_RETURN_IF_ERROR(checkPeers());
    if (!armed_) {
      if (int e = ibv_req_notify_cq(device_->cq(), 0)) {
        return systemError("ib transport: ibv_req_notify_cq on " + device_->describe(), e);
      }
      armed_ = true;
    }
    bool progressed = false;
    BRAID_RETURN_IF_ERROR(drainCq(&progressed));
    for (auto& c : connectors_) {
      if (c) c->pump(&progressed);
    }
    BRAID_RETURN_IF_ERROR(checkPeers());
    if (progressed) return Status::ok();
    pollfds_[0].revents = 0;
    for (pollfd& p : pollfds_) p.revents = 0;
    const int timeoutMs = deadline.remainingMs(std::max(0, maxWaitMs));
    const int n = ::poll(pollfds_.data(), pollfds_.size(), timeoutMs);
    if (n < 0 && errno != EINTR) return systemError("ib transport: poll", errno);
    if (abort_.triggered()) return abort_.error();
    if (pollfds_[0].revents & POLLIN) {
      ibv_cq* cq = nullptr;
      void* context = nullptr;
      while (device_->api().getCqEvent(device_->channel(), &cq, &context) == 0) {
        device_->api().ackCqEvents(cq, 1);
        armed_ = false;
      }
    }
    return checkPeers();
  }

  void abort(const Status& reason) override {
    if (!abort_.trigger(reason)) return;
    const int origin = reason.peer();
    if (origin >= 0) {
      const std::string why =
          reason.message().empty() ? "no reason given" : firstHandAccount(reason.message());
      for (auto& l : links_) {
        if (l) l->sendNotice(origin, why);
      }
    }
    for (auto& l : links_) {
      if (l) l->shutdown();
    }
  }

  Status setup(Bootstrap& bootstrap, const Config& config, const std::vector<bool>& selected);

 private:
  // Side connections: notices and hang-ups; connectors' own errors.
  Status checkPeers() {
    for (size_t p = 0; p < connectors_.size(); ++p) {
      if (!connectors_[p]) continue;
      Status s = links_[p]->check(connectors_[p]->busy());
      if (!s.isOk()) {
        connectors_[p]->fail(s);
        return s;
      }
      if (!connectors_[p]->error().isOk()) return connectors_[p]->error();
    }
    return Status::ok();
  }

  const int rank_;
  socket::AbortState abort_;
  std::unique_ptr<IbDevice> device_;
  std::unique_ptr<ib::RegCache> cache_;
  std::vector<std::unique_ptr<IbConnector>> connectors_;  // by peer; null: not connected
  std::vector<std::unique_ptr<PeerLink>> links_;          // by peer
  std::vector<pollfd> pollfds_;  // [0]: the completion channel, then one per link
  bool armed_ = false;           // a completion event is requested and not yet delivered
};

Status IbTransport::setup(Bootstrap& bootstrap, const Config& config,
                          const std::vector<bool>& selected) {
  const int n = bootstrap.nranks();
  int peers = 0;
  for (int p = 0; p < n; ++p) peers += selected[p] ? 1 : 0;

  // 0. Queue pairs per peer.
  std::vector<int32_t> asked(static_cast<size_t>(n));
  asked[rank_] = config.ibQpsPerPeer;
  BRAID_RETURN_IF_ERROR(bootstrap.allGather(asked.data(), sizeof(int32_t)));
  const int qps =
      std::clamp<int>(*std::min_element(asked.begin(), asked.end()), 1, IbConnector::kMaxQps);
  if (qps != config.ibQpsPerPeer) {
    logf(LogLevel::kWarn,
         "ib: rank %d asked for %d queue pairs per peer (BRAID_IB_QPS_PER_PEER), another rank "
         "for %d: all use %d",
         rank_, config.ibQpsPerPeer, qps, qps);
  }
  const int cqEntries =
      std::max(1, peers) * qps * (IbConnector::kSendDepth + IbConnector::kRecvDepth) + 16;

  // 1. The device.
  Status opened;
  std::string why;
  const ib::VerbsApi* api = ib::verbsApi(&why);
  if (api == nullptr) {
    opened = invalidUsage("ib transport: " + why);
  } else {
    Result<std::unique_ptr<IbDevice>> dev =
        IbDevice::open(*api, config.ibHca, config.ibGidIndex, cqEntries);
    if (dev.isOk()) {
      device_ = std::move(*dev);
    } else {
      opened = dev.status();
    }
  }
  BRAID_RETURN_IF_ERROR(agree(bootstrap, opened, "open its RDMA port"));
  logf(LogLevel::kInfo, "ib: rank %d uses %s", rank_, device_->describe().c_str());
  cache_ = std::make_unique<ib::RegCache>(*api, device_->pd(),
                                          IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

  // 2. Queue pairs and their table.
  const size_t creditBytes = ib::creditBytesFor(config, peers);
  Status created;
  // Row r: rank r's queue pairs, qps for each peer.
  const size_t row = static_cast<size_t>(n) * qps;
  std::vector<QpInfo> table(row * n);
  for (int p = 0; p < n && created.isOk(); ++p) {
    if (!selected[p]) continue;
    auto c = IbConnector::create(rank_, p, static_cast<uint32_t>(p), device_.get(), cache_.get(),
                                 config.ibCredits, creditBytes, qps, config.ibTimeout);
    if (!c.isOk()) {
      created = c.status();
      break;
    }
    connectors_[p] = std::move(*c);
    connectors_[p]->setPoller(&IbTransport::pollAll, this);
    const std::vector<QpInfo> mine = connectors_[p]->localInfo();
    std::copy(mine.begin(), mine.end(), table.begin() + rank_ * row + p * qps);
  }
  BRAID_RETURN_IF_ERROR(agree(bootstrap, created, "create its queue pairs"));
  BRAID_RETURN_IF_ERROR(bootstrap.allGather(table.data(), sizeof(QpInfo) * row));

  // 3. Connect.
  Status connected;
  for (int p = 0; p < n && connected.isOk(); ++p) {
    if (!connectors_[p]) continue;
    const auto theirs = table.begin() + p * row + rank_ * qps;
    connected = connectors_[p]->connect(std::vector<QpInfo>(theirs, theirs + qps));
  }
  BRAID_RETURN_IF_ERROR(agree(bootstrap, connected, "connect its queue pairs"));

  // 4. Side connections.
  socket::SetupOptions options;
  options.ifname = config.socketIfname;
  options.streams = 1;
  options.deadline = Deadline::in(config.timeoutSeconds);
  options.peers = selected;
  BRAID_ASSIGN_OR_RETURN(std::vector<std::vector<socket::Fd>> fds,
                         socket::connectPeers(bootstrap, options));
  pollfds_.push_back(pollfd{device_->channel()->fd, POLLIN, 0});
  const int flags = ::fcntl(device_->channel()->fd, F_GETFL);
  if (flags < 0 || ::fcntl(device_->channel()->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return systemError("ib transport: making the completion channel non-blocking", errno);
  }
  for (int p = 0; p < n; ++p) {
    if (!connectors_[p]) continue;
    links_[p] = std::make_unique<PeerLink>(rank_, p, std::move(fds[p][0]));
    pollfds_.push_back(pollfd{links_[p]->fd(), POLLIN | POLLRDHUP, 0});
  }

  // 5. Everyone is ready to receive.
  return bootstrap.barrier();
}

}  // namespace

Result<std::unique_ptr<Transport>> createIbTransport(Bootstrap& bootstrap, const Config& config,
                                                     std::vector<bool> selection) {
  const int n = bootstrap.nranks();
  if (selection.empty()) selection.assign(n, true);
  if (static_cast<int>(selection.size()) != n) {
    return internalError("ib transport: a selection of " + std::to_string(selection.size()) +
                         " ranks for " + std::to_string(n));
  }
  selection[bootstrap.rank()] = false;
  auto transport = std::make_unique<IbTransport>(bootstrap.rank(), n);
  BRAID_RETURN_IF_ERROR(transport->setup(bootstrap, config, selection));
  return std::unique_ptr<Transport>(std::move(transport));
}

std::string ibUnavailableReason(const Config& config) {
  std::string why;
  const ib::VerbsApi* api = ib::verbsApi(&why);
  if (api == nullptr) return why;
  Result<std::unique_ptr<IbDevice>> dev = IbDevice::open(*api, config.ibHca, config.ibGidIndex, 1);
  return dev.isOk() ? std::string() : dev.status().message();
}

}  // namespace braid::transport
