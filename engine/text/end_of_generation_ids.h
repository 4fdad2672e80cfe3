// A tokenizer that also ends generations on the ids a HF folder's generation_config.json
// lists (eos_token_id as an int or a list: Llama 3 Instruct stops on <|end_of_text|>,
// <|eom_id|> and <|eot_id|>), whichever tokenizer file the folder has.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace kvscope {

// `inner` with `ids` added to its end-of-generation set. ModelError naming `source`
// ("FILE: eos_token_id") when an id is outside the tokenizer's vocab.
std::unique_ptr<Tokenizer> with_end_of_generation_ids(std::unique_ptr<Tokenizer> inner,
                                                      const std::vector<std::int64_t>& ids,
                                                      const std::string& source);

}  // namespace kvscope
