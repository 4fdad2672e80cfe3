// write_synthetic_gguf: the file loads back as the spec it was written from, with seeded,
// bounded weights of the requested type and the default (or a given) vocab.
#include "model/synthetic_model.h"

#include <cmath>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_model.h"
#include "support/test_data.h"
#include "support/tiny_llama_spec.h"
#include "util/error.h"

namespace kvscope {
namespace {

using ::testing::HasSubstr;

ModelSpec small_spec() {
  ModelSpec s = test::tiny_llama_spec("synthetic-test", 300);
  s.n_layers = 3;
  s.dim = 64;
  s.head_dim = 16;
  s.rope_dim = 16;
  s.ffn_dim = 96;
  s.context_length = 512;
  s.rope_theta = 500000.0;
  s.norm_eps = 1e-5;
  return s;
}

std::string write(const ModelSpec& spec, TensorType type, std::uint64_t seed,
                  const SyntheticVocab* vocab = nullptr) {
  const auto path = (test::scratch_dir() / "synthetic.gguf").string();
  write_synthetic_gguf(path, spec, type, seed, vocab);
  return path;
}

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::vector<float> dequantized(const WeightView& w) {
  std::vector<float> out(static_cast<std::size_t>(w.rows * w.cols));
  for (std::int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w.type, w.row(r), out.data() + r * w.cols, w.cols);
  }
  return out;
}

TEST(SyntheticGguf, LoadsBackAsTheSpecItWasWrittenFrom) {
  const ModelSpec want = small_spec();
  const GgufModel model(write(want, TensorType::F32, 1));
  const ModelSpec& got = model.spec();
  EXPECT_EQ(got.architecture, "llama");
  EXPECT_EQ(got.name, "synthetic-test");
  EXPECT_EQ(got.n_layers, want.n_layers);
  EXPECT_EQ(got.dim, want.dim);
  EXPECT_EQ(got.n_heads, want.n_heads);
  EXPECT_EQ(got.n_kv_heads, want.n_kv_heads);
  EXPECT_EQ(got.head_dim, want.head_dim);
  EXPECT_EQ(got.rope_dim, want.rope_dim);
  EXPECT_EQ(got.ffn_dim, want.ffn_dim);
  EXPECT_EQ(got.vocab_size, want.vocab_size);
  EXPECT_EQ(got.context_length, want.context_length);
  EXPECT_DOUBLE_EQ(got.rope_theta, want.rope_theta);
  EXPECT_NEAR(got.norm_eps, want.norm_eps, 1e-10);
  EXPECT_FALSE(got.tied_embeddings);
  EXPECT_FALSE(got.qkv_bias);
  EXPECT_EQ(got.rope_pairing, RopePairing::Adjacent);
}

TEST(SyntheticGguf, DefaultVocabIsLlamaStyleWithByteTokens) {
  const GgufModel model(write(small_spec(), TensorType::F32, 1));
  const GgufFile& f = *model.gguf();
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "llama");
  const auto tokens = f.get_string_array("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 300u);
  EXPECT_EQ(tokens[0], "<unk>");
  EXPECT_EQ(tokens[1], "<s>");
  EXPECT_EQ(tokens[2], "</s>");
  EXPECT_EQ(tokens[3], "<0x00>");
  EXPECT_EQ(tokens[3 + 0x41], "<0x41>");
  EXPECT_EQ(tokens[258], "<0xFF>");
  EXPECT_EQ(std::set<std::string>(tokens.begin(), tokens.end()).size(), tokens.size());
  const auto types = f.get_int_array("tokenizer.ggml.token_type");
  ASSERT_EQ(types.size(), 300u);
  EXPECT_EQ(types[0], 2);
  EXPECT_EQ(types[1], 3);
  EXPECT_EQ(types[2], 3);
  EXPECT_EQ(types[3], 6);
  EXPECT_EQ(types[258], 6);
  EXPECT_EQ(types[259], 1);
  const auto scores = f.get_float_array("tokenizer.ggml.scores");
  ASSERT_EQ(scores.size(), 300u);
  EXPECT_GT(scores[259], scores[260]);
  EXPECT_EQ(f.get_uint("tokenizer.ggml.bos_token_id"), 1u);
  EXPECT_EQ(f.get_uint("tokenizer.ggml.eos_token_id"), 2u);
}

TEST(SyntheticGguf, FillerPiecesStayDistinctForLargeVocabs) {
  const SyntheticVocab v = default_synthetic_vocab(5000);
  ASSERT_EQ(v.tokens.size(), 5000u);
  EXPECT_EQ(std::set<std::string>(v.tokens.begin(), v.tokens.end()).size(), 5000u);
}

TEST(SyntheticGguf, VocabSmallerThanTheByteTableHasNoByteTokens) {
  ModelSpec s = small_spec();
  s.vocab_size = 40;
  const GgufModel model(write(s, TensorType::F32, 1));
  const auto tokens = model.gguf()->get_string_array("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 40u);
  EXPECT_EQ(tokens[2], "</s>");
  EXPECT_NE(tokens[3], "<0x00>");
}

TEST(SyntheticGguf, WeightsAreBoundedBySqrtOfRowLengthAndNotDegenerate) {
  const GgufModel model(write(small_spec(), TensorType::F32, 7));
  const LayerWeights& l = model.weights().layers[2];
  for (const WeightView* w : {&l.wq, &l.w_down, &model.weights().token_embd}) {
    const auto v = dequantized(*w);
    const double bound = 1.0 / std::sqrt(static_cast<double>(w->cols));
    double max_abs = 0, mean = 0;
    for (float x : v) {
      max_abs = std::max(max_abs, static_cast<double>(std::fabs(x)));
      mean += x;
    }
    mean /= static_cast<double>(v.size());
    EXPECT_LE(max_abs, bound) << w->name;
    EXPECT_GT(max_abs, 0.9 * bound) << w->name;
    EXPECT_LT(std::fabs(mean), 0.1 * bound) << w->name;
  }
  const auto norm = dequantized(l.attn_norm);
  for (float x : norm) EXPECT_NEAR(x, 1.0f, 0.1f);
}

TEST(SyntheticGguf, QuantizedTypeAppliesToMatricesNotNorms) {
  const GgufModel model(write(small_spec(), TensorType::Q8_0, 3));
  const ModelWeights& w = model.weights();
  EXPECT_EQ(w.token_embd.type, TensorType::Q8_0);
  EXPECT_EQ(w.layers[0].wk.type, TensorType::Q8_0);
  EXPECT_EQ(w.layers[0].w_down.type, TensorType::Q8_0);
  EXPECT_EQ(w.output.type, TensorType::Q8_0);
  EXPECT_EQ(w.layers[0].attn_norm.type, TensorType::F32);
  EXPECT_EQ(w.output_norm.type, TensorType::F32);
  const auto v = dequantized(w.layers[0].wq);
  const double bound = 1.0 / std::sqrt(64.0);
  for (float x : v) EXPECT_LE(std::fabs(x), bound * 1.01);
}

TEST(SyntheticGguf, SameSeedGivesSameBytesAndOtherSeedsDiffer) {
  const auto a = file_bytes(write(small_spec(), TensorType::F16, 42));
  const auto b = file_bytes(write(small_spec(), TensorType::F16, 42));
  const auto c = file_bytes(write(small_spec(), TensorType::F16, 43));
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.size(), c.size());
  EXPECT_NE(a, c);
}

TEST(SyntheticGguf, TiedEmbeddingsOmitOutputAndQwen2GetsBiases) {
  ModelSpec s = small_spec();
  s.tied_embeddings = true;
  s.architecture = "qwen2";
  const GgufModel model(write(s, TensorType::F32, 5));
  EXPECT_EQ(model.gguf()->find_tensor("output.weight"), nullptr);
  EXPECT_TRUE(model.spec().tied_embeddings);
  EXPECT_EQ(model.spec().architecture, "qwen2");
  EXPECT_TRUE(model.spec().qkv_bias);
  EXPECT_EQ(model.spec().rope_pairing, RopePairing::HalfSplit);
  EXPECT_EQ(model.weights().layers[1].bk.cols, 32);
}

TEST(SyntheticGguf, SlidingWindowAndLinearScalingRoundTrip) {
  ModelSpec s = small_spec();
  s.sliding_window = 128;
  s.rope_scaling.type = RopeScalingType::Linear;
  s.rope_scaling.factor = 2.0;
  const GgufModel model(write(s, TensorType::F32, 5));
  EXPECT_EQ(model.spec().sliding_window, 128);
  EXPECT_EQ(model.spec().rope_scaling.type, RopeScalingType::Linear);
  EXPECT_DOUBLE_EQ(model.spec().rope_scaling.factor, 2.0);
}

TEST(SyntheticGguf, GivenVocabIsWrittenAsIs) {
  SyntheticVocab v;
  v.model = "gpt2";
  v.tokens = {"a", "b", "ab", "<|endoftext|>"};
  v.token_types = {1, 1, 1, 3};
  v.merges = {"a b"};
  v.bos_id = 3;
  v.eos_id = 3;
  v.unk_id.reset();
  v.chat_template = "{{ bos_token }}";
  ModelSpec s = small_spec();
  s.vocab_size = 32;
  const GgufModel model(write(s, TensorType::F32, 1, &v));
  const GgufFile& f = *model.gguf();
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens"), v.tokens);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.merges"), v.merges);
  EXPECT_FALSE(f.has("tokenizer.ggml.scores"));
  EXPECT_FALSE(f.has("tokenizer.ggml.unknown_token_id"));
  EXPECT_EQ(model.chat_template(), "{{ bos_token }}");
  EXPECT_EQ(model.spec().vocab_size, 32);
}

TEST(SyntheticGguf, BadRequestsAreUsageErrors) {
  ModelSpec s = small_spec();
  try {
    write(s, TensorType::Q4_K, 1);
    ADD_FAILURE() << "q4_K with dim 64 accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("dim 64 is not a multiple of the q4_K block (256)"));
  }
  s.n_kv_heads = 3;
  EXPECT_THROW(write(s, TensorType::F32, 1), UsageError);
  s = small_spec();
  s.rope_scaling = {RopeScalingType::Llama3, 8, 8192, 1.0, 4.0};
  EXPECT_THROW(write(s, TensorType::F32, 1), UsageError);
  SyntheticVocab too_big = default_synthetic_vocab(301);
  EXPECT_THROW(write(small_spec(), TensorType::F32, 1, &too_big), UsageError);
}

}  // namespace
}  // namespace kvscope
