// The root server: one AcceptLoop admitting ranks, then one MAC'd answer to each.
#include "bootstrap/root_server.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/accept_loop.h"
#include "bootstrap/handshake.h"
#include "bootstrap/link.h"
#include "bootstrap/server_threads.h"
#include "bootstrap/wire.h"
#include "core/log.h"

namespace braid::bootstrap {
namespace {

class RootServer {
 public:
  RootServer(Fd listener, const uint8_t (&secret)[kSecretBytes], double timeoutSeconds)
      : listener_(std::move(listener)), deadline_(Deadline::in(timeoutSeconds)) {
    std::memcpy(secret_, secret, kSecretBytes);
  }

  void serve() {
    Status s = gather();
    if (stopping_.load()) s = remoteError("the root's process exited before every rank joined", -1);
    if (!s.isOk()) BRAID_WARN("bootstrap root: %s", s.message().c_str());
    reply(s);
  }

  // From another thread, at exit: closing the listener for reading wakes the accept loop,
  // which then fails, and the ranks already admitted are told why.
  void stop() {
    stopping_.store(true);
    ::shutdown(listener_.get(), SHUT_RDWR);
  }

 private:
  // Admits ranks until all have proved the secret and said hello, or fails.
  Status gather() {
    AcceptLoop loop(listener_.get(), secret_, kRootProtocol, "bootstrap root");
    while (nranks_ == 0 || joined_ < nranks_) {
      Result<Admitted> conn = loop.next(deadline_);
      if (!conn.isOk()) {
        // Ranks that disagree on TLS say more than the timeout of the ones still missing.
        Status disagreement = tlsAgreement();
        return disagreement.isOk() ? conn.status().withContext(missingRanks()) : disagreement;
      }
      Result<wire::RootHelloFields> hello = wire::parseRootHelloFields(conn->fields);
      if (!hello.isOk()) {
        // It knows the secret, so it is one of ours built differently: fail loudly.
        return hello.status().withContext("a rank at " + conn->peer);
      }
      BRAID_RETURN_IF_ERROR(admit(*hello, std::move(*conn)));
    }
    return tlsAgreement();
  }

  Status admit(const wire::RootHelloFields& hello, Admitted conn) {
    if (nranks_ == 0) {
      nranks_ = hello.nranks;
      ranks_.resize(nranks_);
      table_.resize(nranks_);
    }
    if (hello.nranks != nranks_) {
      return invalidArgument("ranks disagree on nranks: " + std::to_string(nranks_) + " vs " +
                             std::to_string(hello.nranks) + " (from rank " +
                             std::to_string(hello.rank) + ")");
    }
    Joined& slot = ranks_[hello.rank];
    if (slot.link.valid()) {
      return invalidArgument("two processes joined as rank " + std::to_string(hello.rank) + " (" +
                             slot.peer + " and " + conn.peer + ")");
    }
    slot.link = Link(std::move(conn.fd));
    slot.transcript = std::move(conn.transcript);
    slot.peer = conn.peer;
    // Each connection goes on as its rank asked, so that every rank can read the answer,
    // even one that disagrees with the others (tlsAgreement tells it).
    slot.tls = (hello.flags & wire::kFlagTls) != 0;
    if (slot.tls) {
      BRAID_RETURN_IF_ERROR(slot.link.startTls(
          /*client=*/false, linkKey(secret_, slot.transcript), deadline_,
          "rank " + std::to_string(hello.rank) + " at " + conn.peer, hello.rank));
    }
    table_[hello.rank] = hello.listen;
    ++joined_;
    return Status::ok();
  }

  // Every rank must run the bootstrap as the lowest rank admitted does, with TLS or
  // without: the ring between them would fail, later and less clearly.
  Status tlsAgreement() const {
    int first = -1;
    std::string differ;
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
      if (!ranks_[r].link.valid()) continue;
      if (first < 0) {
        first = r;
      } else if (ranks_[r].tls != ranks_[first].tls) {
        differ += (differ.empty() ? "" : ", ") + std::to_string(r);
      }
    }
    if (differ.empty()) return Status::ok();
    const char* with = "with TLS (BRAID_SOCKET_TLS=1)";
    const char* without = "without TLS";
    const bool tls = ranks_[first].tls;
    return invalidUsage("ranks disagree on BRAID_SOCKET_TLS: rank " + std::to_string(first) +
                        " runs the bootstrap " + (tls ? with : without) + ", rank(s) " + differ +
                        " " + (tls ? without : with) + "; set it alike on every rank");
  }

  // Who has not come, for the error that ends a gather early: a rank that never joins is
  // named, so the ranks that did come learn whom they waited for.
  std::string missingRanks() const {
    if (nranks_ == 0) return "no rank joined";
    std::string list;
    int missing = 0;
    for (int r = 0; r < nranks_; ++r) {
      if (ranks_[r].link.valid()) continue;
      if (++missing <= 8) list += (list.empty() ? "" : ", ") + std::to_string(r);
    }
    if (missing > 8) list += ", ...";
    return (missing == 1 ? "rank " : "ranks ") + list + " of " + std::to_string(nranks_) +
           " did not join";
  }

  // Answers every admitted rank: the table on success, else the reason.
  void reply(const Status& outcome) {
    wire::RootReplyFields fields;
    fields.code = outcome.code();
    fields.message = outcome.message();
    if (outcome.isOk()) fields.table = table_;
    const wire::Bytes encoded = wire::encodeFields(fields);
    for (Joined& rank : ranks_) {
      if (!rank.link.valid()) continue;
      wire::Bytes answer = makeAnswer(secret_, kRootProtocol, rank.transcript, encoded);
      Status s = rank.link.sendAll(answer.data(), answer.size(), deadline_);
      if (!s.isOk())
        BRAID_WARN("bootstrap root: answering %s: %s", rank.peer.c_str(), s.message().c_str());
    }
  }

  // A rank that proved the secret, on the link it will read the answer from.
  struct Joined {
    Link link;
    Transcript transcript;  // the answer's MAC covers it
    std::string peer;       // its address, for messages
    bool tls = false;
  };

  Fd listener_;
  std::atomic<bool> stopping_{false};
  uint8_t secret_[kSecretBytes];
  Deadline deadline_;
  int nranks_ = 0;
  int joined_ = 0;
  std::vector<Joined> ranks_;
  std::vector<WireAddr> table_;
};

}  // namespace

namespace {

void serveInBackground(transport::socket::Fd listener, const uint8_t (&secret)[kSecretBytes],
                       double timeoutSeconds) {
  auto server = std::make_shared<RootServer>(std::move(listener), secret, timeoutSeconds);
  startServerThread([server] { server->serve(); }, [server] { server->stop(); });
}

}  // namespace

Status startRootServer(const SockAddr& address, const uint8_t (&secret)[kSecretBytes],
                       double timeoutSeconds, SockAddr* bound) {
  BRAID_ASSIGN_OR_RETURN(transport::socket::Listener listener,
                         transport::socket::listenOn(address, {}));
  if (bound != nullptr) *bound = listener.address;
  serveInBackground(std::move(listener.fd), secret, timeoutSeconds);
  return Status::ok();
}

Status startRootServerOn(int listenFd, int port, const uint8_t (&secret)[kSecretBytes],
                         double timeoutSeconds) {
  // Checked before taking the descriptor over: a stale BRAID_ROOT_FD may name
  // some other file of this process, which must stay open.
  const std::string what = "BRAID_ROOT_FD=" + std::to_string(listenFd);
  int listening = 0;
  socklen_t len = sizeof(listening);
  if (::getsockopt(listenFd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) {
    return invalidArgument(what + " is not a listening socket");
  }
  BRAID_ASSIGN_OR_RETURN(SockAddr local, transport::socket::localAddress(listenFd));
  if (local.port() != port) {
    return invalidArgument(what + " listens on " + local.toString() + ", not on port " +
                           std::to_string(port) + " of BRAID_ROOT");
  }
  transport::socket::Fd fd(listenFd);
  // The accept loop polls; an inherited socket may still be blocking.
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
  ::fcntl(fd.get(), F_SETFD, FD_CLOEXEC);
  serveInBackground(std::move(fd), secret, timeoutSeconds);
  return Status::ok();
}

}  // namespace braid::bootstrap

namespace braid::bootstrap {

Result<UniqueId> createUniqueId(const std::string& ifname, double timeoutSeconds) {
  UniqueId id;
  BRAID_RETURN_IF_ERROR(randomSecret(id.secret));
  BRAID_ASSIGN_OR_RETURN(transport::socket::NetworkInterface iface,
                         transport::socket::selectInterface(ifname));
  SockAddr address = iface.address;
  SockAddr bound;
  BRAID_RETURN_IF_ERROR(startRootServer(address, id.secret, timeoutSeconds, &bound));
  id.root = WireAddr::from(bound);
  return id;
}

}  // namespace braid::bootstrap
