// ClientSlots: how many connections each client address holds at once, so that one machine
// cannot take every HTTP thread (a connection holds a thread while it is open). take() gives
// a slot, released when the Slot goes, or nothing when the address holds its share already.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace kvscope::serve {

class ClientSlots {
 public:
  explicit ClientSlots(int per_client) : per_client_(per_client) {}

  // Held for as long as the connection is served; releases its slot when destroyed.
  using Slot = std::shared_ptr<void>;
  // A slot for `address`, or nullptr when it holds per_client() already.
  Slot take(const std::string& address);

  int per_client() const { return per_client_; }
  int held(const std::string& address) const;

 private:
  void release(const std::string& address);

  const int per_client_;
  mutable std::mutex mutex_;
  std::map<std::string, int> held_;  // addresses holding at least one slot
};

}  // namespace kvscope::serve
