// sampling_to_json / sampling_from_json: KVScope's own JSON form of SamplingParams, shared by
// `kvscope-cli run --json` and the app's saved and exported chats.
#include "run/sampling_json.h"

#include <cstdint>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace kvscope {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

SamplingParams unusual() {
  SamplingParams p;
  p.temperature = 0.7f;
  p.top_k = 12;
  p.top_p = 0.9f;
  p.min_p = 0.0f;
  p.repeat_penalty = 1.1f;
  p.repeat_last_n = -1;
  p.frequency_penalty = -0.5f;
  p.presence_penalty = 2.0f;
  p.seed = 18446744073709551557ull;  // needs all 64 bits
  return p;
}

void expect_same(const SamplingParams& a, const SamplingParams& b) {
  EXPECT_EQ(a.temperature, b.temperature);
  EXPECT_EQ(a.top_k, b.top_k);
  EXPECT_EQ(a.top_p, b.top_p);
  EXPECT_EQ(a.min_p, b.min_p);
  EXPECT_EQ(a.repeat_penalty, b.repeat_penalty);
  EXPECT_EQ(a.repeat_last_n, b.repeat_last_n);
  EXPECT_EQ(a.frequency_penalty, b.frequency_penalty);
  EXPECT_EQ(a.presence_penalty, b.presence_penalty);
  EXPECT_EQ(a.seed, b.seed);
}

// The message sampling_from_json throws for `text`.
std::string error_of(const std::string& text) {
  try {
    sampling_from_json(json::parse(text));
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

TEST(SamplingJson, WritesEveryFieldUnderItsName) {
  EXPECT_EQ(sampling_to_json(unusual()).dump(),
            R"({"frequency_penalty":-0.5,"min_p":0.0,"presence_penalty":2.0,)"
            R"("repeat_last_n":-1,"repeat_penalty":1.100000023841858,)"
            R"("seed":18446744073709551557,"temperature":0.699999988079071,"top_k":12,)"
            R"("top_p":0.8999999761581421})");
}

TEST(SamplingJson, ReadsBackWhatItWrites) {
  expect_same(sampling_from_json(sampling_to_json(unusual())), unusual());
  expect_same(sampling_from_json(json::parse(sampling_to_json(unusual()).dump())), unusual());
  expect_same(sampling_from_json(sampling_to_json(SamplingParams{})), SamplingParams{});
}

TEST(SamplingJson, FieldsLeftOutKeepTheirDefaultsAndUnknownOnesAreIgnored) {
  SamplingParams expected;
  expected.top_k = 5;
  expect_same(sampling_from_json(json::parse(R"({"top_k": 5, "max_tokens": 9, "later": [1]})")),
              expected);
  expect_same(sampling_from_json(json::object()), SamplingParams{});
}

TEST(SamplingJson, TakesTheSeedAsADecimalStringOrANumber) {
  EXPECT_EQ(sampling_from_json(json::parse(R"({"seed": "18446744073709551557"})")).seed,
            18446744073709551557ull);
  EXPECT_EQ(sampling_from_json(json::parse(R"({"seed": 9})")).seed, 9u);
  EXPECT_EQ(sampling_from_json(json::parse(R"({"top_k": 40.0})")).top_k, 40);
}

TEST(SamplingJson, ABadFieldIsNamedInTheError) {
  EXPECT_THAT(error_of(R"({"top_p": "high"})"),
              HasSubstr("top_p: expected a number, found string"));
  EXPECT_THAT(error_of(R"({"top_k": 1.5})"), HasSubstr("top_k: expected a whole number"));
  EXPECT_THAT(error_of(R"({"top_k": 3000000000})"), HasSubstr("top_k"));
  EXPECT_THAT(error_of(R"({"repeat_last_n": [64]})"),
              HasSubstr("repeat_last_n: expected a whole number, found array"));
  EXPECT_THAT(error_of(R"({"seed": "12ab"})"), HasSubstr("seed"));
  EXPECT_THAT(error_of(R"({"seed": -1})"), HasSubstr("seed"));
  EXPECT_THAT(error_of(R"({"temperature": 1e300})"), HasSubstr("temperature"));
  // in range for its type, out of the sampler's range (validate)
  EXPECT_THAT(error_of(R"({"temperature": -1})"), HasSubstr("temperature must be"));
  EXPECT_THAT(error_of(R"({"presence_penalty": 2.5})"), HasSubstr("presence_penalty must be"));
  EXPECT_THAT(error_of(R"([1, 2])"), HasSubstr("expected a JSON object, found array"));
}

}  // namespace
}  // namespace kvscope
