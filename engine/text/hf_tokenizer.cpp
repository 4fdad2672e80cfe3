#include "text/hf_tokenizer.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "model/hf_json.h"
#include "model/json_reader.h"
#include "text/end_of_generation.h"
#include "text/hf_added_tokens.h"
#include "text/hf_bpe_model.h"
#include "text/hf_decoder.h"
#include "text/hf_normalizer.h"
#include "text/hf_pretokenizer.h"
#include "text/utf8_stream.h"
#include "util/error.h"
#include "util/utf8.h"

namespace kvscope {
namespace {

using nlohmann::json;

// Llama 3's tokenizer.json is 9 MB (128k pieces, 280k merges as pairs: ~1.2M JSON values),
// Gemma 3's 33 MB (262k pieces, 515k merges as pairs: ~2.2M values); 64 MiB and 4M values
// hold every published one and bound the parse to ~400 MB.
constexpr JsonLimits kTokenizerJsonLimits{.max_bytes = 64 << 20,
                                          .max_values = std::uint64_t{1} << 22};

const json& member(const json& obj, const char* name) {
  static const json null;
  const auto it = obj.find(name);
  return it == obj.end() ? null : *it;
}

// The special tokens a post-processor puts around a single sequence.
struct Wrapping {
  std::vector<TokenId> prefix;  // before the text (BOS)
  std::vector<TokenId> suffix;  // after it (EOS)
};

void check_utf8(std::string_view text, std::string_view what) {
  if (const auto bad = find_invalid_utf8(text)) {
    throw_error<TextError>("{} is not valid UTF-8 (byte {} at offset {})", what,
                           escape_bytes(text.substr(*bad, 1)), *bad);
  }
}

class HfTokenizer final : public Tokenizer {
 public:
  HfTokenizer(const std::string& path, const json& root, const Model::SpecialTokenFlags& flags);

  std::vector<TokenId> encode(std::string_view text, bool add_bos) const override;
  std::vector<TokenId> encode_parts(const std::vector<PromptPart>& parts,
                                    bool add_bos) const override;
  std::string token_bytes(TokenId id) const override { return bytes_[checked(id)]; }
  std::string piece(TokenId id) const override { return pieces_[checked(id)]; }
  std::string decode(const std::vector<TokenId>& ids) const override;
  std::int64_t vocab_size() const override { return static_cast<std::int64_t>(pieces_.size()); }
  TokenId bos() const override { return bos_; }
  TokenId eos() const override { return eos_; }
  TokenId eot() const override { return eot_; }
  bool add_bos_default() const override { return !wrap_.prefix.empty(); }
  bool is_special(TokenId id) const override { return special_[checked(id)]; }
  std::string kind() const override { return "bpe (tokenizer.json)"; }
  bool is_end_of_generation(TokenId id) const override {
    return id >= 0 && id < vocab_size() && eog_[static_cast<std::size_t>(id)];
  }

 private:
  std::size_t checked(TokenId id) const;
  void index_pieces();
  Wrapping read_post_processor(const json& config, const std::string& where, int depth) const;
  void choose_wrapping(const json& post_processor, const Model::SpecialTokenFlags& flags);
  TokenId config_token(const std::optional<std::string>& text, const Model::SpecialTokenFlags& f,
                       const char* field) const;
  void find_end_tokens();
  // Ids of `text`; control[i] says whether byte i is template control text (may hold a
  // special token); empty: none is.
  void encode_marked(std::string_view text, const std::vector<bool>& control,
                     std::vector<TokenId>& out) const;
  void encode_run(std::string_view text, bool first, bool allow_special, EncodeBudget& budget,
                  std::vector<TokenId>& out) const;
  void wrap(std::vector<TokenId>& ids, bool add_special) const;

  std::string path_;
  HfBpeModel model_;
  HfAddedTokens added_;
  HfNormalizer normalizer_;
  HfPretokenizer pretokenizer_;
  HfDecoder decoder_;
  std::vector<std::string> pieces_;  // [n_vocab]; "" for ids neither the vocab nor added use
  std::vector<std::string> bytes_;   // [n_vocab] token_bytes
  std::vector<bool> special_;        // [n_vocab]
  std::vector<bool> eog_;            // [n_vocab]
  Wrapping wrap_;
  TokenId bos_ = -1;
  TokenId eos_ = -1;
  TokenId eot_ = -1;
};

HfTokenizer::HfTokenizer(const std::string& path, const json& root,
                         const Model::SpecialTokenFlags& flags)
    : path_(path),
      model_(member(root, "model"), path),
      added_(member(root, "added_tokens"), path),
      normalizer_(member(root, "normalizer"), path),
      pretokenizer_(member(root, "pre_tokenizer"), path),
      decoder_(member(root, "decoder"), path) {
  index_pieces();
  choose_wrapping(member(root, "post_processor"), flags);
  find_end_tokens();
}

std::size_t HfTokenizer::checked(TokenId id) const {
  if (id < 0 || id >= vocab_size()) {
    throw_error<TextError>("token id {} out of range (vocab size {})", id, vocab_size());
  }
  return static_cast<std::size_t>(id);
}

// Pieces by id: the model's vocab, then the added tokens (which may reuse a vocab id or
// extend the vocab). Ids are dense in real files; a few holes stay empty pieces.
void HfTokenizer::index_pieces() {
  TokenId max_id = model_.max_id();
  for (const HfAddedToken& t : added_.tokens()) max_id = std::max(max_id, t.id);
  const std::size_t entries = model_.vocab().size() + added_.tokens().size();
  if (static_cast<std::size_t>(max_id) >= entries + 65536) {
    throw_error<ModelError>("{}: token id {} is far past the {} pieces the file lists", path_,
                            max_id, entries);
  }
  const auto n = static_cast<std::size_t>(max_id) + 1;
  pieces_.assign(n, "");
  special_.assign(n, false);
  for (const auto& [p, id] : model_.vocab()) pieces_[static_cast<std::size_t>(id)] = p;
  bytes_.resize(n);
  try {  // a decoder step that grows pieces past encode_budget.h's bounds fails the load
    for (std::size_t id = 0; id < n; ++id) bytes_[id] = decoder_.token_bytes(pieces_[id]);
  } catch (const TextError& e) {
    throw_error<ModelError>("{}", e.what());
  }
  for (const HfAddedToken& t : added_.tokens()) {
    const auto id = static_cast<std::size_t>(t.id);
    pieces_[id] = t.content;
    special_[id] = t.special;
    // Control tokens decode to "" (the Tokenizer contract); other added tokens go through
    // the decoder like any piece, as the library passes them.
    try {
      bytes_[id] = t.special ? "" : decoder_.token_bytes(t.content);
    } catch (const TextError& e) {
      throw_error<ModelError>("{}", e.what());
    }
  }
}

// TemplateProcessing's "single" template: the special tokens before $A are the prefix,
// those after it the suffix. ByteLevel only trims offsets; Sequence chains processors.
Wrapping HfTokenizer::read_post_processor(const json& config, const std::string& where,
                                          int depth) const {
  Wrapping w;
  if (config.is_null()) return w;
  const auto type = hf::find_string(config, "type", where);
  if (!type || depth > 8) throw_error<ModelError>("{}: no \"type\"", where);
  const std::string here = where + " " + *type;
  if (*type == "ByteLevel") return w;
  if (*type == "Sequence") {
    const json& list = member(config, "processors");
    if (!list.is_array()) throw_error<ModelError>("{}: processors: expected a list", here);
    for (const json& p : list) {
      const Wrapping inner = read_post_processor(p, here, depth + 1);
      w.prefix.insert(w.prefix.end(), inner.prefix.begin(), inner.prefix.end());
      w.suffix.insert(w.suffix.end(), inner.suffix.begin(), inner.suffix.end());
    }
    return w;
  }
  if (*type != "TemplateProcessing") {
    throw_error<ModelError>(
        "{}: type \"{}\" is not supported (TemplateProcessing, ByteLevel, Sequence)", where,
        quote_prefix(*type));
  }
  const json& single = member(config, "single");
  const json& specials = member(config, "special_tokens");
  if (!single.is_array()) throw_error<ModelError>("{}: single: expected a list", here);
  bool seen_text = false;
  for (const json& item : single) {
    if (item.contains("Sequence")) {
      seen_text = true;
      continue;
    }
    const auto name = hf::find_string(member(item, "SpecialToken"), "id", here + ": single[]");
    const json& entry = name ? member(specials, name->c_str()) : json();
    const json& ids = member(entry, "ids");
    if (!name || !ids.is_array() || ids.empty()) {
      throw_error<ModelError>("{}: single: {} is not a special token with ids", here,
                              describe_json(item));
    }
    for (const json& id : ids) {
      if (!id.is_number_integer() || id.get<std::int64_t>() < 0 ||
          id.get<std::int64_t>() >= vocab_size()) {
        throw_error<ModelError>("{}: special_tokens[{}]: id {} out of range (vocab size {})", here,
                                quote_prefix(*name), describe_json(id), vocab_size());
      }
      (seen_text ? w.suffix : w.prefix).push_back(static_cast<TokenId>(id.get<std::int64_t>()));
    }
  }
  return w;
}

// The id of a tokenizer_config.json bos_token / eos_token; -1 when the config has none.
TokenId HfTokenizer::config_token(const std::optional<std::string>& text,
                                  const Model::SpecialTokenFlags& f, const char* field) const {
  if (!text) return -1;
  for (std::size_t id = 0; id < pieces_.size(); ++id) {
    if (pieces_[id] == *text) return static_cast<TokenId>(id);
  }
  throw_error<ModelError>("{}: {} {} is not a token of {}", f.config_path, field,
                          quote_prefix(*text), path_);
}

// What wraps a prompt. transformers (v5, TokenizersBackend.__init__ and
// update_post_processor) keeps tokenizer.json's post_processor unless tokenizer_config.json
// sets add_bos_token or add_eos_token, or the file has no post_processor: then it rebuilds
// the template as "[bos_token] $A [eos_token]", each present only when its flag is true (an
// absent flag counts as false) and tokenizer_config.json names the token. We do the same,
// so a config that disagrees with the file wins exactly where transformers lets it.
void HfTokenizer::choose_wrapping(const json& post_processor,
                                  const Model::SpecialTokenFlags& flags) {
  const TokenId bos = config_token(flags.bos_token, flags, "bos_token");
  const TokenId eos = config_token(flags.eos_token, flags, "eos_token");
  if (flags.add_bos || flags.add_eos || post_processor.is_null()) {
    if (flags.add_bos.value_or(false) && bos >= 0) wrap_.prefix = {bos};
    if (flags.add_eos.value_or(false) && eos >= 0) wrap_.suffix = {eos};
  } else {
    wrap_ = read_post_processor(post_processor, path_ + ": post_processor", 0);
  }
  bos_ = bos >= 0 ? bos : wrap_.prefix.empty() ? -1 : wrap_.prefix.front();
  eos_ = eos >= 0 ? eos : wrap_.suffix.empty() ? -1 : wrap_.suffix.back();
}

// End of generation: eos, and every special token whose text is a known end-of-turn marker
// (the first but <|eom_id|> is the end of turn). generation_config.json's ids are added by
// make_tokenizer for every tokenizer kind.
void HfTokenizer::find_end_tokens() {
  eog_.assign(pieces_.size(), false);
  if (eos_ >= 0) eog_[static_cast<std::size_t>(eos_)] = true;
  for (const std::string_view text : kEndOfGenerationTexts) {
    for (const HfAddedToken& t : added_.tokens()) {
      if (!t.special || t.content != text) continue;
      eog_[static_cast<std::size_t>(t.id)] = true;
      if (eot_ < 0 && text != "<|eom_id|>") eot_ = t.id;
    }
  }
}

// One run of text between the raw pass's added tokens: normalized, cut at the normalized
// added tokens, pre-tokenized and merged word by word.
void HfTokenizer::encode_run(std::string_view text, bool first, bool allow_special,
                             EncodeBudget& budget, std::vector<TokenId>& out) const {
  const std::string normalized = normalizer_.apply(std::string(text), budget);
  const auto allow = [&](std::size_t, std::size_t) { return allow_special; };
  for (const auto& seg : added_.split(normalized, true, allow)) {
    if (seg.id >= 0) {
      out.push_back(seg.id);
      continue;
    }
    const HfSplit run{normalized.substr(seg.begin, seg.end - seg.begin), first && seg.begin == 0};
    for (const HfSplit& word : pretokenizer_.split(run, budget)) model_.encode_word(word.text, out);
  }
}

// The work of one request is bounded by its size (EncodeBudget).
void HfTokenizer::encode_marked(std::string_view text, const std::vector<bool>& control,
                                std::vector<TokenId>& out) const {
  EncodeBudget budget(text.size());
  const auto all_control = [&](std::size_t begin, std::size_t end) {
    if (control.empty()) return false;
    return std::all_of(control.begin() + static_cast<std::ptrdiff_t>(begin),
                       control.begin() + static_cast<std::ptrdiff_t>(end),
                       [](bool c) { return c; });
  };
  for (const auto& seg : added_.split(text, false, all_control)) {
    if (seg.id >= 0) {
      out.push_back(seg.id);
    } else {
      encode_run(text.substr(seg.begin, seg.end - seg.begin), seg.begin == 0,
                 all_control(seg.begin, seg.end), budget, out);
    }
  }
}

// `add_special` is the Tokenizer's add_bos: like add_special_tokens in the library (and the
// SentencePiece path with add_eos_token), it puts the template's prefix and suffix around.
void HfTokenizer::wrap(std::vector<TokenId>& ids, bool add_special) const {
  if (!add_special) return;
  ids.insert(ids.begin(), wrap_.prefix.begin(), wrap_.prefix.end());
  ids.insert(ids.end(), wrap_.suffix.begin(), wrap_.suffix.end());
}

std::vector<TokenId> HfTokenizer::encode(std::string_view text, bool add_bos) const {
  check_utf8(text, "the text");
  std::vector<TokenId> ids;
  encode_marked(text, {}, ids);
  wrap(ids, add_bos);
  return ids;
}

// The parts are tokenized as one string (as the library tokenizes the rendered prompt),
// special tokens taken only inside Control parts.
std::vector<TokenId> HfTokenizer::encode_parts(const std::vector<PromptPart>& parts,
                                               bool add_bos) const {
  std::string text;
  std::vector<bool> control;
  for (const PromptPart& part : parts) {
    check_utf8(part.text, "a prompt part");
    text += part.text;
    control.insert(control.end(), part.text.size(), part.kind == PromptPart::Kind::Control);
  }
  std::vector<TokenId> ids;
  encode_marked(text, control, ids);
  wrap(ids, add_bos);
  return ids;
}

// As the library decodes with skip_special_tokens: special tokens left out, a run of
// byte-fallback pieces decoded together, ByteLevel bytes made valid UTF-8, then the steps
// after a Fuse on the whole text.
std::string HfTokenizer::decode(const std::vector<TokenId>& ids) const {
  std::string text;
  std::string byte_run;  // bytes of consecutive "<0xXX>" pieces
  const auto flush_bytes = [&] {
    if (is_valid_utf8(byte_run)) {
      text += byte_run;
    } else {
      for (std::size_t i = 0; i < byte_run.size(); ++i) text += kReplacementChar;
    }
    byte_run.clear();
  };
  bool first = true;  // the first token the library's decoder sees
  for (const TokenId id : ids) {
    const std::size_t i = checked(id);
    if (special_[i]) continue;
    if (const int b = decoder_.byte_fallback_value(pieces_[i]); b >= 0) {
      byte_run.push_back(static_cast<char>(b));
      first = false;
      continue;
    }
    flush_bytes();
    text += first && decoder_.first_token_differs() ? decoder_.token_bytes(pieces_[i], true)
                                                    : bytes_[i];
    first = false;
  }
  flush_bytes();
  if (decoder_.byte_level()) {
    Utf8StreamDecoder lossy;
    std::string valid = lossy.push(text);
    text = std::move(valid) + lossy.flush();  // push first: a held tail becomes U+FFFD
  }
  return decoder_.finish(std::move(text));
}

std::unique_ptr<Tokenizer> make_hf_tokenizer(const json& root, const std::string& source,
                                             const Model::SpecialTokenFlags& flags) {
  if (!root.is_object()) {
    throw_error<ModelError>("{}: expected a JSON object, found {}", source, describe_json(root));
  }
  if (!member(root, "model").is_object()) {
    throw_error<ModelError>("{}: no \"model\" object (not a tokenizers tokenizer.json)", source);
  }
  return std::make_unique<HfTokenizer>(source, root, flags);
}

}  // namespace

std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& path,
                                             const Model::SpecialTokenFlags& flags) {
  return make_hf_tokenizer(read_json_file(path, kTokenizerJsonLimits), path, flags);
}

std::unique_ptr<Tokenizer> parse_hf_tokenizer(std::string_view text, const std::string& source,
                                              const Model::SpecialTokenFlags& flags) {
  return make_hf_tokenizer(parse_json(text, source, kTokenizerJsonLimits), source, flags);
}

}  // namespace kvscope
