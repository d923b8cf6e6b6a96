// Socket transport setup.
//
// Phases, identical on every rank, chosen so that no rank ever waits for a
// rank that is itself waiting:
//   1. listen on an ephemeral port of the chosen interface and publish the
//      address with Bootstrap::allGather (a rank that cannot listen publishes
//      an empty record, so the others fail at once instead of timing out);
//   2. connect `streams` sockets to every higher rank and send each a Hello.
//      (Only ranks that SetupOptions::peers selects, in phases 2-4.)
//      connect() completes in the peer's kernel backlog, and a Hello fits in
//      the socket buffer, so this phase never waits for the peer's code;
//   3. accept until every lower rank's `streams` connections have presented a
//      valid Hello, answering each with this rank's Hello. Connections with a
//      wrong magic, secret, communicator, rank or stream, or duplicates, are
//      closed and the wait goes on — a stray client cannot break setup, only
//      the deadline can;
//   4. read the answer on each connection of phase 2, which proves the
//      listener really is the rank it was published as.
#include "transports/socket/socket_setup.h"

#include <poll.h>

#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/crypto.h"
#include "core/log.h"
#include "transports/socket/socket_wire.h"

namespace braid::transport::socket {
namespace {

Hello makeHello(Bootstrap& bootstrap, int stream, int streams) {
  Hello h{};
  h.magic = kHelloMagic;
  std::memcpy(h.secret, bootstrap.secret(), sizeof(h.secret));
  h.tagHash = hashTag(bootstrap.commTag());
  h.rank = bootstrap.rank();
  h.stream = stream;
  h.streams = streams;
  return h;
}

// Why `h` is not acceptable, or "" when it is. A rank of -1 accepts any
// lower rank (the acceptor's side).
std::string helloProblem(const Hello& h, Bootstrap& bootstrap, int streams, int expectedRank,
                         int expectedStream) {
  if (h.magic != kHelloMagic) return "bad magic";
  if (!bootstrap::constantTimeEqual(h.secret, bootstrap.secret(), sizeof(h.secret))) {
    return "wrong secret";
  }
  if (h.tagHash != hashTag(bootstrap.commTag())) return "another communicator";
  if (h.streams != streams) return "a different stream count";
  if (h.stream < 0 || h.stream >= streams) return "stream index out of range";
  if (expectedStream >= 0 && h.stream != expectedStream) return "an unexpected stream index";
  if (expectedRank >= 0) return h.rank == expectedRank ? "" : "an unexpected rank";
  if (h.rank < 0 || h.rank >= bootstrap.rank()) return "a rank that should not connect here";
  return "";
}

// Phase 1's output: every rank's listening address.
Result<std::vector<SocketAddress>> exchangeAddresses(Bootstrap& bootstrap,
                                                     const SocketAddress* mine, int streams,
                                                     int32_t tls) {
  std::vector<AddressRecord> records(bootstrap.nranks());
  AddressRecord& own = records[bootstrap.rank()];
  std::memset(&own, 0, sizeof(own));
  own.streams = streams;
  own.tls = tls;
  if (mine != nullptr) {
    std::memcpy(own.sockaddrBytes, &mine->storage, mine->length);
    own.sockaddrLength = mine->length;
  }
  BRAID_RETURN_IF_ERROR(bootstrap.allGather(records.data(), sizeof(AddressRecord))
                            .withContext("socket transport: exchanging addresses"));
  std::vector<SocketAddress> addresses(records.size());
  for (size_t r = 0; r < records.size(); ++r) {
    int rank = static_cast<int>(r);
    if (records[r].sockaddrLength == 0 || records[r].sockaddrLength > sizeof(sockaddr_storage)) {
      return remoteError(
          "socket transport: rank " + std::to_string(r) + " could not listen or set up TLS", rank);
    }
    if (records[r].streams != streams) {
      return Status(braidInvalidUsage,
                    "socket transport: rank " + std::to_string(r) + " uses " +
                        std::to_string(records[r].streams) + " streams per peer, this rank " +
                        std::to_string(streams) + " (set BRAID_SOCKET_NSTREAMS alike everywhere)",
                    rank);
    }
    if (records[r].tls != tls) {
      return Status(braidInvalidUsage,
                    "socket transport: rank " + std::to_string(r) + " runs " +
                        tlsModeName(records[r].tls) + ", this rank (" +
                        std::to_string(bootstrap.rank()) + ") " + tlsModeName(tls) +
                        "; every rank must set BRAID_SOCKET_TLS (and BRAID_TLS_*) alike",
                    rank);
    }
    std::memcpy(&addresses[r].storage, records[r].sockaddrBytes, records[r].sockaddrLength);
    addresses[r].length = records[r].sockaddrLength;
  }
  return addresses;
}

// Phase 3: accepts until every lower rank's streams have said hello.
class Acceptor {
 public:
  Acceptor(Bootstrap& bootstrap, int listenFd, const SetupOptions& options,
           std::vector<std::vector<Fd>>* peers)
      : bootstrap_(bootstrap), listenFd_(listenFd), options_(options), peers_(*peers) {}

  Status run() {
    int missing = 0;
    for (int r = 0; r < bootstrap_.rank(); ++r) missing += static_cast<int>(peers_[r].size());
    while (missing > 0) {
      if (options_.deadline.expired()) return missingError();
      std::vector<pollfd> fds{{listenFd_, POLLIN, 0}};
      for (const Pending& p : pending_) fds.push_back({p.fd.get(), POLLIN, 0});
      int rc = ::poll(fds.data(), fds.size(), options_.deadline.remainingMs(1000));
      if (rc < 0 && errno != EINTR) return systemError("socket transport: poll", errno);
      if (rc <= 0) continue;
      if (fds[0].revents != 0) BRAID_RETURN_IF_ERROR(acceptAll());
      // In arrival order, so the first claimant of a (rank, stream) slot is judged first.
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents != 0) BRAID_RETURN_IF_ERROR(readHello(&pending_[i - 1], &missing));
      }
      std::erase_if(pending_, [](const Pending& p) { return !p.fd.valid(); });
    }
    return Status::ok();
  }

 private:
  struct Pending {
    Fd fd;
    Hello hello{};
    size_t got = 0;
  };

  Status acceptAll() {
    while (true) {
      BRAID_ASSIGN_OR_RETURN(Fd fd, tryAccept(listenFd_));
      if (!fd.valid()) return Status::ok();
      pending_.push_back(Pending{std::move(fd)});
    }
  }

  // Reads more of a pending hello. A connection that is adopted or dropped
  // leaves p->fd invalid (moved out or closed).
  Status readHello(Pending* p, int* missing) {
    auto* bytes = reinterpret_cast<uint8_t*>(&p->hello);
    Result<IoResult> r = recvSome(p->fd.get(), bytes + p->got, sizeof(Hello) - p->got);
    if (!r.isOk() || r->closed) {
      p->fd.reset();  // a client that left before saying hello
      return Status::ok();
    }
    p->got += r->bytes;
    if (p->got < sizeof(Hello)) return Status::ok();
    std::string problem = helloProblem(p->hello, bootstrap_, options_.streams, -1, -1);
    if (problem.empty() && peers_[p->hello.rank].empty()) {
      problem = "a rank this rank does not connect to";
    } else if (problem.empty() && peers_[p->hello.rank][p->hello.stream].valid()) {
      problem = "a duplicate stream";
    }
    if (!problem.empty()) {
      BRAID_WARN("socket transport: rejected a connection presenting %s", problem.c_str());
      p->fd.reset();
      return Status::ok();
    }
    Hello answer = makeHello(bootstrap_, p->hello.stream, options_.streams);
    Status sent = sendAll(p->fd.get(), &answer, sizeof(answer), options_.deadline);
    if (!sent.isOk()) {
      return remoteError("socket transport: answering rank " + std::to_string(p->hello.rank) +
                             ": " + sent.message(),
                         p->hello.rank);
    }
    peers_[p->hello.rank][p->hello.stream] = std::move(p->fd);
    --*missing;
    return Status::ok();
  }

  Status missingError() const {
    std::string ranks;
    int first = -1;
    for (int r = 0; r < bootstrap_.rank(); ++r) {
      for (const Fd& fd : peers_[r]) {
        if (fd.valid()) continue;
        ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
        if (first < 0) first = r;
        break;
      }
    }
    return timeoutError("socket transport: rank(s) " + ranks +
                            " did not connect before the deadline (BRAID_TIMEOUT)",
                        first);
  }

  Bootstrap& bootstrap_;
  const int listenFd_;
  const SetupOptions& options_;
  std::vector<std::vector<Fd>>& peers_;
  std::vector<Pending> pending_;
};

bool selected(const SetupOptions& options, int peer) {
  return options.peers.empty() || options.peers[peer];
}

}  // namespace

// Several streams per peer pay off where a link is more than one core's copy:
// a NIC whose queues hash flows to different cores, per-flow congestion
// windows on a lossy path. Over loopback every byte is copied once by the
// sending and once by the receiving core whatever the stream count, so extra
// streams only add system calls and fragment headers (perf/RESULTS.md,
// "Socket fragments, streams and buffers"). With one stream a
// peer's abort notice is read from the stream that failed (socket_notice.cc).
int streamsFor(int requested, const std::vector<SocketAddress>& addresses) {
  if (requested > 0) return requested;
  for (const SocketAddress& a : addresses) {
    if (!a.sameIp(addresses.front())) return kStreamsAcrossHosts;
  }
  return 1;
}

Result<std::vector<std::vector<Fd>>> connectPeers(Bootstrap& bootstrap,
                                                  const SetupOptions& options) {
  const int rank = bootstrap.rank();
  const int nranks = bootstrap.nranks();
  const int requested = options.streams;
  if (!options.peers.empty() && static_cast<int>(options.peers.size()) != nranks) {
    return invalidArgument("socket transport: a peer selection of " +
                           std::to_string(options.peers.size()) + " ranks for " +
                           std::to_string(nranks) + " ranks");
  }
  if (requested < 0) {
    return invalidArgument("socket transport: streams per peer must be >= 0 (0: automatic), got " +
                           std::to_string(requested));
  }

  // Phase 1. A local failure still takes part in the exchange (see above).
  Result<NetworkInterface> nic = selectInterface(options.ifname);
  Result<Listener> listener = !options.localFailure.isOk() ? Result<Listener>(options.localFailure)
                              : nic.isOk() ? listenOn(nic->address, options.socketOptions)
                                           : Result<Listener>(nic.status());
  Result<std::vector<SocketAddress>> addresses = exchangeAddresses(
      bootstrap, listener.isOk() ? &listener->address : nullptr, requested, options.tls);
  if (!listener.isOk()) {
    return options.localFailure.isOk() ? listener.status().withContext("socket transport")
                                       : options.localFailure;
  }
  if (!addresses.isOk()) return addresses.status();
  const int streams = streamsFor(requested, *addresses);
  BRAID_INFO("socket transport: rank %d listens on %s (%s), %d stream(s) per peer", rank,
             listener->address.toString().c_str(), nic->name.c_str(), streams);

  std::vector<std::vector<Fd>> peers(nranks);
  for (int p = 0; p < nranks; ++p) {
    if (p != rank && selected(options, p)) peers[p].resize(streams);
  }

  // Phase 2.
  for (int p = rank + 1; p < nranks; ++p) {
    for (int s = 0; s < static_cast<int>(peers[p].size()); ++s) {
      const SocketAddress& to = (*addresses)[p];
      Result<Fd> fd = connectTo(to, options.socketOptions, options.deadline);
      Hello hello = makeHello(bootstrap, s, streams);
      Status st =
          fd.isOk() ? sendAll(fd->get(), &hello, sizeof(hello), options.deadline) : fd.status();
      if (!st.isOk()) {
        return Status(st.code(),
                      "socket transport: connecting to rank " + std::to_string(p) + " at " +
                          to.toString() + ": " + st.message(),
                      p);
      }
      peers[p][s] = std::move(fd.value());
    }
  }

  // Phase 3.
  SetupOptions resolved = options;  // the acceptor checks hellos against the resolved count
  resolved.streams = streams;
  BRAID_RETURN_IF_ERROR(Acceptor(bootstrap, listener->fd.get(), resolved, &peers).run());

  // Phase 4.
  for (int p = rank + 1; p < nranks; ++p) {
    for (int s = 0; s < static_cast<int>(peers[p].size()); ++s) {
      Hello answer{};
      Status st = recvAll(peers[p][s].get(), &answer, sizeof(answer), options.deadline);
      std::string problem =
          st.isOk() ? helloProblem(answer, bootstrap, streams, p, s) : st.message();
      if (!problem.empty()) {
        return Status(st.isOk() ? braidRemoteError : st.code(),
                      "socket transport: the listener published by rank " + std::to_string(p) +
                          " did not answer as rank " + std::to_string(p) + ": " + problem,
                      p);
      }
    }
  }
  return peers;
}

}  // namespace braid::transport::socket
