// `kvscope-cli plan` on a node of GPUs (--tp, --pp, --gpus, --kv-cache-dtype, --preempt,
// --emit vllm): the per-GPU plan of engine/plan/parallel_plan, the serving answers
// (max_model_len, max_num_seqs, fp16 vs fp8, swap space, smallest node) and the vLLM
// command line that realises it. cmd_plan.cpp hands over when one of those options is given.
#pragma once

#include <cstdint>
#include <string>

#include "cli/arg_parser.h"
#include "plan/memory_model.h"
#include "plan/presets.h"

namespace kvscope::cli {

struct PlanModel {
  std::string label;  // preset slug or file path
  ModelSpec spec;
  WeightFootprint weights;
  std::string weight_type;    // "exact" for a file
  std::int64_t n_params = 0;  // 0 for a file
  std::string hf_repo;        // the preset's, or empty
};

void declare_node_options(ArgParser& p);
bool wants_node_plan(const ArgParser& p);

// `request` is the single-GPU request cmd_plan built (budget of one GPU, batch, context,
// block size); `gpu` may be null when --vram gave the memory. Prints text, JSON or the vLLM
// command; returns the exit code.
int run_node_plan(const ArgParser& p, const PlanModel& model, const PlanRequest& request,
                  const GpuPreset* gpu);

}  // namespace kvscope::cli
