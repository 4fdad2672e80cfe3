// Chat templates, rendered natively. GGUF files carry Jinja templates; KVScope never
// executes them: detect_template() recognises the family by its markers and render_chat()
// writes that family's real format. Markup is Control text (may hold special tokens);
// message content is Text (never becomes a special token, whatever it contains).
//
// The rendering never starts with BOS: encode it with
//   tokenizer.encode_parts(render_chat(...), tokenizer.add_bos_default())
// BOS/EOS *inside* a conversation (Llama 2's "</s><s>[INST]") are rendered as Control text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace kvscope {

enum class TemplateFamily {
  ChatML,   // <|im_start|>role\n...<|im_end|>\n (Qwen2, SmolLM2)
  Llama2,   // [INST] <<SYS>>\n...\n<</SYS>>\n\n... [/INST] ... </s><s>[INST] ...
  Mistral,  // Mistral tokenizer V1 (Mistral/Mixtral Instruct v0.1, v0.2): " [INST] ... [/INST]"
  Llama3,   // <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|>
  Zephyr,   // <|user|>\n...</s>\n (Zephyr, TinyLlama-Chat)
  Gemma,    // <start_of_turn>user\n...<end_of_turn>\n, "model" for the assistant
  Phi3,     // <|user|>\n...<|end|>\n
  Plain,    // an unrecognised template: "User: ...\n\nAssistant: ..." in plain words
  None,     // no template (base model): the contents back to back, a raw completion
};

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

// The family of a GGUF tokenizer.chat_template; None when absent or blank, Plain when the
// text is there but not recognised. Only looks for markers; never evaluates the template.
TemplateFamily detect_template(const std::optional<std::string>& jinja);

// The prompt for `messages` in `family`'s format. With `add_generation_prompt` it ends
// with the assistant's turn opened. Families without a system role (Llama 2, Mistral,
// Gemma) fold system text into the next user turn. Throws TextError on an unknown role.
std::vector<PromptPart> render_chat(TemplateFamily family, const std::vector<ChatMessage>& messages,
                                    bool add_generation_prompt);

// The parts' texts concatenated (what the model sees, for display and logs).
std::string prompt_text(const std::vector<PromptPart>& parts);

// "chatml", "llama2", "mistral", "llama3", "zephyr", "gemma", "phi3", "plain", "none".
std::string_view template_family_name(TemplateFamily family);
// The family named so (as template_family_name spells it); nullopt when unknown.
std::optional<TemplateFamily> template_family_from_name(std::string_view name);

// The text that closes an assistant turn ("<|im_end|>", "<|eot_id|>", "</s>", ...);
// empty for Plain and None, which have none.
std::string_view end_of_turn_marker(TemplateFamily family);
// Strings that end a reply if they show up in generated text: the end-of-turn marker and
// the opening of the next user turn. Empty for None.
std::vector<std::string_view> stop_strings(TemplateFamily family);

}  // namespace kvscope
