#include "app/cli_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "support/test_data.h"

namespace kvscope::test {

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

CliResult run_cli(const std::vector<std::string>& args) {
  return run_cli(args, 0);
}

namespace {

CliResult run_cli_at(const std::vector<std::string>& args, int timeout_s,
                     const std::filesystem::path& out_path) {
  const auto err_path = scratch_dir() / "stderr";
  const std::string exe = (binary_dir() / "bin" / "kvscope-cli").string();
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = ::open("/dev/null", O_RDONLY);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::dup2(in, 0);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  bool timed_out = false;
  if (timeout_s <= 0) {
    ::waitpid(pid, &status, 0);
  } else {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  CliResult r;
  r.exit_code = WIFEXITED(status) && !timed_out ? WEXITSTATUS(status) : -1;
  r.err = slurp(err_path);
  if (timed_out) r.err += "\n(timed out after " + std::to_string(timeout_s) + " s)";
  return r;
}

}  // namespace

CliResult run_cli(const std::vector<std::string>& args, int timeout_s) {
  const auto out_path = scratch_dir() / "stdout";
  CliResult r = run_cli_at(args, timeout_s, out_path);
  r.out = slurp(out_path);
  return r;
}

CliResult run_cli_to(const std::vector<std::string>& args, const std::string& stdout_path) {
  return run_cli_at(args, 0, stdout_path);
}

double number_after(const std::string& out, const std::string& label) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(label + " = ([0-9.]+)"))) {
    ADD_FAILURE() << "no \"" << label << " = \" in: " << out;
    return -1;
  }
  return std::stod(m[1].str());
}

}  // namespace kvscope::test
