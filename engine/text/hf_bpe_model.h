// tokenizer.json "model" of type BPE: the vocab (piece -> id), the merges (as "a b"
// strings or ["a", "b"] pairs, rank = position), unk_token / fuse_unk, byte_fallback
// (characters missing from the vocab become their "<0xXX>" byte tokens) and ignore_merges
// (a word that is itself a token is taken whole). Merging runs on BpeMerges, the engine
// the GGUF byte-level vocabs use. Internal to engine/text.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/bpe_merges.h"

namespace kvscope {

// Hash of std::string keys that also takes a string_view (lookups without a copy).
struct StringViewHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using PieceIds = std::unordered_map<std::string, TokenId, StringViewHash, std::equal_to<>>;

class HfBpeModel {
 public:
  // The largest vocab and merge list accepted, refused before they are read: twice Gemma
  // 3's 262,144 pieces, and half again Gemma 3's 514,906 merges (Llama 3 has 280k, Qwen2
  // 151k). A million merges took 5.9 s and 611 MB to load.
  static constexpr std::size_t kMaxVocab = std::size_t{1} << 19;
  static constexpr std::size_t kMaxMerges = std::size_t{3} << 18;

  // `model` is tokenizer.json's "model". Throws ModelError naming `source` and the field
  // (a merge naming a piece not in the vocab, an id out of range, an unsupported option).
  HfBpeModel(const nlohmann::json& model, const std::string& source);

  // Appends the ids of one pre-tokenized word (valid UTF-8; byte alphabet for byte-level).
  void encode_word(std::string_view word, std::vector<TokenId>& out) const;

  std::optional<TokenId> find(std::string_view piece) const;
  const PieceIds& vocab() const { return vocab_; }
  TokenId max_id() const { return max_id_; }

 private:
  void read_vocab(const nlohmann::json& vocab, const std::string& where);
  void read_merges(const nlohmann::json& merges, const std::string& where);
  TokenId vocab_id(std::string_view piece, const std::string& where) const;
  void push_char(std::string_view ch, std::vector<TokenId>& symbols, bool& in_unk) const;

  PieceIds vocab_;
  BpeMerges merges_;
  std::array<TokenId, 256> byte_tokens_{};  // "<0xXX>" of each byte; -1 when absent
  TokenId max_id_ = -1;
  TokenId unk_ = -1;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
};

}  // namespace kvscope
