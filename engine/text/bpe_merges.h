// The BPE merge engine both byte-level vocabs share: a GGUF "gpt2" vocab
// (tokenizer.ggml.merges) and a Hugging Face tokenizer.json "BPE" model. A word arrives as
// the ids of its initial symbols (bytes or characters); adjacent symbols are merged lowest
// rank first, leftmost first on ties (HF tokenizers' Word::merge_all and llama.cpp agree),
// until no adjacent pair has a merge.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace kvscope {

using TokenId = std::int32_t;

class BpeMerges {
 public:
  // Records that `left` followed by `right` merges into `result` with priority `rank`
  // (lower first). A pair already recorded keeps its first (lowest) rank; returns false.
  bool add(TokenId left, TokenId right, std::int32_t rank, TokenId result);

  // Merges `symbols` ([n_symbols] token ids of one word, in order) in place.
  // O(n log n) in the number of symbols.
  void apply(std::vector<TokenId>& symbols) const;

  std::size_t size() const { return merges_.size(); }
  void reserve(std::size_t n) { merges_.reserve(n); }

 private:
  struct Merge {
    std::int32_t rank;
    TokenId result;
  };
  std::unordered_map<std::uint64_t, Merge> merges_;  // (left, right) -> rank, result
};

}  // namespace kvscope
