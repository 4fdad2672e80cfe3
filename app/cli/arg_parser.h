// A small option parser for kvscope-cli, following llama.cpp's flag spellings where one
// exists (-m, -p, -n, -c, -t, -ctk, -ctv). Options are declared, then parsed; anything
// unknown, a missing value or a malformed number is a UsageError naming the flag.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kvscope::cli {

// "a,b,,c" -> {"a", "b", "", "c"}; "" -> {""}.
std::vector<std::string> split_commas(const std::string& text);

class ArgParser {
 public:
  ArgParser(std::string command, std::string usage);

  // Declares an option taking a value; `names` like {"-m", "--model"}.
  void option(std::vector<std::string> names, std::string help);
  // Declares a boolean flag.
  void flag(std::vector<std::string> names, std::string help);
  // A paragraph --help prints after the options.
  void note(std::string text) { notes_.push_back(std::move(text)); }
  // Parses; throws UsageError. Returns false when --help was given (help is printed).
  bool parse(const std::vector<std::string>& args);

  bool has(const std::string& name) const;
  std::optional<std::string> get(const std::string& name) const;
  std::string get_or(const std::string& name, const std::string& fallback) const;
  std::string required(const std::string& name) const;
  // A numeric option's value (`fallback` when absent). Every numeric option states the range
  // it accepts: a value outside [lo, hi] is a UsageError naming the option and the range.
  std::int64_t get_int(const std::string& name, std::int64_t fallback, std::int64_t lo,
                       std::int64_t hi) const;
  // A comma-separated list of integers ("1024,4096"), each in [lo, hi] as get_int says;
  // `fallback` (the same form) when the option is absent.
  std::vector<std::int64_t> get_int_list(const std::string& name, const std::string& fallback,
                                         std::int64_t lo, std::int64_t hi) const;
  double get_double(const std::string& name, double fallback, double lo, double hi) const;
  const std::vector<std::string>& positional() const { return positional_; }
  std::string help() const;

 private:
  struct Spec {
    std::vector<std::string> names;
    std::string help;
    bool takes_value;
  };
  const Spec* find(const std::string& name) const;

  std::string command_;
  std::string usage_;
  std::vector<Spec> specs_;
  std::vector<std::string> notes_;
  std::map<std::string, std::string> values_;  // canonical (first) name -> value
  std::vector<std::string> positional_;
};

}  // namespace kvscope::cli
