// kvscope-cli subcommands. Each lives in its own commands/cmd_*.cpp, is declared here once
// and listed once in the registry (command.cpp), which main() dispatches through and which
// prints the help. A command gets its arguments (without the program and command names),
// prints its result on stdout and returns the exit code; bad input is thrown as
// kvscope::Error and main turns it into one clear line on stderr and a non-zero exit.
#pragma once

#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kvscope::cli {

using Args = std::vector<std::string>;

struct Command {
  const char* name;
  const char* summary;  // one line in `kvscope-cli --help`
  int (*run)(const Args& args);
};

// Every command, in the order `kvscope-cli --help` lists them.
std::span<const Command> commands();
// The command called `name`, or nullptr.
const Command* find_command(std::string_view name);
// `kvscope-cli --help`: the usage line and each command with its summary.
void print_usage(std::FILE* out);

int cmd_inspect(const Args& args);
int cmd_tokenize(const Args& args);
int cmd_run(const Args& args);
int cmd_chat(const Args& args);
int cmd_perplexity(const Args& args);
int cmd_logprobs(const Args& args);
int cmd_plan(const Args& args);
int cmd_models(const Args& args);
int cmd_pull(const Args& args);
int cmd_bench(const Args& args);
int cmd_bench_attention(const Args& args);
int cmd_devices(const Args& args);
int cmd_quantize(const Args& args);
int cmd_simulate(const Args& args);
int cmd_watch(const Args& args);
int cmd_serve(const Args& args);

}  // namespace kvscope::cli
