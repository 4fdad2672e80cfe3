#include "cli/arg_parser.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "util/error.h"

namespace kvscope::cli {

ArgParser::ArgParser(std::string command, std::string usage)
    : command_(std::move(command)), usage_(std::move(usage)) {
  flag({"-h", "--help"}, "show this help");
}

void ArgParser::option(std::vector<std::string> names, std::string help) {
  specs_.push_back({std::move(names), std::move(help), true});
}

void ArgParser::flag(std::vector<std::string> names, std::string help) {
  specs_.push_back({std::move(names), std::move(help), false});
}

const ArgParser::Spec* ArgParser::find(const std::string& name) const {
  for (const auto& s : specs_) {
    for (const auto& n : s.names) {
      if (n == name) return &s;
    }
  }
  return nullptr;
}

bool ArgParser::parse(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() > 1 && a[0] == '-' && !(a.size() > 1 && (std::isdigit(a[1]) || a[1] == '.'))) {
      std::string key = a;
      std::optional<std::string> inline_value;
      if (auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
        key = a.substr(0, eq);
        inline_value = a.substr(eq + 1);
      }
      const Spec* spec = find(key);
      if (spec == nullptr) throw_error<UsageError>("unknown option '{}' (see --help)", key);
      const std::string& canonical = spec->names.front();
      if (!spec->takes_value) {
        values_[canonical] = "1";
        continue;
      }
      if (inline_value) {
        values_[canonical] = *inline_value;
      } else if (i + 1 < args.size()) {
        values_[canonical] = args[++i];
      } else {
        throw_error<UsageError>("option {} needs a value", key);
      }
    } else {
      positional_.push_back(a);
    }
  }
  if (has("-h")) {
    fmt::print("{}", help());
    return false;
  }
  return true;
}

bool ArgParser::has(const std::string& name) const {
  const Spec* spec = find(name);
  return spec != nullptr && values_.count(spec->names.front()) > 0;
}

std::optional<std::string> ArgParser::get(const std::string& name) const {
  const Spec* spec = find(name);
  if (spec == nullptr) return std::nullopt;
  auto it = values_.find(spec->names.front());
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string ArgParser::get_or(const std::string& name, const std::string& fallback) const {
  return get(name).value_or(fallback);
}

std::string ArgParser::required(const std::string& name) const {
  auto v = get(name);
  if (!v) throw_error<UsageError>("missing required option {} (see --help)", name);
  return *v;
}

std::int64_t ArgParser::get_int(const std::string& name, std::int64_t fallback, std::int64_t lo,
                                std::int64_t hi) const {
  auto v = get(name);
  if (!v) return fallback;
  std::int64_t out = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size()) {
    throw_error<UsageError>("option {}: '{}' is not an integer in {}..{}", name, *v, lo, hi);
  }
  if (out < lo || out > hi) {
    throw_error<UsageError>("option {}: {} is outside {}..{}", name, out, lo, hi);
  }
  return out;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1) {
    parts.push_back(text.substr(start, comma - start));
  }
  parts.push_back(text.substr(start));
  return parts;
}

std::vector<std::int64_t> ArgParser::get_int_list(const std::string& name,
                                                  const std::string& fallback, std::int64_t lo,
                                                  std::int64_t hi) const {
  std::vector<std::int64_t> out;
  for (const std::string& s : split_commas(get_or(name, fallback))) {
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) {
      throw_error<UsageError>(
          "option {}: '{}' is not an integer in {}..{} (values are "
          "comma-separated)",
          name, s, lo, hi);
    }
    if (v < lo || v > hi)
      throw_error<UsageError>("option {}: {} is outside {}..{}", name, v, lo, hi);
    out.push_back(v);
  }
  return out;
}

double ArgParser::get_double(const std::string& name, double fallback, double lo, double hi) const {
  auto v = get(name);
  if (!v) return fallback;
  double out = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || ptr != v->data() + v->size() || !std::isfinite(out)) {
    throw_error<UsageError>("option {}: '{}' is not a number in {}..{}", name, *v, lo, hi);
  }
  if (out < lo || out > hi) {
    throw_error<UsageError>("option {}: {} is outside {}..{}", name, out, lo, hi);
  }
  return out;
}

std::string ArgParser::help() const {
  std::string out = fmt::format("usage: kvscope-cli {} {}\n\noptions:\n", command_, usage_);
  for (const auto& s : specs_) {
    std::string names;
    for (const auto& n : s.names) {
      if (!names.empty()) names.append(", ");
      names.append(n);
    }
    if (s.takes_value) names += " VALUE";
    out += fmt::format("  {:<28} {}\n", names, s.help);
  }
  for (const auto& n : notes_) out += fmt::format("\n{}\n", n);
  return out;
}

}  // namespace kvscope::cli
