// MACs over handshake transcripts (see handshake.h for what each covers and why).
#include "bootstrap/handshake.h"

#include <string_view>
#include <vector>

#include "bootstrap/crypto.h"

namespace braid::bootstrap {
namespace {

constexpr std::string_view kHelloLabel = "braid bootstrap hello";
constexpr std::string_view kAnswerLabel = "braid bootstrap answer";

// HMAC over the label and the frames; the last frame without its trailing MAC.
Digest transcriptMac(const uint8_t* secret, std::string_view label,
                     std::initializer_list<wire::ByteSpan> frames) {
  std::vector<ConstBytes> parts{bytesOf(label)};
  parts.insert(parts.end(), frames.begin(), frames.end());
  return hmacSha256(secret, kSecretBytes, parts);
}

wire::ByteSpan withoutMac(const wire::Bytes& frame) {
  return wire::ByteSpan(frame).first(frame.size() - wire::kMacBytes);
}

bool macMatches(const Digest& expected, const wire::Bytes& frame) {
  return constantTimeEqual(expected.data(), frame.data() + frame.size() - wire::kMacBytes,
                           wire::kMacBytes);
}

// Frames that came through FrameReader already passed these checks; transcripts built by
// hand (tests, fuzzers) must not make the MAC code read out of bounds either.
Status checkFrame(const wire::Bytes& frame, wire::Kind kind, size_t minBody) {
  std::string what = std::string("bootstrap: ") + wire::kindName(kind);
  if (frame.size() < wire::kHeaderBytes) return Status(braidRemoteError, what + " is truncated");
  wire::ByteSpan all(frame);
  BRAID_ASSIGN_OR_RETURN(size_t body, wire::parseHeader(all.first(wire::kHeaderBytes), kind));
  if (body != frame.size() - wire::kHeaderBytes || body < minBody) {
    return Status(braidRemoteError, what + " length disagrees with its header");
  }
  return Status::ok();
}

}  // namespace

Digest deriveFromSecret(const uint8_t* secret, std::string_view purpose) {
  return hmacSha256(secret, kSecretBytes, {bytesOf(purpose)});
}

wire::Bytes makeChallenge(const Protocol& protocol, const uint8_t* nonce) {
  return wire::encodeFrame(protocol.challenge, wire::ByteSpan(nonce, wire::kNonceBytes));
}

wire::Bytes makeHello(const uint8_t* secret, const Protocol& protocol, const wire::Bytes& challenge,
                      const uint8_t* nonce, wire::ByteSpan fields) {
  wire::Bytes body(nonce, nonce + wire::kNonceBytes);
  body.insert(body.end(), fields.begin(), fields.end());
  body.resize(body.size() + wire::kMacBytes);  // the MAC is written below
  wire::Bytes frame = wire::encodeFrame(protocol.hello, body);
  Digest mac = transcriptMac(secret, kHelloLabel, {challenge, withoutMac(frame)});
  std::copy(mac.begin(), mac.end(), frame.end() - wire::kMacBytes);
  return frame;
}

Result<wire::Bytes> verifyHello(const uint8_t* secret, const Protocol& protocol,
                                const Transcript& transcript) {
  BRAID_RETURN_IF_ERROR(checkFrame(transcript.challenge, protocol.challenge, wire::kNonceBytes));
  BRAID_RETURN_IF_ERROR(
      checkFrame(transcript.hello, protocol.hello, wire::kNonceBytes + wire::kMacBytes));
  Digest mac =
      transcriptMac(secret, kHelloLabel, {transcript.challenge, withoutMac(transcript.hello)});
  if (!macMatches(mac, transcript.hello)) {
    return Status(braidRemoteError, "bootstrap: the hello does not prove the secret");
  }
  auto fieldsBegin = transcript.hello.begin() + wire::kHeaderBytes + wire::kNonceBytes;
  return wire::Bytes(fieldsBegin, transcript.hello.end() - wire::kMacBytes);
}

wire::Bytes makeAnswer(const uint8_t* secret, const Protocol& protocol,
                       const Transcript& transcript, wire::ByteSpan fields) {
  wire::Bytes body(fields.begin(), fields.end());
  body.resize(body.size() + wire::kMacBytes);
  wire::Bytes frame = wire::encodeFrame(protocol.answer, body);
  Digest mac = transcriptMac(secret, kAnswerLabel,
                             {transcript.challenge, transcript.hello, withoutMac(frame)});
  std::copy(mac.begin(), mac.end(), frame.end() - wire::kMacBytes);
  return frame;
}

Result<wire::Bytes> verifyAnswer(const uint8_t* secret, const Protocol& protocol,
                                 const Transcript& transcript, const wire::Bytes& answer) {
  BRAID_RETURN_IF_ERROR(checkFrame(answer, protocol.answer, wire::kMacBytes));
  Digest mac = transcriptMac(secret, kAnswerLabel,
                             {transcript.challenge, transcript.hello, withoutMac(answer)});
  if (!macMatches(mac, answer)) {
    return Status(braidRemoteError, "bootstrap: the answer does not prove the secret");
  }
  return wire::Bytes(answer.begin() + wire::kHeaderBytes, answer.end() - wire::kMacBytes);
}

}  // namespace braid::bootstrap
