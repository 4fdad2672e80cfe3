#include "kv/format/quant_error_ledger.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace kvscope {
namespace {

TEST(QuantErrorLedger, AddsEachLayersMeasurementsSeparatelyForKAndV) {
  QuantErrorLedger ledger(3);
  ledger.record(1, {4.0, 16.0, 4}, {9.0, 9.0, 1});
  ledger.record(1, {1.0, 4.0, 2}, {0.0, 1.0, 1});
  EXPECT_EQ(ledger.k(1).sq_error, 5.0);
  EXPECT_EQ(ledger.k(1).sq_exact, 20.0);
  EXPECT_EQ(ledger.k(1).count, 6);
  EXPECT_EQ(ledger.v(1).sq_error, 9.0);
  EXPECT_EQ(ledger.v(1).count, 2);
  EXPECT_EQ(ledger.k(0).count, 0);
  EXPECT_EQ(ledger.v(2).count, 0);
}

TEST(QuantErrorLedger, ResetForgetsEveryMeasurement) {
  QuantErrorLedger ledger(2);
  ledger.record(0, {1.0, 1.0, 1}, {1.0, 1.0, 1});
  ledger.reset();
  EXPECT_EQ(ledger.k(0).count, 0);
  EXPECT_EQ(ledger.v(0).sq_error, 0.0);
  EXPECT_EQ(ledger.n_layers(), 2);
}

TEST(QuantErrorLedger, ALayerOutOfRangeIsAUsageError) {
  QuantErrorLedger ledger(2);
  EXPECT_THROW(ledger.record(2, {}, {}), UsageError);
  EXPECT_THROW(ledger.k(-1), UsageError);
  EXPECT_THROW(ledger.v(2), UsageError);
}

}  // namespace
}  // namespace kvscope
