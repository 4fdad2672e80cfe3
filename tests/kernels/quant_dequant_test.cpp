// The per-block math of the CUDA weight codecs (quant_dequant.h), run on the host, where the
// same code the kernels call can be checked without a GPU: every value bit for bit as the
// CPU's dequantize_row gives it, the lanes' parts of a matvec row summing to the CPU dot
// product, and every vector load at an address the GPU accepts (the host loads throw where
// a misaligned GPU load would fault). Blocks come from the CPU's quantize_row on random
// rows, rows of equal values, rows with one large outlier and rows of mixed magnitudes.
#include "quant/quant_dequant.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/device_weights.h"
#include "kernel_test_support.h"
#include "quant/quant_activations.h"
#include "quant/tensor_type.h"

namespace kvscope {
namespace {

namespace qd = cuda::qd;

// n values of T at an address aligned to `align` bytes (as cudaMalloc gives 256), plus
// `shift` bytes: the layout the kernels see, or a deliberately misaligned one.
template <typename T>
class AlignedArray {
 public:
  AlignedArray(std::size_t n, std::size_t align = 256, std::size_t shift = 0)
      : storage_((n * sizeof(T) + align + shift) / sizeof(T) + 1) {
    auto addr = reinterpret_cast<std::uintptr_t>(storage_.data());
    addr = (addr + align - 1) / align * align + shift;
    data_ = reinterpret_cast<T*>(addr);
  }
  AlignedArray(AlignedArray&&) noexcept = default;  // the buffer (and data_) stay put
  AlignedArray(const AlignedArray&) = delete;
  AlignedArray& operator=(const AlignedArray&) = delete;
  AlignedArray& operator=(AlignedArray&&) = delete;
  T* data() const { return data_; }

 private:
  std::vector<T> storage_;
  T* data_ = nullptr;
};

// One activation row quantized as launch_quantize_q8 stores it: codes [cols] and scales
// [cols / 32], 256-byte aligned as device buffers are.
struct Q8Row {
  AlignedArray<std::int8_t> q;
  AlignedArray<float> d;
  explicit Q8Row(const std::vector<float>& x) : q(x.size()), d(x.size() / 32) {
    qd::quantize_q8_reference(x.data(), static_cast<std::int64_t>(x.size()), q.data(), d.data());
  }
};

template <class C, TensorType T>
struct Case {
  using Codec = C;
  static constexpr TensorType kType = T;
};

using Cases = ::testing::Types<Case<qd::Q4_0, TensorType::Q4_0>, Case<qd::Q4_1, TensorType::Q4_1>,
                               Case<qd::Q5_0, TensorType::Q5_0>, Case<qd::Q5_1, TensorType::Q5_1>,
                               Case<qd::Q8_0, TensorType::Q8_0>, Case<qd::Q4_K, TensorType::Q4_K>,
                               Case<qd::Q5_K, TensorType::Q5_K>, Case<qd::Q6_K, TensorType::Q6_K>>;

struct CaseName {
  template <class T>
  static std::string GetName(int) {
    return T::Codec::kName;
  }
};

// `rows` rows of `cols` values: row 0 all equal, row 1 all equal and negative, row 2
// random with one outlier 40x the rest, row 3 blocks of very different magnitudes, the
// rest uniform in +-1.
std::vector<float> test_rows(int rows, int cols, std::uint32_t seed) {
  auto v = test::random_floats(static_cast<std::size_t>(rows) * cols, seed);
  auto row = [&](int r) { return v.begin() + static_cast<std::ptrdiff_t>(r) * cols; };
  if (rows > 0) std::fill(row(0), row(1), 0.37f);
  if (rows > 1) std::fill(row(1), row(2), -1.25f);
  if (rows > 2) row(2)[cols / 3] = 40.0f;
  if (rows > 3) {
    for (int c = 0; c < cols; ++c) row(3)[c] *= std::ldexp(1.0f, (c / 32) % 7 * 3 - 9);
  }
  return v;
}

template <class T>
class QuantDequantTest : public ::testing::Test {
 protected:
  using Codec = typename T::Codec;
  static constexpr TensorType kType = T::kType;

  // The rows quantized back to back, as a GGUF matrix (and the device copy) holds them.
  struct Stored {
    int rows = 0, cols = 0;
    std::int64_t row_bytes = 0;
    AlignedArray<std::uint8_t> bytes;
    const std::uint8_t* row(int r) const { return bytes.data() + r * row_bytes; }
  };

  static Stored quantize(const std::vector<float>& values, int rows, int cols,
                         std::size_t shift = 0) {
    const std::int64_t rb = row_bytes(kType, cols);
    Stored s{rows, cols, rb,
             AlignedArray<std::uint8_t>(static_cast<std::size_t>(rb * rows), 256, shift)};
    for (int r = 0; r < rows; ++r) {
      quantize_row(kType, &values[static_cast<std::size_t>(r) * cols], s.bytes.data() + r * rb,
                   cols);
    }
    return s;
  }

  // out[r] = sum over the 32 lanes of lane_dots for rows r0 and r0 + 1, as one warp of
  // the matvec kernel computes them, with float activations x or their 8-bit codes.
  static void warp_dots(const Stored& s, int r0, const float* x, float out[2]) {
    warp_total(s, r0, qd::FloatActivations<Codec>{x}, out);
  }
  static void warp_dots(const Stored& s, int r0, const Q8Row& x, float out[2]) {
    warp_total(s, r0, qd::Q8Activations<Codec>{x.q.data(), x.d.data()}, out);
  }
  template <class Acts>
  static void warp_total(const Stored& s, int r0, const Acts& acts, float out[2]) {
    const std::uint8_t* rows[2] = {s.row(r0), s.row(r0 + 1)};
    out[0] = out[1] = 0.0f;
    for (int lane = 0; lane < qd::kLanes; ++lane) {
      float acc[2] = {0.0f, 0.0f};
      qd::lane_dots<Codec, 2>(rows, acts, s.cols / Codec::kValues, lane, acc);
      out[0] += acc[0];
      out[1] += acc[1];
    }
  }
};

TYPED_TEST_SUITE(QuantDequantTest, Cases, CaseName);

TYPED_TEST(QuantDequantTest, BlockGeometryIsTheEnginesTensorType) {
  using C = typename TestFixture::Codec;
  const TensorTypeInfo& info = tensor_type_info(TestFixture::kType);
  EXPECT_EQ(C::kValues, info.block_elems);
  EXPECT_EQ(C::kBytes, info.block_bytes);
  EXPECT_EQ(std::string(C::kName), std::string(info.name));
  EXPECT_EQ(qd::kLanes % C::kParts, 0);
  EXPECT_EQ(C::kXPart * C::kParts, C::kValues);
}

TYPED_TEST(QuantDequantTest, EveryValueIsDequantizeRowBitForBit) {
  using C = typename TestFixture::Codec;
  const int rows = 9, cols = 3 * 256;
  const auto values = test_rows(rows, cols, 101);
  const auto s = TestFixture::quantize(values, rows, cols);
  std::vector<float> ref(cols);
  int bad = 0;
  std::ostringstream first;
  for (int r = 0; r < rows; ++r) {
    dequantize_row(TestFixture::kType, s.row(r), ref.data(), cols);
    for (int c = 0; c < cols; ++c) {
      const float got = qd::row_value<C>(s.row(r), c);
      if (std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(ref[c])) continue;
      if (bad++ < 8) first << "\n  row " << r << " col " << c << ": " << got << " want " << ref[c];
    }
  }
  EXPECT_EQ(bad, 0) << C::kName << first.str();
}

TYPED_TEST(QuantDequantTest, TheLanePartsOfAWarpSumToTheCpuDotProduct) {
  using C = typename TestFixture::Codec;
  // 1 block; 3 (a warp step only partly used); 43 (odd: every later row starts at a 2-byte
  // or 4-byte offset for the small-block types); 128 blocks
  for (const int n_blocks : {1, 3, 43, 128}) {
    const int rows = 6, cols = n_blocks * C::kValues;
    const auto values = test_rows(rows, cols, 7u + static_cast<std::uint32_t>(n_blocks));
    const auto s = TestFixture::quantize(values, rows, cols);
    const auto xv = test::random_floats(static_cast<std::size_t>(cols), 31);
    AlignedArray<float> x(static_cast<std::size_t>(cols), 16);
    std::copy(xv.begin(), xv.end(), x.data());
    std::vector<float> w(cols);
    for (int r0 = 0; r0 < rows; r0 += 2) {
      float got[2];
      TestFixture::warp_dots(s, r0, x.data(), got);
      for (int i = 0; i < 2; ++i) {
        dequantize_row(TestFixture::kType, s.row(r0 + i), w.data(), cols);
        double want = 0.0, magnitude = 0.0;
        for (int c = 0; c < cols; ++c) {
          want += static_cast<double>(w[c]) * xv[c];
          magnitude += std::fabs(static_cast<double>(w[c]) * xv[c]);
        }
        EXPECT_NEAR(got[i], want, 1e-6 * magnitude + 1e-6)
            << C::kName << " row " << r0 + i << ", " << n_blocks << " blocks";
        EXPECT_NEAR(dot_row(TestFixture::kType, s.row(r0 + i), xv.data(), cols), want,
                    1e-6 * magnitude + 1e-6)
            << "the CPU reference itself";
      }
    }
  }
}

// wq | wk | wv stacked as device_weights.h uploads them (odd row counts, so wk and wv start
// at 2- or 4-byte offsets for the small-block types): the lanes read every part where
// stacked_offsets puts it, with no load faulting, and give the CPU dot product of its rows.
TYPED_TEST(QuantDequantTest, EachPartOfAStackedMatrixIsReadWhereItsOffsetSays) {
  using C = typename TestFixture::Codec;
  cuda::DeviceWeightType device = cuda::DeviceWeightType::F32;
  for (const test::WeightTypeCase& t : test::all_weight_types()) {
    if (t.type == TestFixture::kType) device = t.device;
  }
  const int cols = 3 * C::kValues;
  const std::vector<int> part_rows = {7, 3, 3};
  std::vector<cuda::DeviceWeight> parts;
  for (const int rows : part_rows) {
    parts.push_back({device, rows, cols, row_bytes(TestFixture::kType, cols), nullptr});
  }
  const auto offsets = cuda::stacked_offsets(parts);
  ASSERT_TRUE(offsets.has_value());
  const int total_rows = 13;
  const auto values = test_rows(total_rows, cols, 404);
  const auto stack = TestFixture::quantize(values, total_rows, cols);  // 256-byte aligned
  ASSERT_EQ(offsets->back(), static_cast<std::size_t>(total_rows * stack.row_bytes));
  const auto xv = test::random_floats(static_cast<std::size_t>(cols), 405);
  AlignedArray<float> x(static_cast<std::size_t>(cols), 16);
  std::copy(xv.begin(), xv.end(), x.data());
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const std::uint8_t* part = stack.bytes.data() + (*offsets)[p];
    for (int r = 0; r < part_rows[p]; ++r) {
      const std::uint8_t* rows[1] = {part + r * stack.row_bytes};
      float got = 0.0f;
      for (int lane = 0; lane < qd::kLanes; ++lane) {
        float acc[1] = {0.0f};
        ASSERT_NO_THROW((qd::lane_dots<C, 1>(rows, qd::FloatActivations<C>{x.data()},
                                             cols / C::kValues, lane, acc)))
            << C::kName << " part " << p << " row " << r;
        got += acc[0];
      }
      const float want = dot_row(TestFixture::kType, rows[0], xv.data(), cols);
      EXPECT_NEAR(got, want, 1e-4f * (1.0f + std::fabs(want))) << C::kName << " part " << p;
    }
  }
}

// --- 8-bit activations (Q8Activations) -------------------------------------------------

// Sum over i of M_b |x_i|, M_b the largest |w| of weight i's 32-value block plus its offset
// or min term: the size of the float rounding of a block's terms.
double rounding_scale(const std::vector<float>& w, const std::vector<float>& x) {
  double total = 0.0;
  for (std::size_t b = 0; b < w.size(); b += 32) {
    float m = 0.0f;
    for (std::size_t i = b; i < b + 32; ++i) m = std::max(m, std::fabs(w[i]));
    for (std::size_t i = b; i < b + 32; ++i) total += 2.0 * m * std::fabs(x[i]);
  }
  return total;
}

// Activations the 8-bit codes hold exactly (each block k_i * 2^e with some |k_i| = 127): the
// lanes must then give the float dot product, so every weight quant met its own activation.
TYPED_TEST(QuantDequantTest, EightBitActivationsThatAreExactGiveTheFloatDotProduct) {
  using C = typename TestFixture::Codec;
  for (const int n_blocks : {1, 3, 43}) {
    const int rows = 6, cols = n_blocks * C::kValues;
    const auto s = TestFixture::quantize(test_rows(rows, cols, 17u + n_blocks), rows, cols);
    std::mt19937 rng(5u + static_cast<std::uint32_t>(n_blocks));
    std::uniform_int_distribution<int> code(-127, 127);
    std::vector<float> x(static_cast<std::size_t>(cols));
    for (int b = 0; b < cols / 32; ++b) {
      const float step = std::ldexp(1.0f, b % 6 - 3);
      for (int i = 0; i < 32; ++i) x[32 * b + i] = static_cast<float>(code(rng)) * step;
      x[32 * b + b % 32] = (b % 2 ? -127.0f : 127.0f) * step;
    }
    const Q8Row xq(x);
    for (int i = 0; i < cols; ++i) ASSERT_EQ(xq.q.data()[i] * xq.d.data()[i / 32], x[i]);
    std::vector<float> w(cols);
    for (int r0 = 0; r0 < rows; r0 += 2) {
      float got[2];
      TestFixture::warp_dots(s, r0, xq, got);
      for (int i = 0; i < 2; ++i) {
        dequantize_row(TestFixture::kType, s.row(r0 + i), w.data(), cols);
        double want = 0.0;
        for (int c = 0; c < cols; ++c) want += static_cast<double>(w[c]) * x[c];
        EXPECT_NEAR(got[i], want, 1e-5 * rounding_scale(w, x) + 1e-6)
            << C::kName << " row " << r0 + i << ", " << n_blocks << " blocks";
      }
    }
  }
}

// Any activations: the lanes compute sum w_i x^_i (offsets and minimums in integers too), so
// the result differs from the float dot product by at most the codes' rounding,
// |w_i| d_b / 2 per value, plus float rounding.
TYPED_TEST(QuantDequantTest, EightBitActivationsStayWithinTheirRoundingOfTheFloatDotProduct) {
  using C = typename TestFixture::Codec;
  const int rows = 6, cols = 5 * C::kValues;
  const auto s = TestFixture::quantize(test_rows(rows, cols, 77), rows, cols);
  auto x = test::random_floats(static_cast<std::size_t>(cols), 78);
  for (int c = 0; c < cols; c += 97) x[c] *= 30.0f;  // outliers widen their block's step
  const Q8Row xq(x);
  std::vector<float> w(cols);
  for (int r0 = 0; r0 < rows; r0 += 2) {
    float got[2];
    TestFixture::warp_dots(s, r0, xq, got);
    for (int i = 0; i < 2; ++i) {
      dequantize_row(TestFixture::kType, s.row(r0 + i), w.data(), cols);
      double want = 0.0, bound = 0.0;
      for (int c = 0; c < cols; ++c) {
        want += static_cast<double>(w[c]) * x[c];
        bound += std::fabs(static_cast<double>(w[c])) * xq.d.data()[c / 32] / 2.0;
      }
      EXPECT_NEAR(got[i], want, bound * 1.001 + 1e-5 * rounding_scale(w, x) + 1e-6)
          << C::kName << " row " << r0 + i;
      EXPECT_GT(bound, 0.0);
    }
  }
}

TYPED_TEST(QuantDequantTest, VectorLoadsFaultOnRowsOrActivationsAlignedBelowTheirNeed) {
  using C = typename TestFixture::Codec;
  const int rows = 2, cols = 2 * C::kValues;
  const auto values = test_rows(rows, cols, 5);
  AlignedArray<float> x(static_cast<std::size_t>(cols) + 4, 16);
  std::fill(x.data(), x.data() + cols + 4, 0.5f);
  float out[2];
  // aligned as cudaMalloc'd memory: no fault
  EXPECT_NO_THROW(
      TestFixture::warp_dots(TestFixture::quantize(values, rows, cols), 0, x.data(), out));
  // x one float off its 16-byte alignment
  EXPECT_THROW(
      TestFixture::warp_dots(TestFixture::quantize(values, rows, cols), 0, x.data() + 1, out),
      std::logic_error);
  // weights one byte off (no codec reads single bytes in its hot loop)
  EXPECT_THROW(
      TestFixture::warp_dots(TestFixture::quantize(values, rows, cols, 1), 0, x.data(), out),
      std::logic_error);
}

TEST(QuantDequant, KQuantSuperBlocksAre16ByteAlignedSoTheirQuantsLoad16BytesAtATime) {
  const int rows = 2, cols = 256;
  const auto values = test_rows(rows, cols, 3);
  AlignedArray<float> x(cols, 16);
  std::fill(x.data(), x.data() + cols, 1.0f);
  AlignedArray<std::uint8_t> q4(2 * 144, 256, 8), q5(2 * 176, 256, 8);
  quantize_row(TensorType::Q4_K, values.data(), q4.data(), cols);
  quantize_row(TensorType::Q4_K, values.data() + cols, q4.data() + 144, cols);
  quantize_row(TensorType::Q5_K, values.data(), q5.data(), cols);
  quantize_row(TensorType::Q5_K, values.data() + cols, q5.data() + 176, cols);
  float acc[2] = {};
  // 8-byte aligned rows are enough for the 2-byte types but not for these
  const std::uint8_t* r4[2] = {q4.data(), q4.data() + 144};
  EXPECT_THROW(
      (qd::lane_dots<qd::Q4_K, 2>(r4, qd::FloatActivations<qd::Q4_K>{x.data()}, 1, 0, acc)),
      std::logic_error);
  const std::uint8_t* r5[2] = {q5.data(), q5.data() + 176};
  EXPECT_THROW(
      (qd::lane_dots<qd::Q5_K, 2>(r5, qd::FloatActivations<qd::Q5_K>{x.data()}, 1, 0, acc)),
      std::logic_error);
}

}  // namespace
}  // namespace kvscope
