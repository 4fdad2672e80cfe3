// kvscope-cli subcommands. Each lives in its own cmd_*.cpp and is listed in main.cpp.
// A command gets its arguments (without the program and command names), prints its result
// on stdout and returns the exit code; bad input is thrown as kvscope::Error and main turns
// it into one clear line on stderr and a non-zero exit.
#pragma once

#include <string>
#include <vector>

namespace kvscope::cli {

using Args = std::vector<std::string>;

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const Args& args);
};

int cmd_inspect(const Args& args);
int cmd_tokenize(const Args& args);
int cmd_run(const Args& args);
int cmd_chat(const Args& args);
int cmd_perplexity(const Args& args);
int cmd_plan(const Args& args);
int cmd_models(const Args& args);
int cmd_pull(const Args& args);
int cmd_bench(const Args& args);
int cmd_devices(const Args& args);
int cmd_quantize(const Args& args);

}  // namespace kvscope::cli
