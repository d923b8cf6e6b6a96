// Encoders and strict parsers of the bootstrap frames (see wire.h for the layout).
#include "bootstrap/wire.h"

#include <sys/socket.h>

#include <cstring>

namespace braid::bootstrap::wire {
namespace {

void putU16(Bytes* out, uint16_t v) {
  for (int i = 0; i < 2; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void putU32(Bytes* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Reads little-endian fields off a span; any read past the end fails the whole parse.
class Reader {
 public:
  explicit Reader(ByteSpan bytes) : bytes_(bytes) {}
  bool u16(uint16_t* v) { return little(v, 2); }
  bool u32(uint32_t* v) { return little(v, 4); }
  bool i32(int32_t* v) {
    uint32_t u;
    if (!u32(&u)) return false;
    *v = static_cast<int32_t>(u);
    return true;
  }
  bool take(size_t n, ByteSpan* out) {
    if (bytes_.size() - pos_ < n) return false;
    *out = bytes_.subspan(pos_, n);
    pos_ += n;
    return true;
  }
  size_t left() const { return bytes_.size() - pos_; }

 private:
  template <typename T>
  bool little(T* v, size_t n) {
    if (left() < n) return false;
    T value = 0;
    for (size_t i = 0; i < n; ++i) value |= static_cast<T>(T{bytes_[pos_ + i]} << (8 * i));
    pos_ += n;
    *v = value;
    return true;
  }

  ByteSpan bytes_;
  size_t pos_ = 0;
};

Status malformed(const std::string& what) {
  return Status(braidRemoteError, "bootstrap: malformed message: " + what);
}

Status checkFlags(uint32_t flags) {
  if ((flags & ~kKnownFlags) == 0) return Status::ok();
  return malformed("unknown hello flags " + std::to_string(flags));
}

}  // namespace

const char* kindName(Kind kind) {
  switch (kind) {
    case Kind::kRootChallenge:
      return "root challenge";
    case Kind::kRootHello:
      return "root hello";
    case Kind::kRootReply:
      return "root reply";
    case Kind::kRingChallenge:
      return "ring challenge";
    case Kind::kRingHello:
      return "ring hello";
    case Kind::kRingProof:
      return "ring proof";
  }
  return "unknown";
}

BodyLimits bodyLimits(Kind kind) {
  switch (kind) {
    case Kind::kRootChallenge:
    case Kind::kRingChallenge:
      return {kNonceBytes, kNonceBytes};
    case Kind::kRootHello:
      return {kNonceBytes + kRootHelloFieldBytes + kMacBytes,
              kNonceBytes + kRootHelloFieldBytes + kMacBytes};
    case Kind::kRootReply: {
      const size_t fixed = 4 + 2 + 4 + kMacBytes;  // code, message length, count, MAC
      return {fixed, fixed + kMaxMessageChars + size_t{kMaxRanks} * kWireAddrBytes};
    }
    case Kind::kRingHello:
      return {kNonceBytes + kRingHelloFieldBytes + kMacBytes,
              kNonceBytes + kRingHelloFieldBytes + kMacBytes};
    case Kind::kRingProof:
      return {kMacBytes, kMacBytes};
  }
  return {};
}

Bytes encodeFrame(Kind kind, ByteSpan body) {
  Bytes out;
  out.reserve(kHeaderBytes + body.size());
  putU32(&out, kMagic);
  out.push_back(static_cast<uint8_t>(kind));
  out.push_back(kVersion);
  putU16(&out, 0);
  putU32(&out, static_cast<uint32_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

Result<size_t> parseHeader(ByteSpan header, Kind expected) {
  Reader in(header);
  uint32_t magic = 0, length = 0;
  uint16_t reserved = 0;
  ByteSpan kindAndVersion;
  if (header.size() != kHeaderBytes || !in.u32(&magic) || !in.take(2, &kindAndVersion) ||
      !in.u16(&reserved) || !in.u32(&length)) {
    return malformed("a header must be " + std::to_string(kHeaderBytes) + " bytes");
  }
  if (magic != kMagic) return malformed("not a braid bootstrap frame (bad magic)");
  if (kindAndVersion[1] != kVersion) {
    return malformed("protocol version " + std::to_string(kindAndVersion[1]) + ", expected " +
                     std::to_string(kVersion) + " (mixed braid versions?)");
  }
  if (kindAndVersion[0] != static_cast<uint8_t>(expected)) {
    return malformed("frame kind " + std::to_string(kindAndVersion[0]) + " where a " +
                     kindName(expected) + " was expected");
  }
  if (reserved != 0) return malformed("reserved header bytes are not zero");
  BodyLimits limits = bodyLimits(expected);
  if (length < limits.min || length > limits.max) {
    return malformed(std::string(kindName(expected)) + " of " + std::to_string(length) +
                     " bytes; it must be " + std::to_string(limits.min) + ".." +
                     std::to_string(limits.max));
  }
  return static_cast<size_t>(length);
}

size_t FrameReader::need() const {
  if (!haveHeader_) return kHeaderBytes - frame_.size();
  return kHeaderBytes + bodyBytes_ - frame_.size();
}

Status FrameReader::feed(ByteSpan data) {
  if (data.size() > need()) return internalError("FrameReader: fed more than need()");
  frame_.insert(frame_.end(), data.begin(), data.end());
  if (!haveHeader_ && frame_.size() == kHeaderBytes) {
    BRAID_ASSIGN_OR_RETURN(bodyBytes_, parseHeader(frame_, expected_));
    haveHeader_ = true;
    frame_.reserve(kHeaderBytes + bodyBytes_);
  }
  return Status::ok();
}

void encodeWireAddr(const WireAddr& address, Bytes* out) {
  putU16(out, address.length);
  out->insert(out->end(), address.bytes, address.bytes + sizeof(address.bytes));
}

Result<WireAddr> parseWireAddr(ByteSpan bytes) {
  Reader in(bytes);
  WireAddr a;
  ByteSpan raw;
  if (bytes.size() != kWireAddrBytes || !in.u16(&a.length) || !in.take(sizeof(a.bytes), &raw)) {
    return malformed("an address must be " + std::to_string(kWireAddrBytes) + " bytes");
  }
  std::memcpy(a.bytes, raw.data(), sizeof(a.bytes));
  BRAID_RETURN_IF_ERROR(a.validate());
  return a;
}

Bytes encodeFields(const RootHelloFields& fields) {
  Bytes out;
  putU32(&out, static_cast<uint32_t>(fields.rank));
  putU32(&out, static_cast<uint32_t>(fields.nranks));
  encodeWireAddr(fields.listen, &out);
  putU32(&out, fields.flags);
  return out;
}

Result<RootHelloFields> parseRootHelloFields(ByteSpan bytes) {
  Reader in(bytes);
  RootHelloFields f;
  ByteSpan address;
  if (bytes.size() != kRootHelloFieldBytes || !in.i32(&f.rank) || !in.i32(&f.nranks) ||
      !in.take(kWireAddrBytes, &address) || !in.u32(&f.flags)) {
    return malformed("a root hello must carry " + std::to_string(kRootHelloFieldBytes) +
                     " bytes of fields");
  }
  if (f.nranks < 1 || f.nranks > kMaxRanks) {
    return malformed("nranks " + std::to_string(f.nranks) + " is outside 1.." +
                     std::to_string(kMaxRanks));
  }
  if (f.rank < 0 || f.rank >= f.nranks) {
    return malformed("rank " + std::to_string(f.rank) + " of " + std::to_string(f.nranks));
  }
  BRAID_RETURN_IF_ERROR(checkFlags(f.flags));
  BRAID_ASSIGN_OR_RETURN(f.listen, parseWireAddr(address));
  return f;
}

Bytes encodeFields(const RootReplyFields& fields) {
  Bytes out;
  const size_t chars = std::min(fields.message.size(), kMaxMessageChars);
  putU32(&out, static_cast<uint32_t>(fields.code));
  putU16(&out, static_cast<uint16_t>(chars));
  for (size_t i = 0; i < chars; ++i) {  // the parser accepts printable ASCII only
    char c = fields.message[i];
    out.push_back(c >= 0x20 && c <= 0x7e ? static_cast<uint8_t>(c) : '?');
  }
  putU32(&out, static_cast<uint32_t>(fields.table.size()));
  for (const WireAddr& a : fields.table) encodeWireAddr(a, &out);
  return out;
}

Result<RootReplyFields> parseRootReplyFields(ByteSpan bytes, int expectedRanks) {
  Reader in(bytes);
  RootReplyFields f;
  uint16_t chars = 0;
  uint32_t count = 0;
  ByteSpan message;
  if (!in.i32(&f.code) || !in.u16(&chars) || chars > kMaxMessageChars ||
      !in.take(chars, &message) || !in.u32(&count)) {
    return malformed("a root reply's result and message do not fit its length");
  }
  if (f.code < braidSuccess || f.code >= braidNumResults || f.code == braidInProgress) {
    return malformed("result code " + std::to_string(f.code) + " is not a braidResult_t");
  }
  for (uint8_t c : message) {
    if (c < 0x20 || c > 0x7e) return malformed("the root's message is not printable ASCII");
  }
  f.message.assign(message.begin(), message.end());
  const uint32_t wanted = f.code == braidSuccess ? static_cast<uint32_t>(expectedRanks) : 0;
  if (count != wanted || in.left() != size_t{count} * kWireAddrBytes) {
    return malformed("a root reply with " + std::to_string(count) + " addresses in " +
                     std::to_string(in.left()) + " bytes; expected " + std::to_string(wanted));
  }
  f.table.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    ByteSpan raw;
    in.take(kWireAddrBytes, &raw);
    Result<WireAddr> a = parseWireAddr(raw);
    if (!a.isOk()) return a.status().withContext("address of rank " + std::to_string(i));
    f.table.push_back(*a);
  }
  return f;
}

Bytes encodeFields(const RingHelloFields& fields) {
  Bytes out;
  putU32(&out, static_cast<uint32_t>(fields.rank));
  putU32(&out, fields.flags);
  return out;
}

Result<RingHelloFields> parseRingHelloFields(ByteSpan bytes) {
  Reader in(bytes);
  RingHelloFields f;
  if (bytes.size() != kRingHelloFieldBytes || !in.i32(&f.rank) || !in.u32(&f.flags)) {
    return malformed("a ring hello must carry " + std::to_string(kRingHelloFieldBytes) +
                     " bytes of fields");
  }
  if (f.rank < 0 || f.rank >= kMaxRanks) {
    return malformed("ring hello from rank " + std::to_string(f.rank));
  }
  BRAID_RETURN_IF_ERROR(checkFlags(f.flags));
  return f;
}

}  // namespace braid::bootstrap::wire
