#include "bootstrap/tcp_bootstrap.h"

#include <cstring>
#include <vector>

#include "bootstrap/root_server.h"
#include "core/log.h"

namespace braid::bootstrap {
namespace {

struct RingHello {
  static constexpr uint32_t kMagic = 0x474e4952;  // "RING"
  uint32_t magic = kMagic;
  uint8_t secret[kSecretBytes] = {};
  int32_t rank = -1;
};

// How long a connecting neighbour may take to say hello before it is dropped.
constexpr double kHelloSeconds = 5;

}  // namespace

Result<std::unique_ptr<TcpBootstrap>> TcpBootstrap::join(const UniqueId& id, int rank, int nranks,
                                                         double timeoutSeconds,
                                                         const std::string& tagPrefix) {
  std::unique_ptr<TcpBootstrap> b(new TcpBootstrap(rank, nranks, timeoutSeconds));
  std::memcpy(b->secret_, id.secret, kSecretBytes);
  b->tag_ = tagPrefix + toHex(id.secret, 4);
  Deadline deadline = Deadline::in(timeoutSeconds);

  SockAddr rootAddr = id.root.toSockAddr();
  BRAID_ASSIGN_OR_RETURN(Fd root, transport::socket::connectTo(rootAddr, {}, deadline));
  // Listen on the interface that routes to the root: peers can reach it too.
  BRAID_ASSIGN_OR_RETURN(SockAddr self, transport::socket::localAddress(root.get()));
  self.setPort(0);
  BRAID_ASSIGN_OR_RETURN(transport::socket::Listener listener,
                         transport::socket::listenOn(self, {}));

  RootHello hello;
  std::memcpy(hello.secret, id.secret, kSecretBytes);
  hello.rank = rank;
  hello.nranks = nranks;
  hello.listen = WireAddr::from(listener.address);
  BRAID_RETURN_IF_ERROR(transport::socket::sendAll(root.get(), &hello, sizeof(hello), deadline));
  RootReply reply;
  Status s = transport::socket::recvAll(root.get(), &reply, sizeof(reply), deadline);
  if (!s.isOk()) {
    return s.withContext("bootstrap: waiting for all " + std::to_string(nranks) +
                         " ranks to reach the root at " + rootAddr.toString());
  }
  if (reply.code != braidSuccess) {
    reply.message[sizeof(reply.message) - 1] = '\0';
    return Status(static_cast<braidResult_t>(reply.code),
                  std::string("bootstrap root: ") + reply.message);
  }
  std::vector<WireAddr> table(nranks);
  BRAID_RETURN_IF_ERROR(
      transport::socket::recvAll(root.get(), table.data(), nranks * sizeof(WireAddr), deadline));
  if (nranks > 1) BRAID_RETURN_IF_ERROR(b->connectRing(table, std::move(listener.fd)));
  BRAID_TRACE("bootstrap: rank %d of %d joined, tag %s", rank, nranks, b->tag_.c_str());
  return b;
}

Status TcpBootstrap::connectRing(const std::vector<WireAddr>& table, Fd listener) {
  Deadline deadline = Deadline::in(timeoutSeconds_);
  int next = (rank_ + 1) % nranks_;
  int prev = (rank_ + nranks_ - 1) % nranks_;
  // Connecting first is safe: the kernel completes it from the listen backlog.
  BRAID_ASSIGN_OR_RETURN(next_,
                         transport::socket::connectTo(table[next].toSockAddr(), {}, deadline));
  RingHello hello;
  std::memcpy(hello.secret, secret_, kSecretBytes);
  hello.rank = rank_;
  BRAID_RETURN_IF_ERROR(transport::socket::sendAll(next_.get(), &hello, sizeof(hello), deadline));

  while (!prev_.valid()) {
    BRAID_ASSIGN_OR_RETURN(Fd fd, transport::socket::acceptOne(listener.get(), deadline));
    RingHello theirs;
    Deadline helloDeadline = Deadline::in(kHelloSeconds);
    if (deadline.at() < helloDeadline.at()) helloDeadline = deadline;
    if (transport::socket::recvAll(fd.get(), &theirs, sizeof(theirs), helloDeadline).isOk() &&
        theirs.magic == RingHello::kMagic && sameSecret(theirs.secret, secret_) &&
        theirs.rank == prev) {
      prev_ = std::move(fd);
    } else {
      BRAID_WARN("bootstrap: rejected a connection that did not prove the secret");
    }
  }
  return Status::ok();
}

Status TcpBootstrap::allGather(void* data, size_t bytes) {
  auto* base = static_cast<uint8_t*>(data);
  Deadline deadline = Deadline::in(timeoutSeconds_);
  // Step s: pass on the slot received in step s-1 (own slot first).
  for (int s = 0; s < nranks_ - 1; ++s) {
    int sendSlot = (rank_ - s + nranks_) % nranks_;
    int recvSlot = (rank_ - s - 1 + nranks_) % nranks_;
    Status st = sendRecv(next_.get(), base + sendSlot * bytes, bytes, prev_.get(),
                         base + recvSlot * bytes, bytes, deadline);
    if (!st.isOk())
      return st.withContext("bootstrap allGather (rank " + std::to_string(rank_) + ")");
  }
  return Status::ok();
}

Status TcpBootstrap::barrier() {
  std::vector<uint8_t> token(nranks_);
  return allGather(token.data(), 1);
}

}  // namespace braid::bootstrap
