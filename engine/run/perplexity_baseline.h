// The file `kvscope-cli perplexity --save-baseline` writes and `--baseline` compares with:
// every scored token's log-probabilities, behind a header that says what they were scored on,
// so a file from another model, text, -c or --chunks (or one that is not a baseline at all)
// is refused before anything is compared. Little-endian, as the machines that run KVScope:
//   [0, 8)     magic "KVSPPLB1" (the 1 is the version)
//   [8, 72)    model: perplexity_model_identity(), NUL-padded
//   [72, 80)   n_vocab   u64  log-probabilities per scored token
//   [80, 88)   n_ctx     u64  tokens per chunk (-c)
//   [88, 96)   n_scored  u64  scored tokens, the rows that follow
//   [96, 104)  tokens    u64  FNV-1a of every chunk's token ids (text, tokenizer, --chunks)
//   [104, ...) rows      f32  [n_scored][n_vocab]
// The model is named by its shape, not its file: a baseline from an f16 model serves its
// quantized copies and any KV cache type, which is what the comparison is for.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "model/model_spec.h"
#include "text/tokenizer.h"
#include "util/regular_file.h"

namespace kvscope {

struct PerplexityBaselineHeader {
  std::string model;  // at most 64 bytes
  std::int64_t n_vocab = 0;
  std::int64_t n_ctx = 0;
  std::int64_t n_scored = 0;
  std::uint64_t tokens = 0;
};

inline constexpr std::size_t kPerplexityBaselineHeaderBytes = 104;

// "llama, 5 layers, dim 64, 8 heads / 4 KV heads, vocab 512" (at most 64 bytes).
std::string perplexity_model_identity(const ModelSpec& spec);

// FNV-1a over the chunks' token ids, in order.
std::uint64_t perplexity_tokens_hash(const std::vector<std::vector<TokenId>>& chunks);

// Writes a baseline. UsageError naming the path and the OS's reason when it cannot be
// created or written (checked again when finished: a full disk shows at the end).
class PerplexityBaselineWriter {
 public:
  PerplexityBaselineWriter(const std::string& path, const PerplexityBaselineHeader& header);
  ~PerplexityBaselineWriter();
  PerplexityBaselineWriter(const PerplexityBaselineWriter&) = delete;
  PerplexityBaselineWriter& operator=(const PerplexityBaselineWriter&) = delete;

  void write_row(std::span<const float> log_probs);  // n_vocab values
  void finish();  // UsageError unless exactly n_scored rows were written and all reached disk

 private:
  void write(const void* bytes, std::size_t n);

  std::string path_;
  PerplexityBaselineHeader header_;
  std::FILE* file_ = nullptr;
  std::int64_t rows_ = 0;
};

// Reads a baseline after checking that it is one (magic, a size that matches its header) and
// that it was made for `expected` (model, n_vocab, n_ctx, n_scored, tokens); UsageError
// naming the path and the first difference otherwise.
class PerplexityBaselineReader {
 public:
  PerplexityBaselineReader(const std::string& path, const PerplexityBaselineHeader& expected);

  void read_row(std::span<float> log_probs);  // the next row, n_vocab values

 private:
  std::string path_;
  RegularFile file_;
  std::int64_t n_vocab_ = 0;
  std::int64_t n_scored_ = 0;
  std::int64_t rows_ = 0;
};

}  // namespace kvscope
