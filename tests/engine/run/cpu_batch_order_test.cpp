// CpuBackendOptions::llama_cpp_batch_order: on, a prompt of 2+ tokens sums its projections
// in llama.cpp's batch order; off, every row sums as a decode step does. The choice is the
// CPU backend's: SequenceChunk only says where the request's prompt ends.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/model.h"
#include "model/synthetic_model.h"
#include "plan/kv_footprint.h"
#include "run/cpu_backend.h"
#include "support/engine_fixture.h"
#include "support/generation_fixtures.h"

namespace kvscope {
namespace {

constexpr std::int64_t kVocab = 64;

// F32 weights: llama.cpp's batch runs llamafile's sgemm dot, a decode step ggml's f32 dot
// (cpu/ggml_compat.h). The logits [vocab] of the last of six tokens run as one chunk whose
// request's prompt is n_prompt tokens long.
std::vector<float> last_logits(const Model& model, bool batch_order, std::int64_t n_prompt) {
  CpuBackendOptions options;
  options.n_threads = 1;
  options.context_length = 128;
  options.llama_cpp_batch_order = batch_order;
  CpuBackend backend(model, options);
  KvCacheConfig config = default_kv_config(model.spec(), KvDtype::F16, KvDtype::F16, 16);
  config.max_context = 128;
  config.n_blocks = 4;
  KvCacheManager kv(config);
  kv.add_sequence(1);
  kv.grow(1, 6);
  const std::vector<TokenId> tokens = {1, 7, 30, 2, 55, 12};
  const SequenceChunk chunk{1, tokens, 0, false, n_prompt};
  std::vector<float> logits;
  backend.forward({&chunk, 1}, kv, logits);
  return logits;
}

TEST(CpuBatchOrder, OffAPromptSumsAsDecodeStepsDoOnItsBatchOrder) {
  const std::string path = (test::scratch_dir() / "batch-order.gguf").string();
  write_synthetic_gguf(path, test::tiny_llama_spec("batch-order", kVocab), TensorType::F32, 11);
  const auto model = load_model(path);

  const std::vector<float> decode_order = last_logits(*model, true, 0);  // no prompt here
  const std::vector<float> batch_order = last_logits(*model, true, 6);
  // The two orders round differently on this model, or the rest would prove nothing.
  ASSERT_NE(batch_order, decode_order);
  EXPECT_EQ(last_logits(*model, false, 6), decode_order);
  // A chunk starting past the prompt (generated tokens) is a decode step either way.
  EXPECT_EQ(last_logits(*model, true, 1), decode_order);
}

}  // namespace
}  // namespace kvscope
