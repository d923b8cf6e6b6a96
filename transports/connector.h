// The one interface every transport implements (DESIGN.md §4).
//
// A Transport is created per communicator and owns one Connector per peer.
// A Connector is an ordered, message-framed, bidirectional link to one peer:
// sends posted on it are delivered, in posting order, to the receives the peer
// posts for this rank, in posting order. Messages may be empty (0 bytes; they
// still travel and still match). Each message carries its length, so a
// receive whose expected size differs from the message fails with
// braidInvalidUsage naming the peer — mismatched collectives become an error,
// not garbage.
//
// Everything is non-blocking: post*() only queue work; progress() moves as
// many bytes as it can without waiting; the caller polls Request::done. When
// nothing moves, the caller sleeps in Transport::waitForActivity(), which
// returns when a peer may have made progress (or after a short while).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/kernels/reduce.h"
#include "core/status.h"

namespace braid::transport {

/// Where received bytes go: copied to `dst`, or, when `reduce` is set,
/// dst[i] = accum[i] (op) incoming[i] (accum may equal dst). Transports hand
/// `reduce` whole elements only: slices are multiples of `elemSize`.
struct RecvSink {
  uint8_t* dst = nullptr;
  const uint8_t* accum = nullptr;
  coll::ReduceFn reduce = nullptr;
  size_t elemSize = 1;
  // Size of the whole buffer dst lies in (0: unknown). A receive into a buffer
  // far larger than the cache may write it with streaming stores (core/kernels/copy.h).
  size_t extentBytes = 0;
};

/// The caller owns a Request and keeps it (and the buffer) alive until done is
/// true or the connector is closed. The connector updates it from progress().
struct Request {
  size_t bytes = 0;      // message size
  size_t completed = 0;  // bytes moved so far
  bool done = false;
};

class Connector {
 public:
  virtual ~Connector() = default;

  /// The peer's rank in the communicator.
  virtual int peer() const = 0;

  /// Queues a message of `bytes` bytes read from `src` (nullptr allowed when bytes == 0).
  virtual Status postSend(const void* src, size_t bytes, Request* req) = 0;

  /// postSend() for a message its receiver only stores, one whole block of a buffer
  /// `extentBytes` long (an all-to-all block): a transport that can let the peer read the
  /// source in place may do so where that pays, which the schedule cannot judge but the
  /// transport can. The caller keeps `src` unchanged until the request is done (a peer may
  /// read it until then). Default: postSend().
  virtual Status postBlockSend(const void* src, size_t bytes, size_t extentBytes, Request* req) {
    (void)extentBytes;
    return postSend(src, bytes, req);
  }

  /// Queues the receive of the next message, expected to be exactly `bytes` long.
  virtual Status postRecv(const RecvSink& sink, size_t bytes, Request* req) = 0;

  /// Moves what can be moved now without blocking. Sets *progressed when any
  /// byte or message moved. Errors name the peer (dead peer, size mismatch, abort).
  virtual Status progress(bool* progressed) = 0;
};

/// Identifies a communicator's ranks to a transport during setup.
class Bootstrap;

class Transport {
 public:
  virtual ~Transport() = default;

  /// "shm", "socket", ...
  virtual const char* name() const = 0;

  /// The connector to `peer` (0 <= peer < nranks, peer != own rank); never null.
  virtual Connector* connector(int peer) = 0;

  /// Schedule copy actions into a buffer of at least this many bytes write it
  /// with streaming stores (core/kernels/copy.h); 0: never.
  virtual size_t streamStoreBytes() const { return 0; }

  /// Whether a schedule's next step may post its transfers while the current step's are
  /// still in flight, where the two steps touch disjoint memory (collectives/host/
  /// schedule_runner.h). A transport whose link drains between steps (the time from one
  /// chunk's completion to the next chunk's post leaves the wire idle) gains; one that
  /// moves data only while pumped, or copies through bounded slots, need not. Default: no.
  virtual bool postsAhead() const { return false; }

  /// Sleeps until a peer may have made progress, `deadline` passes, or about
  /// maxWaitMs milliseconds pass, whichever comes first. Spurious returns are
  /// fine; callers re-poll. Returns an error when a peer is known to be dead
  /// or has aborted.
  virtual Status waitForActivity(const Deadline& deadline, int maxWaitMs) = 0;

  /// Tells every peer that this rank failed with `reason` (they will see a
  /// braidRemoteError naming this rank, or the rank reason.peer() names), and
  /// wakes local waiters. Idempotent; callable from any thread.
  virtual void abort(const Status& reason) = 0;

  /// Stall diagnosis (docs/RELIABILITY.md). This rank waited BRAID_TIMEOUT for
  /// `peer`: tell the peers, without failing, so that each rank that times out
  /// can follow the chain of waits to the rank that stalled. Best effort;
  /// called on the thread that drives progress. Default: tells nobody.
  virtual void reportWait(int peer) { (void)peer; }
  /// The chain of waits from `peer` as reported so far: peer, the rank it
  /// waits for, ..., ending at a rank that reported no wait (the one to
  /// blame). Default: {peer}.
  virtual std::vector<int> waitChain(int peer) { return {peer}; }
};

}  // namespace braid::transport
