// The whole CUDA decoder against the CPU one: on the real stories260K model the greedy ids
// of every reference prompt must be llama.cpp's (as the CPU decoder's are), and on random
// models with f16 / q8_0 / q4_0 weights the logits of a prompt must agree. Without a GPU,
// make_cuda_backend must say why and the engine must fall back to the CPU. Decode steps run
// as CUDA graphs give the same logits, bit for bit, as the eager launches.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "backend/cuda_backend.h"
#include "backend/cuda_factory.h"
#include "kernel_test_support.h"
#include "model/model.h"
#include "model/synthetic_model.h"
#include "plan/cuda_workspace.h"
#include "plan/kv_footprint.h"
#include "plan/memory_model.h"
#include "run/engine.h"
#include "run/greedy.h"
#include "support/test_data.h"
#include "util/error.h"
#include "workspace_test_support.h"

namespace kvscope {
namespace {

constexpr std::int64_t kDefaultGemm = CudaBackendOptions{}.gemm_min_tokens;

// gemm_min_tokens 0: every projection through the matvec kernels (closest to the CPU);
// the default sends prompt chunks of 8 or more tokens through cuBLAS. q8_activations off:
// the f32 matvec kernels, for exact comparisons with the CPU.
EngineOptions cuda_options(bool f32_as_f16, std::int64_t block_size = 16,
                           std::int64_t gemm_min_tokens = kDefaultGemm,
                           bool q8_activations = false) {
  EngineOptions o;
  o.backend = BackendChoice::Cuda;
  o.n_threads = 1;
  o.block_size = block_size;
  o.context_length = 512;
  CudaBackendOptions c;
  c.f32_weights_as_f16 = f32_as_f16;
  c.gemm_min_tokens = gemm_min_tokens;
  c.q8_activations = q8_activations;
  o.cuda_factory = cuda_backend_factory(c);
  return o;
}

TEST(CudaBackend, WithoutADeviceTheFactorySaysWhyAndAutoFallsBackToTheCpu) {
  // the emulation reports no device while this is set, as a machine without a GPU does (the
  // real runtime ignores it)
  const test::ScopedEnv no_device("KVSCOPE_EMU_NO_DEVICE", "1");
  if (probe_cuda_device().available) GTEST_SKIP() << "a CUDA device is present";
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  EngineOptions o = cuda_options(false);
  o.backend = BackendChoice::Auto;
  Engine engine(model, o);
  EXPECT_NE(engine.backend_note().find("CUDA unavailable"), std::string::npos)
      << engine.backend_note();
  EXPECT_TRUE(engine.backend().uses_host_kv_storage());
  o.backend = BackendChoice::Cuda;
  EXPECT_THROW(Engine(model, o), UsageError);
}

TEST(CudaBackend, StoriesGreedyIdsMatchLlamaCppForEveryReferencePrompt) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  KVSCOPE_REQUIRE_SHARED(reference, "reference/stories260K-greedy.json");
  std::ifstream in(reference);
  const auto j = nlohmann::json::parse(in);
  // (gemm_min_tokens, block size); gemm 1: every prompt chunk through cuBLAS, as a long
  // prompt runs. Under the emulation two of the four, each setting once.
  using Config = std::vector<std::pair<std::int64_t, std::int64_t>>;
  const Config configs =
      test::device_or_emulated(Config{{0, 1}, {0, 16}, {1, 1}, {1, 16}}, Config{{0, 16}, {1, 1}});
  for (const auto& [gemm, block_size] : configs) {
    Engine engine(model, cuda_options(false, block_size, gemm));
    ASSERT_FALSE(engine.backend().uses_host_kv_storage()) << engine.backend_note();
    for (const auto& c : j.at("cases")) {
      GenerationRequest r;
      r.prompt = c.at("prompt_ids").get<std::vector<TokenId>>();
      r.max_tokens = 64;
      r.sampling.temperature = 0;
      const RequestResult got = engine.generate(r);
      EXPECT_EQ(got.generated, c.at("greedy_ids").get<std::vector<TokenId>>())
          << "block size " << block_size << ", gemm_min_tokens " << gemm << ", prompt "
          << c.at("prompt").get<std::string>();
    }
  }
}

class CudaRandomModelTest : public ::testing::TestWithParam<TensorType> {};

TEST_P(CudaRandomModelTest, PromptLogitsAgreeWithTheCpuDecoder) {
  KVSCOPE_REQUIRE_CUDA();
  const ModelSpec spec = test::random_llama_spec("cuda-random", {3, 8, 2, 512, 320, 512});
  const std::string path = (test::scratch_dir() / "random.gguf").string();
  write_synthetic_gguf(path, spec, GetParam(), 11);
  std::vector<TokenId> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back(1 + (i * 37) % 300);

  EngineOptions cpu = cuda_options(false);
  cpu.backend = BackendChoice::Cpu;
  cpu.q8_activations = false;  // the float reference
  const std::vector<float> want = Engine(path, cpu).evaluate(prompt);
  const std::string type(tensor_type_name(GetParam()));
  // matvec kernels: f32 activations, only the summation order differs from the CPU
  test::expect_close(Engine(path, cuda_options(false, 16, 0)).evaluate(prompt), want, 2e-3f, 1e-2f,
                     "logits (matvec), weights " + type);
  // cuBLAS: the activations rounded to fp16 (relative 2^-11) before every projection
  test::expect_close(Engine(path, cuda_options(false, 16, 1)).evaluate(prompt), want, 5e-3f, 2e-2f,
                     "logits (cuBLAS), weights " + type);
  // 8-bit activation codes (the default for quantized weights below gemm_min_tokens)
  test::expect_q8_logits_close(Engine(path, cuda_options(false, 16, 0, true)).evaluate(prompt),
                               want, static_cast<std::size_t>(spec.vocab_size),
                               "logits (8-bit activations), weights " + type);
}

INSTANTIATE_TEST_SUITE_P(WeightTypes, CudaRandomModelTest,
                         ::testing::Values(TensorType::F32, TensorType::F16, TensorType::Q8_0,
                                           TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,
                                           TensorType::Q5_1, TensorType::Q4_K, TensorType::Q5_K,
                                           TensorType::Q6_K),
                         [](const auto& p) { return std::string(tensor_type_name(p.param)); });

// --- Greedy picks on the device ----------------------------------------------------------

// Two backends decode the same three sequences: A returns logits and the host picks
// (greedy_pick), B alternates forward_greedy (argmax on the device) and forward, so its
// greedy and full steps share decode graphs. B's picks must be A's, and B's logits A's bits.
TEST(CudaBackend, DevicePicksAreTheHostPicksOfTheSameLogits) {
  KVSCOPE_REQUIRE_CUDA();
  const ModelSpec spec = test::random_llama_spec("cuda-greedy", {2, 8, 2, 256, 3000, 512});
  const std::string path = (test::scratch_dir() / "greedy-random.gguf").string();
  write_synthetic_gguf(path, spec, TensorType::Q8_0, 21);
  const std::unique_ptr<Model> model = load_model(path);
  KvCacheConfig c = default_kv_config(spec, KvDtype::Int8, KvDtype::F16, 16);
  c.max_context = 512;
  c.n_blocks = 100;
  c.host_storage = false;
  CudaBackendOptions o;
  o.context_length = c.max_context;
  std::string why;
  const std::unique_ptr<Backend> a = make_cuda_backend(*model, o, &why);
  const std::unique_ptr<Backend> b = make_cuda_backend(*model, o, &why);
  ASSERT_TRUE(a && b) << why;
  KvCacheManager kv_a(c), kv_b(c);
  const std::vector<std::vector<TokenId>> prompts = {{1, 5, 9, 200}, {7}, {3, 2999, 4, 4, 4}};
  std::vector<std::vector<TokenId>> next(prompts.size());
  std::vector<float> logits_a, logits_b;
  std::vector<TokenId> picks;
  const auto vocab = static_cast<std::size_t>(spec.vocab_size);
  const int steps = test::device_or_emulated(120, 40);
  for (int step = 0; step < steps; ++step) {
    std::vector<SequenceChunk> chunks;
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      const auto seq = static_cast<SeqId>(i);
      if (step == 0) {
        for (KvCacheManager* kv : {&kv_a, &kv_b}) kv->add_sequence(seq);
      }
      const std::span<const TokenId> in = step == 0 ? prompts[i] : next[i];
      const std::int64_t pos = kv_a.n_tokens(seq);
      for (KvCacheManager* kv : {&kv_a, &kv_b}) kv->grow(seq, static_cast<std::int64_t>(in.size()));
      chunks.push_back({seq, in, pos, false});
    }
    a->forward(chunks, kv_a, logits_a);
    ASSERT_EQ(logits_a.size(), chunks.size() * vocab);
    if (step % 2 == 0) {
      b->forward_greedy(chunks, kv_b, picks);
    } else {
      b->forward(chunks, kv_b, logits_b);
      ASSERT_EQ(std::memcmp(logits_a.data(), logits_b.data(), logits_a.size() * sizeof(float)), 0)
          << "step " << step;
      picks.clear();
      for (std::size_t r = 0; r < chunks.size(); ++r) {
        picks.push_back(greedy_pick(std::span<const float>(logits_b).subspan(r * vocab, vocab)));
      }
    }
    ASSERT_EQ(picks.size(), chunks.size());
    for (std::size_t r = 0; r < chunks.size(); ++r) {
      const TokenId want = greedy_pick(std::span<const float>(logits_a).subspan(r * vocab, vocab));
      ASSERT_EQ(picks[r], want) << "step " << step << ", row " << r;
      ASSERT_GE(want, 0);
      next[r] = {want};
    }
  }
  const CudaGraphReport report = dynamic_cast<const CudaBackend&>(*b).graph_report();
  if (report.enabled) {
    EXPECT_GT(report.graph_steps, report.eager_steps);
  }
}

// --- CUDA graphs: decode steps captured and replayed ------------------------------------

// One greedy decode straight through the backend: each prompt as one chunk, then decode steps
// of every live sequence together, sequence i leaving after steps[i] steps. Every step's
// logits are kept.
struct DecodeRun {
  std::vector<std::vector<float>> logits;  // [forward calls][n_rows * vocab]
  CudaGraphReport report;
  std::string name;
};

DecodeRun greedy_decode(const Model& model, const KvCacheConfig& config, bool graphs,
                        const std::vector<std::vector<TokenId>>& prompts,
                        const std::vector<int>& steps) {
  CudaBackendOptions o;
  o.context_length = config.max_context;
  o.f32_weights_as_f16 = false;
  o.cuda_graphs = graphs;
  std::string why;
  std::unique_ptr<Backend> backend = make_cuda_backend(model, o, &why);
  if (!backend) {
    ADD_FAILURE() << "no CUDA backend: " << why;
    return {};
  }
  KvCacheManager kv(config);
  const auto vocab = static_cast<std::size_t>(model.spec().vocab_size);
  DecodeRun run;
  std::vector<float> logits;
  std::vector<std::vector<TokenId>> next(prompts.size());  // each sequence's one-token chunk
  auto argmax = [&](std::size_t row) {
    const auto first = logits.begin() + static_cast<std::ptrdiff_t>(row * vocab);
    return static_cast<TokenId>(
        std::max_element(first, first + static_cast<std::ptrdiff_t>(vocab)) - first);
  };
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    const auto seq = static_cast<SeqId>(i);
    kv.add_sequence(seq);
    kv.grow(seq, static_cast<std::int64_t>(prompts[i].size()));
    const SequenceChunk chunk{seq, prompts[i], 0, false};
    backend->forward({&chunk, 1}, kv, logits);
    run.logits.push_back(logits);
    next[i] = {argmax(0)};
  }
  for (int step = 0; step < *std::max_element(steps.begin(), steps.end()); ++step) {
    std::vector<SequenceChunk> chunks;
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      const auto seq = static_cast<SeqId>(i);
      if (step > steps[i]) continue;
      if (step == steps[i]) {
        kv.free_sequence(seq);  // the batch shrinks: a new step shape
        continue;
      }
      const std::int64_t pos = kv.n_tokens(seq);
      kv.grow(seq, 1);
      chunks.push_back({seq, next[i], pos, false});
    }
    backend->forward(chunks, kv, logits);
    run.logits.push_back(logits);
    for (std::size_t r = 0; r < chunks.size(); ++r) {
      next[static_cast<std::size_t>(chunks[r].seq)] = {argmax(r)};
    }
  }
  run.report = dynamic_cast<const CudaBackend&>(*backend).graph_report();
  run.name = backend->name();
  return run;
}

// Decodes with graphs off and on and expects the same logits, bit for bit, at every step,
// and that the graphs were used (captured more than once as the step's key changed).
// A cache of the model's KV shape held on the device (no host storage), as greedy_decode
// hands a CudaBackend: the groups, block size, context and pool given.
KvCacheConfig device_cache(const ModelSpec& spec, std::vector<LayerGroupConfig> groups,
                           std::int64_t block_size, std::int64_t max_context,
                           std::int64_t n_blocks) {
  KvCacheConfig c;
  c.groups = std::move(groups);
  c.n_kv_heads = spec.n_kv_heads;
  c.head_dim = spec.head_dim;
  c.block_size = block_size;
  c.max_context = max_context;
  c.n_blocks = n_blocks;
  c.host_storage = false;
  return c;
}

void expect_graphs_change_no_bit(const Model& model, const KvCacheConfig& config,
                                 const std::vector<std::vector<TokenId>>& prompts,
                                 const std::vector<int>& steps) {
  const DecodeRun eager = greedy_decode(model, config, false, prompts, steps);
  const DecodeRun graphed = greedy_decode(model, config, true, prompts, steps);
  if (graphed.report.off_reason.starts_with("turned off by KVSCOPE_CUDA_GRAPHS")) {
    GTEST_SKIP() << graphed.report.off_reason;
  }
  ASSERT_EQ(eager.logits.size(), graphed.logits.size());
  for (std::size_t i = 0; i < eager.logits.size(); ++i) {
    const auto& a = eager.logits[i];
    const auto& b = graphed.logits[i];
    ASSERT_EQ(a.size(), b.size()) << "forward call " << i;
    ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
        << "logits of forward call " << i << " differ with CUDA graphs";
  }
  EXPECT_FALSE(eager.report.enabled);
  EXPECT_EQ(eager.report.off_reason, "turned off by the cuda_graphs option");
  EXPECT_NE(eager.name.find("CUDA graphs off"), std::string::npos) << eager.name;
  EXPECT_EQ(eager.report.graph_steps, 0);
  const CudaGraphReport& r = graphed.report;
  EXPECT_TRUE(r.enabled) << r.off_reason;
  EXPECT_GT(r.graph_steps, r.eager_steps) << "most decode steps replay a graph";
  EXPECT_GE(r.captures, 3) << "the key changes: block capacity, split count, batch size";
  EXPECT_GE(r.instantiations, 2) << "one split to several adds the merge kernel";
  EXPECT_EQ(r.captures, r.updates + r.instantiations);
}

TEST(CudaGraphs, StoriesGreedyDecodeLogitsAreBitIdenticalWithAndWithoutGraphs) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(path, "models/stories260K.gguf");
  const std::unique_ptr<Model> model = load_model(path);
  const ModelSpec& spec = model->spec();
  // a block boundary every 4 steps
  const KvCacheConfig c =
      device_cache(spec, uniform_layer_groups(spec.n_layers, KvDtype::F16), 4, 1200, 400);
  // from 128 keys on the attention split count grows every 64 keys (attention_splits), each
  // change a new graph key (to 17 splits on a GPU, to 3 under the emulation); the second
  // sequence leaving changes the batch from 2 tokens to 1
  expect_graphs_change_no_bit(*model, c, {{1, 403, 407, 261, 378}, {1, 66}},
                              test::device_or_emulated(std::vector<int>{1150, 150}, {200, 40}));
}

TEST(CudaGraphs, RandomModelMixedKvGroupsDecodeIsBitIdenticalWithAndWithoutGraphs) {
  KVSCOPE_REQUIRE_CUDA();
  const ModelSpec spec = test::random_llama_spec("cuda-graph-random", {3, 4, 2, 256, 200, 2048});
  const std::string path = (test::scratch_dir() / "graph-random.gguf").string();
  write_synthetic_gguf(path, spec, TensorType::Q8_0, 5);
  const std::unique_ptr<Model> model = load_model(path);
  // two layer groups: offset-int4 keys over the full context, and a 300-token fp16 window
  const KvCacheConfig c = device_cache(
      spec, {{{0, 2}, KvDtype::Int4, KvDtype::Int8, 0}, {{1}, KvDtype::F16, KvDtype::F16, 300}}, 16,
      1200, 200);
  std::vector<TokenId> long_prompt;
  for (int i = 0; i < 40; ++i) long_prompt.push_back(1 + (i * 37) % 190);
  // the first sequence's keys pass the window's 300 either way
  expect_graphs_change_no_bit(
      *model, c, {long_prompt, {3, 4, 5, 6, 7, 8, 9}, {9}},
      test::device_or_emulated(std::vector<int>{1100, 300, 20}, {320, 60, 10}));
}

// The exact tail on CUDA (kv/exact_tail.h): off by default (the fast kernel does not read
// it); asked for, the append kernel writes the fp16 copies and the generic kernel reads
// them, so an int4 cache's logits follow the CPU's, which reads its copies too; decode with
// its copies moving block to block keeps its bits with and without graphs.
TEST(CudaBackend, Int4WithTheExactTailAgreesWithTheCpuAndKeepsItsBitsUnderGraphs) {
  KVSCOPE_REQUIRE_CUDA();
  const ModelSpec spec = test::random_llama_spec("cuda-tail-random", {3, 8, 2, 512, 320, 512});
  const std::string path = (test::scratch_dir() / "tail-random.gguf").string();
  write_synthetic_gguf(path, spec, TensorType::F32, 13);
  std::vector<TokenId> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back(1 + (i * 37) % 300);
  const auto int4 = [](EngineOptions o, std::int64_t tail) {
    o.k_dtype = o.v_dtype = KvDtype::Int4;
    o.kv_exact_tail_blocks = tail;
    return o;
  };
  EXPECT_EQ(Engine(path, int4(cuda_options(false, 16, 0), -1)).kv_cache().exact_tail(0), nullptr);
  EngineOptions cpu = int4(cuda_options(false), 2);
  cpu.backend = BackendChoice::Cpu;
  cpu.q8_activations = false;
  const std::vector<float> want = Engine(path, cpu).evaluate(prompt);
  Engine gpu(path, int4(cuda_options(false, 16, 0), 2));
  ASSERT_NE(gpu.kv_cache().exact_tail(0), nullptr);
  test::expect_close(gpu.evaluate(prompt), want, 2e-3f, 1e-2f, "int4 + exact tail logits");

  const std::unique_ptr<Model> model = load_model(path);
  // the copies move every 4 steps; past 128 keys the attention splits
  KvCacheConfig c =
      device_cache(spec, uniform_layer_groups(spec.n_layers, KvDtype::Int4), 4, 500, 300);
  c.exact_tail_blocks = 2;
  c.exact_tail_shadows = 12;
  expect_graphs_change_no_bit(*model, c, {prompt, {3, 4, 5}},
                              test::device_or_emulated(std::vector<int>{200, 60}, {100, 30}));
}

// 8-bit activations are on by default; the option or KVSCOPE_Q8_ACTIVATIONS=0 turns them off,
// and name() says so.
// The device workspace after a prompt of a full chunk and a 7-token one (8-bit codes for 7
// rows, the most below gemm_min_tokens) and a few decode steps is cuda_step_buffers of those
// steps at their largest plus the shared buffers (plan/cuda_workspace.h), byte for byte; the
// planner's workspace for that chunk holds at least that.
void expect_workspace_is_planned(const std::string& path, const std::string& name) {
  EngineOptions o = cuda_options(false, 16, kDefaultGemm, true);
  constexpr std::int64_t kChunk = 32;
  o.scheduler.max_batch_tokens = kChunk;
  Engine engine(path, o);
  const ModelSpec& spec = engine.spec();
  const auto* cuda = dynamic_cast<const CudaBackend*>(&engine.backend());
  ASSERT_NE(cuda, nullptr) << engine.backend_note();
  test::run_chunk_then_decode(engine, kChunk);

  const CudaWorkspaceOptions wo = cuda->workspace_options();
  const KvCacheConfig& kc = engine.kv_cache().config();
  const std::vector<CudaBuffer> most = test::chunk_then_decode_buffers(
      spec, wo, kChunk, 1, engine.kv_cache().n_groups(), kc.max_context);
  const MemoryInfo m = engine.backend().memory_info(engine.kv_cache());
  EXPECT_EQ(static_cast<std::int64_t>(m.workspace), total_bytes(most)) << name;
  EXPECT_GE(total_bytes(cuda_plan_buffers(spec, 1, kChunk, kc, wo)), total_bytes(most)) << name;
  // and with the options the engine sizes its pool with (the device's, before the weights
  // are uploaded: the slab from the model's shape, the 8-bit codes as asked)
  const std::optional<CudaWorkspaceOptions> planned = cuda->cuda_plan_options();
  ASSERT_TRUE(planned.has_value()) << name;
  EXPECT_EQ(planned->compute_major, wo.compute_major) << name;
  EXPECT_EQ(planned->sm_count, wo.sm_count) << name;
  EXPECT_GE(total_bytes(cuda_plan_buffers(spec, 1, kChunk, kc, *planned)), total_bytes(most))
      << name;
}

TEST(CudaBackend, TheWorkspaceItAllocatesIsThePlannersBufferList) {
  KVSCOPE_REQUIRE_CUDA();
  // a llama, and a Gemma 3 whose sliding layers have RoPE tables of their own
  const std::pair<ModelSpec, std::string> models[] = {
      {test::random_llama_spec("cuda-workspace", {2, 8, 2, 512, 320, 512}), "workspace-random"},
      {test::tiny_family_spec("gemma3"), "workspace-gemma3"}};
  for (const auto& [written, name] : models) {
    const std::string path = (test::scratch_dir() / (name + ".gguf")).string();
    write_synthetic_gguf(path, written, TensorType::Q4_0, 5);
    expect_workspace_is_planned(path, name);
  }
}

TEST(CudaBackend, NameSaysWhenActivationsStayF32) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(path, "models/stories260K.gguf");
  const std::unique_ptr<Model> model = load_model(path);
  std::string why;
  CudaBackendOptions off;
  off.q8_activations = false;
  const std::unique_ptr<Backend> a = make_cuda_backend(*model, off, &why);
  ASSERT_TRUE(a) << why;
  EXPECT_NE(a->name().find("f32 activations"), std::string::npos) << a->name();
  const std::unique_ptr<Backend> b = [&] {
    const test::ScopedEnv env("KVSCOPE_Q8_ACTIVATIONS", "0");
    return make_cuda_backend(*model, CudaBackendOptions{}, &why);
  }();
  const test::ScopedEnv unset("KVSCOPE_Q8_ACTIVATIONS", nullptr);
  const std::unique_ptr<Backend> c = make_cuda_backend(*model, CudaBackendOptions{}, &why);
  ASSERT_TRUE(b && c) << why;
  EXPECT_NE(b->name().find("f32 activations"), std::string::npos) << b->name();
  EXPECT_EQ(c->name().find("f32 activations"), std::string::npos) << c->name();
}

// KVSCOPE_CUDA_GRAPHS=0 turns graphs off whatever the option says, and name() says so.
TEST(CudaGraphs, TheEnvironmentVariableTurnsGraphsOff) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(path, "models/stories260K.gguf");
  const std::unique_ptr<Model> model = load_model(path);
  std::string why;
  const std::unique_ptr<Backend> off = [&] {
    const test::ScopedEnv env("KVSCOPE_CUDA_GRAPHS", "0");
    return make_cuda_backend(*model, CudaBackendOptions{}, &why);
  }();
  const test::ScopedEnv unset("KVSCOPE_CUDA_GRAPHS", nullptr);
  const std::unique_ptr<Backend> on = make_cuda_backend(*model, CudaBackendOptions{}, &why);
  ASSERT_TRUE(off && on) << why;
  EXPECT_NE(off->name().find("CUDA graphs off: turned off by KVSCOPE_CUDA_GRAPHS=0"),
            std::string::npos)
      << off->name();
  EXPECT_FALSE(dynamic_cast<const CudaBackend&>(*off).graph_report().enabled);
  EXPECT_TRUE(dynamic_cast<const CudaBackend&>(*on).graph_report().enabled);
  EXPECT_EQ(on->name().find("graphs off"), std::string::npos) << on->name();
}

}  // namespace
}  // namespace kvscope
