// Reading frames with a deadline, and the initiator's steps (see initiator.h).
#include "bootstrap/initiator.h"

#include <algorithm>

namespace braid::bootstrap {

Result<wire::Bytes> readFrame(Link& link, wire::Kind kind, const Deadline& deadline) {
  wire::FrameReader reader(kind);
  uint8_t buffer[4096];
  while (!reader.done()) {
    size_t want = std::min(reader.need(), sizeof(buffer));
    BRAID_RETURN_IF_ERROR(link.recvAll(buffer, want, deadline));
    BRAID_RETURN_IF_ERROR(reader.feed(wire::ByteSpan(buffer, want)));
  }
  return reader.frame();
}

Result<wire::Bytes> readFrame(int fd, wire::Kind kind, const Deadline& deadline) {
  Link link{Fd(fd)};
  Result<wire::Bytes> frame = readFrame(link, kind, deadline);
  (void)link.release();  // the caller's socket
  return frame;
}

Result<wire::Bytes> initiateHandshake(Link& link, const uint8_t* secret, const Protocol& protocol,
                                      wire::ByteSpan fields, const Deadline& deadline,
                                      const std::string& peer, bool tls, int peerRank) {
  const auto naming = [&](const Status& s, const std::string& context) {
    return Status(s.code(), context + ": " + s.message(), s.peer() >= 0 ? s.peer() : peerRank);
  };
  Transcript t;
  Result<wire::Bytes> challenge = readFrame(link, protocol.challenge, deadline);
  if (!challenge.isOk()) return naming(challenge.status(), "waiting for " + peer);
  t.challenge = std::move(*challenge);
  uint8_t nonce[wire::kNonceBytes];
  BRAID_RETURN_IF_ERROR(randomBytes(nonce, sizeof(nonce)));
  t.hello = makeHello(secret, protocol, t.challenge, nonce, fields);
  Status sent = link.sendAll(t.hello.data(), t.hello.size(), deadline);
  if (!sent.isOk()) return naming(sent, "sending hello to " + peer);
  if (tls) BRAID_RETURN_IF_ERROR(link.startTls(true, linkKey(secret, t), deadline, peer, peerRank));
  Result<wire::Bytes> answer = readFrame(link, protocol.answer, deadline);
  if (!answer.isOk()) return naming(answer.status(), "waiting for " + peer);
  Result<wire::Bytes> answerFields = verifyAnswer(secret, protocol, t, *answer);
  if (!answerFields.isOk()) {
    return Status(braidRemoteError,
                  "bootstrap: " + peer +
                      " did not prove the communicator's secret (another communicator's, or "
                      "not a braid bootstrap)",
                  peerRank);
  }
  return answerFields;
}

}  // namespace braid::bootstrap
