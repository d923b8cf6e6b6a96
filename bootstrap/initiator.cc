// Reading frames with a deadline, and the initiator's three steps (see initiator.h).
#include "bootstrap/initiator.h"

#include <algorithm>

namespace braid::bootstrap {

Result<wire::Bytes> readFrame(int fd, wire::Kind kind, const Deadline& deadline) {
  wire::FrameReader reader(kind);
  uint8_t buffer[4096];
  while (!reader.done()) {
    size_t want = std::min(reader.need(), sizeof(buffer));
    BRAID_RETURN_IF_ERROR(transport::socket::recvAll(fd, buffer, want, deadline));
    BRAID_RETURN_IF_ERROR(reader.feed(wire::ByteSpan(buffer, want)));
  }
  return reader.frame();
}

Result<wire::Bytes> initiateHandshake(int fd, const uint8_t* secret, const Protocol& protocol,
                                      wire::ByteSpan fields, const Deadline& deadline,
                                      const std::string& peer) {
  Transcript t;
  Result<wire::Bytes> challenge = readFrame(fd, protocol.challenge, deadline);
  if (!challenge.isOk()) return challenge.status().withContext("waiting for " + peer);
  t.challenge = std::move(*challenge);
  uint8_t nonce[wire::kNonceBytes];
  BRAID_RETURN_IF_ERROR(randomBytes(nonce, sizeof(nonce)));
  t.hello = makeHello(secret, protocol, t.challenge, nonce, fields);
  Status sent = transport::socket::sendAll(fd, t.hello.data(), t.hello.size(), deadline);
  if (!sent.isOk()) return sent.withContext("sending hello to " + peer);
  Result<wire::Bytes> answer = readFrame(fd, protocol.answer, deadline);
  if (!answer.isOk()) return answer.status().withContext("waiting for " + peer);
  Result<wire::Bytes> answerFields = verifyAnswer(secret, protocol, t, *answer);
  if (!answerFields.isOk()) {
    return Status(braidRemoteError,
                  "bootstrap: " + peer +
                      " did not prove the communicator's secret (another communicator's, or "
                      "not a braid bootstrap)");
  }
  return answerFields;
}

}  // namespace braid::bootstrap
