// The bootstrap's frames and handshake MACs, without sockets: every parser must accept
// what the encoders produce and refuse everything else (wrong magic, version, kind,
// reserved bits, lengths, counts, ranks, addresses, a flipped bit anywhere under a MAC,
// a replayed or reflected frame), as a Status, never a crash.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>

#include "bootstrap/handshake.h"
#include "bootstrap/wire.h"

namespace braid::bootstrap {
namespace {

using wire::Bytes;
using wire::Kind;

WireAddr loopback(int port) {
  SockAddr a;
  auto* in = reinterpret_cast<sockaddr_in*>(&a.storage);
  in->sin_family = AF_INET;
  in->sin_port = htons(port);
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.length = sizeof(sockaddr_in);
  return WireAddr::from(a);
}

const uint8_t kSecret[kSecretBytes] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
const uint8_t kOtherSecret[kSecretBytes] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17};

Bytes nonce(uint8_t fill) { return Bytes(wire::kNonceBytes, fill); }

// A whole root handshake, as both ends would produce it.
struct RootExchange {
  Transcript transcript;
  Bytes answer;
};
RootExchange rootExchange(const uint8_t* helloSecret, uint8_t challengeFill, uint8_t helloFill) {
  RootExchange x;
  x.transcript.challenge = makeChallenge(kRootProtocol, nonce(challengeFill).data());
  wire::RootHelloFields fields{.rank = 1, .nranks = 2, .listen = loopback(4000)};
  x.transcript.hello = makeHello(helloSecret, kRootProtocol, x.transcript.challenge,
                                 nonce(helloFill).data(), wire::encodeFields(fields));
  wire::RootReplyFields reply{
      .code = braidSuccess, .message = "", .table = {loopback(1), loopback(2)}};
  x.answer = makeAnswer(kSecret, kRootProtocol, x.transcript, wire::encodeFields(reply));
  return x;
}

TEST(WireHeader, AcceptsWhatEncodeFrameWrites) {
  Bytes frame = wire::encodeFrame(Kind::kRingProof, Bytes(wire::kMacBytes, 7));
  ASSERT_EQ(frame.size(), wire::kHeaderBytes + wire::kMacBytes);
  auto length =
      wire::parseHeader(wire::ByteSpan(frame).first(wire::kHeaderBytes), Kind::kRingProof);
  ASSERT_TRUE(length.isOk()) << length.status().message();
  EXPECT_EQ(*length, wire::kMacBytes);
}

TEST(WireHeader, RefusesEachBadField) {
  const Bytes good = wire::encodeFrame(Kind::kRingProof, Bytes(wire::kMacBytes, 7));
  auto header = [&](size_t index, uint8_t value) {
    Bytes h(good.begin(), good.begin() + wire::kHeaderBytes);
    h[index] = value;
    return h;
  };
  EXPECT_FALSE(wire::parseHeader(header(0, 'X'), Kind::kRingProof).isOk()) << "magic";
  EXPECT_FALSE(wire::parseHeader(header(4, 5), Kind::kRingProof).isOk()) << "kind";
  EXPECT_FALSE(wire::parseHeader(header(5, 1), Kind::kRingProof).isOk()) << "version";
  EXPECT_FALSE(wire::parseHeader(header(6, 1), Kind::kRingProof).isOk()) << "reserved";
  EXPECT_FALSE(wire::parseHeader(header(8, 31), Kind::kRingProof).isOk()) << "length - 1";
  EXPECT_FALSE(wire::parseHeader(header(11, 0xff), Kind::kRingProof).isOk()) << "huge length";
  EXPECT_FALSE(wire::parseHeader(wire::ByteSpan(good).first(11), Kind::kRingProof).isOk());
  // The root reply is the one variable-size frame; its cap holds too.
  Bytes reply = wire::encodeFrame(Kind::kRootReply, Bytes(42, 0));
  reply[8] = 0xff, reply[9] = 0xff, reply[10] = 0xff, reply[11] = 0x00;  // ~16 MB
  EXPECT_FALSE(wire::parseHeader(wire::ByteSpan(reply).first(12), Kind::kRootReply).isOk());
}

TEST(FrameReader, AssemblesAFrameFedOneByteAtATime) {
  const Bytes frame = wire::encodeFrame(Kind::kRingChallenge, nonce(9));
  wire::FrameReader reader(Kind::kRingChallenge);
  for (uint8_t byte : frame) {
    ASSERT_FALSE(reader.done());
    ASSERT_GE(reader.need(), 1u);
    ASSERT_TRUE(reader.feed(wire::ByteSpan(&byte, 1)).isOk());
  }
  EXPECT_TRUE(reader.done());
  EXPECT_EQ(reader.need(), 0u);
  EXPECT_EQ(reader.frame(), frame);
}

TEST(FrameReader, RefusesAHugeLengthRightAfterTheHeader) {
  Bytes header = wire::encodeFrame(Kind::kRootHello, Bytes(86, 0));
  header.resize(wire::kHeaderBytes);
  std::memset(header.data() + 8, 0xff, 4);
  wire::FrameReader reader(Kind::kRootHello);
  EXPECT_FALSE(reader.feed(header).isOk());
  // Feeding more than need() is a caller bug, reported rather than obeyed.
  wire::FrameReader fresh(Kind::kRootHello);
  EXPECT_FALSE(fresh.feed(Bytes(wire::kHeaderBytes + 1, 0)).isOk());
}

TEST(WireFields, RoundTripAndStrictness) {
  wire::RootHelloFields hello{.rank = 3, .nranks = 4, .listen = loopback(5000)};
  Bytes bytes = wire::encodeFields(hello);
  auto parsed = wire::parseRootHelloFields(bytes);
  ASSERT_TRUE(parsed.isOk()) << parsed.status().message();
  EXPECT_EQ(parsed->rank, 3);
  EXPECT_EQ(parsed->nranks, 4);
  EXPECT_EQ(std::memcmp(&parsed->listen, &hello.listen, sizeof(WireAddr)), 0);

  Bytes extra = bytes;
  extra.push_back(0);
  EXPECT_FALSE(wire::parseRootHelloFields(extra).isOk()) << "trailing byte";
  EXPECT_FALSE(wire::parseRootHelloFields(wire::ByteSpan(bytes).first(bytes.size() - 1)).isOk());
  for (auto [rank, nranks] : {std::pair{4, 4}, {-1, 4}, {0, 0}, {0, wire::kMaxRanks + 1}}) {
    Bytes b = wire::encodeFields(wire::RootHelloFields{rank, nranks, loopback(1)});
    EXPECT_FALSE(wire::parseRootHelloFields(b).isOk()) << rank << " of " << nranks;
  }
  WireAddr bad = loopback(1);
  bad.length = 3;
  EXPECT_FALSE(
      wire::parseRootHelloFields(wire::encodeFields(wire::RootHelloFields{0, 1, bad})).isOk());
  bad = loopback(1);
  bad.bytes[0] = bad.bytes[1] = 0;  // family AF_UNSPEC
  EXPECT_FALSE(
      wire::parseRootHelloFields(wire::encodeFields(wire::RootHelloFields{0, 1, bad})).isOk());
}

TEST(WireFields, HelloFlagsCarryTlsAndRefuseUnknownBits) {
  for (uint32_t flags : {0u, wire::kFlagTls}) {
    wire::RootHelloFields root{.rank = 0, .nranks = 2, .listen = loopback(7), .flags = flags};
    auto parsedRoot = wire::parseRootHelloFields(wire::encodeFields(root));
    ASSERT_TRUE(parsedRoot.isOk()) << parsedRoot.status().message();
    EXPECT_EQ(parsedRoot->flags, flags);
    auto parsedRing = wire::parseRingHelloFields(
        wire::encodeFields(wire::RingHelloFields{.rank = 5, .flags = flags}));
    ASSERT_TRUE(parsedRing.isOk()) << parsedRing.status().message();
    EXPECT_EQ(parsedRing->rank, 5);
    EXPECT_EQ(parsedRing->flags, flags);
  }
  for (uint32_t unknown : {2u, 0x80000000u, wire::kFlagTls | 4u}) {
    wire::RootHelloFields root{.rank = 0, .nranks = 2, .listen = loopback(7), .flags = unknown};
    auto parsedRoot = wire::parseRootHelloFields(wire::encodeFields(root));
    ASSERT_FALSE(parsedRoot.isOk()) << unknown;
    EXPECT_NE(parsedRoot.status().message().find("unknown hello flags"), std::string::npos);
    EXPECT_FALSE(wire::parseRingHelloFields(
                     wire::encodeFields(wire::RingHelloFields{.rank = 1, .flags = unknown}))
                     .isOk())
        << unknown;
  }
}

TEST(WireFields, RootReplyCountsMustAgree) {
  wire::RootReplyFields ok{
      .code = braidSuccess, .message = "", .table = {loopback(1), loopback(2)}};
  ASSERT_TRUE(wire::parseRootReplyFields(wire::encodeFields(ok), 2).isOk());
  EXPECT_FALSE(wire::parseRootReplyFields(wire::encodeFields(ok), 3).isOk()) << "rank asked for 3";
  wire::RootReplyFields failure{
      .code = braidInvalidArgument, .message = "ranks disagree\n", .table = {}};
  auto parsed = wire::parseRootReplyFields(wire::encodeFields(failure), 2);
  ASSERT_TRUE(parsed.isOk()) << parsed.status().message();
  EXPECT_EQ(parsed->code, braidInvalidArgument);
  EXPECT_EQ(parsed->message, "ranks disagree?");  // unprintable characters never travel
  failure.table = {loopback(1)};
  EXPECT_FALSE(wire::parseRootReplyFields(wire::encodeFields(failure), 1).isOk())
      << "table on error";
  wire::RootReplyFields badCode{.code = 77, .message = "", .table = {}};
  EXPECT_FALSE(wire::parseRootReplyFields(wire::encodeFields(badCode), 1).isOk());
  Bytes truncated = wire::encodeFields(ok);
  truncated.pop_back();
  EXPECT_FALSE(wire::parseRootReplyFields(truncated, 2).isOk());
}

TEST(Handshake, HonestExchangeVerifiesBothWays) {
  RootExchange x = rootExchange(kSecret, 1, 2);
  auto helloFields = verifyHello(kSecret, kRootProtocol, x.transcript);
  ASSERT_TRUE(helloFields.isOk()) << helloFields.status().message();
  EXPECT_TRUE(wire::parseRootHelloFields(*helloFields).isOk());
  auto replyFields = verifyAnswer(kSecret, kRootProtocol, x.transcript, x.answer);
  ASSERT_TRUE(replyFields.isOk()) << replyFields.status().message();
  EXPECT_EQ(wire::parseRootReplyFields(*replyFields, 2)->table.size(), 2u);
}

TEST(Handshake, WrongSecretFailsInBothDirections) {
  RootExchange x = rootExchange(kOtherSecret, 1, 2);
  EXPECT_FALSE(verifyHello(kSecret, kRootProtocol, x.transcript).isOk());
  RootExchange y = rootExchange(kSecret, 1, 2);
  EXPECT_FALSE(verifyAnswer(kOtherSecret, kRootProtocol, y.transcript, y.answer).isOk());
}

TEST(Handshake, EveryFlippedBitIsCaught) {
  RootExchange x = rootExchange(kSecret, 1, 2);
  for (size_t i = 0; i < x.transcript.hello.size(); ++i) {
    Transcript t = x.transcript;
    t.hello[i] ^= 0x10;
    EXPECT_FALSE(verifyHello(kSecret, kRootProtocol, t).isOk()) << "hello byte " << i;
  }
  for (size_t i = 0; i < x.answer.size(); ++i) {
    Bytes a = x.answer;
    a[i] ^= 0x10;
    EXPECT_FALSE(verifyAnswer(kSecret, kRootProtocol, x.transcript, a).isOk())
        << "answer byte " << i;
  }
}

TEST(Handshake, ReplaysAndReflectionsFail) {
  RootExchange recorded = rootExchange(kSecret, 1, 2);
  // A recorded hello against a fresh challenge (new responder nonce).
  Transcript replay{makeChallenge(kRootProtocol, nonce(3).data()), recorded.transcript.hello};
  EXPECT_FALSE(verifyHello(kSecret, kRootProtocol, replay).isOk());
  // A recorded answer against a fresh hello (new initiator nonce).
  RootExchange fresh = rootExchange(kSecret, 1, 4);
  EXPECT_FALSE(verifyAnswer(kSecret, kRootProtocol, fresh.transcript, recorded.answer).isOk());
  // A root hello presented on a ring listener (other frame kinds).
  EXPECT_FALSE(verifyHello(kSecret, kRingProtocol, recorded.transcript).isOk());
}

TEST(Handshake, HandMadeTranscriptsNeverReadOutOfBounds) {
  const Bytes challenge = makeChallenge(kRingProtocol, nonce(1).data());
  for (size_t n : {0u, 5u, 12u, 40u, 63u, 64u, 65u}) {
    Transcript t{challenge, Bytes(n, 0)};
    if (n >= 12) t.hello = wire::encodeFrame(Kind::kRingHello, Bytes(n - 12, 0));
    EXPECT_FALSE(verifyHello(kSecret, kRingProtocol, t).isOk()) << n;
    EXPECT_FALSE(verifyAnswer(kSecret, kRingProtocol, t, Bytes(n, 0)).isOk()) << n;
  }
  EXPECT_FALSE(verifyHello(kSecret, kRingProtocol, Transcript{}).isOk());
}

}  // namespace
}  // namespace braid::bootstrap
