#include "transports/shm/shm_connector.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/config.h"
#include "core/kernels/copy.h"
#include "transports/failure_report.h"
#include "transports/shm/handoff_annotations.h"

namespace braid::transport::shm {
namespace {

std::string rankName(int rank) { return "rank " + std::to_string(rank); }

// Config::kAutoBytes (BRAID_SHM_SINGLE_COPY_BYTES unset) becomes the default rule.
SingleCopyLink resolve(SingleCopyLink link) {
  if (link.minBytes == Config::kAutoBytes) {
    link.minBytes = kAutoSingleCopyBytes;
    link.hugePagesOnly = true;
  }
  return link;
}

// At most this much of one rendezvous message is read per progress() call.
constexpr size_t kPieceBudgetBytes = 4 << 20;
// A rendezvous reduce reads this much at a time into a bounce buffer that
// stays in cache while the reduce kernel consumes it.
constexpr size_t kBounceBytes = 128 << 10;

}  // namespace

ShmConnector::ShmConnector(int self, int peer, FifoView inbound, FifoView outbound,
                           ControlBlock* ownControl, ControlBlock* peerControl,
                           SingleCopyLink singleCopy, size_t streamStoreBytes)
    : self_(self),
      peer_(peer),
      inbound_(inbound),
      outbound_(outbound),
      ownControl_(ownControl),
      peerControl_(peerControl),
      singleCopy_(resolve(singleCopy)),
      streamStoreBytes_(streamStoreBytes),
      packer_(outbound.nheaders, outbound.dataBytes()) {}

Status ShmConnector::postSend(const void* src, size_t bytes, Request* req) {
  return queueSend(src, bytes, goesSingleCopy(src, bytes), req);
}

Status ShmConnector::postBlockSend(const void* src, size_t bytes, size_t extentBytes,
                                   Request* req) {
  // The default rule's exception for all-to-all blocks (single_copy.h).
  const bool block = singleCopy_.blockExtentBelow != 0 && bytes >= kBlockSingleCopyBytes &&
                     extentBytes < singleCopy_.blockExtentBelow;
  return queueSend(src, bytes, block || goesSingleCopy(src, bytes), req);
}

Status ShmConnector::queueSend(const void* src, size_t bytes, bool singleCopy, Request* req) {
  if (req == nullptr) return invalidArgument("shm: send to " + rankName(peer_) + ": null request");
  if (src == nullptr && bytes > 0) {
    return invalidArgument("shm: send of " + std::to_string(bytes) + " bytes to " +
                           rankName(peer_) + ": null buffer");
  }
  if (!error_.isOk()) return error_;
  *req = Request{bytes, 0, false};
  sends_.push_back(PendingSend{static_cast<const uint8_t*>(src), req, 0, singleCopy});
  return Status::ok();
}

Status ShmConnector::postRecv(const RecvSink& sink, size_t bytes, Request* req) {
  // The message is built only on error: this is every receive's hot path.
  auto bad = [&](const std::string& why) {
    return invalidArgument("shm: receive of " + std::to_string(bytes) + " bytes from " +
                           rankName(peer_) + ": " + why);
  };
  if (req == nullptr) return bad("null request");
  if (sink.dst == nullptr && bytes > 0) return bad("null destination");
  if (sink.reduce != nullptr) {
    if (sink.accum == nullptr && bytes > 0) return bad("null accumulator");
    // Fragments hold multiples of 64 bytes (fifo.h): elements must not straddle them.
    if (sink.elemSize == 0 || kCacheLine % sink.elemSize != 0 || bytes % sink.elemSize != 0) {
      return bad("element size " + std::to_string(sink.elemSize) +
                 " does not divide the message and 64 bytes");
    }
  }
  if (!error_.isOk()) return error_;
  *req = Request{bytes, 0, false};
  recvs_.push_back(PendingRecv{sink, req});
  return Status::ok();
}

Status ShmConnector::progress(bool* progressed) {
  *progressed = false;
  if (!error_.isOk()) return error_;
  if (isAborted(*ownControl_)) {
    error_ = abortStatus(*ownControl_, self_);
    return error_;
  }
  bool sent = completeReadSends();
  sent = moveSends() || sent;
  bool received = false;
  Status status = moveRecvs(&received);
  if (sent || received) {
    *progressed = true;
    // The peer may sleep waiting for these fragments or for these free slots.
    ringIfSleeping(*peerControl_);
  }
  if (!status.isOk()) error_ = status;
  return status;
}

bool ShmConnector::canProgress() const {
  if (!recvs_.empty() && published(inbound_, recvHead_)) return true;
  if (sends_.empty() && awaitingReads_.empty()) return false;
  uint64_t head = outbound_.counters->head.load(std::memory_order_acquire);
  if (!awaitingReads_.empty() && head >= awaitingReads_.front().endFragment) return true;
  if (sends_.empty()) return false;
  return packer_.reserve(sendTail_, head, dataWanted(sends_.front())).fits;
}

size_t ShmConnector::dataWanted(const PendingSend& send) const {
  const Request* req = send.req;
  // A rendezvous and a message inside its header take a header and no data bytes.
  if (send.singleCopy || req->bytes <= kLineBytes) return 0;
  return std::min(outbound_.fragmentBytes(req->bytes), req->bytes - req->completed);
}

bool ShmConnector::completeReadSends() {
  if (awaitingReads_.empty()) return false;
  sendHeadSeen_ = outbound_.counters->head.load(std::memory_order_acquire);
  bool moved = false;
  while (!awaitingReads_.empty() && awaitingReads_.front().endFragment <= sendHeadSeen_) {
    Request* req = awaitingReads_.front().req;
    if (singleCopy_.peer.sameProcess) handOffAcquire(awaitingReads_.front().src);
    req->completed = req->bytes;
    req->done = true;
    awaitingReads_.pop_front();
    moved = true;
  }
  return moved;
}

bool ShmConnector::reserve(size_t want, FragmentPacker::Place* place) {
  *place = packer_.reserve(sendTail_, sendHeadSeen_, want);
  if (place->fits) return true;
  sendHeadSeen_ = outbound_.counters->head.load(std::memory_order_acquire);
  *place = packer_.reserve(sendTail_, sendHeadSeen_, want);
  return place->fits;  // else the FIFO is full
}

bool ShmConnector::publishRendezvous(PendingSend& send) {
  FragmentPacker::Place place;
  if (!reserve(0, &place)) return false;
  SlotHeader& header = outbound_.header(sendTail_);
  header.messageBytes = send.req->bytes;
  header.fragmentBytes = 0;
  header.kind = SlotKind::kRendezvous;
  header.sourceAddress = reinterpret_cast<uint64_t>(send.src);
  packer_.commit(sendTail_, place);
  if (singleCopy_.peer.sameProcess) handOffRelease(send.src);
  publish(header, sendTail_++);
  awaitingReads_.push_back(AwaitedRead{sendTail_, send.req, send.src});
  return true;
}

bool ShmConnector::goesSingleCopy(const void* src, size_t bytes) {
  if (singleCopy_.minBytes == 0) return false;
  if (!singleCopy_.hugePagesOnly) return bytes >= singleCopy_.minBytes;  // a forced threshold
  // The default rule. Far apart, a single copy beats the FIFO from any pages (copy_pace.h);
  // every kProbeEvery-th such message still takes the FIFO, to measure the pace again.
  if (bytes >= CopyPace::kFarSingleCopyBytes && pace_.far() && !pace_.probeDue()) return true;
  // One system call of a few microseconds against a copy of >= 256 KiB.
  return bytes >= singleCopy_.minBytes && hugePages_.mostlyHuge(src, bytes);
}

bool ShmConnector::moveSends() {
  bool moved = false;
  while (!sends_.empty()) {
    PendingSend& send = sends_.front();
    Request* req = send.req;
    if (send.singleCopy) {
      if (!publishRendezvous(send)) return moved;
      moved = true;
      sends_.pop_front();  // done later, in completeReadSends()
      continue;
    }
    const bool line = req->bytes <= kLineBytes;  // data, header and flag in one cache line
    while (send.fragments == 0 || req->completed < req->bytes) {
      FragmentPacker::Place place;
      if (!reserve(dataWanted(send), &place)) return moved;
      SlotHeader& header = outbound_.header(sendTail_);
      size_t n = place.bytes;  // 0 for a line message: reserve(0) takes no data bytes
      if (line) {
        n = req->bytes;
        if (n > 0) std::memcpy(header.line, send.src, n);
        header.kind = SlotKind::kLine;
      } else {
        const uint64_t start = n >= CopyPace::kTimedBytes ? CopyPace::now() : 0;
        std::memcpy(outbound_.data + place.offset, send.src + req->completed, n);
        if (start != 0) pace_.recordFragment(n, CopyPace::now() - start);
        header.kind = SlotKind::kInline;
        header.dataOffset = place.offset;
      }
      header.messageBytes = req->bytes;
      header.fragmentBytes = static_cast<uint32_t>(n);
      packer_.commit(sendTail_, place);
      publish(header, sendTail_++);
      req->completed += n;
      ++send.fragments;
      moved = true;
    }
    req->done = true;
    pace_.endMessage();
    sends_.pop_front();
  }
  return moved;
}

Status ShmConnector::moveRecvs(bool* moved) {
  while (!recvs_.empty()) {
    PendingRecv& recv = recvs_.front();
    while (recv.fragments == 0 || recv.req->completed < recv.req->bytes) {
      if (!published(inbound_, recvHead_)) return Status::ok();  // FIFO empty
      const SlotHeader& header = inbound_.header(recvHead_);
      const SlotKind kind = header.kind;  // read once: the peer can write this memory
      if (kind == SlotKind::kRendezvous) {
        bool finished = false;
        BRAID_RETURN_IF_ERROR(readRendezvous(recv, header.sourceAddress, &finished));
        *moved = true;
        if (!finished) return Status::ok();  // the rest on the next call
      } else if (kind == SlotKind::kLine) {
        BRAID_RETURN_IF_ERROR(deliver(recv, header, header.line, kLineBytes));
      } else {
        // Read once: the peer can write this memory. Past the area, deliver() refuses it.
        const uint64_t offset = header.dataOffset;
        const size_t room = offset < inbound_.dataBytes() ? inbound_.dataBytes() - offset : 0;
        BRAID_RETURN_IF_ERROR(deliver(
            recv, header, inbound_.data + std::min<uint64_t>(offset, inbound_.dataBytes()), room));
      }
      // Frees the slot and, for a rendezvous, tells the sender its buffer is free.
      inbound_.counters->head.store(++recvHead_, std::memory_order_release);
      *moved = true;
    }
    recv.req->done = true;
    recvs_.pop_front();
  }
  return Status::ok();
}

Status ShmConnector::checkSize(const PendingRecv& recv, uint64_t total) const {
  const Request* req = recv.req;
  if (total != req->bytes) {
    return Status(braidInvalidUsage, "shm: " + differentSizes(peer_, self_, total, req->bytes),
                  peer_);
  }
  return Status::ok();
}

Status ShmConnector::deliver(PendingRecv& recv, const SlotHeader& header, const uint8_t* slot,
                             size_t capacity) {
  Request* req = recv.req;
  // Read each header field once: the slot lies in memory the peer can write.
  const uint64_t total = header.messageBytes;
  const uint64_t n = header.fragmentBytes;
  BRAID_RETURN_IF_ERROR(checkSize(recv, total));
  if (n > capacity || n > req->bytes - req->completed || (n == 0 && total != 0)) {
    return Status(braidInternalError,
                  "shm: corrupt fragment of " + std::to_string(n) + " bytes from " +
                      rankName(peer_) + " (message of " + std::to_string(total) + " bytes)",
                  peer_);
  }
  if (n > 0) {
    const RecvSink& sink = recv.sink;
    uint8_t* dst = sink.dst + req->completed;
    if (sink.reduce != nullptr) {
      sink.reduce(dst, sink.accum + req->completed, slot, n / sink.elemSize);
    } else {
      bool streaming = streamStoreBytes_ != 0 && sink.extentBytes >= streamStoreBytes_;
      coll::copyInto(dst, slot, n, streaming);
    }
  }
  req->completed += n;
  ++recv.fragments;
  return Status::ok();
}

Status ShmConnector::readRendezvous(PendingRecv& recv, uint64_t sourceAddress, bool* finished) {
  Request* req = recv.req;
  const uint64_t total = recv.req->bytes;  // checked against the header on the first piece
  if (req->completed == 0) {
    BRAID_RETURN_IF_ERROR(checkSize(recv, inbound_.header(recvHead_).messageBytes));
  }
  if (singleCopy_.minBytes == 0 || recv.fragments != 0) {
    return Status(braidInternalError,
                  "shm: unexpected single-copy fragment from " + rankName(peer_) +
                      " (this link does not use single copy, or a message is interleaved)",
                  peer_);
  }
  const RecvSink& sink = recv.sink;
  const void* sourceBuffer = reinterpret_cast<const void*>(sourceAddress);
  if (singleCopy_.peer.sameProcess) handOffAcquire(sourceBuffer);
  size_t budget = kPieceBudgetBytes;
  while (req->completed < total && budget > 0) {
    const uint64_t source = sourceAddress + req->completed;
    size_t n = std::min<uint64_t>(total - req->completed, budget);
    if (sink.reduce == nullptr) {
      BRAID_RETURN_IF_ERROR(readPeerMemory(singleCopy_.peer, source, sink.dst + req->completed, n));
    } else {
      // Whole elements only; bytes % elemSize == 0 was checked at postRecv.
      size_t step = std::max(kBounceBytes / sink.elemSize, size_t{1}) * sink.elemSize;
      n = std::min(n, step);
      const uint8_t* incoming = reinterpret_cast<const uint8_t*>(source);
      if (!singleCopy_.peer.sameProcess) {
        if (bounce_.size() < step) bounce_.resize(step);
        BRAID_RETURN_IF_ERROR(readPeerMemory(singleCopy_.peer, source, bounce_.data(), n));
        incoming = bounce_.data();
      }
      sink.reduce(sink.dst + req->completed, sink.accum + req->completed, incoming,
                  n / sink.elemSize);
    }
    req->completed += n;
    budget -= std::min(budget, n);
  }
  *finished = req->completed == total;
  if (*finished && singleCopy_.peer.sameProcess) handOffRelease(sourceBuffer);
  if (*finished) ++recv.fragments;
  return Status::ok();
}

}  // namespace braid::transport::shm
