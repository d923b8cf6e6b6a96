// Abort notices: how a failure's origin reaches ranks that never talked to it.
//
// TCP carries no reason with a shutdown: a rank that reads EOF knows only that
// the peer on that connection is gone. When rank K dies, its neighbours see
// their connections to K close and name K; the other survivors would see
// those neighbours' connections close and name the neighbours. So a rank that
// fails because of another rank (the Status names that rank as its peer)
// writes a notice {origin K, reason} on every stream of every peer before it
// shuts the streams down, and a rank that reads a notice fails with
// "rank K failed (reported by rank J): ...", naming K, and passes K on in its
// own notices. Any rank that learns of the failure, first hand or not, thus
// names the same origin.
//
// Framing. A notice is a FrameHeader with its own magic, so it can only be
// read where a header is expected: the sender first finishes the fragment in
// flight on the stream (its remaining header and payload bytes), which keeps
// the receiver's byte stream in step. A receiver reads a notice whether or
// not it has a receive posted for that peer (the transport progresses every
// connector with an event), though not behind a data header that waits for
// one. Once a link fails (an EOF, a reset, a send that meets the reset), the
// receiver looks for a notice on every stream of that peer, skipping data it
// will never deliver, and prefers it to its own first-hand error: with one
// stream per peer, the stream that failed is the one that holds the notice.
//
// Wait reports. A rank that waited BRAID_TIMEOUT for rank P queues a report
// "I wait for P" to every peer, sent between two fragments on stream 0; the
// connection goes on. Receivers note it in the transport's table, from which
// a rank that times out follows the chain of waits to the rank that reported
// none: the stalled one (see waitChain in socket_transport.cc).
//
// Bounded. The sockets are non-blocking. The fragment in flight and the notice
// behind it may not fit a full socket buffer at once, and a peer that has not
// heard of the failure yet is reading: so the abort polls the streams that
// still hold a notice until it is out, for kAbortNoticeGraceMs at most in all
// (a stopped peer, or one aborting too, reads nothing). A socket that fails
// (the peer is gone) is given up at once. A peer that gets no notice, or half
// of one, still reads EOF as before and names the sender; a process that dies
// without a word is detected by EOF.
#include <sys/uio.h>

#include <algorithm>

#include "core/deadline.h"
#include "transports/failure_report.h"
#include "transports/socket/socket_connector.h"

namespace braid::transport::socket {
namespace {

// A peer's text, made printable (it ends up in logs and error strings).
std::string printable(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (c < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}

}  // namespace

void SocketConnector::queueAbortNotice(int origin, const std::string& reason) {
  // A link that failed is read by nobody any more, except when what failed is the peer's
  // message size: the peer is alive and reads on, and without the notice it would meet
  // this rank's shutdown and blame this rank.
  if (!error_.isOk() && error_.message().find(kDifferentSizes) == std::string::npos) return;
  const std::string text = reason.substr(0, kNoticeReasonBytes);
  const FrameHeader header = noticeHeader(origin, static_cast<uint32_t>(text.size()));
  for (Stream& s : streams_) {
    if (s.eof) continue;
    // Control bytes go out only between fragments, so at most one of a half-sent
    // report and a fragment in flight precedes the notice; reports not yet
    // started are moot once this rank aborts.
    s.farewell = s.controlSent > 0 ? s.control.substr(s.controlSent) : std::string();
    s.control.clear();
    s.controlSent = 0;
    s.farewell.append(reinterpret_cast<const char*>(&header), sizeof(header));
    s.farewell += text;
    s.farewellSent = 0;
    s.leaving = true;
  }
}

bool SocketConnector::sendFarewells() {
  bool allSent = true;
  for (Stream& s : streams_) {
    while (s.leaving) {
      OutFragment& out = s.out;
      iovec iov[3];
      int count = 0;
      if (out.msg != nullptr) {
        iov[count++] = {reinterpret_cast<uint8_t*>(&out.header) + out.headerSent,
                        sizeof(FrameHeader) - out.headerSent};
        iov[count++] = {const_cast<uint8_t*>(out.msg->src) + out.header.offset + out.payloadSent,
                        out.header.length - out.payloadSent};
      }
      iov[count++] = {s.farewell.data() + s.farewellSent, s.farewell.size() - s.farewellSent};
      Result<IoResult> r = sendOn(s.fd.get(), s.sendSsl, iov, count);
      if (!r.isOk()) {  // the peer is gone: it reads nothing more
        s.leaving = false;
        break;
      }
      if (r->bytes == 0) {
        allSent = false;
        break;
      }
      size_t left = r->bytes;
      if (out.msg != nullptr) {
        const size_t headerPart = std::min(left, sizeof(FrameHeader) - out.headerSent);
        out.headerSent += headerPart;
        left -= headerPart;
        const size_t payloadPart = std::min(left, size_t{out.header.length} - out.payloadSent);
        out.payloadSent += payloadPart;
        left -= payloadPart;
        if (out.headerSent == sizeof(FrameHeader) && out.payloadSent == out.header.length) {
          out = OutFragment{};  // the stream is shut down next: no more fragments
        }
      }
      s.farewellSent += left;
      if (out.msg == nullptr && s.farewellSent == s.farewell.size()) s.leaving = false;
    }
  }
  return allSent;
}

void SocketConnector::farewellPollFds(std::vector<pollfd>* fds) const {
  for (const Stream& s : streams_) {
    if (s.leaving) fds->push_back(pollfd{s.fd.get(), POLLOUT, 0});
  }
}

void deliverAbortNotices(std::span<const std::unique_ptr<SocketConnector>> connectors, int origin,
                         const std::string& reason, int graceMs) {
  for (const auto& c : connectors) {
    if (c) c->queueAbortNotice(origin, reason);
  }
  const Deadline deadline = Deadline::in(std::max(graceMs, 1) / 1000.0);  // 0 is not "never"
  std::vector<pollfd> waiting;
  while (true) {
    waiting.clear();
    for (const auto& c : connectors) {
      if (c && !c->sendFarewells()) c->farewellPollFds(&waiting);
    }
    if (waiting.empty() || deadline.expired()) return;
    (void)::poll(waiting.data(), waiting.size(), std::max(1, deadline.remainingMs(graceMs)));
  }
}

void SocketConnector::queueWaitReport(int waitedFor) {
  if (!error_.isOk() || streams_.empty()) return;
  FrameHeader header = waitReportHeader(waitedFor);
  streams_[0].control.append(reinterpret_cast<const char*>(&header), sizeof(header));
}

Status SocketConnector::sendControl(int index, bool* flushed) {
  Stream& s = streams_[index];
  while (s.controlSent < s.control.size()) {
    iovec iov = {s.control.data() + s.controlSent, s.control.size() - s.controlSent};
    Result<IoResult> r = sendOn(s.fd.get(), s.sendSsl, &iov, 1);
    if (!r.isOk()) return connectionError(index, r.status().message());
    if (r->bytes == 0) {
      *flushed = false;
      return Status::ok();
    }
    s.controlSent += r->bytes;
  }
  s.control.clear();
  s.controlSent = 0;
  *flushed = true;
  return Status::ok();
}

Status SocketConnector::readNotice(Stream& s, int index) {
  const FrameHeader& h = s.in.header;
  const bool report = h.messageBytes == kWaitReport;
  if (h.length > (report ? 0 : kNoticeReasonBytes) || h.seq >= static_cast<uint64_t>(nranks_) ||
      (h.messageBytes != kAbortNotice && !report) || h.offset != 0) {
    return connectionError(index, "sent a corrupt notice");
  }
  if (report) {
    if (waits_ != nullptr) (*waits_)[peer_] = static_cast<int>(h.seq);
    s.in = InFragment{};
    return Status::ok();
  }
  s.noticeReason.resize(h.length);
  bool complete = true;
  while (s.in.payloadGot < h.length) {
    Result<IoResult> r = recvOn(s.fd.get(), s.recvSsl, s.noticeReason.data() + s.in.payloadGot,
                                h.length - s.in.payloadGot);
    if (!r.isOk() || r->closed) {  // the origin is known: keep the part of the reason we have
      s.eof = true;
      complete = false;
      break;
    }
    if (r->bytes == 0) return Status::ok();  // the rest is on its way
    s.in.payloadGot += r->bytes;
  }
  s.noticeReason.resize(s.in.payloadGot);
  const int origin = static_cast<int>(h.seq);
  const std::string why = printable(s.noticeReason) + (complete ? "" : " [cut off]");
  const std::string reporter = "rank " + std::to_string(peer_);
  std::string what;
  if (origin == peer_) {
    what = reporter + " failed: " + why;
  } else if (origin == rank_) {
    what = reporter + " blames this rank (" + std::to_string(rank_) + "): " + why;
  } else {
    what = "rank " + std::to_string(origin) + " failed " + kReportedByMarker +
           std::to_string(peer_) + "): " + why;
  }
  notice_ = relayedFailure("", peer_, why, origin, what);
  return notice_;
}

// When a stream of the peer fails (EOF, a reset, a send that meets the
// reset), the notice the peer wrote before closing may still be unread: on
// another stream, or on this very one, behind a fragment this rank had no
// receive posted for yet. A reset ends sends at once, but Linux keeps what
// arrived before it readable, so with one stream per peer the notice is
// found only here. It names the true origin, so look for it on every stream.
Status SocketConnector::preferNotice(Status error) {
  for (int i = 0; i < streamCount() && notice_.isOk(); ++i) salvageNotice(i);
  return notice_.isOk() ? error : notice_;
}

// Reads what stream `index` holds now, skipping data fragments (the link is
// failing, so no receive will complete), until a notice, the end of the
// stream, an empty socket buffer or bytes that are not a frame. Bounded: a
// live peer that keeps sending cannot keep this rank here.
void SocketConnector::salvageNotice(int index) {
  constexpr size_t kMostSkipped = 64 << 20;  // more than any socket buffer holds
  Stream& s = streams_[index];
  uint8_t skip[16 << 10];
  size_t skipped = 0;
  while (!s.eof && notice_.isOk() && skipped < kMostSkipped) {
    InFragment& in = s.in;
    uint8_t* into = skip;
    size_t want = sizeof(skip);
    if (in.headerGot < sizeof(FrameHeader)) {
      into = reinterpret_cast<uint8_t*>(&in.header) + in.headerGot;
      want = sizeof(FrameHeader) - in.headerGot;
    } else if (isNotice(s)) {
      (void)readNotice(s, index);  // sets notice_ once it is complete
      // Not consumed: a corrupt notice, or its text is still on its way.
      if (isNotice(s)) return;
      continue;
    } else if (in.header.magic != kFrameMagic || in.header.length > kMaxFragmentBytes) {
      return;  // not a frame: nothing after it can be parsed
    } else if (in.payloadGot == in.header.length) {
      in = InFragment{};  // skipped: on to the next header
      continue;
    } else {
      want = std::min(want, in.header.length - in.payloadGot);
    }
    Result<IoResult> r = recvOn(s.fd.get(), s.recvSsl, into, want);
    if (!r.isOk() || r->closed) {
      s.eof = true;
      return;
    }
    if (r->bytes == 0) return;
    if (in.headerGot < sizeof(FrameHeader)) {
      in.headerGot += r->bytes;
    } else {
      in.payloadGot += r->bytes;
      skipped += r->bytes;
    }
  }
}

}  // namespace braid::transport::socket
