// validate(ModelSpec): a good spec passes; each bad field is a ModelError naming it.
#include "model/model_spec.h"

#include <functional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/tiny_llama_spec.h"
#include "util/error.h"

namespace kvscope {
namespace {

using ::testing::HasSubstr;

ModelSpec good_spec() {
  ModelSpec s = test::tiny_llama_spec("", 512);
  s.dim = 64;
  s.n_heads = 8;
  s.n_kv_heads = 4;
  s.ffn_dim = 172;
  s.context_length = 2048;
  return s;
}

// The message validate() throws after `change` is applied to a good spec.
std::string error_after(const std::function<void(ModelSpec&)>& change) {
  ModelSpec s = good_spec();
  change(s);
  try {
    validate(s);
  } catch (const ModelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "validate accepted the spec";
  return {};
}

TEST(ModelSpec, GoodSpecPassesAndDerivedSizesFollow) {
  const ModelSpec s = good_spec();
  EXPECT_NO_THROW(validate(s));
  EXPECT_EQ(s.q_dim(), 64);
  EXPECT_EQ(s.kv_dim(), 32);
  EXPECT_EQ(s.gqa_group(), 2);
}

TEST(ModelSpec, ZeroOrNegativeSizesNameTheField) {
  EXPECT_THAT(error_after([](ModelSpec& s) { s.n_layers = 0; }),
              HasSubstr("n_layers: must be positive, got 0"));
  EXPECT_THAT(error_after([](ModelSpec& s) { s.dim = -64; }), HasSubstr("dim: must be positive"));
  EXPECT_THAT(error_after([](ModelSpec& s) { s.n_kv_heads = 0; }), HasSubstr("n_kv_heads"));
  EXPECT_THAT(error_after([](ModelSpec& s) { s.ffn_dim = 0; }), HasSubstr("ffn_dim"));
  EXPECT_THAT(error_after([](ModelSpec& s) { s.vocab_size = 0; }), HasSubstr("vocab_size"));
  EXPECT_THAT(error_after([](ModelSpec& s) { s.context_length = -1; }),
              HasSubstr("context_length: must be positive, got -1"));
  EXPECT_THAT(error_after([](ModelSpec& s) { s.architecture.clear(); }), HasSubstr("architecture"));
}

TEST(ModelSpec, AbsurdSizesAreRejectedBeforeTheyCanOverflow) {
  EXPECT_THAT(error_after([](ModelSpec& s) { s.dim = std::int64_t{1} << 40; }),
              HasSubstr("dim: 1099511627776 is larger than the supported maximum"));
  EXPECT_THAT(error_after([](ModelSpec& s) { s.vocab_size = std::int64_t{1} << 50; }),
              HasSubstr("vocab_size"));
}

TEST(ModelSpec, HeadsMustBeAMultipleOfKvHeads) {
  EXPECT_THAT(error_after([](ModelSpec& s) { s.n_kv_heads = 3; }),
              HasSubstr("n_heads 8 is not a multiple of n_kv_heads 3"));
}

TEST(ModelSpec, HeadDimAndRopeDimMustBeEven) {
  EXPECT_THAT(error_after([](ModelSpec& s) { s.head_dim = 7; }), HasSubstr("head_dim 7 is odd"));
  EXPECT_THAT(error_after([](ModelSpec& s) { s.rope_dim = 5; }), HasSubstr("rope_dim 5"));
  EXPECT_THAT(error_after([](ModelSpec& s) { s.rope_dim = 16; }),
              HasSubstr("rope_dim 16 must be even and at most head_dim 8"));
}

TEST(ModelSpec, HeadsTimesHeadDimMayDifferFromDim) {
  ModelSpec s = good_spec();
  s.head_dim = 16;  // Mistral-Nemo style: q_dim 128 != dim 64
  s.rope_dim = 16;
  EXPECT_NO_THROW(validate(s));
}

TEST(ModelSpec, RopeThetaAndNormEpsMustBePositiveFinite) {
  EXPECT_THAT(error_after([](ModelSpec& s) { s.rope_theta = 0; }), HasSubstr("rope_theta"));
  EXPECT_THAT(error_after([](ModelSpec& s) { s.norm_eps = -1e-5; }), HasSubstr("norm_eps"));
  EXPECT_THAT(error_after([](ModelSpec& s) { s.sliding_window = -4; }),
              HasSubstr("sliding_window"));
}

TEST(ModelSpec, RopeScalingNeedsAUsableFactorAndLlama3Bounds) {
  EXPECT_THAT(error_after([](ModelSpec& s) {
                s.rope_scaling.type = RopeScalingType::Linear;
                s.rope_scaling.factor = 0.0;
              }),
              HasSubstr("linear scaling needs a factor >= 1, got 0"));
  EXPECT_THAT(error_after([](ModelSpec& s) {
                s.rope_scaling.type = RopeScalingType::Llama3;
                s.rope_scaling.factor = 8;
              }),
              HasSubstr("original_max_position_embeddings: llama3 scaling needs it"));
  EXPECT_THAT(error_after([](ModelSpec& s) {
                s.rope_scaling = {RopeScalingType::Llama3, 8, 8192, 4.0, 4.0};
              }),
              HasSubstr("high_freq_factor 4 must be larger than low_freq_factor 4"));
  ModelSpec s = good_spec();
  s.rope_scaling = {RopeScalingType::Llama3, 8, 8192, 1.0, 4.0};
  EXPECT_NO_THROW(validate(s));
}

TEST(ModelSpec, ResolveHeadDimPrefersTheExplicitValue) {
  EXPECT_EQ(resolve_head_dim(64, 8, std::nullopt, "dim", "heads"), 8);
  EXPECT_EQ(resolve_head_dim(64, 8, 32, "dim", "heads"), 32);
  try {
    resolve_head_dim(60, 8, std::nullopt, "cfg: hidden_size", "num_attention_heads");
    ADD_FAILURE() << "60 / 8 accepted";
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cfg: hidden_size = 60 is not a multiple of "
                                    "num_attention_heads = 8"));
  }
}

TEST(ModelSpec, RopeScalingNames) {
  EXPECT_EQ(rope_scaling_name(RopeScalingType::None), "none");
  EXPECT_EQ(rope_scaling_name(RopeScalingType::Llama3), "llama3");
  EXPECT_EQ(rope_scaling_name(RopeScalingType::Yarn), "yarn");
}

}  // namespace
}  // namespace kvscope
