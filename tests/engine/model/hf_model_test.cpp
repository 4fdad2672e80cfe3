// HfModel and load_model on Hugging Face folders the tests write themselves: config.json,
// weights in one file or in two shards with an index, tokenizer files.
#include "model/hf_model.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/text/tiny_tokenizer_json.h"
#include "model/model.h"
#include "support/test_data.h"
#include "text/tokenizer.h"
#include "util/error.h"
#include "util/half.h"

namespace kvscope {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

struct StTensor {
  std::string name;
  std::string dtype;  // "F32", "BF16", ...
  std::vector<std::int64_t> shape;
  std::string bytes;
};

void write_safetensors(const fs::path& path, const std::vector<StTensor>& tensors) {
  json header = json::object();
  std::string data;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data += t.bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((text.size() >> (8 * i)) & 0xff));
  out << text << data;
}

void write_json(const fs::path& path, const json& j) {
  std::ofstream(path) << j.dump(2);
}

// A tiny llama (or qwen2) folder. Each F32 tensor k holds the values k*1000 + i so a test
// can tell which tensor, and which element, a view points at; BF16 tensors hold i.
class TinyHfFolder {
 public:
  explicit TinyHfFolder(std::string model_type = "llama") {
    config = {{"model_type", model_type},
              {"hidden_size", 16},
              {"num_hidden_layers", 2},
              {"num_attention_heads", 4},
              {"num_key_value_heads", 2},
              {"intermediate_size", 24},
              {"vocab_size", 32},
              {"max_position_embeddings", 128},
              {"rope_theta", 500000.0},
              {"rms_norm_eps", 1e-5},
              {"tie_word_embeddings", false}};
    add("model.embed_tokens.weight", {32, 16});
    for (int i = 0; i < 2; ++i) {
      const auto p = "model.layers." + std::to_string(i) + ".";
      add(p + "input_layernorm.weight", {16});
      add(p + "self_attn.q_proj.weight", {16, 16});
      add(p + "self_attn.k_proj.weight", {8, 16});
      add(p + "self_attn.v_proj.weight", {8, 16});
      if (model_type == "qwen2") {
        add(p + "self_attn.q_proj.bias", {16});
        add(p + "self_attn.k_proj.bias", {8});
        add(p + "self_attn.v_proj.bias", {8});
      }
      add(p + "self_attn.o_proj.weight", {16, 16});
      add(p + "post_attention_layernorm.weight", {16});
      add(p + "mlp.gate_proj.weight", {24, 16});
      add(p + "mlp.up_proj.weight", {24, 16}, "BF16");
      add(p + "mlp.down_proj.weight", {16, 24});
    }
    add("model.norm.weight", {16});
    add("lm_head.weight", {32, 16});
  }

  void add(const std::string& name, std::vector<std::int64_t> shape, std::string dtype = "F32") {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    const auto k = static_cast<float>(tensors.size() + 1);
    std::string bytes;
    for (std::int64_t i = 0; i < n; ++i) {
      const float v = k * 1000.0f + static_cast<float>(i);
      if (dtype == "BF16") {
        // BF16 holds integers exactly only up to 256: store the element index alone.
        const std::uint16_t b = float_to_bf16(static_cast<float>(i));
        bytes.append(reinterpret_cast<const char*>(&b), 2);
      } else {
        bytes.append(reinterpret_cast<const char*>(&v), 4);
      }
    }
    tensors.push_back({name, std::move(dtype), std::move(shape), std::move(bytes)});
  }

  StTensor& tensor(const std::string& name) {
    for (auto& t : tensors) {
      if (t.name == name) return t;
    }
    throw std::runtime_error("no tensor " + name);
  }

  void remove(const std::string& name) {
    std::erase_if(tensors, [&](const StTensor& t) { return t.name == name; });
  }

  // Writes config.json and the weights: two shards split after layer 0 plus an index, or
  // one model.safetensors. Returns the folder.
  std::string write(bool sharded = true) const {
    const auto dir = test::scratch_dir();
    write_json(dir / "config.json", config);
    if (!sharded) {
      write_safetensors(dir / "model.safetensors", tensors);
      return dir.string();
    }
    std::vector<StTensor> shards[2];
    json weight_map = json::object();
    for (const auto& t : tensors) {
      const int s =
          t.name.starts_with("model.embed_tokens") || t.name.starts_with("model.layers.0.") ? 0 : 1;
      shards[s].push_back(t);
      weight_map[t.name] = shard_name(s);
    }
    for (int s = 0; s < 2; ++s) write_safetensors(dir / shard_name(s), shards[s]);
    write_json(dir / "model.safetensors.index.json",
               {{"metadata", {{"total_size", 0}}}, {"weight_map", weight_map}});
    return dir.string();
  }

  static std::string shard_name(int s) {
    return "model-0000" + std::to_string(s + 1) + "-of-00002.safetensors";
  }

  json config;
  std::vector<StTensor> tensors;
};

float f32_at(const WeightView& w, std::int64_t r, std::int64_t c) {
  if (w.type == TensorType::BF16) {
    std::uint16_t b;
    std::memcpy(&b, static_cast<const std::uint8_t*>(w.row(r)) + 2 * c, 2);
    return bf16_to_float(b);
  }
  float v;
  std::memcpy(&v, static_cast<const std::uint8_t*>(w.row(r)) + 4 * c, 4);
  return v;
}

void expect_load_error(const std::string& path, const std::vector<std::string>& parts) {
  try {
    load_model(path);
    ADD_FAILURE() << "expected a ModelError loading " << path;
  } catch (const ModelError& e) {
    for (const auto& p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
  }
}

TEST(HfModel, ShardedFolderGivesTheConfigSpec) {
  const auto model = load_model(TinyHfFolder().write());
  ASSERT_EQ(model->format(), ModelFormat::HuggingFace);
  const ModelSpec& s = model->spec();
  EXPECT_EQ(s.architecture, "llama");
  EXPECT_EQ(s.n_layers, 2);
  EXPECT_EQ(s.dim, 16);
  EXPECT_EQ(s.n_heads, 4);
  EXPECT_EQ(s.n_kv_heads, 2);
  EXPECT_EQ(s.head_dim, 4);
  EXPECT_EQ(s.rope_dim, 4);
  EXPECT_EQ(s.ffn_dim, 24);
  EXPECT_EQ(s.vocab_size, 32);
  EXPECT_EQ(s.context_length, 128);
  EXPECT_DOUBLE_EQ(s.rope_theta, 500000.0);
  EXPECT_DOUBLE_EQ(s.norm_eps, 1e-5);
  EXPECT_EQ(s.rope_pairing, RopePairing::HalfSplit);
  EXPECT_FALSE(s.tied_embeddings);
  EXPECT_FALSE(s.qkv_bias);
  EXPECT_EQ(s.sliding_window, 0);
}

TEST(HfModel, ViewsPointAtTheRightTensorInTheRightShard) {
  TinyHfFolder folder;
  const auto model = load_model(folder.write());
  const ModelWeights& w = model->weights();
  ASSERT_EQ(w.layers.size(), 2u);
  auto id = [&](const std::string& name) {
    for (std::size_t i = 0; i < folder.tensors.size(); ++i) {
      if (folder.tensors[i].name == name) return static_cast<float>(i + 1) * 1000.0f;
    }
    return -1.0f;
  };
  EXPECT_EQ(w.token_embd.rows, 32);
  EXPECT_EQ(w.token_embd.cols, 16);
  EXPECT_EQ(f32_at(w.token_embd, 3, 5), id("model.embed_tokens.weight") + 3 * 16 + 5);
  const LayerWeights& l1 = w.layers[1];
  EXPECT_EQ(l1.wk.rows, 8);
  EXPECT_EQ(l1.wk.cols, 16);
  EXPECT_EQ(f32_at(l1.wk, 7, 15), id("model.layers.1.self_attn.k_proj.weight") + 7 * 16 + 15);
  EXPECT_EQ(l1.w_up.type, TensorType::BF16);
  EXPECT_EQ(f32_at(l1.w_up, 2, 1), 2 * 16 + 1);
  EXPECT_EQ(f32_at(l1.w_up, 0, 9), 9);
  EXPECT_EQ(l1.w_down.rows, 16);
  EXPECT_EQ(l1.w_down.cols, 24);
  EXPECT_EQ(l1.attn_norm.rows, 1);
  EXPECT_EQ(l1.attn_norm.cols, 16);
  EXPECT_EQ(f32_at(w.output, 31, 0), id("lm_head.weight") + 31 * 16);
  EXPECT_EQ(f32_at(w.output_norm, 0, 4), id("model.norm.weight") + 4);
  EXPECT_FALSE(l1.bq);
  EXPECT_EQ(w.layers[0].wq.name, "model.layers.0.self_attn.q_proj.weight");

  auto* hf = dynamic_cast<const HfModel*>(model.get());
  ASSERT_NE(hf, nullptr);
  ASSERT_EQ(hf->shards().size(), 2u);
  const SafetensorsTensor* up = hf->shards()[1]->find("model.layers.1.mlp.up_proj.weight");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(l1.w_up.data, up->data);
  EXPECT_EQ(hf->shards()[1]->find("model.layers.0.mlp.up_proj.weight"), nullptr);
}

TEST(HfModel, WeightBytesCountsEveryTensorAsStored) {
  TinyHfFolder folder;
  std::uint64_t expected = 0;
  for (const auto& t : folder.tensors) expected += t.bytes.size();
  EXPECT_EQ(load_model(folder.write())->weight_bytes(), expected);
}

TEST(HfModel, SingleSafetensorsFileAndConfigPathBothLoad) {
  const auto dir = TinyHfFolder().write(/*sharded=*/false);
  const auto model = load_model((fs::path(dir) / "config.json").string());
  EXPECT_EQ(model->spec().n_layers, 2);
  EXPECT_EQ(model->spec().name, fs::path(dir).filename().string());
  EXPECT_EQ(model->path(), dir);
}

TEST(HfModel, MissingTensorIsNamed) {
  TinyHfFolder folder;
  folder.remove("model.layers.1.mlp.up_proj.weight");
  expect_load_error(folder.write(), {"tensor model.layers.1.mlp.up_proj.weight", "missing"});
}

TEST(HfModel, IndexEntryMissingFromItsShardIsNamed) {
  TinyHfFolder folder;
  const auto dir = folder.write();
  json index;
  std::ifstream(fs::path(dir) / "model.safetensors.index.json") >> index;
  index["weight_map"]["model.extra.weight"] = TinyHfFolder::shard_name(0);
  write_json(fs::path(dir) / "model.safetensors.index.json", index);
  expect_load_error(dir,
                    {"tensor model.extra.weight", TinyHfFolder::shard_name(0), "does not have it"});
}

TEST(HfModel, IndexShardPathOutsideTheFolderIsRejected) {
  TinyHfFolder folder;
  const auto dir = folder.write();
  json index;
  std::ifstream(fs::path(dir) / "model.safetensors.index.json") >> index;
  index["weight_map"]["model.norm.weight"] = "../elsewhere.safetensors";
  write_json(fs::path(dir) / "model.safetensors.index.json", index);
  expect_load_error(dir, {"weight_map[model.norm.weight]", "must be a file name"});
}

TEST(HfModel, WrongShapeIsNamedWithBothShapes) {
  TinyHfFolder folder;
  folder.remove("model.layers.0.self_attn.k_proj.weight");
  folder.add("model.layers.0.self_attn.k_proj.weight", {16, 16});
  expect_load_error(folder.write(), {"tensor model.layers.0.self_attn.k_proj.weight",
                                     "shape [16, 16] but the config needs [8, 16]"});
}

TEST(HfModel, UnsupportedDtypeIsNamed) {
  TinyHfFolder folder;
  folder.remove("model.norm.weight");
  folder.tensors.push_back({"model.norm.weight", "I32", {16}, std::string(64, '\0')});
  expect_load_error(folder.write(), {"tensor model.norm.weight", "dtype I32 is not supported"});
}

TEST(HfModel, AbsentLmHeadMeansTiedEmbeddings) {
  TinyHfFolder folder;
  folder.remove("lm_head.weight");
  const auto model = load_model(folder.write());
  EXPECT_TRUE(model->spec().tied_embeddings);
  EXPECT_EQ(model->weights().output.data, model->weights().token_embd.data);
  EXPECT_EQ(model->weights().output.rows, 32);
}

TEST(HfModel, TieWordEmbeddingsIgnoresAnLmHead) {
  TinyHfFolder folder;
  folder.config["tie_word_embeddings"] = true;
  const auto model = load_model(folder.write());
  EXPECT_TRUE(model->spec().tied_embeddings);
  EXPECT_EQ(model->weights().output.data, model->weights().token_embd.data);
  // The lm_head is not a weight the model uses, and tied weights count once.
  std::uint64_t expected = 0;
  for (const auto& t : folder.tensors) {
    if (t.name != "lm_head.weight") expected += t.bytes.size();
  }
  EXPECT_EQ(model->weight_bytes(), expected);
}

TEST(HfModel, LayersBeyondNumHiddenLayersAreRejected) {
  TinyHfFolder folder;
  folder.config["num_hidden_layers"] = 1;
  expect_load_error(folder.write(), {"num_hidden_layers = 1", "model.layers.1."});
}

TEST(HfModel, Qwen2LoadsQkvBiases) {
  TinyHfFolder folder("qwen2");
  folder.config["sliding_window"] = 64;
  folder.config["use_sliding_window"] = false;
  const auto model = load_model(folder.write());
  EXPECT_EQ(model->spec().architecture, "qwen2");
  EXPECT_TRUE(model->spec().qkv_bias);
  EXPECT_EQ(model->spec().sliding_window, 0);
  const LayerWeights& l = model->weights().layers[1];
  ASSERT_TRUE(l.bk);
  EXPECT_EQ(l.bk.cols, 8);
  EXPECT_EQ(l.bq.cols, 16);
  EXPECT_EQ(l.bv.name, "model.layers.1.self_attn.v_proj.bias");
}

TEST(HfModel, Qwen2WithoutBiasesNamesTheMissingBias) {
  TinyHfFolder folder("qwen2");
  folder.remove("model.layers.0.self_attn.q_proj.bias");
  expect_load_error(folder.write(), {"tensor model.layers.0.self_attn.q_proj.bias"});
}

TEST(HfModel, MistralSlidingWindowIsKept) {
  TinyHfFolder folder("mistral");
  folder.config["sliding_window"] = 64;
  EXPECT_EQ(load_model(folder.write())->spec().sliding_window, 64);
  folder.config["sliding_window"] = nullptr;
  EXPECT_EQ(load_model(folder.write())->spec().sliding_window, 0);
}

TEST(HfModel, TokenizerFilesAndChatTemplateString) {
  const auto dir = fs::path(TinyHfFolder().write());
  auto model = load_model(dir.string());
  EXPECT_EQ(model->tokenizer_model_path(), "");
  EXPECT_EQ(model->tokenizer_config_path(), "");
  EXPECT_FALSE(model->chat_template());

  std::ofstream(dir / "tokenizer.model") << "x";
  write_json(dir / "tokenizer_config.json", {{"chat_template", "{{ messages }}"}});
  model = load_model(dir.string());
  EXPECT_EQ(model->tokenizer_model_path(), (dir / "tokenizer.model").string());
  EXPECT_EQ(model->tokenizer_config_path(), (dir / "tokenizer_config.json").string());
  EXPECT_EQ(model->chat_template(), "{{ messages }}");
}

TEST(HfModel, TokenizerConfigSaysWhetherBosAndEosWrapAPrompt) {
  const auto dir = fs::path(TinyHfFolder().write());
  EXPECT_FALSE(load_model(dir.string())->special_token_flags().add_bos);
  write_json(dir / "tokenizer_config.json", {{"add_bos_token", false}, {"add_eos_token", true}});
  const auto flags = load_model(dir.string())->special_token_flags();
  EXPECT_EQ(flags.add_bos, false);
  EXPECT_EQ(flags.add_eos, true);
  write_json(dir / "tokenizer_config.json", {{"add_bos_token", "yes"}});
  expect_load_error(dir.string(), {"tokenizer_config.json", "add_bos_token"});
}

TEST(HfModel, ChatTemplateListTakesTheDefaultOne) {
  const auto dir = fs::path(TinyHfFolder().write());
  write_json(dir / "tokenizer_config.json",
             {{"chat_template", json::array({{{"name", "tool_use"}, {"template", "T"}},
                                             {{"name", "default"}, {"template", "D"}}})}});
  EXPECT_EQ(load_model(dir.string())->chat_template(), "D");
}

// chat_template.jinja was read whole, whatever its size.
TEST(HfModel, AChatTemplateFileIsReadUpToACap) {
  const auto dir = fs::path(TinyHfFolder().write());
  std::ofstream(dir / "chat_template.jinja") << "{{ bos_token }}<|im_start|>";
  EXPECT_EQ(load_model(dir.string())->chat_template(), "{{ bos_token }}<|im_start|>");
  fs::resize_file(dir / "chat_template.jinja", (std::uintmax_t{1} << 20) + 1);
  expect_load_error(dir.string(), {"chat_template.jinja", "too large for a chat template"});
}

TEST(HfModel, FolderWithoutWeightsIsRejected) {
  const auto dir = test::scratch_dir();
  write_json(dir / "config.json", TinyHfFolder().config);
  expect_load_error(dir.string(), {"no model.safetensors or model.safetensors.index.json"});
}

TEST(HfModel, FolderWithoutConfigIsRejected) {
  expect_load_error(test::scratch_dir().string(), {"no config.json"});
}

TEST(HfModel, PathThatIsNeitherGgufNorFolderIsRejected) {
  const auto path = test::scratch_dir() / "notes.txt";
  std::ofstream(path) << "hello";
  expect_load_error(path.string(), {"not a GGUF file or a Hugging Face folder"});
  expect_load_error((test::scratch_dir() / "absent").string(), {"no such file or folder"});
}

// Every JSON file of a folder is depth-limited while it is parsed (a value nested 100,000
// deep used to be built in full, and formatting one for a message overflowed the stack).
TEST(HfModel, NestedJsonInAnyFolderFileIsAnErrorNamingTheFile) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  for (const std::string file :
       {"config.json", "model.safetensors.index.json", "tokenizer_config.json"}) {
    SCOPED_TRACE(file);
    const auto dir = fs::path(TinyHfFolder().write());
    std::ofstream(dir / file) << R"({"weight_map": {}, "hidden_size": )" << deep << "}";
    expect_load_error(dir.string(), {file + ": JSON nested more than 64 levels"});
  }
}

// 48 MB of '[' in the index once took gigabytes of memory and many seconds to reject; now
// the size cap refuses it unread, and under the cap the depth limit stops the parse at
// byte 65.
TEST(HfModel, IndexOfOpenBracketsIsRefusedQuickly) {
  const auto dir = fs::path(TinyHfFolder().write());
  const auto index = dir / "model.safetensors.index.json";
  std::ofstream(index) << std::string(48 << 20, '[');
  expect_load_error(dir.string(), {"model.safetensors.index.json: 50331648 bytes is over the "
                                   "16777216 byte limit"});
  std::ofstream(index) << std::string(12 << 20, '[');
  expect_load_error(dir.string(), {"model.safetensors.index.json: JSON nested more than 64"});
}

TEST(HfModel, IndexWithMillionsOfValuesIsRefusedBeforeItIsBuilt) {
  const auto dir = fs::path(TinyHfFolder().write());
  std::string values = "{\"weight_map\": {}, \"pad\": [0";
  for (int i = 0; i < 3'000'000; ++i) values += ",0";
  values += "]}";
  std::ofstream(dir / "model.safetensors.index.json") << values;
  expect_load_error(dir.string(), {"index.json: more than 2097152 JSON values"});
}

TEST(HfModel, HostileIndexNamesAreQuotedBounded) {
  TinyHfFolder folder;
  const auto dir = folder.write();
  json index;
  std::ifstream(fs::path(dir) / "model.safetensors.index.json") >> index;
  index["weight_map"][std::string(100'000, 'k')] = std::string(300, 'f');
  write_json(fs::path(dir) / "model.safetensors.index.json", index);
  try {
    load_model(dir);
    ADD_FAILURE() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr("must be a file name in the folder"));
    EXPECT_LT(std::string(e.what()).size(), 500u);
  }
}

TEST(HfModel, TokenizerJsonAndTheConfigTokensAreRead) {
  const auto dir = fs::path(TinyHfFolder().write());
  std::ofstream(dir / "tokenizer.json") << "{}";
  write_json(dir / "tokenizer_config.json",
             {{"bos_token", "<s>"},
              {"eos_token", {{"content", "</s>"}, {"special", true}}},
              {"pad_token", nullptr}});
  const auto model = load_model(dir.string());
  EXPECT_EQ(model->tokenizer_json_path(), (dir / "tokenizer.json").string());
  const auto flags = model->special_token_flags();
  EXPECT_EQ(flags.bos_token, "<s>");
  EXPECT_EQ(flags.eos_token, "</s>");
  EXPECT_FALSE(flags.pad_token);
  EXPECT_EQ(flags.config_path, (dir / "tokenizer_config.json").string());
  write_json(dir / "tokenizer_config.json", {{"eos_token", 2}});
  expect_load_error(dir.string(), {"tokenizer_config.json: eos_token: expected a token's text"});
}

// Llama 3 Instruct stops on three ids; the list form was not read at all.
TEST(HfModel, GenerationConfigEosIdsAreReadAsAnIntOrAList) {
  const auto dir = fs::path(TinyHfFolder().write());
  write_json(dir / "generation_config.json", {{"eos_token_id", 3}});
  EXPECT_EQ(load_model(dir.string())->special_token_flags().eos_token_ids,
            std::vector<std::int64_t>{3});
  write_json(dir / "generation_config.json", {{"eos_token_id", {31, 2, 5}}});
  const auto flags = load_model(dir.string())->special_token_flags();
  EXPECT_EQ(flags.eos_token_ids, (std::vector<std::int64_t>{31, 2, 5}));
  EXPECT_EQ(flags.generation_config_path, (dir / "generation_config.json").string());
}

TEST(HfModel, GenerationConfigEosIdOutsideTheVocabIsNamed) {
  const auto dir = fs::path(TinyHfFolder().write());
  write_json(dir / "generation_config.json", {{"eos_token_id", {2, 32}}});
  expect_load_error(dir.string(), {"generation_config.json: eos_token_id[1] = 32 is out of range",
                                   "vocab_size 32"});
  write_json(dir / "generation_config.json", {{"eos_token_id", -1}});
  expect_load_error(dir.string(), {"generation_config.json: eos_token_id = -1 is out of range"});
  write_json(dir / "generation_config.json", {{"eos_token_id", "2"}});
  expect_load_error(dir.string(), {"eos_token_id: expected a token id, found string"});
}

// The whole path a HF folder takes: tokenizer.json, tokenizer_config.json and
// generation_config.json read by the model, the tokenizer made from them.
TEST(HfModel, FolderWithTokenizerJsonStopsOnEveryGenerationConfigId) {
  const auto dir = fs::path(TinyHfFolder().write());
  test::write_json(dir / "tokenizer.json", test::tiny_file());
  write_json(dir / "tokenizer_config.json", {{"bos_token", "<s>"}, {"add_bos_token", false}});
  write_json(dir / "generation_config.json", {{"eos_token_id", {2, 31}}});
  const auto model = load_model(dir.string());
  const auto tok = make_tokenizer(*model);
  EXPECT_EQ(tok->kind(), "bpe (tokenizer.json)");
  EXPECT_FALSE(tok->add_bos_default());  // the config's add_bos_token beats the template
  EXPECT_TRUE(tok->is_end_of_generation(2));
  EXPECT_TRUE(tok->is_end_of_generation(31));
  EXPECT_FALSE(tok->is_end_of_generation(30));
}

}  // namespace
}  // namespace kvscope
