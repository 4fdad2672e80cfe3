#include "model/discovery/model_scan.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>

#include "model/discovery/gguf_parts.h"
#include "model/discovery/ollama_manifest.h"

namespace kvscope {

namespace {

namespace fs = std::filesystem;

// State shared by every place of one scan.
struct Walk {
  ScanLimits limits;
  std::set<fs::path> visited;  // canonical folders already read
  std::size_t entries = 0;
  std::vector<LocalModel> found;
};

struct Listing {
  std::vector<fs::path> files;
  std::vector<fs::path> dirs;
};

// The folder's entries, sorted; each counts against the scan's budget of entries.
Listing list_folder(const fs::path& dir, Walk& w) {
  Listing l;
  std::error_code ec;
  for (fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end && w.entries < w.limits.max_entries; it.increment(ec)) {
    ++w.entries;
    std::error_code type_ec;
    if (it->is_directory(type_ec)) {
      l.dirs.push_back(it->path());
    } else if (it->is_regular_file(type_ec)) {
      l.files.push_back(it->path());
    }
  }
  std::sort(l.files.begin(), l.files.end());
  std::sort(l.dirs.begin(), l.dirs.end());
  return l;
}

bool is_hf_folder(const Listing& l) {
  const auto named = [](const fs::path& p, std::string_view name) { return p.filename() == name; };
  const bool config = std::any_of(l.files.begin(), l.files.end(),
                                  [&](const fs::path& p) { return named(p, "config.json"); });
  const bool weights = std::any_of(l.files.begin(), l.files.end(), [](const fs::path& p) {
    return p.extension() == ".safetensors";
  });
  return config && weights;
}

// Each GGUF file once; a split set once, as its part 1, whichever of its parts are here.
void add_ggufs(const fs::path& dir, const Listing& l, const std::string& source, Walk& w) {
  std::set<std::pair<std::string, std::int64_t>> sets_seen;
  for (const fs::path& file : l.files) {
    if (file.extension() != ".gguf") continue;
    const auto part = parse_gguf_part(file.filename().string());
    if (part && !sets_seen.insert({part->stem, part->count}).second) continue;
    LocalModel m = describe_gguf(part ? gguf_part_paths(dir, *part) : std::vector{file});
    if (part) m.name = part->stem + ".gguf";
    m.source = source;
    w.found.push_back(std::move(m));
  }
}

// True the first time a folder is reached (by its canonical path); false after, or when it
// cannot be resolved.
bool first_visit(const fs::path& dir, Walk& w) {
  std::error_code ec;
  const fs::path canonical = fs::canonical(dir, ec);
  return !ec && w.visited.insert(canonical).second;
}

void walk_files(const fs::path& dir, int depth, const std::string& source, Walk& w) {
  if (w.entries >= w.limits.max_entries || !first_visit(dir, w)) return;
  const Listing l = list_folder(dir, w);
  if (is_hf_folder(l)) {
    LocalModel m = describe_hf_folder(dir);
    m.source = source;
    w.found.push_back(std::move(m));
    return;
  }
  add_ggufs(dir, l, source, w);
  if (depth >= w.limits.max_depth) return;
  for (const fs::path& sub : l.dirs) {
    if (sub.filename().string().starts_with('.')) continue;
    walk_files(sub, depth + 1, source, w);
  }
}

// models--ORG--NAME -> ORG/NAME
std::string hub_repo_name(const std::string& folder) {
  std::string name = folder.substr(std::string("models--").size());
  for (std::size_t at = name.find("--"); at != std::string::npos; at = name.find("--", at + 1)) {
    name.replace(at, 2, "/");
  }
  return name;
}

// Each snapshot of each models--ORG--NAME repo; an HF folder is named ORG/NAME (with the
// revision when the repo has more than one snapshot), a GGUF file by its file name.
void walk_hf_hub(const ModelPlace& place, Walk& w) {
  for (const fs::path& repo : list_folder(place.root, w).dirs) {
    const std::string folder = repo.filename().string();
    if (!folder.starts_with("models--")) continue;
    const std::vector<fs::path> revs = list_folder(repo / "snapshots", w).dirs;
    for (const fs::path& rev : revs) {
      const std::size_t before = w.found.size();
      walk_files(rev, 2, place.source, w);
      for (std::size_t i = before; i < w.found.size(); ++i) {
        LocalModel& m = w.found[i];
        if (m.format != LocalModelFormat::HfFolder || m.path != rev) continue;
        m.name = hub_repo_name(folder);
        if (revs.size() > 1) m.name += "@" + rev.filename().string().substr(0, 8);
      }
    }
  }
}

void walk_ollama(const ModelPlace& place, Walk& w) {
  for (const OllamaManifest& manifest : ollama_manifests(place.root)) {
    LocalModel m;
    if (manifest.error.empty()) {
      m = describe_gguf({manifest.blob});
    } else {
      m.path = manifest.manifest;
      m.error = manifest.error;
    }
    m.name = manifest.name;
    m.source = place.source;
    w.found.push_back(std::move(m));
  }
}

void scan_place(const ModelPlace& place, Walk& w) {
  std::error_code ec;
  if (!fs::is_directory(place.root, ec)) return;
  switch (place.layout) {
    case PlaceLayout::Files:
      walk_files(place.root, 0, place.source, w);
      break;
    case PlaceLayout::HfHub:
      walk_hf_hub(place, w);
      break;
    case PlaceLayout::Ollama:
      walk_ollama(place, w);
      break;
  }
}

}  // namespace

std::vector<LocalModel> scan_local_models(const std::vector<ModelPlace>& places,
                                          const ScanLimits& limits) {
  Walk w;
  w.limits = limits;
  for (const ModelPlace& place : places) scan_place(place, w);
  return std::move(w.found);
}

}  // namespace kvscope
