// kvscope-cli: the command-line face of the engine. `kvscope-cli COMMAND [options]`.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include <fmt/format.h>

#include "cli/command.h"
#include "util/error.h"

namespace kvscope::cli {
int cmd_simulate(const Args& args);         // cmd_simulate.cpp
int cmd_bench_attention(const Args& args);  // cmd_bench_attention.cpp
int cmd_watch(const Args& args);            // cmd_watch.cpp
int cmd_serve(const Args& args);            // cmd_serve.cpp
}  // namespace kvscope::cli

namespace {

using kvscope::cli::Command;

constexpr Command kCommands[] = {
    {"inspect", "print a model's spec, tensors, tokenizer and KV bytes per token",
     kvscope::cli::cmd_inspect},
    {"tokenize", "print the token ids of a prompt", kvscope::cli::cmd_tokenize},
    {"run", "generate text from a prompt (--json for ids and log-probabilities)",
     kvscope::cli::cmd_run},
    {"chat", "an interactive chat with the model's chat template", kvscope::cli::cmd_chat},
    {"perplexity", "PPL of a text; KL divergence against a saved baseline",
     kvscope::cli::cmd_perplexity},
    {"plan", "what fits: memory breakdown, maxima and the decode roofline", kvscope::cli::cmd_plan},
    {"models", "the models on this computer (HF, Ollama, LM Studio, ...) and whether they fit",
     kvscope::cli::cmd_models},
    {"pull", "download a model of the catalog (resumes; sha256 checked; says first if it fits)",
     kvscope::cli::cmd_pull},
    {"bench", "prompt and decode tokens/s (median of repeats)", kvscope::cli::cmd_bench},
    {"bench-attention", "paged decode attention alone: us per call and GB/s per KV dtype",
     kvscope::cli::cmd_bench_attention},
    {"devices", "list the compute backends this machine can use", kvscope::cli::cmd_devices},
    {"quantize", "write a copy of a GGUF model with its matrices in another type",
     kvscope::cli::cmd_quantize},
    {"simulate", "paged vs contiguous KV allocation on a request trace (no model needed)",
     kvscope::cli::cmd_simulate},
    {"watch", "follow a server's /metrics (vLLM, llama-server, KVScope): KV, queue, TTFT",
     kvscope::cli::cmd_watch},
    {"serve", "an OpenAI-compatible HTTP server on 127.0.0.1 (chat, completions, /metrics)",
     kvscope::cli::cmd_serve},
};

void print_usage(std::FILE* out) {
  fmt::print(out, "usage: kvscope-cli COMMAND [options]\n\ncommands:\n");
  for (const auto& c : kCommands) fmt::print(out, "  {:<15} {}\n", c.name, c.summary);
  fmt::print(out, "\n`kvscope-cli COMMAND --help` describes a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(stdout);
    return 0;
  }
  for (const auto& c : kCommands) {
    if (name != c.name) continue;
    kvscope::cli::Args args(argv + 2, argv + argc);
    try {
      return c.run(args);
    } catch (const kvscope::Error& e) {
      fmt::print(stderr, "kvscope-cli {}: {}\n", name, e.what());
    } catch (const std::bad_alloc&) {
      fmt::print(stderr, "kvscope-cli {}: out of memory\n", name);
    } catch (const std::exception& e) {
      fmt::print(stderr, "kvscope-cli {}: internal error: {}\n", name, e.what());
    }
    return 1;
  }
  fmt::print(stderr, "kvscope-cli: unknown command '{}'\n", name);
  print_usage(stderr);
  return 2;
}
