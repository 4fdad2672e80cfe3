// parse_json and read_json_file: hostile JSON costs a bounded amount of memory, stack and
// time and ends in a ModelError naming the file; error text quotes bounded prefixes.
#include "model/json_reader.h"

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr JsonLimits kLimits{.max_bytes = 64 << 20};

// `depth` containers, one inside the other: [[[...]]] or {"a":{"a":...0}}.
std::string nested(std::size_t depth, bool objects = false) {
  std::string s;
  for (std::size_t i = 0; i < depth; ++i) s += objects ? R"({"a":)" : "[";
  if (objects) s += "0";
  for (std::size_t i = 0; i < depth; ++i) s += objects ? "}" : "]";
  return s;
}

std::string parse_error(std::string_view text, const JsonLimits& limits = kLimits) {
  try {
    parse_json(text, "test.json", limits);
    ADD_FAILURE() << "expected a ModelError";
  } catch (const ModelError& e) {
    return e.what();
  }
  return {};
}

TEST(JsonReader, NestingUpToTheLimitParses) {
  const json doc = parse_json(nested(64), "test.json", kLimits);
  EXPECT_TRUE(doc.is_array());
  EXPECT_EQ(parse_json(R"({"a": [1, {"b": "c"}]})", "test.json", kLimits)["a"][1]["b"], "c");
}

TEST(JsonReader, NestingPastTheLimitIsRefusedWhileParsing) {
  EXPECT_THAT(parse_error(nested(65)), HasSubstr("test.json: JSON nested more than 64 levels"));
  // 100,000 levels of arrays or objects (a recursive dump of these overflowed the stack).
  EXPECT_THAT(parse_error(nested(100'000)), HasSubstr("nested more than 64 levels"));
  EXPECT_THAT(parse_error(nested(100'000, /*objects=*/true)), HasSubstr("nested more than 64"));
  EXPECT_EQ(parse_json(nested(64, true), "t", kLimits).dump().size(), 64 * 6 + 1u);
  EXPECT_THAT(parse_error(nested(10), JsonLimits{.max_bytes = 100, .max_depth = 8}),
              HasSubstr("nested more than 8 levels"));
}

TEST(JsonReader, TenMegabytesOfOpenBracketsStopAtTheLimitAtOnce) {
  // Before the limit this built ten million nested arrays (~800 MB) to reject the text.
  const std::string text(10 << 20, '[');
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(parse_error(text), HasSubstr("nested more than 64 levels"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(JsonReader, ValuesPastTheBudgetAreRefusedBeforeTheyAreBuilt) {
  std::string text = "[0";
  for (int i = 0; i < 1000; ++i) text += ",0";
  text += "]";
  EXPECT_THAT(parse_error(text, JsonLimits{.max_bytes = 1 << 20, .max_values = 1000}),
              HasSubstr("more than 1000 JSON values and keys"));
  EXPECT_EQ(parse_json(text, "t", JsonLimits{.max_bytes = 1 << 20, .max_values = 1002}).size(),
            1001u);
  // Keys count too: an object of 600 members is 1,201 values and keys.
  std::string object = "{";
  for (int i = 0; i < 600; ++i) object += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  object += "}";
  EXPECT_THAT(parse_error(object, JsonLimits{.max_bytes = 1 << 20, .max_values = 1200}),
              HasSubstr("more than 1200"));
  // The default budget (2^21) is tested end to end with a shard index (hf_model_test).
}

TEST(JsonReader, TextOverTheByteLimitIsRefusedUnparsed) {
  EXPECT_THAT(parse_error("[1, 2, 3]", JsonLimits{.max_bytes = 8}),
              HasSubstr("test.json: 9 bytes of JSON is over the 8 byte limit"));
}

TEST(JsonReader, FilesOverTheByteLimitAreRefusedBeforeReading) {
  const auto path = (test::scratch_dir() / "big.json").string();
  std::ofstream(path) << "[" << std::string(2 << 20, ' ') << "]";
  try {
    read_json_file(path, JsonLimits{.max_bytes = 1 << 20});
    ADD_FAILURE() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
    EXPECT_THAT(e.what(), HasSubstr("2097154 bytes is over the 1048576 byte limit"));
  }
  EXPECT_TRUE(read_json_file(path, JsonLimits{.max_bytes = 4 << 20}).empty());
}

TEST(JsonReader, AFifoOrAFolderIsRefusedNotReadWithoutEnd) {
  const auto fifo = test::scratch_dir() / "pipe.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(read_json_file(fifo.string(), kLimits), ModelError);
  EXPECT_THROW(read_json_file(test::scratch_dir().string(), kLimits), ModelError);
  EXPECT_THROW(read_json_file((test::scratch_dir() / "absent.json").string(), kLimits), ModelError);
}

TEST(JsonReader, TopLevelKeyHookSeesDuplicatesInOrder) {
  std::vector<std::string> keys;
  const json doc = parse_json(R"({"a": {"x": 1}, "b": 2, "a": 3})", "t", kLimits,
                              [&](const std::string& key) { keys.push_back(key); });
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b", "a"}));
  EXPECT_EQ(doc["a"], 3);
}

TEST(JsonReader, ParserMessagesAreBounded) {
  // nlohmann quotes the token it stopped in: here a 1 MB string with a raw control byte.
  std::string text = "[\"" + std::string(1 << 20, 'x') + "\x01\"]";
  const std::string message = parse_error(text);
  EXPECT_THAT(message, HasSubstr("test.json: not valid JSON"));
  EXPECT_LT(message.size(), 600u);
}

TEST(JsonReader, QuotesAndDescriptionsAreBoundedAndOneLevelDeep) {
  EXPECT_EQ(quote_prefix("F16"), "F16");
  EXPECT_EQ(quote_prefix("a\nb"), "a\\x0ab");
  EXPECT_EQ(quote_prefix(std::string(100, 'x'), 4), "xxxx... (100 bytes)");
  EXPECT_EQ(describe_json(json("F3")), "string \"F3\"");
  EXPECT_EQ(describe_json(json(3.5)), "number 3.5");
  EXPECT_EQ(describe_json(json(nullptr)), "null");
  EXPECT_EQ(describe_json(json::array({1, 2})), "array of 2 elements");
  EXPECT_EQ(describe_json(json::object({{"a", 1}})), "object of 1 member");
  EXPECT_LT(describe_json(json(std::string(1 << 20, 'y'))).size(), 100u);
  // A value nested 100,000 deep (built here, not parsed) is described without recursion.
  json deep = json::array();
  json* inner = &deep;
  for (int i = 0; i < 100'000; ++i) {
    inner->push_back(json::array());
    inner = &inner->back();
  }
  EXPECT_EQ(describe_json(deep), "array of 1 element");
}

}  // namespace
}  // namespace kvscope
