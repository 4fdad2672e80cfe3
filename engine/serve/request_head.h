// The head of one HTTP request (request line and header lines, up to the blank line), checked
// before cpp-httplib parses it: httplib 0.11 takes any number of header lines, reads a body
// of a negative or absurd Content-Length until its read timeout before answering 413, reads
// a POST without Content-Length until the client closes, and takes chunked bodies without a
// size limit. Here each of these is answered at once (400, 411, 413, 431), and a request's
// body is exactly its Content-Length (none: empty), so the next request on the connection
// starts where it should.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvscope::serve {

// What one client may send and how slowly (ServerOptions::limits).
struct HttpLimits {
  std::size_t max_head_bytes = 32u << 10;  // request line and headers together
  int max_header_lines = 100;
  std::size_t max_body_bytes = 4u << 20;  // Content-Length above it: 413
  int read_timeout_s = 5;                 // no byte for this long: the request is dropped
  int head_timeout_s = 10;                // the whole head, from its first byte
  int body_timeout_s = 30;                // the whole body, from the end of the head
  int max_connections_per_client = 32;    // from one address at once; past it: 503
};

// A refusal: the status and what the client is told.
struct HeadRefusal {
  int status = 400;
  std::string message;
};

// Where the head in `bytes` ends (just past its blank line), 0 when it has not ended yet.
// Lines end with "\r\n"; a blank line is "\r\n" (a bare "\n" line does not end the head,
// as for httplib).
std::size_t head_end(std::string_view bytes);

// The number of lines `bytes` holds so far (each "\n" ends one).
std::size_t head_lines(std::string_view bytes);

// The checked head: the body's length (Content-Length; 0 without one) or why it is refused.
struct HeadCheck {
  std::uint64_t body_bytes = 0;
  std::optional<HeadRefusal> refusal;
};

// Checks a complete head (as head_end found it) against `limits`.
HeadCheck check_request_head(std::string_view head, const HttpLimits& limits);

// The reason phrase of the statuses the guard answers itself ("Payload Too Large").
const char* status_reason(int status);

}  // namespace kvscope::serve
