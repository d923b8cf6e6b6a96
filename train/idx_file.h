/*
 * Reading gzip-compressed IDX files (the MNIST / Fashion-MNIST container).
 *
 * An IDX file is: two zero bytes, a type byte (0x08 = unsigned byte), a
 * dimension count, that many big-endian uint32 sizes, then the elements in
 * row-major order. Only unsigned-byte files are accepted, which is what
 * Fashion-MNIST ships. The whole decompressed payload must be exactly the size
 * the header promises: a truncated or padded file is an error, as are a file
 * that is not gzip and a gzip stream that is corrupt.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/status.h"

namespace braid::train {

struct IdxArray {
  std::vector<uint32_t> dims;  // e.g. {60000, 28, 28}
  std::vector<uint8_t> data;   // product(dims) bytes
};

/// Reads the gzip IDX file at `path`; the error names the file and what is wrong.
Status readIdxGz(const std::string& path, IdxArray* out);

/// Parses an already decompressed IDX image (exposed for tests).
Status parseIdx(const std::vector<uint8_t>& bytes, const std::string& name, IdxArray* out);

}  // namespace braid::train
