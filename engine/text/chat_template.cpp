#include "text/chat_template.h"

#include <array>

#include "util/error.h"

namespace kvscope {
namespace {

struct FamilyInfo {
  TemplateFamily family;
  std::string_view name;
  std::string_view end_of_turn;
  std::array<std::string_view, 2> stops;  // "" entries are unused
};

constexpr std::array kFamilies = {
    FamilyInfo{TemplateFamily::ChatML, "chatml", "<|im_end|>", {"<|im_end|>", "<|im_start|>"}},
    FamilyInfo{TemplateFamily::Llama2, "llama2", "</s>", {"</s>", "[INST]"}},
    FamilyInfo{TemplateFamily::Mistral, "mistral", "</s>", {"</s>", "[INST]"}},
    FamilyInfo{
        TemplateFamily::Llama3, "llama3", "<|eot_id|>", {"<|eot_id|>", "<|start_header_id|>"}},
    FamilyInfo{TemplateFamily::Zephyr, "zephyr", "</s>", {"</s>", "<|user|>"}},
    FamilyInfo{
        TemplateFamily::Gemma, "gemma", "<end_of_turn>", {"<end_of_turn>", "<start_of_turn>"}},
    FamilyInfo{TemplateFamily::Phi3, "phi3", "<|end|>", {"<|end|>", "<|user|>"}},
    FamilyInfo{TemplateFamily::Plain, "plain", "", {"\nUser:", ""}},
    FamilyInfo{TemplateFamily::None, "none", "", {"", ""}},
};

const FamilyInfo& info(TemplateFamily family) {
  for (const FamilyInfo& f : kFamilies) {
    if (f.family == family) return f;
  }
  throw_error<UsageError>("unknown template family {}", static_cast<int>(family));
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Jinja's `trim` / Python's strip(), for the ASCII whitespace templates meet in practice.
std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

enum class Role { System, User, Assistant };

// One turn to render. `system` holds system text folded into a user turn by the families
// that have no system role.
struct Turn {
  Role role;
  std::string_view content;
  std::string system;
};

std::vector<Turn> to_turns(const std::vector<ChatMessage>& messages, bool fold_system) {
  std::vector<Turn> turns;
  std::string pending;  // system text waiting for the next user turn
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "system") {
      if (!fold_system) {
        turns.push_back({Role::System, m.content, {}});
        continue;
      }
      pending += pending.empty() ? m.content : "\n\n" + m.content;
    } else if (m.role == "user") {
      turns.push_back({Role::User, m.content, std::move(pending)});
      pending.clear();
    } else if (m.role == "assistant") {
      turns.push_back({Role::Assistant, m.content, {}});
    } else {
      throw_error<TextError>(
          "chat message {}: unknown role '{}' (expected system, user or assistant)", i, m.role);
    }
  }
  if (!pending.empty()) turns.push_back({Role::User, {}, std::move(pending)});
  return turns;
}

std::string_view role_name(Role role) {
  switch (role) {
    case Role::System:
      return "system";
    case Role::User:
      return "user";
    case Role::Assistant:
      return "assistant";
  }
  return "user";
}

// Collects the parts; adjacent Control parts are joined when taken.
class PromptBuilder {
 public:
  void control(std::string_view s) { add(PromptPart::Kind::Control, s); }
  void text(std::string_view s) { add(PromptPart::Kind::Text, s); }
  bool empty() const { return parts_.empty(); }
  std::size_t mark() const { return parts_.size(); }

  // Python's strip() over the text of the parts added since `from`, as if they were one
  // string (Llama 2 strips "<<SYS>>...<</SYS>>\n\n" + content as a whole).
  void strip_since(std::size_t from) {
    for (std::size_t i = from; i < parts_.size(); ++i) {
      std::string& t = parts_[i].text;
      std::size_t n = 0;
      while (n < t.size() && is_space(t[n])) ++n;
      t.erase(0, n);
      if (!t.empty()) break;
    }
    for (std::size_t i = parts_.size(); i-- > from;) {
      std::string& t = parts_[i].text;
      while (!t.empty() && is_space(t.back())) t.pop_back();
      if (!t.empty()) break;
    }
    std::erase_if(parts_, [](const PromptPart& p) { return p.text.empty(); });
  }

  std::vector<PromptPart> take() {
    std::vector<PromptPart> out;
    for (PromptPart& p : parts_) {
      if (!out.empty() && p.kind == PromptPart::Kind::Control &&
          out.back().kind == PromptPart::Kind::Control) {
        out.back().text += p.text;
      } else {
        out.push_back(std::move(p));
      }
    }
    parts_.clear();
    return out;
  }

 private:
  void add(PromptPart::Kind kind, std::string_view s) {
    if (!s.empty()) parts_.push_back({kind, std::string(s)});
  }
  std::vector<PromptPart> parts_;
};

// <|im_start|>role\ncontent<|im_end|>\n ... <|im_start|>assistant\n
void render_chatml(const std::vector<Turn>& turns, bool gen, PromptBuilder& b) {
  for (const Turn& t : turns) {
    b.control(fmt::format("<|im_start|>{}\n", role_name(t.role)));
    b.text(t.content);
    b.control("<|im_end|>\n");
  }
  if (gen) b.control("<|im_start|>assistant\n");
}

// Meta's template: every user turn is "<s>[INST] " + strip(sys block + content) + " [/INST]",
// every answer " " + strip(content) + " </s>". The leading <s> is the tokenizer's BOS.
void render_llama2(const std::vector<Turn>& turns, PromptBuilder& b) {
  for (const Turn& t : turns) {
    if (t.role == Role::Assistant) {
      b.control(" ");
      b.text(trim(t.content));
      b.control(" </s>");
      continue;
    }
    b.control(b.empty() ? "[INST] " : "<s>[INST] ");
    const std::size_t mark = b.mark();
    if (!t.system.empty()) {
      b.control("<<SYS>>\n");
      b.text(t.system);
      b.control("\n<</SYS>>\n\n");
    }
    b.text(t.content);
    b.strip_since(mark);
    b.control(" [/INST]");
  }
}

// Mistral tokenizer V1 (mistral-common, Mistral's cookbook): system text is prepended to
// the user message it precedes.
void render_mistral(const std::vector<Turn>& turns, PromptBuilder& b) {
  for (const Turn& t : turns) {
    if (t.role == Role::Assistant) {
      b.control(" ");
      b.text(t.content);
      b.control("</s>");
      continue;
    }
    b.control(" [INST] ");
    if (!t.system.empty()) {
      b.text(t.system);
      b.control("\n\n");
    }
    b.text(t.content);
    b.control(" [/INST]");
  }
}

void render_llama3(const std::vector<Turn>& turns, bool gen, PromptBuilder& b) {
  for (const Turn& t : turns) {
    b.control(fmt::format("<|start_header_id|>{}<|end_header_id|>\n\n", role_name(t.role)));
    b.text(trim(t.content));
    b.control("<|eot_id|>");
  }
  if (gen) b.control("<|start_header_id|>assistant<|end_header_id|>\n\n");
}

// Zephyr and Phi-3 share a shape: <|role|>\ncontent END\n ... <|assistant|>\n
void render_tagged(const std::vector<Turn>& turns, bool gen, std::string_view end,
                   PromptBuilder& b) {
  for (const Turn& t : turns) {
    b.control(fmt::format("<|{}|>\n", role_name(t.role)));
    b.text(t.content);
    b.control(fmt::format("{}\n", end));
  }
  if (gen) b.control("<|assistant|>\n");
}

void render_gemma(const std::vector<Turn>& turns, bool gen, PromptBuilder& b) {
  for (const Turn& t : turns) {
    b.control(t.role == Role::Assistant ? "<start_of_turn>model\n" : "<start_of_turn>user\n");
    if (!t.system.empty()) {
      b.text(trim(t.system));
      b.control("\n\n");
    }
    b.text(trim(t.content));
    b.control("<end_of_turn>\n");
  }
  if (gen) b.control("<start_of_turn>model\n");
}

void render_plain(const std::vector<Turn>& turns, bool gen, PromptBuilder& b) {
  for (const Turn& t : turns) {
    if (t.role == Role::User) b.control("User: ");
    if (t.role == Role::Assistant) b.control("Assistant: ");
    b.text(t.content);
    b.control("\n\n");
  }
  if (gen) b.control("Assistant:");
}

}  // namespace

TemplateFamily detect_template(const std::optional<std::string>& jinja) {
  if (!jinja || trim(*jinja).empty()) return TemplateFamily::None;
  const auto has = [&](std::string_view marker) {
    return jinja->find(marker) != std::string::npos;
  };
  if (has("<|im_start|>")) return TemplateFamily::ChatML;
  if (has("[INST]")) return has("<<SYS>>") ? TemplateFamily::Llama2 : TemplateFamily::Mistral;
  if (has("<|start_header_id|>")) return TemplateFamily::Llama3;
  if (has("<start_of_turn>")) return TemplateFamily::Gemma;
  // Phi-3 closes turns with <|end|>; Zephyr with the EOS token ("</s>" or eos_token).
  if (has("<|user|>")) return has("<|end|>") ? TemplateFamily::Phi3 : TemplateFamily::Zephyr;
  return TemplateFamily::Plain;
}

std::vector<PromptPart> render_chat(TemplateFamily family, const std::vector<ChatMessage>& messages,
                                    bool add_generation_prompt) {
  const bool fold_system = family == TemplateFamily::Llama2 || family == TemplateFamily::Mistral ||
                           family == TemplateFamily::Gemma;
  const std::vector<Turn> turns = to_turns(messages, fold_system);
  const bool gen = add_generation_prompt;
  PromptBuilder b;
  switch (family) {
    case TemplateFamily::ChatML:
      render_chatml(turns, gen, b);
      break;
    case TemplateFamily::Llama2:
      render_llama2(turns, b);
      break;  // [/INST] opens the answer
    case TemplateFamily::Mistral:
      render_mistral(turns, b);
      break;
    case TemplateFamily::Llama3:
      render_llama3(turns, gen, b);
      break;
    case TemplateFamily::Zephyr:
      render_tagged(turns, gen, "</s>", b);
      break;
    case TemplateFamily::Gemma:
      render_gemma(turns, gen, b);
      break;
    case TemplateFamily::Phi3:
      render_tagged(turns, gen, "<|end|>", b);
      break;
    case TemplateFamily::Plain:
      render_plain(turns, gen, b);
      break;
    case TemplateFamily::None:
      for (const Turn& t : turns) b.text(t.content);
      break;
  }
  return b.take();
}

std::string prompt_text(const std::vector<PromptPart>& parts) {
  std::string out;
  for (const PromptPart& p : parts) out += p.text;
  return out;
}

std::string_view template_family_name(TemplateFamily family) {
  return info(family).name;
}

std::optional<TemplateFamily> template_family_from_name(std::string_view name) {
  for (const FamilyInfo& f : kFamilies) {
    if (f.name == name) return f.family;
  }
  return std::nullopt;
}

std::string_view end_of_turn_marker(TemplateFamily family) {
  return info(family).end_of_turn;
}

std::vector<std::string_view> stop_strings(TemplateFamily family) {
  std::vector<std::string_view> out;
  for (const std::string_view s : info(family).stops) {
    if (!s.empty()) out.push_back(s);
  }
  return out;
}

}  // namespace kvscope
