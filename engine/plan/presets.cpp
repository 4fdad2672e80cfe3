#include "plan/presets.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "model/json_entry.h"
#include "model/json_reader.h"
#include "util/error.h"

namespace kvscope {

namespace {

using nlohmann::json;

// Far beyond any real entry; they keep n_params x 16 bits and batch x KV sums inside 64 bits.
constexpr std::int64_t kMaxParams = std::int64_t{1} << 44;       // ~17.6 trillion
constexpr std::int64_t kMaxMemoryBytes = std::int64_t{1} << 50;  // 1 PiB
constexpr double kMaxBandwidthGbS = 1e6;
constexpr std::int64_t kMaxSmCount = 4096;

// The shipped catalogues are under 10 KB; a user's own stays far below this.
constexpr JsonLimits kPresetFileLimits{.max_bytes = 4 << 20};

// One catalogue entry being read: every error names the file, the entry and the field.
using EntryReader = JsonEntry;

const json& entries(const json& root, const std::filesystem::path& file, std::string_view key) {
  if (!root.is_object()) throw_error<ModelError>("{}: must hold a JSON object", file.string());
  const auto it = root.find(key);
  if (it == root.end() || !it->is_array() || it->empty()) {
    throw_error<ModelError>("{}: needs a non-empty array \"{}\"", file.string(), key);
  }
  return *it;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Slugs are what users type: lower-case letters, digits, '-', '.', '_'.
std::string read_slug(const EntryReader& r, std::set<std::string>& seen) {
  std::string slug = r.text("slug");
  const bool ok = std::all_of(slug.begin(), slug.end(), [](unsigned char c) {
    return std::islower(c) || std::isdigit(c) || c == '-' || c == '.' || c == '_';
  });
  if (!ok) {
    r.fail("slug", fmt::format("\"{}\" must use only a-z, 0-9, '-', '.', '_'", quote_prefix(slug)));
  }
  if (!seen.insert(slug).second) {
    r.fail("slug", fmt::format("\"{}\" appears twice", quote_prefix(slug)));
  }
  return slug;
}

// "owner/name" as the Hugging Face hub spells a repo: one '/', then letters, digits, '-',
// '_', '.' on both sides. Optional; empty when absent.
std::string read_hf_repo(const EntryReader& r) {
  if (!r.has("hf_repo")) return "";
  std::string repo = r.text("hf_repo");
  const auto slash = repo.find('/');
  const bool ok = slash != std::string::npos && slash > 0 && slash + 1 < repo.size() &&
                  repo.find('/', slash + 1) == std::string::npos &&
                  std::all_of(repo.begin(), repo.end(), [](unsigned char c) {
                    return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/';
                  });
  if (!ok) r.fail("hf_repo", fmt::format("\"{}\" is not owner/name", quote_prefix(repo)));
  return repo;
}

ModelPreset read_model(const EntryReader& r, std::set<std::string>& seen) {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  ModelPreset p;
  p.slug = read_slug(r, seen);
  p.name = r.text("name");
  p.n_params = r.integer("n_params", 1, kMaxParams);
  p.hf_repo = read_hf_repo(r);
  ModelSpec& s = p.spec;
  s.architecture = r.text("architecture");
  s.name = p.name;
  // Range checks beyond "fits in int64" are ModelSpec's (validate below), so the
  // presets and the model loaders accept exactly the same shapes.
  s.n_layers = r.integer("n_layers", 1, kMax);
  s.dim = r.integer("dim", 1, kMax);
  s.n_heads = r.integer("n_heads", 1, kMax);
  s.n_kv_heads = r.integer("n_kv_heads", 1, kMax);
  s.head_dim = r.integer("head_dim", 1, kMax);
  s.rope_dim = s.head_dim;
  s.ffn_dim = r.integer("ffn_dim", 1, kMax);
  s.vocab_size = r.integer("vocab_size", 1, kMax);
  s.context_length = r.integer("context_length", 1, kMax);
  s.sliding_window = r.integer("sliding_window", 0, kMax);
  s.tied_embeddings = r.boolean("tied_embeddings", false);
  s.qkv_bias = r.boolean("qkv_bias", false);
  apply_architecture_defaults(s);
  if (r.has("sliding_window_pattern")) {
    s.sliding_window_period = r.integer("sliding_window_pattern", 0, kMax);
  }
  try {
    validate(s);
  } catch (const ModelError& e) {
    r.fail("", e.what());
  }
  return p;
}

// Other names users type for the same card ("h100-80gb"): slugs themselves, unique
// across the file's slugs and aliases. Optional.
std::vector<std::string> read_aliases(const EntryReader& r, std::set<std::string>& seen) {
  std::vector<std::string> out;
  if (!r.has("aliases")) return out;
  const json& list = r.get("aliases");
  if (!list.is_array() || list.size() > 16) r.fail("aliases", "must be an array of up to 16 names");
  for (const json& a : list) {
    const std::string alias = a.is_string() ? a.get<std::string>() : std::string();
    const bool ok = !alias.empty() && std::all_of(alias.begin(), alias.end(), [](unsigned char c) {
      return std::islower(c) || std::isdigit(c) || c == '-' || c == '.' || c == '_';
    });
    if (!ok) r.fail("aliases", "must hold names of a-z, 0-9, '-', '.', '_'");
    if (!seen.insert(alias).second) {
      r.fail("aliases", fmt::format("\"{}\" appears twice", quote_prefix(alias)));
    }
    out.push_back(alias);
  }
  return out;
}

// "MAJOR.MINOR", each 0-99 (major at least 1): "8.9", "12.0".
void read_compute_capability(const EntryReader& r, GpuPreset& g) {
  const nlohmann::json& v = r.get("compute_capability");
  const std::string text = v.is_string() ? v.get<std::string>() : std::string();
  const auto dot = text.find('.');
  const auto number = [&](std::string_view digits, int& out) {
    if (digits.empty() || digits.size() > 2) return false;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    return ec == std::errc() && end == digits.data() + digits.size();
  };
  const std::string_view all = text;
  if (dot == std::string::npos || !number(all.substr(0, dot), g.compute_major) ||
      !number(all.substr(dot + 1), g.compute_minor) || g.compute_major < 1) {
    r.fail("compute_capability", "must be a string \"MAJOR.MINOR\" such as \"8.9\"");
  }
}

GpuPreset read_gpu(const EntryReader& r, std::set<std::string>& seen) {
  GpuPreset g;
  g.slug = read_slug(r, seen);
  g.name = r.text("name");
  g.memory_bytes = r.integer("memory_bytes", 1, kMaxMemoryBytes);
  g.bandwidth_gb_s = r.number("bandwidth_gb_s", kMaxBandwidthGbS);
  if (r.has("compute_capability")) read_compute_capability(r, g);
  if (r.has("sm_count")) g.sm_count = static_cast<int>(r.integer("sm_count", 1, kMaxSmCount));
  g.aliases = read_aliases(r, seen);
  return g;
}

template <typename Preset>
std::vector<Preset> load(const std::filesystem::path& file, std::string_view key,
                         Preset (*read)(const EntryReader&, std::set<std::string>&)) {
  const json root = read_json_file(file.string(), kPresetFileLimits);
  const json& list = entries(root, file, key);
  std::vector<Preset> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::string entry = fmt::format("{}[{}]", key, i);
    const json& item = list[i];
    if (item.is_object()) {
      const auto slug = item.find("slug");
      if (slug != item.end() && slug->is_string()) {
        entry += fmt::format(" (\"{}\")", quote_prefix(slug->get_ref<const std::string&>()));
      }
    }
    out.push_back(read(EntryReader(file.string(), entry, item), seen));
  }
  return out;
}

bool is_alias(const ModelPreset&, const std::string&) {
  return false;
}

bool is_alias(const GpuPreset& g, const std::string& name) {
  return std::find(g.aliases.begin(), g.aliases.end(), name) != g.aliases.end();
}

template <typename Preset>
const Preset& find(const std::vector<Preset>& presets, std::string_view slug,
                   std::string_view what) {
  const std::string wanted = lower(slug);
  for (const auto& p : presets) {
    if (p.slug == wanted || is_alias(p, wanted)) return p;
  }
  std::string known;
  for (const auto& p : presets) known += (known.empty() ? "" : ", ") + p.slug;
  throw_error<UsageError>("unknown {} \"{}\"; known: {}", what, slug, known);
}

}  // namespace

std::vector<ModelPreset> load_model_presets(const std::filesystem::path& file) {
  return load<ModelPreset>(file, "models", read_model);
}

std::vector<GpuPreset> load_gpu_presets(const std::filesystem::path& file) {
  return load<GpuPreset>(file, "gpus", read_gpu);
}

const ModelPreset& find_model_preset(const std::vector<ModelPreset>& presets,
                                     std::string_view slug) {
  return find(presets, slug, "model preset");
}

const GpuPreset& find_gpu_preset(const std::vector<GpuPreset>& presets, std::string_view slug) {
  return find(presets, slug, "GPU preset");
}

CudaWorkspaceOptions gpu_workspace_options(const GpuPreset& gpu) {
  CudaWorkspaceOptions o;
  if (gpu.compute_major > 0) o.compute_major = gpu.compute_major;
  if (gpu.sm_count > 0) o.sm_count = gpu.sm_count;
  return o;
}

}  // namespace kvscope
