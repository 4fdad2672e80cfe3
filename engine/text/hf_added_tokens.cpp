#include "text/hf_added_tokens.h"

#include <algorithm>

#include <fmt/format.h>

#include "model/hf_json.h"
#include "model/json_reader.h"
#include "text/hf_normalizer.h"
#include "util/error.h"
#include "util/utf8.h"

namespace kvscope {
namespace {

using nlohmann::json;

// Bytes of whitespace just before `end` (not below `floor`) / just from `begin` on.
std::size_t space_before(std::string_view text, std::size_t floor, std::size_t end) {
  std::size_t begin = end;
  while (begin > floor) {
    std::size_t lead = begin - 1;
    while (lead > floor && (static_cast<unsigned char>(text[lead]) & 0xc0) == 0x80) --lead;
    std::size_t i = lead;
    if (!is_unicode_space(next_code_point(text, i))) break;
    begin = lead;
  }
  return end - begin;
}

std::size_t space_after(std::string_view text, std::size_t begin) {
  std::size_t end = begin;
  while (end < text.size()) {
    std::size_t i = end;
    if (!is_unicode_space(next_code_point(text, i))) break;
    end = i;
  }
  return end - begin;
}

}  // namespace

HfAddedTokens::HfAddedTokens(const json& config, const std::string& source) {
  const std::string where = source + ": added_tokens";
  if (config.is_null()) return;
  if (!config.is_array()) {
    throw_error<ModelError>("{}: expected a list, found {}", where, describe_json(config));
  }
  if (config.size() > kMaxTokens) {
    throw_error<ModelError>("{}: {} tokens, more than the {} this reader accepts", where,
                            config.size(), kMaxTokens);
  }
  std::size_t content_bytes = 0;
  for (std::size_t i = 0; i < config.size(); ++i) {
    const json& t = config[i];
    const std::string field = fmt::format("{}[{}]", where, i);
    HfAddedToken token;
    const std::int64_t id = hf::get_int(t, "id", field);
    if (id < 0 || id >= (std::int64_t{1} << 24)) {
      throw_error<ModelError>("{}: id {} out of range", field, id);
    }
    token.id = static_cast<TokenId>(id);
    token.content = hf::find_string(t, "content", field).value_or("");
    if (token.content.empty() || !is_valid_utf8(token.content)) {
      throw_error<ModelError>("{}: content must be non-empty UTF-8 text", field);
    }
    token.special = hf::find_bool(t, "special", field).value_or(false);
    token.normalized = hf::find_bool(t, "normalized", field).value_or(!token.special);
    token.lstrip = hf::find_bool(t, "lstrip", field).value_or(false);
    token.rstrip = hf::find_bool(t, "rstrip", field).value_or(false);
    token.single_word = hf::find_bool(t, "single_word", field).value_or(false);
    content_bytes += token.content.size();
    if (content_bytes > kMaxContentBytes) {
      throw_error<ModelError>("{}: more than {} bytes of content in all", field, kMaxContentBytes);
    }
    (token.normalized ? normalized_ : raw_)
        .add(token.content, static_cast<std::int32_t>(tokens_.size()));
    tokens_.push_back(std::move(token));
  }
  raw_.build();
  normalized_.build();
}

bool HfAddedTokens::is_word_char(std::string_view ch) const {
  return !word_char_.find_all(ch).empty();
}

// single_word: no letter or digit right before or right after the match.
bool HfAddedTokens::word_boundaries(std::string_view text, std::size_t begin,
                                    std::size_t end) const {
  if (begin > 0) {
    std::size_t lead = begin - 1;
    while (lead > 0 && (static_cast<unsigned char>(text[lead]) & 0xc0) == 0x80) --lead;
    if (is_word_char(text.substr(lead, begin - lead))) return false;
  }
  if (end < text.size()) {
    std::size_t next = end;
    next_code_point(text, next);
    if (is_word_char(text.substr(end, next - end))) return false;
  }
  return true;
}

std::vector<HfAddedTokens::Segment> HfAddedTokens::split(std::string_view text, bool normalized,
                                                         const AllowSpecial& allow) const {
  std::vector<Segment> out;
  const AddedTokenMatcher& matcher = normalized ? normalized_ : raw_;
  if (matcher.empty()) {
    if (!text.empty()) out.push_back({0, text.size(), -1});
    return out;
  }
  const std::vector<std::int32_t> longest = matcher.longest_at_each(text);  // [text.size()]
  std::size_t text_start = 0;  // where the text not yet emitted begins
  for (std::size_t pos = 0; pos < text.size();) {
    if (longest[pos] < 0) {
      ++pos;
      continue;
    }
    const HfAddedToken* t = &tokens_[static_cast<std::size_t>(longest[pos])];
    const std::size_t match_end = pos + t->content.size();
    if ((t->special && !allow(pos, match_end)) ||
        (t->single_word && !word_boundaries(text, pos, match_end))) {
      pos = match_end;  // consumed, as the library's matcher moves past a skipped match
      continue;
    }
    const std::size_t begin = t->lstrip ? pos - space_before(text, text_start, pos) : pos;
    const std::size_t end = t->rstrip ? match_end + space_after(text, match_end) : match_end;
    if (begin > text_start) out.push_back({text_start, begin, -1});
    out.push_back({begin, end, t->id});
    text_start = pos = end;
  }
  if (text_start < text.size()) out.push_back({text_start, text.size(), -1});
  return out;
}

}  // namespace kvscope
