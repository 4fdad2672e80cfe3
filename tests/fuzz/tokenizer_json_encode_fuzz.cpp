// libFuzzer harness: a fuzzed tokenizer.json *and* a fuzzed text, the input being the
// tokenizer's JSON, a NUL byte, then the text (no NUL: the JSON alone, encoding a few fixed
// texts). When the tokenizer loads, the text is encoded as user text and as template control
// text, and the ids are decoded. A bad input must be a kvscope::Error; tests/fuzz/run.sh
// runs it with a time and a memory budget per input (-timeout, -malloc_limit_mb,
// -rss_limit_mb), so a slow or big unit is a finding like a crash.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "text/hf_tokenizer.h"
#include "util/error.h"

namespace {

void encode_and_decode(const kvscope::Tokenizer& tok, const std::string& text) {
  using kvscope::PromptPart;
  try {
    (void)tok.decode(tok.encode(text, true));
  } catch (const kvscope::TextError&) {
  }
  try {
    const std::size_t half = text.size() / 2;
    (void)tok.decode(tok.encode_parts({{PromptPart::Kind::Control, text.substr(0, half)},
                                       {PromptPart::Kind::Text, text.substr(half)}},
                                      false));
  } catch (const kvscope::TextError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view json = input.substr(0, nul);
  try {
    const auto tok = kvscope::parse_hf_tokenizer(json, "tokenizer.json");
    if (nul != std::string_view::npos) {
      encode_and_decode(*tok, std::string(input.substr(nul + 1)));
    } else {
      for (const char* text :
           {"Hello world 123", "<s>\xe4\xbd\xa0 </s>  \n\t x \xf0\x9f\x91\x8d"}) {
        encode_and_decode(*tok, text);
      }
    }
  } catch (const kvscope::Error&) {
  }
  return 0;
}
