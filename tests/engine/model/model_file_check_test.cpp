// model_file_problem: what a download that should be a model really is.
#include "model/discovery/model_file_check.h"

#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_data.h"

namespace kvscope {
namespace {

using ::testing::HasSubstr;

std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = (test::scratch_dir() / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(ModelFileCheck, ARealGgufFileIsAModel) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  EXPECT_EQ(model_file_problem(model, "stories260K.gguf"), "");
}

TEST(ModelFileCheck, AnHtmlPageIsNamedWithItsSize) {
  const std::string page = "\n  <!DOCTYPE html>\n<html><body>Sign in to continue</body></html>";
  EXPECT_EQ(model_file_problem(write_file("a.part", page), "model.gguf"),
            "an HTML page (" + std::to_string(page.size()) + " bytes)");
  EXPECT_THAT(model_file_problem(write_file("b.part", "<HTML><p>404</p></HTML>"), "m.gguf"),
              HasSubstr("HTML page"));
}

TEST(ModelFileCheck, ZerosAndEmptyFilesAreNamed) {
  EXPECT_EQ(model_file_problem(write_file("z.part", std::string(1000, '\0')), "m.gguf"),
            "1000 bytes of zeros");
  EXPECT_EQ(model_file_problem(write_file("e.part", ""), "m.gguf"), "an empty file");
}

TEST(ModelFileCheck, ACutGgufIsNotAModelAndTheReaderSaysWhy) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  std::ifstream in(model, std::ios::binary);
  std::string head(200, '\0');
  in.read(head.data(), 200);  // the magic and the start of the metadata, nothing more
  const std::string problem = model_file_problem(write_file("cut.part", head), "s.gguf");
  EXPECT_THAT(problem, HasSubstr("not a GGUF file (200 bytes)"));
  EXPECT_THAT(model_file_problem(write_file("t.part", "GGUF but not really"), "s.gguf"),
              HasSubstr("not a GGUF file"));
}

TEST(ModelFileCheck, SafetensorsAreReadAsSafetensorsAndOtherNamesOnlyForPagesAndZeros) {
  EXPECT_THAT(model_file_problem(write_file("s.part", "not json at all"), "model.safetensors"),
              HasSubstr("not a safetensors file"));
  EXPECT_EQ(model_file_problem(write_file("c.part", "{\"a\": 1}"), "config.json"), "");
}

}  // namespace
}  // namespace kvscope
