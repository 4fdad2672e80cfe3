#include "plan/weight_footprint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/plan/preset_files.h"
#include "model/model.h"
#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

const ModelPreset& llama2_7b() {
  return find_model_preset(test::model_presets(), "llama-2-7b");
}

TEST(WeightFootprint, PresetBytesAreParametersTimesBitsPerWeight) {
  const ModelPreset& p = llama2_7b();
  ASSERT_EQ(p.n_params, 6'738'415'616);
  auto bytes = [&](WeightType t) { return preset_weights(p.spec, p.n_params, t).bytes; };
  EXPECT_EQ(bytes(WeightType::F16), 13'476'831'232);    // x 2
  EXPECT_EQ(bytes(WeightType::Q8_0), 7'159'566'592);    // x 34 / 32
  EXPECT_EQ(bytes(WeightType::Q6_K), 5'527'606'560);    // x 210 / 256
  EXPECT_EQ(bytes(WeightType::Q5_K_M), 4'784'275'088);  // x 5.68 / 8, rounded up
  EXPECT_EQ(bytes(WeightType::Q4_K_M), 4'076'741'448);  // x 4.84 / 8, rounded up
  EXPECT_EQ(bytes(WeightType::Q4_0), 3'790'358'784);    // x 18 / 32
}

TEST(WeightFootprint, DecodingReadsOneRowOfAnUntiedTokenTable) {
  const ModelPreset& p = llama2_7b();
  const WeightFootprint w = preset_weights(p.spec, p.n_params, WeightType::F16);
  // 32000 x 4096 table at 2 bytes, of which one 4096-value row is read.
  EXPECT_EQ(w.read_per_token, 13'476'831'232 - 262'144'000 + 8'192);
  const ModelPreset& gemma = find_model_preset(test::model_presets(), "gemma-2b");
  const WeightFootprint tied = preset_weights(gemma.spec, gemma.n_params, WeightType::F16);
  EXPECT_EQ(tied.read_per_token, tied.bytes);  // the table is the output projection too
  EXPECT_THAT(w.basis, ::testing::HasSubstr("6,738,415,616 parameters x 16 bits (f16)"));
}

TEST(WeightFootprint, WeightTypeNamesParseInAnyCase) {
  EXPECT_EQ(parse_weight_type("Q4_K_M"), WeightType::Q4_K_M);
  EXPECT_EQ(parse_weight_type("f16"), WeightType::F16);
  EXPECT_DOUBLE_EQ(weight_type_info(WeightType::Q8_0).bits_per_weight, 8.5);
  EXPECT_DOUBLE_EQ(weight_type_info(WeightType::Q6_K).bits_per_weight, 6.5625);
  EXPECT_DOUBLE_EQ(weight_type_info(WeightType::Q5_K_M).bits_per_weight, 5.68);
  EXPECT_EQ(weight_types().size(), 6u);
  try {
    parse_weight_type("q3_k_s");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("q4_k_m"));
  }
}

TEST(WeightFootprint, RejectsImpossibleParameterCounts) {
  const ModelPreset& p = llama2_7b();
  EXPECT_THROW(preset_weights(p.spec, 0, WeightType::F16), UsageError);
  EXPECT_THROW(preset_weights(p.spec, std::int64_t{1} << 50, WeightType::F16), UsageError);
}

TEST(WeightFootprint, ALoadedModelCountsItsStoredTensorsExactly) {
  KVSCOPE_REQUIRE_SHARED(path, "models/stories260K.gguf");
  const auto model = load_model(path);
  const WeightFootprint w = model_weights(*model);
  EXPECT_EQ(w.bytes, static_cast<std::int64_t>(model->weight_bytes()));
  EXPECT_GT(w.bytes, 0);
  EXPECT_LE(w.read_per_token, w.bytes);
  EXPECT_THAT(w.basis, ::testing::HasSubstr("stories260K.gguf"));
}

}  // namespace
}  // namespace kvscope
