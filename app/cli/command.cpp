// The registry of kvscope-cli's commands: name, one-line help, function.
#include "cli/command.h"

#include <fmt/format.h>

namespace kvscope::cli {

namespace {

constexpr Command kCommands[] = {
    {"inspect", "print a model's spec, tensors, tokenizer and KV bytes per token", cmd_inspect},
    {"tokenize", "print the token ids of a prompt", cmd_tokenize},
    {"run", "generate text from a prompt (--json for ids and log-probabilities)", cmd_run},
    {"chat", "an interactive chat with the model's chat template", cmd_chat},
    {"perplexity", "PPL of a text; KL divergence against a saved baseline", cmd_perplexity},
    {"logprobs", "every position's log-probabilities for token ids, as a .npy file", cmd_logprobs},
    {"plan", "what fits: memory breakdown, maxima and the decode roofline", cmd_plan},
    {"models", "the models on this computer (HF, Ollama, LM Studio, ...) and whether they fit",
     cmd_models},
    {"pull", "download a model of the catalog (resumes; sha256 checked; says first if it fits)",
     cmd_pull},
    {"bench", "prompt and decode tokens/s (median of repeats)", cmd_bench},
    {"bench-attention", "paged decode attention alone: us per call and GB/s per KV dtype",
     cmd_bench_attention},
    {"devices", "list the compute backends this machine can use", cmd_devices},
    {"quantize", "write a copy of a GGUF model with its matrices in another type", cmd_quantize},
    {"simulate", "paged vs contiguous KV allocation on a request trace (no model needed)",
     cmd_simulate},
    {"watch", "follow a server's /metrics (vLLM, llama-server, KVScope): KV, queue, TTFT",
     cmd_watch},
    {"serve", "an OpenAI-compatible HTTP server on 127.0.0.1 (chat, completions, /metrics)",
     cmd_serve},
};

}  // namespace

std::span<const Command> commands() {
  return kCommands;
}

const Command* find_command(std::string_view name) {
  for (const Command& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

void print_usage(std::FILE* out) {
  fmt::print(out, "usage: kvscope-cli COMMAND [options]\n\ncommands:\n");
  for (const Command& c : kCommands) fmt::print(out, "  {:<15} {}\n", c.name, c.summary);
  fmt::print(out, "\n`kvscope-cli COMMAND --help` describes a command's options.\n");
}

}  // namespace kvscope::cli
