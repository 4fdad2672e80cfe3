// Weights as the device reads them: the fp16 scratch of prompt GEMMs (launch_dequantize_f16)
// equals the CPU's dequantize_row rounded to fp16 bit for bit for every device weight type,
// the embedding lookup reads every quantized type exactly, and a model of each quantized
// type the CPU reads (a Q4_K_M file is Q4_K + Q6_K) is accepted and uploaded byte for byte.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/device_weights.h"
#include "backend/kernel_launchers.h"
#include "kernel_test_support.h"
#include "model/model.h"
#include "model/synthetic_model.h"
#include "support/test_data.h"
#include "util/error.h"
#include "util/half.h"

namespace kvscope {
namespace {

using test::device_zeros;
using test::from_device;
using test::random_floats;
using test::to_device;

using TypeCase = test::WeightTypeCase;

// A quantized random matrix (one row of equal values, one with an outlier) on host and device.
struct StoredMatrix {
  int rows = 0, cols = 0;
  std::int64_t row_bytes = 0;
  std::vector<std::uint8_t> host;
  cuda::DeviceBuffer device;

  StoredMatrix(TensorType type, int n_rows, int n_cols, std::uint32_t seed)
      : rows(n_rows), cols(n_cols), row_bytes(kvscope::row_bytes(type, n_cols)) {
    auto values = random_floats(static_cast<std::size_t>(rows) * cols, seed);
    std::fill(values.begin(), values.begin() + cols, 0.5f);
    values[static_cast<std::size_t>(cols) + 3] = 30.0f;
    host.resize(static_cast<std::size_t>(row_bytes * rows));
    for (int r = 0; r < rows; ++r) {
      quantize_row(type, &values[static_cast<std::size_t>(r) * cols], &host[r * row_bytes], cols);
    }
    device = to_device(host);
  }
  const std::uint8_t* row(int r) const { return host.data() + r * row_bytes; }
};

// The fp16 bits of dequantize_row for rows [row0, row0 + n).
std::vector<std::uint16_t> cpu_f16_rows(TensorType type, const StoredMatrix& m, int row0, int n) {
  std::vector<std::uint16_t> out;
  std::vector<float> row(m.cols);
  for (int r = row0; r < row0 + n; ++r) {
    dequantize_row(type, m.row(r), row.data(), m.cols);
    for (const float v : row) out.push_back(float_to_fp16(v));
  }
  return out;
}

void expect_same_bits(const std::vector<std::uint16_t>& got, const std::vector<std::uint16_t>& want,
                      const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i] && bad++ == 0) first = i;
  }
  EXPECT_EQ(bad, 0u) << what << ": first at " << first << ": got 0x" << std::hex << got[first]
                     << " want 0x" << want[first];
}

TEST(CudaDequantizeF16, ASlabOfRowsIsTheCpuDequantizationRoundedToFp16ForEveryType) {
  KVSCOPE_REQUIRE_CUDA();
  for (const TypeCase& tc : test::all_weight_types()) {
    const int block = static_cast<int>(tensor_type_info(tc.type).block_elems);
    // F32 / F16: 37 and 100 cut the groups of 8 at the row end (stored value by value)
    const std::vector<int> col_counts =
        block == 1 ? std::vector<int>{96, 100, 37} : std::vector<int>{2 * block, 3 * block};
    for (const int cols : col_counts) {
      const StoredMatrix m(tc.type, 41, cols, 5u + static_cast<std::uint32_t>(cols));
      const cuda::DeviceWeight w{tc.device, m.rows, cols, m.row_bytes, m.device.get()};
      const std::string what =
          std::string(tensor_type_name(tc.type)) + " cols " + std::to_string(cols);
      for (const auto& [row0, n] : {std::pair{5, 31}, std::pair{0, 41}, std::pair{40, 1}}) {
        auto out = device_zeros<std::uint16_t>(static_cast<std::size_t>(n) * cols);
        cuda::launch_dequantize_f16(w, row0, n, out.as<std::uint16_t>(), nullptr);
        expect_same_bits(from_device<std::uint16_t>(out, static_cast<std::size_t>(n) * cols),
                         cpu_f16_rows(tc.type, m, row0, n),
                         what + " rows " + std::to_string(row0) + "+" + std::to_string(n));
      }
      // into a scratch 2 bytes past 16-byte alignment: stored value by value
      auto out = device_zeros<std::uint16_t>(static_cast<std::size_t>(7) * cols + 1);
      cuda::launch_dequantize_f16(w, 3, 7, out.as<std::uint16_t>() + 1, nullptr);
      auto got = from_device<std::uint16_t>(out, static_cast<std::size_t>(7) * cols + 1);
      got.erase(got.begin());
      expect_same_bits(got, cpu_f16_rows(tc.type, m, 3, 7), what + " unaligned scratch");
    }
  }
}

TEST(CudaDequantizeF16, RejectsARowRangeOutsideTheWeight) {
  const cuda::DeviceWeight w{cuda::DeviceWeightType::Q4_K, 10, 256, 144,
                             reinterpret_cast<const void*>(std::uintptr_t{1} << 20)};
  auto* out = reinterpret_cast<std::uint16_t*>(std::uintptr_t{2} << 20);
  EXPECT_THROW(cuda::launch_dequantize_f16(w, 4, 7, out, nullptr), UsageError);
  EXPECT_THROW(cuda::launch_dequantize_f16(w, -1, 2, out, nullptr), UsageError);
  EXPECT_THROW(cuda::launch_dequantize_f16(w, 0, -1, out, nullptr), UsageError);
}

TEST(CudaEmbedding, ReadsRowsOfEveryQuantizedTypeBitForBit) {
  KVSCOPE_REQUIRE_CUDA();
  const std::vector<int> tokens = {5, 0, 36, 5, 17, 1};
  for (const TypeCase& tc : test::all_weight_types()) {
    const int dim =
        static_cast<int>(std::max<std::int64_t>(tensor_type_info(tc.type).block_elems, 32)) * 2;
    const StoredMatrix table(tc.type, 37, dim, 21);
    std::vector<float> ref;
    for (const int t : tokens) {
      std::vector<float> row(dim);
      dequantize_row(tc.type, table.row(t), row.data(), dim);
      ref.insert(ref.end(), row.begin(), row.end());
    }
    auto dtok = to_device(tokens);
    auto dx = device_zeros<float>(ref.size());
    const cuda::DeviceWeight w{tc.device, table.rows, dim, table.row_bytes, table.device.get()};
    cuda::launch_embedding(w, dtok.as<int>(), static_cast<int>(tokens.size()), dx.as<float>(),
                           nullptr);
    test::expect_close(from_device<float>(dx, ref.size()), ref, 0.0f, 0.0f,
                       std::string("embedding ") + std::string(tensor_type_name(tc.type)));
  }
}

// A small llama model whose matrices are all `type` (dims multiples of 256 for the K-quants).
std::string synthetic_model(TensorType type) {
  const ModelSpec spec = test::random_llama_spec("device-weights", {2, 8, 2, 512, 300, 256});
  const std::string path =
      (test::scratch_dir() / ("device-weights-" + std::string(tensor_type_name(type)) + ".gguf"))
          .string();
  write_synthetic_gguf(path, spec, type, 3);
  return path;
}

const TensorType kNewTypes[] = {TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
                                TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K};

TEST(CudaDeviceWeights, EveryQuantizedTypeTheCpuReadsHasACudaKernel) {
  for (const TensorType type : kNewTypes) {
    const auto model = load_model(synthetic_model(type));
    const auto why = cuda::unsupported_weights(*model);
    EXPECT_FALSE(why.has_value()) << tensor_type_name(type) << ": " << why.value_or("");
  }
}

TEST(CudaDeviceWeights, QuantizedMatricesAreUploadedByteForByteInTheirOwnType) {
  KVSCOPE_REQUIRE_CUDA();
  for (const TensorType type : {TensorType::Q4_K, TensorType::Q6_K, TensorType::Q5_0}) {
    const auto model = load_model(synthetic_model(type));
    const cuda::DeviceModelWeights dw(*model, test::test_allocator(), false);
    const WeightView& host = model->weights().layers[1].w_down;
    const cuda::DeviceWeight& dev = dw.layers[1].w_down;
    EXPECT_EQ(std::string(cuda::device_weight_type_name(dev.type)),
              std::string(tensor_type_name(type)));
    ASSERT_EQ(dev.row_bytes, host.row_bytes());
    std::vector<std::uint8_t> got(static_cast<std::size_t>(dev.row_bytes * dev.rows));
    ASSERT_EQ(cudaMemcpy(got.data(), dev.data, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(std::memcmp(got.data(), host.data, got.size()), 0) << tensor_type_name(type);
    EXPECT_EQ(std::string(cuda::device_weight_type_name(dw.token_embd.type)),
              std::string(tensor_type_name(type)));
  }
}

// wq, wk, wv (and w_gate, w_up) of one type and width sit in one allocation, row after row,
// and the stacked weight covers them all: one decode launch computes [q | k | v].
TEST(CudaDeviceWeights, ProjectionsOfOneTypeAreStackedRowAfterRow) {
  KVSCOPE_REQUIRE_CUDA();
  const auto model = load_model(synthetic_model(TensorType::Q4_K));
  const cuda::DeviceModelWeights dw(*model, test::test_allocator(), false);
  for (const cuda::DeviceLayerWeights& l : dw.layers) {
    const auto* base = static_cast<const std::uint8_t*>(l.wq.data);
    ASSERT_EQ(l.wqkv.data, l.wq.data);
    EXPECT_EQ(l.wqkv.rows, l.wq.rows + l.wk.rows + l.wv.rows);
    EXPECT_EQ(l.wk.data, base + l.wq.rows * l.wq.row_bytes);
    EXPECT_EQ(l.wv.data, base + (l.wq.rows + l.wk.rows) * l.wq.row_bytes);
    ASSERT_EQ(l.w_gate_up.data, l.w_gate.data);
    EXPECT_EQ(l.w_gate_up.rows, 2 * l.w_gate.rows);
    EXPECT_EQ(l.w_up.data,
              static_cast<const std::uint8_t*>(l.w_gate.data) + l.w_gate.rows * l.w_gate.row_bytes);
  }
}

}  // namespace
}  // namespace kvscope
