// A program run in the background for a test (a loopback server: python3 -m http.server,
// kvscope-cli serve): started with its stdout on a pipe, read line by line with a deadline,
// and ended with SIGTERM (then SIGKILL) when the test is done with it.
#pragma once

#include <sys/types.h>

#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace kvscope::test {

class BackgroundProcess {
 public:
  // argv[0] is the program's path (or a name looked up in PATH); stderr joins stdout.
  explicit BackgroundProcess(const std::vector<std::string>& argv);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  // Reads output until a line matches `pattern` (its first group returned) or `seconds`
  // pass or the program ends (nullopt).
  std::optional<std::string> wait_for(const std::regex& pattern, double seconds);
  // Everything read so far.
  const std::string& output() const { return output_; }
  // SIGTERM, up to 10 s to end, then SIGKILL; the exit status (-1: killed by a signal).
  int stop();

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string output_;
  std::string partial_;
};

}  // namespace kvscope::test
