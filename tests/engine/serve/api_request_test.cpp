#include "serve/api_request.h"

#include <string>

#include <gtest/gtest.h>

#include "serve/api_error.h"

namespace kvscope::serve {
namespace {

// The 400 a body gets, and the field it names.
ApiError rejection(const std::string& body, ApiEndpoint endpoint = ApiEndpoint::Chat) {
  try {
    parse_api_request(body, endpoint);
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << body;
  return ApiError(0, "", "");
}

TEST(ApiRequest, ReadsAChatRequestWithOpenAisDefaults) {
  const ApiRequest r = parse_api_request(
      R"({"model": "m", "messages": [{"role": "system", "content": "Be brief."},
          {"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": "!"}]}],
          "unknown_field": {"ignored": true}})",
      ApiEndpoint::Chat);
  EXPECT_EQ(r.model, "m");
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[1].content, "Hi!");
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(r.max_tokens, 0);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 1.0f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 1.0f);
  EXPECT_EQ(r.sampling.top_k, 0);
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.0f);
  EXPECT_FALSE(r.seeded);
  EXPECT_FALSE(r.logprobs);
}

TEST(ApiRequest, ReadsEverySamplingField) {
  const ApiRequest r = parse_api_request(
      R"({"prompt": "Once", "stream": true, "stream_options": {"include_usage": true},
          "max_tokens": 7, "temperature": 0, "top_p": 0.9, "top_k": 5, "min_p": 0.1,
          "presence_penalty": 0.5, "frequency_penalty": -0.5, "repetition_penalty": 1.1,
          "seed": 42, "stop": ["\n", "END"], "logprobs": 3})",
      ApiEndpoint::Completion);
  EXPECT_EQ(r.prompt, "Once");
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_EQ(r.sampling.temperature, 0.0f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
  EXPECT_EQ(r.sampling.top_k, 5);
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.1f);
  EXPECT_FLOAT_EQ(r.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(r.sampling.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(r.sampling.repeat_penalty, 1.1f);
  EXPECT_TRUE(r.seeded);
  EXPECT_EQ(r.sampling.seed, 42u);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"\n", "END"}));
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.top_logprobs, 3);
}

TEST(ApiRequest, OmittedSamplingFieldsTakeTheServersDefaults) {
  SamplingParams d = openai_sampling_defaults();
  d.temperature = 0.6f;  // as a model's generation_config.json may publish
  d.top_k = 20;
  d.repeat_penalty = 1.05f;
  d.repeat_last_n = -1;
  const ApiRequest r = parse_api_request(
      R"({"messages": [{"role": "user", "content": "x"}], "top_k": 5})", ApiEndpoint::Chat, d);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.6f);
  EXPECT_EQ(r.sampling.top_k, 5);  // given
  EXPECT_FLOAT_EQ(r.sampling.top_p, 1.0f);
  EXPECT_FLOAT_EQ(r.sampling.repeat_penalty, 1.05f);
  EXPECT_EQ(r.sampling.repeat_last_n, -1);
}

TEST(ApiRequest, ChatLogprobsAreABooleanWithTopLogprobsBeside) {
  const ApiRequest r = parse_api_request(
      R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true, "top_logprobs": 2,
          "max_completion_tokens": 3})",
      ApiEndpoint::Chat);
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.top_logprobs, 2);
  EXPECT_EQ(r.max_tokens, 3);
  EXPECT_EQ(
      rejection(R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})").param(),
      "top_logprobs");
}

TEST(ApiRequest, BadJsonIsA400SayingSo) {
  const ApiError e = rejection("{\"messages\": [");
  EXPECT_EQ(e.status(), 400);
  EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
  EXPECT_EQ(rejection("[1, 2]").status(), 400);
  EXPECT_EQ(rejection("").status(), 400);
}

TEST(ApiRequest, DeepJsonIsRefusedBeforeItIsBuilt) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const ApiError e = rejection(deep);
  EXPECT_EQ(e.status(), 400);
  EXPECT_NE(std::string(e.what()).find("deeper than"), std::string::npos) << e.what();
}

TEST(ApiRequest, WrongTypesAndRangesNameTheField) {
  const std::string msgs = R"("messages": [{"role": "user", "content": "x"}])";
  auto param_of = [&](const std::string& extra) {
    return rejection("{" + msgs + ", " + extra + "}").param();
  };
  EXPECT_EQ(param_of(R"("temperature": "hot")"), "temperature");
  EXPECT_EQ(param_of(R"("temperature": 3)"), "temperature");
  EXPECT_EQ(param_of(R"("top_p": 1.5)"), "top_p");
  EXPECT_EQ(param_of(R"("top_k": 1.5)"), "top_k");
  EXPECT_EQ(param_of(R"("max_tokens": 0)"), "max_tokens");
  EXPECT_EQ(param_of(R"("max_tokens": "ten")"), "max_tokens");
  EXPECT_EQ(param_of(R"("max_tokens": 18446744073709551615)"), "max_tokens");
  EXPECT_EQ(param_of(R"("stream": "yes")"), "stream");
  EXPECT_EQ(param_of(R"("n": 2)"), "n");
  EXPECT_EQ(param_of(R"("stop": 5)"), "stop");
  EXPECT_EQ(param_of(R"("stop": ["a", "b", "c", "d", "e"])"), "stop");
  EXPECT_EQ(param_of(R"("stop": [""])"), "stop");
  EXPECT_EQ(param_of(R"("presence_penalty": 9)"), "presence_penalty");
  EXPECT_EQ(param_of(R"("seed": "s")"), "seed");
  EXPECT_EQ(param_of(R"("top_logprobs": 21, "logprobs": true)"), "top_logprobs");
  EXPECT_EQ(param_of(R"("model": 3)"), "model");
  EXPECT_EQ(rejection(R"({"messages": []})").param(), "messages");
  EXPECT_EQ(rejection(R"({"messages": "hi"})").param(), "messages");
  EXPECT_EQ(rejection(R"({"messages": [{"role": "wizard", "content": "x"}]})").param(),
            "messages[0].role");
  EXPECT_EQ(rejection(R"({"messages": [{"role": "user", "content": 5}]})").param(),
            "messages[0].content");
  EXPECT_EQ(
      rejection(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})").param(),
      "messages[0].content");
  EXPECT_EQ(param_of(R"("tools": [{"type": "function"}])"), "tools");
  EXPECT_EQ(param_of(R"("response_format": {"type": "json_object"})"), "response_format");
  EXPECT_EQ(param_of(R"("tools": null, "suffix": "x")"), "suffix");  // null means absent
  EXPECT_NO_THROW(parse_api_request(
      "{" + msgs + R"(, "tools": [], "tool_choice": "none", "response_format": {"type": "text"}})",
      ApiEndpoint::Chat));
  EXPECT_EQ(rejection("{}").param(), "messages");
  EXPECT_EQ(rejection("{}", ApiEndpoint::Completion).param(), "prompt");
  EXPECT_EQ(rejection(R"({"prompt": ["a", "b"]})", ApiEndpoint::Completion).param(), "prompt");
}

TEST(ApiRequest, ErrorBodiesHaveOpenAisShape) {
  const ApiError e = bad_request("'top_p' must be in [0, 1]", "top_p");
  EXPECT_EQ(e.body(),
            R"({"error":{"code":400,"message":"'top_p' must be in [0, 1]","param":"top_p",)"
            R"("type":"invalid_request_error"}})");
  EXPECT_EQ(
      ApiError(401, "authentication_error", "no key").body(),
      R"({"error":{"code":401,"message":"no key","param":null,"type":"authentication_error"}})");
}

}  // namespace
}  // namespace kvscope::serve
