// Socket connector: one peer, several TCP streams.
//
// Protocol. Messages are numbered per direction (seq 0, 1, ...). A message is
// cut into fragments of at most fragmentBytes_, each sent as a FrameHeader
// {seq, messageBytes, offset, length} followed by `length` payload bytes; an
// empty message is one header with length 0. Fragments are handed out lazily:
// whenever a stream has nothing in flight it takes the next fragment, so a
// large message spreads over all streams and faster streams carry more of it,
// while a small message is one fragment on one stream.
//
// Invariants that make reassembly simple:
//  - on each stream fragments go out in seq order, so a stream whose next
//    header names a message the caller has not posted a receive for yet can
//    simply stop being read (it "stalls") without blocking older messages,
//    which other streams carry;
//  - fragment offsets are multiples of fragmentBytes_, hence of any element
//    size, so a reducing receive reduces whole elements per fragment; within
//    a fragment, the partial element at the end of the staging buffer is kept
//    for the next read;
//  - a plain receive lands straight in sink.dst (no copy); a reducing one goes
//    through a bounded per-stream staging buffer;
//  - the system call that reads the end of a plain fragment's payload also
//    asks for the next header (a second iovec into Stream::ahead), which is
//    usually there already: one receive call per fragment instead of two. The
//    bytes of it that came along start the stream's next InFragment when the
//    fragment finishes, so everything after (stalling on a message not posted
//    yet, notices, salvage) sees the header as if it had been read on its own.
//
// Failures are sticky: once a connector fails, every later call returns the
// same Status, which names the peer, or, when the peer sent an abort notice
// (socket_notice.cc), the rank the notice blames.
#include "transports/socket/socket_connector.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "transports/failure_report.h"

namespace braid::transport::socket {

bool AbortState::trigger(const Status& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (triggered_.load(std::memory_order_relaxed)) return false;
  reason_ = reason;
  triggered_.store(true, std::memory_order_release);
  return true;
}

Status AbortState::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  braidResult_t code = reason_.isOk() ? braidInternalError : reason_.code();
  std::string why = reason_.message().empty() ? "no reason given" : reason_.message();
  // Keep the reason's culprit, if it names one: the abort is not this link's fault.
  return Status(code, "socket transport was aborted on this rank (" + why + ")", reason_.peer());
}

SocketConnector::SocketConnector(int rank, int peer, int nranks, std::vector<Fd> streams,
                                 const AbortState* abort, std::vector<int>* waits,
                                 size_t fragmentBytes, std::vector<TlsSession> tls)
    : rank_(rank),
      peer_(peer),
      nranks_(nranks),
      abort_(abort),
      waits_(waits),
      fragmentBytes_(fragmentBytes) {
  streams_.resize(streams.size());
  for (size_t i = 0; i < streams.size(); ++i) streams_[i].fd = std::move(streams[i]);
  for (size_t i = 0; i < tls.size() && i < streams_.size(); ++i) {
    streams_[i].sendSsl = tls[i].userSend();
    streams_[i].recvSsl = tls[i].userRecv();
    streams_[i].tls = std::move(tls[i]);
  }
}

void SocketConnector::switchCongestionPerMessage(const std::string& setting) {
  for (Stream& s : streams_) {
    s.congestion = CongestionSwitch(switchesPerMessage(setting, sameHostStream(s.fd.get())));
  }
}

Status SocketConnector::postSend(const void* src, size_t bytes, Request* req) {
  if (!error_.isOk()) return error_;
  if (src == nullptr && bytes > 0) {
    return invalidArgument("socket send to rank " + std::to_string(peer_) + ": null buffer for " +
                           std::to_string(bytes) + " bytes");
  }
  *req = Request{bytes, 0, false};
  sends_.push_back(SendMessage{static_cast<const uint8_t*>(src), bytes, req, nextSendSeq_++});
  return Status::ok();
}

Status SocketConnector::postRecv(const RecvSink& sink, size_t bytes, Request* req) {
  if (!error_.isOk()) return error_;
  const std::string where = "socket receive from rank " + std::to_string(peer_);
  if (sink.dst == nullptr && bytes > 0) return invalidArgument(where + ": null destination");
  if (sink.reduce != nullptr &&
      (sink.elemSize == 0 || bytes % sink.elemSize != 0 || (bytes > 0 && !sink.accum))) {
    return invalidArgument(where + ": a reducing receive needs an accumulator and a size (" +
                           std::to_string(bytes) + ") that is a multiple of the element size (" +
                           std::to_string(sink.elemSize) + ")");
  }
  *req = Request{bytes, 0, false};
  recvs_.push_back(RecvMessage{sink, bytes, req});
  return Status::ok();
}

Status SocketConnector::progress(bool* progressed) {
  *progressed = false;
  if (!error_.isOk()) return error_;
  if (abort_->triggered()) return fail(abort_->error());
  for (int i = 0; i < streamCount(); ++i) {
    bool sent = false;
    Status s = pumpSend(i, &sent);
    *progressed = *progressed || sent;
    // A call that only sends (a broadcast's root, a gather's leaf) is done once its bytes
    // are out; a read in the same poll would cost it a system call that can find nothing
    // it waits for. Early headers, notices and hang-ups are read by the next poll that
    // moves no send, or once a receive is posted; a poll whose send moved nothing still
    // reads, so data waiting on the socket never keeps epoll spinning.
    if (s.isOk() && (!sent || awaitsData())) s = pumpRecv(i, progressed);
    if (!s.isOk()) return fail(preferNotice(std::move(s)));
  }
  retireFinished();
  Status alive = checkPeerAlive();
  if (!alive.isOk()) return fail(preferNotice(std::move(alive)));
  return Status::ok();
}

uint32_t SocketConnector::wantedEvents(int index) const {
  const Stream& s = streams_[index];
  if (s.hungUp || s.eof) return 0;
  uint32_t events = EPOLLRDHUP;
  if (!stalled(s)) events |= EPOLLIN;
  if (s.out.msg != nullptr || s.controlSent < s.control.size()) events |= EPOLLOUT;
  return events;
}

bool SocketConnector::hasStartableWork() const {
  for (const Stream& s : streams_) {
    if (s.out.msg == nullptr && nextAssignSeq_ < nextSendSeq_) return true;
    if (stalled(s) && s.in.header.seq - recvFrontSeq_ < recvs_.size()) return true;
  }
  return false;
}

bool SocketConnector::tlsHoldsData() const {
  for (const Stream& s : streams_) {
    if (s.recvSsl != nullptr && !s.eof && !stalled(s) && socket::tlsHoldsData(s.recvSsl)) {
      return true;
    }
  }
  return false;
}

void SocketConnector::shutdownStreams() {
  for (Stream& s : streams_) ::shutdown(s.fd.get(), SHUT_RDWR);
}

bool SocketConnector::assignFragment(Stream& s) {
  if (sends_.empty()) return false;
  size_t index = nextAssignSeq_ - sends_.front().seq;
  if (index >= sends_.size()) return false;
  SendMessage& msg = sends_[index];
  s.congestion.beforeMessage(s.fd.get(), msg.bytes);
  size_t length = std::min(fragmentBytes_, msg.bytes - msg.nextOffset);
  s.out = OutFragment{&msg, FrameHeader{msg.seq, msg.bytes, msg.nextOffset,
                                        static_cast<uint32_t>(length), kFrameMagic}};
  msg.nextOffset += length;
  if (msg.nextOffset == msg.bytes) {
    msg.fullyAssigned = true;
    ++nextAssignSeq_;
  }
  return true;
}

Status SocketConnector::pumpSend(int index, bool* progressed) {
  Stream& s = streams_[index];
  while (true) {
    if (s.out.msg == nullptr) {  // between fragments: notices go first
      bool flushed = false;
      BRAID_RETURN_IF_ERROR(sendControl(index, &flushed));
      if (!flushed || !assignFragment(s)) return Status::ok();
    }
    OutFragment& out = s.out;
    SendMessage& msg = *out.msg;
    const auto* header = reinterpret_cast<const uint8_t*>(&out.header);
    iovec iov[2] = {
        {const_cast<uint8_t*>(header) + out.headerSent, sizeof(FrameHeader) - out.headerSent},
        {const_cast<uint8_t*>(msg.src) + out.header.offset + out.payloadSent,
         out.header.length - out.payloadSent}};
    Result<IoResult> r = sendOn(s.fd.get(), s.sendSsl, iov, iov[1].iov_len > 0 ? 2 : 1);
    if (!r.isOk()) return connectionError(index, r.status().message());
    if (r->bytes == 0) return Status::ok();  // socket buffer full
    *progressed = true;
    size_t headerPart = std::min(r->bytes, sizeof(FrameHeader) - out.headerSent);
    out.headerSent += headerPart;
    out.payloadSent += r->bytes - headerPart;
    msg.sent += r->bytes - headerPart;
    msg.req->completed = msg.sent;
    if (out.headerSent < sizeof(FrameHeader) || out.payloadSent < out.header.length) continue;
    out = OutFragment{};
    if (msg.fullyAssigned && msg.sent == msg.bytes) {
      msg.done = true;
      msg.req->done = true;  // the caller may free req from here on
    }
  }
}

bool SocketConnector::stalled(const Stream& s) const {
  return s.in.headerGot == sizeof(FrameHeader) && s.in.msg == nullptr && !isNotice(s);
}

Status SocketConnector::pumpRecv(int index, bool* progressed) {
  Stream& s = streams_[index];
  while (!s.eof) {
    InFragment& in = s.in;
    if (in.headerGot < sizeof(FrameHeader)) {
      auto* header = reinterpret_cast<uint8_t*>(&in.header);
      Result<IoResult> r =
          recvOn(s.fd.get(), s.recvSsl, header + in.headerGot, sizeof(FrameHeader) - in.headerGot);
      if (!r.isOk() || r->closed) {
        s.eof = true;
        if (in.headerGot > 0 || (!r.isOk() && isRejectedRecord(r.status()))) {
          return connectionError(
              index, r.isOk() ? "closed inside a message header" : r.status().message());
        }
        // Closed or reset between messages: a peer that is done may simply
        // have left; checkPeerAlive decides whether anything is still expected.
        return Status::ok();
      }
      if (r->bytes == 0) return Status::ok();
      // Not progress yet: a header that stalls, or a notice, moves nothing.
      in.headerGot += r->bytes;
      if (in.headerGot < sizeof(FrameHeader)) continue;
    }
    if (isNotice(s)) {
      BRAID_RETURN_IF_ERROR(readNotice(s, index));
      if (isNotice(s)) return Status::ok();  // its text is still on its way
      continue;                              // a wait report, consumed
    }
    if (in.msg == nullptr) {
      BRAID_RETURN_IF_ERROR(matchHeader(s, index));
      if (in.msg == nullptr) return Status::ok();  // stalled: no receive posted yet
      *progressed = true;
      if (in.header.length == 0) {
        finishFragment(s);
        if (!awaitsData()) return Status::ok();  // see below
        continue;
      }
    }
    size_t moved = 0;
    bool closed = false;
    BRAID_RETURN_IF_ERROR(receivePayload(s, index, &moved, &closed));
    if (closed) {
      s.eof = true;
      return connectionError(index, "closed in the middle of a message");
    }
    if (moved == 0) return Status::ok();
    *progressed = true;
    if (in.payloadGot == in.header.length) {
      finishFragment(s);
      // Every posted receive is complete: reading on would cost a system call
      // that finds nothing or a header that stalls. What
      // follows is read by the next progress, or when epoll reports it.
      if (!awaitsData()) return Status::ok();
    }
  }
  return Status::ok();
}

bool SocketConnector::awaitsData() const {
  return std::any_of(recvs_.begin(), recvs_.end(), [](const RecvMessage& m) { return !m.done; });
}

// Binds a complete header to the posted receive it belongs to, if posted yet.
Status SocketConnector::matchHeader(Stream& s, int index) {
  const FrameHeader& h = s.in.header;
  if (h.magic != kFrameMagic || h.seq < recvFrontSeq_ || h.offset + h.length > h.messageBytes) {
    return connectionError(index, "sent a corrupt frame header (seq " + std::to_string(h.seq) +
                                      ", offset " + std::to_string(h.offset) + ")");
  }
  size_t position = h.seq - recvFrontSeq_;
  if (position >= recvs_.size()) return Status::ok();
  RecvMessage& msg = recvs_[position];
  if (h.messageBytes != msg.bytes) {
    return Status(braidInvalidUsage,
                  differentSizes(peer_, rank_, h.messageBytes, msg.bytes) + " (message #" +
                      std::to_string(h.seq) + " from rank " + std::to_string(peer_) + ")",
                  peer_);
  }
  if (msg.sink.reduce != nullptr &&
      (h.offset % msg.sink.elemSize != 0 || h.length % msg.sink.elemSize != 0)) {
    return connectionError(index, "sent a fragment that splits an element");
  }
  s.in.msg = &msg;
  return Status::ok();
}

// Reads fragment payload: straight into dst, or through staging and reduce.
Status SocketConnector::receivePayload(Stream& s, int index, size_t* moved, bool* closed) {
  InFragment& in = s.in;
  RecvMessage& msg = *in.msg;
  const RecvSink& sink = msg.sink;
  size_t left = in.header.length - in.payloadGot;
  if (sink.reduce == nullptr) {
    // The next header rides along: the system call that ends this payload
    // usually finds it waiting, and reading it here saves one per fragment.
    iovec iov[2] = {{sink.dst + in.header.offset + in.payloadGot, left},
                    {&s.ahead, sizeof(FrameHeader)}};
    Result<IoResult> r = recvOnV(s.fd.get(), s.recvSsl, iov, 2);
    if (!r.isOk()) return connectionError(index, r.status().message());
    *closed = r->closed;
    const size_t payload = std::min(r->bytes, left);
    *moved = payload;
    s.aheadGot = r->bytes - payload;
    in.payloadGot += payload;
    msg.received += payload;
  } else {
    if (!s.staging) s.staging = std::make_unique<uint8_t[]>(kStagingBytes);
    size_t room = std::min(kStagingBytes - s.stagingFill, left);
    Result<IoResult> r = recvOn(s.fd.get(), s.recvSsl, s.staging.get() + s.stagingFill, room);
    if (!r.isOk()) return connectionError(index, r.status().message());
    *closed = r->closed;
    *moved = r->bytes;
    in.payloadGot += r->bytes;
    s.stagingFill += r->bytes;
    size_t whole = s.stagingFill - s.stagingFill % sink.elemSize;
    if (whole > 0) {
      size_t at = in.header.offset + in.payloadGot - s.stagingFill;
      sink.reduce(sink.dst + at, sink.accum + at, s.staging.get(), whole / sink.elemSize);
      std::memmove(s.staging.get(), s.staging.get() + whole, s.stagingFill - whole);
      s.stagingFill -= whole;
      msg.received += whole;
    }
  }
  msg.req->completed = msg.received;
  return Status::ok();
}

void SocketConnector::finishFragment(Stream& s) {
  RecvMessage& msg = *s.in.msg;
  s.in = InFragment{};
  s.in.header = s.ahead;  // what of the next header came with the payload
  s.in.headerGot = s.aheadGot;
  s.aheadGot = 0;
  if (msg.received == msg.bytes) {
    msg.done = true;
    msg.req->done = true;  // the caller may free req from here on
  }
}

void SocketConnector::retireFinished() {
  while (!sends_.empty() && sends_.front().done) sends_.pop_front();
  while (!recvs_.empty() && recvs_.front().done) {
    recvs_.pop_front();
    ++recvFrontSeq_;
  }
}

// A receive can no longer complete when no stream can still deliver data for
// it: each stream is closed, or stalled on a later message (streams carry
// messages in order, so a stalled stream is past every posted receive).
Status SocketConnector::checkPeerAlive() {
  if (!awaitsData()) return Status::ok();
  bool anyClosed = false;
  for (const Stream& s : streams_) {
    if (!s.eof && !stalled(s)) return Status::ok();
    anyClosed |= s.eof;
  }
  if (!anyClosed) return Status::ok();  // all stalled: cannot happen with a waiting receive
  return connectionError(-1, "closed while this rank still expected data");
}

Status SocketConnector::fail(Status status) {
  if (!status.isOk() && error_.isOk()) {
    // After a local abort our own shutdown() looks like a dead peer; say what happened.
    error_ = abort_->triggered() ? abort_->error() : std::move(status);
  }
  return error_;
}

Status SocketConnector::connectionError(int stream, const std::string& what) const {
  std::string where = stream >= 0 ? " (stream " + std::to_string(stream) + ")" : "";
  // Not braid's own abort (fail() tells that apart): someone on this rank shut
  // the connection down, so this rank is the one cut off, not the peer.
  for (const Stream& s : streams_) {
    if (!shutDownHere(s.fd.get())) continue;
    return remoteError("socket connection to rank " + std::to_string(peer_) + where + ": " + what +
                           "; it was shut down on this rank (" + std::to_string(rank_) +
                           "), not by rank " + std::to_string(peer_),
                       rank_);
  }
  return remoteError("socket connection to rank " + std::to_string(peer_) + where + ": " + what +
                         "; rank " + std::to_string(peer_) + " may have failed or aborted",
                     peer_);
}

}  // namespace braid::transport::socket
