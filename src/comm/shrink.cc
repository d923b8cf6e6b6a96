#include "comm/shrink.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "bootstrap/crypto.h"
#include "bootstrap/root_server.h"
#include "comm/comm.h"
#include "core/log.h"

namespace braid {
namespace {

namespace sock = transport::socket;

// How long one connecting survivor may take to say hello before it is dropped.
constexpr double kHelloSeconds = 5;
// How much longer a follower waits for the leader than the leader waits for followers.
constexpr double kVerdictGraceSeconds = 2;

struct ShrinkHello {
  static constexpr uint32_t kMagic = 0x4b524853;  // "SHRK"
  uint32_t magic = kMagic;
  int32_t rank = -1;  // old rank of the sender
  uint64_t digest = 0;
  uint8_t secret[bootstrap::kSecretBytes] = {};
};

struct ShrinkReply {
  int32_t code = braidSuccess;
  char message[220] = {};
  braidUniqueId id = {};
};

ShrinkReply errorReply(const Status& s) {
  ShrinkReply r;
  r.code = s.code();
  std::snprintf(r.message, sizeof(r.message), "%s", s.message().c_str());
  return r;
}

std::string rankList(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

// FNV-1a over the old size and the sorted excluded ranks: survivors that
// disagree on whom to exclude get different digests and are told so.
uint64_t excludeDigest(int nranks, const std::vector<int>& sortedExclude) {
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](int32_t v) {
    for (int i = 0; i < 4; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
  };
  mix(nranks);
  for (int r : sortedExclude) mix(r);
  return h;
}

}  // namespace

Result<std::unique_ptr<ShrinkRendezvous>> ShrinkRendezvous::create(transport::Bootstrap& bootstrap,
                                                                   const std::string& ifname,
                                                                   bool tls) {
  auto rv = std::unique_ptr<ShrinkRendezvous>(new ShrinkRendezvous());
  rv->tls_ = tls;
  if (tls) rv->tlsKey_ = bootstrap.deriveKey("shrink rendezvous tls");
  rv->table_.resize(bootstrap.nranks());
  BRAID_ASSIGN_OR_RETURN(sock::NetworkInterface iface, sock::selectInterface(ifname));
  BRAID_ASSIGN_OR_RETURN(sock::Listener listener, sock::listenOn(iface.address, {}));
  rv->listener_ = std::move(listener.fd);
  rv->table_[bootstrap.rank()] = bootstrap::WireAddr::from(listener.address);
  BRAID_RETURN_IF_ERROR(bootstrap.allGather(rv->table_.data(), sizeof(bootstrap::WireAddr)));
  return rv;
}

Status ShrinkRendezvous::secure(bootstrap::Link& link, bool client, const Deadline& deadline,
                                const std::string& peer, int peerRank) const {
  if (!tls_) return Status::ok();
  return link.startTls(client, tlsKey_, deadline, peer, peerRank);
}

Result<bootstrap::UniqueId> ShrinkRendezvous::agree(const std::vector<int>& survivors, int rank,
                                                    const uint8_t* secret, uint64_t digest,
                                                    const std::string& ifname,
                                                    double timeoutSeconds) {
  if (survivors.front() == rank) return lead(survivors, secret, digest, ifname, timeoutSeconds);
  return follow(survivors.front(), rank, secret, digest, timeoutSeconds);
}

Result<bootstrap::UniqueId> ShrinkRendezvous::lead(const std::vector<int>& survivors,
                                                   const uint8_t* secret, uint64_t digest,
                                                   const std::string& ifname,
                                                   double timeoutSeconds) {
  const Deadline deadline = Deadline::in(timeoutSeconds);
  std::vector<bootstrap::Link> conns(table_.size());
  std::vector<int> missing(survivors.begin() + 1, survivors.end());
  Status failure;
  while (!missing.empty() && failure.isOk()) {
    auto fd = sock::acceptOne(listener_.get(), deadline);
    if (!fd.isOk()) {
      failure = timeoutError(std::string("braidCommShrink: survivor ") +
                                 (missing.size() == 1 ? "rank " : "ranks ") + rankList(missing) +
                                 " did not reach the leader within BRAID_TIMEOUT",
                             missing.front());
      break;
    }
    ShrinkHello hello;
    Deadline helloDeadline = Deadline::in(kHelloSeconds);
    if (deadline.at() < helloDeadline.at()) helloDeadline = deadline;
    bootstrap::Link link(std::move(*fd));
    if (Status t = secure(link, /*client=*/false, helloDeadline, "a survivor", -1); !t.isOk()) {
      BRAID_WARN("braidCommShrink: rejected a connection: %s", t.message().c_str());
      continue;
    }
    if (!link.recvAll(&hello, sizeof(hello), helloDeadline).isOk() ||
        hello.magic != ShrinkHello::kMagic ||
        !bootstrap::constantTimeEqual(hello.secret, secret, bootstrap::kSecretBytes)) {
      BRAID_WARN("braidCommShrink: rejected a connection that did not prove the secret");
      continue;
    }
    auto it = std::find(missing.begin(), missing.end(), hello.rank);
    if (it == missing.end()) {
      BRAID_WARN("braidCommShrink: ignored a hello from rank %d, which is not awaited", hello.rank);
      continue;  // excluded, duplicate, or a stale attempt: none of them joins
    }
    missing.erase(it);
    if (hello.digest != digest) {
      failure = invalidUsage("braidCommShrink: rank " + std::to_string(hello.rank) +
                             " excludes a different set of ranks than rank " +
                             std::to_string(survivors.front()));
    }
    conns[hello.rank] = std::move(link);
  }

  Result<bootstrap::UniqueId> id = failure.isOk()
                                       ? bootstrap::createUniqueId(ifname, timeoutSeconds)
                                       : Result<bootstrap::UniqueId>(failure);
  ShrinkReply reply = id.isOk() ? ShrinkReply{} : errorReply(id.status());
  if (id.isOk()) id->writeTo(&reply.id);
  for (bootstrap::Link& link : conns) {
    if (!link.valid()) continue;
    Status s = link.sendAll(&reply, sizeof(reply), deadline);
    if (!s.isOk()) BRAID_WARN("braidCommShrink: %s", s.message().c_str());
  }
  return id;
}

Result<bootstrap::UniqueId> ShrinkRendezvous::follow(int leader, int rank, const uint8_t* secret,
                                                     uint64_t digest, double timeoutSeconds) {
  // A little longer than the leader waits, so that its verdict (say, naming
  // a survivor that never came) arrives before this rank gives up on it.
  const Deadline deadline = Deadline::in(timeoutSeconds + kVerdictGraceSeconds);
  const std::string where = "braidCommShrink: leader rank " + std::to_string(leader);
  auto fd = sock::connectTo(table_[leader].toSockAddr(), {}, deadline);
  if (!fd.isOk()) {
    return Status(fd.status().code(), where + " is unreachable: " + fd.status().message(), leader);
  }
  ShrinkHello hello;
  hello.rank = rank;
  hello.digest = digest;
  std::memcpy(hello.secret, secret, bootstrap::kSecretBytes);
  ShrinkReply reply;
  bootstrap::Link link(std::move(*fd));
  Status s =
      secure(link, /*client=*/true, deadline, "leader rank " + std::to_string(leader), leader);
  if (s.isOk()) s = link.sendAll(&hello, sizeof(hello), deadline);
  if (s.isOk()) s = link.recvAll(&reply, sizeof(reply), deadline);
  if (!s.isOk()) return Status(s.code(), where + " did not answer: " + s.message(), leader);
  if (reply.code != braidSuccess) {
    reply.message[sizeof(reply.message) - 1] = '\0';
    return Status(static_cast<braidResult_t>(reply.code), reply.message, leader);
  }
  return bootstrap::UniqueId::readFrom(reply.id);
}

Result<std::unique_ptr<Comm>> shrinkComm(Comm& comm, const std::vector<int>& exclude) {
  BRAID_ASSIGN_OR_RETURN(JoinPlan plan, planShrink(comm, exclude));
  if (!plan.joins()) return std::unique_ptr<Comm>();
  return Comm::create(plan.id, plan.nranks, plan.rank, plan.tagPrefix);
}

Result<JoinPlan> planShrink(Comm& comm, const std::vector<int>& exclude) {
  std::vector<int> sorted = exclude;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (int r : sorted) {
    if (r < 0 || r >= comm.nranks()) {
      return invalidArgument("braidCommShrink: excluded rank " + std::to_string(r) +
                             " is out of range for a communicator of " +
                             std::to_string(comm.nranks()) + " ranks");
    }
  }
  JoinPlan plan;
  if (std::binary_search(sorted.begin(), sorted.end(), comm.rank())) {
    return plan;  // this rank is left out
  }
  std::vector<int> survivors;
  int newRank = -1;
  for (int r = 0; r < comm.nranks(); ++r) {
    if (std::binary_search(sorted.begin(), sorted.end(), r)) continue;
    if (r == comm.rank()) newRank = static_cast<int>(survivors.size());
    survivors.push_back(r);
  }
  const double timeout = comm.config().timeoutSeconds;
  bootstrap::UniqueId id;
  if (survivors.size() == 1) {
    BRAID_ASSIGN_OR_RETURN(id, bootstrap::createUniqueId(comm.config().socketIfname, timeout));
  } else {
    BRAID_ASSIGN_OR_RETURN(
        id, comm.shrinkRendezvous().agree(survivors, comm.rank(), comm.bootstrap().secret(),
                                          excludeDigest(comm.nranks(), sorted),
                                          comm.config().socketIfname, timeout));
  }
  BRAID_INFO("braidCommShrink: rank %d becomes rank %d of %zu", comm.rank(), newRank,
             survivors.size());
  plan.id = id;
  plan.nranks = static_cast<int>(survivors.size());
  plan.rank = newRank;
  plan.tagPrefix = comm.tagPrefix();
  return plan;
}

}  // namespace braid
