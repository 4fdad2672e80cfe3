// ConnectionStream: one client connection as cpp-httplib reads and writes it, one request at
// a time. Unlike httplib's own stream (made anew for each request, so bytes of a pipelined
// second request read into the first one's buffer were lost), it lives as long as the
// connection: requests are answered in order. Each request is framed before httplib sees
// it: its head read whole within HttpLimits' times and sizes and checked
// (check_request_head), then httplib is handed the head and exactly Content-Length bytes of
// body, each read waiting at most read_timeout_s and the body as a whole body_timeout_s.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <httplib.h>

#include "serve/request_head.h"

namespace kvscope::serve {

class ConnectionStream : public httplib::Stream {
 public:
  ConnectionStream(int sock, const HttpLimits& limits, int write_timeout_s);

  const std::string& peer_address() const { return peer_ip_; }

  // Waits up to `idle` for the next request's first byte (at once when one is buffered);
  // false when none came, the client closed, or `running` turned false.
  bool wait_request(std::chrono::seconds idle, const std::function<bool()>& running);
  // Reads the next request's head; nullopt when it is framed for httplib, else why not
  // (status 0: the client went away before sending a whole head; answer nothing).
  std::optional<HeadRefusal> read_head();
  // After httplib answered: skips what it left of the body. False when the connection
  // cannot carry another request.
  bool finish_request();
  // The size of the request read last (head and body).
  std::uint64_t request_bytes() const { return request_bytes_; }

  // Writes `refusal` as a JSON error with "Connection: close", then lets the client's
  // remaining bytes drain for a moment so that it reads the answer rather than a reset.
  void refuse(const HeadRefusal& refusal, const std::string& json_body);
  // True when the client has closed its end (or the socket failed): nobody reads an answer.
  bool peer_gone() const;

  // httplib::Stream
  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, std::size_t size) override;
  ssize_t write(const char* ptr, std::size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return sock_; }

 private:
  using Clock = std::chrono::steady_clock;
  // Waits until the socket is readable, at most read_timeout_s and never past `deadline`.
  bool wait_readable(Clock::time_point deadline) const;
  // Appends what the socket has to buf_: bytes read, 0 at the client's end, -1 on error.
  ssize_t fill(Clock::time_point deadline);
  void linger(std::chrono::milliseconds total);

  int sock_;
  HttpLimits limits_;
  int write_timeout_s_;
  std::string peer_ip_;
  int peer_port_ = 0;
  std::string buf_;               // read from the socket, not yet handed to httplib
  std::size_t buf_pos_ = 0;       // the first byte of buf_ not yet handed out
  std::uint64_t frame_left_ = 0;  // bytes of this request httplib may still read
  std::uint64_t request_bytes_ = 0;
  Clock::time_point body_deadline_;
  bool broken_ = false;  // a read failed or timed out: no further request on this connection
};

}  // namespace kvscope::serve
