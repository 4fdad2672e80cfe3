#include "kv/panel_snapshot_json.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kv/kv_cache_manager.h"
#include "kv/kv_cache_observer.h"
#include "run/memory_terms.h"
#include "run/split_backend.h"

namespace kvscope {
namespace {

// 2 layers, 2 KV heads, head_dim 8, fp16, block_size 4: 512 bytes per block.
KvCacheConfig config() {
  KvCacheConfig c;
  c.groups = uniform_layer_groups(2, KvDtype::F16);
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.block_size = 4;
  c.max_context = 32;
  c.n_blocks = 8;
  return c;
}

// seq 1: 6 tokens (blocks 0 full, 1 half); seq 2 a fork of it (both shared); seq 3: 1 token.
TEST(PanelSnapshotJson, HoldsTheSnapshotsNumbersAndTheMemoryTerms) {
  KvCacheManager m(config());
  m.add_sequence(1);
  m.grow(1, 6);
  m.fork(1, 2);
  m.add_sequence(3);
  m.grow(3, 1);
  const CacheSnapshot s = snapshot_of(m);
  PanelSnapshotContext context;
  context.model = "tiny \"model\".gguf";
  context.device = "CPU (1 thread)";
  context.memory_bytes = {{"weights", 1000}, {"kv_pool", 4096}};
  const std::string text = panel_snapshot_json(s, context);
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["format"], "kvscope-panel-snapshot");
  EXPECT_EQ(j["version"], kPanelSnapshotVersion);
  EXPECT_EQ(j["model"], "tiny \"model\".gguf");
  EXPECT_EQ(j["device"], "CPU (1 thread)");
  EXPECT_EQ(j["block_size"], 4);
  EXPECT_EQ(j["max_context"], 32);
  const auto& t = j["totals"];
  EXPECT_EQ(t["n_blocks"], 8);
  EXPECT_EQ(t["n_used"], 3);
  EXPECT_EQ(t["n_free"], 5);
  EXPECT_EQ(t["n_shared"], 2);
  EXPECT_EQ(t["allocated_slots"], 12);
  EXPECT_EQ(t["filled_slots"], 7);
  EXPECT_NEAR(t["internal_fragmentation"].get<double>(), 5.0 / 12.0, 1e-6);
  EXPECT_EQ(t["shared_savings_bytes"], 2 * 512);
  EXPECT_EQ(t["pool_bytes"], s.pool_bytes);
  EXPECT_EQ(t["contiguous"]["reserved_slots"], s.contiguous.reserved_slots);
  ASSERT_EQ(j["groups"].size(), 1u);
  const auto& g = j["groups"][0];
  EXPECT_EQ(g["layers"], nlohmann::json::array({0, 1}));
  EXPECT_EQ(g["k_dtype"], "f16");
  EXPECT_EQ(g["block_bytes"], 512);
  EXPECT_EQ(g["blocks_by_owner"]["1"], 2);  // the shared blocks count for their lowest owner
  EXPECT_EQ(g["blocks_by_owner"]["3"], 1);
  ASSERT_EQ(j["layers"].size(), 2u);
  EXPECT_EQ(j["layers"][1]["bytes_in_use"], s.layers[1].bytes_in_use);
  ASSERT_EQ(j["sequences"].size(), 3u);
  EXPECT_EQ(j["sequences"][2]["id"], 3);
  EXPECT_EQ(j["sequences"][2]["n_tokens"], 1);
  EXPECT_EQ(j["memory"]["weights"], 1000);
  EXPECT_EQ(j["memory"]["kv_pool"], 4096);
  EXPECT_EQ(j["memory"].begin().key(), "kv_pool");  // nlohmann sorts; the text keeps order:
  EXPECT_LT(text.find("\"weights\""), text.find("\"kv_pool\""));
}

TEST(PanelSnapshotJson, AnEmptySnapshotIsStillAWholeObject) {
  const nlohmann::json j = nlohmann::json::parse(panel_snapshot_json({}, {}));
  EXPECT_EQ(j["groups"].size(), 0u);
  EXPECT_EQ(j["totals"]["n_blocks"], 0);
  EXPECT_TRUE(j["memory"].is_object());
  EXPECT_FALSE(j.contains("split"));  // one backend: no split
}

// A model split between GPU and CPU (run/split_backend.h): "device" and "memory" are the GPU's
// side, "split" the CPU's (set_memory_terms, as the app's export and `run --snapshot` fill it).
TEST(PanelSnapshotJson, ASplitWritesEachSidesMemory) {
  SplitMemory split;
  split.gpu_layers = 2;
  split.n_layers = 5;
  split.gpu = {"GPU 0", 8000, 178, 392, 4080, 0, 3350};
  split.cpu = {"CPU (1 threads)", 24000, 789, 588, 57, 0, 22566};
  PanelSnapshotContext context;
  MemoryInfo whole_gpu = split.gpu;
  whole_gpu.device = "GPU 0 (2/5 layers; the rest on the CPU)";
  set_memory_terms(context, whole_gpu, split);
  const nlohmann::json j = nlohmann::json::parse(panel_snapshot_json({}, context));
  EXPECT_EQ(j["device"], "GPU 0");
  EXPECT_EQ(j["memory"]["weights"], 178);
  EXPECT_EQ(j["memory"]["total"], 8000);
  EXPECT_EQ(j["split"]["gpu_layers"], 2);
  EXPECT_EQ(j["split"]["n_layers"], 5);
  EXPECT_EQ(j["split"]["cpu_device"], "CPU (1 threads)");
  EXPECT_EQ(j["split"]["cpu_memory"]["weights"], 789);
  EXPECT_EQ(j["split"]["cpu_memory"]["kv_pool"], 588);
  EXPECT_EQ(j["split"]["cpu_memory"]["free"], 22566);

  PanelSnapshotContext plain;
  set_memory_terms(plain, whole_gpu, std::nullopt);
  const nlohmann::json p = nlohmann::json::parse(panel_snapshot_json({}, plain));
  EXPECT_EQ(p["device"], whole_gpu.device);
  EXPECT_FALSE(p.contains("split"));
}

}  // namespace
}  // namespace kvscope
