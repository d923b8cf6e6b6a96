// Configuration: defaults, overridden by BRAID_* environment variables.
//
// Read once per communicator at init, so a test can change the environment
// between communicators. Every variable is documented in the README.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/status.h"

namespace braid {

struct Config {
  double timeoutSeconds = 300;  // BRAID_TIMEOUT: every wait's deadline
  std::string transport;        // BRAID_TRANSPORT: "" (auto) | shm | socket | mixed | ib
  std::string algorithm;        // BRAID_ALGO: "" (auto) or a spec (core/selection_spec.h)
  std::string protocol;         // BRAID_PROTO: "" (auto) or a spec of simple | ll | ll128
  size_t chunkBytes = 1 << 20;  // BRAID_CHUNK_BYTES: pipelining granularity
  bool chunkBytesSet = false;   // BRAID_CHUNK_BYTES was given; else defaultChunkBytes() rules
  // Shared-memory transport.
  size_t shmSlotBytes = 128 << 10;  // BRAID_SHM_SLOT_BYTES: one FIFO slot
  int shmSlots = 8;                 // BRAID_SHM_SLOTS: FIFO depth per peer and direction
  // BRAID_SHM_SINGLE_COPY_BYTES: CMA single copy for messages of at least this many bytes; 0 off;
  // unset (kAutoBytes): from 256 KiB, for send buffers in huge pages
  // (transports/shm/single_copy.h).
  size_t shmSingleCopyBytes = kAutoBytes;
  // BRAID_STREAM_STORE_BYTES: a receive (plain or reducing) into a buffer of at least this many
  // bytes writes it with non-temporal stores (core/kernels/copy.h, reduce.h); 0 off; unset
  // (kAutoBytes): each local rank's share of the last-level cache.
  static constexpr size_t kAutoBytes = ~size_t{0};
  size_t streamStoreBytes = kAutoBytes;
  // Socket transport.
  std::string socketIfname;        // BRAID_SOCKET_IFNAME: interface (prefix) to use
  int socketStreams = 0;           // BRAID_SOCKET_NSTREAMS: TCP connections per peer; 0: automatic
  size_t socketBufferBytes = 0;    // BRAID_SOCKET_BUFFER_BYTES: SO_SNDBUF/RCVBUF; 0: autotuned
  size_t socketFragmentBytes = 0;  // BRAID_SOCKET_FRAGMENT_BYTES; 0: auto (socket_transport.h)
  // BRAID_SOCKET_CONGESTION: the TCP congestion control of the socket streams. "auto" (unset):
  // streams between two ranks on one host run reno, the others the system's default;
  // "system": every stream the system's default; a name (e.g. "cubic"): every stream that one
  // (transports/socket/congestion.h).
  std::string socketCongestion = "auto";
  // BRAID_SOCKET_TLS=1: TLS 1.3 on every socket stream (transports/socket/tls.h), keyed by the
  // communicator's secret, or by certificates when BRAID_TLS_CERT/KEY/CA name all three files.
  bool socketTls = false;
  std::string tlsCertFile;  // BRAID_TLS_CERT
  std::string tlsKeyFile;   // BRAID_TLS_KEY
  std::string tlsCaFile;    // BRAID_TLS_CA
  // BRAID_SOCKET_KTLS=0: OpenSSL does the records even where the kernel offers kernel TLS
  // (1, the default: the kernel takes over the directions it can; core/net/tls.h).
  bool socketKernelTls = true;
  // The largest socket fragment (the wire's frame length field is 32 bits).
  static constexpr size_t kMaxSocketFragmentBytes = size_t{1} << 30;
  // ibverbs transport (transports/ibverbs/ib_transport.h).
  std::string ibHca;    // BRAID_IB_HCA: "" (first active port) | device | device:port
  int ibGidIndex = -1;  // BRAID_IB_GID_INDEX: -1 automatic (RoCE v2 with an IPv4 address first)
  int ibCredits = 2;    // BRAID_IB_CREDITS: messages a receiver grants ahead, 0..8
  // BRAID_IB_QPS_PER_PEER: reliable-connected queue pairs per peer, 1..kMaxIbQpsPerPeer; a
  // large message's zero-copy part is split over them (striping).
  int ibQpsPerPeer = 1;
  static constexpr int kMaxIbQpsPerPeer = 8;
  // BRAID_IB_TIMEOUT: a queue pair's local ACK timeout, the exponent t of 4.096 us * 2^t
  // (1..31): how long a sent packet may wait for its acknowledgement before the queue pair
  // sends it again. 18 (about 1.07 s) by default, as UCX and NCCL use; a short one resends
  // data that was only late, on a loaded or emulated host (perf/RESULTS.md).
  int ibTimeout = kDefaultIbTimeout;
  static constexpr int kDefaultIbTimeout = 18;
  static constexpr int kMinIbTimeout = 1, kMaxIbTimeout = 31;  // the verbs field's range
  // BRAID_IB_CREDIT_BYTES: the bytes of a message each credit covers, 4 KiB..8 MiB; 0
  // (unset): 64 KiB (IbConnector::kDefaultCreditBytes); larger messages go zero-copy.
  size_t ibCreditBytes = 0;
  static constexpr size_t kMinIbCreditBytes = size_t{4} << 10;
  static constexpr size_t kMaxIbCreditBytes = size_t{8} << 20;
  bool gdr = true;          // BRAID_GDR=0: never register GPU memory with the NIC (host staging)
  int spinIterations = -1;  // BRAID_SPIN: polls before a waiter yields; -1: auto
  // Not a variable: the CPUs this host's ranks may use together (comm/cpu_share.h), found
  // when a communicator is created, for the transports; 0 before then.
  int hostCpus = 0;
  // Not a variable itself: the NUMA node this rank runs on (-1: unknown), found when a
  // communicator is created (src/comm/rank_cache_domain.h; BRAID_NUMA_NODE overrides it). The
  // shm transport puts the rank's inbound FIFOs in that node's memory.
  int numaNode = -1;
  // BRAID_TINY_BYTES: all-reduces of at most this many bytes per rank, and barriers, on shm
  // take the one-round exchange (collectives/select.h); 0 off; at most kMaxTinyBytes.
  size_t tinyBytes = 4096;
  static constexpr size_t kMaxTinyBytes = 64 << 10;
  bool checkArguments = false;  // BRAID_CHECK=1: compare arguments across ranks
  bool p2pDisable = false;  // BRAID_P2P_DISABLE=1: device buffers via the host proxy, not cuda_p2p

  /// Longest BRAID_ALGO / BRAID_PROTO value (ranks exchange them in fixed-size fields).
  static constexpr size_t kMaxSpecLength = 255;
  /// The collectives BRAID_ALGO / BRAID_PROTO rules may name.
  static const std::vector<std::string>& collectiveNames();

  /// Defaults overridden by the environment; a malformed value is an error naming the variable.
  static Result<Config> fromEnv();

  /// The pipelining chunk when BRAID_CHUNK_BYTES is unset, for the agreed
  /// BRAID_TRANSPORT: 512 KiB over sockets, 1 MiB otherwise (config.cc says why).
  static size_t defaultChunkBytes(const std::string& transport);
};

/// OK for 0 (automatic) and powers of two from 4096 to kMaxSocketFragmentBytes
/// (fragment offsets then split no element); else an error naming the variable.
Status checkSocketFragmentBytes(size_t bytes);

}  // namespace braid
