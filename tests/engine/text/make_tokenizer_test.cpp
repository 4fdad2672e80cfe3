// make_tokenizer picks the model's own tokenizer: a GGUF's embedded "llama" (SentencePiece)
// or "gpt2" (byte-level BPE) vocab, or a Hugging Face folder's tokenizer.model.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/model.h"
#include "support/test_data.h"
#include "text/tokenizer.h"
#include "util/error.h"

namespace kvscope {
namespace {

// A model that is only what make_tokenizer looks at.
class TokenizerOnlyModel : public Model {
 public:
  TokenizerOnlyModel(std::unique_ptr<GgufFile> gguf, std::string tokenizer_model)
      : gguf_(std::move(gguf)), tokenizer_model_(std::move(tokenizer_model)) {
    path_ = gguf_ ? gguf_->path() : "hf-folder";
    format_ = gguf_ ? ModelFormat::Gguf : ModelFormat::HuggingFace;
  }
  const GgufFile* gguf() const override { return gguf_.get(); }
  std::string tokenizer_model_path() const override { return tokenizer_model_; }
  SpecialTokenFlags special_token_flags() const override { return flags; }

  SpecialTokenFlags flags;  // what a tokenizer_config.json would say

 private:
  std::unique_ptr<GgufFile> gguf_;
  std::string tokenizer_model_;
};

std::unique_ptr<Model> gguf_model(const GgufWriter& writer, const std::string& name) {
  const auto path = (test::scratch_dir() / name).string();
  writer.write(path);
  return std::make_unique<TokenizerOnlyModel>(std::make_unique<GgufFile>(path), "");
}

std::string error_of(const Model& model) {
  try {
    make_tokenizer(model);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MakeTokenizerTest, GgufLlamaVocabGivesSentencePiece) {
  KVSCOPE_REQUIRE_SHARED(path, "models/stories260K.gguf");
  const auto model = load_model(path);
  const auto tok = make_tokenizer(*model);
  EXPECT_EQ(tok->kind(), "sentencepiece");
  // reference/stories260K-greedy.json, first case (llama.cpp).
  EXPECT_EQ(tok->encode("Once upon a time", true), (std::vector<TokenId>{1, 403, 407, 261, 378}));
}

TEST(MakeTokenizerTest, GgufGpt2VocabGivesByteLevelBpe) {
  GgufWriter writer;
  writer.set_string("general.architecture", "llama");
  writer.set_string("tokenizer.ggml.model", "gpt2");
  writer.set_string("tokenizer.ggml.pre", "gpt2");
  writer.set_string_array("tokenizer.ggml.tokens", {"a", "b", "ab"});
  writer.set_i32_array("tokenizer.ggml.token_type", {1, 1, 1});
  writer.set_string_array("tokenizer.ggml.merges", {"a b"});
  const auto tok = make_tokenizer(*gguf_model(writer, "gpt2.gguf"));
  EXPECT_TRUE(tok->kind().starts_with("bpe")) << tok->kind();
  EXPECT_EQ(tok->encode("ab", false), std::vector<TokenId>{2});
}

TEST(MakeTokenizerTest, UnknownOrMissingGgufTokenizerIsAModelError) {
  GgufWriter bert;
  bert.set_string("general.architecture", "llama");
  bert.set_string("tokenizer.ggml.model", "bert");
  const std::string message = error_of(*gguf_model(bert, "bert.gguf"));
  EXPECT_NE(message.find("no tokenizer"), std::string::npos) << message;
  EXPECT_NE(message.find("\"bert\""), std::string::npos) << message;

  GgufWriter none;
  none.set_string("general.architecture", "llama");
  EXPECT_NE(error_of(*gguf_model(none, "none.gguf")).find("no tokenizer"), std::string::npos);
}

TEST(MakeTokenizerTest, GgufLlamaVocabWithBadByteTokenNamesTheIndex) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "<0xZG>", "a"};
  GgufWriter writer;
  writer.set_string("general.architecture", "llama");
  writer.set_string("tokenizer.ggml.model", "llama");
  writer.set_string_array("tokenizer.ggml.tokens", tokens);
  writer.set_f32_array("tokenizer.ggml.scores", {0, 0, 0, 0, -1});
  writer.set_i32_array("tokenizer.ggml.token_type", {2, 3, 3, 6, 1});
  const std::string message = error_of(*gguf_model(writer, "badbyte.gguf"));
  EXPECT_NE(message.find("tokenizer.ggml.tokens[3]"), std::string::npos) << message;
  EXPECT_NE(message.find("<0xZG>"), std::string::npos) << message;
}

TEST(MakeTokenizerTest, HuggingFaceFolderUsesItsTokenizerModel) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  const TokenizerOnlyModel model(nullptr, path);
  const auto tok = make_tokenizer(model);
  EXPECT_EQ(tok->kind(), "sentencepiece");
  // spm_encode --output_format=id: "Hello world! How are you today?"
  EXPECT_EQ(tok->encode("Hello world! How are you today?", true),
            (std::vector<TokenId>{1, 15043, 3186, 29991, 1128, 526, 366, 9826, 29973}));
}

// add_bos_token / add_eos_token of tokenizer_config.json were ignored: every HF folder's
// prompts started with BOS and none ended with EOS, whatever the folder said.
TEST(MakeTokenizerTest, HuggingFaceFolderFollowsTheAddBosAndAddEosOfItsConfig) {
  KVSCOPE_REQUIRE_SHARED(path, "models/llama2-tokenizer.model");
  TokenizerOnlyModel model(nullptr, path);
  model.flags.add_bos = false;
  model.flags.add_eos = true;
  const auto tok = make_tokenizer(model);
  EXPECT_FALSE(tok->add_bos_default());
  // what the engine encodes a prompt with: no BOS
  EXPECT_EQ(tok->encode("Hello world! How are you today?", tok->add_bos_default()),
            (std::vector<TokenId>{15043, 3186, 29991, 1128, 526, 366, 9826, 29973}));
  // special tokens asked for: EOS closes the text, as add_eos_token says
  EXPECT_EQ(tok->encode("Hello world!", true), (std::vector<TokenId>{1, 15043, 3186, 29991, 2}));
  model.flags = {};
  EXPECT_TRUE(make_tokenizer(model)->add_bos_default());  // the SentencePiece default
}

TEST(MakeTokenizerTest, HuggingFaceFolderWithoutTokenizerModelIsAModelError) {
  const TokenizerOnlyModel model(nullptr, "");
  EXPECT_NE(error_of(model).find("no tokenizer"), std::string::npos);
}

}  // namespace
}  // namespace kvscope
