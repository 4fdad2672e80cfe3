#include "cli/engine_args.h"

#include "kv/format/kv_format.h"
#include "plan/units.h"
#include "util/error.h"

namespace kvscope::cli {

void declare_engine_options(ArgParser& p) {
  p.option({"-m", "--model"}, "model: a GGUF file or a Hugging Face folder");
  p.option({"-c", "--ctx-size"}, "context length in tokens (default: the model's, at most 8192)");
  p.option({"-t", "--threads"}, "CPU threads (default: all cores)");
  p.option({"-ctk", "--cache-type-k"}, "K cache dtype: f16, int8 or int4 (default f16)");
  p.option({"-ctv", "--cache-type-v"}, "V cache dtype: f16, int8 or int4 (default f16)");
  p.option({"--block-size"}, "KV cache block size in tokens (default 16)");
  p.option({"--kv-exact-tail"},
           "int8/int4 cache: blocks at the end of each sequence also kept in fp16 and read "
           "exactly (default 2 on the CPU backend, 0 on CUDA; 0: off)");
  p.option({"--backend"}, "auto, cpu or cuda (default auto)");
  p.option({"-ngl", "--gpu-layers"},
           "layers on the GPU, the rest on the CPU: a count, auto (the most that fit the GPU's "
           "memory with the context) or all (the default; as auto when the whole model leaves "
           "no room for its KV cache)");
  p.option({"--kv-budget"}, "bytes for the KV cache pool, e.g. 512MiB (default: 4 full contexts)");
  p.option({"--memory"}, "device memory to plan within, e.g. 16GiB (a simulated GPU on the CPU)");
  p.option({"-b", "--batch-size"}, "tokens per forward step / prompt chunk (default 512)");
  p.flag({"--f32-activations"},
         "CPU: float activations for every weight type and llama.cpp's fp16 attention order "
         "(the exact reference path; default: 8-bit codes for quantized weights, as llama.cpp, "
         "and float SIMD attention)");
  p.flag({"--one-plane-output"},
         "CPU: the output projection reads one plane of 8-bit codes, as llama.cpp (default: "
         "two, the second coding the first's rounding error)");
}

namespace {

// --gpu-layers: all, auto or a count; refused with the reason where no GPU can take layers.
std::int64_t gpu_layers(const ArgParser& p, const EngineOptions& o) {
  const auto v = p.get("--gpu-layers");
  if (!v || *v == "all") return EngineOptions::kAllGpuLayers;
  const std::int64_t n =
      *v == "auto" ? EngineOptions::kAutoGpuLayers : p.get_int("--gpu-layers", 0, 0, 1 << 20);
  if (n == 0) return 0;
  if (!o.cuda_factory) {
    throw_error<UsageError>(
        "--gpu-layers {}: this build has no CUDA backend (it was built without the CUDA "
        "toolkit), so every layer runs on the CPU; build with the toolkit installed "
        "(KVSCOPE_CUDA=ON) to put layers on an NVIDIA GPU",
        *v);
  }
  if (o.backend == BackendChoice::Cpu) {
    throw_error<UsageError>("--gpu-layers {} with --backend cpu: the CPU backend has no GPU", *v);
  }
  return n;
}

}  // namespace

EngineOptions engine_options(const ArgParser& p) {
  EngineOptions o;
  o.backend = parse_backend_choice(p.get_or("--backend", "auto"));
  o.cuda_factory = cuda_backend_factory();
  o.n_threads = static_cast<int>(p.get_int("-t", 0, 0, 4096));      // 0: all cores
  o.context_length = p.get_int("-c", 0, 0, std::int64_t{1} << 30);  // 0: the model's
  o.k_dtype = parse_kv_dtype(p.get_or("-ctk", "f16"));
  o.v_dtype = parse_kv_dtype(p.get_or("-ctv", "f16"));
  o.block_size = p.get_int("--block-size", 16, 1, 4096);
  o.kv_exact_tail_blocks = p.get_int("--kv-exact-tail", -1, 0, 64);
  if (auto v = p.get("--kv-budget"))
    o.kv_budget_bytes = static_cast<std::uint64_t>(parse_byte_size(*v, "--kv-budget"));
  if (auto v = p.get("--memory"))
    o.memory_budget_bytes = static_cast<std::uint64_t>(parse_byte_size(*v, "--memory"));
  o.scheduler.max_batch_tokens = p.get_int("-b", 512, 1, std::int64_t{1} << 20);
  o.gpu_layers = gpu_layers(p, o);
  o.q8_activations = !p.has("--f32-activations");
  o.two_plane_output = !p.has("--one-plane-output");
  return o;
}

}  // namespace kvscope::cli
