// Random stored blocks for benchmark models: the values they decode to lie in +-scale and
// spread over it, the bytes are the same for the same seed, and a model written with them
// loads and generates like any other.
#include "model/synthetic_blocks.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/synthetic_model.h"
#include "plan/weight_footprint.h"
#include "run/engine.h"
#include "support/test_data.h"
#include "support/tiny_llama_spec.h"
#include "util/error.h"

namespace kvscope {
namespace {

std::vector<float> decode(TensorType type, const std::vector<std::uint8_t>& bytes,
                          std::int64_t rows, std::int64_t cols) {
  std::vector<float> out(static_cast<std::size_t>(rows * cols));
  const std::int64_t row_bytes =
      cols / tensor_type_info(type).block_elems * tensor_type_info(type).block_bytes;
  for (std::int64_t r = 0; r < rows; ++r) {
    dequantize_row(type, bytes.data() + r * row_bytes, out.data() + r * cols, cols);
  }
  return out;
}

TEST(SyntheticBlocks, ValuesFillPlusMinusScaleForEveryFastType) {
  const float scale = 0.05f;
  for (TensorType type : {TensorType::F32, TensorType::F16, TensorType::Q8_0, TensorType::Q4_0,
                          TensorType::Q4_K, TensorType::Q6_K}) {
    const auto bytes = random_weight_blocks(type, 64, 256, scale, 7);
    ASSERT_TRUE(bytes.has_value()) << tensor_type_name(type);
    const std::vector<float> x = decode(type, *bytes, 64, 256);
    const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
    EXPECT_GE(*lo, -scale * 1.001f) << tensor_type_name(type);
    EXPECT_LE(*hi, scale * 1.001f) << tensor_type_name(type);
    EXPECT_LT(*lo, -0.9f * scale) << tensor_type_name(type);  // the range is used
    EXPECT_GT(*hi, 0.8f * scale) << tensor_type_name(type);
    double mean = 0;
    for (float v : x) mean += v;
    EXPECT_NEAR(mean / static_cast<double>(x.size()), 0.0, 0.1 * scale) << tensor_type_name(type);
  }
}

TEST(SyntheticBlocks, SameSeedSameBytesAndOtherTypesAreLeftToTheQuantizer) {
  EXPECT_EQ(random_weight_blocks(TensorType::Q4_0, 4, 64, 0.1f, 3),
            random_weight_blocks(TensorType::Q4_0, 4, 64, 0.1f, 3));
  EXPECT_NE(random_weight_blocks(TensorType::Q4_0, 4, 64, 0.1f, 3),
            random_weight_blocks(TensorType::Q4_0, 4, 64, 0.1f, 4));
  EXPECT_FALSE(random_weight_blocks(TensorType::Q5_K, 4, 256, 0.1f, 3).has_value());
  EXPECT_THROW(random_weight_blocks(TensorType::Q8_0, 4, 48, 0.1f, 3), UsageError);
}

TEST(SyntheticBlocks, AModelWrittenWithBlocksLoadsAndGenerates) {
  ModelSpec spec = test::tiny_llama_spec("", 300);
  spec.dim = 64;
  spec.head_dim = 16;
  spec.rope_dim = 16;
  spec.ffn_dim = 128;
  const std::string path = (test::scratch_dir() / "blocks-q4_0.gguf").string();
  write_synthetic_gguf(path, spec, TensorType::Q4_0, 1, nullptr, SyntheticFill::Blocks);
  EngineOptions o;
  o.backend = BackendChoice::Cpu;
  o.n_threads = 1;
  Engine engine(path, o);
  GenerationRequest r;
  r.prompt = {1, 50, 60, 70};
  r.max_tokens = 8;
  r.sampling.temperature = 0;
  r.stop_at_end_of_generation = false;
  const RequestResult result = engine.generate(r);
  EXPECT_EQ(result.generated.size(), 8u);
  EXPECT_EQ(engine.model().weight_bytes(), model_weights(engine.model()).bytes);
}

}  // namespace
}  // namespace kvscope
