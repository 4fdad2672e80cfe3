#include "text/pretokenizer.h"

#include <array>

#include "text/pcre2_regex.h"

namespace kvscope {
namespace {

// The regexes, as llama.cpp's llama-vocab.cpp spells them. The Llama 3 / Qwen2
// contractions are written out ('[sS]) instead of (?i:...) so that Unicode case folding
// (e.g. U+017F long s) cannot widen them.
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|)"
    R"(\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|)"
    R"(\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kSingleDigit = R"(\p{N})";
constexpr std::string_view kGpt2NoTrailingSpace =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";

struct PreName {
  std::string_view name;
  PretokenizerFamily family;
};

// tokenizer.ggml.pre values and the rules llama.cpp applies for them.
constexpr std::array kKnownPre = {
    PreName{"default", PretokenizerFamily::Gpt2},
    PreName{"gpt-2", PretokenizerFamily::Gpt2},
    PreName{"phi-2", PretokenizerFamily::Gpt2},
    PreName{"mpt", PretokenizerFamily::Gpt2},
    PreName{"olmo", PretokenizerFamily::Gpt2},
    PreName{"jais", PretokenizerFamily::Gpt2},
    PreName{"roberta-bpe", PretokenizerFamily::Gpt2},
    PreName{"llama3", PretokenizerFamily::Llama3},
    PreName{"llama-v3", PretokenizerFamily::Llama3},
    PreName{"llama-bpe", PretokenizerFamily::Llama3},
    PreName{"falcon3", PretokenizerFamily::Llama3},
    PreName{"dbrx", PretokenizerFamily::Llama3},
    PreName{"smaug-bpe", PretokenizerFamily::Llama3},
    PreName{"qwen2", PretokenizerFamily::Qwen2},
    PreName{"deepseek-r1-qwen", PretokenizerFamily::Qwen2},
    PreName{"stablelm2", PretokenizerFamily::Qwen2},
    PreName{"megrez", PretokenizerFamily::Qwen2},
    PreName{"smollm", PretokenizerFamily::Digits},
    PreName{"starcoder", PretokenizerFamily::Digits},
    PreName{"refact", PretokenizerFamily::Digits},
    PreName{"command-r", PretokenizerFamily::Digits},
    PreName{"codeshell", PretokenizerFamily::Digits},
    PreName{"exaone", PretokenizerFamily::Digits},
    PreName{"minerva-7b", PretokenizerFamily::Digits},
};

// Names llama.cpp gives "ignore_merges" and a default BOS (the Llama 3 tokenizer.json).
bool is_llama3_proper(std::string_view pre) {
  return pre == "llama3" || pre == "llama-v3" || pre == "llama-bpe" || pre == "falcon3";
}

std::vector<std::string_view> family_patterns(PretokenizerFamily family) {
  switch (family) {
    case PretokenizerFamily::Gpt2:
      return {kGpt2};
    case PretokenizerFamily::Llama3:
      return {kLlama3};
    case PretokenizerFamily::Qwen2:
      return {kQwen2};
    case PretokenizerFamily::Digits:
      return {kSingleDigit, kGpt2NoTrailingSpace};
  }
  return {kGpt2};
}

}  // namespace

std::string_view pretokenizer_family_name(PretokenizerFamily family) {
  switch (family) {
    case PretokenizerFamily::Gpt2:
      return "gpt2";
    case PretokenizerFamily::Llama3:
      return "llama3";
    case PretokenizerFamily::Qwen2:
      return "qwen2";
    case PretokenizerFamily::Digits:
      return "digits";
  }
  return "?";
}

// The compiled regexes of one pre-tokenizer, applied in order.
struct Pretokenizer::Patterns {
  std::vector<Pcre2Regex> regexes;

  explicit Patterns(const std::vector<std::string_view>& sources) {
    for (const std::string_view source : sources) regexes.emplace_back(source);
  }

  // Appends to `out` the matches of `regex` in `piece` and the unmatched text between them.
  static void split_one(const Pcre2Regex& regex, std::string_view piece,
                        std::vector<std::string_view>& out) {
    std::size_t gap_start = 0;
    for (const Pcre2Regex::Match m : regex.find_all(piece)) {
      if (m.begin > gap_start) out.push_back(piece.substr(gap_start, m.begin - gap_start));
      out.push_back(piece.substr(m.begin, m.end - m.begin));
      gap_start = m.end;
    }
    if (gap_start < piece.size()) out.push_back(piece.substr(gap_start));
  }
};

Pretokenizer::Pretokenizer(std::string_view pre) : pre_(pre) {
  for (const PreName& known : kKnownPre) {
    if (known.name == pre) {
      family_ = known.family;
      known_ = true;
    }
  }
  ignore_merges_ = add_bos_default_ = is_llama3_proper(pre);
  patterns_ = std::make_unique<Patterns>(family_patterns(family_));
}

Pretokenizer::~Pretokenizer() = default;
Pretokenizer::Pretokenizer(Pretokenizer&&) noexcept = default;
Pretokenizer& Pretokenizer::operator=(Pretokenizer&&) noexcept = default;

std::vector<std::string_view> Pretokenizer::split(std::string_view text) const {
  std::vector<std::string_view> pieces;
  if (text.empty()) return pieces;
  pieces.push_back(text);
  for (const Pcre2Regex& regex : patterns_->regexes) {
    std::vector<std::string_view> next;
    next.reserve(pieces.size() * 2);
    for (const std::string_view piece : pieces) Patterns::split_one(regex, piece, next);
    pieces = std::move(next);
  }
  return pieces;
}

}  // namespace kvscope
