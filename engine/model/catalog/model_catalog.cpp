#include "model/catalog/model_catalog.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "model/gguf/gguf_model.h"
#include "model/json_entry.h"
#include "model/json_reader.h"
#include "util/error.h"

namespace kvscope {

namespace {

using nlohmann::json;

// The shipped catalog is ~15 KB; a user's own stays far below this.
constexpr JsonLimits kCatalogLimits{.max_bytes = 4 << 20};
constexpr std::int64_t kMaxParams = std::int64_t{1} << 44;
constexpr std::int64_t kMaxFileBytes = std::int64_t{1} << 44;  // 16 TiB
constexpr std::int64_t kMaxDim = std::int64_t{1} << 24;

// One object being read: every error names the origin, the entry and the field.
using Fields = JsonEntry;

bool all_of(std::string_view s, int (*ok)(int), std::string_view extra) {
  return std::all_of(s.begin(), s.end(), [&](unsigned char c) {
    return ok(c) != 0 || extra.find(static_cast<char>(c)) != std::string_view::npos;
  });
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Names are what users type: lower-case letters, digits, '-', '.', '_'.
std::string read_name(const Fields& f) {
  std::string name = f.text("name");
  const bool ok = std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::islower(c) || std::isdigit(c) || c == '-' || c == '.' || c == '_';
  });
  if (!ok)
    f.fail("name", fmt::format("\"{}\" must use only a-z, 0-9, '-', '.', '_'", quote_prefix(name)));
  return name;
}

// "owner/name": one '/', letters, digits, '-', '_', '.' on both sides.
std::string read_repo(const Fields& f, std::string_view field) {
  std::string repo = f.text(field);
  const auto slash = repo.find('/');
  const bool ok = slash != std::string::npos && slash > 0 && slash + 1 < repo.size() &&
                  repo.find('/', slash + 1) == std::string::npos &&
                  repo.find("..") == std::string::npos && all_of(repo, std::isalnum, "-_./");
  if (!ok) f.fail(field, fmt::format("\"{}\" is not owner/name", quote_prefix(repo)));
  return repo;
}

// The file is saved under this name in the models folder, so it must be a plain name.
std::string read_file_name(const Fields& f) {
  std::string name = f.text("file");
  const bool ok = all_of(name, std::isalnum, "-_.") && name.front() != '.' && name.size() > 5 &&
                  lower(name.substr(name.size() - 5)) == ".gguf";
  if (!ok) {
    f.fail("file", fmt::format("\"{}\" must be a plain NAME.gguf (letters, digits, '-', '_', '.')",
                               quote_prefix(name)));
  }
  return name;
}

std::string read_sha256(const Fields& f) {
  if (!f.has("sha256")) return "";
  std::string sha = f.text("sha256");
  if (sha.size() != 64 || !all_of(sha, std::isxdigit, "")) {
    f.fail("sha256", fmt::format("\"{}\" is not 64 hex digits", quote_prefix(sha)));
  }
  return lower(sha);
}

CatalogFile read_file(const Fields& f, const std::string& model_repo) {
  CatalogFile c;
  c.quant = f.text("quant");
  if (!all_of(c.quant, std::isalnum, "_")) {
    f.fail("quant",
           fmt::format("\"{}\" must use only letters, digits and '_'", quote_prefix(c.quant)));
  }
  c.file = read_file_name(f);
  c.repo = f.has("repo") ? read_repo(f, "repo") : model_repo;
  c.revision = f.text_or("revision", "main");
  if (!all_of(c.revision, std::isalnum, "-_.") || c.revision.find("..") != std::string::npos) {
    f.fail("revision",
           fmt::format("\"{}\" is not a commit or branch name", quote_prefix(c.revision)));
  }
  c.bytes = f.integer("bytes", 1, kMaxFileBytes);
  c.exact_bytes = f.boolean("exact_bytes", false);
  c.sha256 = read_sha256(f);
  return c;
}

void read_shape(const Fields& f, ModelSpec& s) {
  s.n_layers = f.integer("n_layers", 1, 4096);
  s.dim = f.integer("dim", 1, kMaxDim);
  s.n_heads = f.integer("n_heads", 1, 4096);
  s.n_kv_heads = f.integer("n_kv_heads", 1, 4096);
  s.head_dim = f.integer("head_dim", 1, 65536);
  s.rope_dim = s.head_dim;
  s.ffn_dim = f.integer("ffn_dim", 1, kMaxDim);
  s.vocab_size = f.integer("vocab_size", 1, kMaxDim);
  s.context_length = f.integer("context_length", 1, std::int64_t{1} << 30);
  s.sliding_window = f.integer("sliding_window", 0, std::int64_t{1} << 30);
  if (!f.get("tied_embeddings").is_boolean()) f.fail("tied_embeddings", "must be true or false");
  s.tied_embeddings = f.boolean("tied_embeddings", false);
  s.qkv_bias = f.boolean("qkv_bias", false);
}

// The family's arithmetic (model_spec.h), then the entry's own window period if it gives one.
void read_family(const Fields& f, ModelSpec& s) {
  apply_architecture_defaults(s);
  if (f.has("sliding_window_pattern")) {
    s.sliding_window_period = f.integer("sliding_window_pattern", 0, 4096);
  }
}

CatalogModel read_model(const Fields& f, const std::string& origin) {
  CatalogModel m;
  m.name = read_name(f);
  m.display_name = f.text("display_name");
  m.license = f.text_or("license", "");
  m.n_params = f.integer("n_params", 1, kMaxParams);
  m.spec.architecture = f.text("architecture");
  m.spec.name = m.display_name;
  read_shape(f, m.spec);
  read_family(f, m.spec);
  try {
    validate(m.spec);
  } catch (const ModelError& e) {
    f.fail("", e.what());
  }
  m.supported = gguf_architecture_supported(m.spec.architecture);
  const std::string repo = f.has("repo") ? read_repo(f, "repo") : "";
  const json& files = f.get("files");
  if (!files.is_array() || files.empty()) f.fail("files", "must be a non-empty array");
  std::set<std::string> quants;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const Fields ff(origin, fmt::format("model \"{}\" file {}", m.name, i), files[i]);
    if (repo.empty() && !ff.has("repo")) ff.fail("repo", "is missing (here and in the model)");
    CatalogFile c = read_file(ff, repo);
    if (!quants.insert(lower(c.quant)).second) {
      ff.fail("quant", fmt::format("\"{}\" appears twice", c.quant));
    }
    m.files.push_back(std::move(c));
  }
  return m;
}

std::vector<CatalogModel> catalog_from_json(const json& root, const std::string& origin) {
  if (!root.is_object()) throw_error<ModelError>("{}: must hold a JSON object", origin);
  const auto it = root.find("models");
  if (it == root.end() || !it->is_array() || it->empty()) {
    throw_error<ModelError>("{}: needs a non-empty array \"models\"", origin);
  }
  std::vector<CatalogModel> models;
  std::set<std::string> names;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Fields f(origin, fmt::format("model {}", i), (*it)[i]);
    CatalogModel m = read_model(f, origin);
    if (!names.insert(m.name).second) {
      f.fail("name", fmt::format("\"{}\" appears twice", m.name));
    }
    models.push_back(std::move(m));
  }
  return models;
}

}  // namespace

std::string CatalogFile::url(std::string_view endpoint) const {
  while (endpoint.ends_with('/')) endpoint.remove_suffix(1);
  return fmt::format("{}/{}/resolve/{}/{}", endpoint, repo, revision, file);
}

std::vector<CatalogModel> parse_model_catalog(std::string_view json_text,
                                              const std::string& origin) {
  return catalog_from_json(parse_json(json_text, origin, kCatalogLimits), origin);
}

std::vector<CatalogModel> load_model_catalog(const std::filesystem::path& file) {
  return catalog_from_json(read_json_file(file.string(), kCatalogLimits), file.string());
}

CatalogChoice find_catalog_file(const std::vector<CatalogModel>& catalog, std::string_view spec) {
  const auto colon = spec.find(':');
  const std::string name = lower(spec.substr(0, colon));
  const auto model = std::find_if(catalog.begin(), catalog.end(),
                                  [&](const CatalogModel& m) { return m.name == name; });
  if (model == catalog.end()) {
    std::string known;
    for (const CatalogModel& m : catalog) known += (known.empty() ? "" : ", ") + m.name;
    throw_error<UsageError>("no model \"{}\" in the catalog; it has: {}", quote_prefix(name),
                            known);
  }
  if (colon == std::string_view::npos) return {&*model, &model->files.front()};
  const std::string quant = lower(spec.substr(colon + 1));
  for (const CatalogFile& f : model->files) {
    if (lower(f.quant) == quant) return {&*model, &f};
  }
  std::string known;
  for (const CatalogFile& f : model->files) known += (known.empty() ? "" : ", ") + f.quant;
  throw_error<UsageError>("{} has no quantization \"{}\"; it has: {}", model->name,
                          quote_prefix(quant), known);
}

std::string catalog_size_text(const CatalogFile& file) {
  const double b = static_cast<double>(file.bytes);
  const bool giga = b >= 1e9;
  const double v = giga ? b / 1e9 : b / 1e6;
  const int decimals = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  const std::string size = fmt::format("{:.{}f} {}", v, decimals, giga ? "GB" : "MB");
  return file.exact_bytes ? size : "~" + size;
}

}  // namespace kvscope
