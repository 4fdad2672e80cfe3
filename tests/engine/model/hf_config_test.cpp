// parse_hf_config: config.json fields to ModelSpec, defaults for absent fields, and a
// ModelError naming the field for each bad one.
#include "model/hf_config.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace kvscope {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(HfConfig, ReadsGqaHeadDimAndRopeScaling) {
  const ModelSpec s = parse_hf_config(R"({
    "model_type": "llama", "hidden_size": 64, "num_hidden_layers": 3,
    "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 32,
    "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 8192,
    "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                     "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
    "attention_bias": true})",
                                      "config.json");
  EXPECT_EQ(s.head_dim, 32);
  EXPECT_EQ(s.q_dim(), 128);  // an explicit head_dim may differ from hidden / heads
  EXPECT_EQ(s.n_kv_heads, 1);
  EXPECT_EQ(s.rope_scaling.type, RopeScalingType::Llama3);
  EXPECT_DOUBLE_EQ(s.rope_scaling.factor, 8.0);
  EXPECT_EQ(s.rope_scaling.original_context, 8192);
  EXPECT_TRUE(s.qkv_bias);
  EXPECT_DOUBLE_EQ(s.rope_theta, 10000.0);  // default when absent
  EXPECT_DOUBLE_EQ(s.norm_eps, 1e-6);
}

TEST(HfConfig, MissingKvHeadsDefaultsToOnePerQueryHead) {
  const ModelSpec s = parse_hf_config(
      R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1,
          "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
          "max_position_embeddings": 512, "rope_scaling": null})",
      "config.json");
  EXPECT_EQ(s.n_kv_heads, 4);
  EXPECT_EQ(s.head_dim, 16);
  EXPECT_EQ(s.rope_scaling.type, RopeScalingType::None);
}

void expect_config_error(const std::string& patch, const std::vector<std::string>& parts) {
  json config = {{"model_type", "llama"},    {"hidden_size", 16},
                 {"num_hidden_layers", 2},   {"num_attention_heads", 4},
                 {"num_key_value_heads", 2}, {"intermediate_size", 24},
                 {"vocab_size", 32},         {"max_position_embeddings", 128}};
  config.merge_patch(json::parse(patch));
  try {
    parse_hf_config(config.dump(), "cfg.json");
    ADD_FAILURE() << "expected a ModelError for " << patch;
  } catch (const ModelError& e) {
    for (const auto& p : parts) EXPECT_THAT(e.what(), HasSubstr(p)) << patch;
  }
}

TEST(HfConfig, BadFieldsAreNamed) {
  expect_config_error(R"({"model_type": "gemma"})", {"cfg.json", "model_type 'gemma'"});
  expect_config_error(R"({"num_key_value_heads": "2"})",
                      {"num_key_value_heads: expected an integer, found string"});
  expect_config_error(R"({"hidden_size": null})", {"hidden_size: missing"});
  expect_config_error(R"({"num_key_value_heads": 3})", {"n_heads 4", "n_kv_heads 3"});
  expect_config_error(R"({"hidden_size": 18})",
                      {"hidden_size = 18 is not a multiple of num_attention_heads = 4"});
  expect_config_error(R"({"rope_scaling": {"type": "longrope", "factor": 2.0}})",
                      {"rope_scaling type 'longrope'"});
  expect_config_error(R"({"rope_scaling": {"type": "linear"}})", {"rope_scaling.factor: missing"});
  expect_config_error(R"({"vocab_size": -5})", {"vocab_size", "-5"});
}

ModelSpec qwen2_with(const json& patch) {
  json config = {{"model_type", "qwen2"},    {"hidden_size", 16},
                 {"num_hidden_layers", 4},   {"num_attention_heads", 4},
                 {"num_key_value_heads", 2}, {"intermediate_size", 24},
                 {"vocab_size", 32},         {"max_position_embeddings", 128},
                 {"sliding_window", 64}};
  config.merge_patch(patch);
  return parse_hf_config(config.dump(), "cfg.json");
}

// Qwen2 slides only with use_sliding_window, and then only from layer max_window_layers on.
TEST(HfConfig, Qwen2SlidesOnlyTheLayersItsConfigSays) {
  EXPECT_EQ(qwen2_with(json::object()).sliding_window, 0);  // Qwen2.5's: use_sliding_window false
  EXPECT_EQ(qwen2_with({{"use_sliding_window", true}, {"max_window_layers", 0}}).sliding_window,
            64);
  EXPECT_EQ(qwen2_with({{"use_sliding_window", true}, {"max_window_layers", 4}}).sliding_window, 0);
  EXPECT_EQ(qwen2_with({{"use_sliding_window", true}}).sliding_window, 0);  // 28 by default
  expect_config_error(R"({"model_type": "qwen2", "sliding_window": 64, "use_sliding_window": true,
                          "max_window_layers": 1})",
                      {"cfg.json: use_sliding_window with max_window_layers = 1: layers 1 to 1",
                       "one attention window for all layers"});
  // Mistral's window covers every layer.
  expect_config_error(R"({"model_type": "mistral", "sliding_window": "4096"})",
                      {"sliding_window: expected an integer"});
}

TEST(HfConfig, NotJsonIsAModelError) {
  EXPECT_THROW(parse_hf_config("{\"model_type\": ", "cfg.json"), ModelError);
  EXPECT_THROW(parse_hf_config("[]", "cfg.json"), ModelError);
}

}  // namespace
}  // namespace kvscope
