// Where tests find the real data in ../shared (models, llama.cpp reference outputs) and
// scratch space for files they write. A test that needs a shared file and cannot find it
// skips with a message naming the path it looked at; it never passes silently.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace kvscope::test {

// $KVSCOPE_SHARED_DIR if set, else the folder configured at build time (../shared).
std::filesystem::path shared_dir();

// shared_dir()/relative when it exists.
std::optional<std::filesystem::path> find_shared(const std::string& relative);

// A fresh empty folder for this test's files, under the build tree's tmp folder; removed
// when the test passes or skips, kept when it fails.
std::filesystem::path scratch_dir();

// The build tree's bin/ folder (where kvscope-cli is).
std::filesystem::path binary_dir();

}  // namespace kvscope::test

// Declares `var` as the path of a shared file, or skips the test saying what is missing.
#define KVSCOPE_REQUIRE_SHARED(var, relative)                                                 \
  const auto var##_found = ::kvscope::test::find_shared(relative);                            \
  if (!var##_found) {                                                                         \
    GTEST_SKIP() << "needs " << (::kvscope::test::shared_dir() / (relative)).string()         \
                 << " (set KVSCOPE_SHARED_DIR to the folder holding models/ and reference/)"; \
  }                                                                                           \
  const std::string var = var##_found->string()
