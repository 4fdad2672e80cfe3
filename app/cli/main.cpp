// kvscope-cli: the command-line face of the engine. `kvscope-cli COMMAND [options]`.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include <fmt/format.h>

#include "cli/command.h"
#include "util/error.h"

int main(int argc, char** argv) {
  using kvscope::cli::print_usage;
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(stdout);
    return 0;
  }
  const kvscope::cli::Command* command = kvscope::cli::find_command(name);
  if (!command) {
    fmt::print(stderr, "kvscope-cli: unknown command '{}'\n", name);
    print_usage(stderr);
    return 2;
  }
  kvscope::cli::Args args(argv + 2, argv + argc);
  try {
    const int status = command->run(args);
    // What the command printed reached its file: `inspect --json > out.json` on a full disk
    // is a failure, not a success that left half a document.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      fmt::print(stderr, "kvscope-cli {}: cannot write the output: {}\n", name,
                 std::strerror(errno));
      return 1;
    }
    return status;
  } catch (const kvscope::Error& e) {
    fmt::print(stderr, "kvscope-cli {}: {}\n", name, e.what());
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "kvscope-cli {}: out of memory\n", name);
  } catch (const std::exception& e) {
    fmt::print(stderr, "kvscope-cli {}: internal error: {}\n", name, e.what());
  }
  return 1;
}
