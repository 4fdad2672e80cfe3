// `kvscope-cli perplexity -m MODEL -f TEXT [-c CTX] [-ctk/-ctv TYPE]`: how well the model
// predicts a text, as llama-perplexity computes it: the text is cut into chunks of -c
// tokens (BOS first), each evaluated from an empty cache, and the second half of every
// chunk is scored. `--save-baseline FILE` stores the scored log-probabilities; a later run
// with `--baseline FILE` (e.g. with int8 or int4 KV) also reports the mean KL divergence
// from the baseline and how often both put the same token first.
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/engine_args.h"
#include "cpu/cpu_ops.h"
#include "run/engine.h"
#include "util/error.h"

namespace kvscope::cli {

namespace {

struct Scores {
  double nll = 0;      // sum of -log p(next token)
  std::int64_t n = 0;  // tokens scored
  double kl = 0;       // sum of KL(baseline || this)
  std::int64_t top1_same = 0;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_error<UsageError>("{}: cannot read the text file", path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::int64_t argmax(std::span<const float> v) {
  return std::max_element(v.begin(), v.end()) - v.begin();
}

// Scores one chunk: log-softmax of every row in the second half against the next token.
void score_chunk(const std::vector<float>& logits, const std::vector<TokenId>& chunk,
                 std::int64_t vocab, std::ifstream* baseline, std::ofstream* save, Scores& s) {
  const auto n = static_cast<std::int64_t>(chunk.size());
  std::vector<float> lp(static_cast<std::size_t>(vocab)), base(static_cast<std::size_t>(vocab));
  for (std::int64_t i = n / 2; i + 1 < n; ++i) {
    log_softmax(std::span<const float>(logits).subspan(static_cast<std::size_t>(i * vocab),
                                                       static_cast<std::size_t>(vocab)),
                lp);
    s.nll -= lp[static_cast<std::size_t>(chunk[static_cast<std::size_t>(i + 1)])];
    ++s.n;
    if (save) save->write(reinterpret_cast<const char*>(lp.data()), vocab * 4);
    if (baseline) {
      if (!baseline->read(reinterpret_cast<char*>(base.data()), vocab * 4)) {
        throw_error<UsageError>("the baseline file ends early: was it made from this text and -c?");
      }
      double kl = 0;
      for (std::int64_t v = 0; v < vocab; ++v) kl += std::exp(base[v]) * (base[v] - lp[v]);
      s.kl += kl;
      s.top1_same += argmax(base) == argmax(lp);
    }
  }
}

}  // namespace

int cmd_perplexity(const Args& args) {
  ArgParser p("perplexity", "-m MODEL -f TEXT [-c CTX] [--save-baseline F | --baseline F]");
  declare_engine_options(p);
  p.option({"-f", "--file"}, "the text to score");
  p.option({"--chunks"}, "score at most this many chunks (default: all)");
  p.option({"--save-baseline"}, "write the scored log-probabilities to this file");
  p.option({"--baseline"}, "compare with log-probabilities saved by --save-baseline");
  if (!p.parse(args)) return 0;
  EngineOptions options = engine_options(p);
  if (options.context_length == 0) options.context_length = 512;
  Engine engine(p.required("-m"), options);
  const std::int64_t ctx = engine.context_length();
  const std::int64_t vocab = engine.spec().vocab_size;
  const std::vector<TokenId> tokens = engine.tokenize(read_file(p.required("-f")), false);
  if (ctx < 2) throw_error<UsageError>("option -c: {} tokens; perplexity needs at least 2", ctx);
  const std::int64_t per_chunk = ctx - 1;  // BOS + ctx - 1 text tokens
  std::int64_t n_chunks = static_cast<std::int64_t>(tokens.size()) / per_chunk;
  n_chunks = std::min(n_chunks,
                      p.get_int("--chunks", n_chunks, 1, std::numeric_limits<std::int64_t>::max()));
  if (n_chunks < 1) {
    throw_error<UsageError>("the text has {} tokens; one chunk of -c {} needs {}", tokens.size(),
                            ctx, per_chunk);
  }
  std::ofstream save;
  std::ifstream baseline;
  if (auto f = p.get("--save-baseline")) save.open(*f, std::ios::binary);
  if (auto f = p.get("--baseline")) {
    baseline.open(*f, std::ios::binary);
    if (!baseline) throw_error<UsageError>("{}: cannot read the baseline", *f);
  }
  Scores s;
  for (std::int64_t c = 0; c < n_chunks; ++c) {
    std::vector<TokenId> chunk{engine.tokenizer().bos()};
    chunk.insert(chunk.end(), tokens.begin() + c * per_chunk, tokens.begin() + (c + 1) * per_chunk);
    const std::vector<float> logits = engine.evaluate(chunk);
    score_chunk(logits, chunk, vocab, baseline.is_open() ? &baseline : nullptr,
                save.is_open() ? &save : nullptr, s);
    fmt::print(stderr, "[{}/{}] running PPL = {:.4f}\n", c + 1, n_chunks,
               std::exp(s.nll / static_cast<double>(s.n)));
  }
  fmt::print("tokens scored = {} ({} chunks of {})\n", s.n, n_chunks, ctx);
  fmt::print("PPL = {:.6f}\n", std::exp(s.nll / static_cast<double>(s.n)));
  if (baseline.is_open()) {
    fmt::print("mean KL = {:.8f}\n", s.kl / static_cast<double>(s.n));
    fmt::print("top-1 agreement = {:.4f}%\n",
               100.0 * static_cast<double>(s.top1_same) / static_cast<double>(s.n));
  }
  return 0;
}

}  // namespace kvscope::cli
