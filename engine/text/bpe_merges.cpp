#include "text/bpe_merges.h"

#include <functional>
#include <queue>

namespace kvscope {
namespace {

std::uint64_t pair_key(TokenId left, TokenId right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
         static_cast<std::uint32_t>(right);
}

// One symbol of a word being merged: a token and its neighbours in the linked list.
struct Symbol {
  TokenId id;  // -1 once merged into its left neighbour
  std::int32_t prev;
  std::int32_t next;
};

// A possible merge of symbols[left] with its right neighbour, valid while both still
// hold the ids it was found for. Ordered lowest rank first, then leftmost first.
struct Candidate {
  std::int32_t rank;
  std::int32_t left;
  TokenId left_id;
  TokenId right_id;
  TokenId result;
  bool operator>(const Candidate& o) const {
    return rank != o.rank ? rank > o.rank : left > o.left;
  }
};

}  // namespace

bool BpeMerges::add(TokenId left, TokenId right, std::int32_t rank, TokenId result) {
  return merges_.try_emplace(pair_key(left, right), Merge{rank, result}).second;
}

void BpeMerges::apply(std::vector<TokenId>& ids) const {
  if (ids.size() < 2 || merges_.empty()) return;
  std::vector<Symbol> symbols(ids.size());  // [n_symbols]
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto n = static_cast<std::int32_t>(i);
    symbols[i] = Symbol{ids[i], n - 1, i + 1 < ids.size() ? n + 1 : -1};
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  const auto consider = [&](std::int32_t left) {
    if (left < 0) return;
    const Symbol& l = symbols[static_cast<std::size_t>(left)];
    if (l.next < 0) return;
    const TokenId right_id = symbols[static_cast<std::size_t>(l.next)].id;
    const auto it = merges_.find(pair_key(l.id, right_id));
    if (it != merges_.end()) queue.push({it->second.rank, left, l.id, right_id, it->second.result});
  };
  for (std::int32_t i = 0; i + 1 < static_cast<std::int32_t>(symbols.size()); ++i) consider(i);
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& l = symbols[static_cast<std::size_t>(c.left)];
    if (l.id != c.left_id || l.next < 0) continue;  // stale: left changed since
    Symbol& r = symbols[static_cast<std::size_t>(l.next)];
    if (r.id != c.right_id) continue;  // stale: right changed since
    l.id = c.result;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<std::size_t>(r.next)].prev = c.left;
    r.id = -1;
    consider(l.prev);
    consider(c.left);
  }
  ids.clear();
  for (std::int32_t i = 0; i >= 0; i = symbols[static_cast<std::size_t>(i)].next) {
    ids.push_back(symbols[static_cast<std::size_t>(i)].id);
  }
}

}  // namespace kvscope
