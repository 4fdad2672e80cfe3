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

// A model fetched by packaging/get-model.sh (never committed): `file` under
// $KVSCOPE_MODELS_DIR, ~/.cache/kvscope/models (or $XDG_CACHE_HOME/kvscope/models), then
// shared_dir()/models; nullopt when none has it.
std::optional<std::filesystem::path> find_downloaded_model(const std::string& file);

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

// Declares `var` as the path of a model get-model.sh fetches, or skips the test saying how to
// fetch it.
#define KVSCOPE_REQUIRE_DOWNLOADED_MODEL(var, file, get_model_name)                            \
  const auto var##_found = ::kvscope::test::find_downloaded_model(file);                       \
  if (!var##_found) {                                                                          \
    GTEST_SKIP() << "needs " << (file) << " (bash packaging/get-model.sh " << (get_model_name) \
                 << " puts it in ~/.cache/kvscope/models)";                                    \
  }                                                                                            \
  const std::string var = var##_found->string()
