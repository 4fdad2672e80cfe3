#include "model/discovery/ollama_manifest.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <string_view>
#include <system_error>

#include "model/json_reader.h"
#include "util/error.h"

namespace kvscope {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kModelLayer = "application/vnd.ollama.image.model";
constexpr std::string_view kDigestPrefix = "sha256:";
constexpr std::size_t kDigestHexChars = 64;
// A manifest is a few hundred bytes; anything near this is not one.
constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{1} << 20;

// Only "sha256:" and 64 lower-case hex digits, so the blob name cannot leave blobs/.
std::string blob_name(const std::string& digest, const fs::path& manifest) {
  const std::string_view hex =
      std::string_view(digest).substr(std::min(digest.size(), kDigestPrefix.size()));
  const bool ok = digest.starts_with(kDigestPrefix) && hex.size() == kDigestHexChars &&
                  std::all_of(hex.begin(), hex.end(), [](char c) {
                    return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
                  });
  if (!ok) {
    throw_error<ModelError>("{}: model layer digest {} is not sha256:<64 hex digits>",
                            manifest.string(), quote_prefix(digest));
  }
  return "sha256-" + std::string(hex);
}

std::string display_name(const fs::path& relative) {
  // relative = HOST/NAMESPACE/NAME/TAG
  std::vector<std::string> parts;
  for (const auto& p : relative) parts.push_back(p.string());
  const std::string name_tag = parts[2] + ":" + parts[3];
  if (parts[0] != "registry.ollama.ai") return parts[0] + "/" + parts[1] + "/" + name_tag;
  if (parts[1] != "library") return parts[1] + "/" + name_tag;
  return name_tag;
}

// Folders exactly `depth` levels below `dir` that are files at the last level.
void collect_manifests(const fs::path& dir, int depth, std::vector<fs::path>& out) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (depth == 1) {
      if (it->is_regular_file(ec)) out.push_back(it->path());
    } else if (it->is_directory(ec) && !it->is_symlink(ec)) {
      collect_manifests(it->path(), depth - 1, out);
    }
  }
}

}  // namespace

fs::path ollama_model_blob(const fs::path& root, const fs::path& manifest) {
  const nlohmann::json doc = read_json_file(manifest.string(), {.max_bytes = kMaxManifestBytes});
  const auto layers = doc.is_object() ? doc.find("layers") : doc.end();
  if (!doc.is_object() || layers == doc.end() || !layers->is_array()) {
    throw_error<ModelError>("{}: not an Ollama manifest (no \"layers\" array)", manifest.string());
  }
  for (const auto& layer : *layers) {
    if (!layer.is_object() || layer.value("mediaType", "") != kModelLayer) continue;
    const auto digest = layer.find("digest");
    if (digest == layer.end() || !digest->is_string()) {
      throw_error<ModelError>("{}: the model layer has no digest", manifest.string());
    }
    const fs::path blob = root / "blobs" / blob_name(digest->get<std::string>(), manifest);
    std::error_code ec;
    if (!fs::is_regular_file(blob, ec)) {
      throw_error<ModelError>("{}: model blob {} is missing", manifest.string(), blob.string());
    }
    return blob;
  }
  throw_error<ModelError>("{}: no layer of type {}", manifest.string(), kModelLayer);
}

std::vector<OllamaManifest> ollama_manifests(const fs::path& root) {
  std::vector<fs::path> files;
  collect_manifests(root / "manifests", 4, files);
  std::sort(files.begin(), files.end());
  std::vector<OllamaManifest> out;
  for (const fs::path& file : files) {
    OllamaManifest m;
    m.manifest = file;
    m.name = display_name(file.lexically_relative(root / "manifests"));
    try {
      m.blob = ollama_model_blob(root, file);
    } catch (const std::exception& e) {
      m.error = e.what();
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace kvscope
