// Runs build/bin/kvscope-cli as a user would and captures what it prints, so the CLI's
// behaviour (output, exit codes, one-line errors) is tested end to end.
#pragma once

#include <string>
#include <vector>

namespace kvscope::test {

struct CliResult {
  int exit_code = -1;  // -1: killed by a signal (a crash)
  std::string out;
  std::string err;
};

// Runs kvscope-cli with `args` (no shell is involved; arguments are passed as they are).
CliResult run_cli(const std::vector<std::string>& args);

// The same, killed (SIGKILL, exit_code -1, "timed out" on err) when it runs longer than
// timeout_s seconds: for tests of what must not block (a FIFO given as a file).
CliResult run_cli(const std::vector<std::string>& args, int timeout_s);

// The same with its standard output sent to `stdout_path` (a file or a device such as
// /dev/full) instead of captured; `out` stays empty.
CliResult run_cli_to(const std::vector<std::string>& args, const std::string& stdout_path);

// The number printed after "label = " in a command's output (e.g. "PPL = 22.2"); a test
// failure naming the label and the output, and -1, when there is none.
double number_after(const std::string& out, const std::string& label);

}  // namespace kvscope::test
