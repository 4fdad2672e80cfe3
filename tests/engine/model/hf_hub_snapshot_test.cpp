// A Hugging Face folder as huggingface_hub downloads it: every file of a snapshot is a
// symlink into the repo's blobs/ (named by content hash). The Models page's scan lists the
// snapshot with the blobs' sizes, and the folder loads, generation_config.json included.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "model/discovery/model_places.h"
#include "model/discovery/model_scan.h"
#include "model/model.h"
#include "support/test_data.h"
#include "support/tiny_hf_folder.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;

// Moves each file of `folder` into `blobs` under a hash-like name and leaves a relative
// symlink in its place, as huggingface_hub's cache does.
void as_hub_blobs(const fs::path& folder, const fs::path& blobs) {
  fs::create_directories(blobs);
  int n = 0;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const fs::path blob = blobs / ("b10b" + std::to_string(n++));
    fs::rename(entry.path(), blob);
    fs::create_symlink(fs::path("../../blobs") / blob.filename(), entry.path());
  }
}

TEST(HfHubSnapshot, SymlinkedSnapshotIsListedWithItsBlobSizesAndLoads) {
  const fs::path home = test::scratch_dir();
  const fs::path repo = home / ".cache/huggingface/hub/models--org--tiny-instruct";
  const fs::path snapshot = repo / "snapshots/0123456789abcdef";
  test::write_tiny_hf_folder(snapshot, {{"do_sample", true}, {"temperature", 0.7}});
  const auto weights_bytes = fs::file_size(snapshot / "model.safetensors");
  as_hub_blobs(snapshot, repo / "blobs");
  ASSERT_TRUE(fs::is_symlink(snapshot / "model.safetensors"));

  const auto no_env = [](std::string_view) { return std::optional<std::string>{}; };
  const auto models = scan_local_models(model_places(home, no_env, {}));
  ASSERT_EQ(models.size(), 1u);
  EXPECT_TRUE(models[0].ok()) << models[0].error;
  EXPECT_EQ(models[0].name, "org/tiny-instruct");
  EXPECT_EQ(models[0].format, LocalModelFormat::HfFolder);
  EXPECT_EQ(models[0].source, "Hugging Face");
  EXPECT_EQ(models[0].file_bytes, weights_bytes);  // the blob's size, not the link's

  const auto model = load_model(models[0].path.string());
  EXPECT_EQ(model->spec().vocab_size, test::kTinyHfVocab);
  EXPECT_EQ(model->sampling_defaults().temperature, 0.7);
}

}  // namespace
}  // namespace kvscope
