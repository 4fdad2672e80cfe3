// parse_hf_config: config.json fields to ModelSpec, defaults for absent fields, and a
// ModelError naming the field for each bad one.
#include "model/hf_config.h"

#include <cmath>
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

// google/gemma-2-2b-it's config.json: every other layer slides over 4096 tokens (no
// layer_types: Gemma2Config's layout), both soft-caps, scores times query_pre_attn_scalar^-1/2.
TEST(HfConfig, Gemma2ReadsItsWindowsSoftCapsAndScale) {
  const ModelSpec s = parse_hf_config(R"({
    "architectures": ["Gemma2ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
    "attn_logit_softcapping": 50.0, "bos_token_id": 2, "cache_implementation": "hybrid",
    "eos_token_id": [1, 107], "final_logit_softcapping": 30.0, "head_dim": 256,
    "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh",
    "hidden_size": 2304, "initializer_range": 0.02, "intermediate_size": 9216,
    "max_position_embeddings": 8192, "model_type": "gemma2", "num_attention_heads": 8,
    "num_hidden_layers": 26, "num_key_value_heads": 4, "pad_token_id": 0,
    "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
    "sliding_window": 4096, "torch_dtype": "float32", "use_cache": true, "vocab_size": 256000})",
                                      "config.json");
  EXPECT_EQ(s.architecture, "gemma2");
  EXPECT_EQ(s.sliding_window, 4096);
  EXPECT_TRUE(s.layer_slides(0));
  EXPECT_FALSE(s.layer_slides(1));
  EXPECT_TRUE(s.layer_slides(24));
  EXPECT_FALSE(s.layer_slides(25));
  EXPECT_DOUBLE_EQ(s.attn_softcap, 50.0);
  EXPECT_DOUBLE_EQ(s.final_softcap, 30.0);
  EXPECT_DOUBLE_EQ(s.score_scale(), 1.0 / 16.0);
  EXPECT_FALSE(s.qk_norm);
  EXPECT_TRUE(s.post_norms);
  EXPECT_TRUE(s.tied_embeddings);  // Gemma2Config's default
  EXPECT_EQ(s.ffn_activation, FfnActivation::GeluTanh);
  EXPECT_DOUBLE_EQ(s.embedding_scale, std::sqrt(2304.0));
  // the 27B's scalar is not its head_dim: the config says it
  const ModelSpec big = parse_hf_config(
      R"({"model_type": "gemma2", "hidden_size": 4608, "num_hidden_layers": 46,
          "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
          "intermediate_size": 36864, "query_pre_attn_scalar": 144})",
      "config.json");
  EXPECT_DOUBLE_EQ(big.score_scale(), 1.0 / 12.0);
}

// google/gemma-3-4b-it's config.json (Gemma3ForConditionalGeneration): the text model's
// text_config gives its sizes and window, Gemma3TextConfig's defaults the rest.
TEST(HfConfig, Gemma3ConditionalGenerationReadsItsTextConfigOverTheDefaults) {
  const ModelSpec s = parse_hf_config(R"({
    "architectures": ["Gemma3ForConditionalGeneration"], "boi_token_index": 255999,
    "eoi_token_index": 256000, "eos_token_id": [1, 106], "image_token_index": 262144,
    "initializer_range": 0.02, "mm_tokens_per_image": 256, "model_type": "gemma3",
    "text_config": {"hidden_size": 2560, "intermediate_size": 10240,
                    "model_type": "gemma3_text", "num_hidden_layers": 34,
                    "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                    "sliding_window": 1024},
    "torch_dtype": "bfloat16",
    "vision_config": {"hidden_size": 1152, "image_size": 896, "model_type": "siglip_vision_model",
                      "num_hidden_layers": 27, "patch_size": 14}})",
                                      "config.json");
  EXPECT_EQ(s.architecture, "gemma3");
  EXPECT_EQ(std::vector<std::int64_t>({s.dim, s.n_layers, s.n_heads, s.n_kv_heads, s.head_dim,
                                       s.ffn_dim, s.vocab_size, s.context_length}),
            std::vector<std::int64_t>({2560, 34, 8, 4, 256, 10240, 262208, 131072}));
  EXPECT_EQ(s.sliding_window, 1024);
  EXPECT_TRUE(s.layer_slides(4));
  EXPECT_FALSE(s.layer_slides(5));
  EXPECT_DOUBLE_EQ(s.rope_theta, 1e6);
  EXPECT_DOUBLE_EQ(s.rope_theta_local, 1e4);
  EXPECT_EQ(s.rope_scaling.type, RopeScalingType::Linear);
  EXPECT_FALSE(s.rope_scaling_local);  // the global layers' scaling only
  EXPECT_DOUBLE_EQ(s.score_scale(), 1.0 / 16.0);
  EXPECT_EQ(s.attn_softcap, 0.0);
  EXPECT_EQ(s.final_softcap, 0.0);
  EXPECT_TRUE(s.qk_norm);
  EXPECT_TRUE(s.tied_embeddings);
  expect_config_error(R"({"model_type": "gemma3"})", {"cfg.json", "text_config: missing"});
}

// Newer configs list each layer's attention (layer_types) instead of a pattern: the period is
// read from it, and a layout no period gives is refused rather than run another way.
TEST(HfConfig, GemmaLayerTypesGiveThePeriod) {
  json layer_types = json::array();
  for (int l = 0; l < 18; ++l)
    layer_types.push_back(l % 6 == 5 ? "full_attention" : "sliding_attention");
  json config = {{"model_type", "gemma3_text"},
                 {"hidden_size", 640},
                 {"num_hidden_layers", 18},
                 {"num_attention_heads", 4},
                 {"num_key_value_heads", 1},
                 {"intermediate_size", 2048},
                 {"vocab_size", 262144},
                 {"sliding_window", 512},
                 {"sliding_window_pattern", 3},
                 {"layer_types", layer_types},
                 {"final_logit_softcapping", nullptr}};
  const ModelSpec s = parse_hf_config(config.dump(), "config.json");
  EXPECT_EQ(s.sliding_window_period, 6);  // layer_types wins over the older field
  EXPECT_EQ(s.final_softcap, 0.0);        // null: off
  config["layer_types"][7] = "full_attention";
  try {
    parse_hf_config(config.dump(), "cfg.json");
    ADD_FAILURE() << "layer 7 full accepted";
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cfg.json: layer_types: layer 7 breaks the pattern"));
  }
  config["layer_types"] = {"sliding_attention"};
  EXPECT_THROW(parse_hf_config(config.dump(), "cfg.json"), ModelError);  // not 18 of them
}

TEST(HfConfig, NotJsonIsAModelError) {
  EXPECT_THROW(parse_hf_config("{\"model_type\": ", "cfg.json"), ModelError);
  EXPECT_THROW(parse_hf_config("[]", "cfg.json"), ModelError);
}

}  // namespace
}  // namespace kvscope
