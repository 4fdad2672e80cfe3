#include "serve/guarded_server.h"

#include <sys/socket.h>
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fmt/format.h>

#include "serve/api_error.h"
#include "serve/connection_stream.h"

namespace kvscope::serve {

namespace {

// The connection the calling thread serves (set for the length of one connection).
thread_local const ConnectionStream* t_connection = nullptr;

class ServingConnection {
 public:
  explicit ServingConnection(const ConnectionStream& c) { t_connection = &c; }
  ~ServingConnection() { t_connection = nullptr; }
  ServingConnection(const ServingConnection&) = delete;
  ServingConnection& operator=(const ServingConnection&) = delete;
};

// A request at least this large (a 4 MB prompt, 100,000 messages) leaves its parsing and
// tokenizing's freed memory in the HTTP threads' malloc arenas, hundreds of MB that glibc
// keeps: it is given back to the system once the request is answered.
constexpr std::uint64_t kLargeRequest = 256u << 10;

void return_freed_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace

GuardedServer::GuardedServer(const HttpLimits& limits, std::function<void(int)> refused)
    : limits_(limits), refused_(std::move(refused)), slots_(limits.max_connections_per_client) {
  set_payload_max_length(limits_.max_body_bytes);
  set_read_timeout(limits_.read_timeout_s, 0);
}

bool GuardedServer::client_gone() {
  return t_connection != nullptr && t_connection->peer_gone();
}

void GuardedServer::widen_backlog(int backlog) {
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, backlog);  // Linux: updates it
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  ConnectionStream conn(sock, limits_, static_cast<int>(write_timeout_sec_));
  auto refuse = [&](const HeadRefusal& r) {
    if (r.status != 0 && refused_) refused_(r.status);
    const char* type = r.status == 503 ? "server_error" : "invalid_request_error";
    conn.refuse(r, ApiError(r.status == 0 ? 400 : r.status, type, r.message).body());
  };
  bool ret = false;
  if (const ClientSlots::Slot slot = slots_.take(conn.peer_address())) {
    const ServingConnection serving(conn);
    const auto running = [this] { return is_running(); };
    // As httplib's own loop: at most keep_alive_max_count_ requests, the last one answered
    // with "Connection: close".
    for (std::size_t left = keep_alive_max_count_; left > 0; --left) {
      if (!conn.wait_request(std::chrono::seconds(keep_alive_timeout_sec_), running)) break;
      if (const auto refusal = conn.read_head()) {
        refuse(*refusal);
        break;
      }
      bool connection_closed = false;
      ret = process_request(conn, left == 1 || !is_running(), connection_closed, nullptr);
      if (conn.request_bytes() >= kLargeRequest) return_freed_memory();
      if (!ret || connection_closed || !conn.finish_request()) break;
    }
  } else {
    refuse({503, fmt::format("too many connections from {} (at most {} at once): close one and "
                             "try again",
                             conn.peer_address(), slots_.per_client())});
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ret;
}

}  // namespace kvscope::serve
