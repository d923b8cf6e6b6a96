// braid's wrappers over libcrypto (bootstrap/crypto.h) against the published test vectors:
// the FIPS 180-2 / NIST SHA-256 examples, every HMAC-SHA256 case of RFC 4231 and the
// HKDF-SHA256 cases of RFC 5869. A message given in several parts must MAC as one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bootstrap/crypto.h"
#include "bootstrap/unique_id.h"

namespace braid::bootstrap {
namespace {

std::string hex(const Digest& d) { return toHex(d.data(), d.size()); }

std::vector<uint8_t> repeat(uint8_t byte, size_t n) { return std::vector<uint8_t>(n, byte); }

std::string hmacHex(const std::vector<uint8_t>& key, const std::string& data) {
  return hex(hmacSha256(key.data(), key.size(), {bytesOf(data)}));
}

std::string asString(const std::vector<uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

TEST(Sha256, FipsExamples) {
  EXPECT_EQ(hex(sha256("", 0)), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(sha256("abc", 3)),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string twoBlocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(hex(sha256(twoBlocks.data(), twoBlocks.size())),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string long896 =
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqr"
      "lmnopqrsmnopqrstnopqrstu";
  EXPECT_EQ(hex(sha256(long896.data(), long896.size())),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, OneMillion) {
  const std::string million(1000000, 'a');
  EXPECT_EQ(hex(sha256(million.data(), million.size())),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Hmac, Rfc4231TestCases) {
  EXPECT_EQ(hmacHex(repeat(0x0b, 20), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hmacHex({'J', 'e', 'f', 'e'}, "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(hmacHex(repeat(0xaa, 20), asString(repeat(0xdd, 50))),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  std::vector<uint8_t> key4;
  for (int i = 1; i <= 25; ++i) key4.push_back(static_cast<uint8_t>(i));
  EXPECT_EQ(hmacHex(key4, asString(repeat(0xcd, 50))),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  // Case 5 publishes only the first 128 bits.
  EXPECT_EQ(hmacHex(repeat(0x0c, 20), "Test With Truncation").substr(0, 32),
            "a3b6167473100ee06e0c796c2955552b");
  // Cases 6 and 7: keys longer than a block are hashed first.
  EXPECT_EQ(hmacHex(repeat(0xaa, 131), "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(hmacHex(repeat(0xaa, 131),
                    "This is a test using a larger than block-size key and a larger than "
                    "block-size data. The key needs to be hashed before being used by the HMAC "
                    "algorithm."),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(Hmac, PartsMacAsTheirConcatenation) {
  const std::vector<uint8_t> key = repeat(0x42, 16);
  const std::string text = "what do ya want for nothing? and some more bytes";
  const Digest whole = hmacSha256(key.data(), key.size(), {bytesOf(text)});
  for (size_t cut = 0; cut <= text.size(); cut += 7) {
    std::string_view all(text);
    EXPECT_EQ(hex(hmacSha256(key.data(), key.size(),
                             {bytesOf(all.substr(0, cut)), {}, bytesOf(all.substr(cut))})),
              hex(whole))
        << "cut at " << cut;
  }
  // A different key or message changes the MAC.
  std::vector<uint8_t> other = key;
  other[15] ^= 1;
  EXPECT_NE(hex(hmacSha256(other.data(), other.size(), {bytesOf(text)})), hex(whole));
  EXPECT_NE(hex(hmacSha256(key.data(), key.size(), {bytesOf(text + ".")})), hex(whole));
}

std::string hkdfHex(const std::vector<uint8_t>& ikm, const std::vector<uint8_t>& salt,
                    const std::string& info, size_t bytes) {
  std::vector<uint8_t> out(bytes);
  hkdfSha256(ikm, salt, info, out);
  return toHex(out.data(), out.size());
}

TEST(Hkdf, Rfc5869TestCases) {
  std::vector<uint8_t> salt(13);
  for (size_t i = 0; i < salt.size(); ++i) salt[i] = static_cast<uint8_t>(i);
  std::string info;
  for (int i = 0xf0; i <= 0xf9; ++i) info += static_cast<char>(i);
  // Case 1: basic; case 3: no salt and no info.
  EXPECT_EQ(hkdfHex(repeat(0x0b, 22), salt, info, 42),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
  EXPECT_EQ(hkdfHex(repeat(0x0b, 22), {}, "", 42),
            "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8");
}

TEST(Random, FreshBytesEachCall) {
  uint8_t a[32] = {}, b[32] = {};
  ASSERT_TRUE(randomBytes(a, sizeof(a)).isOk());
  ASSERT_TRUE(randomBytes(b, sizeof(b)).isOk());
  EXPECT_NE(toHex(a, sizeof(a)), toHex(b, sizeof(b)));
  EXPECT_NE(toHex(a, sizeof(a)), std::string(64, '0'));
}

TEST(Hmac, ConstantTimeEqualSeesEveryByte) {
  uint8_t a[32] = {}, b[32] = {};
  EXPECT_TRUE(constantTimeEqual(a, b, sizeof(a)));
  for (size_t i = 0; i < sizeof(a); ++i) {
    b[i] = 1;
    EXPECT_FALSE(constantTimeEqual(a, b, sizeof(a))) << "difference at byte " << i;
    b[i] = 0;
  }
}

}  // namespace
}  // namespace braid::bootstrap
