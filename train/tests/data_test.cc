/*
 * The IDX/gzip loader on crafted files: a good pair parses to the exact bytes
 * written; each kind of damage (missing file, not gzip, corrupt deflate data,
 * a gzip stream cut short, an IDX payload shorter or longer than its header,
 * a wrong element type, mismatched counts, a label out of range) yields an
 * error that names the file and the problem. Plus the shuffle is a permutation
 * that depends on the epoch, and the real dataset (when installed) has the
 * published shape.
 */
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "train/dataset.h"
#include "train/idx_file.h"

namespace braid::train {
namespace {

namespace fs = std::filesystem;

class DataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("braid_train_data_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static std::vector<uint8_t> idx(std::vector<uint32_t> dims, uint8_t type = 0x08, long extra = 0) {
    std::vector<uint8_t> bytes = {0, 0, type, static_cast<uint8_t>(dims.size())};
    size_t count = 1;
    for (uint32_t d : dims) {
      for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(uint8_t(d >> shift));
      count *= d;
    }
    for (long i = 0; i < static_cast<long>(count) + extra; ++i)
      bytes.push_back(uint8_t(i * 7 % 10));
    return bytes;
  }

  std::string writeGz(const std::string& name, const std::vector<uint8_t>& bytes) {
    gzFile f = gzopen(path(name).c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), int(bytes.size()));
    gzclose(f);
    return path(name);
  }

  std::string writeRaw(const std::string& name, const std::vector<uint8_t>& bytes) {
    FILE* f = std::fopen(path(name).c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    return path(name);
  }

  static std::vector<uint8_t> readRaw(const std::string& file) {
    FILE* f = std::fopen(file.c_str(), "rb");
    std::vector<uint8_t> bytes;
    int c;
    while ((c = std::fgetc(f)) != EOF) bytes.push_back(uint8_t(c));
    std::fclose(f);
    return bytes;
  }

  static void expectError(const Status& status, const std::string& file, const std::string& words) {
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find(file), std::string::npos) << status.message();
    EXPECT_NE(status.message().find(words), std::string::npos) << status.message();
  }

  fs::path dir_;
};

TEST_F(DataTest, GoodFileParses) {
  auto bytes = idx({3, 28, 28});
  IdxArray out;
  ASSERT_TRUE(readIdxGz(writeGz("good.gz", bytes), &out).ok());
  EXPECT_EQ(out.dims, (std::vector<uint32_t>{3, 28, 28}));
  EXPECT_TRUE(std::equal(out.data.begin(), out.data.end(), bytes.begin() + 16));
}

TEST_F(DataTest, MissingFile) {
  IdxArray out;
  expectError(readIdxGz(path("absent.gz"), &out), "absent.gz", "cannot open");
}

TEST_F(DataTest, NotGzip) {
  IdxArray out;
  expectError(readIdxGz(writeRaw("plain", idx({2})), &out), "plain", "not a gzip file");
}

TEST_F(DataTest, CorruptDeflateData) {
  auto gz = readRaw(writeGz("c.gz", idx({200, 28, 28})));
  for (size_t i = 20; i < gz.size() - 8; i += 3) gz[i] ^= 0x5a;
  IdxArray out;
  expectError(readIdxGz(writeRaw("corrupt.gz", gz), &out), "corrupt.gz", "corrupt");
}

TEST_F(DataTest, TruncatedGzipStream) {
  auto gz = readRaw(writeGz("t.gz", idx({200, 28, 28})));
  gz.resize(gz.size() / 2);
  IdxArray out;
  Status status = readIdxGz(writeRaw("cut.gz", gz), &out);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cut.gz"), std::string::npos) << status.message();
}

TEST_F(DataTest, TruncatedAndPaddedPayload) {
  IdxArray out;
  expectError(readIdxGz(writeGz("short.gz", idx({4, 28, 28}, 0x08, -5)), &out), "short.gz",
              "truncated");
  expectError(readIdxGz(writeGz("long.gz", idx({4}, 0x08, 3)), &out), "long.gz", "trailing");
  expectError(parseIdx({0, 0, 8}, "tiny", &out), "tiny", "header truncated");
  expectError(parseIdx({0, 0, 8, 3, 0, 0}, "dims", &out), "dims", "header truncated");
}

TEST_F(DataTest, BadHeader) {
  IdxArray out;
  expectError(readIdxGz(writeGz("float.gz", idx({4}, 0x0d)), &out), "float.gz", "not supported");
  expectError(parseIdx({1, 0, 8, 1, 0, 0, 0, 0}, "magic", &out), "magic", "not an IDX file");
  expectError(parseIdx({0, 0, 8, 0}, "zero", &out), "zero", "dimension count");
}

TEST_F(DataTest, SplitChecksShapesAndLabels) {
  Dataset data;
  std::string images = writeGz("images.gz", idx({10, 28, 28}));
  expectError(loadSplit(images, writeGz("few.gz", idx({9})), &data), "few.gz", "9 labels");
  std::vector<uint8_t> labels = idx({10});
  labels.back() = 10;
  expectError(loadSplit(images, writeGz("range.gz", labels), &data), "range.gz", "not a class");
  expectError(loadSplit(writeGz("flat.gz", idx({10, 784})), writeGz("l.gz", idx({10})), &data),
              "flat.gz", "28 × 28");
  ASSERT_TRUE(loadSplit(images, writeGz("ok.gz", idx({10})), &data).ok());
  EXPECT_EQ(data.count, 10);
}

TEST(EpochOrder, IsAPermutationThatChangesPerEpoch) {
  auto a = epochOrder(1000, 5, 0), b = epochOrder(1000, 5, 1), again = epochOrder(1000, 5, 0);
  EXPECT_EQ(a, again);
  EXPECT_NE(a, b);
  std::sort(b.begin(), b.end());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(b[i], i);
}

TEST(FashionMnist, InstalledDatasetHasThePublishedShape) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(dir + "/train-images-idx3-ubyte.gz")) GTEST_SKIP() << dir << " not installed";
  FashionMnist data;
  Status status = loadFashionMnist(dir, &data);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(data.train.count, 60000);
  EXPECT_EQ(data.test.count, 10000);
  EXPECT_NEAR(data.mean, 0.2860, 1e-3);  // as published with the dataset's benchmarks
  EXPECT_NEAR(data.stddev, 0.3530, 1e-3);
}

}  // namespace
}  // namespace braid::train
