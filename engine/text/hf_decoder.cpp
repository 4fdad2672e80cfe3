#include "text/hf_decoder.h"

#include "model/hf_json.h"
#include "model/json_reader.h"
#include "text/byte_unicode.h"
#include "text/encode_budget.h"
#include "text/hf_normalizer.h"
#include "util/error.h"

namespace kvscope {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = 8;

// "<0x41>" -> 0x41; -1 for any other piece.
int byte_token_value(std::string_view piece) {
  if (piece.size() != 6 || !piece.starts_with("<0x") || piece[5] != '>') return -1;
  int value = 0;
  for (const char c : piece.substr(3, 2)) {
    const int digit = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                             : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

// Removes up to `count` copies of `what` from the front (or back) of `text`.
std::string strip_repeated(std::string text, std::string_view what, int start, int stop) {
  for (int i = 0; i < start && !what.empty() && text.starts_with(what); ++i) {
    text.erase(0, what.size());
  }
  for (int i = 0; i < stop && !what.empty() && text.ends_with(what); ++i) {
    text.erase(text.size() - what.size());
  }
  return text;
}

}  // namespace

HfDecoder::HfDecoder(const json& config, const std::string& source) {
  add(config, source + ": decoder", 0);
}

void HfDecoder::add(const json& config, const std::string& where, int depth) {
  if (config.is_null()) return;
  if (!config.is_object() || depth > kMaxDepth) {
    throw_error<ModelError>("{}: expected a decoder object, found {}", where,
                            describe_json(config));
  }
  const auto type = hf::find_string(config, "type", where);
  if (!type) throw_error<ModelError>("{}: no \"type\"", where);
  const std::string here = where + " " + *type;
  std::vector<Step>& steps = fused_ ? whole_text_ : per_token_;
  if (per_token_.size() + whole_text_.size() >= kMaxSteps && *type != "Sequence") {
    throw_error<ModelError>("{}: more than {} steps", where, kMaxSteps);
  }
  if (*type == "Sequence") {
    const auto it = config.find("decoders");
    if (it == config.end() || !it->is_array()) {
      throw_error<ModelError>("{}: decoders: expected a list", here);
    }
    for (const json& item : *it) add(item, here, depth + 1);
  } else if (*type == "ByteLevel") {
    steps.push_back({Kind::ByteLevel, "", ""});
  } else if (*type == "ByteFallback") {
    steps.push_back({Kind::ByteFallback, "", ""});
  } else if (*type == "Fuse") {
    fused_ = true;
  } else if (*type == "Replace") {
    std::string literal;
    const auto pattern = config.find("pattern");
    if (read_hf_pattern(pattern == config.end() ? json() : *pattern, here, literal)) {
      throw_error<ModelError>("{}: a Regex pattern is not supported here (only String)", here);
    }
    const std::string content = hf::find_string(config, "content", here).value_or("");
    if (content.size() > kMaxInsertedBytes) {
      throw_error<ModelError>("{}: content is {} bytes, more than the {} a step may insert", here,
                              content.size(), kMaxInsertedBytes);
    }
    steps.push_back({Kind::Replace, literal, content});
    steps.back().name = here;
  } else if (*type == "Strip") {
    const std::string content = hf::find_string(config, "content", here).value_or(" ");
    const auto start = hf::find_int(config, "start", here).value_or(0);
    const auto stop = hf::find_int(config, "stop", here).value_or(0);
    if (start < 0 || stop < 0 || start > 1024 || stop > 1024) {
      throw_error<ModelError>("{}: start {} / stop {} out of range (0..1024)", here, start, stop);
    }
    steps.push_back({Kind::Strip, content, "", static_cast<int>(start), static_cast<int>(stop)});
  } else if (*type == "Metaspace") {
    // "▁" becomes a space, but in the first token the library drops every "▁" (its
    // decode_chain tests i == 0 per character), not only the one it prepended.
    const std::string replacement =
        hf::find_string(config, "replacement", here).value_or("\xe2\x96\x81");
    const std::string scheme = hf::find_string(config, "prepend_scheme", here).value_or("always");
    Step step{Kind::Metaspace, replacement, " "};
    step.prepend = scheme != "never";
    first_differs_ = first_differs_ || step.prepend;
    steps.push_back(std::move(step));
  } else {
    throw_error<ModelError>(
        "{}: type \"{}\" is not supported (ByteLevel, Replace, ByteFallback, Fuse, Strip, "
        "Metaspace, Sequence)",
        where, quote_prefix(*type));
  }
}

std::string HfDecoder::run(const Step& step, std::string text, bool first) {
  switch (step.kind) {
    case Kind::ByteLevel:
      // HF keeps a piece with a character outside the byte alphabet as it is.
      return unicode_to_bytes(text).value_or(text);
    case Kind::Replace:  // the only step that may grow a piece
      check_step_growth(step.name, text.size(), replaced_size(text, step.pattern, step.content));
      return replace_all(text, step.pattern, step.content);
    case Kind::ByteFallback: {
      const int b = byte_token_value(text);
      return b < 0 ? text : std::string(1, static_cast<char>(b));
    }
    case Kind::Strip:
      return strip_repeated(std::move(text), step.pattern, step.start, step.stop);
    case Kind::Metaspace:
      return replace_all(text, step.pattern, first && step.prepend ? "" : step.content);
  }
  return text;
}

std::string HfDecoder::token_bytes(std::string_view piece, bool first) const {
  std::string text(piece);
  for (const Step& step : per_token_) text = run(step, std::move(text), first);
  return text;
}

bool HfDecoder::has(Kind kind) const {
  for (const Step& step : per_token_) {
    if (step.kind == kind) return true;
  }
  return false;
}

int HfDecoder::byte_fallback_value(std::string_view piece) const {
  return has(Kind::ByteFallback) ? byte_token_value(piece) : -1;
}

std::string HfDecoder::finish(std::string text) const {
  for (const Step& step : whole_text_) text = run(step, std::move(text), false);
  return text;
}

}  // namespace kvscope
