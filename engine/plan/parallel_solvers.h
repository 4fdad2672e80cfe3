// "What fits" on a node, answered with plan_parallel only (as solvers.h does with
// plan_memory): each answer is the largest / smallest value at which plan_parallel says
// fits, so an answer and the plan for it always agree.
#pragma once

#include <cstdint>
#include <optional>

#include "plan/parallel_plan.h"

namespace kvscope {

// vLLM's --max-model-len: the longest context every one of base.batch sequences reaches
// (0: not even one token), searched up to base.kv.max_context.
std::int64_t parallel_max_context(const ParallelRequest& request);

// vLLM's --max-num-seqs: the most sequences of base.context tokens that fit at once.
std::int64_t parallel_max_batch(const ParallelRequest& request);

// The fewest GPUs of the request's kind (base.budget) that fit it, 1 to node_gpus (8 when
// 0): for each count, tensor parallel first (tp = count), then tp x pp splits with the
// larger tp first; shapes the model refuses (heads not divisible) are skipped. nullopt
// when not even the whole node fits.
std::optional<ParallelShape> smallest_node(const ParallelRequest& request);

// Host memory that holds `n_sequences` preempted sequences of base.context tokens in KVScope's
// own blocks, on the stage whose blocks are largest:
//   n_sequences x ceil(context / block_size) x block set bytes of that stage.
// Not vLLM's --swap-space: that depends on the release and on vLLM's pool (vllm_swap.h).
std::int64_t swap_bytes_per_gpu(const ParallelPlan& plan, std::int64_t n_sequences,
                                std::int64_t context);

}  // namespace kvscope
