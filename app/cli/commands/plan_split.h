// `kvscope-cli plan`'s layer split: with a GPU budget, how many of the model's layers fit on
// the GPU with the rest on the CPU (plan/layer_split_plan.h, what --gpu-layers auto loads),
// each side's weights, KV and workspace, and the decode roofline over both memories.
#pragma once

#include <nlohmann/json.hpp>

#include "cli/arg_parser.h"
#include "cli/commands/plan_node.h"
#include "plan/memory_model.h"

namespace kvscope::cli {

void declare_split_options(ArgParser& p);
// Prints the split section (nothing without a GPU budget).
void print_layer_split(const ArgParser& p, const PlanModel& m, const PlanRequest& r,
                       double gpu_bandwidth_gb_s);
// The same as JSON (null without a GPU budget): gpu_layers, each side's terms, the roofline.
nlohmann::json layer_split_json(const ArgParser& p, const PlanModel& m, const PlanRequest& r,
                                double gpu_bandwidth_gb_s);

}  // namespace kvscope::cli
