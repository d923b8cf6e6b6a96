// Socket transport: owns one SocketConnector per peer and one epoll set over
// all their streams.
//
// waitForActivity registers each stream for what it can use now (EPOLLIN
// unless the stream is stalled waiting for a receive to be posted, EPOLLOUT
// only while it has bytes to send, EPOLLRDHUP always), so a level-triggered
// wait never spins. A stream whose peer hung up is dropped from the set. After
// the wait, every connector with an event is progressed, also one the current
// step does not wait on: it reads early headers (its streams then stall and
// stop waking us), abort notices and hang-ups, and decides whether they are
// an error (a hang-up with nothing expected from that peer is not).
//
// abort() shutdown()s the sockets: peers read EOF at once and report a
// braidRemoteError naming this rank, local waiters wake up, and no descriptor
// another thread may be polling is closed (that happens in the destructor).
// When the reason blames a rank (a dead or stalled peer, one named by a
// peer's notice, or this rank itself, e.g. for mismatched calls), it first
// writes an abort notice naming that rank, with the reason, on every stream
// (socket_notice.cc), so every survivor names the same origin. Only the
// engine's failure path (Comm::fail, on the thread that drives the
// communicator's calls) passes such a reason; braidCommAbort from another
// thread blames no rank (peer -1) and only shuts down, so notices never race
// progress(); its peers read EOF and name this rank.
//
// Stalls. A stalled process keeps its connections open (its kernel still
// acknowledges), so nothing tells its peers it stopped; the ranks waiting for
// it time out, and so do live ranks waiting behind them. reportWait sends
// "this rank waits for P" to every peer; receivers keep the latest report of
// each rank in waits_, and waitChain follows it from the awaited peer to the
// first rank that reported no wait: the stalled one.
#include "transports/socket/socket_transport.h"

#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "transports/failure_report.h"
#include "transports/socket/congestion.h"
#include "transports/socket/socket_connector.h"
#include "transports/socket/socket_setup.h"
#include "transports/socket/tls_setup.h"

namespace braid::transport {
namespace {

using socket::AbortState;
using socket::Fd;
using socket::SocketConnector;
using socket::TlsSession;

class SocketTransport final : public Transport {
 public:
  SocketTransport(int rank, Fd epoll) : rank_(rank), epoll_(std::move(epoll)) {}

  /// `fragmentBytes`: BRAID_SOCKET_FRAGMENT_BYTES, 0 for the default (socketFragmentBytes).
  /// `congestion`: BRAID_SOCKET_CONGESTION, for the per-message switch (congestion_switch.h).
  /// `tls`: the streams' TLS sessions, indexed like `peers`, or empty for plain TCP; `context`
  /// (null without TLS) must outlive them, so the transport keeps it.
  Status init(std::vector<std::vector<Fd>> peers, size_t fragmentBytes,
              const std::string& congestion, std::unique_ptr<socket::TlsContext> context = nullptr,
              std::vector<std::vector<TlsSession>> tls = {}) {
    tlsContext_ = std::move(context);
    connectors_.resize(peers.size());
    waits_.assign(peers.size(), -1);
    for (size_t p = 0; p < peers.size(); ++p) {
      if (static_cast<int>(p) == rank_ || peers[p].empty()) continue;  // empty: not selected
      const size_t fragment = socketFragmentBytes(fragmentBytes, static_cast<int>(peers[p].size()));
      connectors_[p] = std::make_unique<SocketConnector>(
          rank_, static_cast<int>(p), static_cast<int>(peers.size()), std::move(peers[p]), &abort_,
          &waits_, fragment, tls.empty() ? std::vector<TlsSession>{} : std::move(tls[p]));
      connectors_[p]->switchCongestionPerMessage(congestion);
      for (int s = 0; s < connectors_[p]->streamCount(); ++s) {
        watches_.push_back(Watch{connectors_[p].get(), s, 0});
      }
    }
    return updateInterest();
  }

  const char* name() const override { return "socket"; }

  Connector* connector(int peer) override {
    if (peer < 0 || peer >= static_cast<int>(connectors_.size())) return nullptr;
    return connectors_[peer].get();
  }

  Status waitForActivity(const Deadline& deadline, int maxWaitMs) override {
    if (abort_.triggered()) return abort_.error();
    for (const auto& c : connectors_) {
      if (c && !c->error().isOk()) return c->error();
      if (c && c->hasStartableWork()) return Status::ok();  // sleeping now would only delay it
    }
    if (tlsContext_ != nullptr) [[unlikely]] {
      // Bytes libssl decrypted ahead are invisible to epoll: read them now.
      bool any = false;
      for (const auto& c : connectors_) {
        if (!c || !c->tlsHoldsData()) continue;
        bool progressed = false;
        BRAID_RETURN_IF_ERROR(c->progress(&progressed));
        any = true;
      }
      if (any) return Status::ok();
    }
    BRAID_RETURN_IF_ERROR(updateInterest());
    epoll_event events[64];
    int timeoutMs = deadline.remainingMs(std::max(0, maxWaitMs));  // never "forever"
    int n = ::epoll_wait(epoll_.get(), events, 64, timeoutMs);
    if (n < 0 && errno != EINTR) return systemError("socket transport: epoll_wait", errno);
    SocketConnector* active[64];
    int activeCount = 0;
    for (int i = 0; i < n; ++i) {
      Watch& w = watches_[events[i].data.u64];
      if ((events[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) {
        w.conn->noteHangup(w.stream);
      }
      if (std::find(active, active + activeCount, w.conn) == active + activeCount) {
        active[activeCount++] = w.conn;
      }
    }
    if (abort_.triggered()) return abort_.error();
    for (int i = 0; i < activeCount; ++i) {
      bool progressed = false;
      BRAID_RETURN_IF_ERROR(active[i]->progress(&progressed));
    }
    return Status::ok();
  }

  void abort(const Status& reason) override {
    if (!abort_.trigger(reason)) return;
    const int origin = reason.peer();
    if (origin >= 0) {
      const std::string why =
          reason.message().empty() ? "no reason given" : firstHandAccount(reason.message());
      socket::deliverAbortNotices(connectors_, origin, why);
    }
    for (const auto& c : connectors_) {
      if (c) c->shutdownStreams();
    }
  }

  void reportWait(int peer) override {
    if (abort_.triggered()) return;
    waits_[rank_] = peer;
    for (const auto& c : connectors_) {
      if (c) c->queueWaitReport(peer);
    }
  }

  std::vector<int> waitChain(int peer) override {
    const int n = static_cast<int>(waits_.size());
    std::vector<int> chain{peer};
    std::vector<bool> onChain(n, false);
    onChain[rank_] = true;
    for (int at = peer; at >= 0 && at < n && waits_[at] >= 0;) {
      onChain[at] = true;
      at = waits_[at];
      // Back to a rank on the chain (this one included): live ranks wait for
      // each other in a cycle (mismatched calls), nobody stalled; blame the peer.
      if (at >= n || onChain[at]) return {peer};
      chain.push_back(at);
    }
    return chain;
  }

 private:
  struct Watch {
    SocketConnector* conn;  // owned by connectors_, which lives as long as watches_
    int stream;
    uint32_t events;  // registered with epoll_ now; 0: not in the set
  };

  // Brings each stream's registration in line with what it can use now.
  Status updateInterest() {
    for (size_t w = 0; w < watches_.size(); ++w) {
      Watch& watch = watches_[w];
      uint32_t wanted = watch.conn->wantedEvents(watch.stream);
      if (wanted == watch.events) continue;
      epoll_event ev{};
      ev.events = wanted;
      ev.data.u64 = w;
      int fd = watch.conn->streamFd(watch.stream);
      // A registered fd reports EPOLLHUP even with no events asked: remove it instead.
      int op = wanted == 0 ? EPOLL_CTL_DEL : watch.events == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
      if (::epoll_ctl(epoll_.get(), op, fd, &ev) != 0) {
        return systemError("socket transport: epoll_ctl", errno);
      }
      watch.events = wanted;
    }
    return Status::ok();
  }

  const int rank_;
  std::unique_ptr<socket::TlsContext> tlsContext_;  // the sessions' SSL_CTX; null without TLS
  // connectors_ point to these two, so they are declared before them.
  AbortState abort_;
  std::vector<int> waits_;  // by rank: the rank it reported waiting for, -1 when none
  Fd epoll_;
  std::vector<std::unique_ptr<SocketConnector>> connectors_;  // null at rank_
  std::vector<Watch> watches_;
};

}  // namespace

// Fragments exist to spread a message over several streams (cross-host peers
// get two, socket_setup.cc); over a single stream they only add headers and
// system calls (strace -c, 2 ranks, 200 x 2 MiB broadcast: 16.7 sends and
// 59 receive calls per broadcast with 256 KiB fragments, 4 and 37 with 2 MiB).
// So one stream takes 1 MiB (the schedules' pipelining chunk, BRAID_CHUNK_BYTES:
// one fragment per chunk) and several keep 256 KiB; larger fragments gained
// nothing more (perf/RESULTS.md, "Socket fragments, streams and buffers").
size_t socketFragmentBytes(size_t configured, int streams) {
  constexpr size_t kSingleStreamFragmentBytes = 1 << 20;
  if (configured != 0) return configured;
  return streams == 1 ? kSingleStreamFragmentBytes : SocketConnector::kFragmentBytes;
}

Result<std::unique_ptr<Transport>> createSocketTransport(Bootstrap& bootstrap, const Config& config,
                                                         std::vector<bool> selection) {
  if (config.socketStreams < 0 || config.socketStreams > 64) {
    return invalidArgument(
        "socket transport: BRAID_SOCKET_NSTREAMS must be in 0..64 (0: automatic), got " +
        std::to_string(config.socketStreams));
  }
  socket::SetupOptions options;
  options.ifname = config.socketIfname;
  options.streams = config.socketStreams;
  // By default (0) the kernel sizes both buffers as the connection runs, as
  // OpenMPI's TCP BTL leaves it (btl_tcp_sndbuf/rcvbuf = 0). A fixed size
  // turns receive autotuning off and is capped by net.core.[rw]mem_max, so
  // large transfers stall on a full window (perf/RESULTS.md, "Socket
  // fragments, streams and buffers").
  BRAID_RETURN_IF_ERROR(checkSocketFragmentBytes(config.socketFragmentBytes));
  options.socketOptions.sendBufferBytes = config.socketBufferBytes;
  options.socketOptions.recvBufferBytes = config.socketBufferBytes;
  options.deadline = Deadline::in(config.timeoutSeconds);
  options.peers = std::move(selection);
  socket::TlsOptions tlsOptions;
  tlsOptions.enabled = config.socketTls;
  tlsOptions.certFile = config.tlsCertFile;
  tlsOptions.keyFile = config.tlsKeyFile;
  tlsOptions.caFile = config.tlsCaFile;
  tlsOptions.kernelTls = config.socketKernelTls;
  options.tls = !tlsOptions.enabled             ? socket::kPlainTcp
                : tlsOptions.usesCertificates() ? socket::kTlsCertificates
                                                : socket::kTlsPsk;
  std::unique_ptr<socket::TlsContext> tlsContext;
  if (tlsOptions.enabled) {
    if (!tlsOptions.usesCertificates()) tlsOptions.psk = bootstrap.deriveKey("socket tls psk");
    Result<std::unique_ptr<socket::TlsContext>> created = socket::TlsContext::create(tlsOptions);
    if (created.isOk()) {
      tlsContext = std::move(created.value());
    } else {
      options.localFailure = created.status();
    }
  }
  BRAID_ASSIGN_OR_RETURN(std::vector<std::vector<Fd>> peers,
                         socket::connectPeers(bootstrap, options));
  for (const std::vector<Fd>& streams : peers) {
    for (const Fd& fd : streams) {
      BRAID_RETURN_IF_ERROR(socket::applyCongestionControl(fd.get(), config.socketCongestion));
    }
  }
  std::vector<std::vector<TlsSession>> sessions;
  if (tlsContext != nullptr) {
    BRAID_ASSIGN_OR_RETURN(
        sessions, socket::startTls(*tlsContext, bootstrap.rank(), peers, options.deadline));
  }

  Fd epoll(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll.valid()) return systemError("socket transport: epoll_create1", errno);
  auto transport = std::make_unique<SocketTransport>(bootstrap.rank(), std::move(epoll));
  BRAID_RETURN_IF_ERROR(transport->init(std::move(peers), config.socketFragmentBytes,
                                        config.socketCongestion, std::move(tlsContext),
                                        std::move(sessions)));
  return std::unique_ptr<Transport>(std::move(transport));
}

}  // namespace braid::transport
