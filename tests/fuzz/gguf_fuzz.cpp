// libFuzzer harness: a GGUF file, read as `inspect` and the loader read it: header,
// metadata, tensor infos, then the model (architecture, shapes) and its tokenizer.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "model/gguf/gguf_file.h"
#include "model/model.h"
#include "text/tokenizer.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const kvscope::fuzz::MemoryFile file(data, size);
  try {
    const kvscope::GgufFile gguf(file.path());
    (void)gguf.tensors().size();
  } catch (const kvscope::Error&) {
    return 0;
  }
  try {
    const auto model = kvscope::load_model(file.path());
    const auto tokenizer = kvscope::make_tokenizer(*model);
    (void)tokenizer->encode("Hello, world! 你好 <|im_end|>", true);
  } catch (const kvscope::Error&) {
  }
  return 0;
}
