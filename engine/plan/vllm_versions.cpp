#include "plan/vllm_versions.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "util/error.h"

namespace kvscope {

namespace {

constexpr std::int64_t GiB_hundredths(std::int64_t h) {
  return (h << 30) / 100;
}

// The rows of the table in vllm_versions.h.
constexpr std::array<VllmVersionInfo, 5> kVersions{{
    {VllmVersion::V0_6_4, "0.6.4", "vLLM 0.6.0-0.6.4 (V0 engine)", VllmEngine::V0,
     GiB_hundredths(35), GiB_hundredths(45), false, 9.5, 512, false},
    {VllmVersion::V0_6_5, "0.6.5", "vLLM 0.6.5-0.6.6 (V0 engine)", VllmEngine::V0,
     GiB_hundredths(179), GiB_hundredths(179), true, 9.5, 512, false},
    {VllmVersion::V0_7, "0.7-v0", "vLLM 0.7-0.9 (V0 engine)", VllmEngine::V0, GiB_hundredths(15),
     GiB_hundredths(20), false, 9.5, 2048, false},
    {VllmVersion::V1_0_10, "0.10", "vLLM 0.8-0.10 (V1 engine)", VllmEngine::V1, GiB_hundredths(15),
     GiB_hundredths(20), false, 3.5, 0, false},
    {VllmVersion::V1_0_26, "0.26", "vLLM 0.11-0.26 (V1 engine)", VllmEngine::V1, GiB_hundredths(15),
     GiB_hundredths(20), false, 3.5, 0, true},
}};

std::string lower(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::span<const VllmVersionInfo> vllm_versions() {
  return kVersions;
}

const VllmVersionInfo& vllm_version_info(VllmVersion version) {
  for (const VllmVersionInfo& v : kVersions) {
    if (v.version == version) return v;
  }
  return kVersions.back();
}

VllmVersion parse_vllm_version(std::string_view text) {
  const std::string s = lower(text);
  if (s == "latest" || s == "v1") return kLatestVllmVersion;
  if (s == "v0") return VllmVersion::V0_7;
  for (const VllmVersionInfo& v : kVersions) {
    if (s == v.slug) return v.version;
  }
  throw_error<UsageError>(
      "unknown vLLM version \"{}\"; known: 0.6.4, 0.6.5, 0.7-v0 (v0), 0.10, 0.26 (v1, latest)",
      text);
}

}  // namespace kvscope
