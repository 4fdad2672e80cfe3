// `kvscope-cli quantize -m MODEL.gguf -o OUT.gguf --type TYPE`: the model's weight matrices
// re-encoded in TYPE by the engine's own quantizers (model/gguf_requantize.h); metadata and
// 1-D tensors are kept. Makes the Q8_0 / Q4_0 / Q4_K / F16 copies that benchmarks compare.
#include <fmt/format.h>

#include "cli/arg_parser.h"
#include "cli/command.h"
#include "model/gguf/gguf_requantize.h"
#include "util/error.h"

namespace kvscope::cli {

int cmd_quantize(const Args& args) {
  ArgParser p("quantize", "-m MODEL.gguf -o OUT.gguf --type TYPE");
  p.option({"-m", "--model"}, "the GGUF model to read");
  p.option({"-o", "--output"}, "the GGUF file to write (replaced when it exists)");
  p.option({"--type"}, "f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_K, q5_K or q6_K");
  if (!p.parse(args)) return 0;
  const std::string name = p.required("--type");
  const auto type = tensor_type_from_name(name);
  if (!type) throw_error<UsageError>("--type {}: not a tensor type", name);
  const RequantizeReport r = requantize_gguf(p.required("-m"), p.required("-o"), *type);
  fmt::print(
      "{}: {} matrices in {}, {} in a fallback type (rows not whole blocks), {} kept; "
      "{:.1f} MiB of tensor data\n",
      p.required("-o"), r.matrices, tensor_type_name(*type), r.fallbacks, r.kept,
      static_cast<double>(r.bytes_out) / (1 << 20));
  return 0;
}

}  // namespace kvscope::cli
