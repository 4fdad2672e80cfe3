// FileSnapshot tells a loaded model's files apart from what they became: truncated,
// rewritten at the same size, replaced, removed; a folder's weight files each.
#include "util/file_snapshot.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace kvscope {
namespace {

namespace fs = std::filesystem;

class FileSnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("kvscope_snapshot_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& bytes) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }

  fs::path dir_;
};

TEST_F(FileSnapshotTest, AnUnchangedFileSaysNothing) {
  const std::string model = write("m.gguf", std::string(4096, 'x'));
  const FileSnapshot snap = FileSnapshot::take(model);
  EXPECT_EQ(snap.files(), 1u);
  EXPECT_EQ(snap.changed(), "");
}

TEST_F(FileSnapshotTest, TruncatedRewrittenAndRemovedFilesAreNamed) {
  const std::string model = write("m.gguf", std::string(4096, 'x'));
  const FileSnapshot snap = FileSnapshot::take(model);
  fs::resize_file(model, 1000);
  EXPECT_NE(snap.changed().find("4096 -> 1000"), std::string::npos) << snap.changed();

  const std::string other = write("n.gguf", std::string(64, 'a'));
  const FileSnapshot same_size = FileSnapshot::take(other);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  write("n.gguf", std::string(64, 'b'));  // same size, new time
  EXPECT_NE(same_size.changed().find("rewritten"), std::string::npos) << same_size.changed();

  fs::remove(other);
  EXPECT_NE(same_size.changed().find("removed"), std::string::npos);
}

TEST_F(FileSnapshotTest, AFolderWatchesItsWeightFilesOnly) {
  write("model-00001-of-00002.safetensors", std::string(100, 'w'));
  const std::string second = write("model-00002-of-00002.safetensors", std::string(100, 'w'));
  const std::string readme = write("README.md", "hello");
  const FileSnapshot snap = FileSnapshot::take(dir_.string());
  EXPECT_EQ(snap.files(), 2u);
  write("README.md", "edited, longer");
  EXPECT_EQ(snap.changed(), "");
  fs::resize_file(second, 10);
  EXPECT_NE(snap.changed().find("00002"), std::string::npos) << snap.changed();
}

}  // namespace
}  // namespace kvscope
