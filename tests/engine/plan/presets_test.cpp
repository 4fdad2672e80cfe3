#include "plan/presets.h"

#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/plan/preset_files.h"
#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

using test::gpu_presets;
using test::model_presets;
using ::testing::HasSubstr;

// Parameters of a Llama-shaped decoder (Llama, Mistral, Qwen2/3, Gemma 1-3: three FFN
// matrices, two norms per layer, two more after the sub-layers for Gemma 2/3, q and k norms of
// head_dim for Qwen 3 and Gemma 3) from its shape alone.
std::int64_t llama_shaped_params(const ModelSpec& s) {
  const std::int64_t attn = s.dim * s.q_dim() + 2 * s.dim * s.kv_dim() + s.q_dim() * s.dim +
                            (s.qkv_bias ? s.q_dim() + 2 * s.kv_dim() : 0) +
                            (s.qk_norm ? 2 * s.head_dim : 0);
  const std::int64_t layer = attn + 3 * s.dim * s.ffn_dim + (s.post_norms ? 4 : 2) * s.dim;
  const std::int64_t embeddings = s.vocab_size * s.dim * (s.tied_embeddings ? 1 : 2);
  return embeddings + s.n_layers * layer + s.dim;
}

TEST(Presets, CatalogueHoldsEveryModelTheIssueNames) {
  for (const char* slug :
       {"llama-7b", "llama-2-7b", "llama-2-13b", "llama-2-70b", "mistral-7b-v0.1", "llama-3-8b",
        "qwen1.5-7b", "qwen2.5-0.5b", "qwen2.5-7b", "tinyllama-1.1b", "smollm2-135m",
        "smollm2-360m", "smollm2-1.7b", "gemma-2b", "falcon-7b", "llama-3-70b", "llama-3.1-8b",
        "llama-3.1-70b"}) {
    EXPECT_NO_THROW(find_model_preset(model_presets(), slug)) << slug;
  }
}

TEST(Presets, LlamaShapedPresetsHaveTheParameterCountTheirShapeGives) {
  int checked = 0;
  for (const ModelPreset& p : model_presets()) {
    if (p.spec.architecture == "falcon") continue;  // parallel attention, 2-matrix MLP
    EXPECT_EQ(p.n_params, llama_shaped_params(p.spec)) << p.slug;
    ++checked;
  }
  EXPECT_EQ(checked, 31);
}

TEST(Presets, EveryModelNamesItsHuggingFaceRepoAndGpusTheirAliases) {
  for (const ModelPreset& p : model_presets()) {
    EXPECT_NE(p.hf_repo.find('/'), std::string::npos) << p.slug;
  }
  EXPECT_EQ(find_model_preset(model_presets(), "llama-3-70b").hf_repo,
            "meta-llama/Meta-Llama-3-70B");
  EXPECT_EQ(find_model_preset(model_presets(), "llama-2-7b").hf_repo, "meta-llama/Llama-2-7b-hf");
  EXPECT_EQ(find_gpu_preset(gpu_presets(), "H100-80GB").slug, "h100-sxm");
}

TEST(Presets, ModelValuesMatchTheirConfigJson) {
  const ModelSpec& mistral = find_model_preset(model_presets(), "mistral-7b-v0.1").spec;
  EXPECT_EQ(mistral.n_kv_heads, 8);
  EXPECT_EQ(mistral.sliding_window, 4096);
  EXPECT_EQ(mistral.context_length, 32768);
  const ModelSpec& llama3 = find_model_preset(model_presets(), "llama-3-8b").spec;
  EXPECT_EQ(llama3.vocab_size, 128256);
  EXPECT_EQ(llama3.ffn_dim, 14336);
  const ModelSpec& gemma = find_model_preset(model_presets(), "gemma-2b").spec;
  EXPECT_EQ(gemma.n_kv_heads, 1);
  EXPECT_EQ(gemma.head_dim, 256);
  EXPECT_TRUE(gemma.tied_embeddings);
  const ModelSpec& qwen = find_model_preset(model_presets(), "qwen2.5-7b").spec;
  EXPECT_EQ(qwen.n_kv_heads, 4);
  EXPECT_EQ(qwen.vocab_size, 152064);
  EXPECT_TRUE(qwen.qkv_bias);
  const ModelPreset& falcon = find_model_preset(model_presets(), "falcon-7b");
  EXPECT_EQ(falcon.spec.n_heads, 71);
  EXPECT_EQ(falcon.spec.n_kv_heads, 1);
  EXPECT_EQ(falcon.n_params, 6'921'720'704);
}

TEST(Presets, GpuCatalogueHoldsTheConsumerAndDatacenterCards) {
  const std::vector<std::pair<const char*, double>> expected = {{"rtx-3060-12gb", 360},
                                                                {"rtx-3070", 448},
                                                                {"rtx-3080-10gb", 760},
                                                                {"rtx-3090", 936},
                                                                {"rtx-4060", 272},
                                                                {"rtx-4060-ti-8gb", 288},
                                                                {"rtx-4060-ti-16gb", 288},
                                                                {"rtx-4070", 504},
                                                                {"rtx-4070-ti-super", 672},
                                                                {"rtx-4080", 716.8},
                                                                {"rtx-4090", 1008},
                                                                {"rtx-5060-ti-16gb", 448},
                                                                {"rtx-5070", 672},
                                                                {"rtx-5080", 960},
                                                                {"rtx-5090", 1792},
                                                                {"a100-40gb", 1555},
                                                                {"a100-80gb", 2039},
                                                                {"h100-sxm", 3350},
                                                                {"h200", 4800}};
  EXPECT_EQ(gpu_presets().size(), expected.size());
  for (const auto& [slug, bandwidth] : expected) {
    EXPECT_DOUBLE_EQ(find_gpu_preset(gpu_presets(), slug).bandwidth_gb_s, bandwidth) << slug;
  }
  EXPECT_EQ(find_gpu_preset(gpu_presets(), "rtx-4090").memory_bytes, 24LL << 30);
  EXPECT_EQ(find_gpu_preset(gpu_presets(), "rtx-3080-10gb").memory_bytes, 10LL << 30);
  EXPECT_EQ(find_gpu_preset(gpu_presets(), "h200").memory_bytes, 141LL << 30);
}

// Every card gives its compute capability and SMs, which size the CUDA workspace on it:
// cuBLAS's 4 MiB before Hopper, 32 MiB from it.
TEST(Presets, GpusGiveTheirComputeCapabilityAndSms) {
  for (const GpuPreset& g : gpu_presets()) {
    EXPECT_GE(g.compute_major, 8) << g.slug;
    EXPECT_GT(g.sm_count, 0) << g.slug;
  }
  const GpuPreset& rtx4060 = find_gpu_preset(gpu_presets(), "rtx-4060");
  EXPECT_EQ(rtx4060.compute_major, 8);
  EXPECT_EQ(rtx4060.compute_minor, 9);
  EXPECT_EQ(rtx4060.sm_count, 24);
  EXPECT_EQ(find_gpu_preset(gpu_presets(), "rtx-5090").compute_major, 12);
  EXPECT_EQ(cublas_workspace_bytes(gpu_workspace_options(rtx4060).compute_major), 4LL << 20);
  const CudaWorkspaceOptions h100 =
      gpu_workspace_options(find_gpu_preset(gpu_presets(), "h100-sxm"));
  EXPECT_EQ(cublas_workspace_bytes(h100.compute_major), 32LL << 20);
  EXPECT_EQ(h100.sm_count, 132);
  // a card without them keeps the defaults, the largest workspace
  const CudaWorkspaceOptions unknown = gpu_workspace_options(GpuPreset{});
  EXPECT_EQ(unknown.compute_major, CudaWorkspaceOptions{}.compute_major);
  EXPECT_EQ(unknown.sm_count, CudaWorkspaceOptions{}.sm_count);
}

TEST(Presets, LookupIgnoresCaseAndAnUnknownSlugListsTheKnownOnes) {
  EXPECT_EQ(find_model_preset(model_presets(), "Mistral-7B-v0.1").slug, "mistral-7b-v0.1");
  EXPECT_EQ(find_gpu_preset(gpu_presets(), "RTX-4090").name, "GeForce RTX 4090");
  try {
    find_model_preset(model_presets(), "llama-9b");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("\"llama-9b\""));
    EXPECT_THAT(e.what(), HasSubstr("llama-2-70b"));
  }
  EXPECT_THROW(find_gpu_preset(gpu_presets(), "rtx-9090"), UsageError);
}

// --- bad files -------------------------------------------------------------------------

constexpr const char* kGoodModel =
    R"({"slug": "tiny", "name": "Tiny", "architecture": "llama", "n_params": 1000,
        "n_layers": 2, "dim": 64, "n_heads": 4, "n_kv_heads": 2, "head_dim": 16,
        "ffn_dim": 128, "vocab_size": 100, "context_length": 256, "sliding_window": 0})";

std::string write(const std::string& name, const std::string& text) {
  const auto path = (test::scratch_dir() / name).string();
  std::ofstream(path) << text;
  return path;
}

std::string model_error(const std::string& text) {
  const std::string path = write("models.json", text);
  try {
    load_model_presets(path);
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    return e.what();
  }
  ADD_FAILURE() << "no ModelError for " << text;
  return "";
}

std::string with(std::string entry, const std::string& from, const std::string& to) {
  entry.replace(entry.find(from), from.size(), to);
  return R"({"models": [)" + entry + "]}";
}

TEST(Presets, AGoodEntryLoads) {
  const auto presets = load_model_presets(write("models.json", with(kGoodModel, "", "")));
  ASSERT_EQ(presets.size(), 1u);
  EXPECT_EQ(presets[0].spec.kv_dim(), 32);
}

TEST(Presets, BadModelFilesAreRejectedNamingTheEntryAndField) {
  EXPECT_THAT(model_error("{\"models\": [}"), HasSubstr("not valid JSON"));
  EXPECT_THAT(model_error("{\"gpus\": []}"), HasSubstr("\"models\""));
  EXPECT_THAT(model_error(with(kGoodModel, R"("dim": 64, )", "")),
              HasSubstr("models[0] (\"tiny\"): field \"dim\" is missing"));
  EXPECT_THAT(model_error(with(kGoodModel, R"("dim": 64)", R"("dim": "64")")),
              HasSubstr("\"dim\" must be an integer"));
  EXPECT_THAT(model_error(with(kGoodModel, R"("n_params": 1000)", R"("n_params": -5)")),
              HasSubstr("\"n_params\" is -5"));
  EXPECT_THAT(model_error(with(kGoodModel, R"("n_kv_heads": 2)", R"("n_kv_heads": 3)")),
              HasSubstr("not a multiple of n_kv_heads 3"));
  EXPECT_THAT(model_error(with(kGoodModel, R"("tiny")", R"("Tiny Model")")),
              HasSubstr("must use only"));
  EXPECT_THAT(model_error(R"({"models": [)" + std::string(kGoodModel) + "," + kGoodModel + "]}"),
              HasSubstr("appears twice"));
  EXPECT_THAT(
      model_error(with(kGoodModel, R"("n_layers": 2)", R"("n_layers": 18446744073709551615)")),
      HasSubstr("out of range"));
}

TEST(Presets, BadGpuFilesAreRejected) {
  const std::string good =
      R"({"slug": "g", "name": "G", "memory_bytes": 1024, "bandwidth_gb_s": 10})";
  auto error = [](const std::string& text) -> std::string {
    try {
      load_gpu_presets(write("gpus.json", text));
    } catch (const ModelError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(load_gpu_presets(write("gpus.json", "{\"gpus\": [" + good + "]}")).size(), 1u);
  std::string bad = good;
  bad.replace(bad.find("10}"), 3, "0}");
  EXPECT_THAT(error("{\"gpus\": [" + bad + "]}"), HasSubstr("\"bandwidth_gb_s\" is 0"));
  EXPECT_THAT(error("{\"gpus\": []}"), HasSubstr("non-empty array"));
  const auto with = [&](const std::string& field) {
    return "{\"gpus\": [" + good.substr(0, good.size() - 1) + ", " + field + "}]}";
  };
  const auto cc = load_gpu_presets(write("gpus.json", with(R"("compute_capability": "12.0")")));
  EXPECT_EQ(cc[0].compute_major, 12);
  EXPECT_EQ(cc[0].compute_minor, 0);
  for (const char* bad_cc : {R"("8")", R"("8.")", R"(".9")", R"("0.9")", R"("8.9.1")", R"("123.0")",
                             R"("8,9")", R"(8.9)", R"("")"}) {
    EXPECT_THAT(error(with(std::string("\"compute_capability\": ") + bad_cc)),
                HasSubstr("compute_capability"))
        << bad_cc;
  }
  EXPECT_THAT(error(with(R"("sm_count": 0)")), HasSubstr("\"sm_count\" is 0"));
  EXPECT_THAT(error("[1]"), HasSubstr("JSON object"));
  EXPECT_THROW(load_gpu_presets(test::scratch_dir() / "absent.json"), ModelError);
}

TEST(Presets, NestedOrOversizedFilesAreRejectedBeforeTheyAreBuilt) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  EXPECT_THAT(model_error(R"({"models": )" + deep + "}"), HasSubstr("nested more than 64 levels"));
  EXPECT_THAT(model_error("[" + std::string(5 << 20, ' ') + "]"), HasSubstr("byte limit"));
  const std::string slug(10'000, 'Z');
  const std::string bad_slug = model_error(with(kGoodModel, R"("tiny")", '"' + slug + '"'));
  EXPECT_THAT(bad_slug, HasSubstr("must use only"));
  EXPECT_LT(bad_slug.size(), 600u);
}

TEST(Presets, BadRepoIdsAndAliasesAreRejected) {
  EXPECT_THAT(
      model_error(with(kGoodModel, "\"n_params\"", "\"hf_repo\": \"no-slash\", \"n_params\"")),
      HasSubstr("\"hf_repo\""));
  EXPECT_THAT(model_error(with(kGoodModel, "\"n_params\"", "\"hf_repo\": \"a/b/c\", \"n_params\"")),
              HasSubstr("not owner/name"));
  const std::string gpu =
      R"({"slug": "g", "name": "G", "memory_bytes": 1024, "bandwidth_gb_s": 1, "aliases": ["g"]})";
  const std::string path = write("gpus.json", "{\"gpus\": [" + gpu + "]}");
  EXPECT_THROW(load_gpu_presets(path), ModelError);  // an alias equal to a slug
}

}  // namespace
}  // namespace kvscope
