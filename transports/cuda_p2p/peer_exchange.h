// What the ranks of a cuda_p2p group tell each other at creation,
// through the communicator's bootstrap allgather, and the checks on what they hear.
//
// Creation is two allgathers, so that no rank waits for a peer that already gave up:
//   1. a PeerRecord per rank: its receive region (CUDA IPC handle and, for ranks of the same
//      process, the pointer itself), the FIFO configuration, the device's PCI bus id — or,
//      if the rank failed to set up (cudaMalloc, export), `failed` and the reason;
//   2. one PeerOpenResult per rank: whether it opened every peer's region.
// Every rank sees the same records, so every rank reaches the same verdict: all proceed or
// all return an error naming the first failed rank. Fixed-size, trivially copyable records
// (the allgather moves bytes); `magic` and `version` catch a peer built from another braid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "transports/cuda_p2p/peer_region.h"

namespace braid::transport::cuda_p2p {

constexpr uint32_t kPeerRecordMagic = 0x62704950;  // "PIpb"
constexpr uint32_t kPeerRecordVersion = 1;
constexpr size_t kIpcHandleBytes = 64;  // sizeof(cudaIpcMemHandle_t)

struct PeerRecord {
  uint32_t magic = kPeerRecordMagic;
  uint32_t version = kPeerRecordVersion;
  uint64_t processToken = 0;  // equal for ranks of one process (they share pointers)
  uint64_t regionAddress = 0;
  uint64_t regionBytes = 0;
  PeerFifoConfig config;
  uint32_t failed = 0;
  char busId[32] = {};  // cudaDeviceGetPCIBusId of the rank's device
  uint8_t ipcHandle[kIpcHandleBytes] = {};
  char error[192] = {};  // why it failed, when failed
};

struct PeerOpenResult {
  uint32_t failed = 0;
  char error[192] = {};
};

/// A token unique to this process (random, drawn once): ranks with equal tokens address the
/// same memory, so they use each other's region pointer instead of an IPC handle (which
/// CUDA refuses to open in the process that exported it).
uint64_t thisProcessToken();

/// Copies `message` into a record's fixed error field (truncated, terminated).
void setPeerError(char (&field)[192], const std::string& message);

/// Checks round 1 from `rank`'s view: every record well-formed, none failed, all with
/// `rank`'s configuration and region size. The first problem, naming its rank, else ok.
Status checkPeerRecords(const std::vector<PeerRecord>& records, int rank);

/// Checks round 2: the first rank that could not open a peer's region, else ok.
Status checkPeerOpens(const std::vector<PeerOpenResult>& results);

}  // namespace braid::transport::cuda_p2p
