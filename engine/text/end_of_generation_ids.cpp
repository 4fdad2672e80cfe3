#include "text/end_of_generation_ids.h"

#include <algorithm>

#include "util/error.h"

namespace kvscope {
namespace {

// Forwards everything to the wrapped tokenizer but is_end_of_generation.
class EndOfGenerationIds final : public Tokenizer {
 public:
  EndOfGenerationIds(std::unique_ptr<Tokenizer> inner, std::vector<TokenId> ids)
      : inner_(std::move(inner)), ids_(std::move(ids)) {}

  std::vector<TokenId> encode(std::string_view text, bool add_bos) const override {
    return inner_->encode(text, add_bos);
  }
  std::vector<TokenId> encode_parts(const std::vector<PromptPart>& parts,
                                    bool add_bos) const override {
    return inner_->encode_parts(parts, add_bos);
  }
  std::string token_bytes(TokenId id) const override { return inner_->token_bytes(id); }
  std::string piece(TokenId id) const override { return inner_->piece(id); }
  std::string decode(const std::vector<TokenId>& ids) const override { return inner_->decode(ids); }
  std::int64_t vocab_size() const override { return inner_->vocab_size(); }
  TokenId bos() const override { return inner_->bos(); }
  TokenId eos() const override { return inner_->eos(); }
  TokenId eot() const override { return inner_->eot(); }
  bool add_bos_default() const override { return inner_->add_bos_default(); }
  bool is_special(TokenId id) const override { return inner_->is_special(id); }
  std::string kind() const override { return inner_->kind(); }
  bool is_end_of_generation(TokenId id) const override {
    return inner_->is_end_of_generation(id) || std::ranges::find(ids_, id) != ids_.end();
  }

 private:
  std::unique_ptr<Tokenizer> inner_;
  std::vector<TokenId> ids_;
};

}  // namespace

std::unique_ptr<Tokenizer> with_end_of_generation_ids(std::unique_ptr<Tokenizer> inner,
                                                      const std::vector<std::int64_t>& ids,
                                                      const std::string& source) {
  if (ids.empty()) return inner;
  std::vector<TokenId> checked;
  for (const std::int64_t id : ids) {
    if (id < 0 || id >= inner->vocab_size()) {
      throw_error<ModelError>("{}: {} is out of range (the tokenizer has {} tokens)", source, id,
                              inner->vocab_size());
    }
    checked.push_back(static_cast<TokenId>(id));
  }
  return std::make_unique<EndOfGenerationIds>(std::move(inner), std::move(checked));
}

}  // namespace kvscope
