// GuardedServer: cpp-httplib's Server with its per-connection loop replaced, the one place a
// subclass can take over (process_and_close_socket). httplib 0.11 cannot be told to limit
// header lines, to refuse a bad Content-Length before reading it, or to keep a pipelined
// request; each connection here is served through a ConnectionStream that does, and holds
// one of its address's ClientSlots (none left: 503 at once). Handlers run as before
// (routing, errors, chunked providers), on the pool thread serving the connection, which
// is how a handler asks client_gone().
#pragma once

#include <functional>

#include <httplib.h>

#include "serve/client_slots.h"
#include "serve/request_head.h"

namespace kvscope::serve {

class GuardedServer : public httplib::Server {
 public:
  // `refused`: told the status of every request the guard answers itself (metrics).
  GuardedServer(const HttpLimits& limits, std::function<void(int status)> refused);

  // From a handler: true when the client of the request being handled has closed its
  // connection (nobody will read the answer). False off a connection's thread.
  static bool client_gone();

  // After bind: lets `backlog` connections wait to be accepted (httplib asks for 5, so a
  // burst of clients waited seconds for the kernel's SYN retries).
  void widen_backlog(int backlog = 256);

 private:
  bool process_and_close_socket(socket_t sock) override;

  HttpLimits limits_;
  std::function<void(int)> refused_;
  ClientSlots slots_;
};

}  // namespace kvscope::serve
