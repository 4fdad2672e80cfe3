// libFuzzer harness: a GGUF chat template's text (detected by markers, never evaluated), and
// a conversation cut from the same bytes rendered in every template family.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "text/chat_template.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)kvscope::detect_template(std::optional<std::string>(text));
  // messages: the input split at '\x01'; each piece's first byte picks the role
  std::vector<kvscope::ChatMessage> messages;
  static const char* const kRoles[] = {"system", "user", "assistant", "tool"};
  std::size_t begin = 0;
  while (begin <= text.size() && messages.size() < 16) {
    std::size_t end = text.find('\x01', begin);
    if (end == std::string::npos) end = text.size();
    const std::string piece = text.substr(begin, end - begin);
    const char* role = kRoles[piece.empty() ? 1 : static_cast<unsigned char>(piece[0]) % 4];
    messages.push_back({role, piece});
    begin = end + 1;
  }
  for (const char* name :
       {"chatml", "llama2", "mistral", "llama3", "zephyr", "gemma", "phi3", "plain", "none"}) {
    const auto family = kvscope::template_family_from_name(name);
    if (!family) continue;
    for (bool open : {true, false}) {
      try {
        (void)kvscope::prompt_text(kvscope::render_chat(*family, messages, open));
      } catch (const kvscope::Error&) {
      }
    }
  }
  return 0;
}
