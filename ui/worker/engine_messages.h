// Value types that cross between the GUI thread and the EngineWorker's thread. Every
// signal between them carries only these (copied, never shared), so neither side ever
// touches the other's objects.
#pragma once

#include <QMetaType>
#include <QString>
#include <QtGlobal>

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kv/cache_snapshot.h"
#include "model/model_spec.h"
#include "plan/weight_footprint.h"
#include "run/backend.h"
#include "run/engine.h"
#include "run/plan_check.h"
#include "run/request.h"
#include "run/sampler.h"
#include "run/split_backend.h"
#include "text/chat_template.h"

namespace kvscope::ui {

// The GUI's id of one chat (one conversation in the sidebar); each reply of a chat is one
// engine request (one KV sequence).
using ChatId = qint64;

// What to load and how. An empty path means the built-in demo model.
struct LoadRequest {
  QString path;
  EngineOptions options;
  std::uint64_t generation = 0;  // EngineController's count of loads asked; 0: not cancellable
};

// Shared by the EngineController (GUI thread) and its worker: a load in progress stops when
// the app quits or a newer load has been asked for (EngineOptions::cancel_load).
struct LoadCancel {
  std::atomic<bool> quitting{false};
  std::atomic<std::uint64_t> latest{0};
};

// What the GUI shows about the loaded model.
struct ModelInfo {
  QString path;
  QString name;  // spec name, or the demo's label
  bool demo = false;
  std::int64_t context_length = 0;  // what the engine allows (max_context)
  std::int64_t block_size = 0;
  QString template_name;    // the chat template family in use
  QString device;           // MemoryInfo::device; a split's "<GPU> + <CPU>"
  QString backend_note;     // why the requested backend was not used ("" when it was)
  ModelSpec spec;           // the model's shape, for the planner pages
  WeightFootprint weights;  // model_weights(): its exact stored bytes
  // The same per layer [n_layers], and the token table and an untied output head: the
  // What fits page splits the loaded model between GPU and CPU with them.
  std::vector<std::int64_t> layer_weight_bytes;
  std::int64_t embedding_weight_bytes = 0;
  std::int64_t output_weight_bytes = 0;
  KvDtype k_dtype = KvDtype::F16;  // the cache's dtypes (first layer group)
  KvDtype v_dtype = KvDtype::F16;
  bool cuda = false;  // the engine runs on the CUDA backend, all layers or a split's first
  // Layers [0, gpu_layers) on the GPU when the model is split between GPU and CPU
  // (Engine::split_gpu_layers(), of spec.n_layers); 0 without a split.
  std::int64_t gpu_layers = 0;
  // The sampling values the model publishes (generation_config.json): a new chat's defaults.
  SamplingDefaults sampling_defaults;
};

// One reply to generate: the conversation up to and including the user's last message.
struct ChatRequest {
  ChatId chat = 0;
  std::vector<ChatMessage> messages;
  SamplingParams sampling;
  std::int64_t max_tokens = 256;
};

// How a reply ended. Text streamed before stays in the chat whatever the reason.
struct ReplyFinished {
  ChatId chat = 0;
  FinishReason reason = FinishReason::None;
  QString error;                      // the engine's message for Error / ContextFull
  std::int64_t prompt_tokens = 0;     // tokens of the prompt the reply was generated from
  std::int64_t generated_tokens = 0;  // tokens the reply holds
  std::int64_t reused_tokens = 0;     // prompt tokens shared from the chat's kept cache
};

// One frame of the live panel: everything it draws, taken on the worker thread in one go.
struct PanelFrame {
  CacheSnapshot cache;
  MemoryInfo memory;  // the backend's; a split's GPU side (the same as split->gpu)
  // A model split between GPU and CPU (Engine::split_memory()): each side's layers and
  // memory; nullopt without a split. The cache's groups are then per side (on the GPU: the
  // groups whose layers are below split->gpu_layers, listed first).
  std::optional<SplitMemory> split;
  std::map<SeqId, ChatId> owners;  // chat of every live sequence (from the scheduler)
  // While the app serves its model (ui/serving): the sequence of each API request being
  // answered, by its number n ("API #n"), and how many of them run or wait for a sequence.
  std::map<SeqId, std::int64_t> api;
  std::int64_t api_running = 0;
  std::int64_t api_waiting = 0;
  double seconds = 0.0;  // since the model was loaded (x of the time charts)
};

// Throughput measured by the worker over about one second of steps.
struct SpeedSample {
  double decode_tokens_per_s = 0.0;
  double prompt_tokens_per_s = 0.0;
  double step_seconds = 0.0;   // spent in Engine::step() during the window
  double frame_seconds = 0.0;  // spent taking panel frames (snapshot, memory info)
};

// Registers the types above for queued connections (idempotent).
void register_engine_metatypes();

// The engine's device name (MemoryInfo::device) as the window shows it: the CPU backend's
// "CPU (N threads)" in the interface's language, a GPU's name as it is.
QString device_label(const std::string& device);
// The devices the model runs on: device_label(memory.device), or for a split both sides'
// ("NVIDIA GeForce RTX 4060 + CPU (8 threads)").
QString devices_label(const MemoryInfo& memory, const std::optional<SplitMemory>& split);
// The engine's backend note (Engine::backend_note()) with its frame in the interface's
// language; the reason inside stays as the driver or runtime gave it.
QString backend_note_label(const QString& note);
// A chat template family's name as the window shows it: "none" and "plain" translated, the
// formats' own names (chatml, llama3, ...) kept.
QString template_label(const QString& family);

}  // namespace kvscope::ui

Q_DECLARE_METATYPE(kvscope::ui::LoadRequest)
Q_DECLARE_METATYPE(kvscope::ui::ModelInfo)
Q_DECLARE_METATYPE(kvscope::ui::ChatRequest)
Q_DECLARE_METATYPE(kvscope::ui::ReplyFinished)
Q_DECLARE_METATYPE(kvscope::ui::PanelFrame)
Q_DECLARE_METATYPE(kvscope::ui::SpeedSample)
Q_DECLARE_METATYPE(kvscope::PlanCheck)
