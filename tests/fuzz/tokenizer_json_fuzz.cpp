// libFuzzer harness: a Hugging Face tokenizer.json, as make_tokenizer reads it from a folder;
// when it loads, a few texts (special-token text, invalid UTF-8 included) are encoded as user
// text and as template control text, and every id is decoded.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/hf_tokenizer.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kvscope::PromptPart;
  try {
    const auto tok = kvscope::parse_hf_tokenizer(
        std::string_view(reinterpret_cast<const char*>(data), size), "tokenizer.json");
    for (const std::string text :
         {"Hello world 123", "<s>\xe4\xbd\xa0 </s> \xf0\x9f\x91\x8d", "  \n\t x", "bad \xff"}) {
      try {
        const auto ids = tok->encode(text, true);
        (void)tok->decode(ids);
        (void)tok->encode_parts({{PromptPart::Kind::Control, text}}, false);
      } catch (const kvscope::TextError&) {
      }
    }
    std::vector<kvscope::TokenId> all;
    for (kvscope::TokenId id = 0; id < tok->vocab_size() && id < 4096; ++id) {
      (void)tok->token_bytes(id);
      (void)tok->piece(id);
      all.push_back(id);
    }
    (void)tok->decode(all);
  } catch (const kvscope::Error&) {
  }
  return 0;
}
