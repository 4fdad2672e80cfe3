#include "run/perplexity_baseline.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "util/error.h"

namespace kvscope {

namespace {

constexpr std::array<char, 8> kMagic{'K', 'V', 'S', 'P', 'P', 'L', 'B', '1'};
constexpr std::size_t kModelBytes = 64;

void put_u64(std::uint8_t* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint64_t get_u64(const std::uint8_t* in) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | in[i];
  return v;
}

std::array<std::uint8_t, kPerplexityBaselineHeaderBytes> encode(const PerplexityBaselineHeader& h) {
  std::array<std::uint8_t, kPerplexityBaselineHeaderBytes> out{};
  std::memcpy(out.data(), kMagic.data(), kMagic.size());
  std::memcpy(out.data() + 8, h.model.data(), std::min(h.model.size(), kModelBytes));
  put_u64(out.data() + 72, static_cast<std::uint64_t>(h.n_vocab));
  put_u64(out.data() + 80, static_cast<std::uint64_t>(h.n_ctx));
  put_u64(out.data() + 88, static_cast<std::uint64_t>(h.n_scored));
  put_u64(out.data() + 96, h.tokens);
  return out;
}

// The header's fields; `model` cut at its first NUL and at kModelBytes.
PerplexityBaselineHeader decode(const std::uint8_t* in) {
  PerplexityBaselineHeader h;
  const char* model = reinterpret_cast<const char*>(in + 8);
  h.model.assign(model, strnlen(model, kModelBytes));
  h.n_vocab = static_cast<std::int64_t>(get_u64(in + 72));
  h.n_ctx = static_cast<std::int64_t>(get_u64(in + 80));
  h.n_scored = static_cast<std::int64_t>(get_u64(in + 88));
  h.tokens = get_u64(in + 96);
  return h;
}

// The first field in which `got` differs from `want`, as a sentence; "" when none does.
std::string first_difference(const PerplexityBaselineHeader& got,
                             const PerplexityBaselineHeader& want) {
  if (got.model != want.model) {
    return fmt::format("it was made with another model ({}; this one is {})", got.model,
                       want.model);
  }
  if (got.n_vocab != want.n_vocab) {
    return fmt::format("it holds {} log-probabilities per token, this model {}", got.n_vocab,
                       want.n_vocab);
  }
  if (got.n_ctx != want.n_ctx) {
    return fmt::format("it was made with -c {}, this run uses -c {}", got.n_ctx, want.n_ctx);
  }
  if (got.n_scored != want.n_scored || got.tokens != want.tokens) {
    return fmt::format(
        "it scored {} tokens of another text (or other --chunks); this run scores {} tokens",
        got.n_scored, want.n_scored);
  }
  return "";
}

}  // namespace

std::string perplexity_model_identity(const ModelSpec& spec) {
  std::string id =
      fmt::format("{}, {} layers, dim {}, {} heads / {} KV heads, vocab {}", spec.architecture,
                  spec.n_layers, spec.dim, spec.n_heads, spec.n_kv_heads, spec.vocab_size);
  if (id.size() > kModelBytes) id.resize(kModelBytes);
  return id;
}

std::uint64_t perplexity_tokens_hash(const std::vector<std::vector<TokenId>>& chunks) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a, 64-bit
  for (const auto& chunk : chunks) {
    for (const TokenId t : chunk) {
      const auto v = static_cast<std::uint32_t>(t);
      for (int i = 0; i < 4; ++i) {
        h ^= (v >> (8 * i)) & 0xffu;
        h *= 1099511628211ull;
      }
    }
  }
  return h;
}

PerplexityBaselineWriter::PerplexityBaselineWriter(const std::string& path,
                                                   const PerplexityBaselineHeader& header)
    : path_(path), header_(header) {
  file_ = std::fopen(path.c_str(), "wbe");  // e: O_CLOEXEC
  if (!file_) {
    throw_error<UsageError>("{}: cannot write the baseline ({})", path, std::strerror(errno));
  }
  const auto bytes = encode(header);
  write(bytes.data(), bytes.size());
}

PerplexityBaselineWriter::~PerplexityBaselineWriter() {
  if (file_) std::fclose(file_);
}

void PerplexityBaselineWriter::write(const void* bytes, std::size_t n) {
  if (std::fwrite(bytes, 1, n, file_) != n) {
    throw_error<UsageError>("{}: cannot write the baseline ({})", path_, std::strerror(errno));
  }
}

void PerplexityBaselineWriter::write_row(std::span<const float> log_probs) {
  if (static_cast<std::int64_t>(log_probs.size()) != header_.n_vocab) {
    throw_error<UsageError>("{}: a row of {} log-probabilities, the header says {}", path_,
                            log_probs.size(), header_.n_vocab);
  }
  write(log_probs.data(), log_probs.size_bytes());
  ++rows_;
}

void PerplexityBaselineWriter::finish() {
  if (rows_ != header_.n_scored) {
    throw_error<UsageError>("{}: {} rows written, the header says {}", path_, rows_,
                            header_.n_scored);
  }
  std::FILE* f = std::exchange(file_, nullptr);
  if (std::fflush(f) != 0 || std::ferror(f) != 0) {
    const int err = errno;
    std::fclose(f);
    throw_error<UsageError>("{}: cannot write the baseline ({})", path_, std::strerror(err));
  }
  if (std::fclose(f) != 0) {
    throw_error<UsageError>("{}: cannot write the baseline ({})", path_, std::strerror(errno));
  }
}

PerplexityBaselineReader::PerplexityBaselineReader(const std::string& path,
                                                   const PerplexityBaselineHeader& expected)
    : path_(path), file_(path), n_vocab_(expected.n_vocab), n_scored_(expected.n_scored) {
  if (!file_.is_open()) {
    throw_error<UsageError>("{}: cannot read the baseline ({})", path, file_.error());
  }
  std::array<std::uint8_t, kPerplexityBaselineHeaderBytes> head{};
  if (file_.read_at(0, head.data(), head.size()) != head.size() ||
      std::memcmp(head.data(), kMagic.data(), kMagic.size()) != 0) {
    throw_error<UsageError>(
        "{}: not a perplexity baseline (no KVSPPLB1 header); make one with --save-baseline", path);
  }
  const PerplexityBaselineHeader got = decode(head.data());
  if (const std::string why = first_difference(got, expected); !why.empty()) {
    throw_error<UsageError>("{}: this baseline does not fit this run: {}", path, why);
  }
  const std::uint64_t want = kPerplexityBaselineHeaderBytes +
                             static_cast<std::uint64_t>(expected.n_scored) *
                                 static_cast<std::uint64_t>(expected.n_vocab) * sizeof(float);
  if (file_.size() != want) {
    throw_error<UsageError>(
        "{}: the baseline is {} bytes, its header says {} (was it cut short while saved?)", path,
        file_.size(), want);
  }
}

void PerplexityBaselineReader::read_row(std::span<float> log_probs) {
  if (static_cast<std::int64_t>(log_probs.size()) != n_vocab_ || rows_ >= n_scored_) {
    throw_error<UsageError>("{}: read past the baseline's {} rows of {}", path_, n_scored_,
                            n_vocab_);
  }
  const std::uint64_t offset =
      kPerplexityBaselineHeaderBytes + static_cast<std::uint64_t>(rows_) * log_probs.size_bytes();
  if (file_.read_at(offset, log_probs.data(), log_probs.size_bytes()) != log_probs.size_bytes()) {
    throw_error<UsageError>("{}: cannot read row {} of the baseline", path_, rows_);
  }
  ++rows_;
}

}  // namespace kvscope
