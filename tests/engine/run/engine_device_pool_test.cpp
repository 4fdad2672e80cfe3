// On a GPU backend with no budget given, the engine sizes its KV pool from the device's
// measured memory as the planner would (total x utilisation - others - weights -
// workspace), capped at max_running full contexts. A stand-in GPU (the CPU backend
// reporting a device's memory) drives it here; the real one does the same on a GPU.
#include <memory>

#include <gtest/gtest.h>

#include "plan/memory_model.h"
#include "plan/weight_footprint.h"
#include "run/cpu_backend.h"
#include "run/engine.h"
#include "support/generation_fixtures.h"
#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

using test::greedy_request;
using test::small_options;
using test::story_prompts;

CpuBackendOptions one_thread() {
  CpuBackendOptions o;
  o.n_threads = 1;
  return o;
}

class StandInGpu final : public Backend {
 public:
  StandInGpu(const Model& model, DeviceMemory memory)
      : cpu_(model, one_thread()), memory_(memory) {}
  std::string name() const override { return "stand-in GPU"; }
  void forward(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
               std::vector<float>& logits) override {
    cpu_.forward(chunks, kv, logits);
  }
  bool uses_host_kv_storage() const override { return true; }
  MemoryInfo memory_info(const KvCacheManager& kv) const override { return cpu_.memory_info(kv); }
  std::optional<DeviceMemory> device_memory() const override { return memory_; }

 private:
  CpuBackend cpu_;
  DeviceMemory memory_;
};

EngineOptions on_device(DeviceMemory memory) {
  EngineOptions o = small_options();
  o.backend = BackendChoice::Cuda;
  o.cuda_factory = [memory](const Model& m, const EngineOptions&,
                            std::string*) -> std::unique_ptr<Backend> {
    return std::make_unique<StandInGpu>(m, memory);
  };
  return o;
}

TEST(EngineDevicePool, ThePoolIsWhatThePlannerLeavesOfTheDevice) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const DeviceMemory device{4'000'000, 500'000};
  Engine engine(model, on_device(device));
  PlanRequest r = make_plan_request(engine.spec(), model_weights(engine.model()), KvDtype::F16,
                                    KvDtype::F16, 16);
  r.kv.max_context = engine.context_length();
  r.context = 1;
  r.prefill_chunk = engine.options().scheduler.max_batch_tokens;
  r.backend = PlanBackend::Cpu;  // the stand-in keeps its cache in host memory
  r.budget = {4'000'000, 0.9, 500'000};
  const MemoryPlan plan = plan_memory(r);
  ASSERT_GT(plan.kv_blocks_per_group, 0);
  EXPECT_EQ(engine.kv_cache().pool(0).n_blocks(), plan.kv_blocks_per_group);
  EXPECT_EQ(engine.generate(greedy_request(engine, story_prompts()[0], 8)).generated.size(), 8u);
}

TEST(EngineDevicePool, ABigDeviceGivesAtMostMaxRunningFullContexts) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  EngineOptions o = on_device({std::uint64_t{80} << 30, 0});
  o.scheduler.max_running = 3;
  Engine engine(model, o);
  EXPECT_EQ(engine.kv_cache().pool(0).n_blocks(), 3 * ((test::kContext + 15) / 16));
}

TEST(EngineDevicePool, ADeviceTooFullForTheCacheIsACapacityErrorNamingTheNumbers) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  try {
    Engine engine(model, on_device({2'000'000, 1'900'000}));
    FAIL() << "expected a CapacityError";
  } catch (const CapacityError& e) {
    EXPECT_NE(std::string(e.what()).find("1900000"), std::string::npos) << e.what();
  }
}

TEST(EngineDevicePool, ABlockSizeBelowOneIsAUsageErrorNotACrash) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  EngineOptions o = on_device({std::uint64_t{80} << 30, 0});
  o.block_size = 0;
  EXPECT_THROW(Engine(model, o), UsageError);
}

}  // namespace
}  // namespace kvscope
