#include "serve/connection_stream.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace kvscope::serve {

namespace {

using std::chrono::milliseconds;

// The numeric address and port of `sa` ("127.0.0.1", 8080).
void numeric_address(const sockaddr_storage& sa, socklen_t len, std::string& ip, int& port) {
  char host[NI_MAXHOST] = "";
  char serv[NI_MAXSERV] = "";
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&sa), len, host, sizeof host, serv, sizeof serv,
                  NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(serv);
  }
}

int poll_one(int sock, short events, int timeout_ms) {
  pollfd p{sock, events, 0};
  int r;
  do {
    r = ::poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  return r > 0 ? p.revents : r;
}

}  // namespace

ConnectionStream::ConnectionStream(int sock, const HttpLimits& limits, int write_timeout_s)
    : sock_(sock), limits_(limits), write_timeout_s_(write_timeout_s) {
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  if (getpeername(sock_, reinterpret_cast<sockaddr*>(&sa), &len) == 0) {
    numeric_address(sa, len, peer_ip_, peer_port_);
  }
}

bool ConnectionStream::wait_readable(Clock::time_point deadline) const {
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  const auto wait = std::min<milliseconds>(left, std::chrono::seconds(limits_.read_timeout_s));
  if (wait.count() <= 0) return false;
  const int r = poll_one(sock_, POLLIN, static_cast<int>(wait.count()));
  return r > 0;  // readable, or hung up / failed (the recv then says which)
}

ssize_t ConnectionStream::fill(Clock::time_point deadline) {
  if (!wait_readable(deadline)) return -1;
  char chunk[16384];
  ssize_t n;
  do {
    n = ::recv(sock_, chunk, sizeof chunk, 0);
  } while (n < 0 && errno == EINTR);
  if (n > 0) buf_.append(chunk, static_cast<std::size_t>(n));
  return n;
}

bool ConnectionStream::wait_request(std::chrono::seconds idle,
                                    const std::function<bool()>& running) {
  if (broken_) return false;
  if (buf_pos_ < buf_.size()) return true;
  const auto deadline = Clock::now() + idle;
  // Short polls: a server asked to stop does not wait for idle clients.
  while (running() && Clock::now() < deadline) {
    const int r = poll_one(sock_, POLLIN, 100);
    if (r < 0) return false;
    if (r > 0) return true;
  }
  return false;
}

std::optional<HeadRefusal> ConnectionStream::read_head() {
  // What httplib read of the previous request is gone; keep the rest.
  buf_.erase(0, buf_pos_);
  buf_pos_ = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(limits_.head_timeout_s);
  std::size_t end = head_end(buf_);
  while (end == 0) {
    // Checked while it arrives: a client sending header lines without end is cut off at the
    // limit, not when it pleases.
    const std::string_view so_far(buf_);
    if (so_far.size() > limits_.max_head_bytes ||
        head_lines(so_far) > static_cast<std::size_t>(limits_.max_header_lines) + 1) {
      broken_ = true;
      return check_request_head(so_far, limits_).refusal;
    }
    const ssize_t n = fill(deadline);
    if (n <= 0) {
      broken_ = true;
      if (n == 0 || buf_.empty()) return HeadRefusal{0, ""};  // the client closed: no answer
      return HeadRefusal{408, fmt::format("the request's headers did not arrive in time "
                                          "(within {} s, at most {} s without a byte)",
                                          limits_.head_timeout_s, limits_.read_timeout_s)};
    }
    end = head_end(buf_);
  }
  const HeadCheck check = check_request_head(std::string_view(buf_).substr(0, end), limits_);
  if (check.refusal) {
    broken_ = true;
    return check.refusal;
  }
  frame_left_ = end + check.body_bytes;
  request_bytes_ = frame_left_;
  body_deadline_ = Clock::now() + std::chrono::seconds(limits_.body_timeout_s);
  return std::nullopt;
}

bool ConnectionStream::finish_request() {
  char sink[16384];
  while (!broken_ && frame_left_ > 0) {
    if (read(sink, sizeof sink) <= 0) broken_ = true;
  }
  return !broken_;
}

ssize_t ConnectionStream::read(char* ptr, std::size_t size) {
  if (frame_left_ == 0) return 0;  // the request ends here: httplib sees its end of input
  size = static_cast<std::size_t>(std::min<std::uint64_t>(size, frame_left_));
  ssize_t n;
  if (buf_pos_ < buf_.size()) {
    n = static_cast<ssize_t>(std::min(size, buf_.size() - buf_pos_));
    std::memcpy(ptr, buf_.data() + buf_pos_, static_cast<std::size_t>(n));
    buf_pos_ += static_cast<std::size_t>(n);
  } else {
    if (!wait_readable(body_deadline_)) {
      broken_ = true;
      return -1;
    }
    do {
      n = ::recv(sock_, ptr, size, 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      broken_ = true;
      return n;
    }
  }
  frame_left_ -= static_cast<std::uint64_t>(n);
  return n;
}

ssize_t ConnectionStream::write(const char* ptr, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const int r = poll_one(sock_, POLLOUT, write_timeout_s_ * 1000);
    if (r <= 0 || (r & (POLLERR | POLLHUP))) return -1;
    const ssize_t n = ::send(sock_, ptr + done, size - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    done += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(size);
}

bool ConnectionStream::is_readable() const {
  return buf_pos_ < buf_.size() ||
         wait_readable(Clock::now() + std::chrono::seconds(limits_.read_timeout_s));
}

bool ConnectionStream::is_writable() const {
  return poll_one(sock_, POLLOUT, write_timeout_s_ * 1000) > 0 && !peer_gone();
}

bool ConnectionStream::peer_gone() const {
  const int r = poll_one(sock_, POLLIN, 0);
  if (r < 0) return true;
  if (r == 0) return false;
  if (r & (POLLERR | POLLNVAL)) return true;
  // Readable: a pipelined request (still there) or the end of the client's stream (gone).
  char byte;
  const ssize_t n = ::recv(sock_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  ip = peer_ip_;
  port = peer_port_;
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  if (getsockname(sock_, reinterpret_cast<sockaddr*>(&sa), &len) == 0) {
    numeric_address(sa, len, ip, port);
  }
}

void ConnectionStream::refuse(const HeadRefusal& refusal, const std::string& json_body) {
  broken_ = true;
  if (refusal.status == 0) return;
  const std::string response = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n"
      "Connection: close\r\n\r\n{}",
      refusal.status, status_reason(refusal.status), json_body.size(), json_body);
  if (write(response.data(), response.size()) < 0) return;
  linger(std::chrono::milliseconds(refusal.status == 503 ? 250 : 1000));
}

// Closing a socket with unread bytes resets the connection, and the client may then lose
// the answer: stop writing, then read what still comes for a moment (at most `total`, and
// 1 MiB), as servers' lingering close does.
void ConnectionStream::linger(std::chrono::milliseconds total) {
  ::shutdown(sock_, SHUT_WR);
  const auto deadline = Clock::now() + total;
  char sink[16384];
  std::size_t drained = 0;
  while (drained < (1u << 20)) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return;
    if (poll_one(sock_, POLLIN, static_cast<int>(std::min<long long>(left.count(), 100))) <= 0) {
      return;  // quiet for 100 ms: the client has read or is not sending
    }
    const ssize_t n = ::recv(sock_, sink, sizeof sink, MSG_DONTWAIT);
    if (n <= 0) return;
    drained += static_cast<std::size_t>(n);
  }
}

}  // namespace kvscope::serve
