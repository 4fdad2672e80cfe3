// The download catalog: the shipped resources/catalog/models.json parses, its shapes are
// the real files' shapes where a real file is at hand, and every malformed entry is
// refused with the file, the entry and the field named.
#include "model/catalog/model_catalog.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/discovery/local_model.h"
#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

using testing::HasSubstr;

std::filesystem::path shipped_catalog() {
  return std::filesystem::path(__FILE__).parent_path() / ".." / ".." / ".." / "resources" /
         "catalog" / "models.json";
}

// One model with one file; `model_extra` / `file_extra` are spliced into the objects (a
// later duplicate key wins in nlohmann, so they override the defaults).
std::string one_model(const std::string& model_extra = "", const std::string& file_extra = "") {
  return R"({"models": [{"name": "tiny-chat", "display_name": "Tiny Chat",
    "architecture": "llama", "n_params": 1000000, "n_layers": 2, "dim": 64, "n_heads": 4,
    "n_kv_heads": 2, "head_dim": 16, "ffn_dim": 128, "vocab_size": 256,
    "context_length": 2048, "sliding_window": 0, "tied_embeddings": true,
    "repo": "someone/tiny-chat-GGUF")" +
         model_extra + R"(, "files": [{"quant": "Q8_0", "file": "tiny-chat-Q8_0.gguf",
    "bytes": 1200000)" +
         file_extra + "}]}]}";
}

std::string error_of(const std::string& text) {
  try {
    parse_model_catalog(text, "cat.json");
  } catch (const ModelError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ModelCatalog, ShippedCatalogParsesWithTheIssueModels) {
  const auto catalog = load_model_catalog(shipped_catalog());
  EXPECT_GE(catalog.size(), 12u);
  for (const char* name :
       {"smollm2-135m-instruct", "smollm2-360m-instruct", "smollm2-1.7b-instruct",
        "qwen2.5-0.5b-instruct", "qwen2.5-7b-instruct", "llama-3.2-1b-instruct",
        "llama-3.2-3b-instruct", "mistral-7b-instruct-v0.3", "gemma-2-2b-it"}) {
    const CatalogChoice c = find_catalog_file(catalog, name);
    ASSERT_NE(c.model, nullptr) << name;
    EXPECT_TRUE(c.model->supported) << name;
  }
  // Architectures the engine does not run are listed, but as not supported.
  EXPECT_FALSE(find_catalog_file(catalog, "phi-3.5-mini-instruct").model->supported);
}

TEST(ModelCatalog, UrlPinsTheRevision) {
  const auto catalog = load_model_catalog(shipped_catalog());
  const CatalogChoice c = find_catalog_file(catalog, "Qwen2.5-0.5B-Instruct:q4_k_m");
  EXPECT_EQ(c.file->url(),
            "https://huggingface.co/bartowski/Qwen2.5-0.5B-Instruct-GGUF/resolve/"
            "b26a58accf53b1a19fbc555d52fdb224bec473f5/Qwen2.5-0.5B-Instruct-Q4_K_M.gguf");
  EXPECT_EQ(c.file->sha256.size(), 64u);
  const auto plain = parse_model_catalog(one_model(), "cat.json");
  EXPECT_EQ(plain[0].files[0].url(),
            "https://huggingface.co/someone/tiny-chat-GGUF/resolve/main/tiny-chat-Q8_0.gguf");
  EXPECT_TRUE(plain[0].files[0].sha256.empty());
}

// A downloaded file is trusted by its sha256 (issue #38): every shipped file carries one,
// so a download is never taken on its name and GGUF header alone.
TEST(ModelCatalog, EveryShippedFileHasItsSha256) {
  const auto catalog = load_model_catalog(shipped_catalog());
  std::vector<std::string> unchecked;
  for (const CatalogModel& m : catalog) {
    for (const CatalogFile& f : m.files) {
      if (f.sha256.empty()) unchecked.push_back(m.name + ":" + f.quant);
    }
  }
  EXPECT_EQ(unchecked, std::vector<std::string>{});
  // Mistral's Q4_K_M is bartowski's file, whose sha256 is published (lmstudio-community's
  // copy had none a source gives), pinned to the revision that hash belongs to.
  const CatalogChoice mistral = find_catalog_file(catalog, "mistral-7b-instruct-v0.3:q4_k_m");
  ASSERT_NE(mistral.file, nullptr);
  EXPECT_EQ(mistral.file->url(),
            "https://huggingface.co/bartowski/Mistral-7B-Instruct-v0.3-GGUF/resolve/"
            "61fd4167fff3ab01ee1cfe0da183fa27a944db48/Mistral-7B-Instruct-v0.3-Q4_K_M.gguf");
  EXPECT_EQ(mistral.file->bytes, 4372812000);
  const CatalogChoice gemma = find_catalog_file(catalog, "gemma-3-270m-it:q8_0");
  ASSERT_NE(gemma.file, nullptr);
  EXPECT_EQ(gemma.file->repo, "ggml-org/gemma-3-270m-it-GGUF");  // the file whose hash is known
  EXPECT_TRUE(gemma.file->exact_bytes);
  const CatalogChoice smol = find_catalog_file(catalog, "smollm2-1.7b-instruct");
  ASSERT_NE(smol.file, nullptr);
  EXPECT_EQ(smol.file->bytes, 1055609824);
  EXPECT_TRUE(smol.file->exact_bytes);
}

// The catalog's SmolLM2-135M shape is what the real GGUF's header says.
TEST(ModelCatalog, SmolLm2ShapeMatchesTheRealFile) {
  KVSCOPE_REQUIRE_SHARED(smol, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  const LocalModel real = describe_gguf({smol});
  ASSERT_TRUE(real.ok()) << real.error;
  const auto catalog = load_model_catalog(shipped_catalog());
  const CatalogChoice c = find_catalog_file(catalog, "smollm2-135m-instruct:Q4_1");
  const ModelSpec& s = c.model->spec;
  EXPECT_EQ(s.architecture, real.spec.architecture);
  EXPECT_EQ(s.n_layers, real.spec.n_layers);
  EXPECT_EQ(s.dim, real.spec.dim);
  EXPECT_EQ(s.n_heads, real.spec.n_heads);
  EXPECT_EQ(s.n_kv_heads, real.spec.n_kv_heads);
  EXPECT_EQ(s.head_dim, real.spec.head_dim);
  EXPECT_EQ(s.ffn_dim, real.spec.ffn_dim);
  EXPECT_EQ(s.vocab_size, real.spec.vocab_size);
  EXPECT_EQ(s.context_length, real.spec.context_length);
  EXPECT_EQ(s.tied_embeddings, real.spec.tied_embeddings);
  EXPECT_EQ(c.model->n_params, real.n_params);
  EXPECT_EQ(static_cast<std::uint64_t>(c.file->bytes), real.file_bytes);
}

TEST(ModelCatalog, SizeTextIsDecimalWithThreeDigits) {
  CatalogFile f;
  f.bytes = 398000000;
  EXPECT_EQ(catalog_size_text(f), "~398 MB");
  f.bytes = 2020000000;
  EXPECT_EQ(catalog_size_text(f), "~2.02 GB");
  f.bytes = 1185376;
  f.exact_bytes = true;
  EXPECT_EQ(catalog_size_text(f), "1.19 MB");
  f.bytes = 4683074048;
  EXPECT_EQ(catalog_size_text(f), "4.68 GB");
}

TEST(ModelCatalog, FindsByNameAndQuantOrSaysWhatThereIs) {
  const auto catalog = parse_model_catalog(one_model(), "cat.json");
  EXPECT_EQ(find_catalog_file(catalog, "tiny-chat").file->quant, "Q8_0");
  EXPECT_EQ(find_catalog_file(catalog, "TINY-CHAT:q8_0").file->quant, "Q8_0");
  try {
    find_catalog_file(catalog, "tiny-chat:Q2_K");
    FAIL() << "accepted an unknown quantization";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("it has: Q8_0"));
  }
  try {
    find_catalog_file(catalog, "huge-chat");
    FAIL() << "accepted an unknown name";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("it has: tiny-chat"));
  }
}

TEST(ModelCatalog, RefusesMalformedEntriesNamingTheField) {
  EXPECT_EQ(error_of(one_model()), "(accepted)");
  EXPECT_THAT(error_of("[]"), HasSubstr("must hold a JSON object"));
  EXPECT_THAT(error_of(R"({"models": []})"), HasSubstr("non-empty array \"models\""));
  EXPECT_THAT(error_of(one_model(R"(, "n_layers": 0)")), HasSubstr("field \"n_layers\""));
  EXPECT_THAT(error_of(one_model(R"(, "n_kv_heads": 3)")), HasSubstr("model 0"));
  EXPECT_THAT(error_of(one_model(R"(, "name": "Tiny Chat")")), HasSubstr("field \"name\""));
  EXPECT_THAT(error_of(one_model(R"(, "repo": "../../etc")")), HasSubstr("not owner/name"));
  EXPECT_THAT(error_of(one_model("", R"(, "file": "../evil.gguf")")), HasSubstr("field \"file\""));
  EXPECT_THAT(error_of(one_model("", R"(, "file": "x.bin")")), HasSubstr("plain NAME.gguf"));
  EXPECT_THAT(error_of(one_model("", R"(, "sha256": "abc")")), HasSubstr("64 hex digits"));
  EXPECT_THAT(error_of(one_model("", R"(, "bytes": -1)")), HasSubstr("field \"bytes\""));
  EXPECT_THAT(error_of(one_model("", R"(, "revision": "../x")")), HasSubstr("field \"revision\""));
  EXPECT_THAT(error_of(one_model(R"(, "tied_embeddings": 1)")),
              HasSubstr("field \"tied_embeddings\""));
  EXPECT_THAT(error_of(R"({"models": [1]})"), HasSubstr("must be a JSON object"));
}

TEST(ModelCatalog, RefusesDuplicates) {
  std::string two = one_model();
  two.insert(two.rfind("]}"), "," + one_model().substr(12, one_model().size() - 14));
  EXPECT_THAT(error_of(two), HasSubstr("appears twice"));
}

}  // namespace
}  // namespace kvscope
