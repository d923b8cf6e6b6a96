// Fuzz target: every byte a bootstrap peer can send us, through every parser it reaches.
//
// Input: [kind selector] [piece size] [bytes...]. The bytes go through a FrameReader for the
// selected frame kind in pieces (as they might arrive from a socket), then, if a frame
// completes, through the MAC checks and the field parser of that kind; the raw bytes also
// go straight to each field parser. Properties checked besides "no crash, no UB, no leak":
// a completed frame is exactly header + announced body within bodyLimits(), and whatever a
// field parser accepts re-encodes to the very same bytes (parsers are strict and lossless).
// Seeds: corpus/bootstrap_frames, written by corpus/make_seeds.py.
#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "bootstrap/handshake.h"
#include "bootstrap/wire.h"

namespace {

using namespace braid::bootstrap;
using wire::Bytes;
using wire::ByteSpan;

void require(bool condition) {
  if (!condition) std::abort();
}

template <typename Fields>
void requireRoundTrip(const braid::Result<Fields>& parsed, ByteSpan bytes) {
  if (!parsed.isOk()) return;
  Bytes again = wire::encodeFields(const_cast<braid::Result<Fields>&>(parsed).value());
  require(again.size() == bytes.size() && std::equal(again.begin(), again.end(), bytes.begin()));
}

void parseFields(wire::Kind kind, ByteSpan fields, int expectedRanks) {
  switch (kind) {
    case wire::Kind::kRootHello:
      requireRoundTrip(wire::parseRootHelloFields(fields), fields);
      break;
    case wire::Kind::kRootReply:
      requireRoundTrip(wire::parseRootReplyFields(fields, expectedRanks), fields);
      break;
    case wire::Kind::kRingHello:
      requireRoundTrip(wire::parseRingHelloFields(fields), fields);
      break;
    default:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const auto kind = static_cast<wire::Kind>(1 + data[0] % 6);
  const size_t piece = 1 + data[1] % 64;
  const ByteSpan input(data + 2, size - 2);
  const uint8_t secret[kSecretBytes] = {1, 2, 3};
  const Protocol protocol = kind <= wire::Kind::kRootReply ? kRootProtocol : kRingProtocol;

  wire::FrameReader reader(kind);
  size_t used = 0;
  while (!reader.done() && used < input.size()) {
    size_t take = std::min({piece, reader.need(), input.size() - used});
    if (!reader.feed(input.subspan(used, take)).isOk()) break;
    used += take;
  }
  if (reader.done()) {
    const Bytes& frame = reader.frame();
    auto body = wire::parseHeader(ByteSpan(frame).first(wire::kHeaderBytes), kind);
    require(body.isOk() && frame.size() == wire::kHeaderBytes + *body);
    require(*body >= wire::bodyLimits(kind).min && *body <= wire::bodyLimits(kind).max);
    // The fields as the frame carries them, MAC unchecked: structured inputs for the parsers.
    ByteSpan fields = ByteSpan(frame).subspan(wire::kHeaderBytes);
    bool hasNonce = kind == wire::Kind::kRootHello || kind == wire::Kind::kRingHello;
    if (kind != wire::Kind::kRootChallenge && kind != wire::Kind::kRingChallenge) {
      fields = fields.subspan(hasNonce ? wire::kNonceBytes : 0);
      fields = fields.first(fields.size() - wire::kMacBytes);
      parseFields(kind, fields, data[1]);
    }
    // The frame as a hello or an answer in an otherwise honest transcript.
    const uint8_t nonce[wire::kNonceBytes] = {};
    Transcript t{makeChallenge(protocol, nonce), frame};
    auto helloFields = verifyHello(secret, protocol, t);
    if (helloFields.isOk()) parseFields(kind, *helloFields, data[1]);
    auto answerFields = verifyAnswer(secret, protocol, t, frame);
    if (answerFields.isOk()) parseFields(kind, *answerFields, data[1]);
  }
  parseFields(kind, input, 1 + data[1] % 8);
  (void)wire::parseWireAddr(input);
  return 0;
}
