// The bootstrap's wire format: length-prefixed frames and the fields inside them.
//
// Every bootstrap message is one frame: a 12-byte header (magic "BRB2", kind, protocol
// version, a reserved zero byte pair, body length; little-endian) and a body. Each kind
// has a fixed body size, or for the root's reply a size fixed by its own counts, and a
// hard cap, so a receiver knows right after the header whether to read on or drop the
// connection: a huge length is refused before a byte of body is read.
//
// Everything here is pure (bytes in, values or a Status out, no I/O), so the parsers can
// be unit-tested and fuzzed directly (tests/fuzz). Parsers are strict: a field out of
// range, a count that disagrees with the length, or a trailing byte is an error.
//
// Which frames travel in which order, and what the MACs cover, is handshake.h's business.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bootstrap/unique_id.h"
#include "core/status.h"

namespace braid::bootstrap::wire {

using Bytes = std::vector<uint8_t>;
using ByteSpan = std::span<const uint8_t>;

constexpr uint32_t kMagic = 0x32425242;  // "BRB2" in memory order
constexpr uint8_t kVersion = 3;          // 3: hellos carry flags (TLS)
constexpr size_t kHeaderBytes = 12;
constexpr size_t kNonceBytes = 16;
constexpr size_t kMacBytes = 32;
constexpr size_t kWireAddrBytes = 2 + sizeof(WireAddr::bytes);
/// The most ranks one bootstrap introduces; bounds the root's reply (about 2 MB).
constexpr int kMaxRanks = 1 << 16;
/// The longest error sentence the root sends back.
constexpr size_t kMaxMessageChars = 255;

enum class Kind : uint8_t {
  kRootChallenge = 1,  // root -> rank: nonce
  kRootHello = 2,      // rank -> root: nonce, rank, nranks, listen address, flags, MAC
  kRootReply = 3,      // root -> rank: result, message, address table, MAC
  kRingChallenge = 4,  // ring acceptor -> connector: nonce
  kRingHello = 5,      // connector -> acceptor: nonce, rank, flags, MAC
  kRingProof = 6,      // acceptor -> connector: MAC
};
const char* kindName(Kind kind);

/// The smallest and largest body a frame of `kind` may carry.
struct BodyLimits {
  size_t min = 0;
  size_t max = 0;
};
BodyLimits bodyLimits(Kind kind);

/// Header + body.
Bytes encodeFrame(Kind kind, ByteSpan body);

/// Validates a header (exactly kHeaderBytes) that must announce `expected`; returns the
/// body length it announces, within bodyLimits(expected).
Result<size_t> parseHeader(ByteSpan header, Kind expected);

/// Assembles one frame of an expected kind from bytes arriving in any pieces. The header
/// is checked as soon as it is complete; feed() never takes more than need() bytes, so
/// whatever follows the frame stays in the socket.
class FrameReader {
 public:
  explicit FrameReader(Kind expected) : expected_(expected) {}
  /// Bytes still missing before the frame (or, first, its header) is complete.
  size_t need() const;
  /// Appends data (at most need() bytes). An error means the peer is not speaking this
  /// protocol: the caller drops the connection.
  Status feed(ByteSpan data);
  bool done() const { return haveHeader_ && frame_.size() == kHeaderBytes + bodyBytes_; }
  /// The whole frame, header included (what MACs cover).
  const Bytes& frame() const { return frame_; }
  ByteSpan body() const { return ByteSpan(frame_).subspan(kHeaderBytes); }

 private:
  Kind expected_;
  bool haveHeader_ = false;
  size_t bodyBytes_ = 0;
  Bytes frame_;
};

/// Bits of a hello's flags. The initiator states whether the connection goes on in TLS
/// (BRAID_SOCKET_TLS=1): the MAC covers it, so nobody on the path can strip TLS, and a
/// responder that disagrees learns it from an authenticated rank (see link.h).
constexpr uint32_t kFlagTls = 1;
constexpr uint32_t kKnownFlags = kFlagTls;

/// What a rank tells the root (between its nonce and its MAC).
struct RootHelloFields {
  int32_t rank = -1;
  int32_t nranks = 0;
  WireAddr listen;     // where this rank's ring listener waits
  uint32_t flags = 0;  // kFlag*
};
constexpr size_t kRootHelloFieldBytes = 4 + 4 + kWireAddrBytes + 4;

/// What the root tells every rank (before its MAC).
struct RootReplyFields {
  int32_t code = braidSuccess;
  std::string message;          // why, when code is not braidSuccess
  std::vector<WireAddr> table;  // every rank's listen address on success, else empty
};

/// What the ring connector tells its acceptor (between nonce and MAC).
struct RingHelloFields {
  int32_t rank = -1;
  uint32_t flags = 0;  // kFlag*
};
constexpr size_t kRingHelloFieldBytes = 4 + 4;

Bytes encodeFields(const RootHelloFields& fields);
Bytes encodeFields(const RootReplyFields& fields);
Bytes encodeFields(const RingHelloFields& fields);

/// Parsers of the field bytes. parseRootReplyFields also checks the table has
/// `expectedRanks` entries on success (the rank knows how many it asked for).
Result<RootHelloFields> parseRootHelloFields(ByteSpan bytes);
Result<RootReplyFields> parseRootReplyFields(ByteSpan bytes, int expectedRanks);
Result<RingHelloFields> parseRingHelloFields(ByteSpan bytes);

/// A socket address as it travels (kWireAddrBytes), validated: IPv4 or IPv6 only, with
/// the length of its family.
void encodeWireAddr(const WireAddr& address, Bytes* out);
Result<WireAddr> parseWireAddr(ByteSpan bytes);

}  // namespace braid::bootstrap::wire
