// ClientSlots: each address holds at most its share of connections, and a slot comes back
// when its connection ends.
#include "serve/client_slots.h"

#include <vector>

#include <gtest/gtest.h>

namespace kvscope::serve {
namespace {

TEST(ClientSlots, AnAddressHoldsAtMostItsShareAndOthersAreUnaffected) {
  ClientSlots slots(2);
  std::vector<ClientSlots::Slot> held;
  held.push_back(slots.take("10.0.0.1"));
  held.push_back(slots.take("10.0.0.1"));
  EXPECT_TRUE(held[0] && held[1]);
  EXPECT_FALSE(slots.take("10.0.0.1"));
  EXPECT_TRUE(slots.take("10.0.0.2"));
  EXPECT_EQ(slots.held("10.0.0.1"), 2);
  held.pop_back();
  EXPECT_EQ(slots.held("10.0.0.1"), 1);
  EXPECT_TRUE(slots.take("10.0.0.1"));  // released again as this temporary goes
  held.clear();
  EXPECT_EQ(slots.held("10.0.0.1"), 0);
  EXPECT_EQ(slots.held("10.0.0.2"), 0);
}

}  // namespace
}  // namespace kvscope::serve
