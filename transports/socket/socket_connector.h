// The socket transport's link to one peer: messages framed and striped over
// several TCP streams (see socket_connector.cc for the protocol).
#pragma once

#include <poll.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/net/socket_util.h"
#include "core/net/tls.h"
#include "transports/connector.h"
#include "transports/socket/congestion_switch.h"
#include "transports/socket/socket_wire.h"

namespace braid::transport::socket {

/// Set once by Transport::abort (any thread), read by every connector's progress.
class AbortState {
 public:
  /// Records `reason`; returns false when an abort was already recorded.
  bool trigger(const Status& reason);
  bool triggered() const { return triggered_.load(std::memory_order_acquire); }
  /// The error progress and waitForActivity report after an abort.
  Status error() const;

 private:
  std::atomic<bool> triggered_{false};
  mutable std::mutex mu_;  // guards reason_
  Status reason_;
};

class SocketConnector final : public Connector {
 public:
  /// Fragments of larger messages are spread over the streams.
  static constexpr size_t kFragmentBytes = 256 << 10;
  /// The largest fragment BRAID_SOCKET_FRAGMENT_BYTES allows (FrameHeader::length is 32 bits).
  static constexpr size_t kMaxFragmentBytes = Config::kMaxSocketFragmentBytes;
  /// Per-stream staging for receives that reduce.
  static constexpr size_t kStagingBytes = 128 << 10;

  /// This rank `rank` of `nranks` talks to `peer` over `streams`. `abort` and
  /// `waits` (by rank: whom each rank reported waiting for, -1 when none; null
  /// to ignore reports) are owned by the transport, which outlives its connectors.
  /// Messages are cut into fragments of `fragmentBytes`, a power of two in
  /// 4 KiB..kMaxFragmentBytes (the caller checks), so offsets split no element.
  /// `tls`: one session per stream (tls_setup.h), or empty for plain TCP.
  SocketConnector(int rank, int peer, int nranks, std::vector<Fd> streams, const AbortState* abort,
                  std::vector<int>* waits = nullptr, size_t fragmentBytes = kFragmentBytes,
                  std::vector<TlsSession> tls = {});

  /// Streams between ranks of one host switch congestion control per message when
  /// `setting` (Config::socketCongestion) is "auto" (congestion_switch.h); call after
  /// applyCongestionControl has set each stream.
  void switchCongestionPerMessage(const std::string& setting);

  int peer() const override { return peer_; }
  Status postSend(const void* src, size_t bytes, Request* req) override;
  Status postRecv(const RecvSink& sink, size_t bytes, Request* req) override;
  Status progress(bool* progressed) override;

  // For the transport's poll loop.
  int streamCount() const { return static_cast<int>(streams_.size()); }
  int streamFd(int stream) const { return streams_[stream].fd.get(); }
  /// The epoll events stream `stream` should wait for now; 0 once the peer hung up.
  uint32_t wantedEvents(int stream) const;
  /// epoll saw the peer hang up: stop watching; progress drains what is left.
  void noteHangup(int stream) { streams_[stream].hungUp = true; }
  /// True when progress() could move something right now without waiting
  /// (sends posted but not started, a stalled stream whose receive is now posted).
  bool hasStartableWork() const;
  /// True when libssl holds decrypted bytes of a stream that progress() would read: epoll
  /// cannot see them, so the transport progresses such a connector without waiting.
  bool tlsHoldsData() const;
  /// The sticky error, if any.
  const Status& error() const { return error_; }
  /// shutdown(SHUT_RDWR) on every stream so the peer sees EOF (thread-safe).
  void shutdownStreams();
  /// Readies an abort notice on every open stream: the fragment in flight is
  /// finished first, then a notice naming `origin`, the rank at fault, with
  /// `reason` (see socket_wire.h). Nothing is sent yet: sendFarewells() does
  /// that, and deliverAbortNotices() below runs both for every peer. Call only
  /// from the thread that runs progress(), while the posted send buffers are
  /// alive (the engine's failure path), and before shutdownStreams().
  void queueAbortNotice(int origin, const std::string& reason);
  /// Writes what the sockets take now of the notices queueAbortNotice readied;
  /// true when nothing is left to send (sent, or given up on a failed socket).
  bool sendFarewells();
  /// The streams whose notice is still waiting for room in the socket.
  void farewellPollFds(std::vector<pollfd>* fds) const;
  /// Queues a wait report (this rank waited BRAID_TIMEOUT for `waitedFor`) to
  /// go out on stream 0 between two fragments; the connection goes on.
  void queueWaitReport(int waitedFor);

 private:
  struct SendMessage {
    const uint8_t* src;
    size_t bytes;
    Request* req;
    uint64_t seq;
    size_t nextOffset = 0;       // first byte not yet given to a stream
    bool fullyAssigned = false;  // every fragment handed to a stream
    size_t sent = 0;             // payload bytes written to sockets
    bool done = false;
  };
  struct RecvMessage {
    RecvSink sink;
    size_t bytes;
    Request* req;
    size_t received = 0;  // payload bytes landed (or reduced)
    bool done = false;
  };
  // Pointers into the deques below stay valid: they only grow at the back and
  // shrink at the front, and only finished messages leave.
  struct OutFragment {
    SendMessage* msg = nullptr;  // null when the stream has nothing to send
    FrameHeader header{};
    size_t headerSent = 0;
    size_t payloadSent = 0;
  };
  struct InFragment {
    FrameHeader header{};
    size_t headerGot = 0;
    RecvMessage* msg = nullptr;  // null until the header is matched to a receive
    size_t payloadGot = 0;
  };
  struct Stream {
    Fd fd;
    OutFragment out;
    InFragment in;
    // The start of the next header, read in the same system call as the end of
    // a plain fragment's payload; it becomes `in` when that fragment finishes.
    FrameHeader ahead{};
    size_t aheadGot = 0;
    std::unique_ptr<uint8_t[]> staging;  // allocated on the first reducing receive
    size_t stagingFill = 0;
    bool eof = false;          // recv returned 0: the peer closed this stream
    bool hungUp = false;       // epoll reported a hang-up
    std::string noticeReason;  // an abort notice's text, while it arrives
    std::string control;       // notices to send before the next fragment
    size_t controlSent = 0;
    std::string farewell;  // an abort notice (after the fragment in flight), while it goes out
    size_t farewellSent = 0;
    bool leaving = false;         // farewell (and the fragment before it) not yet all sent
    TlsSession tls;               // inactive on a plain stream
    SSL* sendSsl = nullptr;       // tls.userSend(): null where sends are plain system calls
    SSL* recvSsl = nullptr;       // tls.userRecv()
    CongestionSwitch congestion;  // off unless switchCongestionPerMessage turned it on
  };

  bool assignFragment(Stream& s);
  Status pumpSend(int index, bool* progressed);
  Status pumpRecv(int index, bool* progressed);
  Status matchHeader(Stream& s, int index);
  static bool isNotice(const Stream& s) {
    return s.in.headerGot == sizeof(FrameHeader) && s.in.header.magic == kNoticeMagic;
  }
  Status readNotice(Stream& s, int index);
  Status preferNotice(Status error);
  void salvageNotice(int index);
  Status sendControl(int index, bool* flushed);
  Status receivePayload(Stream& s, int index, size_t* moved, bool* closed);
  void finishFragment(Stream& s);
  bool stalled(const Stream& s) const;
  /// True while a posted receive is not complete.
  bool awaitsData() const;
  void retireFinished();
  Status checkPeerAlive();
  Status fail(Status status);
  Status connectionError(int stream, const std::string& what) const;

  const int rank_;
  const int peer_;
  const int nranks_;
  const AbortState* const abort_;  // the transport's; outlives this connector
  std::vector<int>* const waits_;  // the transport's; may be null
  const size_t fragmentBytes_;
  std::vector<Stream> streams_;
  std::deque<SendMessage> sends_;  // posted, not yet done, in seq order
  std::deque<RecvMessage> recvs_;
  uint64_t nextSendSeq_ = 0;
  uint64_t nextAssignSeq_ = 0;  // the first message with unassigned fragments
  uint64_t recvFrontSeq_ = 0;   // seq of recvs_.front()
  Status error_;
  Status notice_;  // set once an abort notice from the peer has been read
};

/// How long an abort waits, in all, for peers to make room for its notices.
/// A peer that has not heard of the failure is reading, and a notice it never
/// gets makes it blame this rank instead of the origin; a peer that is
/// stopped, or aborting too, reads nothing, and only costs the abort this long.
inline constexpr int kAbortNoticeGraceMs = 250;

/// Tells every peer of `connectors` (null entries skipped) that `origin` failed
/// with `reason`, waiting at most `graceMs` for room in full sockets.
void deliverAbortNotices(std::span<const std::unique_ptr<SocketConnector>> connectors, int origin,
                         const std::string& reason, int graceMs = kAbortNoticeGraceMs);

}  // namespace braid::transport::socket
