#include "bootstrap/root_server.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "core/log.h"

namespace braid::bootstrap {
namespace {

// How long one connecting client may take to say hello before it is dropped.
constexpr double kHelloSeconds = 5;

class RootServer {
 public:
  RootServer(Fd listener, const uint8_t (&secret)[kSecretBytes], double timeoutSeconds)
      : listener_(std::move(listener)), deadline_(Deadline::in(timeoutSeconds)) {
    std::memcpy(secret_, secret, kSecretBytes);
  }

  void serve() {
    Status s = gather();
    if (s.isOk()) {
      reply(RootReply{});
    } else {
      BRAID_WARN("bootstrap root: %s", s.message().c_str());
      RootReply r;
      r.code = s.code();
      std::snprintf(r.message, sizeof(r.message), "%s", s.message().c_str());
      reply(r);
    }
  }

 private:
  // Accepts ranks until all have said hello, or fails.
  Status gather() {
    while (nranks_ == 0 || joined_ < nranks_) {
      BRAID_ASSIGN_OR_RETURN(Fd fd, transport::socket::acceptOne(listener_.get(), deadline_));
      RootHello hello;
      Deadline helloDeadline = Deadline::in(kHelloSeconds);
      if (deadline_.at() < helloDeadline.at()) helloDeadline = deadline_;
      if (!transport::socket::recvAll(fd.get(), &hello, sizeof(hello), helloDeadline).isOk() ||
          hello.magic != RootHello::kMagic || !sameSecret(hello.secret, secret_)) {
        BRAID_WARN("bootstrap root: rejected a connection that did not prove the secret");
        continue;  // fd closes; the stray client learns nothing
      }
      BRAID_RETURN_IF_ERROR(admit(hello, std::move(fd)));
    }
    return Status::ok();
  }

  Status admit(const RootHello& hello, Fd fd) {
    if (nranks_ == 0) {
      if (hello.nranks <= 0) return invalidArgument("a rank joined with nranks <= 0");
      nranks_ = hello.nranks;
      ranks_.resize(nranks_);
      table_.resize(nranks_);
    }
    if (hello.nranks != nranks_) {
      return invalidArgument("ranks disagree on nranks: " + std::to_string(nranks_) + " vs " +
                             std::to_string(hello.nranks) + " (from rank " +
                             std::to_string(hello.rank) + ")");
    }
    if (hello.rank < 0 || hello.rank >= nranks_) {
      return invalidArgument("a rank joined as rank " + std::to_string(hello.rank) + " of " +
                             std::to_string(nranks_));
    }
    if (ranks_[hello.rank].valid()) {
      return invalidArgument("two processes joined as rank " + std::to_string(hello.rank));
    }
    ranks_[hello.rank] = std::move(fd);
    table_[hello.rank] = hello.listen;
    ++joined_;
    return Status::ok();
  }

  void reply(const RootReply& r) {
    for (auto& fd : ranks_) {
      if (!fd.valid()) continue;
      Status s = transport::socket::sendAll(fd.get(), &r, sizeof(r), deadline_);
      if (s.isOk() && r.code == braidSuccess) {
        s = transport::socket::sendAll(fd.get(), table_.data(), table_.size() * sizeof(WireAddr),
                                       deadline_);
      }
      if (!s.isOk()) BRAID_WARN("bootstrap root: %s", s.message().c_str());
    }
  }

  Fd listener_;
  uint8_t secret_[kSecretBytes];
  Deadline deadline_;
  int nranks_ = 0;
  int joined_ = 0;
  std::vector<Fd> ranks_;
  std::vector<WireAddr> table_;
};

}  // namespace

Status startRootServer(const SockAddr& address, const uint8_t (&secret)[kSecretBytes],
                       double timeoutSeconds, SockAddr* bound) {
  BRAID_ASSIGN_OR_RETURN(transport::socket::Listener listener,
                         transport::socket::listenOn(address, {}));
  if (bound != nullptr) *bound = listener.address;
  // Detached: the server owns everything it uses and ends by itself, on
  // success or at its deadline, so no handle to it is needed.
  std::thread([server =
                   std::make_shared<RootServer>(std::move(listener.fd), secret, timeoutSeconds)] {
    server->serve();
  }).detach();
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
