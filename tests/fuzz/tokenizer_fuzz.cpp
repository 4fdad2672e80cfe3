// libFuzzer harness: arbitrary bytes through the two tokenizer families of real models,
// stories260K's SentencePiece vocab and SmolLM2's byte-level BPE (from the shared models
// folder): encode as text, as a rendered prompt's text part, and decode the bytes read as
// token ids (out-of-range ids included: a clear error, never a crash).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "model/model.h"
#include "text/tokenizer.h"
#include "util/error.h"

namespace {

struct Loaded {
  std::unique_ptr<kvscope::Model> model;
  std::unique_ptr<kvscope::Tokenizer> tokenizer;
};

std::vector<Loaded>& tokenizers() {
  static std::vector<Loaded> all = [] {
    std::vector<Loaded> out;
    for (const char* name : {"stories260K.gguf", "SmolLM2-135M-Instruct.Q4_1.gguf"}) {
      const std::string path = kvscope::fuzz::shared_dir() + "/models/" + name;
      try {
        Loaded l;
        l.model = kvscope::load_model(path);
        l.tokenizer = kvscope::make_tokenizer(*l.model);
        out.push_back(std::move(l));
      } catch (const kvscope::Error& e) {
        std::fprintf(stderr, "tokenizer_fuzz: skipping %s: %s\n", path.c_str(), e.what());
      }
    }
    if (out.empty()) std::fprintf(stderr, "tokenizer_fuzz: no model found, nothing to fuzz\n");
    return out;
  }();
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const Loaded& l : tokenizers()) {
    const kvscope::Tokenizer& tok = *l.tokenizer;
    try {
      const auto ids = tok.encode(text, true);
      (void)tok.decode(ids);
      (void)tok.encode_parts({{kvscope::PromptPart::Kind::Text, text}}, false);
    } catch (const kvscope::Error&) {
    }
    std::vector<kvscope::TokenId> ids;
    for (std::size_t i = 0; i + 4 <= size && ids.size() < 256; i += 4) {
      std::int32_t id = 0;
      std::memcpy(&id, data + i, 4);
      ids.push_back(id % (tok.vocab_size() + 8));  // a few past the end, and negatives
    }
    try {
      (void)tok.decode(ids);
    } catch (const kvscope::Error&) {
    }
  }
  return 0;
}
