// Models on this computer: fake home folders laid out as each tool lays out its models,
// holding the real models from ../shared, small GGUFs written by the engine's writer, an
// HF folder, and broken files. Every layout must be found with the fields its headers
// give; a broken file is an entry with its error and never stops the scan.
#include "model/discovery/model_scan.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/discovery/gguf_parts.h"
#include "model/discovery/ollama_manifest.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/model.h"
#include "model/synthetic_model.h"
#include "support/test_data.h"
#include "support/tiny_llama_spec.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const EnvLookup kNoEnv = [](std::string_view) { return std::optional<std::string>{}; };

fs::path make_dirs(const fs::path& dir) {
  fs::create_directories(dir);
  return dir;
}

void write_text(const fs::path& path, const std::string& text) {
  make_dirs(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// A small random llama GGUF (2 layers, dim 32, vocab 64) with its matrices in `type`.
fs::path write_tiny_gguf(const fs::path& path, TensorType type = TensorType::Q8_0) {
  make_dirs(path.parent_path());
  write_synthetic_gguf(path.string(), test::tiny_llama_spec("tiny", 64), type, 7);
  return path;
}

// `src` rewritten as gguf-split does: every part carries split.no / split.count /
// split.tensors.count, part 1 all the metadata and the first tensors, part 2 the rest.
std::vector<fs::path> write_split(const fs::path& src, const fs::path& dir,
                                  const std::string& stem) {
  const GgufFile file(src.string());
  const auto& tensors = file.tensors();
  const std::size_t half = tensors.size() / 2;
  std::vector<fs::path> parts;
  for (int part = 0; part < 2; ++part) {
    GgufWriter w;
    if (part == 0) {
      for (const auto& key : file.keys()) w.set_value(key, *file.find(key));
    }
    w.set_u16("split.no", static_cast<std::uint16_t>(part));
    w.set_u16("split.count", 2);
    w.set_i32("split.tensors.count", static_cast<std::int32_t>(tensors.size()));
    for (std::size_t i = part == 0 ? 0 : half; i < (part == 0 ? half : tensors.size()); ++i) {
      const GgufTensor& t = tensors[i];
      w.add_tensor(t.name, t.type, t.dims, std::vector<std::uint8_t>(t.data, t.data + t.n_bytes));
    }
    parts.push_back(dir / fmt::format("{}-{:05d}-of-00002.gguf", stem, part + 1));
    w.write(parts.back().string());
  }
  return parts;
}

// A tiny llama HF folder: config.json and model.safetensors of F32 zeros. Returns the
// number of parameters it holds.
std::int64_t write_hf_folder(const fs::path& dir) {
  make_dirs(dir);
  const std::int64_t dim = 16, ffn = 24, vocab = 32, kv = 8;
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> shapes = {
      {"model.embed_tokens.weight", {vocab, dim}},
      {"model.norm.weight", {dim}},
      {"lm_head.weight", {vocab, dim}}};
  for (int l = 0; l < 2; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    for (auto [name, shape] : std::vector<std::pair<std::string, std::vector<std::int64_t>>>{
             {"input_layernorm.weight", {dim}},
             {"post_attention_layernorm.weight", {dim}},
             {"self_attn.q_proj.weight", {dim, dim}},
             {"self_attn.k_proj.weight", {kv, dim}},
             {"self_attn.v_proj.weight", {kv, dim}},
             {"self_attn.o_proj.weight", {dim, dim}},
             {"mlp.gate_proj.weight", {ffn, dim}},
             {"mlp.up_proj.weight", {ffn, dim}},
             {"mlp.down_proj.weight", {dim, ffn}}}) {
      shapes.emplace_back(p + name, shape);
    }
  }
  nlohmann::json header = nlohmann::json::object();
  std::int64_t elements = 0;
  for (const auto& [name, shape] : shapes) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    header[name] = {
        {"dtype", "F32"}, {"shape", shape}, {"data_offsets", {4 * elements, 4 * (elements + n)}}};
    elements += n;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((text.size() >> (8 * i)) & 0xff));
  write_text(dir / "model.safetensors", bytes + text + std::string(4 * elements, '\0'));
  const nlohmann::json config = {{"model_type", "llama"},    {"hidden_size", dim},
                                 {"num_hidden_layers", 2},   {"num_attention_heads", 4},
                                 {"num_key_value_heads", 2}, {"intermediate_size", ffn},
                                 {"vocab_size", vocab},      {"max_position_embeddings", 256},
                                 {"rms_norm_eps", 1e-5},     {"tie_word_embeddings", false}};
  write_text(dir / "config.json", config.dump());
  return elements;
}

// An Ollama store entry: blob sha256-HEX (a link to `model`) and its manifest.
void add_ollama(const fs::path& root, const std::string& manifest_path, const fs::path& model,
                const std::string& hex) {
  make_dirs(root / "blobs");
  const fs::path blob = root / "blobs" / ("sha256-" + hex);
  if (!fs::exists(blob)) fs::create_symlink(fs::absolute(model), blob);
  const nlohmann::json manifest = {
      {"schemaVersion", 2},
      {"layers",
       {{{"mediaType", "application/vnd.ollama.image.template"},
         {"digest", "sha256:" + std::string(64, '1')}},
        {{"mediaType", "application/vnd.ollama.image.model"}, {"digest", "sha256:" + hex}}}}};
  write_text(root / "manifests" / manifest_path, manifest.dump());
}

std::string hex_digest(char c) {
  return std::string(64, c);
}

const LocalModel* find_name(const std::vector<LocalModel>& models, const std::string& name) {
  for (const auto& m : models) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::vector<LocalModel> scan_home(const fs::path& home, const std::vector<fs::path>& extra = {}) {
  return scan_local_models(model_places(home, kNoEnv, extra));
}

TEST(ModelScan, FindsAModelInEveryToolsLayout) {
  KVSCOPE_REQUIRE_SHARED(stories, "models/stories260K.gguf");
  KVSCOPE_REQUIRE_SHARED(smol, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  const fs::path home = test::scratch_dir();
  const fs::path hub = home / ".cache/huggingface/hub";
  const std::int64_t hf_params = write_hf_folder(hub / "models--org--tiny/snapshots/abc123");
  make_dirs(hub / "models--org--tiny-GGUF/snapshots/def456");
  fs::create_symlink(stories, hub / "models--org--tiny-GGUF/snapshots/def456/stories260K.gguf");
  add_ollama(home / ".ollama/models", "registry.ollama.ai/library/smollm2/135m", smol,
             hex_digest('a'));
  make_dirs(home / ".lmstudio/models/pub/repo");
  fs::copy_file(stories, home / ".lmstudio/models/pub/repo/stories.gguf");
  write_tiny_gguf(home / ".cache/lm-studio/models/pub2/repo2/tiny-lms.gguf");
  write_tiny_gguf(home / ".local/share/nomic.ai/GPT4All/tiny-gpt4all.gguf");
  write_tiny_gguf(home / ".cache/llama.cpp/org_repo_tiny-llamacpp.gguf");
  write_tiny_gguf(home / "jan/models/tiny-jan/tiny-jan.gguf");
  write_tiny_gguf(home / ".local/share/Jan/data/models/tiny-jan2/model.gguf");
  write_tiny_gguf(home / ".local/share/Jan/data/llamacpp/models/tiny-jan3/model.gguf");
  make_dirs(home / ".cache/kvscope/models");
  fs::create_symlink(smol, home / ".cache/kvscope/models/SmolLM2-135M-Instruct.Q4_1.gguf");
  const fs::path added = make_dirs(home / "elsewhere");
  write_tiny_gguf(added / "sub/tiny-added.gguf");

  const auto models = scan_home(home, {added});
  ASSERT_EQ(models.size(), 12u);
  const std::vector<std::pair<fs::path, std::string>> expected = {
      {hub / "models--org--tiny/snapshots/abc123", "Hugging Face"},
      {hub / "models--org--tiny-GGUF/snapshots/def456/stories260K.gguf", "Hugging Face"},
      {home / ".ollama/models/blobs" / ("sha256-" + hex_digest('a')), "Ollama"},
      {home / ".lmstudio/models/pub/repo/stories.gguf", "LM Studio"},
      {home / ".cache/lm-studio/models/pub2/repo2/tiny-lms.gguf", "LM Studio"},
      {home / ".local/share/nomic.ai/GPT4All/tiny-gpt4all.gguf", "GPT4All"},
      {home / ".cache/llama.cpp/org_repo_tiny-llamacpp.gguf", "llama.cpp"},
      {home / "jan/models/tiny-jan/tiny-jan.gguf", "Jan"},
      {home / ".local/share/Jan/data/models/tiny-jan2/model.gguf", "Jan"},
      {home / ".local/share/Jan/data/llamacpp/models/tiny-jan3/model.gguf", "Jan"},
      {home / ".cache/kvscope/models/SmolLM2-135M-Instruct.Q4_1.gguf", "KVScope"},
      {added / "sub/tiny-added.gguf", "added folder"},
  };
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].first.string());
    EXPECT_EQ(models[i].path, expected[i].first) << "places are scanned in order";
    EXPECT_EQ(models[i].source, expected[i].second);
    EXPECT_TRUE(models[i].ok()) << models[i].error;
    EXPECT_EQ(models[i].architecture, "llama");
  }
  EXPECT_EQ(models[0].name, "org/tiny");
  EXPECT_EQ(models[0].format, LocalModelFormat::HfFolder);
  EXPECT_EQ(models[0].n_params, hf_params);
  EXPECT_EQ(models[0].weight_type, "F32");
  EXPECT_EQ(models[0].context_length, 256);
  EXPECT_EQ(models[0].file_bytes, fs::file_size(models[0].path / "model.safetensors"));
  EXPECT_EQ(models[2].name, "smollm2:135m");
  EXPECT_EQ(models[7].weight_type, "Q8_0");
}

// Every field against what the engine's own loader says of the same file.
TEST(ModelScan, GgufFieldsAgreeWithTheLoadedModel) {
  KVSCOPE_REQUIRE_SHARED(stories, "models/stories260K.gguf");
  KVSCOPE_REQUIRE_SHARED(smol, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  struct Case {
    std::string path;
    std::string weight_type;  // the layers' matrices: SmolLM2 keeps its token table in Q8_0
  };
  for (const Case& c : {Case{stories, "F32"}, Case{smol, "Q4_1"}}) {
    SCOPED_TRACE(c.path);
    const LocalModel m = describe_gguf({c.path});
    ASSERT_TRUE(m.ok()) << m.error;
    const auto model = load_model(c.path);
    const GgufFile file(c.path);
    std::int64_t params = 0;
    for (const auto& t : file.tensors()) params += t.n_elements();
    EXPECT_EQ(m.architecture, model->spec().architecture);
    EXPECT_EQ(m.n_params, params);
    EXPECT_EQ(m.weight_type, c.weight_type);
    EXPECT_EQ(m.file_bytes, fs::file_size(c.path));
    EXPECT_EQ(m.context_length, model->spec().context_length);
    EXPECT_EQ(m.spec.n_layers, model->spec().n_layers);
    EXPECT_EQ(m.spec.n_kv_heads, model->spec().n_kv_heads);
    EXPECT_EQ(m.weight_bytes, static_cast<std::int64_t>(model->weight_bytes()));
  }
}

TEST(ModelScan, MixedLayerTypesAreNamedMixed) {
  const fs::path dir = test::scratch_dir();
  // The Q4_K copy of a 32-wide model falls back to Q5_0 where rows do not split into
  // 256-blocks; use an F16 file with one layer matrix rewritten instead.
  const fs::path src = write_tiny_gguf(dir / "src.gguf", TensorType::F16);
  const GgufFile file(src.string());
  GgufWriter w;
  for (const auto& key : file.keys()) w.set_value(key, *file.find(key));
  for (const auto& t : file.tensors()) {
    if (t.name == "blk.0.ffn_down.weight") {
      std::vector<float> values(static_cast<std::size_t>(t.n_elements()), 0.5f);
      w.add_tensor_f32(t.name, TensorType::Q8_0, t.dims, values);
    } else {
      w.add_tensor(t.name, t.type, t.dims, std::vector<std::uint8_t>(t.data, t.data + t.n_bytes));
    }
  }
  w.write((dir / "mixed.gguf").string());
  const LocalModel m = describe_gguf({dir / "mixed.gguf"});
  ASSERT_TRUE(m.ok()) << m.error;
  EXPECT_EQ(m.weight_type, "mixed (F16, Q8_0)");
}

TEST(ModelScan, BrokenFilesAreListedWithTheirErrorAndTheScanGoesOn) {
  KVSCOPE_REQUIRE_SHARED(stories, "models/stories260K.gguf");
  const fs::path home = test::scratch_dir();
  const fs::path dir = make_dirs(home / ".cache/kvscope/models");
  std::ifstream in(stories, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_text(dir / "a-truncated.gguf", bytes.substr(0, bytes.size() / 2));
  write_text(dir / "b-not-gguf.gguf", "this is a text file, not a model");
  write_text(dir / "c-empty.gguf", "");
  write_hf_folder(dir / "d-hf-bad-config");
  write_text(dir / "d-hf-bad-config/config.json", "{\"model_type\": \"llama\", \"hidden_size\": ");
  fs::copy_file(stories, dir / "e-good.gguf");

  const auto models = scan_home(home);
  ASSERT_EQ(models.size(), 5u);  // a folder's files (by name) come before its subfolders
  EXPECT_THAT(models[0].error, HasSubstr("truncated"));
  EXPECT_THAT(models[0].error, HasSubstr("a-truncated.gguf"));
  EXPECT_THAT(models[1].error, HasSubstr("not a GGUF file"));
  EXPECT_THAT(models[2].error, HasSubstr("too short"));
  EXPECT_TRUE(models[3].ok()) << models[3].error;
  EXPECT_EQ(models[3].path, dir / "e-good.gguf");
  EXPECT_EQ(models[4].format, LocalModelFormat::HfFolder);
  EXPECT_THAT(models[4].error, HasSubstr("config.json"));
  for (int i : {0, 1, 2, 4}) {
    EXPECT_FALSE(models[i].ok());
    EXPECT_EQ(models[i].source, "KVScope");
    EXPECT_EQ(models[i].n_params, 0) << "a broken entry carries its error instead of fields";
    EXPECT_TRUE(models[i].architecture.empty());
  }
}

TEST(ModelScan, OllamaManifestsResolveToTheirModelBlob) {
  KVSCOPE_REQUIRE_SHARED(stories, "models/stories260K.gguf");
  const fs::path root = test::scratch_dir() / "ollama";
  add_ollama(root, "registry.ollama.ai/library/stories/latest", stories, hex_digest('b'));
  add_ollama(root, "registry.ollama.ai/someone/stories/q8", stories, hex_digest('b'));
  add_ollama(root, "hf.co/org/stories-GGUF/Q4_K_M", stories, hex_digest('b'));
  // a blob the manifest names but the store lacks, a digest that tries to leave blobs/,
  // a manifest without a model layer, one that is not JSON
  write_text(root / "manifests/registry.ollama.ai/library/gone/latest",
             R"({"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:)" +
                 hex_digest('c') + "\"}]}");
  write_text(
      root / "manifests/registry.ollama.ai/library/evil/latest",
      R"({"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:../../../../etc/passwd"}]})");
  write_text(root / "manifests/registry.ollama.ai/library/nomodel/latest",
             R"({"layers":[{"mediaType":"application/vnd.ollama.image.license","digest":"sha256:)" +
                 hex_digest('d') + "\"}]}");
  write_text(root / "manifests/registry.ollama.ai/library/text/latest", "not json");

  const auto manifests = ollama_manifests(root);
  std::map<std::string, OllamaManifest> by_name;
  for (const auto& m : manifests) by_name[m.name] = m;
  ASSERT_EQ(by_name.size(), 7u);
  const fs::path blob = root / "blobs" / ("sha256-" + hex_digest('b'));
  for (const char* name :
       {"stories:latest", "someone/stories:q8", "hf.co/org/stories-GGUF:Q4_K_M"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(by_name.count(name));
    EXPECT_EQ(by_name[name].blob, blob);
    EXPECT_TRUE(by_name[name].error.empty()) << by_name[name].error;
  }
  EXPECT_THAT(by_name["gone:latest"].error, HasSubstr("missing"));
  EXPECT_THAT(by_name["evil:latest"].error, HasSubstr("not sha256:<64 hex digits>"));
  EXPECT_THAT(by_name["nomodel:latest"].error, HasSubstr("no layer of type"));
  EXPECT_THAT(by_name["text:latest"].error, HasSubstr("text/latest"));

  const auto models = scan_local_models({{"Ollama", root, PlaceLayout::Ollama}});
  ASSERT_EQ(models.size(), 7u);
  const LocalModel* ok = find_name(models, "stories:latest");
  ASSERT_NE(ok, nullptr);
  EXPECT_TRUE(ok->ok()) << ok->error;
  EXPECT_EQ(ok->path, blob);
  EXPECT_EQ(ok->context_length, 2048);
  const LocalModel* gone = find_name(models, "gone:latest");
  ASSERT_NE(gone, nullptr);
  EXPECT_FALSE(gone->ok());
}

TEST(ModelScan, SplitGgufIsOneEntryCountingEveryPart) {
  const fs::path dir = test::scratch_dir();
  const fs::path whole = write_tiny_gguf(dir / "whole/tiny.gguf");
  const fs::path models_dir = make_dirs(dir / "models");
  const auto parts = write_split(whole, models_dir, "tiny");
  const auto models = scan_local_models({{"added folder", models_dir, PlaceLayout::Files}});
  ASSERT_EQ(models.size(), 1u);
  const LocalModel& m = models[0];
  ASSERT_TRUE(m.ok()) << m.error;
  EXPECT_EQ(m.path, parts[0]);
  EXPECT_EQ(m.name, "tiny.gguf");
  EXPECT_EQ(m.n_parts, 2);
  EXPECT_EQ(m.file_bytes, fs::file_size(parts[0]) + fs::file_size(parts[1]));
  const LocalModel unsplit = describe_gguf({whole});
  EXPECT_EQ(m.n_params, unsplit.n_params);
  EXPECT_EQ(m.weight_bytes, unsplit.weight_bytes);

  fs::remove(parts[1]);
  const auto missing = scan_local_models({{"added folder", models_dir, PlaceLayout::Files}});
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_THAT(missing[0].error, HasSubstr("part 2 of 2"));
  // Part 1 gone, part 2 here: still one entry, naming part 1.
  write_split(whole, models_dir, "tiny");
  fs::remove(parts[0]);
  const auto no_first = scan_local_models({{"added folder", models_dir, PlaceLayout::Files}});
  ASSERT_EQ(no_first.size(), 1u);
  EXPECT_THAT(no_first[0].error, HasSubstr("part 1 of 2"));
}

TEST(ModelScan, PartNamesParseOnlyAsGgufSplitWritesThem) {
  const auto p = parse_gguf_part("Llama-3-70B.Q4_K_M-00002-of-00003.gguf");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->stem, "Llama-3-70B.Q4_K_M");
  EXPECT_EQ(p->index, 2);
  EXPECT_EQ(p->count, 3);
  for (const char* name : {"model.gguf", "m-00001-of-00001.gguf", "m-00004-of-00003.gguf",
                           "m-00000-of-00003.gguf", "m-0001-of-0003.gguf", "-00001-of-00002.gguf",
                           "m-00001-of-00002.bin", "m-0000a-of-00002.gguf"}) {
    EXPECT_FALSE(parse_gguf_part(name).has_value()) << name;
  }
  EXPECT_EQ(gguf_part_paths("/d", *p)[0], fs::path("/d/Llama-3-70B.Q4_K_M-00001-of-00003.gguf"));
}

TEST(ModelScan, SymlinkLoopsEndAndTheWalkIsBounded) {
  const fs::path root = make_dirs(test::scratch_dir() / "root");
  write_tiny_gguf(root / "a/top.gguf");
  fs::create_directory_symlink(root, root / "a/loop");       // a -> root -> a -> ...
  fs::create_directory_symlink(root / "a", root / "again");  // the same folder twice
  write_tiny_gguf(root / "1/2/3/4/deep.gguf");               // depth 4: found
  write_tiny_gguf(root / "1/2/3/4/5/too-deep.gguf");         // depth 5: past max_depth
  write_tiny_gguf(root / ".hidden/hidden.gguf");
  const auto models = scan_local_models({{"added folder", root, PlaceLayout::Files}});
  std::vector<std::string> names;
  for (const auto& m : models) names.push_back(m.name);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("top.gguf", "deep.gguf"));

  // The entry budget stops a walk of a huge tree.
  const auto bounded = scan_local_models({{"added folder", root, PlaceLayout::Files}}, {4, 2});
  EXPECT_LT(bounded.size(), 2u);
}

TEST(ModelScan, AFolderReachedFromTwoPlacesIsListedOnce) {
  const fs::path home = test::scratch_dir();
  write_tiny_gguf(home / ".cache/kvscope/models/tiny.gguf");
  const auto models = scan_home(home, {home / ".cache/kvscope/models", home / ".cache/kvscope"});
  ASSERT_EQ(models.size(), 1u);
  EXPECT_EQ(models[0].source, "KVScope");
}

TEST(ModelScan, EnvironmentVariablesMoveThePlaces) {
  const fs::path base = test::scratch_dir();
  const fs::path home = make_dirs(base / "home");
  write_tiny_gguf(base / "llama-cache/l.gguf");
  write_hf_folder(base / "hub/models--a--b/snapshots/r1");
  write_hf_folder(base / "hf-home/hub/models--c--d/snapshots/r1");
  write_hf_folder(base / "hf-home/hub/models--c--d/snapshots/r2");
  write_tiny_gguf(base / "ollama-store/tiny.gguf");
  add_ollama(base / "ollama-store", "registry.ollama.ai/library/t/1",
             base / "ollama-store/tiny.gguf", hex_digest('e'));
  std::map<std::string, std::string, std::less<>> env = {
      {"LLAMA_CACHE", (base / "llama-cache").string()},
      {"HF_HUB_CACHE", (base / "hub").string()},
      {"OLLAMA_MODELS", (base / "ollama-store").string()}};
  const EnvLookup lookup = [&](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional(it->second);
  };
  auto names = [&] {
    std::vector<std::string> out;
    for (const auto& m : scan_local_models(model_places(home, lookup))) out.push_back(m.name);
    return out;
  };
  EXPECT_THAT(names(), ::testing::UnorderedElementsAre("a/b", "t:1", "l.gguf"));
  env.erase("HF_HUB_CACHE");
  env["HF_HOME"] = (base / "hf-home").string();
  EXPECT_THAT(names(), ::testing::UnorderedElementsAre("c/d@r1", "c/d@r2", "t:1", "l.gguf"));
}

}  // namespace
}  // namespace kvscope
