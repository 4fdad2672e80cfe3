// check_request_head: what the guard in front of httplib answers before httplib reads a
// request (../shared/docs/bad-inputs.md: anything listening on a port).
#include "serve/request_head.h"

#include <string>

#include <gtest/gtest.h>

namespace kvscope::serve {
namespace {

std::string head(const std::string& headers) {
  return "POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + headers + "\r\n";
}

int status_of(const std::string& h, const HttpLimits& limits = {}) {
  const HeadCheck c = check_request_head(h, limits);
  return c.refusal ? c.refusal->status : 0;
}

TEST(RequestHead, EndsAtTheFirstBlankLine) {
  EXPECT_EQ(head_end("GET / HTTP/1.1\r\nHost: x\r\n"), 0u);
  EXPECT_EQ(head_end("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET"), 27u);
  EXPECT_EQ(head_end("GET / HTTP/1.1\n\n"), 0u);  // bare LF lines do not end it (as httplib)
  EXPECT_EQ(head_lines("a\nb\nc"), 2u);
}

TEST(RequestHead, ContentLengthIsTheBodysLengthAndNoneIsAnEmptyBody) {
  EXPECT_EQ(check_request_head(head("Content-Length: 12\r\n"), {}).body_bytes, 12u);
  EXPECT_EQ(check_request_head(head("content-length:  7 \r\n"), {}).body_bytes, 7u);
  EXPECT_EQ(check_request_head(head(""), {}).body_bytes, 0u);
  EXPECT_EQ(status_of(head("Content-Length: 5\r\nContent-Length: 5\r\n")), 0);
}

TEST(RequestHead, AMalformedContentLengthIs400) {
  for (const char* v : {"-5", "", "abc", "5, 5", "0x10", "+5", "1 2", "1e3"}) {
    EXPECT_EQ(status_of(head(std::string("Content-Length: ") + v + "\r\n")), 400) << v;
  }
  EXPECT_EQ(status_of(head("Content-Length: 5\r\nContent-Length: 6\r\n")), 400);
}

TEST(RequestHead, AContentLengthPastTheLimitIs413WhateverItsSize) {
  HttpLimits limits;
  limits.max_body_bytes = 1000;
  EXPECT_EQ(status_of(head("Content-Length: 1000\r\n"), limits), 0);
  EXPECT_EQ(status_of(head("Content-Length: 1001\r\n"), limits), 413);
  EXPECT_EQ(status_of(head("Content-Length: 100000000000000000000000\r\n"), limits), 413);
  EXPECT_EQ(status_of(head("Content-Length: 18446744073709551616\r\n"), limits), 413);
  const HeadCheck c = check_request_head(head("Content-Length: 99999999999\r\n"), limits);
  ASSERT_TRUE(c.refusal);
  EXPECT_NE(c.refusal->message.find("1000 bytes"), std::string::npos) << c.refusal->message;
}

TEST(RequestHead, TransferEncodingIs411) {
  EXPECT_EQ(status_of(head("Transfer-Encoding: chunked\r\n")), 411);
  EXPECT_EQ(status_of(head("TRANSFER-ENCODING: gzip, chunked\r\n")), 411);
}

TEST(RequestHead, TooManyOrTooLargeHeadersAre431) {
  HttpLimits limits;
  limits.max_header_lines = 10;
  std::string nine;  // with Host: 10 header lines
  for (int i = 0; i < 9; ++i) nine += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(status_of(head(nine), limits), 0);
  EXPECT_EQ(status_of(head(nine + "X-10: v\r\n"), limits), 431);
  limits.max_head_bytes = 100;
  EXPECT_EQ(status_of(head("X-Big: " + std::string(100, 'a') + "\r\n"), limits), 431);
}

}  // namespace
}  // namespace kvscope::serve
