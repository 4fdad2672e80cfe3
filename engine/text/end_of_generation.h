// Token texts that end a generation wherever they appear (llama.cpp's EOG list), shared by
// the byte-level BPE vocabs of GGUF files and of tokenizer.json. Without an explicit end-of-
// turn id, the first of these but <|eom_id|> in the vocab is the end of turn.
#pragma once

#include <array>
#include <string_view>

namespace kvscope {

inline constexpr std::array<std::string_view, 7> kEndOfGenerationTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>"};

}  // namespace kvscope
