#include "text/hf_pretokenizer.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "model/hf_json.h"
#include "model/json_reader.h"
#include "text/byte_unicode.h"
#include "text/encode_budget.h"
#include "text/hf_normalizer.h"
#include "util/error.h"

namespace kvscope {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = 8;  // Sequence inside Sequence; real files nest one level

// ByteLevel's own pattern when use_regex is true (GPT-2's, as HF spells it).
constexpr std::string_view kByteLevelPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// A stretch of a split and whether the pattern matched it.
struct Piece {
  std::size_t begin;
  std::size_t end;
  bool match;
};

// The matches of a literal, as Pcre2Regex gives a pattern's.
std::vector<Pcre2Regex::Match> literal_matches(std::string_view text, std::string_view literal) {
  std::vector<Pcre2Regex::Match> out;
  for (std::size_t hit = text.find(literal); hit != std::string_view::npos;
       hit = text.find(literal, hit + literal.size())) {
    out.push_back({hit, hit + literal.size()});
  }
  return out;
}

// The matches and the gaps between them, covering the text in order.
std::vector<Piece> cover(const std::vector<Pcre2Regex::Match>& matches, std::size_t size,
                         bool invert) {
  std::vector<Piece> pieces;
  std::size_t pos = 0;
  for (const Pcre2Regex::Match m : matches) {
    if (m.begin > pos) pieces.push_back({pos, m.begin, invert});
    pieces.push_back({m.begin, m.end, !invert});
    pos = m.end;
  }
  if (pos < size) pieces.push_back({pos, size, invert});
  return pieces;
}

std::string type_of(const json& config, const std::string& where) {
  const auto type = hf::find_string(config, "type", where);
  if (!type) throw_error<ModelError>("{}: no \"type\"", where);
  return *type;
}

}  // namespace

HfPretokenizer::HfPretokenizer(const json& config, const std::string& source) {
  add(config, source + ": pre_tokenizer", 0);
}

void HfPretokenizer::add(const json& config, const std::string& where, int depth) {
  if (config.is_null()) return;
  if (!config.is_object() || depth > kMaxDepth) {
    throw_error<ModelError>("{}: expected a pre-tokenizer object, found {}", where,
                            describe_json(config));
  }
  const std::string type = type_of(config, where);
  const std::string here = where + " " + type;
  if (steps_.size() >= kMaxSteps && type != "Sequence") {
    throw_error<ModelError>("{}: more than {} steps", where, kMaxSteps);
  }
  if (type == "Sequence") {
    const auto it = config.find("pretokenizers");
    if (it == config.end() || !it->is_array()) {
      throw_error<ModelError>("{}: pretokenizers: expected a list", here);
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      add((*it)[i], fmt::format("{}[{}]", here, i), depth + 1);
    }
    return;
  } else if (type == "Split") {
    add_split(config, here);
  } else if (type == "Digits") {
    // HF splits on char::is_numeric (the N categories): each digit alone, or runs of them.
    Step step;
    step.regex = std::make_shared<const Pcre2Regex>(R"(\p{N})");
    step.behavior = hf::find_bool(config, "individual_digits", here).value_or(false)
                        ? Behavior::Isolated
                        : Behavior::Contiguous;
    steps_.push_back(std::move(step));
  } else if (type == "Punctuation") {
    // HF: char::is_ascii_punctuation || the Unicode P categories; behavior default Isolated.
    Step step;
    step.regex = std::make_shared<const Pcre2Regex>(R"([\p{P}!-/:-@\[-`{-~])");
    step.behavior =
        behavior_of(hf::find_string(config, "behavior", here).value_or("Isolated"), here);
    steps_.push_back(std::move(step));
  } else if (type == "WhitespaceSplit") {
    Step step;  // HF: split on char::is_whitespace, the whitespace removed
    step.regex = std::make_shared<const Pcre2Regex>(R"(\s)");
    step.behavior = Behavior::Removed;
    steps_.push_back(std::move(step));
  } else if (type == "ByteLevel") {
    Step step;
    step.kind = Kind::ByteLevel;
    step.add_prefix_space = hf::find_bool(config, "add_prefix_space", here).value_or(true);
    if (hf::find_bool(config, "use_regex", here).value_or(true)) {
      step.regex = std::make_shared<const Pcre2Regex>(kByteLevelPattern);
    }
    steps_.push_back(std::move(step));
    byte_level_ = true;
  } else if (type == "Metaspace") {
    add_metaspace(config, here);
  } else {
    throw_error<ModelError>(
        "{}: type \"{}\" is not supported (ByteLevel, Split, Digits, Metaspace, Punctuation, "
        "WhitespaceSplit, Sequence)",
        where, quote_prefix(type));
  }
  steps_.back().name = here;
}

HfPretokenizer::Behavior HfPretokenizer::behavior_of(const std::string& name,
                                                     const std::string& where) {
  if (name == "Removed") return Behavior::Removed;
  if (name == "Isolated") return Behavior::Isolated;
  if (name == "MergedWithPrevious") return Behavior::MergedWithPrevious;
  if (name == "MergedWithNext") return Behavior::MergedWithNext;
  if (name == "Contiguous") return Behavior::Contiguous;
  throw_error<ModelError>(
      "{}: behavior \"{}\" is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, "
      "Contiguous",
      where, quote_prefix(name));
}

void HfPretokenizer::add_split(const json& config, const std::string& where) {
  Step step;
  const auto pattern = config.find("pattern");
  step.regex = read_hf_pattern(pattern == config.end() ? json() : *pattern, where, step.literal);
  step.invert = hf::find_bool(config, "invert", where).value_or(false);
  step.behavior = behavior_of(hf::find_string(config, "behavior", where).value_or(""), where);
  steps_.push_back(std::move(step));
}

void HfPretokenizer::add_metaspace(const json& config, const std::string& where) {
  Step step;
  step.kind = Kind::Metaspace;
  step.literal = hf::find_string(config, "replacement", where).value_or("\xe2\x96\x81");  // ▁
  if (step.literal.empty() || step.literal.size() > kMaxInsertedBytes) {
    throw_error<ModelError>("{}: replacement is {} bytes (1 to {} allowed)", where,
                            step.literal.size(), kMaxInsertedBytes);
  }
  // tokenizers < 0.19 wrote add_prefix_space instead of prepend_scheme.
  const bool add_prefix = hf::find_bool(config, "add_prefix_space", where).value_or(true);
  step.prepend_scheme =
      hf::find_string(config, "prepend_scheme", where).value_or(add_prefix ? "always" : "never");
  if (step.prepend_scheme != "always" && step.prepend_scheme != "first" &&
      step.prepend_scheme != "never") {
    throw_error<ModelError>("{}: prepend_scheme \"{}\" is not always, first or never", where,
                            quote_prefix(step.prepend_scheme));
  }
  step.metaspace_split = hf::find_bool(config, "split", where).value_or(true);
  steps_.push_back(std::move(step));
}

// One Split step on one split, following HF's SplitDelimiterBehavior.
void HfPretokenizer::split_step(const Step& step, const HfSplit& in, EncodeBudget& budget,
                                std::vector<HfSplit>& out) {
  const std::string_view text = in.text;
  const auto matches =
      step.regex ? step.regex->find_all(text, budget.regex()) : literal_matches(text, step.literal);
  std::vector<Piece> pieces = cover(matches, text.size(), step.invert);
  std::vector<Piece> kept;
  bool previous_match = false;
  if (step.behavior == Behavior::MergedWithNext) std::reverse(pieces.begin(), pieces.end());
  for (const Piece& p : pieces) {
    switch (step.behavior) {
      case Behavior::Removed:
        if (!p.match) kept.push_back(p);
        break;
      case Behavior::Isolated:
        kept.push_back(p);
        break;
      case Behavior::MergedWithPrevious:
        if (p.match && !previous_match && !kept.empty()) {
          kept.back().end = p.end;
        } else {
          kept.push_back(p);
        }
        break;
      case Behavior::MergedWithNext:  // walking backwards: merge into the later piece
        if (p.match && !previous_match && !kept.empty()) {
          kept.back().begin = p.begin;
        } else {
          kept.push_back(p);
        }
        break;
      case Behavior::Contiguous:
        if (p.match == previous_match && !kept.empty()) {
          kept.back().end = p.end;
        } else {
          kept.push_back(p);
        }
        break;
    }
    previous_match = p.match;
  }
  if (step.behavior == Behavior::MergedWithNext) std::reverse(kept.begin(), kept.end());
  for (const Piece& p : kept) {
    out.push_back({std::string(text.substr(p.begin, p.end - p.begin)), in.first && p.begin == 0});
  }
}

void HfPretokenizer::byte_level_step(const Step& step, const HfSplit& in, EncodeBudget& budget,
                                     std::vector<HfSplit>& out) {
  HfSplit split = in;
  if (step.add_prefix_space && !split.text.starts_with(' ')) split.text.insert(0, 1, ' ');
  std::vector<HfSplit> words;
  if (step.regex) {
    split_step(step, split, budget, words);  // Isolated, not inverted: every match and gap a word
  } else {
    words.push_back(std::move(split));
  }
  for (HfSplit& w : words) out.push_back({bytes_to_unicode(w.text), w.first});
}

void HfPretokenizer::metaspace_step(const Step& step, const HfSplit& in, EncodeBudget& budget,
                                    std::vector<HfSplit>& out) {
  budget.check_growth(step.name, in.text.size(),
                      replaced_size(in.text, " ", step.literal) + step.literal.size());
  HfSplit split{replace_all(in.text, " ", step.literal), in.first};
  const bool prepend =
      step.prepend_scheme == "always" || (step.prepend_scheme == "first" && in.first);
  if (prepend && !split.text.starts_with(step.literal)) split.text.insert(0, step.literal);
  if (!step.metaspace_split) {
    out.push_back(std::move(split));
    return;
  }
  Step on_replacement;
  on_replacement.literal = step.literal;
  on_replacement.behavior = Behavior::MergedWithNext;
  split_step(on_replacement, split, budget, out);
}

// One step on one split; an error from inside (a regex out of budget) names the step.
void HfPretokenizer::run(const Step& step, const HfSplit& in, EncodeBudget& budget,
                         std::vector<HfSplit>& out) {
  const std::size_t first_new = out.size();
  try {
    switch (step.kind) {
      case Kind::Split:
        split_step(step, in, budget, out);
        break;
      case Kind::ByteLevel:
        byte_level_step(step, in, budget, out);
        break;
      case Kind::Metaspace:
        metaspace_step(step, in, budget, out);
        break;
    }
    std::size_t made = 0;
    for (std::size_t i = first_new; i < out.size(); ++i) made += out[i].text.size();
    budget.charge_made(step.name, made);
  } catch (const TextError& e) {
    if (std::string_view(e.what()).starts_with(step.name)) throw;
    throw_error<TextError>("{}: {}", step.name, e.what());
  }
}

std::vector<HfSplit> HfPretokenizer::split(HfSplit text, EncodeBudget& budget) const {
  std::vector<HfSplit> splits;
  splits.push_back(std::move(text));
  for (const Step& step : steps_) {
    std::vector<HfSplit> next;
    next.reserve(splits.size() * 2);
    for (const HfSplit& s : splits) {
      if (!s.text.empty()) run(step, s, budget, next);
    }
    splits = std::move(next);
  }
  return splits;
}

}  // namespace kvscope
