// tokenizer.json "pre_tokenizer": splits a normalized run of text into the words the BPE
// model merges within. Supported: ByteLevel (add_prefix_space, use_regex: GPT-2's pattern),
// Split (a String or Regex pattern, behavior Removed / Isolated / MergedWithPrevious /
// MergedWithNext / Contiguous, invert), Digits (individual_digits), Metaspace (replacement,
// prepend_scheme, split), Punctuation, WhitespaceSplit and Sequence. Regexes run on PCRE2 (HF runs
// Oniguruma; the patterns published files use mean the same in both), their work charged to
// the request's RegexBudget; no step grows its text past encode_budget.h's bounds. Errors name
// the step. Internal to engine/text.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/encode_budget.h"
#include "text/pcre2_regex.h"

namespace kvscope {

// One split of the text as the steps pass it on. `first` marks the split that starts the
// whole input (Metaspace's prepend_scheme "first" adds its "▁" only there).
struct HfSplit {
  std::string text;
  bool first = false;
};

class HfPretokenizer {
 public:
  // `config` is the "pre_tokenizer" value (null: the run is one word). Throws ModelError
  // naming `source` and the component (an unknown type, a regex PCRE2 rejects, ...).
  HfPretokenizer(const nlohmann::json& config, const std::string& source);

  // The words of `text` (valid UTF-8), in order; ByteLevel words are in the byte alphabet.
  std::vector<HfSplit> split(HfSplit text, EncodeBudget& budget) const;

  // True when a ByteLevel step maps words to the byte alphabet.
  bool byte_level() const { return byte_level_; }

 private:
  enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };
  enum class Kind { Split, ByteLevel, Metaspace };
  struct Step {
    Kind kind = Kind::Split;
    std::shared_ptr<const Pcre2Regex> regex;  // Split (and ByteLevel with use_regex)
    std::string literal;                      // Split with a String pattern; Metaspace's "▁"
    Behavior behavior = Behavior::Isolated;
    bool invert = false;
    bool add_prefix_space = false;  // ByteLevel
    std::string prepend_scheme;     // Metaspace: "always", "first" or "never"
    bool metaspace_split = true;    // Metaspace
    std::string name;               // for errors: "tokenizer.json: pre_tokenizer Sequence[0] Split"
  };
  void add(const nlohmann::json& config, const std::string& where, int depth);
  static Behavior behavior_of(const std::string& name, const std::string& where);
  void add_split(const nlohmann::json& config, const std::string& where);
  void add_metaspace(const nlohmann::json& config, const std::string& where);
  static void split_step(const Step& step, const HfSplit& in, EncodeBudget& budget,
                         std::vector<HfSplit>& out);
  static void byte_level_step(const Step& step, const HfSplit& in, EncodeBudget& budget,
                              std::vector<HfSplit>& out);
  static void metaspace_step(const Step& step, const HfSplit& in, EncodeBudget& budget,
                             std::vector<HfSplit>& out);
  static void run(const Step& step, const HfSplit& in, EncodeBudget& budget,
                  std::vector<HfSplit>& out);

  std::vector<Step> steps_;
  bool byte_level_ = false;
};

}  // namespace kvscope
