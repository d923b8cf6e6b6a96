// Joining the root and connecting the ring (see tcp_bootstrap.h).
#include "bootstrap/tcp_bootstrap.h"

#include <cstring>
#include <thread>
#include <vector>

#include "bootstrap/accept_loop.h"
#include "bootstrap/crypto.h"
#include "bootstrap/initiator.h"
#include "bootstrap/wire.h"
#include "core/log.h"

namespace braid::bootstrap {

std::array<uint8_t, 32> TcpBootstrap::deriveKey(std::string_view purpose) const {
  std::array<uint8_t, 32> key;
  hkdfSha256(secret_, {}, std::string("braid key: ") + std::string(purpose), key);
  return key;
}

namespace {
// How much longer a rank waits for the root's answer than the root waits for ranks.
constexpr double kRootVerdictGraceSeconds = 1;
}  // namespace

Result<std::unique_ptr<TcpBootstrap>> TcpBootstrap::join(const UniqueId& id, int rank, int nranks,
                                                         double timeoutSeconds,
                                                         const std::string& tagPrefix, bool tls) {
  if (nranks < 1 || nranks > wire::kMaxRanks || rank < 0 || rank >= nranks) {
    return invalidArgument("bootstrap: rank " + std::to_string(rank) + " of " +
                           std::to_string(nranks) + " (the TCP bootstrap takes 1.." +
                           std::to_string(wire::kMaxRanks) + " ranks)");
  }
  std::unique_ptr<TcpBootstrap> b(new TcpBootstrap(rank, nranks, timeoutSeconds, tls));
  std::memcpy(b->secret_, id.secret, kSecretBytes);
  // What leaves the bootstrap is derived from the secret, never the secret itself: the tag
  // names shared-memory segments anyone on the host can list, and transports send their
  // key in their own hellos.
  const Digest tag = deriveFromSecret(id.secret, "braid comm tag");
  b->tag_ = tagPrefix + toHex(tag.data(), 4);
  const Digest transportKey = deriveFromSecret(id.secret, "braid transport key");
  std::memcpy(b->transportKey_, transportKey.data(), kSecretBytes);
  Deadline deadline = Deadline::in(timeoutSeconds);

  SockAddr rootAddr = id.root.toSockAddr();
  BRAID_ASSIGN_OR_RETURN(Fd rootFd, transport::socket::connectTo(rootAddr, {}, deadline));
  Link root(std::move(rootFd));
  // Listen on the interface that routes to the root: peers can reach it too.
  BRAID_ASSIGN_OR_RETURN(SockAddr self, transport::socket::localAddress(root.fd()));
  self.setPort(0);
  BRAID_ASSIGN_OR_RETURN(transport::socket::Listener listener,
                         transport::socket::listenOn(self, {}));

  wire::RootHelloFields hello{.rank = rank,
                              .nranks = nranks,
                              .listen = WireAddr::from(listener.address),
                              .flags = tls ? wire::kFlagTls : 0};
  // The root's own deadline started before this rank came (when the id was made), so its
  // verdict, naming any rank that never joined, arrives within the grace below.
  const Deadline answerDeadline = Deadline::in(timeoutSeconds + kRootVerdictGraceSeconds);
  Result<wire::Bytes> answer =
      initiateHandshake(root, id.secret, kRootProtocol, wire::encodeFields(hello), answerDeadline,
                        "the bootstrap root at " + rootAddr.toString(), tls);
  if (!answer.isOk() && answer.status().code() != braidTimeout) {
    return answer.status().withContext(
        "bootstrap: the root at " + rootAddr.toString() + " dropped rank " + std::to_string(rank) +
        " (it drops ranks whose unique id carries another secret, and ends at its deadline)");
  }
  if (!answer.isOk()) {
    return answer.status().withContext("bootstrap: waiting for all " + std::to_string(nranks) +
                                       " ranks to reach the root at " + rootAddr.toString());
  }
  BRAID_ASSIGN_OR_RETURN(wire::RootReplyFields reply, wire::parseRootReplyFields(*answer, nranks));
  if (reply.code != braidSuccess) {
    return Status(static_cast<braidResult_t>(reply.code), "bootstrap root: " + reply.message);
  }
  if (nranks > 1) BRAID_RETURN_IF_ERROR(b->connectRing(reply.table, std::move(listener.fd)));
  if (tls) {
    BRAID_INFO(
        "bootstrap: rank %d runs TLS 1.3 (key from the unique id) on its links, records by %s",
        rank, (nranks > 1 ? b->next_ : root).recordLayer());
  }
  BRAID_TRACE("bootstrap: rank %d of %d joined, tag %s", rank, nranks, b->tag_.c_str());
  return b;
}

Status TcpBootstrap::connectRing(const std::vector<WireAddr>& table, Fd listener) {
  Deadline deadline = Deadline::in(timeoutSeconds_);
  const int next = (rank_ + 1) % nranks_;
  const int prev = (rank_ + nranks_ - 1) % nranks_;
  // Every rank connects to its next while accepting from its previous. The connecting
  // handshake waits for the next rank's accept loop, so the two halves must run at the
  // same time (one after the other would deadlock around the ring): the outgoing one on
  // a helper thread, joined before returning.
  Result<Link> outgoing = internalError("bootstrap: the ring connector did not run");
  std::thread connector([&] { outgoing = connectNext(table[next], next, deadline); });
  Status incoming = acceptPrev(listener.get(), prev, deadline);
  connector.join();
  BRAID_RETURN_IF_ERROR(incoming);
  if (!outgoing.isOk()) return outgoing.status();
  next_ = std::move(*outgoing);
  return Status::ok();
}

Result<Link> TcpBootstrap::connectNext(const WireAddr& address, int next,
                                       const Deadline& deadline) const {
  const std::string peer =
      "rank " + std::to_string(next) + " at " + address.toSockAddr().toString();
  BRAID_ASSIGN_OR_RETURN(Fd fd, transport::socket::connectTo(address.toSockAddr(), {}, deadline));
  Link link(std::move(fd));
  const wire::RingHelloFields hello{.rank = rank_, .flags = tls_ ? wire::kFlagTls : 0};
  Result<wire::Bytes> proof = initiateHandshake(
      link, secret_, kRingProtocol, wire::encodeFields(hello), deadline, peer, tls_, next);
  if (!proof.isOk()) return proof.status().withContext("bootstrap ring");
  if (!proof->empty()) {
    return Status(braidRemoteError, "bootstrap ring: " + peer + " sent a proof with extra fields",
                  next);
  }
  return link;
}

Status TcpBootstrap::acceptPrev(int listener, int prev, const Deadline& deadline) {
  AcceptLoop loop(listener, secret_, kRingProtocol,
                  "bootstrap rank " + std::to_string(rank_) + " (ring)");
  while (!prev_.valid()) {
    Result<Admitted> conn = loop.next(deadline);
    if (!conn.isOk()) {
      return Status(conn.status().code(),
                    "waiting for rank " + std::to_string(prev) + ": " + conn.status().message(),
                    prev);
    }
    Result<wire::RingHelloFields> hello = wire::parseRingHelloFields(conn->fields);
    if (!hello.isOk() || hello->rank != prev) {
      BRAID_WARN("bootstrap: rank %d expected rank %d on its ring listener, %s came", rank_, prev,
                 conn->peer.c_str());
      continue;
    }
    const std::string peer = "rank " + std::to_string(prev) + " at " + conn->peer;
    if (((hello->flags & wire::kFlagTls) != 0) != tls_) {
      // The root admits only ranks that agree, so this is no rank of this communicator's
      // root: refuse it loudly rather than wait for the real one.
      return Status(braidInvalidUsage,
                    "bootstrap ring: " + peer + " runs the bootstrap " +
                        (tls_ ? "without TLS" : "with TLS (BRAID_SOCKET_TLS=1)") + ", this rank " +
                        (tls_ ? "with it" : "without it"),
                    prev);
    }
    Link link(std::move(conn->fd));
    if (tls_) {
      BRAID_RETURN_IF_ERROR(
          link.startTls(false, linkKey(secret_, conn->transcript), deadline, peer, prev));
    }
    wire::Bytes proof = makeAnswer(secret_, kRingProtocol, conn->transcript, {});
    Status sent = link.sendAll(proof.data(), proof.size(), deadline);
    if (!sent.isOk())
      return remoteError("bootstrap ring: answering " + peer + ": " + sent.message(), prev);
    prev_ = std::move(link);
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
    Status st = sendRecv(next_, (rank_ + 1) % nranks_, base + sendSlot * bytes, bytes, prev_,
                         (rank_ + nranks_ - 1) % nranks_, base + recvSlot * bytes, bytes, deadline);
    if (!st.isOk()) {
      next_.cut();
      prev_.cut();
      return st.withContext("bootstrap allGather (rank " + std::to_string(rank_) + ")");
    }
  }
  return Status::ok();
}

Status TcpBootstrap::barrier() {
  std::vector<uint8_t> token(nranks_);
  return allGather(token.data(), 1);
}

}  // namespace braid::bootstrap
