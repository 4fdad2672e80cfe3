// Model files that are not regular files, and links that leave the model folder (issue #38,
// item 5). open() on a FIFO waits for a writer: every check that could block runs in a child
// process (a gtest death test) that SIGALRM ends after 10 s, so a regression fails the test
// instead of hanging CI.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/discovery/model_file_check.h"
#include "model/gguf/gguf_file.h"
#include "model/model.h"
#include "model/safetensors_file.h"
#include "support/test_data.h"
#include "support/tiny_hf_folder.h"
#include "util/error.h"
#include "util/mapped_file.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// Runs `open` in a child: exit 0 when it throws an Error naming `mentions` within 10 s;
// 2 (with the message on stderr) for another message, 1 when nothing is thrown, SIGALRM
// when it blocks.
void expect_refused_quickly(const std::function<void()>& open, const std::string& mentions) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::alarm(10);
        try {
          open();
        } catch (const Error& e) {
          if (std::string(e.what()).find(mentions) != std::string::npos) std::_Exit(0);
          std::fprintf(stderr, "message: %s\n", e.what());
          std::_Exit(2);
        }
        std::_Exit(1);
      },
      ::testing::ExitedWithCode(0), "")
      << "expected an error naming '" << mentions << "' within 10 s";
}

std::string error_of(const std::function<void()>& open) {
  try {
    open();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

fs::path make_fifo(const fs::path& path) {
  fs::remove(path);
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
  return path;
}

// The tiny folder with its weights named by an index: every tensor in model.safetensors but
// the first, which the index puts in `odd_shard`.
fs::path folder_with_index(const std::string& odd_shard) {
  const fs::path folder = test::scratch_dir() / "model";
  test::write_tiny_hf_folder(folder);
  const auto header = SafetensorsFile::read_header((folder / "model.safetensors").string());
  nlohmann::json map = nlohmann::json::object();
  for (const auto& t : header.tensors()) map[t.name] = "model.safetensors";
  map[header.tensors().front().name] = odd_shard;
  std::ofstream(folder / "model.safetensors.index.json") << nlohmann::json{{"weight_map", map}};
  return folder;
}

TEST(ModelFileTypes, FifoShardNamedByTheIndexIsRefusedWithoutBlocking) {
  const fs::path folder = folder_with_index("pipe.safetensors");
  make_fifo(folder / "pipe.safetensors");
  expect_refused_quickly([&] { load_model(folder.string()); },
                         "pipe.safetensors: cannot open (not a regular file (a FIFO))");
}

TEST(ModelFileTypes, FifoModelFileIsRefusedByEveryReaderWithoutBlocking) {
  const fs::path fifo = make_fifo(test::scratch_dir() / "pipe.gguf");
  expect_refused_quickly([&] { MappedFile map(fifo.string()); }, "a FIFO");
  expect_refused_quickly([&] { GgufFile::read_header(fifo.string()); }, "a FIFO");
  expect_refused_quickly([&] { SafetensorsFile::read_header(fifo.string()); }, "a FIFO");
  expect_refused_quickly(
      [&] {
        const std::string why = model_file_problem(fifo.string(), "pipe.gguf");
        if (why.find("a FIFO") != std::string::npos) throw ModelError(why);
      },
      "a FIFO");
}

TEST(ModelFileTypes, CharacterDeviceIsRefusedByName) {
  if (!fs::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  EXPECT_THAT(error_of([] { SafetensorsFile::read_header("/dev/zero"); }),
              HasSubstr("/dev/zero: cannot open: not a regular file (a character device)"));
  EXPECT_THAT(error_of([] { GgufFile::read_header("/dev/zero"); }),
              HasSubstr("a character device"));
  EXPECT_THAT(error_of([] { MappedFile map("/dev/zero"); }), HasSubstr("a character device"));
}

TEST(ModelFileTypes, ShardLinkedOutsideTheFolderIsRefusedNamingTheTarget) {
  const fs::path outside = test::scratch_dir() / "elsewhere";
  fs::create_directories(outside);
  std::ofstream(outside / "secret.txt") << "SECRET=hunter2, not a safetensors file";
  const fs::path folder = folder_with_index("linked.safetensors");
  fs::create_symlink(outside / "secret.txt", folder / "linked.safetensors");
  const std::string error = error_of([&] { load_model(folder.string()); });
  EXPECT_THAT(error, HasSubstr("linked.safetensors: a symbolic link to " +
                               fs::canonical(outside / "secret.txt").string() +
                               ", outside the model folder; refusing to read it"));
  EXPECT_THAT(error, Not(HasSubstr("SECRET")));
}

TEST(ModelFileTypes, RelativeLinkThatClimbsOutOfTheFolderIsRefused) {
  const fs::path folder = test::scratch_dir() / "model";
  test::write_tiny_hf_folder(folder);
  fs::rename(folder / "model.safetensors", folder.parent_path() / "weights.safetensors");
  fs::create_symlink("../weights.safetensors", folder / "model.safetensors");
  EXPECT_THAT(error_of([&] { load_model(folder.string()); }),
              HasSubstr("outside the model folder"));
}

TEST(ModelFileTypes, LinkInsideTheFolderLoads) {
  const fs::path folder = test::scratch_dir() / "model";
  test::write_tiny_hf_folder(folder);
  fs::create_directories(folder / "weights");
  fs::rename(folder / "model.safetensors", folder / "weights/model.safetensors");
  fs::create_symlink("weights/model.safetensors", folder / "model.safetensors");
  EXPECT_EQ(load_model(folder.string())->spec().vocab_size, test::kTinyHfVocab);
}

// Snapshots of the Hugging Face cache link to their own repository's blobs/ (the layout
// itself loads: hf_hub_snapshot_test.cpp); a link to another repository's blob is refused.
TEST(ModelFileTypes, HubSnapshotLinkToAnotherRepositoryIsRefused) {
  const fs::path hub = test::scratch_dir() / "hub";
  const fs::path snapshot = hub / "models--org--tiny/snapshots/0123";
  test::write_tiny_hf_folder(snapshot);
  fs::create_directories(hub / "models--org--tiny/blobs");
  fs::create_directories(hub / "models--other--repo/blobs");
  fs::rename(snapshot / "config.json", hub / "models--org--tiny/blobs/c0ff");
  fs::create_symlink("../../blobs/c0ff", snapshot / "config.json");
  fs::rename(snapshot / "model.safetensors", hub / "models--other--repo/blobs/beef");
  fs::create_symlink("../../../models--other--repo/blobs/beef", snapshot / "model.safetensors");
  EXPECT_THAT(error_of([&] { load_model(snapshot.string()); }),
              HasSubstr("outside the model folder and its Hugging Face cache repository"));
}

// A file that is not safetensors: its first 8 bytes read as a length must not be printed
// (they would show 8 bytes of the file: "SECRET=h" is 7511252410233472339).
TEST(ModelFileTypes, ErrorsNeverPrintTheFirstBytesOfAFileReadAsHeaderLength) {
  const fs::path folder = folder_with_index("text.safetensors");
  std::ofstream(folder / "text.safetensors") << "SECRET=hunter2, a text file of some length";
  const std::string error = error_of([&] { load_model(folder.string()); });
  EXPECT_THAT(error, HasSubstr("text.safetensors: not a safetensors file: the header length in "
                               "its first 8 bytes is implausible"));
  EXPECT_THAT(error, Not(HasSubstr("7511252410233472339")));
}

// The same for a file named .gguf that is not one: only a known older magic ("GGML") is shown.
TEST(ModelFileTypes, ErrorsNeverPrintTheFirstBytesOfAFileThatIsNotGguf) {
  const auto path = (test::scratch_dir() / "notes.gguf").string();
  std::ofstream(path) << "SECRET=hunter2, a text file of some length";
  for (const std::string& error :
       {error_of([&] { GgufFile::read_header(path); }), error_of([&] { GgufFile file(path); })}) {
    EXPECT_THAT(error, HasSubstr("not a GGUF file: it does not start with the magic 'GGUF'"));
    EXPECT_THAT(error, Not(HasSubstr("SECR")));
    EXPECT_THAT(error, Not(HasSubstr("53 45 43 52")));
  }
}

}  // namespace
}  // namespace kvscope
