// kvscope-cli logprobs: the log-probabilities of every position of a token sequence
// (teacher forcing: position t sees tokens 0..t), written as a NumPy .npy file, so that
// tests/reference/score.py can score the engine against the fp64 reference forward pass.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/engine_args.h"
#include "cpu/cpu_ops.h"
#include "util/error.h"

namespace kvscope::cli {

namespace {

// A version 1.0 .npy file: magic, header length, a Python dict literal padded with spaces
// to a multiple of 64 bytes, then the data, little-endian float32 in C order.
void write_npy(const std::string& path, const std::vector<float>& data, std::int64_t rows,
               std::int64_t cols) {
  std::string header =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}", rows, cols);
  const std::size_t prefix = 10;  // magic (6) + version (2) + header length (2)
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  const auto n = static_cast<std::uint16_t>(header.size());
  const char len[2] = {static_cast<char>(n & 0xff), static_cast<char>(n >> 8)};
  out.write("\x93NUMPY\x01\x00", 8);
  out.write(len, 2);
  out << header;
  out.write(reinterpret_cast<const char*>(data.data()),
            static_cast<std::streamsize>(data.size() * sizeof(float)));
  if (!out) throw_error<Error>("{}: cannot write the log-probabilities", path);
}

// The residual stream after each layer, gathered over the engine's steps (a prompt may run
// in several chunks) and written once the sequence is done.
struct LayerDump {
  std::string dir;
  std::vector<std::vector<float>> layers;  // [layer][tokens * dim], in step order

  void add(std::int64_t layer, std::span<const float> x) {
    if (static_cast<std::int64_t>(layers.size()) <= layer) layers.resize(layer + 1);
    layers[layer].insert(layers[layer].end(), x.begin(), x.end());
  }
  // The folder, made before the model runs: a name taken by a file is a usage error.
  void make_folder() const {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir)) {
      throw_error<UsageError>("--dump-layers {}: cannot make a folder there ({})", dir,
                              ec ? ec.message() : "a file of that name exists");
    }
  }
  void write(std::int64_t n_tokens) const {
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const auto dim = static_cast<std::int64_t>(layers[l].size()) / n_tokens;
      write_npy(fmt::format("{}/layer_{:02d}.npy", dir, l), layers[l], n_tokens, dim);
    }
    fmt::print("wrote {} layers' residual streams to {}\n", layers.size(), dir);
  }
};

}  // namespace

int cmd_logprobs(const Args& args) {
  ArgParser p("logprobs",
              "-m MODEL --ids ID,ID,... -o OUT.npy\n\n"
              "Runs the ids through a fresh sequence and writes each position's log-softmax of\n"
              "the logits, float32 [tokens][vocab] in NumPy's .npy format (row t: the\n"
              "distribution of the token after position t).");
  declare_engine_options(p);
  p.option({"--ids"}, "token ids, comma-separated (BOS included when wanted)");
  p.option({"-o", "--out"}, "the .npy file to write");
  p.option({"--dump-layers"},
           "debug, CPU: also write the residual stream after each layer to DIR/layer_NN.npy, "
           "float32 [tokens][dim]");
  if (!p.parse(args)) return 0;
  const std::vector<std::int64_t> listed =
      p.get_int_list("--ids", p.required("--ids"), 0, std::numeric_limits<TokenId>::max());
  const std::vector<TokenId> ids(listed.begin(), listed.end());
  const std::string out = p.required("-o");
  EngineOptions options = engine_options(p);
  LayerDump dump;
  if (auto dir = p.get("--dump-layers")) {
    dump.dir = *dir;
    dump.make_folder();
    options.backend = BackendChoice::Cpu;
    options.cpu_layer_output = [&dump](std::int64_t layer, std::span<const float> x) {
      dump.add(layer, x);
    };
  }
  Engine engine(p.required("-m"), std::move(options));
  std::vector<float> logits = engine.evaluate(ids);  // [tokens][vocab]
  const std::int64_t vocab = engine.spec().vocab_size;
  const auto n = static_cast<std::int64_t>(ids.size());
  std::vector<float> lp(logits.size());
  for (std::int64_t t = 0; t < n; ++t) {
    const auto at = static_cast<std::size_t>(t * vocab);
    log_softmax(std::span<const float>(logits).subspan(at, static_cast<std::size_t>(vocab)),
                std::span<float>(lp).subspan(at, static_cast<std::size_t>(vocab)));
  }
  write_npy(out, lp, n, vocab);
  if (!dump.dir.empty()) dump.write(n);
  fmt::print("wrote {} x {} log-probabilities to {}\n", n, vocab, out);
  return 0;
}

}  // namespace kvscope::cli
