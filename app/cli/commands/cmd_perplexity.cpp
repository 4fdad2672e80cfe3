// `kvscope-cli perplexity -m MODEL -f TEXT [-c CTX] [-ctk/-ctv TYPE]`: how well the model
// predicts a text, cut and scored exactly as llama-perplexity does (run/perplexity.h).
// `--save-baseline FILE` stores the scored log-probabilities; a later run with
// `--baseline FILE` (e.g. with int8 or int4 KV) also reports the mean KL divergence from the
// baseline and how often both put the same token first. A baseline says what it was scored on
// (run/perplexity_baseline.h) and is refused before any chunk runs when that is not this run.
// The text must be a regular file of at most 64 MiB.
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/engine_args.h"
#include "cpu/cpu_ops.h"
#include "run/engine.h"
#include "run/perplexity.h"
#include "run/perplexity_baseline.h"
#include "util/error.h"
#include "util/regular_file.h"

namespace kvscope::cli {

namespace {

struct Scores {
  double nll = 0;      // sum of -log p(next token)
  std::int64_t n = 0;  // tokens scored
  double kl = 0;       // sum of KL(baseline || this)
  std::int64_t top1_same = 0;
};

// A text to score is at most this big: 64 MiB is ~16M tokens, days of scoring on a CPU
// (wikitext-2's test text, the usual one, is 1.3 MB). The cap also bounds what an endless
// file could make it read.
constexpr std::uint64_t kMaxTextBytes = std::uint64_t{64} << 20;

// The text file, whole; a FIFO, a device (/dev/zero) or a file over the cap is refused.
std::string read_text_file(const std::string& path) {
  const RegularFile file(path);
  if (!file.is_open()) {
    throw_error<UsageError>("{}: cannot read the text file ({})", path, file.error());
  }
  if (file.size() > kMaxTextBytes) {
    throw_error<UsageError>(
        "{}: {} bytes is over the {} MiB a text to score may have; score a part of it (e.g. "
        "head -c 1000000 FILE > part.txt)",
        path, file.size(), kMaxTextBytes >> 20);
  }
  std::string text(static_cast<std::size_t>(file.size()), '\0');
  text.resize(file.read_at(0, text.data(), text.size()));  // never more, even if it grows
  return text;
}

std::int64_t argmax(std::span<const float> v) {
  return std::max_element(v.begin(), v.end()) - v.begin();
}

// What --help says about the method (run/perplexity.h has the details).
constexpr const char* kMethod =
    "Cuts and scores the text exactly as llama.cpp's llama-perplexity does, so the two\n"
    "report the same PPL for the same model, text and -c: the whole text is tokenized once\n"
    "(BOS first when the model adds one) and cut into consecutive chunks of exactly -c\n"
    "tokens (the tail that fills no chunk is dropped; at least 2 x -c tokens are needed);\n"
    "each chunk's first token is replaced by BOS (when the model adds one), the chunk runs\n"
    "from an empty cache, and its second half is scored: the tokens at positions\n"
    "-c/2 + 1 .. -c - 1, each from the logits of the position before.\n"
    "PPL = exp(mean negative log-likelihood of every scored token).";

// Scores one chunk: the log-softmax over the first n_vocab logits (the ids the tokenizer can
// spell, llama.cpp's n_vocab) of each row from perplexity_first_scored(n) on, against the
// next token. logits: [chunk.size()][row].
void score_chunk(const std::vector<float>& logits, const std::vector<TokenId>& chunk,
                 std::int64_t row, std::int64_t n_vocab, PerplexityBaselineReader* baseline,
                 PerplexityBaselineWriter* save, Scores& s) {
  const auto n = static_cast<std::int64_t>(chunk.size());
  const auto nv = static_cast<std::size_t>(n_vocab);
  std::vector<float> lp(nv), base(nv);
  for (std::int64_t i = perplexity_first_scored(n); i + 1 < n; ++i) {
    log_softmax(std::span<const float>(logits).subspan(static_cast<std::size_t>(i * row), nv), lp);
    s.nll -= lp[static_cast<std::size_t>(chunk[static_cast<std::size_t>(i + 1)])];
    ++s.n;
    if (save) save->write_row(lp);
    if (baseline) {
      baseline->read_row(base);
      double kl = 0;
      for (std::size_t v = 0; v < nv; ++v) kl += std::exp(base[v]) * (base[v] - lp[v]);
      s.kl += kl;
      s.top1_same += argmax(base) == argmax(lp);
    }
  }
}

// What a baseline of this run holds (run/perplexity_baseline.h).
PerplexityBaselineHeader baseline_header(const ModelSpec& spec,
                                         const std::vector<std::vector<TokenId>>& chunks,
                                         std::int64_t n_vocab, std::int64_t ctx) {
  PerplexityBaselineHeader h;
  h.model = perplexity_model_identity(spec);
  h.n_vocab = n_vocab;
  h.n_ctx = ctx;
  for (const auto& chunk : chunks) {
    h.n_scored += static_cast<std::int64_t>(chunk.size()) - 1 -
                  perplexity_first_scored(static_cast<std::int64_t>(chunk.size()));
  }
  h.tokens = perplexity_tokens_hash(chunks);
  return h;
}

}  // namespace

int cmd_perplexity(const Args& args) {
  ArgParser p("perplexity",
              fmt::format("-m MODEL -f TEXT [-c CTX] [--chunks N] [--save-baseline F | "
                          "--baseline F]\n\n{}",
                          kMethod));
  declare_engine_options(p);
  p.option({"-f", "--file"}, "the text to score");
  p.option({"--chunks"}, "score at most this many chunks (default: all)");
  p.option({"--save-baseline"}, "write the scored log-probabilities to this file");
  p.option({"--baseline"}, "compare with log-probabilities saved by --save-baseline");
  if (!p.parse(args)) return 0;
  const auto save_path = p.get("--save-baseline");
  const auto baseline_path = p.get("--baseline");
  if (save_path && baseline_path) {
    throw_error<UsageError>("give --save-baseline or --baseline, not both");
  }
  const std::string text = read_text_file(p.required("-f"));  // before the model loads
  EngineOptions options = engine_options(p);
  if (options.context_length == 0) options.context_length = 512;
  Engine engine(p.required("-m"), options);
  const std::int64_t ctx = engine.context_length();
  // A chunk scores the tokens after its first half but its last: none for fewer than 3.
  if (ctx - 1 - perplexity_first_scored(ctx) < 1) {
    throw_error<UsageError>(
        "option -c: {} tokens leave no token to score (a chunk scores its second half but "
        "its last token); perplexity needs at least 3",
        ctx);
  }
  const Tokenizer& tokenizer = engine.tokenizer();
  const std::int64_t row = engine.spec().vocab_size;
  const std::int64_t n_vocab = std::min(row, tokenizer.vocab_size());
  const std::int64_t max_chunks = p.get_int("--chunks", std::numeric_limits<std::int64_t>::max(), 1,
                                            std::numeric_limits<std::int64_t>::max());
  // BOS first and in every chunk's first place only when the model adds one, as llama.cpp.
  const bool add_bos = tokenizer.add_bos_default() && tokenizer.bos() >= 0;
  const std::vector<std::vector<TokenId>> chunks = perplexity_chunks(
      engine.tokenize(text, true), ctx, add_bos ? tokenizer.bos() : -1, max_chunks);
  const auto n_chunks = static_cast<std::int64_t>(chunks.size());
  // Both files are opened (and a baseline checked) before any chunk is evaluated.
  const PerplexityBaselineHeader header = baseline_header(engine.spec(), chunks, n_vocab, ctx);
  std::optional<PerplexityBaselineWriter> save;
  std::optional<PerplexityBaselineReader> baseline;
  if (save_path) save.emplace(*save_path, header);
  if (baseline_path) baseline.emplace(*baseline_path, header);
  Scores s;
  for (std::int64_t c = 0; c < n_chunks; ++c) {
    const std::vector<TokenId>& chunk = chunks[static_cast<std::size_t>(c)];
    score_chunk(engine.evaluate(chunk), chunk, row, n_vocab, baseline ? &*baseline : nullptr,
                save ? &*save : nullptr, s);
    fmt::print(stderr, "[{}/{}] running PPL = {:.4f}\n", c + 1, n_chunks,
               std::exp(s.nll / static_cast<double>(s.n)));
  }
  if (save) save->finish();
  fmt::print("tokens scored = {} ({} chunks of {})\n", s.n, n_chunks, ctx);
  fmt::print("PPL = {:.6f}\n", std::exp(s.nll / static_cast<double>(s.n)));
  if (baseline) {
    fmt::print("mean KL = {:.8f}\n", s.kl / static_cast<double>(s.n));
    fmt::print("top-1 agreement = {:.4f}%\n",
               100.0 * static_cast<double>(s.top1_same) / static_cast<double>(s.n));
  }
  return 0;
}

}  // namespace kvscope::cli
