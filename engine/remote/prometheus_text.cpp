#include "remote/prometheus_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace kvscope {

std::string_view metric_type_name(MetricType type) {
  switch (type) {
    case MetricType::Counter:
      return "counter";
    case MetricType::Gauge:
      return "gauge";
    case MetricType::Histogram:
      return "histogram";
    case MetricType::Summary:
      return "summary";
    case MetricType::Untyped:
      break;
  }
  return "untyped";
}

const std::string* MetricSample::label(std::string_view label_name) const {
  for (const MetricLabel& l : labels) {
    if (l.name == label_name) return &l.value;
  }
  return nullptr;
}

const MetricFamily* MetricDump::find(std::string_view name) const {
  for (const MetricFamily& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::size_t MetricDump::sample_count() const {
  std::size_t n = 0;
  for (const MetricFamily& f : families) n += f.samples.size();
  return n;
}

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9');
}

// A bounded, printable prefix of a line for error messages: a hostile body must not turn
// into a megabyte of message.
std::string quote(std::string_view line) {
  constexpr std::size_t kMax = 60;
  std::string out;
  for (char c : line.substr(0, kMax)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  if (line.size() > kMax) out += "...";
  return "'" + out + "'";
}

std::optional<MetricType> parse_type(std::string_view word) {
  if (word == "counter") return MetricType::Counter;
  if (word == "gauge") return MetricType::Gauge;
  if (word == "histogram") return MetricType::Histogram;
  if (word == "summary") return MetricType::Summary;
  if (word == "untyped") return MetricType::Untyped;
  return std::nullopt;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

// Go's strconv.ParseFloat as Prometheus uses it: decimal and exponent forms, an optional
// sign, Inf / +Inf / -Inf and NaN in any case.
std::optional<double> parse_value(std::string_view token) {
  if (token.empty()) return std::nullopt;
  std::string_view body = token;
  bool negative = false;
  if (body.front() == '+' || body.front() == '-') {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  if (iequals(body, "inf") || iequals(body, "infinity")) {
    const double inf = std::numeric_limits<double>::infinity();
    return negative ? -inf : inf;
  }
  if (iequals(body, "nan")) return std::numeric_limits<double>::quiet_NaN();
  if (body.empty() ||
      !(std::isdigit(static_cast<unsigned char>(body.front())) || body.front() == '.')) {
    return std::nullopt;
  }
  double value = 0.0;
  const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (ec == std::errc::result_out_of_range) {
    value = std::numeric_limits<double>::infinity();  // 1e999: Go says +Inf too
  } else if (ec != std::errc() || end != body.data() + body.size()) {
    return std::nullopt;
  }
  return negative ? -value : value;
}

std::optional<std::int64_t> parse_timestamp(std::string_view token) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return value;
}

// One line's characters, read left to right.
struct Cursor {
  std::string_view s;
  std::size_t pos = 0;

  bool done() const { return pos >= s.size(); }
  char peek() const { return s[pos]; }
  void skip_blanks() {
    while (!done() && is_blank(peek())) ++pos;
  }
  std::string_view word() {  // up to the next blank
    const std::size_t start = pos;
    while (!done() && !is_blank(peek())) ++pos;
    return s.substr(start, pos - start);
  }
  std::string_view name(bool colons) {
    const std::size_t start = pos;
    if (!done() && is_name_start(peek()) && (colons || peek() != ':')) {
      ++pos;
      while (!done() && is_name_char(peek()) && (colons || peek() != ':')) ++pos;
    }
    return s.substr(start, pos - start);
  }
};

class Parser {
 public:
  MetricDump run(std::string_view text) {
    if (text.size() > kMaxMetricsBodyBytes) {
      throw MetricsFormatError(fmt::format("the body is {} bytes, over the {} accepted",
                                           text.size(), kMaxMetricsBodyBytes),
                               0, true);
    }
    std::size_t start = 0;
    while (start < text.size()) {
      const std::size_t end = text.find('\n', start);
      ++line_no_;
      if (end == std::string_view::npos) {
        line_ = text.substr(start);
        if (!parsed_any_) line(line_);  // a single unterminated line: say what it is first
        fail("ends without a line feed: the body was cut short");
      }
      line_ = text.substr(start, end - start);
      if (!line_.empty() && line_.back() == '\r') line_.remove_suffix(1);
      line(line_);
      start = end + 1;
    }
    return std::move(dump_);
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw MetricsFormatError(fmt::format("line {} {}: {}", line_no_, quote(line_), what), line_no_,
                             !parsed_any_);
  }

  void line(std::string_view text) {
    Cursor c{text};
    c.skip_blanks();
    if (c.done()) return;
    if (c.peek() == '#') {
      comment(c);
    } else {
      sample(c);
    }
  }

  void comment(Cursor& c) {
    ++c.pos;
    c.skip_blanks();
    const std::string_view keyword = c.word();
    if (keyword != "HELP" && keyword != "TYPE") return;  // a plain comment
    c.skip_blanks();
    const std::string_view name = c.name(true);
    if (name.empty() || (!c.done() && !is_blank(c.peek()))) fail("a metric name must follow");
    c.skip_blanks();
    const std::string_view rest = c.s.substr(c.pos);
    MetricFamily& f = family(name);
    Seen& seen = seen_[f.name];
    if (keyword == "HELP") {
      if (seen.help) fail("a second HELP for " + f.name);
      seen.help = true;
      f.help = unescape_help(rest);
    } else {
      if (seen.type) fail("a second TYPE for " + f.name);
      if (!f.samples.empty()) fail("TYPE for " + f.name + " after its samples");
      const auto type = parse_type(std::string_view(rest).substr(0, rest.find_first_of(" \t")));
      if (!type) fail("unknown metric type (counter, gauge, histogram, summary, untyped)");
      seen.type = true;
      f.type = *type;
    }
    parsed_any_ = true;
  }

  static std::string unescape_help(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '\\' || text[i + 1] == 'n')) {
        out += text[i + 1] == 'n' ? '\n' : '\\';
        ++i;
      } else {
        out += text[i];
      }
    }
    while (!out.empty() && is_blank(out.back())) out.pop_back();
    return out;
  }

  void sample(Cursor& c) {
    MetricSample s;
    s.name = std::string(c.name(true));
    if (s.name.empty()) fail("expected a metric name");
    if (!c.done() && c.peek() == '{') labels(c, s);
    if (c.done() || !is_blank(c.peek())) fail("expected a blank and a value after the name");
    c.skip_blanks();
    const auto value = parse_value(c.word());
    if (!value) fail("the value is not a number");
    s.value = *value;
    c.skip_blanks();
    if (!c.done()) {
      const auto timestamp = parse_timestamp(c.word());
      if (!timestamp) fail("the timestamp is not an integer (milliseconds)");
      s.timestamp_ms = timestamp;
      c.skip_blanks();
      if (!c.done()) fail("text after the timestamp");
    }
    MetricFamily& f = family_of_sample(s.name);
    check_special_labels(f, s);
    f.samples.push_back(std::move(s));
    parsed_any_ = true;
  }

  void labels(Cursor& c, MetricSample& s) {
    ++c.pos;  // '{'
    for (;;) {
      c.skip_blanks();
      if (c.done()) fail("the label set is not closed with '}'");
      if (c.peek() == '}') break;
      MetricLabel l;
      l.name = std::string(c.name(false));
      if (l.name.empty()) fail("expected a label name");
      c.skip_blanks();
      if (c.done() || c.peek() != '=') fail("expected '=' after label " + l.name);
      ++c.pos;
      c.skip_blanks();
      l.value = label_value(c);
      if (s.label(l.name) != nullptr) fail("label " + l.name + " given twice");
      if (s.labels.size() == kMaxLabelsPerSample) fail("more than 64 labels");
      s.labels.push_back(std::move(l));
      c.skip_blanks();
      if (!c.done() && c.peek() == ',') {
        ++c.pos;
        continue;
      }
      if (c.done() || c.peek() != '}') fail("expected ',' or '}' in the label set");
    }
    ++c.pos;  // '}'
  }

  std::string label_value(Cursor& c) {
    if (c.done() || c.peek() != '"') fail("a label value must be quoted");
    ++c.pos;
    std::string out;
    for (;;) {
      if (c.done()) fail("the label value is not closed with '\"'");
      const char ch = c.s[c.pos++];
      if (ch == '"') return out;
      if (ch != '\\') {
        out += ch;
        continue;
      }
      if (c.done()) fail("the label value ends inside an escape");
      const char e = c.s[c.pos++];
      if (e == 'n') {
        out += '\n';
      } else if (e == '\\' || e == '"') {
        out += e;
      } else {
        fail("unknown escape in a label value (\\\\, \\\" and \\n are allowed)");
      }
    }
  }

  // Buckets need a numeric le, summary quantiles a numeric quantile.
  void check_special_labels(const MetricFamily& f, const MetricSample& s) const {
    const bool bucket = f.type == MetricType::Histogram && s.name == f.name + "_bucket";
    const bool quantile = f.type == MetricType::Summary && s.name == f.name;
    if (!bucket && !quantile) return;
    const char* key = bucket ? "le" : "quantile";
    const std::string* v = s.label(key);
    if (v == nullptr)
      fail(fmt::format("{} {} without its {} label", metric_type_name(f.type), f.name, key));
    if (!parse_value(*v)) fail(fmt::format("{}=\"{}\" is not a number", key, *v));
  }

  MetricFamily& family(std::string_view name) {
    const auto it = index_.find(std::string(name));
    if (it != index_.end()) return dump_.families[it->second];
    index_.emplace(std::string(name), dump_.families.size());
    dump_.families.push_back({std::string(name), MetricType::Untyped, "", {}});
    return dump_.families.back();
  }

  // F_bucket, F_sum, F_count belong to a histogram F; F_sum, F_count to a summary F; F_total
  // to a counter F (OpenMetrics names the family without the suffix).
  MetricFamily& family_of_sample(const std::string& name) {
    for (std::string_view suffix : {"_bucket", "_sum", "_count", "_total"}) {
      if (name.size() <= suffix.size() || !name.ends_with(suffix)) continue;
      const auto it = index_.find(name.substr(0, name.size() - suffix.size()));
      if (it == index_.end()) continue;
      MetricFamily& f = dump_.families[it->second];
      const bool total = suffix == "_total";
      if ((f.type == MetricType::Histogram && !total) ||
          (f.type == MetricType::Summary && !total && suffix != "_bucket") ||
          (f.type == MetricType::Counter && total)) {
        return f;
      }
    }
    return family(name);
  }

  struct Seen {
    bool help = false;
    bool type = false;
  };

  MetricDump dump_;
  std::unordered_map<std::string, std::size_t> index_;  // family name -> dump_.families
  std::unordered_map<std::string, Seen> seen_;
  std::int64_t line_no_ = 0;
  std::string_view line_;
  bool parsed_any_ = false;
};

}  // namespace

MetricDump parse_prometheus_text(std::string_view text) {
  return Parser().run(text);
}

}  // namespace kvscope
