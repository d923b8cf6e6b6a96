// The root server: one AcceptLoop admitting ranks, then one MAC'd answer to each.
#include "bootstrap/root_server.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/accept_loop.h"
#include "bootstrap/handshake.h"
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
    if (!s.isOk()) BRAID_WARN("bootstrap root: %s", s.message().c_str());
    reply(s);
  }

 private:
  // Admits ranks until all have proved the secret and said hello, or fails.
  Status gather() {
    AcceptLoop loop(listener_.get(), secret_, kRootProtocol, "bootstrap root");
    while (nranks_ == 0 || joined_ < nranks_) {
      Result<Admitted> next = loop.next(deadline_);
      if (!next.isOk()) return next.status().withContext(missingRanks());
      Admitted conn = std::move(*next);
      Result<wire::RootHelloFields> hello = wire::parseRootHelloFields(conn.fields);
      if (!hello.isOk()) {
        // It knows the secret, so it is one of ours built differently: fail loudly.
        return hello.status().withContext("a rank at " + conn.peer);
      }
      BRAID_RETURN_IF_ERROR(admit(*hello, std::move(conn)));
    }
    return Status::ok();
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
    if (ranks_[hello.rank].fd.valid()) {
      return invalidArgument("two processes joined as rank " + std::to_string(hello.rank) + " (" +
                             ranks_[hello.rank].peer + " and " + conn.peer + ")");
    }
    ranks_[hello.rank] = std::move(conn);
    table_[hello.rank] = hello.listen;
    ++joined_;
    return Status::ok();
  }

  // Who has not come, for the error that ends a gather early: a rank that never joins is
  // named, so the ranks that did come learn whom they waited for.
  std::string missingRanks() const {
    if (nranks_ == 0) return "no rank joined";
    std::string list;
    int missing = 0;
    for (int r = 0; r < nranks_; ++r) {
      if (ranks_[r].fd.valid()) continue;
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
    for (Admitted& rank : ranks_) {
      if (!rank.fd.valid()) continue;
      wire::Bytes answer = makeAnswer(secret_, kRootProtocol, rank.transcript, encoded);
      Status s = transport::socket::sendAll(rank.fd.get(), answer.data(), answer.size(), deadline_);
      if (!s.isOk())
        BRAID_WARN("bootstrap root: answering %s: %s", rank.peer.c_str(), s.message().c_str());
    }
  }

  Fd listener_;
  uint8_t secret_[kSecretBytes];
  Deadline deadline_;
  int nranks_ = 0;
  int joined_ = 0;
  std::vector<Admitted> ranks_;
  std::vector<WireAddr> table_;
};

}  // namespace

namespace {

void serveInBackground(transport::socket::Fd listener, const uint8_t (&secret)[kSecretBytes],
                       double timeoutSeconds) {
  // Detached: the server owns everything it uses and ends by itself, on
  // success or at its deadline, so no handle to it is needed.
  std::thread([server = std::make_shared<RootServer>(std::move(listener), secret, timeoutSeconds)] {
    server->serve();
  }).detach();
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
