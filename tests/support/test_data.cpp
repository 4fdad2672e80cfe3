#include "support/test_data.h"

#include <atomic>
#include <cstdlib>

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

std::filesystem::path binary_dir() {
  if (const char* env = std::getenv("KVSCOPE_BINARY_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return KVSCOPE_BINARY_DIR;
}

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
  return dir;
}

}  // namespace kvscope::test
