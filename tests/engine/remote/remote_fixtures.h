// The /metrics dumps of tests/engine/remote/fixtures (see its README for their sources).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace kvscope::test {

// Found from this file's own path, as preset_files.h finds the presets.
inline std::filesystem::path remote_fixture_dir() {
  return std::filesystem::path(__FILE__).parent_path() / "fixtures";
}

// The fixture's whole text; throws when it cannot be read (a broken checkout, not a skip).
inline std::string read_remote_fixture(const std::string& name) {
  const std::filesystem::path path = remote_fixture_dir() / name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read fixture " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace kvscope::test
