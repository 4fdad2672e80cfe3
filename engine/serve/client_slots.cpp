#include "serve/client_slots.h"

namespace kvscope::serve {

ClientSlots::Slot ClientSlots::take(const std::string& address) {
  {
    std::lock_guard lock(mutex_);
    int& n = held_[address];
    if (n >= per_client_) {
      if (n == 0) held_.erase(address);
      return nullptr;
    }
    ++n;
  }
  return Slot(static_cast<void*>(this), [this, address](void*) { release(address); });
}

void ClientSlots::release(const std::string& address) {
  std::lock_guard lock(mutex_);
  const auto it = held_.find(address);
  if (it != held_.end() && --it->second <= 0) held_.erase(it);
}

int ClientSlots::held(const std::string& address) const {
  std::lock_guard lock(mutex_);
  const auto it = held_.find(address);
  return it == held_.end() ? 0 : it->second;
}

}  // namespace kvscope::serve
