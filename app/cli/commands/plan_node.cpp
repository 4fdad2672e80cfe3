#include "cli/commands/plan_node.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <optional>

#include "cli/json_text.h"
#include "plan/parallel_explainer.h"
#include "plan/parallel_solvers.h"
#include "plan/units.h"
#include "plan/vllm_command.h"
#include "plan/vllm_explainer.h"
#include "plan/vllm_solvers.h"
#include "plan/vllm_swap.h"
#include "util/error.h"

namespace kvscope::cli {

namespace {

using nlohmann::json;

struct NodeAnswers {
  ParallelPlan plan;
  std::int64_t max_model_len = 0;  // at the request's batch
  std::int64_t max_num_seqs = 0;   // at the request's context
  std::int64_t kv_tokens_auto = 0;
  std::int64_t kv_tokens_fp8 = 0;
  std::int64_t preempt = 0;  // sequences the swap space holds
  std::int64_t swap_bytes = 0;
  std::optional<ParallelShape> smallest;
};

ParallelRequest node_request(const ArgParser& p, const PlanModel& m, const PlanRequest& base) {
  if (m.n_params < 1) {
    throw_error<UsageError>(
        "--tp / --pp / --emit plan a preset (--model NAME): -m {} has no "
        "parameter count to split",
        m.label);
  }
  if (p.has("-ctk") || p.has("-ctv")) {
    throw_error<UsageError>("a node plan takes --kv-cache-dtype auto|fp8, not -ctk / -ctv");
  }
  if (base.kv_budget_bytes > 0 || base.budget.total_bytes == 0) {
    throw_error<UsageError>("a node plan needs each GPU's memory: --gpu NAME or --vram SIZE");
  }
  ParallelRequest r;
  r.base = base;
  r.n_params = m.n_params;
  r.shape.tp = p.get_int("--tp", 1, 1, 1 << 20);
  r.shape.pp = p.get_int("--pp", 1, 1, 1 << 20);
  r.shape.node_gpus = p.get_int("--gpus", 0, 1, 1 << 20);
  r.kv_dtype = parse_serving_kv_dtype(p.get_or("--kv-cache-dtype", "auto"));
  return r;
}

NodeAnswers solve_node(const ArgParser& p, const ParallelRequest& r) {
  NodeAnswers a;
  a.plan = plan_parallel(r);
  a.max_model_len = parallel_max_context(r);
  a.max_num_seqs = parallel_max_batch(r);
  ParallelRequest other = r;
  other.kv_dtype = ServingKvDtype::Auto;
  a.kv_tokens_auto = plan_parallel(other).kv_tokens;
  other.kv_dtype = ServingKvDtype::Fp8;
  a.kv_tokens_fp8 = plan_parallel(other).kv_tokens;
  a.preempt = p.get_int("--preempt", r.base.batch, 0, std::int64_t{1} << 20);
  a.swap_bytes = swap_bytes_per_gpu(a.plan, a.preempt, r.base.context);
  a.smallest = smallest_node(r);
  return a;
}

std::string shape_text(const std::optional<ParallelShape>& s) {
  if (!s) return "none within the node";
  return fmt::format("{} GPU{} (tp {} x pp {})", s->gpus(), s->gpus() == 1 ? "" : "s", s->tp,
                     s->pp);
}

void print_answers(const ParallelRequest& r, const NodeAnswers& a) {
  const std::int64_t ctx = r.base.context;
  fmt::print("Answers\n");
  fmt::print("  longest max_model_len for {} sequences: {} tokens\n", r.base.batch,
             group_digits(a.max_model_len));
  fmt::print("  most sequences (max_num_seqs) of {} tokens: {}\n", group_digits(ctx),
             a.max_num_seqs);
  fmt::print("  maximum concurrency for {} tokens per request: {} / {} = {:.2f}x\n",
             group_digits(ctx), group_digits(a.plan.kv_tokens), group_digits(ctx),
             static_cast<double>(a.plan.kv_tokens) / static_cast<double>(ctx));
  fmt::print("  KV cache dtype: auto (fp16) holds {} tokens, fp8 holds {} tokens\n",
             group_digits(a.kv_tokens_auto), group_digits(a.kv_tokens_fp8));
  fmt::print("  host memory to hold {} preempted sequences of {} tokens: {} per GPU\n", a.preempt,
             group_digits(ctx), human_bytes(a.swap_bytes));
  fmt::print("  smallest node of this GPU that fits: {}\n", shape_text(a.smallest));
}

json stage_json(const StagePlan& s) {
  const MemoryPlan& m = s.plan;
  return {{"first_layer", s.stage.first_layer},
          {"n_layers", s.stage.n_layers},
          {"embeddings", s.stage.embeddings},
          {"output_head", s.stage.output_head},
          {"weight_params", s.weight_params},
          {"weights_bytes", m.weights.bytes},
          {"kv_block_bytes", m.kv_block_set_bytes},
          {"kv_bytes", m.kv.pool_bytes_needed},
          {"workspace_bytes", m.workspace.total()},
          {"total_bytes", m.total_needed},
          {"usable_bytes", m.usable_bytes},
          {"kv_pool_blocks", m.kv_blocks_per_group},
          {"fits", m.fits}};
}

json node_json(const PlanModel& m, const GpuPreset* gpu, const ParallelRequest& r,
               const NodeAnswers& a) {
  json stages = json::array();
  for (const StagePlan& s : a.plan.stages) stages.push_back(stage_json(s));
  json smallest = nullptr;
  if (a.smallest) smallest = {{"tp", a.smallest->tp}, {"pp", a.smallest->pp}};
  return {{"model", m.label},
          {"gpu", gpu != nullptr ? json(gpu->slug) : json(nullptr)},
          {"tp", r.shape.tp},
          {"pp", r.shape.pp},
          {"kv_cache_dtype", serving_kv_dtype_name(r.kv_dtype)},
          {"kv_heads_per_gpu", a.plan.kv_heads_per_rank},
          {"batch", r.base.batch},
          {"context", r.base.context},
          {"stages", stages},
          {"kv_blocks", a.plan.kv_blocks},
          {"kv_tokens", a.plan.kv_tokens},
          {"node_bytes", a.plan.node_bytes_needed},
          {"fits", a.plan.fits},
          {"max_model_len", a.max_model_len},
          {"max_num_seqs", a.max_num_seqs},
          {"kv_tokens_auto", a.kv_tokens_auto},
          {"kv_tokens_fp8", a.kv_tokens_fp8},
          {"swap_bytes_per_gpu", a.swap_bytes},
          {"smallest_node", smallest},
          {"formula", explain_parallel(r, a.plan)}};
}

// Every line of `text` as a shell comment.
std::string commented(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::size_t stop = end == std::string::npos ? text.size() : end;
    out += "# " + text.substr(start, stop - start) + "\n";
    start = stop + 1;
  }
  return out;
}

// --emit vllm: vLLM's own accounting of the command's server, written out as comments above
// the command (vllm_memory.h), and the flags of --concurrency N when asked.
void print_vllm_emit(const ArgParser& p, const PlanModel& m, const ParallelRequest& r,
                     const NodeAnswers& a) {
  const VllmRequest vr = vllm_memory_request(
      r, r.base.budget.total_bytes, parse_vllm_version(p.get_or("--vllm-version", "latest")),
      parse_vllm_weight_format(p.get_or("--vllm-weights", "bf16")));
  const VllmMemoryPlan plan = plan_vllm_memory(vr);
  std::string notes = "vLLM's own accounting of this server (the KV pool its log will report):\n";
  notes += explain_vllm_memory(plan);
  notes += vllm_verdict(plan) + "\n";
  notes +=
      fmt::format("largest max_model_len that starts: {}\n", group_digits(vllm_max_model_len(vr)));
  notes += fmt::format("(KVScope's own engine would hold {} tokens: plan without --emit)\n",
                       group_digits(a.plan.kv_tokens));
  // --swap-space as the release treats it (vllm_swap.h); --preempt caps the sequences that swap.
  const std::int64_t swapping = p.has("--preempt") ? a.preempt : 0;
  VllmSwap swap = plan_vllm_swap(plan, swapping);
  VllmArgs v = vllm_args_for(m.hf_repo.empty() ? m.label : m.hf_repo, r, swap);
  const VllmMemoryPlan* served = &plan;
  std::optional<VllmConcurrency> c;
  if (p.has("--concurrency")) {
    c = vllm_concurrency(vr, p.get_int("--concurrency", 1, 1, std::int64_t{1} << 20));
    notes += explain_vllm_concurrency(*c);
    if (c->possible) {
      v = with_concurrency_flags(v, *c);
      served = &c->plan;
      swap = plan_vllm_swap(c->plan, swapping);
    } else {
      notes += "the command below is the plan's, without those flags\n";
    }
  }
  notes += explain_vllm_swap(*served, swap);
  fmt::print("{}{}{}", commented(notes), vllm_serve_command(v), vllm_python_call(v));
}

}  // namespace

void declare_node_options(ArgParser& p) {
  p.option({"--tp"},
           "tensor parallel GPUs (1-8; heads split, KV heads replicated past their count)");
  p.option({"--pp"}, "pipeline parallel stages (layers split)");
  p.option({"--gpus"}, "GPUs in the node (default 8 for the smallest-node answer)");
  p.option({"--kv-cache-dtype"}, "node plans: auto (fp16) or fp8, as vLLM names them");
  p.option({"--preempt"},
           "sequences the swap space must hold (default --batch; --emit vllm: sequences of "
           "requests with n > 1 or beam search swapped out at once by vLLM 0.6-0.9, default 0: "
           "requests of one sequence are recomputed)");
  p.option({"--emit"}, "vllm: print the vllm serve command and LLM(...) call for the plan");
  p.option({"--vllm-version"},
           "--emit vllm: the release whose accounting to follow: 0.6.4, 0.6.5, 0.7-v0, 0.10, "
           "0.26 (default, latest)");
  p.option({"--vllm-weights"},
           "--emit vllm: checkpoint format: bf16 (default), fp8, awq, gptq, bnb");
  p.option({"--concurrency"},
           "--emit vllm: requests of --ctx tokens to hold at once; adds the flags that give them");
}

bool wants_node_plan(const ArgParser& p) {
  for (const char* o : {"--tp", "--pp", "--gpus", "--kv-cache-dtype", "--preempt", "--emit",
                        "--vllm-version", "--vllm-weights", "--concurrency"}) {
    if (p.has(o)) return true;
  }
  return false;
}

int run_node_plan(const ArgParser& p, const PlanModel& m, const PlanRequest& base,
                  const GpuPreset* gpu) {
  const std::optional<std::string> emit = p.get("--emit");
  if (emit && *emit != "vllm") throw_error<UsageError>("--emit: '{}' (expected vllm)", *emit);
  const ParallelRequest r = node_request(p, m, base);
  const NodeAnswers a = solve_node(p, r);
  if (emit) {
    print_vllm_emit(p, m, r, a);
  } else if (p.has("--json")) {
    fmt::print("{}\n", json_text(node_json(m, gpu, r, a)));
  } else {
    fmt::print("Model {} (weights {}), {} per GPU\n\n", m.label, m.weight_type,
               gpu != nullptr ? gpu->name : human_bytes(r.base.budget.total_bytes));
    fmt::print("{}\n", explain_parallel(r, a.plan));
    print_answers(r, a);
    fmt::print("{}\n", a.plan.fits ? "FITS" : "DOES NOT FIT");
  }
  return 0;
}

}  // namespace kvscope::cli
