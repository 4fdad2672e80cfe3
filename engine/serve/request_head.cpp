#include "serve/request_head.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace kvscope::serve {

namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

HeadCheck refused(int status, std::string message) {
  HeadCheck c;
  c.refusal = HeadRefusal{status, std::move(message)};
  return c;
}

// Content-Length is 1*DIGIT (RFC 9110 8.6): no sign, no list, no spaces inside.
HeadCheck content_length(std::string_view value, const HttpLimits& limits) {
  if (value.empty() ||
      !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return refused(400, fmt::format("Content-Length '{:.40}' is not a number of bytes", value));
  }
  // More than 19 digits cannot fit; 18 digits are far past any limit anyway.
  std::uint64_t n = 0;
  const bool huge = value.size() > 18;
  if (!huge) {
    for (const char c : value) n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (huge || n > limits.max_body_bytes) {
    return refused(413, fmt::format("the request body ({:.40} bytes) is larger than this server "
                                    "accepts ({} bytes)",
                                    value, limits.max_body_bytes));
  }
  HeadCheck c;
  c.body_bytes = n;
  return c;
}

}  // namespace

std::size_t head_end(std::string_view bytes) {
  // The request line is never blank: look for "\r\n\r\n" past the first line.
  const std::size_t at = bytes.find("\r\n\r\n");
  return at == std::string_view::npos ? 0 : at + 4;
}

std::size_t head_lines(std::string_view bytes) {
  return static_cast<std::size_t>(std::count(bytes.begin(), bytes.end(), '\n'));
}

HeadCheck check_request_head(std::string_view head, const HttpLimits& limits) {
  if (head.size() > limits.max_head_bytes) {
    return refused(
        431, fmt::format("the request's headers are larger than {} bytes", limits.max_head_bytes));
  }
  // Lines: the request line, the header lines, the blank line.
  if (head_lines(head) > static_cast<std::size_t>(limits.max_header_lines) + 2) {
    return refused(
        431, fmt::format("the request has more than {} header lines", limits.max_header_lines));
  }
  std::string_view rest = head.substr(head.find('\n') + 1);  // past the request line
  std::optional<std::string_view> length;
  HeadCheck out;
  while (!rest.empty()) {
    const std::size_t eol = rest.find('\n');
    const std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // the blank line (httplib skips others)
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = trimmed(line.substr(colon + 1));
    if (same_name(name, "Transfer-Encoding")) {
      return refused(411,
                     "send the body with a Content-Length: this server does not take "
                     "Transfer-Encoding (chunked) bodies");
    }
    if (!same_name(name, "Content-Length")) continue;
    if (length && *length != value) {
      return refused(400, "the request has two different Content-Length headers");
    }
    length = value;
    out = content_length(value, limits);
    if (out.refusal) return out;
  }
  return out;
}

const char* status_reason(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

}  // namespace kvscope::serve
