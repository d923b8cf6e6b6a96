// The socket transport's wire formats: the address record ranks exchange
// through the bootstrap, the hello each new connection starts with, the
// header in front of every fragment of a message, and the abort notice.
//
// All records are fixed-size and sent in host byte order (ranks of one
// communicator share an architecture). Each starts with a magic so a stray
// or desynchronised byte stream is detected instead of trusted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace braid::transport::socket {

inline constexpr uint64_t kHelloMagic = 0x314b534449415242ULL;  // "BRAIDSK1" in memory
inline constexpr uint32_t kFrameMagic = 0x46445242u;            // "BRDF" in memory
inline constexpr uint32_t kNoticeMagic = 0x41445242u;           // "BRDA" in memory
/// An abort notice's reason is cut to this many bytes.
inline constexpr uint32_t kNoticeReasonBytes = 240;

/// One rank's listening endpoint, published with Bootstrap::allGather.
struct AddressRecord {
  uint8_t sockaddrBytes[128];  // a sockaddr_in or sockaddr_in6
  uint32_t sockaddrLength;
  int32_t streams;  // streams per peer this rank expects; all ranks must agree
  int32_t tls;      // a TlsMode; all ranks must agree
  int32_t reserved;
};
static_assert(sizeof(AddressRecord) == 144);

/// How a rank's streams run, published in its AddressRecord.
enum TlsMode : int32_t { kPlainTcp = 0, kTlsPsk = 1, kTlsCertificates = 2 };
inline const char* tlsModeName(int32_t mode) {
  switch (mode) {
    case kPlainTcp:
      return "plain TCP (BRAID_SOCKET_TLS unset or 0)";
    case kTlsPsk:
      return "TLS with the communicator's key (BRAID_SOCKET_TLS=1)";
    case kTlsCertificates:
      return "TLS with certificates (BRAID_SOCKET_TLS=1 and BRAID_TLS_CERT/KEY/CA)";
    default:
      return "an unknown TLS mode";
  }
}

/// The first bytes on every connection, in both directions: the connecting
/// (lower) rank says who it is, the accepting rank answers with its own. Both
/// prove they know the communicator's secret.
struct Hello {
  uint64_t magic;
  uint8_t secret[16];
  uint64_t tagHash;  // hash of Bootstrap::commTag(): which communicator
  int32_t rank;      // the sender's rank
  int32_t stream;    // 0 <= stream < streams
  int32_t streams;
  int32_t reserved;
};
static_assert(sizeof(Hello) == 48);

/// Precedes each fragment of a message. A message of `messageBytes` travels as
/// one or more fragments [offset, offset + length) on any of the peer's
/// streams; an empty message is one fragment of length 0.
struct FrameHeader {
  uint64_t seq;           // message number, per direction, from 0
  uint64_t messageBytes;  // the whole message's size (checked against the receive)
  uint64_t offset;        // of this fragment within the message
  uint32_t length;        // of this fragment's payload
  uint32_t magic;         // kFrameMagic
};
static_assert(sizeof(FrameHeader) == 32);

/// Notices: out-of-band frames between messages, told apart from data frames
/// by the magic kNoticeMagic. `messageBytes` holds their kind:
///  - kAbortNotice: a rank that fails writes one on every stream, at a frame
///    boundary, before it shuts the stream down, so that ranks which never
///    talk to the rank at fault still learn which rank that is. seq holds the
///    rank at fault (the origin, which may be a third rank) and `length`
///    bytes of reason text (at most kNoticeReasonBytes) follow.
///  - kWaitReport: the sender waited BRAID_TIMEOUT for rank seq; no text,
///    and the connection goes on.
/// `offset` is 0.
inline constexpr uint64_t kAbortNotice = 0;
inline constexpr uint64_t kWaitReport = 1;

inline FrameHeader noticeHeader(int origin, uint32_t reasonBytes) {
  return FrameHeader{static_cast<uint64_t>(origin), kAbortNotice, 0, reasonBytes, kNoticeMagic};
}
inline FrameHeader waitReportHeader(int waitedFor) {
  return FrameHeader{static_cast<uint64_t>(waitedFor), kWaitReport, 0, 0, kNoticeMagic};
}

/// FNV-1a: a stable 64-bit hash of the communicator tag for the hello.
inline uint64_t hashTag(const std::string& tag) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : tag) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

}  // namespace braid::transport::socket
