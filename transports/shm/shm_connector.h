// The shm link between this rank and one peer: an outbound FIFO in the peer's
// segment (this rank is its only sender) and an inbound FIFO in this rank's
// segment (the peer is its only sender). See fifo.h for the FIFO protocol.
//
// Posted sends and receives wait in FIFO queues; progress() copies fragments
// of the oldest send into free room of the outbound FIFO (fragment_packer.h) and delivers
// fragments from the inbound FIFO to the oldest receive — straight from the FIFO into the
// user's buffer, or through the reduce kernel (data touched once). A send is
// done once its last fragment is in the FIFO, so it never waits for the peer's
// receive unless the FIFO is full. After moving anything, progress() wakes
// the peer only if it is asleep.
//
// Single copy (single_copy.h): a send of >= singleCopyBytes (when the link
// allows it; by default only from a buffer mostly in huge pages, or an all-to-all block
// (postBlockSend) of >= kBlockSingleCopyBytes from a buffer below blockExtentBelow, which
// the transport sets only for oversubscribed hosts) publishes one rendezvous fragment
// and waits in awaitingReads_ until the peer's head passes that fragment, i.e. the peer has read it
// all. The receiver reads such a message in pieces of at most kPieceBudgetBytes per progress()
// call, so one huge message does not stall the other links.
//
// Under the default rule a link whose ranks sit far apart on the host (copy_pace.h: the
// sender's copies into slots run far below cache speed) also sends messages of at least
// CopyPace::kFarSingleCopyBytes single-copy, from any pages, while it stays far.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "transports/connector.h"
#include "transports/shm/control_block.h"
#include "transports/shm/copy_pace.h"
#include "transports/shm/fifo.h"
#include "transports/shm/fragment_packer.h"
#include "transports/shm/single_copy.h"

namespace braid::transport::shm {

/// Whether and from which size messages on one link go single-copy.
struct SingleCopyLink {
  // 0: never (CMA unavailable in either direction, or turned off);
  // Config::kAutoBytes: the default rule (single_copy.h: kAutoSingleCopyBytes,
  // and only from huge pages); else every message of at least this size.
  size_t minBytes = 0;
  PeerMemory peer;             // where the peer's send buffers are read from
  bool hugePagesOnly = false;  // set by the connector when resolving kAutoBytes
  // Blocks (postBlockSend) of at least kBlockSingleCopyBytes from a buffer smaller than
  // this go single-copy under the default rule; 0: never (see ShmConnector::postBlockSend).
  size_t blockExtentBelow = 0;
};

class ShmConnector : public Connector {
 public:
  /// The control blocks and FIFOs live in mappings the transport owns and
  /// keeps until after this connector is destroyed.
  ShmConnector(int self, int peer, FifoView inbound, FifoView outbound, ControlBlock* ownControl,
               ControlBlock* peerControl, SingleCopyLink singleCopy, size_t streamStoreBytes = 0);

  int peer() const override { return peer_; }
  Status postSend(const void* src, size_t bytes, Request* req) override;
  Status postBlockSend(const void* src, size_t bytes, size_t extentBytes, Request* req) override;
  Status postRecv(const RecvSink& sink, size_t bytes, Request* req) override;
  Status progress(bool* progressed) override;

  /// True when progress() would move something right now (checked before sleeping).
  bool canProgress() const;
  /// True when a posted send or receive is not done yet.
  bool hasPendingWork() const {
    return !sends_.empty() || !recvs_.empty() || !awaitingReads_.empty();
  }

 private:
  struct PendingSend {
    const uint8_t* src;
    Request* req;
    uint64_t fragments = 0;   // sent so far; a 0-byte message still sends one
    bool singleCopy = false;  // decided once, at postSend
  };
  struct PendingRecv {
    RecvSink sink;
    Request* req;
    uint64_t fragments = 0;
  };
  struct AwaitedRead {     // a published rendezvous send
    uint64_t endFragment;  // done once the peer's head reaches this
    Request* req;
    const void* src;  // the buffer the peer reads
  };

  Status queueSend(const void* src, size_t bytes, bool singleCopy, Request* req);
  bool goesSingleCopy(const void* src, size_t bytes);
  bool moveSends();  // returns whether anything moved
  // Finds room for the next fragment of up to `want` bytes; false while the FIFO is full.
  bool reserve(size_t want, FragmentPacker::Place* place);
  /// The data bytes the next fragment of `send` needs in the FIFO.
  size_t dataWanted(const PendingSend& send) const;
  bool publishRendezvous(PendingSend& send);
  bool completeReadSends();
  Status moveRecvs(bool* moved);
  Status checkSize(const PendingRecv& recv, uint64_t total) const;  // vs the posted size
  // Delivers one fragment of at most `capacity` bytes that lies at `slot`.
  Status deliver(PendingRecv& recv, const SlotHeader& header, const uint8_t* slot, size_t capacity);
  // Reads the next piece of a rendezvous message; *finished once all is read.
  Status readRendezvous(PendingRecv& recv, uint64_t sourceAddress, bool* finished);

  const int self_;
  const int peer_;
  const FifoView inbound_;
  const FifoView outbound_;
  ControlBlock* const ownControl_;   // in this rank's segment (abort word)
  ControlBlock* const peerControl_;  // in the peer's segment (its doorbell)
  const SingleCopyLink singleCopy_;
  // Receives into a buffer of at least this many bytes (RecvSink::extentBytes)
  // copy out of the slots with streaming stores; 0: never.
  const size_t streamStoreBytes_;

  std::deque<PendingSend> sends_;
  std::deque<PendingRecv> recvs_;
  std::deque<AwaitedRead> awaitingReads_;
  std::vector<uint8_t> bounce_;  // rendezvous reduce: peer bytes land here first
  HugePageScanner hugePages_;    // the default single-copy rule asks it per large send
  CopyPace pace_;                // the default rule's far-placement exception
  FragmentPacker packer_;        // where outbound fragments go in the data area
  // This side is the only writer of sendTail_ / recvHead_; sendHeadSeen_ spares a
  // load of the receiver's cache line until the FIFO looks full.
  uint64_t sendTail_ = 0;
  uint64_t sendHeadSeen_ = 0;
  uint64_t recvHead_ = 0;
  Status error_;  // sticky: after a framing error or abort the stream cannot resync
};

}  // namespace braid::transport::shm
