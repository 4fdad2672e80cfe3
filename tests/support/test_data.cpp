#include "support/test_data.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include <unistd.h>

namespace kvscope::test {

std::filesystem::path shared_dir() {
  if (const char* env = std::getenv("KVSCOPE_SHARED_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return KVSCOPE_DEFAULT_SHARED_DIR;
}

std::optional<std::filesystem::path> find_shared(const std::string& relative) {
  auto path = shared_dir() / relative;
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return path;
  return std::nullopt;
}

std::optional<std::filesystem::path> find_downloaded_model(const std::string& file) {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("KVSCOPE_MODELS_DIR"); env != nullptr && *env != '\0') {
    dirs.emplace_back(env);
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    dirs.push_back(std::filesystem::path(xdg) / "kvscope" / "models");
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    dirs.push_back(std::filesystem::path(home) / ".cache" / "kvscope" / "models");
  }
  dirs.push_back(shared_dir() / "models");
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(dir / file, ec)) return dir / file;
  }
  return std::nullopt;
}

std::filesystem::path binary_dir() {
  if (const char* env = std::getenv("KVSCOPE_BINARY_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return KVSCOPE_BINARY_DIR;
}

namespace {

// Scratch folders are removed when their test passes or skips, and kept (with a line saying
// where) when it fails, so a CI machine's disk does not fill up with a run's copies of models
// (one weight-type test alone writes 259 MB) while a failure can still be looked at. Folders
// made outside a test (suite set-up) go when the program ends.
class ScratchCleaner : public ::testing::EmptyTestEventListener {
 public:
  void add(std::filesystem::path dir, bool in_test) {
    std::lock_guard lock(mutex_);
    (in_test ? test_dirs_ : program_dirs_).push_back(std::move(dir));
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    std::lock_guard lock(mutex_);
    if (info.result()->Failed()) {
      for (const auto& dir : test_dirs_) std::printf("scratch kept: %s\n", dir.c_str());
    } else {
      remove(test_dirs_);
    }
    test_dirs_.clear();
  }

  void OnTestProgramEnd(const ::testing::UnitTest& unit) override {
    std::lock_guard lock(mutex_);
    if (!unit.Failed()) remove(program_dirs_);
  }

 private:
  static void remove(const std::vector<std::filesystem::path>& dirs) {
    std::error_code ec;  // best effort: a folder still open elsewhere stays
    for (const auto& dir : dirs) std::filesystem::remove_all(dir, ec);
  }

  std::mutex mutex_;
  std::vector<std::filesystem::path> test_dirs_;
  std::vector<std::filesystem::path> program_dirs_;
};

// Owned by gtest's listener list once appended (gtest deletes it at exit).
ScratchCleaner& scratch_cleaner() {
  static ScratchCleaner* cleaner = [] {
    auto* c = new ScratchCleaner;
    ::testing::UnitTest::GetInstance()->listeners().Append(c);
    return c;
  }();
  return *cleaner;
}

}  // namespace

std::filesystem::path scratch_dir() {
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "test";
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  auto dir = binary_dir() / "tmp" /
             (name + "." + std::to_string(::getpid()) + "." + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  scratch_cleaner().add(dir, info != nullptr);
  return dir;
}

}  // namespace kvscope::test
