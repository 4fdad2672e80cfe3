// GgufModel: tiny llama and qwen2 GGUFs written with GgufWriter (valid, and broken in one
// way each: a missing or misshapen tensor, a wrong block count, bad head counts), and the
// real stories260K model.
#include "model/gguf/gguf_model.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/model.h"
#include "model/synthetic_model.h"
#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A tiny model file whose every piece a test can change before writing it. F32 tensor k
// (in write order) holds k*1000 + i, so a view can be traced to its tensor and element.
struct TinyGguf {
  std::string arch = "llama";
  std::int64_t n_layers = 2, dim = 32, n_heads = 4, n_kv_heads = 2, ffn = 48, vocab = 40;
  std::int64_t head_dim = 8;  // written as key_length only when explicit_head_dim
  bool explicit_head_dim = false;
  bool tied = false;
  std::map<std::string, std::int64_t> meta_override;  // "block_count" -> 3, ...
  std::set<std::string> skip_meta;                    // "feed_forward_length", ...
  std::map<std::string, std::vector<std::int64_t>> dims_override;
  std::set<std::string> skip_tensor;
  std::map<std::string, TensorType> raw_type;  // written as zero bytes of that type
  std::function<void(GgufWriter&)> extra;

  void meta(GgufWriter& w, const std::string& field, std::int64_t value) const {
    if (skip_meta.count(field)) return;
    auto it = meta_override.find(field);
    w.set_i64(arch + "." + field, it == meta_override.end() ? value : it->second);
  }

  void tensor(GgufWriter& w, const std::string& name, std::vector<std::int64_t> dims) const {
    if (skip_tensor.count(name)) return;
    if (auto it = dims_override.find(name); it != dims_override.end()) dims = it->second;
    std::int64_t rows = 1;
    for (std::size_t i = 1; i < dims.size(); ++i) rows *= dims[i];
    if (auto it = raw_type.find(name); it != raw_type.end()) {
      const auto bytes = static_cast<std::size_t>(row_bytes(it->second, dims[0]) * rows);
      w.add_tensor(name, it->second, dims, std::vector<std::uint8_t>(bytes, 0));
      return;
    }
    const auto k = static_cast<float>(++count);
    std::vector<float> v(static_cast<std::size_t>(dims[0] * rows));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = k * 1000.0f + static_cast<float>(i);
    w.add_tensor_f32(name, TensorType::F32, dims, v);
  }

  std::string write() const {
    count = 0;
    GgufWriter w;
    w.set_string("general.architecture", arch);
    w.set_string("general.name", "tiny " + arch);
    meta(w, "block_count", n_layers);
    meta(w, "embedding_length", dim);
    meta(w, "attention.head_count", n_heads);
    meta(w, "attention.head_count_kv", n_kv_heads);
    if (explicit_head_dim) meta(w, "attention.key_length", head_dim);
    meta(w, "feed_forward_length", ffn);
    meta(w, "context_length", 256);
    w.set_f32(arch + ".rope.freq_base", 1000000.0f);
    w.set_f32(arch + ".attention.layer_norm_rms_epsilon", 1e-6f);
    if (extra) extra(w);
    const std::int64_t q = n_heads * head_dim, kv = n_kv_heads * head_dim;
    tensor(w, "token_embd.weight", {dim, vocab});
    for (std::int64_t i = 0; i < n_layers; ++i) {
      const auto p = "blk." + std::to_string(i) + ".";
      tensor(w, p + "attn_norm.weight", {dim});
      tensor(w, p + "attn_q.weight", {dim, q});
      tensor(w, p + "attn_k.weight", {dim, kv});
      tensor(w, p + "attn_v.weight", {dim, kv});
      if (arch == "qwen2") {
        tensor(w, p + "attn_q.bias", {q});
        tensor(w, p + "attn_k.bias", {kv});
        tensor(w, p + "attn_v.bias", {kv});
      }
      tensor(w, p + "attn_output.weight", {q, dim});
      tensor(w, p + "ffn_norm.weight", {dim});
      tensor(w, p + "ffn_gate.weight", {dim, ffn});
      tensor(w, p + "ffn_up.weight", {dim, ffn});
      tensor(w, p + "ffn_down.weight", {ffn, dim});
    }
    tensor(w, "output_norm.weight", {dim});
    if (!tied) tensor(w, "output.weight", {dim, vocab});
    const auto path = (test::scratch_dir() / (arch + ".gguf")).string();
    w.write(path);
    return path;
  }

  mutable int count = 0;
};

float at(const WeightView& w, std::int64_t r, std::int64_t c) {
  float v;
  std::memcpy(&v, static_cast<const std::uint8_t*>(w.row(r)) + 4 * c, 4);
  return v;
}

std::string load_error(const std::string& path) {
  try {
    GgufModel model(path);
    ADD_FAILURE() << "expected a ModelError loading " << path;
  } catch (const ModelError& e) {
    return e.what();
  }
  return {};
}

TEST(GgufModel, TinyLlamaSpecComesFromTheMetadata) {
  const GgufModel model(TinyGguf().write());
  const ModelSpec& s = model.spec();
  EXPECT_EQ(s.architecture, "llama");
  EXPECT_EQ(s.name, "tiny llama");
  EXPECT_EQ(s.n_layers, 2);
  EXPECT_EQ(s.dim, 32);
  EXPECT_EQ(s.n_heads, 4);
  EXPECT_EQ(s.n_kv_heads, 2);
  EXPECT_EQ(s.head_dim, 8);
  EXPECT_EQ(s.rope_dim, 8);
  EXPECT_EQ(s.ffn_dim, 48);
  EXPECT_EQ(s.vocab_size, 40);
  EXPECT_EQ(s.context_length, 256);
  EXPECT_DOUBLE_EQ(s.rope_theta, 1000000.0);
  EXPECT_NEAR(s.norm_eps, 1e-6, 1e-12);
  EXPECT_EQ(s.rope_pairing, RopePairing::Adjacent);
  EXPECT_EQ(s.rope_scaling.type, RopeScalingType::None);
  EXPECT_FALSE(s.qkv_bias);
  EXPECT_FALSE(s.tied_embeddings);
  EXPECT_EQ(model.format(), ModelFormat::Gguf);
  ASSERT_NE(model.gguf(), nullptr);
  EXPECT_FALSE(model.chat_template());
}

TEST(GgufModel, ViewsPointAtTheirTensorsWithRowsAndCols) {
  const GgufModel model(TinyGguf().write());
  const ModelWeights& w = model.weights();
  ASSERT_EQ(w.layers.size(), 2u);
  // Write order: token_embd (1), then per layer attn_norm, q, k, v, output, ffn_norm,
  // gate, up, down (2..10 for layer 0, 11..19 for layer 1), output_norm (20), output (21).
  EXPECT_EQ(w.token_embd.rows, 40);
  EXPECT_EQ(w.token_embd.cols, 32);
  EXPECT_EQ(at(w.token_embd, 39, 31), 1000.0f + 39 * 32 + 31);
  const LayerWeights& l1 = w.layers[1];
  EXPECT_EQ(l1.wk.rows, 16);
  EXPECT_EQ(l1.wk.cols, 32);
  EXPECT_EQ(l1.wk.row_bytes(), 32 * 4);
  EXPECT_EQ(at(l1.wk, 3, 2), 13000.0f + 3 * 32 + 2);
  EXPECT_EQ(l1.wo.rows, 32);
  EXPECT_EQ(l1.wo.cols, 32);
  EXPECT_EQ(l1.w_down.rows, 32);
  EXPECT_EQ(l1.w_down.cols, 48);
  EXPECT_EQ(at(l1.w_down, 1, 0), 19000.0f + 48);
  EXPECT_EQ(l1.ffn_norm.rows, 1);
  EXPECT_EQ(l1.ffn_norm.cols, 32);
  EXPECT_EQ(at(w.output_norm, 0, 5), 20005.0f);
  EXPECT_EQ(at(w.output, 1, 0), 21000.0f + 32);
  EXPECT_EQ(l1.w_up.name, "blk.1.ffn_up.weight");
  EXPECT_FALSE(l1.bq);
  // 21 f32 tensors, every one counted once.
  const std::uint64_t elems =
      2 * 40 * 32 + 32 + 2 * (32 + 32 * 32 + 2 * 16 * 32 + 32 * 32 + 32 + 3 * 48 * 32);
  EXPECT_EQ(model.weight_bytes(), elems * 4);
}

TEST(GgufModel, LoadModelRecognisesTheGgufMagic) {
  const auto model = load_model(TinyGguf().write());
  EXPECT_EQ(model->format(), ModelFormat::Gguf);
  EXPECT_NE(model->gguf(), nullptr);
  EXPECT_EQ(model->spec().n_layers, 2);
}

TEST(GgufModel, TinyQwen2HasBiasesAndHalfSplitRope) {
  TinyGguf t;
  t.arch = "qwen2";
  const GgufModel model(t.write());
  EXPECT_EQ(model.spec().architecture, "qwen2");
  EXPECT_TRUE(model.spec().qkv_bias);
  EXPECT_EQ(model.spec().rope_pairing, RopePairing::HalfSplit);
  const LayerWeights& l0 = model.weights().layers[0];
  ASSERT_TRUE(l0.bq && l0.bk && l0.bv);
  EXPECT_EQ(l0.bq.cols, 32);
  EXPECT_EQ(l0.bk.cols, 16);
  EXPECT_EQ(l0.bv.name, "blk.0.attn_v.bias");
}

TEST(GgufModel, Qwen2WithoutABiasNamesIt) {
  TinyGguf t;
  t.arch = "qwen2";
  t.skip_tensor = {"blk.1.attn_k.bias"};
  EXPECT_THAT(load_error(t.write()), HasSubstr("tensor blk.1.attn_k.bias: not found"));
}

TEST(GgufModel, MissingOutputMeansTiedEmbeddings) {
  TinyGguf t;
  t.tied = true;
  const GgufModel model(t.write());
  EXPECT_TRUE(model.spec().tied_embeddings);
  EXPECT_EQ(model.weights().output.data, model.weights().token_embd.data);
}

TEST(GgufModel, ExplicitKeyLengthLetsHeadsTimesHeadDimDifferFromDim) {
  TinyGguf t;
  t.head_dim = 16;
  t.explicit_head_dim = true;
  const GgufModel model(t.write());
  EXPECT_EQ(model.spec().head_dim, 16);
  EXPECT_EQ(model.spec().q_dim(), 64);
  EXPECT_EQ(model.weights().layers[0].wo.cols, 64);
}

TEST(GgufModel, RopeScalingAndExtraTensorsAreRead) {
  TinyGguf t;
  t.extra = [](GgufWriter& w) {
    w.set_string("llama.rope.scaling.type", "linear");
    w.set_f32("llama.rope.scaling.factor", 4.0f);
    w.set_u32("llama.rope.scaling.original_context_length", 64);
    w.set_string("tokenizer.chat_template", "{% for m in messages %}{% endfor %}");
    // llama3-style precomputed frequencies: tolerated, not used yet.
    w.add_tensor_f32("rope_freqs.weight", TensorType::F32, {4}, {1, 1, 1, 1});
  };
  const GgufModel model(t.write());
  EXPECT_EQ(model.spec().rope_scaling.type, RopeScalingType::Linear);
  EXPECT_DOUBLE_EQ(model.spec().rope_scaling.factor, 4.0);
  EXPECT_EQ(model.spec().rope_scaling.original_context, 64);
  EXPECT_EQ(model.chat_template(), "{% for m in messages %}{% endfor %}");
}

TEST(GgufModel, MissingTensorIsNamed) {
  TinyGguf t;
  t.skip_tensor = {"blk.1.ffn_up.weight"};
  EXPECT_THAT(load_error(t.write()), HasSubstr("tensor blk.1.ffn_up.weight: not found"));
}

TEST(GgufModel, WrongShapeNamesTheTensorAndBothShapes) {
  TinyGguf t;
  t.dims_override["blk.1.attn_k.weight"] = {32, 32};
  EXPECT_THAT(
      load_error(t.write()),
      HasSubstr("tensor blk.1.attn_k.weight: shape [32, 32] but the config needs [32, 16]"));
}

TEST(GgufModel, BlockCountAboveTheTensorsNamesTheMissingLayer) {
  TinyGguf t;
  t.meta_override["block_count"] = 3;
  EXPECT_THAT(load_error(t.write()),
              HasSubstr("llama.block_count = 3 but blk.2.* tensors are missing"));
}

TEST(GgufModel, BlockCountBelowTheTensorsIsRejected) {
  TinyGguf t;
  t.meta_override["block_count"] = 1;
  EXPECT_THAT(load_error(t.write()),
              HasSubstr("llama.block_count = 1 but the file has tensor blk.1."));
}

TEST(GgufModel, KvHeadsNotDividingHeadsIsRejected) {
  TinyGguf t;
  t.meta_override["attention.head_count_kv"] = 3;
  const auto msg = load_error(t.write());
  EXPECT_THAT(msg, HasSubstr("n_heads 4 is not a multiple of n_kv_heads 3"));
}

TEST(GgufModel, HeadsNotDividingDimWithoutKeyLengthIsRejected) {
  TinyGguf t;
  t.meta_override["attention.head_count"] = 5;
  t.meta_override["attention.head_count_kv"] = 5;
  EXPECT_THAT(load_error(t.write()), HasSubstr("llama.embedding_length = 32 is not a multiple of "
                                               "llama.attention.head_count = 5"));
}

TEST(GgufModel, ZeroOrNegativeSizesNameTheKey) {
  TinyGguf t;
  t.meta_override["attention.head_count"] = 0;
  EXPECT_THAT(load_error(t.write()), HasSubstr("llama.attention.head_count = 0: must be positive"));
  t.meta_override = {{"block_count", -2}};
  EXPECT_THAT(load_error(t.write()), HasSubstr("llama.block_count = -2"));
}

TEST(GgufModel, MissingMetadataKeyIsNamed) {
  TinyGguf t;
  t.skip_meta = {"feed_forward_length"};
  EXPECT_THAT(load_error(t.write()), HasSubstr("llama.feed_forward_length"));
}

// gemma2 as llama.cpp reads it (src/models/gemma2.cpp): every other layer slides, one RoPE, no
// q/k norms, post-norms, a GELU gate, embeddings times sqrt(dim), scores times 1/sqrt(head_dim),
// and the soft-caps the file gives.
TEST(GgufModel, Gemma2IsReadAsLlamaCppReadsIt) {
  ModelSpec s;
  s.architecture = "gemma2";
  s.n_layers = 4;
  s.dim = 64;
  s.n_heads = 4;
  s.n_kv_heads = 2;
  s.head_dim = 32;
  s.rope_dim = 32;
  s.ffn_dim = 128;
  s.vocab_size = 300;
  s.context_length = 256;
  s.sliding_window = 6;
  s.sliding_window_period = 2;
  s.attn_softcap = 20.0;
  s.final_softcap = 10.0;
  s.tied_embeddings = true;
  const std::string path = (test::scratch_dir() / "gemma2.gguf").string();
  write_synthetic_gguf(path, s, TensorType::F32, 3);
  const GgufModel model(path);
  const ModelSpec& m = model.spec();
  EXPECT_EQ(m.architecture, "gemma2");
  EXPECT_EQ(m.sliding_window, 6);
  EXPECT_TRUE(m.layer_slides(0));
  EXPECT_FALSE(m.layer_slides(1));
  EXPECT_TRUE(m.layer_slides(2));
  EXPECT_FALSE(m.layer_slides(3));
  EXPECT_EQ(m.rope_theta_local, 0.0);
  EXPECT_FALSE(m.qk_norm);
  EXPECT_TRUE(m.post_norms);
  EXPECT_EQ(m.ffn_activation, FfnActivation::GeluTanh);
  EXPECT_DOUBLE_EQ(m.embedding_scale, 8.0);
  EXPECT_DOUBLE_EQ(m.score_scale(), 1.0 / std::sqrt(32.0));
  EXPECT_DOUBLE_EQ(m.attn_softcap, 20.0);
  EXPECT_DOUBLE_EQ(m.final_softcap, 10.0);
  const LayerWeights& l3 = model.weights().layers[3];
  EXPECT_EQ(l3.post_attn_norm.name, "blk.3.post_attention_norm.weight");
  EXPECT_EQ(l3.post_ffn_norm.name, "blk.3.post_ffw_norm.weight");
  EXPECT_FALSE(l3.q_norm);
}

// Without the keys, llama.cpp's defaults: a window of 4096, scores capped at 50, logits at 30.
TEST(GgufModel, Gemma2WithoutItsKeysTakesLlamaCppsDefaults) {
  TinyGguf t;
  t.arch = "gemma2";
  const GgufFile f(t.write());
  const ModelSpec s = gguf_model_spec(f);
  EXPECT_EQ(s.sliding_window, 4096);
  EXPECT_EQ(s.sliding_window_period, 2);
  EXPECT_DOUBLE_EQ(s.attn_softcap, 50.0);
  EXPECT_DOUBLE_EQ(s.final_softcap, 30.0);
}

TEST(GgufModel, UnsupportedArchitectureIsRejected) {
  TinyGguf t;
  t.arch = "gpt2";
  EXPECT_THAT(load_error(t.write()), HasSubstr("general.architecture 'gpt2' is not supported"));
}

// Text from the file in an error is a short prefix without its control bytes: an architecture
// or a 30 KB rope scaling type starting with an escape sequence (clear the screen) used to be
// printed whole, escape and all.
TEST(GgufModel, HostileTextInAnErrorIsAShortPrintablePrefix) {
  TinyGguf arch;
  arch.arch = "\x1b[2J" + std::string(200, 'a');  // also the file's name: kept under 255 bytes
  TinyGguf rope;
  rope.extra = [](GgufWriter& w) {
    w.set_string("llama.rope.scaling.type", "\x1b[2J" + std::string(30000, 'a'));
  };
  const std::string arch_error = load_error(arch.write());
  const std::string rope_error = load_error(rope.write());
  EXPECT_THAT(arch_error, HasSubstr("(204 bytes)"));
  EXPECT_THAT(rope_error, HasSubstr("(30004 bytes)"));
  for (const std::string& e : {arch_error, rope_error}) {
    EXPECT_LT(e.size(), 800u) << e.substr(0, 800);
    EXPECT_THAT(e, Not(HasSubstr("'\x1b")));  // (the arch's file name holds one)
    EXPECT_THAT(e, HasSubstr("'\\x1b[2Jaaa"));
  }
}

TEST(GgufModel, UnsupportedTensorTypeNamesTensorAndType) {
  TinyGguf t;
  t.raw_type["blk.0.attn_q.weight"] = TensorType::Q8_1;
  EXPECT_THAT(load_error(t.write()),
              HasSubstr("tensor blk.0.attn_q.weight: type q8_1 is not supported"));
}

TEST(GgufModel, MoreTokensThanEmbeddingRowsIsRejected) {
  TinyGguf t;
  t.extra = [](GgufWriter& w) {
    w.set_string_array("tokenizer.ggml.tokens", std::vector<std::string>(41, "x"));
  };
  EXPECT_THAT(load_error(t.write()),
              HasSubstr("tokenizer.ggml.tokens has 41 tokens but token_embd.weight has only 40"));
}

TEST(GgufModel, RealStories260KHasTheKnownShape) {
  KVSCOPE_REQUIRE_SHARED(path, "models/stories260K.gguf");
  const auto model = load_model(path);
  const ModelSpec& s = model->spec();
  EXPECT_EQ(s.architecture, "llama");
  EXPECT_EQ(s.n_layers, 5);
  EXPECT_EQ(s.dim, 64);
  EXPECT_EQ(s.n_heads, 8);
  EXPECT_EQ(s.n_kv_heads, 4);
  EXPECT_EQ(s.head_dim, 8);
  EXPECT_EQ(s.ffn_dim, 172);
  EXPECT_EQ(s.vocab_size, 512);
  EXPECT_EQ(s.context_length, 2048);
  EXPECT_FALSE(s.tied_embeddings);
  EXPECT_EQ(s.rope_pairing, RopePairing::Adjacent);
  ASSERT_EQ(model->weights().layers.size(), 5u);
  EXPECT_EQ(model->weights().layers[4].wk.rows, 32);
  EXPECT_EQ(model->weights().output.rows, 512);
  EXPECT_NE(model->weights().output.data, model->weights().token_embd.data);
  EXPECT_EQ(model->weights().token_embd.type, TensorType::F32);
}

}  // namespace
}  // namespace kvscope
