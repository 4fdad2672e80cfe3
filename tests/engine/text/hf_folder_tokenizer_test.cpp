// make_tokenizer for Hugging Face folders: tokenizer.json is preferred over tokenizer.model,
// tokenizer_config.json's flags reach it, and every id generation_config.json lists ends a
// generation, whichever tokenizer file the folder has.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/text/tiny_tokenizer_json.h"
#include "model/model.h"
#include "support/test_data.h"
#include "text/tokenizer.h"
#include "util/error.h"

namespace kvscope {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// What make_tokenizer reads of a HF folder.
class FolderModel : public Model {
 public:
  FolderModel(std::string tokenizer_json, std::string tokenizer_model)
      : tokenizer_json_(std::move(tokenizer_json)), tokenizer_model_(std::move(tokenizer_model)) {
    path_ = "hf-folder";
    format_ = ModelFormat::HuggingFace;
  }
  std::string tokenizer_json_path() const override { return tokenizer_json_; }
  std::string tokenizer_model_path() const override { return tokenizer_model_; }
  SpecialTokenFlags special_token_flags() const override { return flags; }

  SpecialTokenFlags flags;

 private:
  std::string tokenizer_json_;
  std::string tokenizer_model_;
};

std::string error_of(const Model& model) {
  try {
    make_tokenizer(model);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "(no error)";
}

// transformers' AutoTokenizer loads the fast tokenizer (tokenizer.json) when both exist.
TEST(HfFolderTokenizerTest, TokenizerJsonIsPreferredOverTokenizerModel) {
  const FolderModel model(test::write_file(test::tiny_file()), "/absent/tokenizer.model");
  const auto tok = make_tokenizer(model);
  EXPECT_EQ(tok->kind(), "bpe (tokenizer.json)");
  EXPECT_THAT(tok->encode("abc", tok->add_bos_default()), ElementsAre(258, 257));
}

TEST(HfFolderTokenizerTest, TokenizerConfigFlagsReachTheTokenizerJson) {
  FolderModel model(test::write_file(test::tiny_file()), "");
  model.flags.config_path = "tokenizer_config.json";
  model.flags.bos_token = "<s>";
  model.flags.eos_token = "</s>";
  model.flags.add_bos = false;
  model.flags.add_eos = true;
  const auto tok = make_tokenizer(model);
  EXPECT_FALSE(tok->add_bos_default());
  EXPECT_THAT(tok->encode("ab", true), ElementsAre(256, 259));
}

// Llama 3 Instruct's generation_config.json lists three ids; stopping on only one of them
// ran generations past the end of the turn.
TEST(HfFolderTokenizerTest, EveryGenerationConfigEosIdEndsAGeneration) {
  FolderModel model(test::write_file(test::tiny_file()), "");
  model.flags.eos_token_ids = {259, 97, 258};
  model.flags.generation_config_path = "generation_config.json";
  const auto tok = make_tokenizer(model);
  for (const TokenId id : {259, 97, 258}) EXPECT_TRUE(tok->is_end_of_generation(id)) << id;
  EXPECT_FALSE(tok->is_end_of_generation(98));
  EXPECT_FALSE(tok->is_end_of_generation(256));
}

TEST(HfFolderTokenizerTest, GenerationConfigIdsAlsoEndSentencePieceGenerations) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  FolderModel model("", path);
  model.flags.eos_token_ids = {2, 32000 - 1};
  const auto tok = make_tokenizer(model);
  EXPECT_EQ(tok->kind(), "sentencepiece");
  EXPECT_TRUE(tok->is_end_of_generation(2));
  EXPECT_TRUE(tok->is_end_of_generation(31999));
  EXPECT_FALSE(tok->is_end_of_generation(31998));
}

TEST(HfFolderTokenizerTest, GenerationConfigIdOutsideTheTokenizerIsAModelError) {
  FolderModel model(test::write_file(test::tiny_file()), "");
  model.flags.eos_token_ids = {259, 260};
  model.flags.generation_config_path = "/m/generation_config.json";
  EXPECT_THAT(error_of(model), HasSubstr("/m/generation_config.json: eos_token_id: 260 is out of "
                                         "range (the tokenizer has 260 tokens)"));
}

TEST(HfFolderTokenizerTest, FolderWithNeitherFileIsAModelError) {
  EXPECT_THAT(error_of(FolderModel("", "")),
              HasSubstr("no tokenizer: hf-folder has neither tokenizer.json nor tokenizer.model"));
}

}  // namespace
}  // namespace kvscope
