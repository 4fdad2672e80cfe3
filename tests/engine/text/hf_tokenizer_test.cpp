// tokenizer.json (the Hugging Face `tokenizers` format): ids checked against the library
// itself (make_hf_references.py writes its ids for ~1500 texts per tokenizer), the SmolLM2
// vocab as a tokenizer.json against our GGUF tokenizer, the tokenizer_config.json rules, and
// broken files, each a ModelError naming the file and the component.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "engine/text/tiny_tokenizer_json.h"
#include "model/gguf/gguf_file.h"
#include "support/gguf_tokenizer_json.h"
#include "support/test_data.h"
#include "text/bpe_tokenizer.h"
#include "text/byte_unicode.h"
#include "text/hf_tokenizer.h"
#include "util/error.h"

namespace kvscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::tiny_file;
using test::write_file;
using test::write_json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kSmolLm2 = "models/SmolLM2-135M-Instruct.Q4_1.gguf";

// The GGUF vocab of SmolLM2 as {"tokens", "merges", "token_type"}.
json smollm2_vocab(const std::string& gguf_path) {
  const GgufFile gguf(gguf_path);
  return {{"tokens", gguf.get_string_array("tokenizer.ggml.tokens")},
          {"merges", gguf.get_string_array("tokenizer.ggml.merges")},
          {"token_type", gguf.get_int_array("tokenizer.ggml.token_type")}};
}

// The files make_hf_references.py writes for one tokenizer, made once per process in a
// folder removed at exit. `skip_reason`: the tokenizers library (or the shared SmolLM2 file
// for "smollm2") is missing; `error`: the script failed otherwise (the test fails).
struct References {
  fs::path dir;
  std::string skip_reason;
  std::string error;
};

struct ReferencesRoot {
  fs::path dir = test::binary_dir() / "tmp" / ("hf_references." + std::to_string(::getpid()));
  ReferencesRoot() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~ReferencesRoot() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

References make_references(const fs::path& root, const std::string& name) {
  References r;
  r.dir = root / name;
  const fs::path script = fs::path(__FILE__).parent_path() / "make_hf_references.py";
  std::string command = "python3 '" + script.string() + "' '" + root.string() + "'";
  if (name == "smollm2") {
    const auto gguf = test::find_shared(kSmolLm2);
    if (!gguf) {
      r.skip_reason = "needs " + (test::shared_dir() / kSmolLm2).string();
      return r;
    }
    write_json(root / "smollm2_vocab.json", smollm2_vocab(gguf->string()));
    command += " '" + (root / "smollm2_vocab.json").string() + "'";
  }
  const fs::path log = root / (name + ".stderr.txt");
  const int status =
      std::system((command + " --only " + name + " 2>'" + log.string() + "'").c_str());
  if (status != 0) {
    std::ifstream err(log);
    const std::string text(std::istreambuf_iterator<char>(err), {});
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
      r.skip_reason = text + " (packaging/install-deps.sh installs it)";
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
      r.skip_reason = "needs python3 with the tokenizers package: " + text;
    } else {
      r.error = "make_hf_references.py failed (status " + std::to_string(status) + "): " + text;
    }
  }
  return r;
}

const References& references(const std::string& name) {
  static ReferencesRoot root;
  static std::map<std::string, References> made;
  auto it = made.find(name);
  if (it == made.end()) it = made.emplace(name, make_references(root.dir, name)).first;
  return it->second;
}

std::string ids_text(const std::vector<TokenId>& ids) {
  std::string s;
  for (const TokenId id : ids) s += std::to_string(id) + " ";
  return s;
}

class HfReferenceTest : public ::testing::TestWithParam<std::string> {};

// Every text gives the library's ids: as user text (special-token text stays text), with
// the post-processor's special tokens, as template control text, and decodes back.
TEST_P(HfReferenceTest, IdsEqualTheTokenizersLibrary) {
  const References& refs = references(GetParam());
  if (!refs.skip_reason.empty()) GTEST_SKIP() << refs.skip_reason;
  ASSERT_EQ(refs.error, "");
  const fs::path folder = refs.dir;
  const auto tok = load_hf_tokenizer((folder / "tokenizer.json").string());
  std::ifstream lines(folder / "expected.jsonl");
  int checked = 0;
  int failures = 0;
  for (std::string line; std::getline(lines, line) && failures < 8;) {
    const json row = json::parse(line);
    const std::string text = row["text"];
    const auto plain = row["plain"].get<std::vector<TokenId>>();
    const auto failed = [&](const char* what, const std::vector<TokenId>& got,
                            const std::vector<TokenId>& want) {
      ADD_FAILURE() << what << " of " << json(text).dump() << "\n  got  " << ids_text(got)
                    << "\n  want " << ids_text(want);
      ++failures;
    };
    if (const auto got = tok->encode(text, false); got != plain) failed("plain", got, plain);
    const auto wrapped = row["wrapped"].get<std::vector<TokenId>>();
    if (const auto got = tok->encode(text, true); got != wrapped) failed("wrapped", got, wrapped);
    const auto control = row["control"].get<std::vector<TokenId>>();
    const auto got = tok->encode_parts({{PromptPart::Kind::Control, text}}, false);
    if (got != control) failed("control", got, control);
    EXPECT_EQ(tok->decode(plain), row["decoded"].get<std::string>()) << json(text).dump();
    ++checked;
  }
  EXPECT_GE(checked, 1000);
}

// Random id sequences (bytes that are no whole character, special tokens, unk) decode to
// the library's text: byte-fallback runs and ByteLevel bytes made valid as it makes them.
TEST_P(HfReferenceTest, DecodeEqualsTheTokenizersLibrary) {
  const References& refs = references(GetParam());
  if (!refs.skip_reason.empty()) GTEST_SKIP() << refs.skip_reason;
  ASSERT_EQ(refs.error, "");
  const fs::path folder = refs.dir;
  const auto tok = load_hf_tokenizer((folder / "tokenizer.json").string());
  std::ifstream lines(folder / "decoded.jsonl");
  int checked = 0;
  int failures = 0;
  for (std::string line; std::getline(lines, line) && failures < 8; ++checked) {
    const json row = json::parse(line);
    const auto ids = row["ids"].get<std::vector<TokenId>>();
    const std::string got = tok->decode(ids);
    if (got != row["text"].get<std::string>()) {
      ADD_FAILURE() << "decode of " << ids_text(ids) << "\n  got  "
                    << json(got).dump(-1, ' ', false, json::error_handler_t::replace) << "\n  want "
                    << row["text"].dump();
      ++failures;
    }
  }
  EXPECT_GE(checked, 500);
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, HfReferenceTest,
                         ::testing::Values("smollm2", "llama3", "sp_bpe", "metaspace", "splits"));

// The SmolLM2 GGUF vocab written as a tokenizer.json (support/gguf_tokenizer_json.h, no
// Python) tokenizes like the GGUF tokenizer: the two byte-level paths share one merge engine
// and agree.
TEST(HfTokenizerTest, SmolLm2AsTokenizerJsonGivesTheGgufIds) {
  KVSCOPE_REQUIRE_SHARED(path, kSmolLm2);
  const GgufFile gguf(path);
  const json file = test::tokenizer_json_from_gguf(gguf);
  const auto json_path = test::scratch_dir() / "tokenizer.json";
  write_json(json_path, file);
  const auto hf = load_hf_tokenizer(json_path.string());
  const auto ref = make_bpe_tokenizer(gguf);
  for (const std::string text :
       {"Hello world! It's 2024, and 12345 apples cost $3.50.",
        "你好，世界！👨‍👩‍👧 emoji", "def f(x):\n    return x  *  2\n\n\n",
        "   spaces\t\ttabs\r\nCRLF", "<|im_start|>user"}) {
    EXPECT_EQ(hf->encode(text, false), ref->encode(text, false)) << text;
    EXPECT_EQ(hf->decode(hf->encode(text, false)), text);
  }
  const std::vector<PromptPart> parts = {{PromptPart::Kind::Control, "<|im_start|>user\n"},
                                         {PromptPart::Kind::Text, "hi <|im_end|>"},
                                         {PromptPart::Kind::Control, "<|im_end|>\n"}};
  EXPECT_EQ(hf->encode_parts(parts, false), ref->encode_parts(parts, false));
}

std::string load_error(const json& file, const Model::SpecialTokenFlags& flags = {}) {
  const std::string path = write_file(file);
  try {
    load_hf_tokenizer(path, flags);
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    return e.what();
  }
  return "(no error)";
}

TEST(HfTokenizerTest, MergesInStringAndPairFormsBothApply) {
  const auto tok = load_hf_tokenizer(write_file(tiny_file()));
  EXPECT_THAT(tok->encode("abc ab", false), ElementsAre(257, 0x20, 256));
  EXPECT_THAT(tok->encode("abc", true), ElementsAre(258, 257));  // the template's BOS
  EXPECT_EQ(tok->bos(), 258);
  EXPECT_TRUE(tok->add_bos_default());
  EXPECT_EQ(tok->kind(), "bpe (tokenizer.json)");
}

TEST(HfTokenizerTest, UserTextThatLooksLikeASpecialTokenStaysText) {
  const auto tok = load_hf_tokenizer(write_file(tiny_file()));
  EXPECT_THAT(tok->encode("</s>", false), ElementsAre('<', '/', 's', '>'));
  EXPECT_THAT(tok->encode_parts({{PromptPart::Kind::Text, "</s>"}}, false),
              ElementsAre('<', '/', 's', '>'));
  EXPECT_THAT(tok->encode_parts({{PromptPart::Kind::Control, "</s>"}}, false), ElementsAre(259));
  // split across a Control and a Text part: not a special token either
  EXPECT_THAT(
      tok->encode_parts({{PromptPart::Kind::Control, "</"}, {PromptPart::Kind::Text, "s>"}}, false),
      ElementsAre('<', '/', 's', '>'));
  EXPECT_TRUE(tok->is_special(259));
  EXPECT_EQ(tok->token_bytes(259), "");
}

TEST(HfTokenizerTest, InvalidUtf8IsRefused) {
  const auto tok = load_hf_tokenizer(write_file(tiny_file()));
  try {
    tok->encode("ab\xff", false);
    FAIL() << "no error";
  } catch (const TextError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not valid UTF-8"));
    EXPECT_THAT(e.what(), HasSubstr("offset 2"));
  }
  EXPECT_THROW(tok->encode_parts({{PromptPart::Kind::Text, "\xc3"}}, false), TextError);
}

// transformers rebuilds the template from tokenizer_config.json when it sets add_bos_token
// or add_eos_token; otherwise tokenizer.json's post_processor stands.
TEST(HfTokenizerTest, TokenizerConfigFlagsReplaceTheTemplateAsTransformersDoes) {
  const std::string path = write_file(tiny_file());
  Model::SpecialTokenFlags flags;
  flags.config_path = "tokenizer_config.json";
  flags.bos_token = "<s>";
  flags.eos_token = "</s>";
  EXPECT_THAT(load_hf_tokenizer(path, flags)->encode("ab", true), ElementsAre(258, 256));
  flags.add_bos = false;
  EXPECT_THAT(load_hf_tokenizer(path, flags)->encode("ab", true), ElementsAre(256));
  EXPECT_FALSE(load_hf_tokenizer(path, flags)->add_bos_default());
  flags.add_bos = true;
  flags.add_eos = true;
  const auto tok = load_hf_tokenizer(path, flags);
  EXPECT_THAT(tok->encode("ab", true), ElementsAre(258, 256, 259));
  EXPECT_EQ(tok->eos(), 259);
  EXPECT_TRUE(tok->is_end_of_generation(259));
  flags.eos_token = "<eos>";
  EXPECT_THAT(load_error(tiny_file(), flags),
              AllOf(HasSubstr("tokenizer_config.json: eos_token <eos> is not a token")));
}

TEST(HfTokenizerTest, EndOfTurnTokensEndAGeneration) {
  json file = tiny_file();
  file["model"]["vocab"]["<|eot_id|>"] = 260;
  file["added_tokens"].push_back({{"id", 260}, {"content", "<|eot_id|>"}, {"special", true}});
  const auto tok = load_hf_tokenizer(write_file(file));
  EXPECT_EQ(tok->eot(), 260);
  EXPECT_TRUE(tok->is_end_of_generation(260));
  EXPECT_FALSE(tok->is_end_of_generation(259));  // </s> is no eos here: no config names it
}

TEST(HfTokenizerTest, BrokenFilesAreModelErrorsNamingTheComponent) {
  json f = tiny_file();
  f["model"]["type"] = "Unigram";
  EXPECT_THAT(load_error(f), HasSubstr("model: type \"Unigram\" is not supported (only BPE)"));

  f = tiny_file();
  f["model"]["merges"].push_back("ab zz");
  EXPECT_THAT(load_error(f), HasSubstr("model.merges[2]: zz is not in the vocab"));

  f = tiny_file();
  f["model"]["merges"].push_back({"b", "c"});  // "bc" is no token
  EXPECT_THAT(load_error(f), HasSubstr("model.merges[2]: bc is not in the vocab"));

  f = tiny_file();
  f["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
  EXPECT_THAT(load_error(f), AllOf(HasSubstr("pre_tokenizer Split: pattern: Regex (unclosed"),
                                   HasSubstr("does not compile")));

  f = tiny_file();
  f["pre_tokenizer"] = {{"type", "Whitespace"}};
  EXPECT_THAT(load_error(f), HasSubstr("pre_tokenizer: type \"Whitespace\" is not supported"));

  f = tiny_file();
  f["normalizer"] = {{"type", "Precompiled"}};
  EXPECT_THAT(load_error(f), HasSubstr("normalizer: type \"Precompiled\" is not supported"));

  f = tiny_file();
  f["decoder"] = {{"type", "WordPiece"}};
  EXPECT_THAT(load_error(f), HasSubstr("decoder: type \"WordPiece\" is not supported"));

  f = tiny_file();
  f["post_processor"] = {{"type", "BertProcessing"}};
  EXPECT_THAT(load_error(f), HasSubstr("post_processor: type \"BertProcessing\" is not supported"));

  f = tiny_file();
  f["post_processor"]["special_tokens"]["<s>"]["ids"] = {9999};
  EXPECT_THAT(load_error(f),
              HasSubstr("special_tokens[<s>]: id number 9999 out of range (vocab size 260)"));

  f = tiny_file();
  f["model"]["vocab"]["dup"] = 5;
  EXPECT_THAT(load_error(f), HasSubstr("id 5 is given to another piece too"));

  f = tiny_file();
  f["model"]["unk_token"] = "<unk>";
  EXPECT_THAT(load_error(f), HasSubstr("model.unk_token: <unk> is not in the vocab"));

  f = tiny_file();
  f.erase("model");
  EXPECT_THAT(load_error(f), HasSubstr("no \"model\" object"));

  EXPECT_THROW(load_hf_tokenizer((test::scratch_dir() / "absent.json").string()), ModelError);
}

// Sizes and depths a small file claims are checked before they drive an allocation.
TEST(HfTokenizerTest, HostileSizesAndNestingAreRefusedUnbuilt) {
  json f = tiny_file();
  f["model"]["vocab"]["far"] = 16'000'000;  // would size every per-id table
  EXPECT_THAT(load_error(f), HasSubstr("token id 16000000 is far past the 263 pieces"));

  f = tiny_file();
  f["model"]["vocab"]["huge"] = std::int64_t{1} << 40;
  EXPECT_THAT(load_error(f), HasSubstr("model.vocab[huge]: expected an id in 0..16777215"));

  f = tiny_file();
  f["added_tokens"].push_back({{"id", 5}, {"content", ""}});
  EXPECT_THAT(load_error(f), HasSubstr("added_tokens[2]: content must be non-empty"));

  json deep = tiny_file();
  json* at = &deep["pre_tokenizer"];
  for (int i = 0; i < 12; ++i) {
    *at = {{"type", "Sequence"}, {"pretokenizers", json::array({json()})}};
    at = &(*at)["pretokenizers"][0];
  }
  EXPECT_THAT(load_error(deep), HasSubstr("expected a pre-tokenizer object"));

  const std::string nested = std::string(100'000, '[') + std::string(100'000, ']');
  const auto path = test::scratch_dir() / "tokenizer.json";
  std::ofstream(path) << R"({"model": )" << nested << "}";
  try {
    load_hf_tokenizer(path.string());
    ADD_FAILURE() << "no error";
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr("JSON nested more than 64 levels"));
  }
}

}  // namespace
}  // namespace kvscope
