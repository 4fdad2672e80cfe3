#include "text/hf_normalizer.h"

#include <fmt/format.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include "model/hf_json.h"
#include "model/json_reader.h"
#include "text/encode_budget.h"
#include "util/error.h"

namespace kvscope {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = 8;  // Sequence inside Sequence; real files nest one level

std::string type_of(const json& config, const std::string& where) {
  const auto type = hf::find_string(config, "type", where);
  if (!type) throw_error<ModelError>("{}: no \"type\"", where);
  return *type;
}

// UTF-8 <-> UTF-16 through ICU, for the normalization forms and case mapping.
std::u16string to_utf16(std::string_view text) {
  std::u16string out(text.size(), u'\0');
  int32_t length = 0;
  UErrorCode status = U_ZERO_ERROR;
  u_strFromUTF8(reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()), &length,
                text.data(), static_cast<int32_t>(text.size()), &status);
  if (U_FAILURE(status)) throw_error<TextError>("normalizer: text is not UTF-8");
  out.resize(static_cast<std::size_t>(length));
  return out;
}

std::string to_utf8(const std::u16string& text) {
  std::string out(text.size() * 3, '\0');
  int32_t length = 0;
  UErrorCode status = U_ZERO_ERROR;
  u_strToUTF8(out.data(), static_cast<int32_t>(out.size()), &length,
              reinterpret_cast<const UChar*>(text.data()), static_cast<int32_t>(text.size()),
              &status);
  if (U_FAILURE(status)) throw_error<TextError>("normalizer: cannot encode UTF-8");
  out.resize(static_cast<std::size_t>(length));
  return out;
}

const UNormalizer2* unicode_form(std::string_view form) {
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* n = nullptr;
  if (form == "NFC") n = unorm2_getNFCInstance(&status);
  if (form == "NFD") n = unorm2_getNFDInstance(&status);
  if (form == "NFKC") n = unorm2_getNFKCInstance(&status);
  if (form == "NFKD") n = unorm2_getNFKDInstance(&status);
  if (U_FAILURE(status) || n == nullptr) throw_error<TextError>("ICU has no {} data", form);
  return n;
}

std::string normalize(const std::string& text, std::string_view form) {
  const std::u16string in = to_utf16(text);
  // Decomposition grows text at most 18x per code unit (NFKD); retry with ICU's size.
  std::u16string out(in.size() * 3 + 16, u'\0');
  for (int attempt = 0; attempt < 2; ++attempt) {
    UErrorCode status = U_ZERO_ERROR;
    const int32_t n =
        unorm2_normalize(unicode_form(form), reinterpret_cast<const UChar*>(in.data()),
                         static_cast<int32_t>(in.size()), reinterpret_cast<UChar*>(out.data()),
                         static_cast<int32_t>(out.size()), &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) {
      out.assign(static_cast<std::size_t>(n), u'\0');
      continue;
    }
    if (U_FAILURE(status)) throw_error<TextError>("{} normalization failed", form);
    out.resize(static_cast<std::size_t>(n));
    return to_utf8(out);
  }
  throw_error<TextError>("{} normalization failed", form);
}

std::string lowercase(const std::string& text) {
  const std::u16string in = to_utf16(text);
  std::u16string out(in.size() + 16, u'\0');
  for (int attempt = 0; attempt < 2; ++attempt) {
    UErrorCode status = U_ZERO_ERROR;
    const int32_t n = u_strToLower(
        reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()),
        reinterpret_cast<const UChar*>(in.data()), static_cast<int32_t>(in.size()), "", &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) {
      out.assign(static_cast<std::size_t>(n), u'\0');
      continue;
    }
    if (U_FAILURE(status)) throw_error<TextError>("lowercase failed");
    out.resize(static_cast<std::size_t>(n));
    return to_utf8(out);
  }
  throw_error<TextError>("lowercase failed");
}

std::string strip(const std::string& text, bool left, bool right) {
  std::size_t begin = 0;
  std::size_t end = text.size();
  if (left) {
    for (std::size_t i = 0; i < text.size();) {
      if (!is_unicode_space(next_code_point(text, i))) break;
      begin = i;
    }
  }
  if (right) {
    std::size_t last_end = begin;  // end of the last non-space code point
    for (std::size_t i = begin; i < text.size();) {
      if (!is_unicode_space(next_code_point(text, i))) last_end = i;
    }
    end = last_end;
  }
  return text.substr(begin, end - begin);
}

// A string field whose text a step inserts: at most kMaxInsertedBytes.
std::string inserted_text(const json& config, const char* field, const std::string& where) {
  std::string text = hf::find_string(config, field, where).value_or("");
  if (text.size() > kMaxInsertedBytes) {
    throw_error<ModelError>("{}: {} is {} bytes, more than the {} a step may insert", where, field,
                            text.size(), kMaxInsertedBytes);
  }
  return text;
}

}  // namespace

char32_t next_code_point(std::string_view text, std::size_t& i) {
  const auto c = static_cast<unsigned char>(text[i]);
  const std::size_t len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
  char32_t cp = len == 1 ? c : c & (0xff >> (len + 1));
  for (std::size_t k = 1; k < len && i + k < text.size(); ++k) {
    cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3fu);
  }
  i += len;
  return cp;
}

bool is_unicode_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f ||
         c == 0x3000;
}

std::string replace_all(std::string_view text, std::string_view pattern, std::string_view content) {
  if (pattern.empty()) return std::string(text);
  std::string out;
  std::size_t pos = 0;
  for (std::size_t hit = text.find(pattern); hit != std::string_view::npos;
       hit = text.find(pattern, pos)) {
    out.append(text.substr(pos, hit - pos)).append(content);
    pos = hit + pattern.size();
  }
  return out.append(text.substr(pos));
}

std::shared_ptr<const Pcre2Regex> read_hf_pattern(const json& pattern, const std::string& where,
                                                  std::string& literal) {
  if (pattern.is_object() && pattern.size() == 1) {
    if (const auto s = hf::find_string(pattern, "String", where)) {
      if (s->empty()) throw_error<ModelError>("{}: pattern: the String is empty", where);
      literal = *s;
      return nullptr;
    }
    if (const auto r = hf::find_string(pattern, "Regex", where)) {
      try {
        return std::make_shared<const Pcre2Regex>(*r);
      } catch (const TextError& e) {
        throw_error<ModelError>("{}: pattern: Regex {}: {}", where, quote_prefix(*r), e.what());
      }
    }
  }
  throw_error<ModelError>(
      "{}: pattern: expected {{\"String\": ...}} or {{\"Regex\": ...}}, found {}", where,
      describe_json(pattern));
}

HfNormalizer::HfNormalizer(const json& config, const std::string& source) {
  add(config, source + ": normalizer", 0);
}

void HfNormalizer::add(const json& config, const std::string& where, int depth) {
  if (config.is_null()) return;
  if (!config.is_object() || depth > kMaxDepth) {
    throw_error<ModelError>("{}: expected a normalizer object, found {}", where,
                            describe_json(config));
  }
  const std::string type = type_of(config, where);
  const std::string here = where + " " + type;
  if (steps_.size() >= kMaxSteps && type != "Sequence") {
    throw_error<ModelError>("{}: more than {} steps", where, kMaxSteps);
  }
  if (type == "Sequence") {
    const auto it = config.find("normalizers");
    if (it == config.end() || !it->is_array()) {
      throw_error<ModelError>("{}: normalizers: expected a list", here);
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      add((*it)[i], fmt::format("{}[{}]", here, i), depth + 1);
    }
    return;
  } else if (type == "Prepend") {
    steps_.push_back({Kind::Prepend, inserted_text(config, "prepend", here), "", {}});
  } else if (type == "Replace") {
    Step step{Kind::Replace, "", inserted_text(config, "content", here), {}};
    const auto it = config.find("pattern");
    step.regex = read_hf_pattern(it == config.end() ? json() : *it, here, step.text);
    steps_.push_back(std::move(step));
  } else if (type == "Strip") {
    Step step{Kind::Strip, "", "", {}};
    step.left = hf::find_bool(config, "strip_left", here).value_or(false);
    step.right = hf::find_bool(config, "strip_right", here).value_or(false);
    steps_.push_back(std::move(step));
  } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    unicode_form(type);  // fails here, at load, if ICU lacks the data
    steps_.push_back({Kind::Unicode, type, "", {}});
  } else if (type == "Lowercase") {
    steps_.push_back({Kind::Lowercase, "", "", {}});
  } else {
    throw_error<ModelError>(
        "{}: type \"{}\" is not supported (Prepend, Replace, Strip, NFC, NFD, NFKC, NFKD, "
        "Lowercase, Sequence)",
        where, quote_prefix(type));
  }
  steps_.back().name = here;
}

// One step on `text` (not empty). Steps that insert the file's text check the size they
// would make first; the Unicode forms (at most 18 code points for one) and case mapping
// grow it by Unicode's own bounds, and apply() charges every step what it made.
std::string HfNormalizer::run(const Step& step, const std::string& text, EncodeBudget& budget) {
  switch (step.kind) {
    case Kind::Prepend:
      budget.check_growth(step.name, text.size(), step.text.size() + text.size());
      return step.text + text;
    case Kind::Replace: {
      if (!step.regex) {
        budget.check_growth(step.name, text.size(), replaced_size(text, step.text, step.content));
        return replace_all(text, step.text, step.content);
      }
      const auto matches = step.regex->find_all(text, budget.regex());
      std::size_t size = text.size();
      for (const Pcre2Regex::Match m : matches) size += step.content.size() - (m.end - m.begin);
      budget.check_growth(step.name, text.size(), size);
      std::string out;
      out.reserve(size);
      std::size_t pos = 0;
      for (const Pcre2Regex::Match m : matches) {
        out.append(text, pos, m.begin - pos).append(step.content);
        pos = m.end;
      }
      return out.append(text, pos);
    }
    case Kind::Strip:
      return strip(text, step.left, step.right);
    case Kind::Unicode:
      return normalize(text, step.text);
    case Kind::Lowercase:
      return lowercase(text);
  }
  return text;
}

std::string HfNormalizer::apply(std::string text, EncodeBudget& budget) const {
  for (const Step& step : steps_) {
    if (text.empty()) break;  // every step maps "" to ""
    try {
      text = run(step, text, budget);
      budget.charge_made(step.name, text.size());
    } catch (const TextError& e) {
      if (std::string_view(e.what()).starts_with(step.name)) throw;
      throw_error<TextError>("{}: {}", step.name, e.what());
    }
  }
  return text;
}

}  // namespace kvscope
