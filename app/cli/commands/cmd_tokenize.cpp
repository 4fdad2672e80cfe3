// `kvscope-cli tokenize -m MODEL -p TEXT [--ids] [--no-bos]`: the model's own tokenizer on
// a prompt. --ids prints a JSON array of ids; otherwise one "id<TAB>piece" line per token.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/arg_parser.h"
#include "cli/command.h"
#include "model/model.h"
#include "text/hf_tokenizer.h"
#include "text/tokenizer.h"

namespace kvscope::cli {

int cmd_tokenize(const Args& args) {
  ArgParser p("tokenize", "-m MODEL -p TEXT [--ids] [--no-bos]");
  p.option({"-m", "--model"},
           "model: a GGUF file, a Hugging Face folder, a tokenizer.model or a tokenizer.json");
  p.option({"-p", "--prompt"}, "the text to tokenize");
  p.flag({"--ids"}, "print only the ids, as a JSON array");
  p.flag({"--no-bos"}, "do not add BOS (default: as the model's metadata says)");
  if (!p.parse(args)) return 0;
  const std::string path = p.required("-m");
  const std::string text = p.required("-p");

  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  if (path.size() > 6 && path.ends_with(".model")) {
    tokenizer = load_sentencepiece_file(path);
  } else if (path.ends_with(".json")) {
    tokenizer = load_hf_tokenizer(path);
  } else {
    model = load_model(path);
    tokenizer = make_tokenizer(*model);
  }
  const bool bos = !p.has("--no-bos") && tokenizer->add_bos_default();
  const std::vector<TokenId> ids = tokenizer->encode(text, bos);
  if (p.has("--ids")) {
    fmt::print("{}\n", nlohmann::json(ids).dump());
    return 0;
  }
  for (TokenId id : ids) {
    fmt::print("{}\t{}\n", id,
               nlohmann::json(tokenizer->piece(id))
                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return 0;
}

}  // namespace kvscope::cli
