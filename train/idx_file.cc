/*
 * gzip IDX reading with zlib's gz* interface (which also reads a plain,
 * uncompressed file transparently; we insist on the gzip magic so that a
 * mislabelled file is reported instead of being half-parsed).
 */
#include "train/idx_file.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace braid::train {
namespace {

constexpr uint8_t kUnsignedByteType = 0x08;
constexpr uint32_t kMaxDims = 4;
constexpr uint64_t kMaxElements = uint64_t{1} << 32;  // 4 GiB: far beyond any dataset here

uint32_t bigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

}  // namespace

Status parseIdx(const std::vector<uint8_t>& bytes, const std::string& name, IdxArray* out) {
  if (bytes.size() < 4) {
    return Status::error(name + ": IDX header truncated (" + std::to_string(bytes.size()) +
                         " bytes, need at least 4)");
  }
  if (bytes[0] != 0 || bytes[1] != 0) {
    return Status::error(name + ": not an IDX file (the first two bytes must be zero)");
  }
  if (bytes[2] != kUnsignedByteType) {
    return Status::error(name + ": IDX element type 0x" + std::to_string(bytes[2]) +
                         " is not supported (only unsigned byte, 0x08)");
  }
  uint32_t ndims = bytes[3];
  if (ndims == 0 || ndims > kMaxDims) {
    return Status::error(name + ": IDX dimension count " + std::to_string(ndims) +
                         " is out of range 1.." + std::to_string(kMaxDims));
  }
  size_t header = 4 + 4 * size_t{ndims};
  if (bytes.size() < header) {
    return Status::error(name + ": IDX header truncated (dimension sizes missing)");
  }
  out->dims.clear();
  uint64_t elements = 1;
  for (uint32_t d = 0; d < ndims; ++d) {
    uint32_t size = bigEndian32(&bytes[4 + 4 * d]);
    out->dims.push_back(size);
    elements *= size;
    if (elements > kMaxElements) {
      return Status::error(name + ": IDX sizes describe more than 4 GiB of data");
    }
  }
  uint64_t payload = bytes.size() - header;
  if (payload != elements) {
    return Status::error(name + ": IDX payload is " + std::to_string(payload) +
                         " bytes but the header promises " + std::to_string(elements) +
                         (payload < elements ? " (file truncated)" : " (trailing bytes)"));
  }
  out->data.assign(bytes.begin() + static_cast<ptrdiff_t>(header), bytes.end());
  return Status();
}

Status readIdxGz(const std::string& path, IdxArray* out) {
  std::unique_ptr<FILE, int (*)(FILE*)> raw(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!raw) return Status::error(path + ": cannot open (" + std::strerror(errno) + ")");
  unsigned char magic[2] = {0, 0};
  size_t got = std::fread(magic, 1, 2, raw.get());
  if (got != 2 || magic[0] != 0x1f || magic[1] != 0x8b) {
    return Status::error(path + ": not a gzip file (bad magic bytes)");
  }
  raw.reset();

  std::unique_ptr<gzFile_s, GzCloser> gz(gzopen(path.c_str(), "rb"));
  if (!gz) return Status::error(path + ": gzopen failed");
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> chunk(1 << 20);
  for (;;) {
    int n = gzread(gz.get(), chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) {
      int code = 0;
      const char* message = gzerror(gz.get(), &code);
      return Status::error(path + ": corrupt gzip data (" + message + ")");
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + n);
  }
  // gzread returns 0 both at a clean end and at a stream cut short: ask which.
  int code = 0;
  const char* message = gzerror(gz.get(), &code);
  if (code != Z_OK && code != Z_STREAM_END) {
    return Status::error(path + ": corrupt or truncated gzip data (" + message + ")");
  }
  if (!gzeof(gz.get())) return Status::error(path + ": gzip stream ended early");
  return parseIdx(bytes, path, out);
}

}  // namespace braid::train
