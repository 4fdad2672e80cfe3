// `kvscope-cli models` end to end: a fake home holding real models in two tools' layouts,
// a broken file and an added folder; the JSON's planner answers equal what `plan` says of
// the same file, GPU and context.
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/cli_runner.h"
#include "support/test_data.h"

namespace kvscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

struct FakeHome {
  fs::path home;
  fs::path added1, added2;
};

// ~/.cache/kvscope/models: stories260K (copied) and a truncated copy; Ollama: SmolLM2 as
// smollm2:135m; two added folders with a copy of stories each.
FakeHome make_home(const std::string& stories, const std::string& smol) {
  FakeHome h;
  h.home = scratch_dir();
  const fs::path kv = h.home / ".cache/kvscope/models";
  fs::create_directories(kv);
  fs::copy_file(stories, kv / "stories260K.gguf");
  std::ifstream in(stories, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(kv / "truncated.gguf", std::ios::binary) << bytes.substr(0, bytes.size() / 3);
  const fs::path ollama = h.home / ".ollama/models";
  const std::string hex(64, 'f');
  fs::create_directories(ollama / "blobs");
  fs::create_directories(ollama / "manifests/registry.ollama.ai/library/smollm2");
  fs::create_symlink(smol, ollama / "blobs" / ("sha256-" + hex));
  std::ofstream(ollama / "manifests/registry.ollama.ai/library/smollm2/135m") << json{
      {"layers",
       {{{"mediaType", "application/vnd.ollama.image.model"},
         {"digest", "sha256:" + hex}}}}}.dump();
  h.added1 = h.home / "a1";
  h.added2 = h.home / "a2";
  for (const auto& dir : {h.added1, h.added2}) {
    fs::create_directories(dir);
    fs::copy_file(stories, dir / "copy.gguf");
  }
  return h;
}

json by_name(const json& models, const std::string& name) {
  for (const auto& m : models) {
    if (m.at("name") == name) return m;
  }
  ADD_FAILURE() << "no model named " << name << " in " << models.dump(1);
  return json::object();
}

TEST(CliModels, JsonListsEveryModelWithThePlansAnswer) {
  KVSCOPE_REQUIRE_SHARED(stories, "models/stories260K.gguf");
  KVSCOPE_REQUIRE_SHARED(smol, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  const FakeHome h = make_home(stories, smol);
  const auto r = run_cli({"models", "--home", h.home.string(), "--add", h.added1.string(), "--add",
                          h.added2.string(), "--gpu", "rtx-3060-12gb", "--ctx", "1024", "--kv",
                          "int8", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json models = json::parse(r.out).at("models");
  ASSERT_EQ(models.size(), 5u) << models.dump(1);

  const json ollama = by_name(models, "smollm2:135m");
  EXPECT_EQ(ollama.at("source"), "Ollama");
  EXPECT_EQ(ollama.at("weight_type"), "Q4_1");
  EXPECT_EQ(ollama.at("context_length"), 8192);
  EXPECT_EQ(ollama.at("file_bytes"), fs::file_size(smol));
  const json truncated = by_name(models, "truncated.gguf");
  EXPECT_THAT(truncated.at("error").get<std::string>(), HasSubstr("truncated"));
  EXPECT_FALSE(truncated.contains("plan"));
  int copies = 0;
  for (const auto& m : models) copies += m.at("source") == "added folder";
  EXPECT_EQ(copies, 2) << "every --add folder is scanned";

  // The same question asked of `plan` about the same file.
  for (const auto& [name, file] :
       {std::pair{"smollm2:135m", smol}, std::pair{"stories260K.gguf", stories}}) {
    SCOPED_TRACE(name);
    const auto p = run_cli({"plan", "-m", file, "--gpu", "rtx-3060-12gb", "--ctx", "1024", "-ctk",
                            "int8", "-ctv", "int8", "--json"});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    const json expected = json::parse(p.out);
    const json plan = by_name(models, name).at("plan");
    EXPECT_EQ(plan.at("kv_dtype"), "int8");
    EXPECT_EQ(plan.at("context"), std::min<std::int64_t>(1024, expected.at("context")));
    EXPECT_EQ(plan.at("fits"), expected.at("fits"));
    EXPECT_EQ(plan.at("max_context"), expected.at("max_context"));
  }
}

TEST(CliModels, TableNamesErrorsAndShortfalls) {
  KVSCOPE_REQUIRE_SHARED(stories, "models/stories260K.gguf");
  KVSCOPE_REQUIRE_SHARED(smol, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  const FakeHome h = make_home(stories, smol);
  const auto r = run_cli({"models", "--home", h.home.string(), "--vram", "600MiB"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("smollm2:135m"));
  EXPECT_THAT(r.out, HasSubstr("Ollama"));
  EXPECT_THAT(r.out, HasSubstr("error:"));
  EXPECT_THAT(r.out, HasSubstr("truncated"));
  EXPECT_THAT(r.out, HasSubstr("short by"));  // 600 MiB minus the CUDA context's 512 MiB

  const auto no_gpu = run_cli({"models", "--home", h.home.string()});
  ASSERT_EQ(no_gpu.exit_code, 0) << no_gpu.err;
  EXPECT_THAT(no_gpu.out, HasSubstr("Give --gpu NAME"));
}

TEST(CliModels, BadOptionsAreOneClearError) {
  const fs::path home = scratch_dir();
  const auto unknown = run_cli({"models", "--home", home.string(), "--gpu", "no-such-gpu"});
  EXPECT_GT(unknown.exit_code, 0);
  EXPECT_THAT(unknown.err, HasSubstr("no-such-gpu"));
  const auto both =
      run_cli({"models", "--home", home.string(), "--gpu", "rtx-4090", "--vram", "8GiB"});
  EXPECT_GT(both.exit_code, 0);
  EXPECT_THAT(both.err, HasSubstr("not both"));
  const auto empty = run_cli({"models", "--home", home.string(), "--json"});
  ASSERT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_TRUE(json::parse(empty.out).at("models").empty());
}

}  // namespace
}  // namespace kvscope::test
