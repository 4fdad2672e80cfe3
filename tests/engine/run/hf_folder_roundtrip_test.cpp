// The Hugging Face loading path on a real model: SmolLM2-135M-Instruct's GGUF written as a HF
// folder by the tests' own converter (support/hf_folder_from_gguf.h: dequantized weights as
// BF16 in two shards, Q/K rows in HF order, config.json, tokenizer.json and the tokenizer and
// generation configs) runs like the GGUF itself, both on the exact path (f32 activations).
//
// How close is close: the folder holds the GGUF's dequantized weights rounded to BF16 (8
// significant bits), and RoPE pairs its Q/K rows half-split where the GGUF pairs them
// adjacent, so the two compute the same model with different roundings. Measured on the
// three reference prompts, 12 free-running greedy steps each (36 steps): every greedy id the
// same, even at a 0.003-nat margin, and the top-5 log-probabilities at most 0.054 nats apart
// (median ~0.02). A shift of d moves a margin by at most 2d, so ids must agree where the
// GGUF's margin exceeds 0.3 and log-probabilities within 0.15 (~3x the measurement). A real
// fault is far outside that: Q/K rows left in the GGUF's order moved these log-probabilities
// by 0.18-0.82 nats. The sanitizer build is far slower per token, so the test checks two
// teacher-forced steps of one prompt, not the 36.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "cpu/cpu_ops.h"
#include "engine/run/reference_cases.h"
#include "model/synthetic_model.h"
#include "run/engine.h"
#include "support/hf_folder_from_gguf.h"
#include "support/test_data.h"
#include "text/byte_unicode.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSmolLm2 = "models/SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr const char* kReference = "reference/smollm2-greedy.json";
constexpr double kLogprobTolerance = 0.15;  // nats, each of the GGUF's top 5 at each step
constexpr double kMarginForIds = 0.3;       // greedy ids agree where the GGUF's margin exceeds it
constexpr std::size_t kForcedTokens = 1;    // reference tokens fed after the prompt

// The converted folder (270 MB), written once and removed when the test ends.
class ConvertedFolder {
 public:
  explicit ConvertedFolder(const std::string& gguf) : dir_(test::scratch_dir()) {
    test::write_hf_folder_from_gguf(gguf, dir_ / "SmolLM2-hf");
  }
  ~ConvertedFolder() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  ConvertedFolder(const ConvertedFolder&) = delete;
  ConvertedFolder& operator=(const ConvertedFolder&) = delete;
  std::string path() const { return (dir_ / "SmolLM2-hf").string(); }

 private:
  fs::path dir_;
};

EngineOptions exact_options() {
  EngineOptions o;
  o.backend = BackendChoice::Cpu;
  o.n_threads = 2;
  o.context_length = 64;
  o.q8_activations = false;
  return o;
}

// The log-probabilities after each of `tokens`, one row of vocab values per token.
std::vector<float> logprobs(Engine& engine, const std::vector<TokenId>& tokens) {
  std::vector<float> rows = engine.evaluate(tokens);
  const auto vocab = static_cast<std::size_t>(engine.spec().vocab_size);
  for (std::size_t p = 0; p < tokens.size(); ++p) {
    std::span<float> row(&rows[p * vocab], vocab);
    log_softmax(row, row);
  }
  return rows;
}

// The GGUF's 5 most likely ids in `row`, best first.
std::vector<TokenId> top5(std::span<const float> row) {
  std::vector<TokenId> ids(row.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<TokenId>(i);
  std::partial_sort(ids.begin(), ids.begin() + 5, ids.end(),
                    [&](TokenId a, TokenId b) { return row[a] > row[b]; });
  ids.resize(5);
  return ids;
}

TEST(HfFolderFromGguf, SpecAndPromptIdsAreTheGgufs) {
  KVSCOPE_REQUIRE_SHARED(model, kSmolLm2);
  KVSCOPE_REQUIRE_SHARED(reference, kReference);
  const ConvertedFolder folder(model);
  const Engine gguf(model, exact_options());
  const Engine hf(folder.path(), exact_options());
  const ModelSpec& a = gguf.spec();
  const ModelSpec& b = hf.spec();
  EXPECT_EQ(b.architecture, "llama");
  EXPECT_EQ(std::tie(b.n_layers, b.dim, b.n_heads, b.n_kv_heads, b.head_dim, b.ffn_dim,
                     b.vocab_size, b.context_length, b.tied_embeddings),
            std::tie(a.n_layers, a.dim, a.n_heads, a.n_kv_heads, a.head_dim, a.ffn_dim,
                     a.vocab_size, a.context_length, a.tied_embeddings));
  EXPECT_EQ(b.rope_theta, a.rope_theta);
  EXPECT_EQ(b.norm_eps, a.norm_eps);
  EXPECT_EQ(b.rope_pairing, RopePairing::HalfSplit);  // HF order, where the GGUF's is permuted
  for (const auto& c : test::load_reference_cases(reference)) {
    EXPECT_EQ(hf.tokenize(c.prompt, true), c.prompt_ids) << c.prompt;
    EXPECT_EQ(gguf.tokenize(c.prompt, true), c.prompt_ids) << c.prompt;
  }
  const std::vector<ChatMessage> chat = {{"user", "What is <|im_end|> for?"}};
  EXPECT_EQ(hf.tokenize_chat(chat), gguf.tokenize_chat(chat));
  EXPECT_EQ(hf.tokenizer().eos(), gguf.tokenizer().eos());
}

// The first reference prompt and llama.cpp's next tokens fed to both (teacher forcing), so
// each step compares the two on the same prefix: the greedy pick after it, and the
// log-probabilities of the GGUF's top 5.
TEST(HfFolderFromGguf, GreedyIdsAndLogprobsAreTheGgufsOnTheSamePrefix) {
  KVSCOPE_REQUIRE_SHARED(model, kSmolLm2);
  KVSCOPE_REQUIRE_SHARED(reference, kReference);
  const ConvertedFolder folder(model);
  Engine gguf(model, exact_options());
  Engine hf(folder.path(), exact_options());
  const test::ReferenceCase c = test::load_reference_cases(reference).front();
  std::vector<TokenId> tokens = c.prompt_ids;
  tokens.insert(tokens.end(), c.greedy_ids.begin(), c.greedy_ids.begin() + kForcedTokens);
  const std::vector<float> a = logprobs(gguf, tokens);
  const std::vector<float> b = logprobs(hf, tokens);
  const auto vocab = static_cast<std::size_t>(gguf.spec().vocab_size);
  double worst = 0;
  for (std::size_t p = c.prompt_ids.size() - 1; p < tokens.size(); ++p) {
    const std::span<const float> ga(&a[p * vocab], vocab);
    const std::span<const float> hb(&b[p * vocab], vocab);
    const auto top = top5(ga);
    const std::string step =
        "\"" + c.prompt + "\" step " + std::to_string(p + 1 - c.prompt_ids.size());
    for (const TokenId id : top) {
      const double d = std::abs(ga[id] - hb[id]);
      worst = std::max(worst, d);
      EXPECT_LE(d, kLogprobTolerance) << step << " token " << id;
    }
    const double margin = ga[top[0]] - ga[top[1]];
    const auto hf_best = std::max_element(hb.begin(), hb.end()) - hb.begin();
    if (margin > kMarginForIds) {
      EXPECT_EQ(hf_best, top[0]) << step << " (margin " << margin << ")";
    }
  }
  std::printf("HF folder vs GGUF: top-5 log-probabilities at most %.4f nats apart\n", worst);
  ::testing::Test::RecordProperty("max_logprob_diff", std::to_string(worst));
}

// A tiny random model's shape: 64 wide, 4 query heads of 32 over 2 KV heads, 320 tokens.
ModelSpec tiny_spec(const std::string& architecture, std::int64_t n_layers) {
  ModelSpec s;
  s.architecture = architecture;
  s.n_layers = n_layers;
  s.dim = 64;
  s.n_heads = 4;
  s.n_kv_heads = 2;
  s.head_dim = 32;
  s.rope_dim = 32;
  s.ffn_dim = 128;
  s.vocab_size = 320;
  s.context_length = 128;
  s.rope_theta = 1e6;
  s.norm_eps = 1e-6;
  s.tied_embeddings = true;
  return s;
}

// A byte-level BPE vocab (the tests' converter writes tokenizer.json for those): the 256 byte
// characters, a merge, an end-of-text token.
SyntheticVocab byte_level_vocab() {
  SyntheticVocab v;
  v.model = "gpt2";
  for (int b = 0; b < 256; ++b) {
    v.tokens.emplace_back(byte_to_unicode(static_cast<std::uint8_t>(b)));
    v.token_types.push_back(1);
  }
  v.tokens.emplace_back("ab");
  v.token_types.push_back(1);
  v.merges = {"a b"};
  v.tokens.emplace_back("<|endoftext|>");
  v.token_types.push_back(3);
  v.bos_id = v.eos_id = static_cast<std::int64_t>(v.tokens.size()) - 1;
  v.unk_id.reset();
  return v;
}

// max |logit of the GGUF - logit of the folder| over every position of a 12-token prompt
// (past a window of 6); `label` names what is compared in the output.
float max_logit_difference(Engine& gguf, Engine& hf, const char* label) {
  const std::vector<TokenId> tokens = {257, 40, 200, 7, 123, 250, 19, 64, 3, 99, 180, 31};
  const std::vector<float> a = gguf.evaluate(tokens);
  const std::vector<float> b = hf.evaluate(tokens);
  EXPECT_EQ(a.size(), b.size());
  float worst = 0.0f, range = 0.0f;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    worst = std::max(worst, std::abs(a[i] - b[i]));
    range = std::max(range, std::abs(a[i]));
  }
  std::printf("%s folder vs GGUF: max |dlogit| %.3g (max |logit| %.3g)\n", label, worst, range);
  ::testing::Test::RecordProperty(std::string(label) + " max |dlogit|", std::to_string(worst));
  return worst;
}

// Qwen 3 from a Hugging Face folder (Qwen3ForCausalLM: q_norm and k_norm, head_dim given, NeoX
// RoPE): a tiny random qwen3 GGUF with BF16 matrices and its folder hold the same matrices; the
// GGUF's F32 norm weights (about 1 +- 0.1) are BF16 in the folder, 3 significant digits, which
// moves these logits (about +-0.6) by 1.1e-2 at most. Norms swapped or left out move them
// by tenths.
TEST(HfFolderFromGguf, AQwen3FolderGivesItsGgufsLogits) {
  const ModelSpec s = tiny_spec("qwen3", 2);
  const SyntheticVocab v = byte_level_vocab();
  const fs::path dir = test::scratch_dir();
  const std::string gguf_path = (dir / "qwen3.gguf").string();
  write_synthetic_gguf(gguf_path, s, TensorType::BF16, 11, &v);
  test::write_hf_folder_from_gguf(gguf_path, dir / "qwen3-hf", 1);
  Engine gguf(gguf_path, exact_options());
  Engine hf((dir / "qwen3-hf").string(), exact_options());
  EXPECT_TRUE(hf.spec().qk_norm);
  EXPECT_EQ(hf.spec().head_dim, 32);
  EXPECT_LT(max_logit_difference(gguf, hf, "qwen3"), 3e-2f);
}

// Gemma 2 from a Hugging Face folder (Gemma2ForCausalLM): its four norms a layer stored as w
// where the GGUF holds 1 + w (the loader adds the 1 back), alternating windows from the config's
// layer_types, query_pre_attn_scalar, both soft-caps (set here where they bend these small
// values). The folder's norms are w = +-0.1 in BF16, closer than the qwen3 folder's 1 +- 0.1:
// the logits (about +-1.3) move by 1.8e-3 at most. Read as w instead of 1 + w, the norms would
// scale every sub-layer by a tenth.
TEST(HfFolderFromGguf, AGemma2FolderGivesItsGgufsLogits) {
  ModelSpec s = tiny_spec("gemma2", 4);
  s.sliding_window = 6;
  s.sliding_window_period = 2;
  s.attn_softcap = 1.0;
  s.final_softcap = 1.5;
  const SyntheticVocab v = byte_level_vocab();
  const fs::path dir = test::scratch_dir();
  const std::string gguf_path = (dir / "gemma2.gguf").string();
  write_synthetic_gguf(gguf_path, s, TensorType::BF16, 13, &v);
  test::write_hf_folder_from_gguf(gguf_path, dir / "gemma2-hf", 2);
  Engine gguf(gguf_path, exact_options());
  Engine hf((dir / "gemma2-hf").string(), exact_options());
  const ModelSpec& h = hf.spec();
  EXPECT_EQ(h.architecture, "gemma2");
  EXPECT_EQ(std::tie(h.sliding_window, h.sliding_window_period, h.attn_softcap, h.final_softcap),
            std::tie(s.sliding_window, s.sliding_window_period, s.attn_softcap, s.final_softcap));
  EXPECT_TRUE(h.post_norms);
  EXPECT_FALSE(h.qk_norm);
  EXPECT_DOUBLE_EQ(h.score_scale(), gguf.spec().score_scale());
  EXPECT_LT(max_logit_difference(gguf, hf, "gemma2"), 1e-2f);
}

// Gemma 3 from a Gemma3ForConditionalGeneration folder (as Google publishes the 4B and larger):
// config.json's text_config, the text model's tensors under language_model.model., q/k norms
// stored as w like the others: 3.1e-3 at most on logits of about +-2.5.
TEST(HfFolderFromGguf, AGemma3ConditionalGenerationFolderGivesItsGgufsLogits) {
  ModelSpec s = tiny_spec("gemma3", 7);  // layer 5 global, 0-4 and 6 slide
  s.sliding_window = 6;
  s.sliding_window_period = 6;
  s.rope_theta_local = 1e4;
  const SyntheticVocab v = byte_level_vocab();
  const fs::path dir = test::scratch_dir();
  const std::string gguf_path = (dir / "gemma3.gguf").string();
  write_synthetic_gguf(gguf_path, s, TensorType::BF16, 17, &v);
  test::write_hf_folder_from_gguf(gguf_path, dir / "gemma3-hf", 2, true);
  Engine gguf(gguf_path, exact_options());
  Engine hf((dir / "gemma3-hf").string(), exact_options());
  const ModelSpec& h = hf.spec();
  EXPECT_EQ(h.architecture, "gemma3");
  EXPECT_EQ(std::tie(h.sliding_window, h.sliding_window_period, h.rope_theta_local),
            std::tie(s.sliding_window, s.sliding_window_period, s.rope_theta_local));
  EXPECT_TRUE(h.qk_norm);
  EXPECT_EQ(h.attn_softcap, 0.0);
  EXPECT_LT(max_logit_difference(gguf, hf, "gemma3"), 1e-2f);
}

}  // namespace
}  // namespace kvscope
