#include "text/added_token_matcher.h"

#include <algorithm>
#include <queue>

namespace kvscope {

std::int32_t AddedTokenMatcher::child(std::int32_t node, std::uint8_t byte) const {
  const std::vector<Edge>& edges = nodes_[static_cast<std::size_t>(node)].edges;
  const auto it = std::lower_bound(edges.begin(), edges.end(), byte,
                                   [](const Edge& e, std::uint8_t b) { return e.byte < b; });
  return it != edges.end() && it->byte == byte ? it->node : -1;
}

void AddedTokenMatcher::add(std::string_view content, std::int32_t index) {
  std::int32_t node = 0;
  for (auto it = content.rbegin(); it != content.rend(); ++it) {
    const auto byte = static_cast<std::uint8_t>(*it);
    std::int32_t next = child(node, byte);
    if (next < 0) {
      next = static_cast<std::int32_t>(nodes_.size());
      nodes_.emplace_back();
      std::vector<Edge>& edges = nodes_[static_cast<std::size_t>(node)].edges;
      const auto at = std::lower_bound(edges.begin(), edges.end(), byte,
                                       [](const Edge& e, std::uint8_t b) { return e.byte < b; });
      edges.insert(at, Edge{byte, next});
    }
    node = next;
  }
  Node& last = nodes_[static_cast<std::size_t>(node)];
  if (last.token < 0) last.token = index;
}

// Failure links breadth first: a node's link is the longest proper suffix of its path
// that is also a path (found from its parent's link).
void AddedTokenMatcher::build() {
  std::queue<std::int32_t> queue;
  nodes_[0].longest = nodes_[0].token >= 0 ? 0 : -1;
  for (const Edge& e : nodes_[0].edges) queue.push(e.node);
  while (!queue.empty()) {
    const std::int32_t parent = queue.front();
    queue.pop();
    Node& p = nodes_[static_cast<std::size_t>(parent)];
    p.longest = p.token >= 0 ? parent : nodes_[static_cast<std::size_t>(p.fail)].longest;
    for (const Edge& e : p.edges) {
      std::int32_t f = p.fail;
      std::int32_t target = -1;
      for (;;) {
        target = child(f, e.byte);
        if (target >= 0 || f == 0) break;
        f = nodes_[static_cast<std::size_t>(f)].fail;
      }
      nodes_[static_cast<std::size_t>(e.node)].fail = target >= 0 ? target : 0;
      queue.push(e.node);
    }
  }
}

std::vector<std::int32_t> AddedTokenMatcher::longest_at_each(std::string_view text,
                                                             std::size_t* steps) const {
  std::vector<std::int32_t> out(text.size(), -1);
  std::size_t taken = 0;
  std::int32_t state = 0;
  for (std::size_t i = text.size(); i-- > 0;) {
    const auto byte = static_cast<std::uint8_t>(text[i]);
    for (;;) {  // each failure shortens the state; each byte lengthens it by one at most
      ++taken;
      const std::int32_t next = child(state, byte);
      if (next >= 0) {
        state = next;
        break;
      }
      if (state == 0) break;
      state = nodes_[static_cast<std::size_t>(state)].fail;
    }
    const std::int32_t found = nodes_[static_cast<std::size_t>(state)].longest;
    if (found > 0) out[i] = nodes_[static_cast<std::size_t>(found)].token;
  }
  if (steps != nullptr) *steps = taken;
  return out;
}

}  // namespace kvscope
